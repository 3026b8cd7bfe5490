// The transposing executor: layouts whose stream runs down the columns of a grid of small
// elements, such as the receive type of a distributed FFT's transpose (DDTBench's FFT2D receives
// with contiguous(n, resized(vector(n, 1, N, complex), extent 16)): stream element a * n + b goes
// to row b, column a) or any matrix transpose written as a type.
//
// Such an element is a Nest plan of two dimensions whose outer dimension is the contiguous one:
// n1 columns at stride e (the element width), each n0 elements at a stride of at least a line
// (plan.hpp's Plan::tile). Moved in stream order, every element touches a line of its own, and a
// line's next element comes n0 elements later, after the line may have left L1: each line is
// fetched (and, written, taken for ownership) once per element instead of once. Moved in blocks
// of 64 / e elements along the source's contiguous direction, each source line is read once,
// whole, and the destination is written as 64 / e sequential streams: down the grid's columns
// (`down`) where the source is the grid, across its rows (`across`) where the source is
// contiguous along them (packed bytes, or the rows of a send type). Which order wins was
// measured (2 cores; one 16 n^2-byte block of FFT2D's types, one process, medians of 15; N =
// 256 / 512 / 1024 / 1536, us):
//   unpack into the grid: stream order 61.5 / - / 2247 / -, down 27.2-27.6 / 106-119 / 506-574 /
//     1172-1279, across 16.6 / 80.5 / 458 / 1149 (DDTBench's own loop, across one element at
//     a time: 18.6 / 94.8 / 815 / 2608);
//   pack from the grid: down 13.6 / 73.2 / 459 / 1071, across 25.0 / 107 / 522 / 1236;
//   copy from the send type's rows into the grid: stream order 67.5 / - / 1698 / -, down 27.5 /
//     111 / 522 / 1203, across 17.1 / 99.2 / 474 / 1233.
// Plain stores: streamed 16-byte stores into the lines ran at 0.7-0.8 GB/s (the lines were in L3).
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "plan/plan.hpp"

