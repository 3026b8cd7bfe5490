// The kernels: every thread moves units (units.hpp) chosen by index, in a grid-stride loop, so a
// grid of bounded size covers any number of units (64-bit counts). Instantiated per direction,
// grain (1 to 16 bytes) and locator: 2 x 5 x 3 movers and 5 x 9 copies, no per-constructor code.
//
// Launch shape: 256 threads per block (8 warps: enough to hide the latency of the locators'
// divisions), at most kMaxBlocks blocks; beyond that, each thread takes more units. Each thread
// takes unroll<G> units a pass, kThreads apart (so that a warp's loads stay consecutive), and
// issues all their loads before any store: a thread with one load in flight left the H100's
// memory about 10% short of a device-to-device copy at large blocks (issue 12's first GPU run:
// 0.88-0.93 of the copy from 128 B blocks at 64 MiB; four 16-byte units: 0.96-1.01). Narrower
// units keep as many bytes in flight with more of them (8 for grains under 16: with 4, a nest
// of 8-byte-aligned 4 KiB blocks moved 0.91 of the copy where 16-byte-aligned ones moved 1.01).
// One shape serves every layout, where HAND (section III-A) chooses thread-block shapes from the
// block length and count: a unit is a slice of the stream, not of a block, so consecutive lanes
// stay on consecutive bytes whatever the blocks are, and with this shape the H100 moved vectors
// and subarrays at 0.95-1.10 of a device copy from 128 B blocks, and every layout of the
// benchmark as fast as a hand-written kernel (a thread per word) but for 32-128 B unpacks, 5-10%
// behind (issue 12's last run).
//
// Unit u of a call moves G bytes between the typed buffer at loc(lo + u * G) and the packed one
// at u * G: units.hpp's move_unit and copy_unit, which the CPU emulation runs.
//
// The general locator (TreeLoc) reads its layout's nodes and their dividers at every level of
// every unit; where they are few (kSharedNodes), each thread block copies them into shared memory
// first, so that those reads cost no trip to L1 and L2.
#include "cuda/kernels.hpp"

#include <algorithm>
#include <type_traits>

