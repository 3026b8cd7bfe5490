// Layout identity: ddt_type_hash, ddt_type_serialize / ddt_type_deserialize, ddt_type_describe.
//
// Serialized form, version 1:
//   "DDTL" | u8 version | zigzag lb | zigzag extent | varint align | u8 markers | layout
// The layout part is codec.cpp's canonical encoding; size and true bounds are not stored but
// recomputed from it when read, so they cannot disagree with the layout.
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <new>
#include <string>

#include "layout/codec.hpp"
#include "type/derive.hpp"
#include "util/checked.hpp"

namespace {

constexpr char kMagic[4] = {'D', 'D', 'T', 'L'};
constexpr uint8_t kVersion = 1;

uint64_t mix(uint64_t z) {  // SplitMix64's finaliser: every input bit reaches every output bit
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// 128 bits from two differently seeded lanes over 8-byte words. Not cryptographic: it names
// layouts for caches, and a peer that lies about a hash is caught by deserialize anyway.
void hash128(const std::string& s, uint8_t out[16]) {
  uint64_t a = 0x6464746b69742d31ULL ^ s.size(), b = 0x9e3779b97f4a7c15ULL + s.size();
  for (size_t i = 0; i < s.size(); i += 8) {
    uint64_t w = 0;
    std::memcpy(&w, s.data() + i, std::min<size_t>(8, s.size() - i));
    a = mix(a ^ w) + 0x632be59bd9b4e019ULL;
    b = mix(b + w * 0xff51afd7ed558ccdULL) ^ a;
  }
  a = mix(a ^ b);
  b = mix(b + a);
  std::memcpy(out, &a, 8);
  std::memcpy(out + 8, &b, 8);
}

void describe_node(const ddt::Layout& L, int64_t ni, int indent, std::string& out) {
  const ddt::Node& n = L.nodes[ni];
  char line[160];
  std::string pad(indent * 2, ' ');
  switch (n.kind) {
    case ddt::Kind::Block:
      std::snprintf(line, sizeof line, "block %" PRId64 " B\n", n.size);
      out += line;
      break;
    case ddt::Kind::Vec:
      std::snprintf(line, sizeof line, "%" PRId64 " x stride %" PRId64 " B (%" PRId64 " B) of ", n.count, n.stride, n.size);
      out += line;
      describe_node(L, n.child, indent, out);
      break;
    case ddt::Kind::Seq: {
      std::snprintf(line, sizeof line, "table of %" PRId64 " entries (%" PRId64 " B):\n", n.count, n.size);
      out += line;
      const int64_t shown = std::min<int64_t>(n.count, 8);
      for (int64_t e = n.child; e < n.child + shown; ++e) {
        std::snprintf(line, sizeof line, "%s  @%" PRId64 ": ", pad.c_str(), L.entries[e].disp);
        out += line;
        describe_node(L, L.entries[e].node, indent + 1, out);
      }
      if (shown < n.count) out += pad + "  ...\n";
      break;
    }
  }
}

}  // namespace

extern "C" {

int ddt_type_hash(ddt_type type, uint8_t out[16]) {
  if (int e = ddt::check_type(type)) return e;
  if (!out) return DDT_ERR_ARG;
  try {
    std::string bytes;
    ddt::encode_layout(*type->layout, bytes);
    hash128(bytes, out);
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
    const ddt::Layout& L = *type->layout;
    if (L.root < 0) {
      s += "no data\n";
    } else {
      std::snprintf(head, sizeof head, "@%" PRId64 ": ", L.disp);
      s += head;
      describe_node(L, L.root, 0, s);
    }
    if (static_cast<int64_t>(s.size()) + 1 > bufsize) return DDT_ERR_TRUNCATE;
    std::memcpy(buf, s.c_str(), s.size() + 1);
  } catch (const std::bad_alloc&) {
    return DDT_ERR_NO_MEM;
  }
  return DDT_SUCCESS;
}

}  // extern "C"
