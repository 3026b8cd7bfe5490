// The type-to-type copy between two layouts of one shape: both sides Nest plans whose nests
// (count included) have the same dimensions, counts, strides and block width, placed at
// different addresses. Then every byte of the stream lies at the same distance from its layout's
// start on both sides, and the copy is one loop nest that moves each block from p to p + delta.
//
// This is the common case of a copy between processes: the sender and the receiver build the
// same type (a halo face of a subarray sent from the boundary layer into the halo layer, every
// DDTBench kernel's ping-pong). Before it, such a copy paired blocks through address lists built
// by two cursors (pair_blocks in execute.cpp): the 3-D stencil's face across the fastest
// dimension, 4,096 blocks of 8 B, copied in 11.5 us against 8.0 us for a pack and an unpack
// through a buffer (ddt_copy, one process, this 2-core machine). The nest needs no list.
#pragma once
#include <algorithm>
#include <cstdint>

#include "cpu/copy_kernels.hpp"
#include "cpu/nest.hpp"
#include "plan/plan.hpp"

namespace ddt {

// Stream: the whole lines of each destination block with non-temporal stores (W is then 0).
template <int64_t W, bool Stream = false>
struct TwinRun {
  NestView x;
  intptr_t delta;             // destination address minus source address, the same for every byte
  const Plan* perm = nullptr;  // the source's plan, where its permute kernel's mask moves the innermost runs

  void move(uintptr_t p, int64_t w) {
    char* s = reinterpret_cast<char*>(p);
    if (Stream)
      stream_copy(s + delta, s, w);
    else
      move_block<true, W>(s + delta, s, w);
  }

  // count whole instances of level `level` at the given stride. Blocks from kTwinWideMin prefetch
  // both sides' first and last lines two blocks ahead, as wide_blocks_avx2 does for a gather:
  // with both sides strided the hardware prefetchers start over at every block on both sides.
  // ddt_copy of a vector of char into the same layout (2 MiB of blocks at stride 2 x block, one
  // process, medians of 31, fraction of memcpy, seven runs of each build alternated, without ->
  // with): 1 KiB 0.62-0.74 -> 0.66-0.72, 2 KiB 0.69-0.82 -> 0.71-0.80, 4 KiB 0.72-0.77 ->
  // 0.79-0.91, 8 KiB 0.80-0.86 -> 0.80-0.91, 16 KiB 0.84-0.92 -> 0.85-0.94, 64 KiB 0.89-0.97 ->
  // 0.90-0.95. (avx2_copy in place of any_copy's memcpy below 4 KiB lost at 2 KiB, 0.65-0.70:
  // with both strides 4 KiB, each block's loads wait on the last one's stores, copy_kernels.hpp.)
  // (1 KiB, where the measurements below start; a gather's kWideMin is lower since 05c8141+.)
  static constexpr int64_t kTwinWideMin = 1024;
  void whole(int level, uintptr_t p, int64_t stride, int64_t count) {
    if (level == 0) {
      const int64_t w = W ? W : x.size[0];
#if defined(__x86_64__)
      // Tiny blocks at a short stride: 64-byte windows under the plan's block mask (measured in plan.cpp).
      if (perm && permute_run(*perm, false, stride, w, count))
        return copy_masked(p, delta, stride, w, count, *perm);
      if (W == 0 && w >= kTwinWideMin) {
        const uintptr_t two = 2 * static_cast<uintptr_t>(stride), to = static_cast<uintptr_t>(delta);  // (mod 2^64)
        for (int64_t i = 0; i < count; ++i, p += static_cast<uintptr_t>(stride)) {
          if (i + 2 < count) {
            prefetch_ends(p + two, w);
            if (!Stream) prefetch_ends(p + two + to, w);  // (streaming stores read no destination lines)
          }
          move(p, w);
        }
        return;
      }
#endif
#pragma GCC unroll 4
      for (int64_t i = 0; i < count; ++i, p += static_cast<uintptr_t>(stride)) move(p, w);
      return;
    }
    const int64_t in = x.n[level - 1], is = x.s[level - 1];
    for (int64_t i = 0; i < count; ++i, p += static_cast<uintptr_t>(stride)) whole(level - 1, p, is, in);
  }

  // Part of one block: w bytes at p (cut_range's partial pieces).
  void block(uintptr_t p, int64_t w) { any_copy(reinterpret_cast<char*>(p) + delta, reinterpret_cast<char*>(p), w); }
};

// The source's plan where a copy between twins moves the innermost runs of the view x in masked
// windows (permute_avx512.hpp's copy_masked, under the unpack direction's block mask), else null.
inline const Plan* twin_windows(const Plan& ps, const NestView& x) {
  return ps.permute_blocks[0] && x.dims > 0 && x.size[0] == ps.width && x.s[0] == ps.permute_stride ? &ps : nullptr;
}

// Whether (ps, scount) and (pd, dcount) are nests of one shape.
inline bool twins(const Plan& ps, int64_t scount, const Plan& pd, int64_t dcount) {
  if (ps.shape != Shape::Nest || pd.shape != Shape::Nest || ps.width != pd.width) return false;
  const NestShape a(ps, scount), b(pd, dcount);
  if (a.dims != b.dims || a.size[0] != b.size[0]) return false;
  for (int j = 0; j < a.dims; ++j)
    if (a.n[j] != b.n[j] || a.s[j] != b.s[j]) return false;
  return true;
}

// Copies stream bytes [lo, hi) from (s, scount, ps) to (d, dcount, pd), twins by twins(). The
// destination's blocks take streaming stores by plan.hpp's stream_twin, asked with out: the
// bytes of the whole transfer this range is part of (at least hi - lo).
inline void twin_copy(const Plan& ps, int64_t scount, uintptr_t s, const Plan& pd, uintptr_t d, int64_t lo, int64_t hi,
                      int64_t out = 0) {
  const NestShape shape(ps, scount);
  const NestView x = shape.view();
  const uintptr_t from = s + static_cast<uintptr_t>(ps.disp), to = d + static_cast<uintptr_t>(pd.disp);
  const intptr_t delta = static_cast<intptr_t>(to - from);
  const auto run = [&](auto r) {
    if (lo == 0 && hi == x.size[x.dims] && x.dims > 0)
      r.whole(x.dims - 1, from, x.s[x.dims - 1], x.n[x.dims - 1]);
    else
      cut_range(r, x, x.dims, from, lo, hi);
  };
  if (stream_twin(std::max(out, hi - lo), x.size[0])) {
    run(TwinRun<0, true>{x, delta});
    return stream_fence();
  }
  // A count of contiguous elements can widen the block (NestShape): then the run-time width.
  const Plan* perm = twin_windows(ps, x);
  switch (x.size[0] == ps.width ? ps.kernel_width : 0) {
#define DDT_CASE_(W) \
  case W: return run(TwinRun<W>{x, delta, perm});
    DDT_KERNEL_WIDTHS(DDT_CASE_)
#undef DDT_CASE_
    default: return run(TwinRun<0>{x, delta, perm});
  }
}

}  // namespace ddt
