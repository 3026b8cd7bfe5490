// A layout's hash and description (identity.hpp). Nothing here knows about types.
#include "layout/identity.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>

#include "layout/codec.hpp"

namespace ddt {
namespace {

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

void describe_node(const Layout& L, int64_t ni, int indent, std::string& out) {
  const Node& n = L.nodes[ni];
  char line[160];
  std::string pad(indent * 2, ' ');
  switch (n.kind) {
    case Kind::Block:
      std::snprintf(line, sizeof line, "block %" PRId64 " B\n", n.size);
      out += line;
      break;
    case Kind::Vec:
      std::snprintf(line, sizeof line, "%" PRId64 " x stride %" PRId64 " B (%" PRId64 " B) of ", n.count, n.stride, n.size);
      out += line;
      describe_node(L, n.child, indent, out);
      break;
    case Kind::Seq: {
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

void hash_layout(const Layout& L, uint8_t out[16]) {
  std::string bytes;
  encode_layout(L, bytes);
  hash128(bytes, out);
}

void describe_layout(const Layout& L, std::string& out) {
  if (L.root < 0) {
    out += "no data\n";
    return;
  }
  char head[40];
  std::snprintf(head, sizeof head, "@%" PRId64 ": ", L.disp);
  out += head;
  describe_node(L, L.root, 0, out);
}

}  // namespace ddt
