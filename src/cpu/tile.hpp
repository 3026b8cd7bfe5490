// The transposing executor: layouts whose stream runs down the columns of a grid of small
// elements, such as the receive type of a distributed FFT's transpose (DDTBench's FFT2D receives
// with contiguous(n, resized(vector(n, 1, N, complex), extent 16)): stream element a * n + b goes
// to row b, column a) or any matrix transpose written as a type.
//
// Such an element is a Nest plan of two dimensions whose outer dimension is the contiguous one:
// n1 columns at stride e (the element width), each n0 elements at a stride of at least a line
// (plan.hpp's Plan::tile). Moved in stream order, every element touches a line of its own, and a
// line's next element comes n0 elements later, after the line may have left L1: each line is
// fetched (and, written, taken for ownership) once per element instead of once. Moved in tiles
// of T = 64 / e columns, for each row the T elements of a line go together: whole lines on the
// grid's side, T sequential streams on the other. Measured here (2 cores; N = 256 / 1024, one
// 16 n^2-byte block, FFT2D's types, medians of 15, one process): unpack into the grid 61.5 /
// 2247 us in stream order against 27.4 / 762 us tiled; ddt_copy from the send type (rows of n
// elements) 67.5 / 1698 us against 27.2 / 591; pack from the grid 17.7 / 928 against 19.3 / 569.
// The tiles use plain stores: streamed 16-byte stores into the tiles' lines ran at 0.7-0.8 GB/s
// (the lines were in L3).
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

// Rows [r, r_end) of one element (a whole number of tiles) from the grid a at s to the grid b at
// d: for each tile of T rows and each column i0, the T elements (r .. r + T - 1, i0). The strides
// are copied into locals: the stores go through char pointers, which may alias the grids, and
// the compiler reloaded every stride after every store (1.6-1.8x slower at N = 1024 above).
template <int64_t E>
void tiles(uintptr_t s, const Grid& a, uintptr_t d, const Grid& b, int64_t r, int64_t r_end) {
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

inline void run_tiles(int64_t e, uintptr_t s, const Grid& a, uintptr_t d, const Grid& b, int64_t r, int64_t r_end) {
  switch (e) {
    case 4: return tiles<4>(s, a, d, b, r, r_end);
    case 8: return tiles<8>(s, a, d, b, r, r_end);
    case 16: return tiles<16>(s, a, d, b, r, r_end);
    default: return tiles<32>(s, a, d, b, r, r_end);  // plan.hpp's tile widths: 4, 8, 16, 32
  }
}

// Stream bytes [lo, hi) (lo < hi) of count elements of e-byte grids a and b, equal in n0 and n1,
// element k of the source at s + k * sext and of the destination at d + k * dext: the whole tiles
// of each element's share tiled, the rest (a partial tile at either end of a share, and the rows
// past the last whole tile) by rest(from, to) with stream offsets of the whole transfer.
template <class Rest>
void tiled_range(int64_t e, uintptr_t s, const Grid& a, int64_t sext, uintptr_t d, const Grid& b, int64_t dext,
                 int64_t lo, int64_t hi, Rest&& rest) {
  const int64_t row = a.n0 * e, size = row * a.n1, tile = (64 / e) * row;
  for (int64_t k = lo / size; lo < hi; ++k) {
    const int64_t base = k * size, off = lo - base, end = std::min(size, hi - base);
    const int64_t first = std::min(end, (off + tile - 1) / tile * tile), last = end / tile * tile;
    if (last <= first) {
      rest(base + off, base + end);
    } else {
      if (off < first) rest(base + off, base + first);
      run_tiles(e, s + static_cast<uintptr_t>(k * sext), a, d + static_cast<uintptr_t>(k * dext), b, first / row,
                last / row);
      if (last < end) rest(base + last, base + end);
    }
    lo = base + end;
  }
}

}  // namespace ddt
