// The datatype object behind a ddt_type handle.
//
// A type holds (1) what MPI's queries answer: size, bounds, true bounds, the explicit lb/ub
// markers that the standard propagates, the alignment used for struct padding; (2) the
// arguments it was built with, for envelope/contents; (3) its canonical layout.
//
// Design decision (differs from DESIGN.md's "computed at commit"): the canonical layout is
// built when the type is constructed, not at commit. Constructors need the true bounds of their
// children, MPI lets uncommitted types be children, and a layout that exists from birth makes a
// type immutable after construction, so no locking is needed anywhere. Building costs what the
// description costs (builder.cpp), and commit only marks the type usable for data movement.
//
// Lifetime: refs counts the user's handle plus one per derived type or contents handle that
// uses it; ddt_type_free drops the user's, so a type freed while a derived type uses it stays
// alive for that type. Predefined types are static and never counted.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "ddtkit.h"
#include "layout/layout.hpp"

namespace ddt {
constexpr uint64_t kTypeMagic = 0x64647474797065ULL;  // "ddttype": catches stale handles early
}

struct ddt_type_s {
  uint64_t magic = ddt::kTypeMagic;
  bool predefined = false;
  std::atomic<bool> committed{false};
  std::atomic<int64_t> refs{1};
  int combiner = DDT_COMBINER_NAMED;
  int predefined_index = -1;

  int64_t size = 0;
  int64_t lb = 0, ub = 0;            // extent = ub - lb
  int64_t true_lb = 0, true_ub = 0;  // of the data bytes only
  int64_t align = 1;                 // the largest alignment of the basic types inside
  bool lb_marker = false, ub_marker = false;  // explicit bounds (resized, subarray, darray)
  bool has_entries = false;          // typemap non-empty (data or markers): takes part in bounds

  std::vector<int64_t> ints, addrs;  // constructor arguments, as envelope/contents report them
  std::vector<ddt_type> types;       // each holds a reference
  std::shared_ptr<const ddt::Layout> layout;
  // The executor plan, built by src/plan/ at commit or first use and freed with the type through
  // drop_plan. Opaque here: types know no plans (DESIGN.md's layers).
  std::atomic<const void*> plan{nullptr};
  std::atomic<void (*)(const void*)> drop_plan{nullptr};
  // The layout's hash, computed at first use (ddt::layout_hash): the runtime names a layout by it
  // on every send. 0 none, 1 being written, 2 valid; the bytes are written once, before the 2.
  std::atomic<int> hash_state{0};
  uint8_t hash_bytes[16] = {};

  ~ddt_type_s() {
    if (const void* p = plan.load(std::memory_order_acquire)) drop_plan.load(std::memory_order_relaxed)(p);
    ddt::Recycled<int64_t>::give(ints);  // (an index list's contents: layout/recycle.hpp)
    ddt::Recycled<int64_t>::give(addrs);
  }

  int64_t extent() const { return ub - lb; }
};

namespace ddt {

// A usable handle: non-null and alive. Returns the error code to give back, or DDT_SUCCESS.
// Inline: every data-movement call starts with it.
inline int check_type(ddt_type t) { return t && t->magic == kTypeMagic ? DDT_SUCCESS : DDT_ERR_TYPE; }
// Takes a reference to t for a derived type or a contents handle.
void retain(ddt_type t);
void release(ddt_type t);
// Sets t's true bounds from its layout; DDT_ERR_OVERFLOW if they are not representable.
int set_true_bounds_from_layout(ddt_type t);
// The layout hash of a usable type (ddt_type_hash's value), computed once per type.
void layout_hash(ddt_type t, uint8_t out[16]);

}  // namespace ddt
