// Canonicalisation. Every pass is a local rewrite that states the equivalence it uses; applied
// bottom-up while a type is built, they give the same layout for the same bytes in the cases
// DESIGN.md lists. None of them reorders the stream: runs are only merged with their
// neighbours in stream order.
//
//   vec-1      VEC(1, s, c)                      = c
//   vec-block  VEC(n, L, BLOCK(L))               = BLOCK(n*L)
//   vec-vec    VEC(n, m*t, VEC(m, t, c))         = VEC(n*m, t, c)
//   seq-empty  entries without data are dropped
//   seq-adj    BLOCK(a)@d, BLOCK(b)@d+a          = BLOCK(a+b)@d
//   seq-run    c@d, c@d+s, c@d+2s, ...           = VEC(k, s, c)@d   (also extends VEC entries
//              whose child is c and whose stride matches, so nested descriptions of one
//              regular run meet the flat one)
//   seq-flat   a SEQ entry is inlined into its parent when it is small (<= 64 entries) or
//              appears once, so struct-of-tables becomes one table; a large SEQ repeated at
//              irregular places stays shared, which keeps memory proportional to the
//              description.
//   seq-1      SEQ with one entry                = that entry
//
// Structurally equal nodes are interned to one index, so equality of subtrees is equality of
// indices, and finish() numbers nodes in DFS post-order: equal layouts are equal arrays.
//
// Canonical form is greedy left to right: a table whose regularity only shows under a
// different grouping (say 0,10,20,25,30 described as runs {0,10} and {20,25,30}) may keep two
// forms. The equivalences of DESIGN.md and the DDTBench kernels are all caught (tests/).
#include "layout/builder.hpp"

#include <algorithm>
#include <cstring>

#include "ddtkit.h"
#include "util/checked.hpp"

