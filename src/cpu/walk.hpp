// The seekable walk: visits, in stream order, the contiguous pieces that carry stream bytes
// [lo, hi) of a layout, calling op(address, length) for each. It reaches lo without replaying
// the stream before it: division at each VEC, binary search over the prefix sums at each SEQ,
// so a seek costs O(depth + log entries). Interior iterations are whole and take the direct
// loops; only the first and last child of each level can be partial.
//
// Addresses are computed as uintptr_t: MPI allows a NULL buffer (MPI_BOTTOM) with absolute
// displacements, and pointer arithmetic on NULL would be undefined.
//
// The operation sees two calls, both returning false to stop the walk (iov does when its
// array is full):
//   op.piece(address, length)                  one contiguous piece
//   op.blocks(address, stride, width, count)   count whole blocks of one width at a stride
//   op.table(base, entries, max, width, node)  whole entries that are block `node`, at base + disp,
//                                              at most max; returns how many (< 0: stop)
// so that pack and unpack run a specialised loop over a whole run of equal blocks.
#pragma once
#include <algorithm>
#include <cstdint>

#include "layout/layout.hpp"
#include "plan/plan.hpp"

namespace ddt {

// A short table of blocks repeated at a stride (a VEC of it, or a count of elements whose
// layout it is: the Carpen-Amarie bucket/block/alternating units) runs as a double loop over a
// copy of its (displacement, width) pairs (layout.hpp's short_block_table), not as one
// recursive table walk per repetition. At the root the plan holds that copy (Shape::Rows);
// inside a layout the walk makes it per visit.

// When a repetition's last block ends exactly where the next repetition's first block begins
// (alternating A1, A2 with B2 = A2), the two are one piece: the rows are walked rotated by one
// entry so that the pair moves as one block, as the flat description of the same layout does.
template <class Op>
bool table_rows(int64_t k, const int64_t disp[], const int64_t width[], uintptr_t p, int64_t stride, int64_t rows,
                Op& op) {
  const auto at = [](uintptr_t q, int64_t d) { return q + static_cast<uintptr_t>(d); };
  if (k >= 2 && rows >= 2 && disp[k - 1] + width[k - 1] == stride + disp[0]) {
    if (!op.piece(at(p, disp[0]), width[0])) return false;
    const int64_t joined = width[k - 1] + width[0];
    if (k == 2) {  // rotated, the rows are one strided run of joined blocks: the run's kernel
      if (!op.blocks(at(p, disp[1]), stride, joined, rows - 1)) return false;
      return op.piece(at(p + static_cast<uintptr_t>(stride) * static_cast<uintptr_t>(rows - 1), disp[1]), width[1]);
    }
    for (int64_t i = 0; i + 1 < rows; ++i, p += static_cast<uintptr_t>(stride)) {
      for (int64_t j = 1; j + 1 < k; ++j)
        if (!op.piece(at(p, disp[j]), width[j])) return false;
      if (!op.piece(at(p, disp[k - 1]), joined)) return false;
    }
    for (int64_t j = 1; j < k; ++j)
      if (!op.piece(at(p, disp[j]), width[j])) return false;
    return true;
  }
  for (int64_t i = 0; i < rows; ++i, p += static_cast<uintptr_t>(stride))
    for (int64_t j = 0; j < k; ++j)
      if (!op.piece(at(p, disp[j]), width[j])) return false;
  return true;
}

// Stream bytes [lo, hi) of equal blocks of width w placed at p + i*stride (block i holds stream
// bytes [i*w, (i+1)*w)): a partial first block, the whole ones as one run, a partial last block.
template <class Op>
bool block_range(uintptr_t p, int64_t stride, int64_t w, int64_t lo, int64_t hi, Op& op) {
  const int64_t i = lo / w, off = lo - i * w;
  p += static_cast<uintptr_t>(i * stride);
  if (off) {
    int64_t take = std::min(w - off, hi - lo);
    if (!op.piece(p + static_cast<uintptr_t>(off), take)) return false;
    lo += take;
    p += static_cast<uintptr_t>(stride);
  }
  const int64_t whole = (hi - lo) / w;
  if (whole > 0) {
    if (!op.blocks(p, stride, w, whole)) return false;
    lo += whole * w;
    p += static_cast<uintptr_t>(stride) * static_cast<uintptr_t>(whole);
  }
  return lo < hi ? op.piece(p, hi - lo) : true;
}

template <class Op>
bool walk_node(const Layout& L, int64_t ni, uintptr_t base, int64_t lo, int64_t hi, Op& op) {
  const Node& n = L.nodes[ni];
  switch (n.kind) {
    case Kind::Block:
      return op.piece(base + static_cast<uintptr_t>(lo), hi - lo);
    case Kind::Vec: {
      const Node& c = L.nodes[n.child];
      const int64_t cs = c.size;
      if (c.kind == Kind::Block) return block_range(base, n.stride, cs, lo, hi, op);  // the common leaf
      int64_t i = lo / cs, off = lo - i * cs;
      uintptr_t p = base + static_cast<uintptr_t>(i * n.stride);
      const uintptr_t step = static_cast<uintptr_t>(n.stride);
      int64_t disp[kShortTable], width[kShortTable];
      const bool rows = short_block_table(L, c, disp, width);
      while (lo < hi) {
        if (rows && off == 0 && hi - lo >= cs) {
          const int64_t r = (hi - lo) / cs;
          if (!table_rows(c.count, disp, width, p, n.stride, r, op)) return false;
          lo += r * cs;
          p += step * static_cast<uintptr_t>(r);
          continue;
        }
        int64_t take = std::min(cs - off, hi - lo);
        if (!walk_node(L, n.child, p, off, off + take, op)) return false;
        lo += take;
        off = 0;
        p += step;
      }
      return true;
    }
    case Kind::Seq: {
      const Entry* first = L.entries.data() + n.child;
      const Entry* last = first + n.count;
      const int64_t* pre = L.prefix.data() + n.child;  // pre[j]: stream bytes before entry j
      // The entry holding byte lo: the last whose prefix is <= lo (no search from the start).
      int64_t j = lo == 0 ? 0 : std::upper_bound(pre, pre + n.count, lo) - pre - 1;
      const Entry* e = first + j;
      while (e != last && lo < hi) {
        const Node& c = L.nodes[e->node];
        const int64_t at = pre[e - first];
        if (c.kind == Kind::Block && lo == at && lo + c.size <= hi) {
          // Whole entries that are all this one block: one table call moves the run.
          const int64_t max = std::min<int64_t>(last - e, (hi - lo) / c.size);
          const int64_t moved = op.table(base, e, max, c.size, e->node);
          if (moved < 0) return false;
          lo += moved * c.size;
          e += moved;
          continue;
        }
        int64_t off = lo - at, take = std::min(c.size - off, hi - lo);
        if (!walk_node(L, e->node, base + static_cast<uintptr_t>(e->disp), off, off + take, op)) return false;
        lo += take;
        ++e;
      }
      return true;
    }
  }
  return true;
}

// Stream bytes [lo, hi) of `count` elements of a type whose layout is L and whose plan is p (its
// extent and, for Shape::Rows, its row table), element k placed at buf + k*extent. A layout that
// is one block with extent == size is a single piece.
template <class Op>
bool walk(const Layout& L, const Plan& p, uintptr_t buf, int64_t lo, int64_t hi, Op& op) {
  if (lo >= hi) return true;
  const int64_t es = L.size(), ext = p.extent;
  const uintptr_t base = buf + static_cast<uintptr_t>(L.disp);
  if (L.contiguous() && ext == es) return op.piece(base + static_cast<uintptr_t>(lo), hi - lo);
  if (L.contiguous()) return block_range(base, ext, es, lo, hi, op);  // elements are single blocks
  int64_t k = lo / es, off = lo - k * es;
  const bool rows = p.shape == Shape::Rows && p.row_n == 1;  // the root is the short table
  while (lo < hi) {
    if (rows && off == 0 && hi - lo >= es) {
      const int64_t r = (hi - lo) / es;
      if (!table_rows(p.rows, p.rdisp, p.rwidth, base + static_cast<uintptr_t>(k * ext), ext, r, op)) return false;
      lo += r * es;
      k += r;
      continue;
    }
    int64_t take = std::min(es - off, hi - lo);
    if (!walk_node(L, L.root, base + static_cast<uintptr_t>(k * ext), off, off + take, op)) return false;
    lo += take;
    off = 0;
    ++k;
  }
  return true;
}

}  // namespace ddt
