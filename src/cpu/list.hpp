// The executor of a List plan: count elements, each n blocks of width w at base + disp[i]
// (element k at base + k * extent), any byte range [lo, hi) of the stream. Uniform width makes
// the seek a division: byte b of an element is byte b % w of its block b / w.
#pragma once
#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "cpu/copy_kernels.hpp"
#include "cpu/elements.hpp"
#include "plan/plan.hpp"

namespace ddt {

#if defined(__x86_64__)
// Gathers of 4 and 8 B blocks by a 32-bit list with AVX2's gather instruction, 8 or 4 blocks an
// instruction; returns how many blocks it moved (whole steps only). SPECFEM3D_oc (4 B blocks by
// an index list), ns, the scalar loop / this / the application's loop, one process, medians of
// 11: c=1 (493 blocks) 177 / 95 / 177, c=3 (1,897) 916 / 787 / 975, c=4 (3,225) 1,723 / 1,545 /
// 1,802 (the larger lists wait on their random loads either way). Caveat: Intel's microcode
// mitigation of Gather Data Sampling slows this instruction several-fold on the cores it applies
// to (Skylake to Ice Lake); the figures above are from this machine (`make bench`'s report names
// the CPU), and the scalar loop stays a one-line change away if a machine shows otherwise.
template <int64_t W>
__attribute__((target("avx2"))) inline int64_t gather_list_avx2(char* seq, uintptr_t at, const int32_t* d, int64_t n) {
  int64_t i = 0;
  if constexpr (W == 4) {
    for (; i + 8 <= n; i += 8, seq += 32) {
      const __m256i idx = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(d + i));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(seq),
                          _mm256_i32gather_epi32(reinterpret_cast<const int*>(at), idx, 1));
    }
  } else {
    static_assert(W == 8, "gather_list_avx2: 4 or 8 bytes");
    for (; i + 4 <= n; i += 4, seq += 32) {
      const __m128i idx = _mm_loadu_si128(reinterpret_cast<const __m128i*>(d + i));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(seq),
                          _mm256_i32gather_epi64(reinterpret_cast<const long long*>(at), idx, 1));
    }
  }
  return i;
}
#endif

template <bool Gather, int64_t W, class D>
inline void list_range(const D* disp, int64_t n, int64_t w, uintptr_t base, int64_t extent, int64_t lo, int64_t hi,
                       char* seq) {
  const int64_t es = n * w;
  int64_t k = lo / es, r = lo - k * es;
  int64_t i = r / w, off = r - i * w;
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
#if defined(__x86_64__)
      if constexpr (Gather && (W == 4 || W == 8) && std::is_same_v<D, int32_t>)
        if (have_avx2()) {
          const int64_t k = gather_list_avx2<W>(seq, at, disp + i, end - i);
          i += k, seq += k * W;
        }
#endif
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
