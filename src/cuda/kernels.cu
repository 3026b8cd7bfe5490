// The kernels: every thread moves units (units.hpp) chosen by index, in a grid-stride loop, so a
// grid of bounded size covers any number of units (64-bit counts). Instantiated per direction,
// grain (1 to 16 bytes) and locator: 2 x 5 x 3 movers and 5 x 9 copies, no per-constructor code.
//
// Launch shape: 256 threads per block (8 warps: enough to hide the latency of the locators'
// divisions), at most kMaxBlocks blocks; beyond that, each thread takes more units. Neither has
// been tuned on a GPU yet (see the GPU section of the README).
#include "cuda/kernels.hpp"

#include <algorithm>
#include <type_traits>

namespace ddt::gpu {

namespace {

constexpr int kThreads = 256;
constexpr int64_t kMaxBlocks = 65536;

template <bool Gather, int G, class Loc>
__global__ void move_kernel(Loc loc, char* buf, char* seq, int64_t lo, int64_t units) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t u = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; u < units; u += step)
    move_unit<Gather, G>(loc, buf, seq, lo, u);
}

template <int G, class SLoc, class DLoc>
__global__ void copy_kernel(SLoc sl, const char* src, DLoc dl, char* dst, int64_t units) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t u = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; u < units; u += step)
    copy_unit<G>(sl, src, dl, dst, u);
}

unsigned blocks_for(int64_t units) {
  return static_cast<unsigned>(std::min<int64_t>(kMaxBlocks, (units + kThreads - 1) / kThreads));
}

}  // namespace

cudaError_t launch_move(bool gather, const Side& side, char* buf, char* seq, int64_t lo, int64_t units, int64_t grain,
                        cudaStream_t stream) {
  if (units <= 0) return cudaSuccess;
  return with_grain(grain, [&](auto g) {
    return with_locator(side, [&](const auto& loc) {
      constexpr int G = decltype(g)::value;
      using Loc = std::decay_t<decltype(loc)>;
      if (gather)
        move_kernel<true, G, Loc><<<blocks_for(units), kThreads, 0, stream>>>(loc, buf, seq, lo, units);
      else
        move_kernel<false, G, Loc><<<blocks_for(units), kThreads, 0, stream>>>(loc, buf, seq, lo, units);
      return cudaGetLastError();
    });
  });
}

cudaError_t launch_copy(const Side& sside, const char* src, const Side& dside, char* dst, int64_t units, int64_t grain,
                        cudaStream_t stream) {
  if (units <= 0) return cudaSuccess;
  return with_grain(grain, [&](auto g) {
    return with_locator(sside, [&](const auto& sl) {
      return with_locator(dside, [&](const auto& dl) {
        constexpr int G = decltype(g)::value;
        using SL = std::decay_t<decltype(sl)>;
        using DL = std::decay_t<decltype(dl)>;
        copy_kernel<G, SL, DL><<<blocks_for(units), kThreads, 0, stream>>>(sl, src, dl, dst, units);
        return cudaGetLastError();
      });
    });
  });
}

}  // namespace ddt::gpu
