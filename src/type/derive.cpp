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

int derive(const std::vector<Part>& parts, bool is_struct, int combiner, std::vector<int64_t> ints,
           std::vector<int64_t> addrs, std::vector<ddt_type> types, ddt_type* out) {
  Checked ck;
  int64_t size = 0, align = 1;
  // Bounds over all entries, and over markers only.
  int64_t lb_all = INT64_MAX, ub_all = INT64_MIN, lb_mark = INT64_MAX, ub_mark = INT64_MIN;
  bool any = false, lbm = false, ubm = false;
  Builder b;
  std::vector<Placed> items;
  items.reserve(parts.size());
  // A table repeats one (old type, block length) pair: build its block once.
  ddt_type last_t = nullptr;
  int64_t last_bl = -1;
  Placed last_block;
  for (const Part& p : parts) {
    ddt_type t = p.t;
    size = ck.add(size, ck.mul(ck.mul(p.count, p.bl), t->size));
    if (p.count == 0 || p.bl == 0 || !t->has_entries) continue;
    int64_t ext = t->extent();
    int64_t copies = ck.mul(p.bl - 1, ext), blocks = ck.mul(p.count - 1, p.stride);
    int64_t lo = ck.add(ck.add(ck.add(p.disp, t->lb), std::min<int64_t>(0, copies)), std::min<int64_t>(0, blocks));
    int64_t hi = ck.add(ck.add(ck.add(p.disp, t->ub), std::max<int64_t>(0, copies)), std::max<int64_t>(0, blocks));
    any = true;
    lb_all = std::min(lb_all, lo);
    ub_all = std::max(ub_all, hi);
    if (t->lb_marker) lbm = true, lb_mark = std::min(lb_mark, lo);
    if (t->ub_marker) ubm = true, ub_mark = std::max(ub_mark, hi);
    if (ck.overflow) return DDT_ERR_OVERFLOW;
    if (t != last_t || p.bl != last_bl) {
      last_t = t, last_bl = p.bl;
      last_block = b.vec(p.bl, ext, b.import(*t->layout));
    }
    items.push_back(b.shift(p.count == 1 ? last_block : b.vec(p.count, p.stride, last_block), p.disp));
  }
  if (ck.overflow) return DDT_ERR_OVERFLOW;
  // Alignment comes from the old types whether or not any block uses them, so that a type with
  // zero blocks still pads a struct it is placed in.
  for (ddt_type t : types) align = std::max(align, t->align);
  Placed root = b.seq(std::move(items));
  if (b.error()) return b.error();
  int64_t lb = 0, ub = 0;
  if (any) {
    lb = lbm ? lb_mark : lb_all;
    ub = ubm ? ub_mark : ub_all;
    if (is_struct && !ubm) {
      int64_t ext = ck.sub(ub, lb), rem = ext % align;
      if (rem > 0) ub = ck.add(ub, align - rem);
    }
    ck.sub(ub, lb);  // the extent itself must be representable
    if (ck.overflow) return DDT_ERR_OVERFLOW;
  }
  ddt_type t = new_derived(combiner, std::move(ints), std::move(addrs), std::move(types));
  if (!t) return DDT_ERR_NO_MEM;
  t->size = size;
  t->align = align;
  t->lb = lb;
  t->ub = ub;
  t->lb_marker = lbm;
  t->ub_marker = ubm;
  t->has_entries = any;
  t->layout = b.finish(root);
  if (int e = set_true_bounds_from_layout(t)) {
    release(t);
    return e;
  }
  *out = t;
  return DDT_SUCCESS;
}

}  // namespace ddt