namespace ddt {

// One element of a side seen as n1 rows of n0 elements of e bytes, stream order row by row:
// element (i1, i0) at i1 * s1 + i0 * s0 from the element's position.
struct Grid {
  int64_t n0 = 0, s0 = 0, n1 = 0, s1 = 0;
};

// A Nest plan's element as a grid of e-byte elements: a nest of two dimensions of e-byte blocks,
// or rows of blocks that are whole numbers of elements (the send side of a transpose). False for
// anything else.
inline bool grid_of(const Plan& p, int64_t e, Grid& g) {
  if (p.shape != Shape::Nest) return false;
  if (p.dims == 2 && p.width == e) {
    g = {p.n[0], p.s[0], p.n[1], p.s[1]};
    return true;
  }
  if (p.dims == 1 && p.width % e == 0) {
    g = {p.width / e, e, p.n[0], p.s[0]};
    return true;
  }
  return false;
}

// Rows [r, r_end) of one element from the grid a at s to the grid b at d. The strides are copied
// into locals: the stores go through char pointers, which may alias the grids, and the compiler
// reloaded every stride after every store (1.6-1.8x slower at N = 1024).
//   down (r, r_end whole tiles of T = 64 / E rows): for each tile and each column i0, the T
//     elements (r .. r + T - 1, i0);
//   across (any rows): for each block of B = 64 / E columns i0 (the last one shorter), every row,
//     the B elements (row, i0 .. i0 + B - 1).
template <int64_t E>
void down(uintptr_t s, const Grid& a, uintptr_t d, const Grid& b, int64_t r, int64_t r_end) {
  constexpr int64_t T = 64 / E;
  const int64_t n0 = a.n0, as0 = a.s0, as1 = a.s1, bs0 = b.s0, bs1 = b.s1;
  for (; r < r_end; r += T) {
    const char* sp = reinterpret_cast<const char*>(s + static_cast<uintptr_t>(r * as1));
    char* dp = reinterpret_cast<char*>(d + static_cast<uintptr_t>(r * bs1));
    for (int64_t i = 0; i < n0; ++i, sp += as0, dp += bs0) {
#pragma GCC unroll 16
      for (int64_t t = 0; t < T; ++t) std::memcpy(dp + t * bs1, sp + t * as1, E);
    }
  }
}

template <int64_t E>
void across(uintptr_t s, const Grid& a, uintptr_t d, const Grid& b, int64_t r, int64_t r_end) {
  constexpr int64_t B = 64 / E;
  const int64_t n0 = a.n0, as0 = a.s0, as1 = a.s1, bs0 = b.s0, bs1 = b.s1;
  const char* s0 = reinterpret_cast<const char*>(s + static_cast<uintptr_t>(r * as1));
  char* d0 = reinterpret_cast<char*>(d + static_cast<uintptr_t>(r * bs1));
  int64_t i = 0;
  for (; i + B <= n0; i += B, s0 += B * as0, d0 += B * bs0) {
    const char* sp = s0;
    char* dp = d0;
    for (int64_t k = r; k < r_end; ++k, sp += as1, dp += bs1) {
#pragma GCC unroll 16
      for (int64_t t = 0; t < B; ++t) std::memcpy(dp + t * bs0, sp + t * as0, E);
    }
  }
  for (; i < n0; ++i, s0 += as0, d0 += bs0) {  // the last columns, fewer than B
    const char* sp = s0;
    char* dp = d0;
    for (int64_t k = r; k < r_end; ++k, sp += as1, dp += bs1) std::memcpy(dp, sp, E);
  }
}

template <bool Across>
inline void run_tiles(int64_t e, uintptr_t s, const Grid& a, uintptr_t d, const Grid& b, int64_t r, int64_t r_end) {
  switch (e) {  // plan.hpp's tile widths: 4, 8, 16, 32
    case 4: return Across ? across<4>(s, a, d, b, r, r_end) : down<4>(s, a, d, b, r, r_end);
    case 8: return Across ? across<8>(s, a, d, b, r, r_end) : down<8>(s, a, d, b, r, r_end);
    case 16: return Across ? across<16>(s, a, d, b, r, r_end) : down<16>(s, a, d, b, r, r_end);
    default: return Across ? across<32>(s, a, d, b, r, r_end) : down<32>(s, a, d, b, r, r_end);
  }
}

// Stream bytes [lo, hi) (lo < hi) of count elements of e-byte grids a and b, equal in n0 and n1,
// element k of the source at s + k * sext and of the destination at d + k * dext. Across where
// the source's rows are contiguous (a.s0 == e), over the whole rows of each element's share;
// down otherwise, over its whole tiles. The rest (a partial row or tile at either end of a share,
// the rows past the last whole tile) by rest(from, to), with stream offsets of the transfer.
template <class Rest>
void tiled_range(int64_t e, uintptr_t s, const Grid& a, int64_t sext, uintptr_t d, const Grid& b, int64_t dext,
                 int64_t lo, int64_t hi, Rest&& rest) {
  const bool by_rows = a.s0 == e;
  const int64_t row = a.n0 * e, size = row * a.n1, unit = by_rows ? row : (64 / e) * row;
  for (int64_t k = lo / size; lo < hi; ++k) {
    const int64_t base = k * size, off = lo - base, end = std::min(size, hi - base);
    const int64_t first = std::min(end, (off + unit - 1) / unit * unit), last = end / unit * unit;
    if (last <= first) {
      rest(base + off, base + end);
    } else {
      if (off < first) rest(base + off, base + first);
      const uintptr_t sk = s + static_cast<uintptr_t>(k * sext), dk = d + static_cast<uintptr_t>(k * dext);
      if (by_rows)
        run_tiles<true>(e, sk, a, dk, b, first / row, last / row);
      else
        run_tiles<false>(e, sk, a, dk, b, first / row, last / row);
      if (last < end) rest(base + last, base + end);
    }
    lo = base + end;
  }
}

}  // namespace ddt
