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

namespace ddt {

template <class Op>
bool walk_node(const Layout& L, int64_t ni, uintptr_t base, int64_t lo, int64_t hi, Op& op) {
  const Node& n = L.nodes[ni];
  switch (n.kind) {
    case Kind::Block:
      return op.piece(base + static_cast<uintptr_t>(lo), hi - lo);
    case Kind::Vec: {
      const Node& c = L.nodes[n.child];
      const int64_t cs = c.size;
      int64_t i = lo / cs, off = lo - i * cs;
      uintptr_t p = base + static_cast<uintptr_t>(i * n.stride);
      const uintptr_t step = static_cast<uintptr_t>(n.stride);
      if (c.kind == Kind::Block) {  // the common leaf: strided blocks
        if (off) {  // a partial first block
          int64_t take = std::min(cs - off, hi - lo);
          if (!op.piece(p + static_cast<uintptr_t>(off), take)) return false;
          lo += take;
          p += step;
        }
        int64_t whole = (hi - lo) / cs;
        if (whole > 0) {
          if (!op.blocks(p, n.stride, cs, whole)) return false;
          lo += whole * cs;
          p += step * static_cast<uintptr_t>(whole);
        }
        return lo < hi ? op.piece(p, hi - lo) : true;  // a partial last block
      }
      while (lo < hi) {
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
      // The entry holding byte lo: the last whose prefix is <= lo (no search from the start).
      const Entry* e =
          lo == 0 ? first : std::upper_bound(first, last, lo, [](int64_t v, const Entry& x) { return v < x.prefix; }) - 1;
      while (e != last && lo < hi) {
        const Node& c = L.nodes[e->node];
        if (c.kind == Kind::Block && lo == e->prefix && lo + c.size <= hi) {
          // Whole entries that are all this one block: one table call moves the run.
          const int64_t max = std::min<int64_t>(last - e, (hi - lo) / c.size);
          const int64_t moved = op.table(base, e, max, c.size, e->node);
          if (moved < 0) return false;
          lo += moved * c.size;
          e += moved;
          continue;
        }
        int64_t off = lo - e->prefix, take = std::min(c.size - off, hi - lo);
        if (!walk_node(L, e->node, base + static_cast<uintptr_t>(e->disp), off, off + take, op)) return false;
        lo += take;
        ++e;
      }
      return true;
    }
  }
  return true;
}

// Stream bytes [lo, hi) of `count` elements of a type whose layout is L and whose extent is ext,
// element k placed at buf + k*ext. A layout that is one block with ext == size is a single piece.
template <class Op>
bool walk(const Layout& L, int64_t ext, uintptr_t buf, int64_t lo, int64_t hi, Op& op) {
  if (lo >= hi) return true;
  const int64_t es = L.size();
  const uintptr_t base = buf + static_cast<uintptr_t>(L.disp);
  if (L.contiguous() && ext == es) return op.piece(base + static_cast<uintptr_t>(lo), hi - lo);
  int64_t k = lo / es, off = lo - k * es;
  if (L.contiguous()) {  // elements are single blocks: one run of blocks at the extent
    uintptr_t p = base + static_cast<uintptr_t>(k * ext);
    if (off) {
      int64_t take = std::min(es - off, hi - lo);
      if (!op.piece(p + static_cast<uintptr_t>(off), take)) return false;
      lo += take;
      p += static_cast<uintptr_t>(ext);
    }
    int64_t whole = (hi - lo) / es;
    if (whole > 0 && !op.blocks(p, ext, es, whole)) return false;
    lo += whole * es;
    p += static_cast<uintptr_t>(ext) * static_cast<uintptr_t>(whole);
    return lo < hi ? op.piece(p, hi - lo) : true;
  }
  while (lo < hi) {
    int64_t take = std::min(es - off, hi - lo);
    if (!walk_node(L, L.root, base + static_cast<uintptr_t>(k * ext), off, off + take, op)) return false;
    lo += take;
    off = 0;
    ++k;
  }
  return true;
}

}  // namespace ddt
