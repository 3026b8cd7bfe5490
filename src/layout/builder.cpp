// Canonicalisation. Every pass is a local rewrite that states the equivalence it uses; applied
// bottom-up while a type is built, they give the same layout for the same bytes in the cases
// DESIGN.md lists. None of them reorders the stream: runs are only merged with their
// neighbours in stream order.
//
//   vec-1      VEC(1, s, c)                      = c
//   vec-block  VEC(n, L, BLOCK(L))               = BLOCK(n*L)
//   vec-vec    VEC(n, m*t, VEC(m, t, c))         = VEC(n*m, t, c)   (a pair SEQ[c@0, c@t]
//              counts as VEC(2, t, c) here)
//   vec-2      VEC(2, s, c)                      = SEQ[c@0, c@s]
//              Two copies are a pair, not a run: otherwise any two equal blocks of a random
//              index table would become a VEC of their distance, and the table a list of
//              one-off VEC nodes, slower to build and to walk than the flat table.
//   seq-empty  entries without data are dropped
//   seq-adj    BLOCK(a)@d, BLOCK(b)@d+a          = BLOCK(a+b)@d
//   seq-run    c@d, c@d+s, c@d+2s, ...           = VEC(k, s, c)@d   for k >= 3 (also extends
//              VEC entries whose child is c and whose stride matches, so nested descriptions
//              of one regular run meet the flat one)
//   seq-flat   a SEQ entry is inlined into its parent when it is small (<= 64 entries) or
//              appears once, so struct-of-tables becomes one table; a large SEQ repeated at
//              irregular places stays shared, which keeps memory proportional to the
//              description.
//   seq-period e_0 .. e_{m-1} with e_{i+k} = e_i shifted by P for every i (2 <= k <= 16, at least
//              3 repetitions) = VEC(m / k, P, SEQ(e_0 .. e_{k-1})) followed by the rest, so one
//              long indexed table of a repeating pattern meets contiguous(c, unit)
//   seq-1      SEQ with one entry                = that entry
//
// Structurally equal nodes are interned to one index, so equality of subtrees is equality of
// indices, and finish() numbers nodes in DFS post-order: equal layouts are equal arrays.
//
// Cost. A long index list is mostly settled: blocks that touch no neighbour and form no run.
// The passes therefore work on windows around the items that can change (find_windows) and
// leave the rest where it is, a table's entries are written once and hashed in the same loop
// (table), and finish() moves the root table into the layout instead of copying it. Commit
// cost stays a few ns per entry.
//
// Shared tables. An imported child's tables are not copied into the builder: its Seq nodes are
// interned with the same hash and fields a copy would have, but read the child's entries in
// place (Builder::Shared), translating node numbers on the way. A child table used once in a
// struct is then copied exactly once: by seq-flat into the parent's list, which table() turns
// into the parent's table in place (the list and the entry array have one type), and finish()
// hands to the layout. Only a shared table that survives in the result (the root itself, or a
// large table repeated at irregular places) is copied, by finish(). Besides time, this keeps
// the heap a commit needs near the size of its result, so that memory freed by the previous
// type is reused instead of returned to the system and faulted in again.
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

uint64_t mix(uint64_t h, uint64_t v) {  // one round of a multiply-xorshift hash combine
  h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  return h * 0xbf58476d1ce4e5b9ULL;
}

constexpr uint64_t kSeed = 0x6464746b;

// Entry k of a table, hashed on its own: a table's hash is the sum over its entries, so the
// entries are hashed independently (no chain of multiplies from one entry to the next) while
// the position k keeps the order in the hash.
uint64_t entry_hash(int64_t k, int64_t disp, int64_t node) {
  uint64_t v = (static_cast<uint64_t>(disp) + static_cast<uint64_t>(k) * 0x9e3779b97f4a7c15ULL) * 0xbf58476d1ce4e5b9ULL;
  v ^= static_cast<uint64_t>(node) * 0x94d049bb133111ebULL;
  return v ^ (v >> 31);
}

// The structural hash of a node: h carries a Seq's entries (summed as they are written, from
// kSeed), then the node's own fields. Only the builder's hash table uses it; the canonical hash
// of a layout is computed from its encoding (identity.cpp).
uint64_t seal(const Node& n, uint64_t h) {
  h = mix(mix(mix(mix(h, static_cast<uint64_t>(n.kind)), n.size), n.count), n.stride);
  if (n.kind == Kind::Vec) h = mix(h, n.child);
  return h ^ (h >> 29);
}

