// The public identity functions of a type: ddt_type_hash, ddt_type_serialize /
// ddt_type_deserialize, ddt_type_describe. The layout's own hash, encoding and description live
// in layout/ (identity.hpp, codec.hpp); this file adds what only a type has.
//
// Serialized form, version 1:
//   "DDTL" | u8 version | zigzag lb | zigzag extent | varint align | u8 markers | layout
// The layout part is codec.cpp's canonical encoding; size and true bounds are not stored but
// recomputed from it when read, so they cannot disagree with the layout.
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <memory>
#include <new>
#include <string>

#include "layout/codec.hpp"
#include "layout/identity.hpp"
#include "type/derive.hpp"
#include "util/checked.hpp"

namespace {

constexpr char kMagic[4] = {'D', 'D', 'T', 'L'};
constexpr uint8_t kVersion = 1;

}  // namespace

namespace ddt {

void layout_hash(ddt_type t, uint8_t out[16]) {
  if (t->hash_state.load(std::memory_order_acquire) == 2) {
    std::memcpy(out, t->hash_bytes, 16);
    return;
  }
  hash_layout(*t->layout, out);  // may throw bad_alloc: nothing published yet
  int expect = 0;
  if (t->hash_state.compare_exchange_strong(expect, 1, std::memory_order_acq_rel)) {
    std::memcpy(t->hash_bytes, out, 16);
    t->hash_state.store(2, std::memory_order_release);
  }  // else another thread publishes the same bytes
}

}  // namespace ddt

extern "C" {

// The hash names the layout alone, not the type's bounds: two types with one layout share it.
int ddt_type_hash(ddt_type type, uint8_t out[16]) {
  if (int e = ddt::check_type(type)) return e;
  if (!out) return DDT_ERR_ARG;
  try {
    ddt::layout_hash(type, out);
  } catch (const std::bad_alloc&) {
    return DDT_ERR_NO_MEM;
  }
  return DDT_SUCCESS;
}

int ddt_type_serialize(ddt_type type, void* buf, int64_t bufsize, int64_t* needed) {
  if (!needed) return DDT_ERR_ARG;
  *needed = 0;
  if (int e = ddt::check_type(type)) return e;
  if (bufsize < 0 || (bufsize > 0 && !buf)) return DDT_ERR_ARG;
  try {
    std::string s(kMagic, 4);
    s.push_back(static_cast<char>(kVersion));
    ddt::put_s(s, type->lb);
    ddt::put_s(s, type->extent());
    ddt::put_u(s, type->align);
    s.push_back(static_cast<char>((type->lb_marker ? 1 : 0) | (type->ub_marker ? 2 : 0) | (type->has_entries ? 4 : 0)));
    ddt::encode_layout(*type->layout, s);
    *needed = static_cast<int64_t>(s.size());
    if (bufsize < *needed) return DDT_ERR_TRUNCATE;
    std::memcpy(buf, s.data(), s.size());
  } catch (const std::bad_alloc&) {
    return DDT_ERR_NO_MEM;
  }
  return DDT_SUCCESS;
}

int ddt_type_deserialize(const void* buf, int64_t size, ddt_type* newtype) {
  if (!newtype || size < 0 || (size > 0 && !buf)) return DDT_ERR_ARG;
  ddt::Reader r(static_cast<const uint8_t*>(buf), size);
  char magic[4];
  uint8_t version, flags;
  int64_t lb, extent;
  uint64_t align;
  if (!r.raw(magic, 4) || std::memcmp(magic, kMagic, 4) != 0) return DDT_ERR_CORRUPT;
  if (!r.raw(&version, 1)) return DDT_ERR_CORRUPT;
  if (version != kVersion) return DDT_ERR_VERSION;
  if (!r.s(lb) || !r.s(extent) || !r.u(align) || !r.raw(&flags, 1)) return DDT_ERR_CORRUPT;
  if (align < 1 || align > 4096 || (flags & ~7u)) return DDT_ERR_CORRUPT;
  ddt::Checked ck;
  int64_t ub = ck.add(lb, extent);
  if (ck.overflow) return DDT_ERR_CORRUPT;
  try {
    auto L = std::make_shared<ddt::Layout>();
    if (int e = ddt::decode_layout(r, *L)) return e;
    if (r.left() != 0) return DDT_ERR_CORRUPT;
    ddt_type t = ddt::new_derived(DDT_COMBINER_LAYOUT, {}, {}, {});
    if (!t) return DDT_ERR_NO_MEM;
    t->size = L->size();
    t->lb = lb;
    t->ub = ub;
    t->align = static_cast<int64_t>(align);
    t->lb_marker = flags & 1;
    t->ub_marker = flags & 2;
    t->has_entries = (flags & 4) || L->root >= 0;
    t->layout = std::move(L);
    if (ddt::set_true_bounds_from_layout(t) != DDT_SUCCESS) {  // decode checked this; kept as a guard
      ddt::release(t);
      return DDT_ERR_CORRUPT;
    }
    t->committed = true;  // a received layout is ready to move data
    *newtype = t;
  } catch (const std::bad_alloc&) {
    return DDT_ERR_NO_MEM;
  }
  return DDT_SUCCESS;
}

int ddt_type_describe(ddt_type type, char* buf, int64_t bufsize) {
  if (int e = ddt::check_type(type)) return e;
  if (!buf || bufsize < 1) return DDT_ERR_ARG;
  try {
    char head[200];
    std::snprintf(head, sizeof head,
                  "size %" PRId64 " B, lb %" PRId64 ", extent %" PRId64 ", true lb %" PRId64 ", true extent %" PRId64 "\n",
                  type->size, type->lb, type->extent(), type->true_lb, type->true_ub - type->true_lb);
    std::string s = head;
    ddt::describe_layout(*type->layout, s);
    if (static_cast<int64_t>(s.size()) + 1 > bufsize) return DDT_ERR_TRUNCATE;
    std::memcpy(buf, s.c_str(), s.size() + 1);
  } catch (const std::bad_alloc&) {
    return DDT_ERR_NO_MEM;
  }
  return DDT_SUCCESS;
}

}  // extern "C"