namespace ddt {

namespace {
void put(std::string& key, int64_t v) { key.append(reinterpret_cast<const char*>(&v), sizeof v); }
}  // namespace

int64_t Builder::intern(Node n, const std::vector<Entry>* entries) {
  std::string key;
  key.reserve(48 + (entries ? entries->size() * 16 : 0));
  put(key, static_cast<int64_t>(n.kind));
  put(key, n.size);
  put(key, n.count);
  put(key, n.stride);
  if (n.kind == Kind::Vec) put(key, n.child);
  if (entries)
    for (const Entry& e : *entries) {
      put(key, e.disp);
      put(key, e.node);
    }
  auto it = interned_.find(key);
  if (it != interned_.end()) return it->second;
  int d = 1;
  if (n.kind == Kind::Vec) d += depth_[n.child];
  if (entries) {
    n.child = static_cast<int64_t>(entries_.size());
    int64_t prefix = 0;
    for (Entry e : *entries) {
      d = std::max(d, 1 + depth_[e.node]);
      e.prefix = prefix;
      prefix += nodes_[e.node].size;
      entries_.push_back(e);
    }
  }
  if (d > kMaxDepth) error_ = DDT_ERR_ARG;
  nodes_.push_back(n);
  depth_.push_back(d);
  int64_t idx = static_cast<int64_t>(nodes_.size()) - 1;
  interned_.emplace(std::move(key), idx);
  return idx;
}

Placed Builder::block(int64_t len) {
  if (len <= 0) return {};
  return {0, intern(Node{Kind::Block, len, 1, 0, -1, 0, len}, nullptr)};
}

Placed Builder::import(const Layout& src) {
  if (src.root < 0) return {};
  std::vector<int64_t> map(src.nodes.size());
  for (size_t i = 0; i < src.nodes.size(); ++i) {
    Node n = src.nodes[i];
    if (n.kind == Kind::Vec) n.child = map[n.child];
    if (n.kind == Kind::Seq) {
      std::vector<Entry> es(src.entries.begin() + n.child, src.entries.begin() + n.child + n.count);
      for (Entry& e : es) e.node = map[e.node];
      map[i] = intern(n, &es);
    } else {
      map[i] = intern(n, nullptr);
    }
  }
  return {src.disp, map[src.root]};
}

Placed Builder::vec(int64_t count, int64_t stride, Placed p) {
  if (p.node < 0 || count <= 0) return {};
  if (count == 1) return p;  // vec-1
  const Node c = nodes_[p.node];
  Checked ck;
  if (c.kind == Kind::Block && stride == c.size) {  // vec-block
    Placed r = block(ck.mul(count, c.size));
    if (ck.overflow) error_ = DDT_ERR_OVERFLOW;
    return {p.disp, r.node};
  }
  if (c.kind == Kind::Vec && stride == ck.mul(c.count, c.stride) && !ck.overflow) {  // vec-vec
    count = ck.mul(count, c.count);
    stride = c.stride;
    p.node = c.child;
  }
  const Node& g = nodes_[p.node];
  int64_t span = ck.mul(count - 1, stride);
  Node n{Kind::Vec, ck.mul(count, g.size), count, stride, p.node,
         ck.add(g.lo, std::min<int64_t>(0, span)), ck.add(g.hi, std::max<int64_t>(0, span))};
  ck.sub(n.hi, n.lo);  // a span (true extent) must be representable too
  if (ck.overflow) {
    error_ = DDT_ERR_OVERFLOW;
    return {};
  }
  return {p.disp, intern(n, nullptr)};
}

namespace {
// An item seen as a run: n copies of node at disp + i*stride.
struct Run {
  int64_t disp, n, stride, node;
};
}  // namespace

Placed Builder::seq(std::vector<Placed> items) {
  items.erase(std::remove_if(items.begin(), items.end(), [](const Placed& p) { return p.node < 0; }),
              items.end());
  Checked ck;
  for (int pass = 0; pass < 64 && items.size() > 1; ++pass) {
    bool changed = false;
    // Even passes see each item whole (struct of identical members -> VEC of that member);
    // odd passes see a VEC item as a run of its child (runs that continue each other merge).
    const bool unpack = pass % 2 == 1;
    std::vector<Run> runs;
    runs.reserve(items.size());
    for (const Placed& it : items) {
      const Node& in = nodes_[it.node];
      Run r = unpack && in.kind == Kind::Vec ? Run{it.disp, in.count, in.stride, in.child}
                                             : Run{it.disp, 1, 0, it.node};
      if (!runs.empty()) {
        Run& last = runs.back();
        const Node& ln = nodes_[last.node];
        if (last.n == 1 && r.n == 1 && ln.kind == Kind::Block && nodes_[r.node].kind == Kind::Block &&
            ck.add(last.disp, ln.size) == r.disp) {  // seq-adj
          last.node = block(ck.add(ln.size, nodes_[r.node].size)).node;
          changed = true;
          continue;
        }
        if (last.node == r.node) {  // seq-run
          int64_t s = last.n > 1 ? last.stride : (r.n > 1 ? r.stride : ck.sub(r.disp, last.disp));
          bool strides_agree = (last.n == 1 || last.stride == s) && (r.n == 1 || r.stride == s);
          if (strides_agree && ck.add(last.disp, ck.mul(last.n, s)) == r.disp && !ck.overflow) {
            last.n += r.n;
            last.stride = s;
            changed = true;
            continue;
          }
        }
      }
      runs.push_back(r);
    }
    items.clear();
    for (const Run& r : runs) items.push_back(vec(r.n, r.stride, Placed{r.disp, r.node}));
    if (error_) return {};  // vec overflowed: no item may be read after this
    if (!changed && !unpack) continue;  // the odd pass may still find runs
    if (!changed) {  // seq-flat, once the merges have found what they can at this level
      std::unordered_map<int64_t, int> uses;
      for (const Placed& it : items) ++uses[it.node];
      std::vector<Placed> flat;
      for (const Placed& it : items) {
        const Node& n = nodes_[it.node];
        if (n.kind == Kind::Seq && (n.count <= 64 || uses[it.node] == 1)) {
          for (int64_t e = n.child; e < n.child + n.count; ++e)
            flat.push_back({ck.add(it.disp, entries_[e].disp), entries_[e].node});
          changed = true;
        } else {
          flat.push_back(it);
        }
      }
      items.swap(flat);
    }
    if (!changed) break;
  }
  if (ck.overflow) {
    error_ = DDT_ERR_OVERFLOW;
    return {};
  }
  if (items.empty()) return {};
  if (items.size() == 1) return items[0];  // seq-1
  std::vector<Entry> es;
  es.reserve(items.size());
  int64_t base = items[0].disp, size = 0, lo = INT64_MAX, hi = INT64_MIN;
  for (const Placed& it : items) {
    const Node& n = nodes_[it.node];
    int64_t d = ck.sub(it.disp, base);
    es.push_back({d, it.node, 0});
    size = ck.add(size, n.size);
    lo = std::min(lo, ck.add(d, n.lo));
    hi = std::max(hi, ck.add(d, n.hi));
  }
  ck.sub(hi, lo);
  ck.add(base, lo);
  ck.add(base, hi);
  if (ck.overflow) {
    error_ = DDT_ERR_OVERFLOW;
    return {};
  }
  Node n{Kind::Seq, size, static_cast<int64_t>(es.size()), 0, 0, lo, hi};
  return {base, intern(n, &es)};
}

std::shared_ptr<const Layout> Builder::finish(Placed root) {
  auto out = std::make_shared<Layout>();
  if (root.node < 0) return out;
  // Iterative post-order DFS (depth is bounded, but tables can be wide).
  std::vector<int64_t> newidx(nodes_.size(), -1);
  struct Frame {
    int64_t node, next;
  };
  std::vector<Frame> stack{{root.node, 0}};
  while (!stack.empty()) {
    Frame& f = stack.back();
    const Node& n = nodes_[f.node];
    int64_t nchild = n.kind == Kind::Vec ? 1 : (n.kind == Kind::Seq ? n.count : 0);
    if (f.next < nchild) {
      int64_t c = n.kind == Kind::Vec ? n.child : entries_[n.child + f.next].node;
      ++f.next;
      if (newidx[c] < 0) stack.push_back({c, 0});
      continue;
    }
    if (newidx[f.node] < 0) {
      Node m = n;
      if (n.kind == Kind::Vec) m.child = newidx[n.child];
      if (n.kind == Kind::Seq) {
        m.child = static_cast<int64_t>(out->entries.size());
        for (int64_t e = 0; e < n.count; ++e) {
          Entry en = entries_[n.child + e];
          en.node = newidx[en.node];
          out->entries.push_back(en);
        }
      }
      newidx[f.node] = static_cast<int64_t>(out->nodes.size());
      out->nodes.push_back(m);
    }
    stack.pop_back();
  }
  out->root = newidx[root.node];
  out->disp = root.disp;
  return out;
}

}  // namespace ddt