// Items a pass can change lie within this many items of a dirty one (find_windows).
constexpr size_t kMargin = 2;

}  // namespace

bool Builder::same(int64_t idx, const Node& n) const {
  const Node& m = nodes_[idx];
  if (m.kind != n.kind || m.size != n.size || m.count != n.count || m.stride != n.stride) return false;
  if (n.kind == Kind::Vec) return m.child == n.child;
  if (n.kind == Kind::Block) return true;
  if (m.child >= 0 && n.child >= 0) {
    const Entry* a = &entries_[m.child];
    const Entry* b = &entries_[n.child];
    for (int64_t i = 0; i < n.count; ++i)
      if (a[i].disp != b[i].disp || a[i].node != b[i].node) return false;
    return true;
  }
  for (int64_t i = 0; i < n.count; ++i) {
    const Entry a = entry(m, i), b = entry(n, i);
    if (a.disp != b.disp || a.node != b.node) return false;
  }
  return true;
}

int64_t Builder::intern(Node n, uint64_t h, int d) {
  if (slots_.empty()) slots_.assign(64, -1);
  size_t mask = slots_.size() - 1, i = h & mask;
  for (; slots_[i] >= 0; i = (i + 1) & mask)
    if (hashes_[slots_[i]] == h && same(slots_[i], n)) {
      if (n.kind == Kind::Seq && n.child >= 0) {  // the appended copy is not needed
        entries_.resize(n.child);
        prefix_.resize(n.child);
      }
      return slots_[i];
    }
  if (d > kMaxDepth) error_ = DDT_ERR_ARG;
  const int64_t idx = static_cast<int64_t>(nodes_.size());
  nodes_.push_back(n);
  depth_.push_back(d);
  hashes_.push_back(h);
  slots_[i] = idx;
  if (2 * nodes_.size() > slots_.size()) {  // keep the load under one half
    std::vector<int64_t> grown(2 * slots_.size(), -1);
    const size_t gm = grown.size() - 1;
    for (int64_t k = 0; k <= idx; ++k) {
      size_t j = hashes_[k] & gm;
      while (grown[j] >= 0) j = (j + 1) & gm;
      grown[j] = k;
    }
    slots_.swap(grown);
  }
  return idx;
}

Placed Builder::block(int64_t len) {
  if (len <= 0) return {};
  const Node n{Kind::Block, len, 1, 0, -1, 0, len};
  return {0, intern(n, seal(n, kSeed), 1)};
}

// A child's nodes are already canonical and in post-order: each is interned once. A table is
// hashed where it lies (entries translated to this builder's numbering as they are read) and
// interned as a shared table, with the hash and depth a copy would have had.
Placed Builder::import(const Layout& src) {
  if (src.root < 0) return {};
  auto memo = imported_.find(&src);
  if (memo != imported_.end()) return memo->second;
  const size_t mi = maps_.size();
  maps_.resize(mi + src.nodes.size());
  int64_t* map = maps_.data() + mi;  // (maps_ does not grow until this import ends)
  for (size_t i = 0; i < src.nodes.size(); ++i) {
    Node n = src.nodes[i];
    uint64_t h = kSeed;
    int d = 1;
    if (n.kind == Kind::Vec) {
      n.child = map[n.child];
      d += depth_[n.child];
    }
    if (n.kind == Kind::Seq) {
      const Entry* in = &src.entries[n.child];
      for (int64_t k = 0; k < n.count; ++k) {
        const int64_t c = map[in[k].node];
        h += entry_hash(k, in[k].disp, c);
        d = std::max(d, 1 + depth_[c]);
      }
      n.child = ~static_cast<int64_t>(shared_.size());
      shared_.push_back({in, mi});
    }
    map[i] = intern(n, seal(n, h), d);
    if (n.kind == Kind::Seq && nodes_[map[i]].child != n.child) shared_.pop_back();  // equal to one here
  }
  return imported_[&src] = Placed{src.disp, map[src.root]};
}

