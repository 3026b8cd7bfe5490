// Choosing the plan of a layout (the cost model is in plan.hpp), and keeping it with the type.
#include "plan/plan.hpp"

#include <climits>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

#include "type/type.hpp"

namespace ddt {

namespace {

// The end of the run of entries naming the same node as e[j], among e[0, count): a table the
// builder knows to be of one node (uniform) is one run, found without reading it.
int64_t run_end(const Entry* e, int64_t j, int64_t count, bool uniform) {
  if (uniform) return count;
  const int64_t node = e[j].node;
  int64_t k = j + 1;
  while (k != count && e[k].node == node) ++k;
  return k;
}

// The layout's node as a run (layout.hpp's as_run over the entry array).
bool as_run(const Layout& L, const Node& x, int64_t& n, int64_t& stride, int64_t& child) {
  return ddt::as_run(x, [&](int64_t i) { return L.entries[x.child + i]; }, n, stride, child);
}

// The node as a nest: runs down to a block, at most kMaxNest of them. Dimensions come out
// outermost first and are stored innermost first.
bool nest(const Layout& L, int64_t node, Plan& p) {
  int64_t n[kMaxNest], s[kMaxNest];
  int d = 0;
  for (;;) {
    const Node& x = L.nodes[node];
    if (x.kind == Kind::Block) {
      p.width = x.size;
      break;
    }
    if (d == kMaxNest || !as_run(L, x, n[d], s[d], node)) return false;
    ++d;
  }
  p.dims = d;
  for (int j = 0; j < d; ++j) p.n[j] = n[d - 1 - j], p.s[j] = s[d - 1 - j];
  p.level_size[0] = p.width;
  for (int j = 0; j < d; ++j) p.level_size[j + 1] = p.level_size[j] * p.n[j];
  return true;
}

bool rows(const Layout& L, Plan& p) {
  int64_t table = L.root;
  as_run(L, L.nodes[L.root], p.row_n, p.row_stride, table);  // a VEC of the table, or the table
  const Node& x = L.nodes[table];
  const auto no = [&] {
    p.row_n = 1, p.row_stride = 0;
    return false;
  };
  if (!short_block_table(L, x, p.rdisp, p.rwidth)) return no();
  p.rows = static_cast<int>(x.count);
  if (p.row_n == 1) p.row_stride = p.extent;  // the table is the root: rows at the extent
  return true;
}

// The kernel choices of a Nest plan whose dimensions, width, size and extent are set: its fixed
// width, the shuffle kernel, and whether a whole element runs as a plain loop nest.
void kernels(Plan& p);

// A short root table of nests (see Shape::Parts). A table of blocks alone is a Rows plan,
// tried first; a longer table is a List or the walk.
bool parts(const Layout& L, Plan& p) {
  const Node& x = L.nodes[L.root];
  if (x.kind != Kind::Seq || x.count > kRowsMax) return false;
  std::vector<Plan> parts(x.count);
  for (int64_t j = 0; j < x.count; ++j) {
    const Entry& e = L.entries[x.child + j];
    const Node& c = L.nodes[e.node];
    Plan& q = parts[j];
    if (!nest(L, e.node, q)) return false;
    q.shape = Shape::Nest;
    q.disp = e.disp;
    q.size = c.size;
    q.extent = c.hi - c.lo;  // called for one element at a time: read only by shuffle() below
    kernels(q);
  }
  p.parts = std::move(parts);
  p.part_offset.assign(L.prefix.begin() + x.child, L.prefix.begin() + x.child + x.count);
  return true;
}

// Blocks and ascending order of every node, bottom-up over the node array (children come before
// parents): O(nodes + entries), never O(blocks). Block counts saturate at INT64_MAX.
struct Profile {
  std::vector<int64_t> blocks;
  std::vector<char> up;
  explicit Profile(size_t nodes) : blocks(nodes), up(nodes) {}
};

int64_t times(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_mul_overflow(a, b, &r) ? INT64_MAX : r;
}
int64_t plus(int64_t a, int64_t b) { return a > INT64_MAX - b ? INT64_MAX : a + b; }

void profile_node(const Layout& L, Profile& pr, size_t i) {
  const Node& n = L.nodes[i];
  if (n.kind == Kind::Block) {
    pr.blocks[i] = 1, pr.up[i] = 1;
  } else if (n.kind == Kind::Vec) {
    const Node& c = L.nodes[n.child];
    pr.blocks[i] = times(n.count, pr.blocks[n.child]);
    pr.up[i] = pr.up[n.child] && n.stride >= c.hi - c.lo;  // copies follow each other, apart
  } else {
    // What an entry adds depends on its node only, read once per run of one node (an index
    // list is one run; read per entry, this loop cost 20 instructions per entry at commit).
    int64_t b = 0, end = INT64_MIN;
    bool a = true;
    const Entry* en = L.entries.data() + n.child;
    const bool uniform = L.facts.size() == L.nodes.size() && L.facts[i].uniform;
    for (int64_t e = 0; e < n.count;) {
      const int64_t node = en[e].node, lo = L.nodes[node].lo, hi = L.nodes[node].hi;
      const int64_t f = run_end(en, e, n.count, uniform);  // the run [e, f) of this node
      b = plus(b, times(f - e, pr.blocks[node]));
      a &= pr.up[node] != 0;
      for (; e < f; ++e) {
        a &= en[e].disp + lo >= end;  // displacements are representable (builder)
        end = en[e].disp + hi;
      }
    }
    pr.blocks[i] = b, pr.up[i] = a;
  }
}

// An entry of a List whose node is not a block but a small tree of blocks (kExpandMax blocks or
// fewer) is listed block by block, as if the table held them: LAMMPS's per-atom arrays of one
// spacing canonicalise to a vector of an index list (three 8-byte tables at a constant distance)
// beside the positions' list, and that entry went to the table walk, 16-byte entries and a node
// test per block (22 instructions per block under callgrind, against 2.6 in the list). The list
// grows by the tree's blocks: four bytes each, and no larger than kListMax.
constexpr int64_t kExpandMax = int64_t{1} << 16, kListMax = int64_t{1} << 22;
bool small_tree(const Profile& pr, int64_t node) { return pr.blocks[node] <= kExpandMax; }

// Appends the blocks of node at displacement d, in stream order, to the list being built.
template <class D>
struct Lister {
  const Layout& L;
  std::vector<D>& out;
  std::vector<Plan::Segment>& segments;
  int64_t lo = INT64_MAX, hi = INT64_MIN;

