// Yaksa (github.com/pmodels/yaksa, MPICH's datatype engine) as gpu_bench's peer engine on the
// GPU, loaded at run time (dlopen) so that gpu_bench builds and runs without it. Its CUDA backend
// is built by `make yaksa` (tools/build-yaksa.sh) into build-yaksa/, or named by DDTKIT_YAKSA
// (the path of a libyaksa.so). Only what the benchmark calls: constructors in bytes (built over
// the widest element, double, int or byte, that divides every size and offset: what an MPI
// program's types would be made of, and Yaksa's best case) and pack / unpack on a caller's stream
// (yaksa_pack_stream / yaksa_unpack_stream, op REPLACE).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <string>

namespace yk {

using Type = uint64_t;  // yaksa_type_t

// Loads the library and calls yaksa_init once; false (and *why) where it is absent or fails.
bool load(std::string* why, std::string* where);
bool loaded();

// 0 where the constructor failed (or Yaksa is not loaded).
Type hvector(int64_t count, int64_t block, int64_t stride);
Type hindexed_block(int64_t count, int64_t block, const int64_t* displs);
Type subarray2(int64_t rows, int64_t cols, int64_t subrows, int64_t subcols, int64_t row0, int64_t col0);
void free_type(Type t);

// One pack or unpack of (buf, 1, t) queued on stream s; false where Yaksa refused it.
bool pack(const void* typed, Type t, void* packed, int64_t bytes, cudaStream_t s);
bool unpack(const void* packed, int64_t bytes, void* typed, Type t, cudaStream_t s);

}  // namespace yk
