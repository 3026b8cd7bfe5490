// The executor of a List plan: count elements, each n blocks of width w at base + disp[i]
// (element k at base + k * extent), any byte range [lo, hi) of the stream. Uniform width makes
// the seek a division: byte b of an element is byte b % w of its block b / w.
#pragma once
#include <algorithm>
#include <cstdint>

#include "cpu/copy_kernels.hpp"
#include "plan/plan.hpp"

namespace ddt {

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
#pragma GCC unroll 4
      for (; i < end; ++i, seq += w) move_block<Gather, W>(seq, reinterpret_cast<char*>(at + static_cast<uintptr_t>(disp[i])), w);
    }
    if (i == n) i = 0, at += static_cast<uintptr_t>(extent);
  }
}

template <bool Gather, int64_t W>
inline void run_list(const Plan& p, uintptr_t base, int64_t lo, int64_t hi, char* seq) {
  if (!p.list.empty())
    return list_range<Gather, W>(p.list.data(), static_cast<int64_t>(p.list.size()), p.width, base, p.extent, lo, hi, seq);
  list_range<Gather, W>(p.list64.data(), static_cast<int64_t>(p.list64.size()), p.width, base, p.extent, lo, hi, seq);
}

// The width dispatch, once per call: the table widths of the plan's list.
template <bool Gather>
inline void list(const Plan& p, uintptr_t base, int64_t lo, int64_t hi, char* seq) {
  switch (p.width) {
#define DDT_CASE_(W) \
  case W: return run_list<Gather, W>(p, base, lo, hi, seq);
    DDT_TABLE_WIDTHS(DDT_CASE_)
#undef DDT_CASE_
    default: return run_list<Gather, 0>(p, base, lo, hi, seq);
  }
}

}  // namespace ddt