  // k entries at d + en[i].disp, every one block `node` of `width` bytes; equal widths share a
  // segment. One loop that tests nothing else per block (at commit: tables of 10^4 entries).
  void run(const Entry* en, int64_t k, int64_t d, int64_t width, int64_t node) {
    if (segments.empty() || segments.back().width != width)
      segments.push_back({static_cast<int64_t>(out.size()), 0, width, node});
    segments.back().count += k;
    const size_t first = out.size();
    out.resize(first + static_cast<size_t>(k));
    D* o = out.data() + first;
    int64_t l = lo, h = hi;  // locals: as members they were stored and reloaded every block
    for (int64_t i = 0; i < k; ++i) {
      const int64_t at = d + en[i].disp;  // representable (builder)
      l = std::min(l, at), h = std::max(h, at);
      o[i] = static_cast<D>(at);  // too narrow for some: lo/hi tell, and the caller redoes it wide
    }
    lo = l, hi = h;
  }
  // The blocks of node placed at d, in stream order.
  void tree(int64_t node, int64_t d) {
    const Node& n = L.nodes[node];
    if (n.kind == Kind::Block) {
      const Entry one{0, node};
      return run(&one, 1, d, n.size, node);
    }
    if (n.kind == Kind::Vec) {
      for (int64_t i = 0; i < n.count; ++i) tree(n.child, d + i * n.stride);
      return;
    }
    const Entry* en = L.entries.data() + n.child;
    const bool uniform = L.facts.size() == L.nodes.size() && L.facts[node].uniform;
    for (int64_t j = 0; j < n.count;) {
      const Node& c = L.nodes[en[j].node];
      if (c.kind != Kind::Block) {
        tree(en[j].node, d + en[j].disp);
        ++j;
        continue;
      }
      const int64_t k = run_end(en, j, n.count, uniform);
      run(en + j, k - j, d, c.size, en[j].node);
      j = k;
    }
  }
  // The root table: runs of one block as one loop that tests nothing else, small trees expanded,
  // any other entry a segment of its own (width 0: walked).
  void root(const Entry* e, int64_t count, bool uniform, const Profile& pr, bool expand) {
    for (int64_t j = 0; j < count;) {
      const int64_t node = e[j].node;
      const Node& n = L.nodes[node];
      if (n.kind == Kind::Block) {
        const int64_t k = run_end(e, j, count, uniform);
        run(e + j, k - j, 0, n.size, node);
        j = k;
        continue;
      }
      if (expand && small_tree(pr, node)) {
        tree(node, e[j].disp);
      } else {
        segments.push_back({static_cast<int64_t>(out.size()), 1, 0, node});
        lo = std::min(lo, e[j].disp), hi = std::max(hi, e[j].disp);
        out.push_back(static_cast<D>(e[j].disp));
      }
      ++j;
    }
  }
};

// A root table longer than a Rows table, as segments (Plan::segments). Chosen when at least
// half its listed entries are blocks: a table of sub-tables is as well served by the walk. Two
// passes over the root: its profile (Plan::blocks, Plan::ascending; the other nodes' are in pr)
// with the bounds and the length of the list, then the list itself, whose length and width of
// displacements the first pass decides. (One pass did both before trees were expanded: 15
// instructions per entry of SPECFEM3D_cm c=1 under callgrind, against 40 for the passes before
// it; commit stays within its target, bench/suite_commit.cpp.)
bool list(const Layout& L, const Profile& pr, Plan& p) {
  const Node& x = L.nodes[L.root];
  const Entry* e = L.entries.data() + x.child;
  const bool uniform = L.facts.size() == L.nodes.size() && L.facts[L.root].uniform;
  // The root's profile, as profile_node() has it.
  int64_t root_blocks = 0, end = INT64_MIN, listed = 0;
  int64_t lowest = INT64_MAX, highest = INT64_MIN;  // every listed displacement lies in [lowest, highest]
  bool ascending = true;
  for (int64_t j = 0; j < x.count;) {
    const int64_t node = e[j].node;
    const Node& n = L.nodes[node];
    const int64_t k = n.kind == Kind::Block ? run_end(e, j, x.count, uniform) : j + 1;
    root_blocks = plus(root_blocks, times(k - j, pr.blocks[node]));
    listed = plus(listed, n.kind == Kind::Block ? k - j : small_tree(pr, node) ? pr.blocks[node] : 1);
    ascending &= pr.up[node] != 0;
    for (; j < k; ++j) {
      ascending &= e[j].disp + n.lo >= end;  // displacements are representable (builder)
      end = e[j].disp + n.hi;
      lowest = std::min(lowest, e[j].disp + n.lo), highest = std::max(highest, end);
    }
  }
  p.blocks = root_blocks;
  p.ascending = ascending;
  const bool expand = listed <= std::max(kListMax, x.count);
  // One pass for segments and 32-bit displacements (commit pays for it: tables of 10^4 entries
  // are DDTBench's largest); again with 64-bit ones where some displacement does not fit.
  // Applications' index lists fit 32 bits; absolute addresses (MPI_BOTTOM types, as LAMMPS's)
  // do not, and where the bounds cannot tell, the narrow pass finds out and the wide one redoes it.
  bool narrow = lowest >= INT32_MIN && highest <= INT32_MAX;
  if (narrow) {
    p.list = Recycled<int32_t>::take(expand ? listed : x.count);  // (layout/recycle.hpp; given back by drop())
    Lister<int32_t> l{L, p.list, p.segments};
    l.root(e, x.count, uniform, pr, expand);
    if (l.lo < INT32_MIN || l.hi > INT32_MAX) narrow = false, p.list.clear(), p.segments.clear();
  }
  if (!narrow) {
    p.list64.reserve(expand ? listed : x.count);
    Lister<int64_t> l{L, p.list64, p.segments};
    l.root(e, x.count, uniform, pr, expand);
  }
  const int64_t n = static_cast<int64_t>(p.list.size() + p.list64.size());
  int64_t blocks = 0;
  for (const Plan::Segment& g : p.segments) blocks += g.width > 0 ? g.count : 0;
  if (2 * blocks < n) {
    p.segments.clear();
    p.list.clear();
    p.list64.clear();
    return false;
  }
  p.blocks_only = blocks == n;
  if (p.uniform_list()) p.width = p.segments[0].width;
  return true;
}

// The shuffle kernel for tiny blocks at a short stride (see Plan::shuffle_stride).
void shuffle(Plan& p) {
  const int64_t w = p.width, s = p.dims > 0 ? p.s[0] : p.extent;
  if (w >= s || s > 8 || w > 4) return;
  const int64_t m = 16 / s;
  for (int64_t j = 0; j < 16; ++j) p.shuffle_mask[j] = j < m * w ? static_cast<uint8_t>((j / w) * s + j % w) : 0x80;
  p.shuffle_stride = s;
  p.shuffle_blocks = static_cast<int>(m);
}

// Whether this CPU runs the permute kernels (cpu/permute_avx512.hpp): AVX-512 BW and VBMI, with
// the OS saving the registers (GCC's test reads XCR0). DDTKIT_AVX512=0 turns them off, for tests
// of the kernels the other CPUs run, and to compare.
bool permute_cpu() {
#if defined(__x86_64__)
  static const bool yes = [] {
    const char* e = std::getenv("DDTKIT_AVX512");
    if (e && std::strcmp(e, "0") == 0) return false;
    return __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vbmi");
  }();
  return yes;
#else
  return false;
#endif
}

// The permute kernel for tiny blocks at a short stride (see Plan::permute_stride); false where
// it is not chosen. Measured (probe: ddt_pack and ddt_unpack of one element of a vector of bytes,
// fraction of memcpy of the payload, medians of 201 calls (15 from 2 MiB), two runs of each
// build, DDTKIT_AVX512=0 -> this kernel):
//   pack, in L1-L2 (4-256 KiB): w 1 s 2 0.27-0.59 -> 0.63-0.92, w 1 s 3 0.14-0.39 -> 0.46-0.71,
//     w 4 s 8 0.30-0.63 -> 0.72-1.42, w 4 s 12 0.18-0.37 -> 0.46-0.66, w 8 s 16 0.35-0.62 ->
//     0.70-0.83, w 12 s 24 0.40-0.56 -> 0.60-0.92; w 8 s 24 level (0.29-0.71 -> 0.47-0.72);
//   pack, 2 MiB (L3): w 1 s 3 0.27 -> 0.45-0.51, w 4 s 8 0.61 -> 0.66-0.73, w 8 s 16 0.61 ->
//     0.64-0.94, w 8 s 24 level (0.49); 32 MiB (memory): level or behind (w 1 s 2 0.67-0.72 ->
//     0.62-0.64, w 12 s 24 0.66-0.74 -> 0.56-0.60), hence kPermuteGatherMaxBytes (plan.hpp);
//   unpack (no SIMD kernel before: a store per block): w 1 s 2 0.05-0.32 -> 0.56-0.73 at every
//     size, w 2 s 4 0.10-0.62 -> 0.48-0.80, w 4 s 8 0.20-0.70 -> 0.56-0.89, w 8 s 16 0.38-0.77 ->
//     0.55-0.91 (at 32 MiB 0.66-0.77 -> 0.63-0.78), w 8 s 24 0.35-0.58 -> 0.37-0.53.
// ddt_copy into the same layout (twin.hpp's copy under the unpack's block mask), same probe:
//   w 1 s 2 0.04-0.25 -> 0.39-0.63, w 2 s 4 0.09-0.57 -> 0.42-0.63, w 4 s 8 0.17-0.28 -> 0.43-0.63
//     (at 32 MiB 0.58-0.62 -> 0.42-0.58), w 4 s 12 0.17-0.22 -> 0.26-0.36, w 6 s 18 0.14-0.26 ->
//     0.25-0.35, w 8 s 16 0.30-0.52 -> 0.42-0.59, w 12 s 24 0.26-0.54 -> 0.44-0.67; but w 8 s 24
//     0.27-0.49 -> 0.24-0.33 and w 12 s 36 0.28-0.40 -> 0.24-0.35 (3 and 2 blocks a step), as
//     their unpacks (w 8 s 24 at 32 KiB 0.57-0.75 -> 0.50-0.51; w 12 s 36 at 32 MiB 0.41-0.44 ->
//     0.35-0.39), while w 12 s 24 (3 blocks of 12 B, each two plain moves) gained.
// Width 16 lost in a probe of the bare loops (a pack at s 32, 2 MiB: 0.69 -> 0.59; 16-byte moves
// already move a block in one load and store), and so did packs of fewer blocks a step (w 8 s
// 40, w 4 s 20: level): hence at most 12 bytes, at least 4 blocks a pack step, and 4 an unpack
// or copy step (3 for blocks of more than 8 bytes).
constexpr int64_t kPermuteMaxWidth = 12, kPermuteMaxStride = 64;
bool permute(Plan& p) {
  const int64_t w = p.width, s = p.dims > 0 ? p.s[0] : p.extent;
  if (w <= 0 || w > kPermuteMaxWidth || w >= s || s > kPermuteMaxStride || !permute_cpu()) return false;
  const int64_t gather = std::min<int64_t>(64 / w, (128 - w) / s + 1), scatter = (64 - w) / s + 1;
  const bool pack = gather >= 4, unpack = scatter >= 4 || (scatter == 3 && w > 8);
  if (!pack) return false;  // (where a pack step holds fewer than 4 blocks, an unpack step holds fewer than 3)
  for (int64_t j = 0; j < 64; ++j)
    p.permute_index[1][j] = static_cast<uint8_t>(j < gather * w ? (j / w) * s + j % w : 0);
  uint64_t mask = 0;
  for (int64_t b = 0; unpack && b < scatter; ++b)
    for (int64_t t = 0; t < w; ++t) {
      p.permute_index[0][b * s + t] = static_cast<uint8_t>(b * w + t);
      mask |= uint64_t{1} << (b * s + t);
    }
  p.permute_stride = s;
  p.permute_blocks[0] = unpack ? static_cast<int>(scatter) : 0;
  p.permute_blocks[1] = static_cast<int>(gather);
  p.permute_mask = mask;
  return true;
}

void kernels(Plan& p) {
  p.kernel_width = kernel_width(p.width);
  permute(p);
  shuffle(p);
  if (transposed_grid(p.dims, p.width, p.n, p.s)) p.tile = p.width;
  for (int gather = 0; gather < 2; ++gather) {
    const bool plain = p.dims == 0 ? p.size < kStreamBytes
                                   : p.dims <= 2 && !(gather && p.shuffle_stride && !permute_gather(p, p.size)) &&
                                         !stream_stores(p.size, p.width, gather) &&
                                         !p.tile;
    const bool permuted = p.permute_blocks[gather] && p.dims >= 1 && p.n[0] >= kPermuteMinBlocks &&
                          (!gather || permute_gather(p, p.size));
    p.plain[gather] = static_cast<int8_t>(!plain ? -1 : permuted ? kPlainPermute : plain_index(p.kernel_width, p.dims));
  }
}

void drop(const void* p) {
  Plan* q = const_cast<Plan*>(static_cast<const Plan*>(p));  // the type's own, dying with it
  Recycled<int32_t>::give(q->list);
  Recycled<int64_t>::give(q->list64);
  delete q;
}

}  // namespace

Plan make_plan(const Layout& L, int64_t extent) {
  Plan p;
  p.disp = L.disp;
  p.size = L.size();
  p.extent = extent;
  if (L.root < 0) {
    p.shape = Shape::Empty;
    return p;
  }
  // The root is the last node. A root table longer than a Rows table can only be a List or the
  // walk (nest, rows and parts take short tables): list() profiles it in its own pass.
  Profile pr(L.nodes.size());
  const Node& r = L.nodes[L.root];
  const bool long_table = r.kind == Kind::Seq && r.count > kRowsMax;
  for (size_t i = 0; i + (long_table ? 1 : 0) < L.nodes.size(); ++i) profile_node(L, pr, i);
  if (long_table) {
    if (list(L, pr, p)) {
      p.shape = Shape::List;
      if (p.blocks_only) p.plain[0] = p.plain[1] = static_cast<int8_t>(kPlainList);
    }
    return p;
  }
  p.blocks = pr.blocks[L.root];
  p.ascending = pr.up[L.root];
  if (nest(L, L.root, p)) {
    p.shape = Shape::Nest;
    kernels(p);
  } else if (rows(L, p)) {
    p.shape = Shape::Rows;
  } else if (parts(L, p)) {
    p.shape = Shape::Parts;
    for (int gather = 0; gather < 2; ++gather) {
      bool plain = true;
      for (const Plan& q : p.parts) plain = plain && q.plain[gather] >= 0;
      if (plain) p.plain[gather] = static_cast<int8_t>(kPlainParts);
    }
  }
  return p;
}

const Plan& build_plan(ddt_type_s* t) {
  if (const void* p = t->plan.load(std::memory_order_acquire)) return *static_cast<const Plan*>(p);
  const Plan* mine = new Plan(make_plan(*t->layout, t->extent()));  // bad_alloc: the caller's guard
  const void* expected = nullptr;
  t->drop_plan.store(drop, std::memory_order_relaxed);  // the same function whoever wins
  if (!t->plan.compare_exchange_strong(expected, mine, std::memory_order_acq_rel)) {
    delete mine;
    return *static_cast<const Plan*>(expected);
  }
  return *mine;
}

}  // namespace ddt
