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
  const int64_t* list = nullptr;  // a uniform list's displacements (units.hpp's ListLoc), else null
  uint64_t grain_bits = 0;  // block sizes, strides and displacements OR-ed (not disp or extent)
  void* temporary = nullptr;  // non-null: free with cudaFreeAsync on the call's stream after use
};

// The layout of t on `device` (the current device), uploading it on first use. A CUDA error
// code on failure.
cudaError_t upload(ddt_type t, int device, cudaStream_t stream, Upload* out);

}  // namespace ddt::gpu
