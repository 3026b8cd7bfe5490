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
// The passes therefore work on windows around the items that can change (find_windows), look
// again after a pass only near what it rewrote, and leave the rest where it is. Every loop over
// a list goes by runs of one node, so what depends on the node is read once per run. A table
// remembers that it is settled (Facts, layout.hpp), so a struct that inlines it scans only near
// its ends; its hash samples its entries instead of reading them all (table_hash); finish()
// leaves a table of one node where it lies. Commit cost, create + commit + free of DDTBench's
// index-list types, callgrind instructions per index entry before / after (memset's and memcpy's
// per-byte counts left out; the kernels' own building of the index arrays included):
// SPECFEM3D_cm c=1 460 -> 114, c=4 445 -> 117 (the struct of two lists), LAMMPS_full 1907,1662
// 157 -> 47, SPECFEM3D_oc c=1 293 -> 92 (with the fixed cost of a type). In the commit suite
// (7 runs interleaved with the old code, time over MPICH's in the same run): LAMMPS_full 1907,
// 1662 3.95 -> 1.21, SPECFEM3D_oc c=1 5.07 -> 1.74, SPECFEM3D_cm c=1 8.45 -> 2.86, c=2 9.65 ->
// 3.49; c=3 and c=4 fell from 757 and 1406 us to 97 and 242 us (medians), their commits no
// longer faulting pages in (layout/recycle.hpp).
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
// the position k keeps the order in the hash. An entry names its node by the node's structural
// hash, not its number, so a hash is the same in every builder (Facts, layout.hpp).
uint64_t entry_hash(int64_t k, int64_t disp, uint64_t node_hash) {
  uint64_t v = (static_cast<uint64_t>(disp) + static_cast<uint64_t>(k) * 0x9e3779b97f4a7c15ULL) * 0xbf58476d1ce4e5b9ULL;
  v ^= node_hash * 0x94d049bb133111ebULL;
  return v ^ (v >> 31);
}

// The structural hash of a node: h carries a Seq's entries (from kSeed), then the node's own
// fields, and a Vec's child's hash. Only builders' hash tables use it; the canonical hash of a
// layout is computed from its encoding (identity.cpp).
uint64_t seal(const Node& n, uint64_t h, uint64_t child_hash = 0) {
  h = mix(mix(mix(mix(h, static_cast<uint64_t>(n.kind)), n.size), n.count), n.stride);
  if (n.kind == Kind::Vec) h = mix(h, child_hash);
  if (n.kind == Kind::Seq) h = mix(mix(h, n.lo), n.hi);
  return h ^ (h >> 29);
}