namespace ddt::gpu {

namespace {

constexpr int kThreads = 256;
constexpr int64_t kMaxBlocks = 65536;
constexpr int64_t kSharedNodes = 64;
static_assert(sizeof(Node) % 8 == 0 && sizeof(Divider) % 8 == 0, "nodes and dividers are copied 8 bytes at a time");

template <int G>
struct Unroll { static constexpr int value = G >= 16 ? 4 : 8; };

// The tree locator with its nodes and dividers in shared memory where they fit (every thread of
// the block calls this first); other locators as they are.
template <class Loc>
__device__ __forceinline__ Loc local(const Loc& loc) { return loc; }
template <>
__device__ __forceinline__ TreeLoc local<TreeLoc>(const TreeLoc& loc) {
  __shared__ alignas(16) unsigned char nodes[kSharedNodes * sizeof(Node)];
  __shared__ alignas(16) unsigned char divs[kSharedNodes * sizeof(Divider)];
  if (loc.node_count > kSharedNodes) return loc;
  const int64_t nn = loc.node_count * static_cast<int64_t>(sizeof(Node)) / 8, nd = loc.node_count * static_cast<int64_t>(sizeof(Divider)) / 8;
  for (int64_t i = threadIdx.x; i < nn; i += blockDim.x)
    reinterpret_cast<uint64_t*>(nodes)[i] = reinterpret_cast<const uint64_t*>(loc.nodes)[i];
  for (int64_t i = threadIdx.x; i < nd; i += blockDim.x)
    reinterpret_cast<uint64_t*>(divs)[i] = reinterpret_cast<const uint64_t*>(loc.vec_div)[i];
  __syncthreads();
  TreeLoc l = loc;
  l.nodes = reinterpret_cast<const Node*>(nodes);
  l.vec_div = reinterpret_cast<const Divider*>(divs);
  return l;
}

// G bytes of the typed buffer at a T-aligned address (T <= G), as G / T words of T bytes.
template <int G, int T>
__device__ __forceinline__ typename WordOf<G>::T load_typed(const char* p) {
  using W = typename WordOf<G>::T;
  if constexpr (T == G) {
    return *reinterpret_cast<const W*>(p);
  } else {
    using V = typename WordOf<T>::T;
    W w;
    V* d = reinterpret_cast<V*>(&w);
#pragma unroll
    for (int k = 0; k < G / T; ++k) d[k] = reinterpret_cast<const V*>(p)[k];
    return w;
  }
}
// A scatter moves whole typed words (T == G: launch_move says why).
template <bool Gather, int G, int T, class Loc>
__device__ __forceinline__ void move_units(const Loc& loc_arg, char* buf, char* seq, int64_t lo, int64_t units) {
  static_assert(Gather || T == G, "a scatter stores whole units");
  using W = typename WordOf<G>::T;
  constexpr int kUnroll = Unroll<G>::value;
  const Loc loc = local(loc_arg);
  const int64_t tile = int64_t{kThreads} * kUnroll, step = static_cast<int64_t>(gridDim.x) * tile;
  for (int64_t u0 = static_cast<int64_t>(blockIdx.x) * tile + threadIdx.x; u0 < units; u0 += step) {
    W w[kUnroll];
    char* to[kUnroll];
#pragma unroll
    for (int k = 0; k < kUnroll; ++k) {
      const int64_t u = u0 + int64_t{k} * kThreads;
      if (u < units) {
        char* typed = buf + loc(lo + u * G);
        char* packed = seq + u * G;
        if (Gather) {
          w[k] = load_typed<G, T>(typed);
          to[k] = packed;
        } else {
          w[k] = *reinterpret_cast<const W*>(packed);
          to[k] = typed;
        }
      }
    }
#pragma unroll
    for (int k = 0; k < kUnroll; ++k)
      if (u0 + int64_t{k} * kThreads < units) *reinterpret_cast<W*>(to[k]) = w[k];
  }
}

template <int G, class SLoc, class DLoc>
__device__ __forceinline__ void copy_units(const SLoc& sl, const char* src, const DLoc& dl, char* dst, int64_t units) {
  using W = typename WordOf<G>::T;
  constexpr int kUnroll = Unroll<G>::value;
  const int64_t tile = int64_t{kThreads} * kUnroll, step = static_cast<int64_t>(gridDim.x) * tile;
  for (int64_t u0 = static_cast<int64_t>(blockIdx.x) * tile + threadIdx.x; u0 < units; u0 += step) {
    W w[kUnroll];
    char* to[kUnroll];
#pragma unroll
    for (int k = 0; k < kUnroll; ++k) {
      const int64_t u = u0 + int64_t{k} * kThreads;
      if (u < units) {
        w[k] = *reinterpret_cast<const W*>(src + sl(u * G));
        to[k] = dst + dl(u * G);
      }
    }
#pragma unroll
    for (int k = 0; k < kUnroll; ++k)
      if (u0 + int64_t{k} * kThreads < units) *reinterpret_cast<W*>(to[k]) = w[k];
  }
}

// The kernels. A tree locator's (TreeLoc's seek, a loop over the layout's arrays) gets a register
// budget instead of the launch bound: under __launch_bounds__(kThreads) ptxas held every tree
// kernel to 32-48 registers and spilled 16-64 bytes a thread (ptxas -v), where 48-62 registers
// hold it all. The nest and list kernels keep the bound (32-54 registers, no spills; at 64 they
// would run fewer threads per SM).
template <bool Gather, int G, int T, class Loc>
__global__ void __launch_bounds__(kThreads) move_kernel(Loc loc, char* buf, char* seq, int64_t lo, int64_t units) {
  move_units<Gather, G, T>(loc, buf, seq, lo, units);
}
template <bool Gather, int G, int T>
__global__ void __maxnreg__(64) move_kernel_tree(TreeLoc loc, char* buf, char* seq, int64_t lo, int64_t units) {
  move_units<Gather, G, T>(loc, buf, seq, lo, units);
}
template <int G, class SLoc, class DLoc>
__global__ void __launch_bounds__(kThreads) copy_kernel(SLoc sl, const char* src, DLoc dl, char* dst, int64_t units) {
  copy_units<G>(sl, src, dl, dst, units);
}
template <int G, class SLoc, class DLoc>
__global__ void __maxnreg__(64) copy_kernel_tree(SLoc sl, const char* src, DLoc dl, char* dst, int64_t units) {
  copy_units<G>(sl, src, dl, dst, units);
}

// Blocks of kThreads threads, each taking Unroll<G> units a pass, for `units` units of G bytes.
template <int G>
unsigned blocks_for(int64_t units) {
  const int64_t tile = int64_t{kThreads} * Unroll<G>::value;
  return static_cast<unsigned>(std::min<int64_t>(kMaxBlocks, (units + tile - 1) / tile));
}

// f(integral_constant G, integral_constant T) for the unit and typed-word sizes a call can take:
// T == G, or a 16-byte unit in 8- or 4-byte words, or an 8-byte unit in 4-byte words. Any other
// pair moves units of the typed grain itself (correct at every grain, only narrower).
template <class F>
cudaError_t with_split(int64_t grain, int64_t tgrain, F&& f) {
  using std::integral_constant;
  if (grain == 16 && tgrain == 8) return f(integral_constant<int, 16>{}, integral_constant<int, 8>{});
  if (grain == 16 && tgrain == 4) return f(integral_constant<int, 16>{}, integral_constant<int, 4>{});
  if (grain == 8 && tgrain == 4) return f(integral_constant<int, 8>{}, integral_constant<int, 4>{});
  return with_grain(tgrain, [&](auto g) { return f(g, g); });
}

}  // namespace

cudaError_t launch_move(bool gather, const Side& side, char* buf, char* seq, int64_t lo, int64_t n, int64_t grain,
                        int64_t tgrain, cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  // A scatter stores its typed side in units of the typed grain, not split: a lane's two 8-byte
  // halves of a 16-byte unit are two store instructions, each writing every other 8 bytes of the
  // warp's span. On the H100, a nest of 8-byte-aligned blocks unpacked at 0.29 / 0.41 / 0.46 /
  // 0.72 / 0.87 of the copy split and 0.37 / 0.45 / 0.54 / 0.73 / 0.86 in 8-byte units (16 B /
  // 64 B / 128 B / 512 B / 4 KiB blocks, one run). A gather keeps the split: its loads are split,
  // its stores whole.
  const auto launch = [&](auto g, auto t) {
    return with_locator(side, [&](const auto& loc) {
      constexpr int G = decltype(g)::value, T = decltype(t)::value;
      using Loc = std::decay_t<decltype(loc)>;
      constexpr bool tree = std::is_same_v<Loc, TreeLoc>;
      const int64_t units = n / G;
      const unsigned blocks = blocks_for<G>(units);
      if (gather) {
        if constexpr (tree)
          move_kernel_tree<true, G, T><<<blocks, kThreads, 0, stream>>>(loc, buf, seq, lo, units);
        else
          move_kernel<true, G, T, Loc><<<blocks, kThreads, 0, stream>>>(loc, buf, seq, lo, units);
      } else if constexpr (T == G) {  // (the split pairs are gathers only)
        if constexpr (tree)
          move_kernel_tree<false, G, G><<<blocks, kThreads, 0, stream>>>(loc, buf, seq, lo, units);
        else
          move_kernel<false, G, G, Loc><<<blocks, kThreads, 0, stream>>>(loc, buf, seq, lo, units);
      }
      return cudaGetLastError();
    });
  };
  if (!gather) return with_grain(tgrain, [&](auto g) { return launch(g, g); });
  return with_split(grain, tgrain, launch);
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
        if constexpr (std::is_same_v<SL, TreeLoc> || std::is_same_v<DL, TreeLoc>)
          copy_kernel_tree<G, SL, DL><<<blocks_for<G>(units), kThreads, 0, stream>>>(sl, src, dl, dst, units);
        else
          copy_kernel<G, SL, DL><<<blocks_for<G>(units), kThreads, 0, stream>>>(sl, src, dl, dst, units);
        return cudaGetLastError();
      });
    });
  });
}

}  // namespace ddt::gpu
