// The executor of a List plan: count elements, each n blocks of width w at base + disp[i]
// (element k at base + k * extent), any byte range [lo, hi) of the stream. Uniform width makes
// the seek a division: byte b of an element is byte b % w of its block b / w.
#pragma once
#include <algorithm>
#include <cstdint>

#include "cpu/copy_kernels.hpp"
#include "cpu/elements.hpp"
#include "plan/plan.hpp"

namespace ddt {

// Blocks move one at a time, also the 4 and 8 B blocks of an index list (SPECFEM3D_oc, LAMMPS):
// AVX2's gather instruction (vpgatherdd / vpgatherdq, 8 or 4 blocks an instruction) lost to
// this scalar loop on the machine `make bench` runs on (AMD EPYC, family 25 model 1). ddtkit
// bench --suite ddtbench, three runs each way alternated, the hand-written loop's time over
// ddtkit's, gather / scalar: SPECFEM3D_oc c=1 pack 0.63-0.80 / 0.87-0.88, c=2 0.82-0.87 /
// 0.95-0.99, c=4 0.90-1.03 / 1.03-1.06; LAMMPS_atomic 0.84-1.01 / 0.98-1.18; LAMMPS_full at
// 2,243 and 1,662 atoms 1.03-1.09 / 1.30-1.37 (level at 3,062). A lone loop over SPECFEM3D_oc
// c=1's list: 211-221 ns gathered, 166-168 ns scalar. An earlier host had measured the gather
// ahead (95 against 177 ns at c=1); the scalar loop is never far behind and carries no
// microcode risk (Intel's Gather Data Sampling mitigation slows the instruction several-fold).
// On this project's Zen 4 host (AVX-512) the scalar loop, AVX2's vpgatherdd and AVX-512's
// 16-lane gather ran level: SPECFEM3D_oc-like lists of 493-3225 random floats out of 89,000
// (a probe at 0a58793+, medians of 31) 192 / 208 / 219 ns at 493, 1110 / 1108 / 1116 at 1897,
// 1859 / 1863 / 1856 at 3225, and the 16-lane scatter no better than stores (1202 / 1269 at
// 1897): every element is a random read from L2, whichever instruction asks for it. So the
// application's own loop (the same loads) is the bound on these kernels, and ddtkit is within
// its per-call checks of it (make bench: SPECFEM3D_oc pack 0.96-0.99 of the hand loop).

template <bool Gather, int64_t W, class D>
inline void list_range(const D* disp, int64_t n, int64_t w, uintptr_t base, int64_t extent, int64_t lo, int64_t hi,
                       char* seq) {
  // The seek: two divisions (about 40 cycles on the bench host), skipped for a range from the
  // stream's start, which is every whole call (SPECFEM3D_oc c=1 unpacks 493 blocks in ~250 ns).
  int64_t k = 0, i = 0, off = 0;
  if (lo != 0) {
    const int64_t es = n * w;
    k = lo / es;
    const int64_t r = lo - k * es;
    i = r / w, off = r - i * w;
  }
  uintptr_t at = base + static_cast<uintptr_t>(k * extent);
  while (lo < hi) {
    if (off != 0 || hi - lo < w) {  // a partial block: the first or the last of the range
      const int64_t take = std::min(w - off, hi - lo);
      char* p = reinterpret_cast<char*>(at + static_cast<uintptr_t>(disp[i]) + static_cast<uintptr_t>(off));
      Gather ? any_copy(seq, p, take) : any_copy(p, seq, take);
      seq += take, lo += take, off += take;
      if (off < w) break;  // the range ended inside the block
      off = 0, ++i;
    } else {
      const int64_t end = std::min(n, i + (hi - lo) / w);
      lo += (end - i) * w;
#pragma GCC unroll 4
      for (; i < end; ++i, seq += w) move_block<Gather, W>(seq, reinterpret_cast<char*>(at + static_cast<uintptr_t>(disp[i])), w);
    }
    if (i == n) i = 0, at += static_cast<uintptr_t>(extent);
  }
}

// list_range with the block width fixed once per run: the plan's table widths.
template <bool Gather, class D>
inline void list_run(const D* disp, int64_t n, int64_t w, uintptr_t base, int64_t extent, int64_t lo, int64_t hi,
                     char* seq) {
  switch (w) {
#define DDT_CASE_(W) \
  case W: return list_range<Gather, W>(disp, n, W, base, extent, lo, hi, seq);
    DDT_TABLE_WIDTHS(DDT_CASE_)
#undef DDT_CASE_
    default: return list_range<Gather, 0>(disp, n, w, base, extent, lo, hi, seq);
  }
}

// count whole elements of a segmented list: each run of blocks one fixed-width loop, each
// other entry handed to walk_entry(node, address, seq), which moves it and returns the new seq.
template <bool Gather, class D, class WalkEntry>
inline char* segmented_list(const Plan& p, const D* disp, int64_t count, uintptr_t base, char* seq, WalkEntry& walk_entry) {
  for (int64_t k = 0; k < count; ++k, base += static_cast<uintptr_t>(p.extent))
    for (const Plan::Segment& g : p.segments) {
      const D* d = disp + g.first;
      if (g.width == 0) {
        seq = walk_entry(g.node, base + static_cast<uintptr_t>(d[0]), seq);
        continue;
      }
      list_run<Gather>(d, g.count, g.width, base, 0, 0, g.count * g.width, seq);
      seq += g.count * g.width;
    }
  return seq;
}

// Stream bytes [lo, hi) of a segmented list whose segments are all runs of blocks: each element
// cut at its segments' stream offsets, each segment's share one list_run. (A partial range went
// to the walk: LAMMPS_full packed in 64 KiB pieces at 0.69 of its whole-call speed once its
// per-atom arrays were listed block by block.)
template <bool Gather, class D>
inline void segmented_range(const Plan& p, const D* disp, uintptr_t base, int64_t lo, int64_t hi, char* seq) {
  element_shares(base, p.size, p.extent, lo, hi, [&](uintptr_t element, int64_t off, int64_t end) {
    int64_t first = 0;
    for (const Plan::Segment& g : p.segments) {
      const int64_t len = g.count * g.width;
      const int64_t a = std::max(off, first), b = std::min(end, first + len);
      if (a < b) {
        list_run<Gather>(disp + g.first, g.count, g.width, element, 0, a - first, b - first, seq);
        seq += b - a;
      }
      first += len;
      if (first >= end) break;
    }
  });
}

// Stream bytes [lo, hi) of count elements: uniform lists and lists of blocks only run any range;
// other segmented lists run whole calls; false where the caller should walk (a partial range of
// a list with walked entries).
template <bool Gather, class WalkEntry>
inline bool list(const Plan& p, int64_t count, uintptr_t base, int64_t lo, int64_t hi, char* seq, WalkEntry& walk_entry) {
  const bool narrow = p.list.size() > 0;
  if (p.uniform_list()) {  // any range
    const int64_t n = p.segments[0].count;
    narrow ? list_run<Gather>(p.list.data(), n, p.width, base, p.extent, lo, hi, seq)
           : list_run<Gather>(p.list64.data(), n, p.width, base, p.extent, lo, hi, seq);
    return true;
  }
  if (lo != 0 || hi != count * p.size) {
    if (!p.blocks_only) return false;
    narrow ? segmented_range<Gather>(p, p.list.data(), base, lo, hi, seq)
           : segmented_range<Gather>(p, p.list64.data(), base, lo, hi, seq);
    return true;
  }
  narrow ? segmented_list<Gather>(p, p.list.data(), count, base, seq, walk_entry)
         : segmented_list<Gather>(p, p.list64.data(), count, base, seq, walk_entry);
  return true;
}

}  // namespace ddt
