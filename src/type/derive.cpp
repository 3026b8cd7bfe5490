// Size and bounds of derived types, following MPI-4.1 section 5.1:
//  * lb is the least displacement of the typemap's entries, ub the greatest end; but where the
//    typemap holds explicit lb markers (from resized, subarray, darray), lb is the least marker
//    and data entries do not count, and likewise for ub. Markers propagate through every
//    constructor, which is why a struct whose member is resized can have lb 6, extent 6.
//  * a struct without an explicit ub marker is padded so its extent is a multiple of the
//    largest alignment of its basic types (the epsilon of the standard, as MPICH and Open MPI
//    apply it: only in struct).
// A part with no entries at all (zero count or block length, or an empty child) takes no part
// in the bounds; a type with no entries has lb = ub = 0.
#include "type/derive.hpp"

#include <algorithm>
#include <new>

#include "layout/builder.hpp"
#include "util/checked.hpp"

namespace ddt {

ddt_type new_derived(int combiner, std::vector<int64_t> ints, std::vector<int64_t> addrs,
                     std::vector<ddt_type> types) {
  ddt_type t = new (std::nothrow) ddt_type_s;
  if (!t) return nullptr;
  t->combiner = combiner;
  t->ints = std::move(ints);
  t->addrs = std::move(addrs);
  t->types = std::move(types);
  for (ddt_type c : t->types) retain(c);
  return t;
}

int set_true_bounds_from_layout(ddt_type t) {
  const Layout& L = *t->layout;
  if (L.root < 0) {
    t->true_lb = t->true_ub = 0;
    return DDT_SUCCESS;
  }
  Checked ck;
  t->true_lb = ck.add(L.disp, L.nodes[L.root].lo);
  t->true_ub = ck.add(L.disp, L.nodes[L.root].hi);
  ck.sub(t->true_ub, t->true_lb);
  return ck.overflow ? DDT_ERR_OVERFLOW : DDT_SUCCESS;
}

namespace {

// What MPI needs from the parts besides the layout: the size, and the bounds over all entries
// and over explicit markers only.
struct Bounds {
  Checked ck;
  int64_t size = 0;
  int64_t lb_all = INT64_MAX, ub_all = INT64_MIN, lb_mark = INT64_MAX, ub_mark = INT64_MIN;
  bool any = false, lbm = false, ubm = false;
  // Adds count blocks of bl copies of t, block i at disp + i*stride; false for a part with no
  // entries, which takes no part in the bounds.
  bool add(int64_t disp, int64_t count, int64_t stride, int64_t bl, ddt_type t) {
    size = ck.add(size, ck.mul(ck.mul(count, bl), t->size));
    if (count == 0 || bl == 0 || !t->has_entries) return false;
    int64_t ext = t->extent();
    int64_t copies = ck.mul(bl - 1, ext), blocks = ck.mul(count - 1, stride);
    int64_t lo = ck.add(ck.add(ck.add(disp, t->lb), std::min<int64_t>(0, copies)), std::min<int64_t>(0, blocks));
    int64_t hi = ck.add(ck.add(ck.add(disp, t->ub), std::max<int64_t>(0, copies)), std::max<int64_t>(0, blocks));
    any = true;
    lb_all = std::min(lb_all, lo);
    ub_all = std::max(ub_all, hi);
    if (t->lb_marker) lbm = true, lb_mark = std::min(lb_mark, lo);
    if (t->ub_marker) ubm = true, ub_mark = std::max(ub_mark, hi);
    return true;
  }
};

// The block of bl copies of t, built once for each run of parts with equal (t, bl): a table
// usually repeats one pair.
struct BlockOf {
  explicit BlockOf(Builder& builder) : b(builder) {}
  Builder& b;
  ddt_type t = nullptr;
  int64_t bl = -1;
  Placed block;
  Placed operator()(ddt_type nt, int64_t nbl) {
    if (nt != t || nbl != bl) t = nt, bl = nbl, block = b.vec(bl, t->extent(), b.import(*t->layout));
    return block;
  }
};

// The type of the placed items, with the sizes and bounds gathered in bd.
int make(Bounds& bd, Builder& b, std::vector<Placed> items, bool is_struct, int combiner,
         std::vector<int64_t> ints, std::vector<int64_t> addrs, std::vector<ddt_type> types, ddt_type* out) {
  Checked& ck = bd.ck;
  if (ck.overflow) return DDT_ERR_OVERFLOW;
  // Alignment comes from the old types whether or not any block uses them, so that a type with
  // zero blocks still pads a struct it is placed in.
  int64_t align = 1;
  for (ddt_type t : types) align = std::max(align, t->align);
  Placed root = b.seq(std::move(items));
  if (b.error()) return b.error();
  int64_t lb = 0, ub = 0;
  if (bd.any) {
    lb = bd.lbm ? bd.lb_mark : bd.lb_all;
    ub = bd.ubm ? bd.ub_mark : bd.ub_all;
    if (is_struct && !bd.ubm) {
      int64_t ext = ck.sub(ub, lb), rem = ext % align;
      if (rem > 0) ub = ck.add(ub, align - rem);
    }
    ck.sub(ub, lb);  // the extent itself must be representable
    if (ck.overflow) return DDT_ERR_OVERFLOW;
  }
  ddt_type t = new_derived(combiner, std::move(ints), std::move(addrs), std::move(types));
  if (!t) return DDT_ERR_NO_MEM;
  t->size = bd.size;
  t->align = align;
  t->lb = lb;
  t->ub = ub;
  t->lb_marker = bd.lbm;
  t->ub_marker = bd.ubm;
  t->has_entries = bd.any;
  t->layout = b.finish(root);
  if (int e = set_true_bounds_from_layout(t)) {
    release(t);
    return e;
  }
  *out = t;
  return DDT_SUCCESS;
}

}  // namespace

int derive(const std::vector<Part>& parts, bool is_struct, int combiner, std::vector<int64_t> ints,
           std::vector<int64_t> addrs, std::vector<ddt_type> types, ddt_type* out) {
  Bounds bd;
  Builder b;
  BlockOf block_of(b);
  std::vector<Placed> items;
  items.reserve(parts.size());
  for (const Part& p : parts) {
    if (!bd.add(p.disp, p.count, p.stride, p.bl, p.t)) continue;
    if (bd.ck.overflow) return DDT_ERR_OVERFLOW;
    Placed one = block_of(p.t, p.bl);
    items.push_back(b.shift(p.count == 1 ? one : b.vec(p.count, p.stride, one), p.disp));
  }
  return make(bd, b, std::move(items), is_struct, combiner, std::move(ints), std::move(addrs),
              std::move(types), out);
}

// The same as the parts {displs[i] * scale, 1, 0, bl(i), type(i)} (Bounds::add with count 1),
// walked in place, in runs of entries of one (type, block length): an indexed_block list is one
// run, a struct a few. Along a run an entry's bounds are its displacement plus constants, so the
// loop over entries scales, tracks the least and greatest displacement and writes the item, and
// the bounds and their overflow checks are made once per run at its two ends (an overflow
// anywhere in a run shows at one of them: displacement plus a constant is monotone, and sizes
// are not negative). The error is the same: DDT_ERR_OVERFLOW whatever entry overflows. Checked
// entry by entry, with the (type, length) pair compared per entry, this loop cost 98
// instructions per entry (callgrind, SPECFEM3D_cm c=1's two lists); now 16.
int derive(const Table& tab, bool is_struct, int combiner, std::vector<int64_t> ints,
           std::vector<int64_t> addrs, std::vector<ddt_type> types, ddt_type* out) {
  Bounds bd;
  Checked& ck = bd.ck;
  Builder b;
  // Prefix sums: one per entry here plus, in the worst case, the children's tables flattened
  // into this one (imports share the children's tables and need none).
  size_t room = static_cast<size_t>(tab.count);
  if (!tab.types)
    room += tab.type_all->layout->entries.size();
  else
    for (int64_t i = 0; i < tab.count; ++i)
      if (i == 0 || tab.types[i] != tab.types[i - 1]) room += tab.types[i]->layout->entries.size();
  b.reserve(room);
  std::vector<Placed> items = Recycled<Entry>::take(static_cast<size_t>(tab.count));
  items.resize(static_cast<size_t>(tab.count));
  Placed* it = items.data();
  bool scale_of = false;
  for (int64_t i = 0; i < tab.count;) {
    const ddt_type t = tab.type(i);
    const int64_t bl = tab.bl(i);
    int64_t j = i + 1;  // the run [i, j) of entries with this (type, block length)
    if (!tab.types && !tab.bls)
      j = tab.count;
    else
      while (j < tab.count && tab.type(j) == t && tab.bl(j) == bl) ++j;
    const int64_t bytes = ck.mul(bl, t->size);
    bd.size = ck.add(bd.size, ck.mul(j - i, bytes));
    const int64_t* displs = tab.displs;
    const int64_t scale = tab.scale;
    if (bl == 0 || !t->has_entries) {  // no entries, no bounds; the displacements must scale
      if (scale != 1)
        for (int64_t k = i; k < j; ++k) {
          int64_t d;
          scale_of |= __builtin_mul_overflow(displs[k], scale, &d);
        }
      i = j;
      continue;
    }
    const Placed one = b.vec(bl, t->extent(), b.import(*t->layout));  // the block of bl copies of t
    int64_t least = INT64_MAX, most = INT64_MIN;
    if (one.node >= 0) {
      const uint64_t shift = static_cast<uint64_t>(one.disp);
      for (int64_t k = i; k < j; ++k, ++it) {
        int64_t d = displs[k];
        if (scale != 1) scale_of |= __builtin_mul_overflow(displs[k], scale, &d);
        least = std::min(least, d), most = std::max(most, d);
        it->disp = static_cast<int64_t>(static_cast<uint64_t>(d) + shift);  // (fields stored one by one:
        it->node = one.node;                                                 //  a built pair reloaded stalls)
      }
    } else {  // markers only
      for (int64_t k = i; k < j; ++k) {
        int64_t d = displs[k];
        if (scale != 1) scale_of |= __builtin_mul_overflow(displs[k], scale, &d);
        least = std::min(least, d), most = std::max(most, d);
      }
    }
    const int64_t copies = ck.mul(bl - 1, t->extent());
    const int64_t below = std::min<int64_t>(0, copies), above = std::max<int64_t>(0, copies);
    const int64_t lo = ck.add(ck.add(least, t->lb), below), hi = ck.add(ck.add(most, t->ub), above);
    ck.add(ck.add(most, t->lb), below);  // the other ends: checked only
    ck.add(ck.add(least, t->ub), above);
    bd.any = true;
    bd.lb_all = std::min(bd.lb_all, lo);
    bd.ub_all = std::max(bd.ub_all, hi);
    if (t->lb_marker) bd.lbm = true, bd.lb_mark = std::min(bd.lb_mark, lo);
    if (t->ub_marker) bd.ubm = true, bd.ub_mark = std::max(bd.ub_mark, hi);
    i = j;
  }
  if (scale_of || ck.overflow) return DDT_ERR_OVERFLOW;
  items.resize(static_cast<size_t>(it - items.data()));
  return make(bd, b, std::move(items), is_struct, combiner, std::move(ints), std::move(addrs),
              std::move(types), out);
}

}  // namespace ddt
