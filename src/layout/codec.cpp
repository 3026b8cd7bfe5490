// Layout encoding and its validation. decode_layout treats its input as hostile: every count is
// bounded by the bytes left before anything is reserved, every index must point backwards
// (post-order), and every size, displacement and bound is recomputed with overflow checks
// rather than trusted, so a layout that decodes is one the executors can walk safely.
#include "layout/codec.hpp"

#include <algorithm>

#include "ddtkit.h"
#include "util/checked.hpp"

namespace ddt {

void put_u(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

void put_s(std::string& out, int64_t v) {
  put_u(out, (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63));
}

bool Reader::u(uint64_t& v) {
  v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (p_ == end_) return false;
    uint8_t b = *p_++;
    v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if (!(b & 0x80)) return shift < 63 || b <= 1;
  }
  return false;
}

bool Reader::s(int64_t& v) {
  uint64_t z;
  if (!u(z)) return false;
  v = static_cast<int64_t>((z >> 1) ^ (~(z & 1) + 1));
  return true;
}

bool Reader::raw(void* dst, int64_t n) {
  if (left() < n) return false;
  std::copy(p_, p_ + n, static_cast<uint8_t*>(dst));
  p_ += n;
  return true;
}

void encode_layout(const Layout& L, std::string& out) {
  put_s(out, L.disp);
  put_u(out, L.nodes.size());
  put_u(out, L.entries.size());
  for (const Node& n : L.nodes) {
    out.push_back(static_cast<char>(n.kind));
    switch (n.kind) {
      case Kind::Block: put_u(out, n.size); break;
      case Kind::Vec:
        put_u(out, n.count);
        put_s(out, n.stride);
        put_u(out, n.child);
        break;
      case Kind::Seq:
        put_u(out, n.count);
        for (int64_t e = n.child; e < n.child + n.count; ++e) {
          put_s(out, L.entries[e].disp);
          put_u(out, L.entries[e].node);
        }
        break;
    }
  }
}

int decode_layout(Reader& r, Layout& L) {
  uint64_t nn, ne;
  if (!r.s(L.disp) || !r.u(nn) || !r.u(ne)) return DDT_ERR_CORRUPT;
  // A node takes at least 2 bytes and an entry at least 2: bound both before reserving.
  if (nn > static_cast<uint64_t>(r.left()) / 2 || ne > static_cast<uint64_t>(r.left()) / 2)
    return DDT_ERR_CORRUPT;
  L.nodes.clear();
  L.entries.clear();
  L.prefix.clear();
  L.nodes.reserve(nn);
  L.entries.reserve(ne);
  L.prefix.reserve(ne);
  std::vector<int> depth;
  depth.reserve(nn);
  Checked ck;
  for (uint64_t i = 0; i < nn; ++i) {
    uint8_t kind;
    if (!r.raw(&kind, 1)) return DDT_ERR_CORRUPT;
    Node n{};
    int d = 1;
    uint64_t a, c;
    switch (kind) {
      case static_cast<uint8_t>(Kind::Block):
        if (!r.u(a) || a < 1 || a > static_cast<uint64_t>(INT64_MAX)) return DDT_ERR_CORRUPT;
        n = Node{Kind::Block, static_cast<int64_t>(a), 1, 0, -1, 0, static_cast<int64_t>(a)};
        break;
      case static_cast<uint8_t>(Kind::Vec): {
        int64_t stride;
        if (!r.u(a) || !r.s(stride) || !r.u(c) || a < 2 || a > static_cast<uint64_t>(INT64_MAX) || c >= i)
          return DDT_ERR_CORRUPT;
        const Node& g = L.nodes[c];
        int64_t cnt = static_cast<int64_t>(a), span = ck.mul(cnt - 1, stride);
        n = Node{Kind::Vec, ck.mul(cnt, g.size), cnt, stride, static_cast<int64_t>(c),
                 ck.add(g.lo, std::min<int64_t>(0, span)), ck.add(g.hi, std::max<int64_t>(0, span))};
        d += depth[c];
        break;
      }
      case static_cast<uint8_t>(Kind::Seq): {
        if (!r.u(a) || a < 2 || a > ne - L.entries.size()) return DDT_ERR_CORRUPT;
        n = Node{Kind::Seq, 0, static_cast<int64_t>(a), 0, static_cast<int64_t>(L.entries.size()), INT64_MAX, INT64_MIN};
        for (uint64_t j = 0; j < a; ++j) {
          Entry e;
          uint64_t node;
          if (!r.s(e.disp) || !r.u(node) || node >= i || (j == 0 && e.disp != 0)) return DDT_ERR_CORRUPT;
          e.node = static_cast<int64_t>(node);
          L.prefix.push_back(n.size);
          const Node& g = L.nodes[node];
          n.size = ck.add(n.size, g.size);
          n.lo = std::min(n.lo, ck.add(e.disp, g.lo));
          n.hi = std::max(n.hi, ck.add(e.disp, g.hi));
          d = std::max(d, 1 + depth[node]);
          L.entries.push_back(e);
        }
        break;
      }
      default:
        return DDT_ERR_CORRUPT;
    }
    if (ck.overflow || d > kMaxDepth) return DDT_ERR_CORRUPT;
    L.nodes.push_back(n);
    depth.push_back(d);
  }
  if (L.entries.size() != ne) return DDT_ERR_CORRUPT;
  L.root = nn ? static_cast<int64_t>(nn) - 1 : -1;
  if (L.root >= 0) {  // absolute bounds of the root must be representable too
    ck.add(L.disp, L.nodes[L.root].lo);
    ck.add(L.disp, L.nodes[L.root].hi);
    ck.sub(L.nodes[L.root].hi, L.nodes[L.root].lo);  // the true extent itself
    if (ck.overflow) return DDT_ERR_CORRUPT;
  }
  return DDT_SUCCESS;
}

}  // namespace ddt