// A table's hash covers its fields and bounds and kSample entries at evenly spaced positions
// (every entry of a shorter table), not all of them: the hash only sorts nodes into the hash
// table, where equality is decided by comparing entries (Builder::same), and two different
// tables of one size, bounds and sampled entries are rare enough that comparing them costs
// nothing measurable. Hashing every entry cost 11 instructions per entry and table, twice per
// entry for a struct of index lists (the lists' tables and the struct's).
constexpr int64_t kSample = 16;
template <class EntryAt>  // entry(k) -> {displacement, structural hash of the entry's node}
uint64_t table_hash(const Node& n, EntryAt entry) {
  uint64_t h = kSeed;
  const int64_t m = std::min(n.count, kSample);
  for (int64_t i = 0; i < m; ++i) {
    const int64_t k = m == n.count ? i : i * (n.count - 1) / (m - 1);
    const std::pair<int64_t, uint64_t> e = entry(k);
    h += entry_hash(k, e.first, e.second);
  }
  return seal(n, h);
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

int64_t Builder::intern(Node n, Facts f) {
  if (slots_.empty()) slots_.assign(64, -1);
  const uint64_t h = f.hash;
  size_t mask = slots_.size() - 1, i = h & mask;
  for (; slots_[i] >= 0; i = (i + 1) & mask)
    if (facts_[slots_[i]].hash == h && same(slots_[i], n)) {
      if (n.kind == Kind::Seq && n.child >= 0) {  // the appended copy is not needed
        entries_.resize(n.child);
        prefix_.resize(n.child);
      }
      facts_[slots_[i]].settled |= f.settled;
      return slots_[i];
    }
  if (f.depth > kMaxDepth) error_ = DDT_ERR_ARG;
  const int64_t idx = static_cast<int64_t>(nodes_.size());
  nodes_.push_back(n);
  facts_.push_back(f);
  slots_[i] = idx;
  if (2 * nodes_.size() > slots_.size()) {  // keep the load under one half
    std::vector<int64_t> grown(2 * slots_.size(), -1);
    const size_t gm = grown.size() - 1;
    for (int64_t k = 0; k <= idx; ++k) {
      size_t j = facts_[k].hash & gm;
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
  return {0, intern(n, {seal(n, kSeed), 1, false, false})};
}

// A child's nodes are already canonical and in post-order: each is interned once, with the facts
// its builder kept (a node's hash and depth do not depend on node numbers), so that a table is
// not read at all here. A layout without facts (read by deserialize) has each table hashed where
// it lies, entries translated to this builder's numbering as they are read. Either way a table
// is interned as a shared table, with the hash and depth a copy would have had. (Hashing every
// imported table cost 9-20 instructions per entry: SPECFEM3D_cm imports its two lists, LAMMPS
// its two, into the struct.)
Placed Builder::import(const Layout& src) {
  if (src.root < 0) return {};
  if (imported_.size() <= kImportList) {
    for (const auto& m : imported_)
      if (m.first == &src) return m.second;
  } else if (auto memo = imported_index_.find(&src); memo != imported_index_.end()) {
    return memo->second;
  }
  const size_t mi = maps_.size();
  maps_.resize(mi + src.nodes.size());
  int64_t* map = maps_.data() + mi;  // (maps_ does not grow until this import ends)
  const bool known = src.facts.size() == src.nodes.size();
  for (size_t i = 0; i < src.nodes.size(); ++i) {
    Node n = src.nodes[i];
    Facts f{kSeed, 1, false, false};
    if (known) f = src.facts[i];
    if (n.kind == Kind::Vec) {
      n.child = map[n.child];
      if (!known) f.hash = seal(n, kSeed, facts_[n.child].hash), f.depth += facts_[n.child].depth;
    } else if (n.kind == Kind::Seq) {
      const Entry* in = &src.entries[n.child];
      if (!known) {
        int64_t runs = 0;
        for (int64_t k = 0, last = -1; k < n.count; ++k)
          if (in[k].node != last) {  // tables are mostly runs of one node: read once per run
            last = in[k].node, ++runs;
            f.depth = std::max(f.depth, 1 + facts_[map[last]].depth);
          }
        f.uniform = runs == 1;
        f.hash = table_hash(n, [&](int64_t k) {
          return std::pair<int64_t, uint64_t>{in[k].disp, facts_[map[in[k].node]].hash};
        });
      }
      n.child = ~static_cast<int64_t>(shared_.size());
      shared_.push_back({in, mi});
    } else if (!known) {
      f.hash = seal(n, kSeed);
    }
    map[i] = intern(n, f);
    if (n.kind == Kind::Seq && nodes_[map[i]].child != n.child) shared_.pop_back();  // equal to one here
  }
  const Placed out{src.disp, map[src.root]};
  imported_.push_back({&src, out});
  if (imported_.size() == kImportList + 1)
    imported_index_.insert(imported_.begin(), imported_.end());
  else if (imported_.size() > kImportList + 1)
    imported_index_.emplace(&src, out);
  return out;
}

// When the builder holds no entries yet (the common case: the list is the type's one table),
// items become the entry array in place: the displacements are rebased where they are and the
// vector is swapped in, so the list is not copied. Otherwise the entries are appended.
//
// The list is walked in runs of one node (an index list is one run): what an entry adds to the
// node's size, bounds and depth is the same along a run, so the loops over entries only rebase
// and sum prefixes, and the checks are made once per run on its least and greatest
// displacement. An overflow anywhere in a run shows at one of its two ends: displacement plus a
// constant is monotone, and sizes are positive. The hash samples the entries (table_hash).
// (Checking and hashing every entry, as before, cost 59 instructions per entry, 24% of
// SPECFEM3D_cm's commit under callgrind; now 16.)
Placed Builder::table(std::vector<Placed>& items, bool settled) {
  const size_t count = items.size();
  const bool in_place = entries_.empty();
  const size_t first = entries_.size();
  if (!in_place) entries_.resize(first + count);
  prefix_.resize(first + count);
  // Plain pointers and local accumulators: stores through the vectors' members would make the
  // compiler keep the sums in memory.
  const Placed* in = items.data();
  Entry* out = in_place ? items.data() : entries_.data() + first;
  int64_t* pre = prefix_.data() + first;
  const Node* nodes = nodes_.data();
  const Facts* facts = facts_.data();
  const int64_t base = in[0].disp;
  uint64_t size = 0;  // the prefix sum; wraps only where `of` is set
  int64_t total = 0, lo = INT64_MAX, hi = INT64_MIN;
  int d = 1;
  int64_t runs = 0;
  bool of = false;
  for (size_t k = 0; k < count;) {
    const int64_t node = in[k].node;
    const Node n = nodes[node];  // a copy: the stores below may not alias it
    d = std::max(d, 1 + facts[node].depth);
    ++runs;
    int64_t least = INT64_MAX, most = INT64_MIN;  // displacements of the run, before rebasing
    const uint64_t ub = static_cast<uint64_t>(base);
    size_t j = k;  // the run [k, j) of this node
    do {
      const int64_t raw = in[j].disp;
      least = std::min(least, raw), most = std::max(most, raw);
      out[j].disp = static_cast<int64_t>(static_cast<uint64_t>(raw) - ub);  // (in place: the same slot)
    } while (++j < count && in[j].node == node);
    if (!in_place)
      for (size_t e = k; e < j; ++e) out[e].node = node;
    for (size_t e = k; e < j; ++e, size += static_cast<uint64_t>(n.size)) pre[e] = static_cast<int64_t>(size);
    int64_t a, b, l, u, bytes;
    of |= __builtin_sub_overflow(least, base, &a) | __builtin_sub_overflow(most, base, &b);
    of |= __builtin_add_overflow(a, n.lo, &l) | __builtin_add_overflow(b, n.lo, &u);
    lo = std::min(lo, l);
    of |= __builtin_add_overflow(a, n.hi, &l) | __builtin_add_overflow(b, n.hi, &u);
    hi = std::max(hi, u);
    of |= __builtin_mul_overflow(static_cast<int64_t>(j - k), n.size, &bytes);
    of |= __builtin_add_overflow(total, bytes, &total);
    k = j;
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
  const Node n{Kind::Seq, total, static_cast<int64_t>(count), 0, static_cast<int64_t>(first), lo, hi};
  const Entry* e = entries_.data() + first;
  const uint64_t h = table_hash(n, [&](int64_t k) {
    return std::pair<int64_t, uint64_t>{e[k].disp, facts[e[k].node].hash};
  });
  return {base, intern(n, {h, d, settled, runs == 1})};
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
  return {p.disp, intern(n, {seal(n, kSeed, facts_[p.node].hash), 1 + facts_[p.node].depth, false, false})};
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
void Builder::scan(const std::vector<Placed>& items, size_t from, size_t to, Ranges& w) const {
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
  if (from > 0) {
    const Node& p = nodes[all[from - 1].node];
    before = p.kind == Kind::Block ? p.size : -1;
  }
  // A list is mostly runs of one block (an index list is one run), and inside a run the tests
  // need only the displacements: the node is read once per run, each difference of neighbours
  // is computed once, and the rare dirty item leaves the loop for dirty(). (Item by item, the
  // scan cost 40-50 instructions per item; it runs once per list and level at least.)
  for (size_t i = from; i < to;) {
    const int64_t node = all[i].node;
    const Node& x = nodes[node];
    if (x.kind != Kind::Block) {
      dirty(i, i);
      before = -1;
      ++i;
      continue;
    }
    const int64_t width = x.size;
    // The run [i, j) of this node, found as far as the tests of items before `to` look (two
    // items on): item k starts a triple when k + 2 < j.
    const size_t reach = std::min(n, to + 2);
    const Placed* p = all + i + 1;
    while (p + 2 <= all + reach && p[0].node == node && p[1].node == node) p += 2;
    while (p < all + reach && p->node == node) ++p;
    const size_t j = static_cast<size_t>(p - all);
    const size_t stop = std::min(j, to);
    if (before > 0) {
      int64_t end;
      if (__builtin_add_overflow(all[i - 1].disp, before, &end) || end == all[i].disp) dirty(i - 1, i);
    }
    // The tests of item k of the run, exactly: touching the item before (k > i), and the triple
    // it starts (k + 2 < j); an overflow makes the item dirty, for the pass to report it.
    const auto item = [&](size_t k) {
      int64_t end, a, b;
      if (k > i && (__builtin_add_overflow(all[k - 1].disp, width, &end) || end == all[k].disp)) dirty(k - 1, k);
      if (k + 2 < j && (__builtin_sub_overflow(all[k + 1].disp, all[k].disp, &a) |
                        __builtin_sub_overflow(all[k + 2].disp, all[k + 1].disp, &b) || a == b))
        dirty(k, k + 2);
    };
    size_t k = i;
    item(k++);
    // Inside the run a filter that can only err towards looking: with every displacement within
    // 2^61 of zero and the width below 2^61 nothing overflows, so the differences of neighbours
    // decide both tests, and an item that fails the filter (touching its neighbour, equal steps)
    // is tested exactly. Whether a displacement lies farther out is known only at the end of the
    // loop (an OR of them all, cheaper than a test per item): then the windows found meanwhile
    // are taken back and the items tested exactly instead. Steps: step0 = d(k) - d(k-1),
    // step1 = d(k+1) - d(k).
    constexpr uint64_t kFar = uint64_t{1} << 61;
    const size_t inner = std::min(stop, j < 2 ? 0 : j - 2);
    if (k < inner && static_cast<uint64_t>(width) < kFar && local_passes_) {  // (reference: exact tests)
      const size_t first = k, saved = w.size();
      const std::pair<size_t, size_t> back = saved ? w.back() : std::pair<size_t, size_t>{};
      uint64_t d2 = static_cast<uint64_t>(all[k + 1].disp), d1 = static_cast<uint64_t>(all[k].disp),
               d0 = static_cast<uint64_t>(all[k - 1].disp);
      uint64_t step0 = d1 - d0, step1 = d2 - d1, far = (d0 + kFar) | (d1 + kFar) | (d2 + kFar);
      const uint64_t wide = static_cast<uint64_t>(width);
      for (; k < inner; ++k) {
        const uint64_t d3 = static_cast<uint64_t>(all[k + 2].disp), step2 = d3 - d2;
        far |= d3 + kFar;
        if (__builtin_expect((step0 == wide) | (step1 == step2), 0)) item(k);
        step0 = step1, step1 = step2, d2 = d3;
      }
      if (far >> 62) {  // some displacement far out: the exact tests, in order, instead
        w.resize(saved);
        if (saved) w.back() = back;
        for (k = first; k < inner; ++k) item(k);
      }
    }
    for (; k < stop; ++k) item(k);
    before = width;
    i = stop;
  }
}

// After a pass, only the items near what it rewrote are scanned again. The pass changed items
// only inside its windows, and an item's dirt depends on itself, the item before it and the two
// after it: outside [s - 2, e + 1) of every rewritten range [s, e) each item and its neighbours
// are those of the last scan, which found the item clean and more than kMargin items away from
// any dirty one. So the dirty items, and with them the windows, are those of a full scan. Lists
// whose passes merge something (most index lists of 10^3-10^4 entries have a few touching or
// evenly spaced neighbours) scanned the whole list once more per pass before.
bool Builder::find_windows(const std::vector<Placed>& items, const Ranges* rewritten, Ranges& w) const {
  w.clear();
  const size_t n = items.size();
  if (!rewritten || !local_passes_) {  // (the reference behaviour scans every item every time)
    scan(items, 0, n, w);
  } else {
    size_t lo = 0, hi = 0;
    bool open = false;
    for (const auto& r : *rewritten) {
      const size_t a = r.first < 2 ? 0 : r.first - 2, b = std::min(n, r.second + 1);
      if (open && a <= hi) {
        hi = std::max(hi, b);
        continue;
      }
      if (open) scan(items, lo, hi, w);
      lo = a, hi = b, open = true;
    }
    if (open) scan(items, lo, hi, w);
  }
  if (!local_passes_ && !w.empty()) w.assign(1, {0, n});
  return !w.empty();
}

Placed Builder::seq(std::vector<Placed> items) {
  items.erase(std::remove_if(items.begin(), items.end(), [](const Placed& p) { return p.node < 0; }),
              items.end());
  Checked ck;
  Ranges windows, rewritten;
  // Set when the last change left ranges of items known clean: rewritten then holds the other
  // ranges, the only ones find_windows looks at again (see there and seq-flat below).
  bool rescan = false;
  bool settled = false;  // the passes stopped because no item was dirty
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
    if (quiet == 0 && !find_windows(items, rescan ? &rewritten : nullptr, windows)) {
      settled = true;
      break;
    }
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
      rewritten.clear();
      for (const Done& d : done) {
        out = std::copy(items.begin() + from, items.begin() + d.a, items.begin() + out) - items.begin();
        const size_t s = out;
        for (size_t k = d.r0; k < d.r1; ++k)
          items[out++] = vec(runs[k].n, runs[k].stride, Placed{runs[k].disp, runs[k].node});
        rewritten.push_back({s, out});
        from = d.end;
      }
      out = std::copy(items.begin() + from, items.end(), items.begin() + out) - items.begin();
      items.resize(out);
    }
    // A pair (vec-2) that merged nothing is two singles again: flattened below.
    if (error_) return {};  // vec overflowed: no item may be read after this
    if (changed) {
      quiet = 0;
      rescan = true;
      continue;
    }
    quiet = !unpack && !saw_run ? 2 : quiet + 1;
    if (quiet < 2) continue;
    if (saw_seq) {  // seq-flat, once the merges have found what they can at this level
      // Uses are counted for SEQ items only (tables have none), in a sorted list: a struct has
      // few members, and a hash map cost an allocation per node.
      std::vector<int64_t> seqs;
      for (const Placed& it : items)
        if (nodes_[it.node].kind == Kind::Seq) seqs.push_back(it.node);
      std::sort(seqs.begin(), seqs.end());
      const auto inlined = [&](const Placed& it) {
        const Node& n = nodes_[it.node];
        if (n.kind != Kind::Seq) return false;
        if (n.count <= 64) return true;
        const auto r = std::equal_range(seqs.begin(), seqs.end(), it.node);
        return r.second - r.first == 1;
      };
      size_t total = 0;
      for (const Placed& it : items) total += inlined(it) ? nodes_[it.node].count : 1;
      // Nothing to inline (large tables repeated at irregular places): the list stays as it is,
      // not copied (LAMMPS's five members of one table: a copy of the whole list per commit).
      if (total > items.size()) {  // (an inlined table has two entries or more)
        // A settled table inlined whole stays clean inside: shifting keeps the differences of
        // its displacements, and importing keeps its blocks and which entries share one (equal
        // nodes are one node in any builder). Only the items near its ends can be dirty, so the
        // next scan looks at the other items only (find_windows), with the ends in reach of it:
        // rewritten becomes the gaps between such tables. Where a displacement could come near
        // the int64 limits the table is scanned like any other items, so that an overflow shows
        // where it showed before. (SPECFEM3D_cm's struct of two lists was scanned whole again,
        // 30 instructions per entry.)
        constexpr int64_t kFar = int64_t{1} << 61;
        const auto near_limits = [&](int64_t v) { return v <= -kFar || v >= kFar; };
        std::vector<Placed> flat = Recycled<Entry>::take(total);
        flat.resize(total);
        Placed* f = flat.data();
        bool of = false;
        rewritten.clear();
        size_t gap = 0;  // where the current range of items not known clean began
        for (const Placed& it : items) {
          if (!inlined(it)) {
            *f++ = it;
            continue;
          }
          const Node& n = nodes_[it.node];
          const size_t at = static_cast<size_t>(f - flat.data());
          // A settled table far from the limits cannot overflow when shifted (its entries are
          // blocks inside [lo, hi)): copied without a check per entry, and kept clean below.
          const bool clean = facts_[it.node].settled && !near_limits(it.disp) && !near_limits(n.lo) && !near_limits(n.hi);
          const uint64_t by = static_cast<uint64_t>(it.disp);
          // (fields stored one by one: an entry built whole and reloaded stalls the store)
          if (n.child >= 0) {
            const Entry* e = &entries_[n.child];
            if (clean) {
              for (int64_t k = 0; k < n.count; ++k, ++f)
                f->disp = static_cast<int64_t>(static_cast<uint64_t>(e[k].disp) + by), f->node = e[k].node;
            } else {
              for (int64_t k = 0; k < n.count; ++k, ++f) {
                of |= __builtin_add_overflow(it.disp, e[k].disp, &f->disp);
                f->node = e[k].node;
              }
            }
          } else {  // a shared table: this is the one copy of it
            const Shared& sh = shared_[~n.child];
            const int64_t* map = maps_.data() + sh.map;
            const Entry* e = sh.entries;
            if (clean && facts_[it.node].uniform) {  // one node: translated once
              const int64_t node = map[e[0].node];
              for (int64_t k = 0; k < n.count; ++k, ++f)
                f->disp = static_cast<int64_t>(static_cast<uint64_t>(e[k].disp) + by), f->node = node;
            } else {
              for (int64_t k = 0; k < n.count; ++k, ++f) {
                of |= __builtin_add_overflow(it.disp, e[k].disp, &f->disp);
                f->node = map[e[k].node];
              }
            }
          }
          if (clean) {
            rewritten.push_back({gap, at});
            gap = at + static_cast<size_t>(n.count);
          }
        }
        rewritten.push_back({gap, total});
        if (of) ck.overflow = true;
        items.swap(flat);
        changed = true;
        rescan = true;
      }
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
  return table(items, settled);
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
  // reachable nodes in their new numbering. A table's entries that are numbered already are
  // skipped in a tight loop: an index list is one node repeated. One scratch array holds the new
  // numbers, the order and the DFS stack (a node is on the stack at most once: the layout is a
  // DAG), on the stack for a small type: these were three allocations of the handful a small
  // type's commit makes.
  const size_t nn = nodes_.size();
  int64_t local[4 * 32];
  std::vector<int64_t> heap;
  int64_t* scratch = local;
  if (4 * nn > sizeof local / sizeof local[0]) heap.resize(4 * nn), scratch = heap.data();
  int64_t* const newidx = scratch;
  int64_t* const order = scratch + nn;
  int64_t* const stack_node = scratch + 2 * nn;  // frame d: its node, and its next child to look at
  int64_t* const stack_next = scratch + 3 * nn;
  std::fill(newidx, newidx + nn, -1);
  size_t ordered = 0, depth = 0;
  stack_node[depth] = root.node, stack_next[depth++] = 0;
  while (depth > 0) {
    const int64_t at = stack_node[depth - 1];
    const Node& n = nodes_[at];
    int64_t next = -1;  // the first child not numbered yet
    if (n.kind == Kind::Vec) {
      if (stack_next[depth - 1]++ == 0 && newidx[n.child] < 0) next = n.child;
    } else if (n.kind == Kind::Seq) {
      int64_t k = stack_next[depth - 1];
      const int64_t* idx = newidx;
      if (facts_[at].uniform) {  // one node: its first entry says it all
        if (k == 0 && newidx[entry(n, 0).node] < 0) next = entry(n, 0).node;
        k = n.count;
      } else if (n.child >= 0) {
        const Entry* e = entries_.data() + n.child;
        for (int64_t known = -1; k < n.count; ++k) {  // known: a node numbered already
          const int64_t c = e[k].node;
          if (c == known) continue;
          if (idx[c] < 0) break;
          known = c;
        }
        if (k < n.count) next = e[k++].node;
      } else {
        const Shared& sh = shared_[~n.child];
        const int64_t* map = maps_.data() + sh.map;
        while (k < n.count && idx[map[sh.entries[k].node]] >= 0) ++k;
        if (k < n.count) next = map[sh.entries[k++].node];
      }
      stack_next[depth - 1] = k;
    }
    if (next >= 0) {
      stack_node[depth] = next, stack_next[depth++] = 0;
      continue;
    }
    if (newidx[at] < 0) {
      newidx[at] = static_cast<int64_t>(ordered);
      order[ordered++] = at;
    }
    --depth;
  }
  // Entries follow their tables in node order, so the root's table (a Seq root is numbered
  // last) goes at the end, after the nl entries of the other tables. With no other table (an
  // index list, a struct of index lists flattened into one) the root's table stays where it is
  // and is renumbered in place; otherwise every table is written once into arrays of the final
  // size (the other tables were gathered into a list first, which grew entry by entry, and the
  // root's was moved and then copied with the array's growth: LAMMPS's one shared table of
  // 1662 entries cost 5 copies of it). A shared table is copied from its source here, its prefix
  // sums recomputed from the sizes.
  const Node& r = nodes_[root.node];
  const int64_t keep = r.kind == Kind::Seq ? r.count : 0;
  size_t nl = 0;
  for (size_t i = 0; i < ordered; ++i)
    if (nodes_[order[i]].kind == Kind::Seq && order[i] != root.node) nl += static_cast<size_t>(nodes_[order[i]].count);
  // Writes table n's entries, renumbered, and their prefix sums at e and p.
  const auto write = [&](const Node& n, bool uniform, Entry* e, int64_t* p) {
    int64_t last = -1, now = -1;  // the last old node and its new number: tables are runs
    if (n.child >= 0) {
      const Entry* in = entries_.data() + n.child;
      if (p != prefix_.data() + n.child) std::memmove(p, prefix_.data() + n.child, n.count * sizeof(int64_t));
      if (e != in)
        for (int64_t k = 0; k < n.count; ++k) e[k].disp = in[k].disp;  // (moving down: never overtakes)
      // Run by run; a run whose node keeps its number is only stepped over (in place, the
      // entries of the first node, numbered 0 in both orders, are most of an index list). A
      // table of one node is one run, known without looking.
      const Entry* end = in + n.count;
      if (uniform) {
        now = newidx[in[0].node];
        if (now != in[0].node || e != in)
          for (Entry* o = e; o != e + n.count; ++o) o->node = now;
        return;
      }
      for (const Entry* q = in; q != end;) {
        last = q->node, now = newidx[last];
        const Entry* run = q;
        while (q != end && q->node == last) ++q;
        if (now != last || e != in)
          for (Entry* o = e + (run - in); o != e + (q - in); ++o) o->node = now;
      }
      return;
    }
    const Shared& sh = shared_[~n.child];
    const int64_t* map = maps_.data() + sh.map;
    int64_t sum = 0, size = 0;
    for (int64_t k = 0; k < n.count; ++k) {
      const Entry& in = sh.entries[k];
      if (in.node != last) last = in.node, now = newidx[map[last]], size = nodes_[map[last]].size;
      e[k].disp = in.disp;
      e[k].node = now;
      p[k] = sum;
      sum += size;
    }
  };
  if (nl == 0 && keep > 0 && r.child >= 0) {
    // In place (write() moves down, entry by entry, so it never overtakes what it reads); a
    // table at the start whose nodes keep their numbers is not written at all (an index list
    // of one block imported first, as a struct of index lists has it).
    write(r, facts_[root.node].uniform, entries_.data(), prefix_.data());
    entries_.resize(keep);  // (tables made and dropped while building may follow it)
    prefix_.resize(keep);
  } else {
    std::vector<Entry> e = Recycled<Entry>::take(nl + keep);
    std::vector<int64_t> p = Recycled<int64_t>::take(nl + keep);
    e.resize(nl + keep);
    p.resize(nl + keep);
    size_t at = 0;
    for (size_t i = 0; i < ordered; ++i) {
      const int64_t old = order[i];
      const Node& n = nodes_[old];
      if (n.kind != Kind::Seq || old == root.node) continue;
      write(n, facts_[old].uniform, e.data() + at, p.data() + at);
      at += static_cast<size_t>(n.count);
    }
    if (keep > 0) write(r, facts_[root.node].uniform, e.data() + nl, p.data() + nl);
    entries_.swap(e);
    prefix_.swap(p);
    Recycled<Entry>::give(e);
    Recycled<int64_t>::give(p);
  }
  if (entries_.capacity() > 2 * entries_.size() + 64) {  // imports that were flattened away
    std::vector<Entry> e(entries_.begin(), entries_.end());
    std::vector<int64_t> p(prefix_.begin(), prefix_.end());
    entries_.swap(e);
    prefix_.swap(p);
    Recycled<Entry>::give(e);
    Recycled<int64_t>::give(p);
  }
  out->nodes.reserve(ordered);
  out->facts.reserve(ordered);
  int64_t at = 0;  // the next table's first entry
  for (size_t i = 0; i < ordered; ++i) {
    const int64_t old = order[i];
    Node m = nodes_[old];
    if (m.kind == Kind::Vec) m.child = newidx[m.child];
    if (m.kind == Kind::Seq) {
      m.child = at;
      at += m.count;
    }
    out->nodes.push_back(m);
    out->facts.push_back(facts_[old]);
  }
  out->entries = std::move(entries_);
  out->prefix = std::move(prefix_);
  out->root = newidx[root.node];
  out->disp = root.disp;
  return out;
}

}  // namespace ddt