// When the builder holds no entries yet (the common case: the list is the type's one table),
// items become the entry array in place: the displacements are rebased where they are and the
// vector is swapped in, so the list is not copied. Otherwise the entries are appended.
Placed Builder::table(std::vector<Placed>& items) {
  const size_t count = items.size();
  const bool in_place = entries_.empty();
  const size_t first = entries_.size();
  if (!in_place) entries_.resize(first + count);
  prefix_.resize(first + count);
  // Plain pointers and local accumulators: stores through the vectors' members would make the
  // compiler keep the sums in memory, and this loop runs once per entry of every table.
  const Placed* in = items.data();
  Entry* out = in_place ? items.data() : entries_.data() + first;
  int64_t* pre = prefix_.data() + first;
  const Node* nodes = nodes_.data();
  const int* depth = depth_.data();
  const int64_t base = in[0].disp;
  int64_t size = 0, lo = INT64_MAX, hi = INT64_MIN;
  uint64_t h = kSeed;
  int d = 1;
  bool of = false;
  for (size_t k = 0; k < count; ++k) {
    const int64_t node = in[k].node;
    const Node& n = nodes[node];
    int64_t disp, l, u;
    of |= __builtin_sub_overflow(in[k].disp, base, &disp);
    out[k].disp = disp;
    out[k].node = node;
    pre[k] = size;
    h += entry_hash(static_cast<int64_t>(k), disp, node);
    of |= __builtin_add_overflow(size, n.size, &size);
    of |= __builtin_add_overflow(disp, n.lo, &l);
    of |= __builtin_add_overflow(disp, n.hi, &u);
    lo = std::min(lo, l);
    hi = std::max(hi, u);
    d = std::max(d, 1 + depth[node]);
  }
  Checked ck;
  ck.sub(hi, lo);
  ck.add(base, lo);
  ck.add(base, hi);
  if (of || ck.overflow) {
    if (!in_place) entries_.resize(first);
    prefix_.resize(first);
    error_ = DDT_ERR_OVERFLOW;
    return {};
  }
  if (in_place) entries_.swap(items);
  const Node n{Kind::Seq, size, static_cast<int64_t>(count), 0, static_cast<int64_t>(first), lo, hi};
  return {base, intern(n, seal(n, h), d)};
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
  int64_t cn, cs, cc;  // the child seen as a run, where it is one
  if (as_run(p.node, cn, cs, cc) && stride == ck.mul(cn, cs) && !ck.overflow) {  // vec-vec
    count = ck.mul(count, cn);
    stride = cs;
    p.node = cc;
  }
  if (count == 2) {  // vec-2
    std::vector<Placed> pair{{0, p.node}, {stride, p.node}};
    return shift(table(pair), p.disp);
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
  return {p.disp, intern(n, seal(n, kSeed), 1 + depth_[p.node])};
}

namespace {
// An item seen as a run: n copies of node at disp + i*stride.
struct Run {
  int64_t disp, n, stride, node;
};
}  // namespace

bool Builder::as_run(int64_t node, int64_t& n, int64_t& stride, int64_t& child) const {
  const Node& x = nodes_[node];
  return ddt::as_run(x, [&](int64_t i) { return entry(x, i); }, n, stride, child);
}

// An item is dirty when a pass may change it: anything but a block, two blocks that touch
// (seq-adj), three items of one node at one stride (seq-run), and any pair or triple whose
// displacement arithmetic overflows (the pass must see it to report it). A clean block changes
// only next to a dirty item, and at most kMargin items away from it:
//   * it cannot touch a merged block (that would touch one of its own neighbours), nor start
//     or continue a run of singles (that run would be three clean items at one stride);
//   * a run unpacked from a VEC takes the single just before it, or the singles after it at
//     its stride, of which only two can be clean (three would be a run of their own).
// Windows are the dirty items with kMargin clean items on each side; what a pass does inside a
// window does not depend on the clean items outside it, so passes skip them. No window at all
// means settled: no pass would change anything.
bool Builder::find_windows(const std::vector<Placed>& items, std::vector<std::pair<size_t, size_t>>& w) const {
  w.clear();
  const size_t n = items.size();
  auto dirty = [&](size_t lo, size_t hi) {  // items lo..hi (inclusive); starts never decrease
    const size_t a = lo < kMargin ? 0 : lo - kMargin, b = std::min(n, hi + kMargin + 1);
    if (!w.empty() && a <= w.back().second)
      w.back().second = std::max(w.back().second, b);
    else
      w.push_back({a, b});
  };
  const Placed* all = items.data();
  const Node* nodes = nodes_.data();
  int64_t before = -1;  // size of item i - 1 when it is a block, else -1 (sizes are positive)
  for (size_t i = 0; i < n; ++i) {
    const Placed& it = all[i];
    const Node& x = nodes[it.node];
    if (x.kind != Kind::Block) {
      dirty(i, i);
      before = -1;
      continue;
    }
    if (before > 0) {
      Checked c;
      if (c.add(all[i - 1].disp, before) == it.disp || c.overflow) dirty(i - 1, i);
    }
    before = x.size;
    if (i + 2 < n && all[i + 1].node == it.node && all[i + 2].node == it.node) {
      Checked c;
      if (c.sub(items[i + 1].disp, it.disp) == c.sub(items[i + 2].disp, items[i + 1].disp) || c.overflow)
        dirty(i, i + 2);
    }
  }
  if (!local_passes_ && !w.empty()) w.assign(1, {0, n});
  return !w.empty();
}

Placed Builder::seq(std::vector<Placed> items) {
  items.erase(std::remove_if(items.begin(), items.end(), [](const Placed& p) { return p.node < 0; }),
              items.end());
  Checked ck;
  std::vector<std::pair<size_t, size_t>> windows;
  struct Done {  // a window as processed: items [a, end) became runs [r0, r1)
    size_t a, end, r0, r1;
  };
  std::vector<Done> done;
  std::vector<Run> runs;
  // Stops when an even and an odd pass in a row changed nothing (an even pass alone suffices
  // when no item is a run): runs formed by one pass get seen whole by the next even pass.
  int quiet = 0;
  for (int pass = 0; pass < 64 && items.size() > 1; ++pass) {
    // Windows are found at the start and after each change; an unchanged list keeps them.
    if (quiet == 0 && !find_windows(items, windows)) break;
    bool changed = false, saw_run = false, saw_seq = false;
    // Even passes see each item whole (struct of identical members -> VEC of that member);
    // odd passes see a VEC item as a run of its child (runs that continue each other merge).
    const bool unpack = pass % 2 == 1;
    runs.clear();
    done.clear();
    auto single = [&](size_t i) {  // item i as a run, unpacked on odd passes
      const Placed& it = items[i];
      Run r{it.disp, 1, 0, it.node};
      if (unpack) as_run(it.node, r.n, r.stride, r.node);
      return r;
    };
    size_t i = 0;
    for (const auto& win : windows) {
      const size_t r0 = runs.size(), a = std::max(i, win.first);
      for (i = a; i < win.second; ++i) {
        Run r = single(i);
        const Kind k = nodes_[items[i].node].kind;
        saw_run |= k == Kind::Vec || k == Kind::Seq;  // a VEC or a pair: unpacking may merge it
        saw_seq |= k == Kind::Seq;
        if (runs.size() > r0) {
          Run& last = runs.back();
          const Node& ln = nodes_[last.node];
          if (last.n == 1 && r.n == 1 && ln.kind == Kind::Block && nodes_[r.node].kind == Kind::Block &&
              ck.add(last.disp, ln.size) == r.disp) {  // seq-adj
            last.node = block(ck.add(ln.size, nodes_[r.node].size)).node;
            changed = true;
            continue;
          }
          if (last.node == r.node && (last.n > 1 || r.n > 1)) {  // seq-run: extend a run
            int64_t s = last.n > 1 ? last.stride : r.stride;
            bool strides_agree = (last.n == 1 || last.stride == s) && (r.n == 1 || r.stride == s);
            if (strides_agree && ck.add(last.disp, ck.mul(last.n, s)) == r.disp && !ck.overflow) {
              last.n += r.n;
              last.stride = s;
              changed = true;
              continue;
            }
          }
        }
        // seq-run: three singles of one node at one stride start a run.
        if (r.n == 1 && i + 2 < items.size() && items[i + 1].node == items[i].node &&
            items[i + 2].node == items[i].node) {
          Run b = single(i + 1), c = single(i + 2);
          if (b.n == 1 && c.n == 1 && b.node == r.node && c.node == r.node) {
            int64_t s = ck.sub(b.disp, r.disp);
            if (ck.sub(c.disp, b.disp) == s && !ck.overflow &&
                !(nodes_[r.node].kind == Kind::Block && s == nodes_[r.node].size)) {
              runs.push_back({r.disp, 3, s, r.node});
              i += 2;
              changed = true;
              continue;
            }
          }
        }
        runs.push_back(r);
      }
      done.push_back({a, i, r0, runs.size()});
    }
    if (changed) {  // unchanged, the runs are the items as they were
      // In place: a window's runs are no more than its items, so writing never overtakes reading.
      size_t out = 0, from = 0;
      for (const Done& d : done) {
        out = std::copy(items.begin() + from, items.begin() + d.a, items.begin() + out) - items.begin();
        for (size_t k = d.r0; k < d.r1; ++k)
          items[out++] = vec(runs[k].n, runs[k].stride, Placed{runs[k].disp, runs[k].node});
        from = d.end;
      }
      out = std::copy(items.begin() + from, items.end(), items.begin() + out) - items.begin();
      items.resize(out);
    }
    // A pair (vec-2) that merged nothing is two singles again: flattened below.
    if (error_) return {};  // vec overflowed: no item may be read after this
    if (changed) {
      quiet = 0;
      continue;
    }
    quiet = !unpack && !saw_run ? 2 : quiet + 1;
    if (quiet < 2) continue;
    if (saw_seq) {  // seq-flat, once the merges have found what they can at this level
      std::unordered_map<int64_t, int> uses;  // counted for SEQ items only: tables have none
      for (const Placed& it : items)
        if (nodes_[it.node].kind == Kind::Seq) ++uses[it.node];
      size_t total = 0;
      for (const Placed& it : items) {
        const Node& n = nodes_[it.node];
        total += n.kind == Kind::Seq && (n.count <= 64 || uses[it.node] == 1) ? n.count : 1;
      }
      std::vector<Placed> flat;
      flat.reserve(total);
      for (const Placed& it : items) {
        const Node& n = nodes_[it.node];
        if (n.kind == Kind::Seq && (n.count <= 64 || uses[it.node] == 1)) {
          // (fields stored one by one: an entry built whole and reloaded stalls the store)
          if (n.child >= 0) {
            for (int64_t e = n.child; e < n.child + n.count; ++e) {
              Placed& f = flat.emplace_back();
              f.disp = ck.add(it.disp, entries_[e].disp);
              f.node = entries_[e].node;
            }
          } else {  // a shared table: this is the one copy of it
            const Shared& sh = shared_[~n.child];
            const int64_t* map = maps_.data() + sh.map;
            for (const Entry* e = sh.entries; e != sh.entries + n.count; ++e) {
              Placed& f = flat.emplace_back();
              f.disp = ck.add(it.disp, e->disp);
              f.node = map[e->node];
            }
          }
          changed = true;
        } else {
          flat.push_back(it);
        }
      }
      items.swap(flat);
    }
    if (!changed) break;
    quiet = 0;
  }
  if (ck.overflow) {
    error_ = DDT_ERR_OVERFLOW;
    return {};
  }
  if (items.empty()) return {};
  if (items.size() == 1) return items[0];  // seq-1
  if (Placed r = period(items); r.node >= 0) return r;
  return table(items);
}

Placed Builder::period(const std::vector<Placed>& items) {
  const size_t m = items.size();
  for (size_t k = 2; k <= 16 && 3 * k <= m; ++k) {
    Checked ck;  // displacements may span the whole int64 range: differences are checked
    const int64_t P = ck.sub(items[k].disp, items[0].disp);
    if (ck.overflow) continue;
    size_t i = 0;
    for (; i + k < m; ++i)
      if (items[i + k].node != items[i].node || ck.sub(items[i + k].disp, items[i].disp) != P || ck.overflow) break;
    if (i + k < m && i < 2 * k) continue;  // fewer than 3 whole repetitions before it breaks
    const size_t reps = (i + k) / k;
    if (reps < 3) continue;
    Placed unit = seq(std::vector<Placed>(items.begin(), items.begin() + k));
    std::vector<Placed> rest{vec(reps, P, unit)};
    rest.insert(rest.end(), items.begin() + reps * k, items.end());
    if (error_) return {};
    return rest.size() == 1 ? rest[0] : seq(std::move(rest));
  }
  return {};
}

std::shared_ptr<const Layout> Builder::finish(Placed root) {
  auto out = std::make_shared<Layout>();
  if (root.node < 0) return out;
  // Iterative post-order DFS (depth is bounded, but tables can be wide): order lists the
  // reachable nodes in their new numbering.
  std::vector<int64_t> newidx(nodes_.size(), -1), order;
  struct Frame {
    int64_t node, next;
  };
  std::vector<Frame> stack{{root.node, 0}};
  while (!stack.empty()) {
    Frame& f = stack.back();
    const Node& n = nodes_[f.node];
    int64_t nchild = n.kind == Kind::Vec ? 1 : (n.kind == Kind::Seq ? n.count : 0);
    int64_t next = -1;  // the first child not numbered yet
    while (f.next < nchild && next < 0) {
      int64_t c = n.kind == Kind::Vec ? n.child : entry(n, f.next).node;
      ++f.next;
      if (newidx[c] < 0) next = c;
    }
    if (next >= 0) {
      stack.push_back({next, 0});  // invalidates f
      continue;
    }
    if (newidx[f.node] < 0) {
      newidx[f.node] = static_cast<int64_t>(order.size());
      order.push_back(f.node);
    }
    stack.pop_back();
  }
  // Entries follow their tables in node order, so the root's table (a Seq root is numbered
  // last) goes at the end: it moves within entries_, the other tables are copied before it. A
  // shared table is copied from its source here, its prefix sums recomputed from the sizes.
  const Node& r = nodes_[root.node];
  const int64_t keep = r.kind == Kind::Seq ? r.count : 0;
  std::vector<Entry> lead;
  std::vector<int64_t> lead_prefix;
  for (int64_t old : order) {
    const Node& n = nodes_[old];
    if (n.kind != Kind::Seq || old == root.node) continue;
    int64_t sum = 0;
    for (int64_t k = 0; k < n.count; ++k) {
      const Entry e = entry(n, k);
      lead.push_back({e.disp, newidx[e.node]});
      lead_prefix.push_back(n.child >= 0 ? prefix_[n.child + k] : sum);
      sum += nodes_[e.node].size;
    }
  }
  const size_t nl = lead.size();
  if (keep > 0 && r.child >= 0) {
    const size_t from = static_cast<size_t>(r.child);
    if (entries_.size() < nl + keep) {
      entries_.resize(nl + keep);
      prefix_.resize(nl + keep);
    }
    if (from != nl) {
      std::memmove(&entries_[nl], &entries_[from], keep * sizeof(Entry));
      std::memmove(&prefix_[nl], &prefix_[from], keep * sizeof(int64_t));
    }
    for (Entry* e = &entries_[nl]; e != &entries_[nl] + keep; ++e) e->node = newidx[e->node];
  } else if (keep > 0) {  // a shared root: its one copy
    entries_.resize(nl + keep);
    prefix_.resize(nl + keep);
    int64_t sum = 0;
    for (int64_t k = 0; k < keep; ++k) {
      const Entry e = entry(r, k);
      entries_[nl + k] = {e.disp, newidx[e.node]};
      prefix_[nl + k] = sum;
      sum += nodes_[e.node].size;
    }
  }
  entries_.resize(nl + keep);
  prefix_.resize(nl + keep);
  std::copy(lead.begin(), lead.end(), entries_.begin());
  std::copy(lead_prefix.begin(), lead_prefix.end(), prefix_.begin());
  if (entries_.capacity() > 2 * entries_.size() + 64) {  // imports that were flattened away
    entries_.shrink_to_fit();
    prefix_.shrink_to_fit();
  }
  out->nodes.reserve(order.size());
  int64_t at = 0;  // the next table's first entry
  for (int64_t old : order) {
    Node m = nodes_[old];
    if (m.kind == Kind::Vec) m.child = newidx[m.child];
    if (m.kind == Kind::Seq) {
      m.child = at;
      at += m.count;
    }
    out->nodes.push_back(m);
  }
  out->entries = std::move(entries_);
  out->prefix = std::move(prefix_);
  out->root = newidx[root.node];
  out->disp = root.disp;
  return out;
}

}  // namespace ddt
