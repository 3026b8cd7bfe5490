// Layouts on the device: a layout's arrays (nodes, entries, prefix sums, a divider per node:
// units.hpp's vec_dividers, and for a uniform list its displacements) uploaded once per layout
// and device, for the general locator (units.hpp's TreeLoc), with the grain its blocks
// allow.
//
// Keyed by the layout's 128-bit hash (type/identity): two types with one layout share one upload,
// and a type created and freed in every iteration of an application's loop (common in MPI codes)
// finds its layout still there. Entries are not freed while the process runs: freeing device
// memory synchronises the device, and a kernel queued on a caller's stream may still be reading
// the layout. The cache is bounded instead: past kCacheBytes per device, a layout is uploaded
// for the call alone into stream-ordered memory (cudaMallocAsync) and freed after it on the same
// stream (Upload::temporary).
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>

#include "cuda/units.hpp"
#include "type/type.hpp"

namespace ddt::gpu {

constexpr uint64_t kCacheBytes = uint64_t{256} << 20;

struct Upload {
  const Node* nodes = nullptr;
  const Entry* entries = nullptr;
  const int64_t* prefix = nullptr;
  const Divider* vec_div = nullptr;
  const int32_t* list32 = nullptr;  // a uniform list's displacements (units.hpp's ListLoc), 32-bit
  const int64_t* list = nullptr;    // or 64-bit; both null for other layouts
  Bits grain_bits;          // block sizes, strides and displacements (units.hpp's layout_bits)
  int64_t flat_width = 0;   // Part::Flat: the blocks' one width (0: the layout has no flat list)
  void* temporary = nullptr;  // non-null: free with cudaFreeAsync on the call's stream after use
};

// What a locator reads of a layout:
//   Tree  the tree's arrays (nodes, entries, prefix sums, dividers): TreeLoc;
//   List  a uniform list plan's displacements alone (4 bytes a block, not the 28 of its table);
//   Flat  an element's blocks, when they all have one width, as a uniform list of displacements
//         from the buffer: ListLoc then finds any byte with a division and one load, where the
//         tree's seek would binary-search a long table (an index list that the canonical form
//         cut into segments where a few entries happened to line up: 0.47 of the copy at 512 B
//         blocks on an H100, against 0.94 as one list) or descend a deep one. At most kFlatMax
//         blocks; a layout that has no flat list is remembered as such (flat_width 0).
// Each part is cached on its own.
enum class Part : uint8_t { Tree, List, Flat };

// Part `part` of the layout of t on `device` (the current device), uploaded on first use. A
// CUDA error code on failure.
cudaError_t upload(ddt_type t, int device, Part part, cudaStream_t stream, Upload* out);

}  // namespace ddt::gpu
