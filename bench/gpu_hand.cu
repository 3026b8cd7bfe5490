// Hand-written packing on the GPU, the peer a user writes instead of a datatype engine (issue 12:
// "beside ... hand-written packing"): one thread per word, its block and offset found by a 32-bit
// division, words of 8 bytes where every block's size and address allow, else 4, else 1. Two
// layouts: a vector (block bytes at a fixed stride) and an index list (block bytes at each of n
// displacements, the gather of an unstructured mesh or a particle list).
#include <cuda_runtime.h>

#include <cstdint>

#include "gpu_hand.hpp"

namespace {

constexpr int kThreads = 256;

template <class W, bool Gather>
__global__ void vector_kernel(W* typed, W* packed, uint32_t words, uint32_t per_block, uint32_t stride_words) {
  for (uint32_t w = blockIdx.x * kThreads + threadIdx.x; w < words; w += gridDim.x * kThreads) {
    const uint32_t b = w / per_block, j = w - b * per_block;
    const uint64_t t = uint64_t{b} * stride_words + j;
    if (Gather)
      packed[w] = typed[t];
    else
      typed[t] = packed[w];
  }
}

template <class W, bool Gather>
__global__ void list_kernel(W* typed, W* packed, uint32_t words, uint32_t per_block, const int64_t* displs) {
  for (uint32_t w = blockIdx.x * kThreads + threadIdx.x; w < words; w += gridDim.x * kThreads) {
    const uint32_t b = w / per_block, j = w - b * per_block;
    W* t = reinterpret_cast<W*>(reinterpret_cast<char*>(typed) + displs[b]) + j;
    if (Gather)
      packed[w] = *t;
    else
      *t = packed[w];
  }
}

int grid_for(uint64_t words) {
  const uint64_t g = (words + kThreads - 1) / kThreads;
  return static_cast<int>(g < 65535 * 16 ? g : 65535 * 16);
}

// f(W{}) for the word type of `word` bytes.
template <class F>
void with_word(int word, F&& f) {
  if (word == 8)
    f(uint64_t{});
  else if (word == 4)
    f(uint32_t{});
  else
    f(uint8_t{});
}

template <bool Gather>
void vector_as(int word, char* typed, char* packed, int64_t n, int64_t block, int64_t stride, cudaStream_t s) {
  with_word(word, [&](auto w) {
    using W = decltype(w);
    const uint32_t words = static_cast<uint32_t>(n * block / word), per = static_cast<uint32_t>(block / word),
                   sw = static_cast<uint32_t>(stride / word);
    vector_kernel<W, Gather><<<grid_for(words), kThreads, 0, s>>>(reinterpret_cast<W*>(typed), reinterpret_cast<W*>(packed),
                                                                   words, per, sw);
  });
}

template <bool Gather>
void list_as(int word, char* typed, char* packed, int64_t n, int64_t block, const int64_t* displs, cudaStream_t s) {
  with_word(word, [&](auto w) {
    using W = decltype(w);
    const uint32_t words = static_cast<uint32_t>(n * block / word), per = static_cast<uint32_t>(block / word);
    list_kernel<W, Gather><<<grid_for(words), kThreads, 0, s>>>(reinterpret_cast<W*>(typed), reinterpret_cast<W*>(packed),
                                                                 words, per, displs);
  });
}

// The widest word (8, 4 or 1 bytes) that divides every value given.
int word_of(int64_t x) { return x % 8 == 0 ? 8 : x % 4 == 0 ? 4 : 1; }

}  // namespace

void hand_vector(bool gather, char* typed, char* packed, int64_t n, int64_t block, int64_t stride, cudaStream_t s) {
  const int w = word_of(block | stride | static_cast<int64_t>(reinterpret_cast<uintptr_t>(typed)) |
                        static_cast<int64_t>(reinterpret_cast<uintptr_t>(packed)));
  if (gather)
    vector_as<true>(w, typed, packed, n, block, stride, s);
  else
    vector_as<false>(w, typed, packed, n, block, stride, s);
}

void hand_list(bool gather, char* typed, char* packed, int64_t n, int64_t block, const int64_t* displs, int64_t align,
               cudaStream_t s) {
  const int w = word_of(block | align | static_cast<int64_t>(reinterpret_cast<uintptr_t>(typed)) |
                        static_cast<int64_t>(reinterpret_cast<uintptr_t>(packed)));
  if (gather)
    list_as<true>(w, typed, packed, n, block, displs, s);
  else
    list_as<false>(w, typed, packed, n, block, displs, s);
}
