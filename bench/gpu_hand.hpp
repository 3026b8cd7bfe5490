// Hand-written packing kernels (gpu_hand.cu): the peer gpu_bench.cpp times beside ddtkit.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

// n blocks of `block` bytes at a stride of `stride` bytes from typed, to (gather) or from packed.
void hand_vector(bool gather, char* typed, char* packed, int64_t n, int64_t block, int64_t stride, cudaStream_t s);
// n blocks of `block` bytes at displs[i] (device memory) from typed; align divides every
// displacement (the word is the widest that divides it, the block and both addresses).
void hand_list(bool gather, char* typed, char* packed, int64_t n, int64_t block, const int64_t* displs, int64_t align,
               cudaStream_t s);
