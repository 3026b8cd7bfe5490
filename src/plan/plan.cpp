// Choosing the plan of a layout (the cost model is in plan.hpp), and keeping it with the type.
#include "plan/plan.hpp"

#include <climits>
#include <new>
#include <vector>

#include "type/type.hpp"

namespace ddt {

namespace {

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

// The shuffle kernel for tiny blocks at a short stride (see Plan::shuffle_stride).
void shuffle(Plan& p);

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
    q.kernel_width = kernel_width(q.width);
    shuffle(q);
  }
  p.parts = std::move(parts);
  p.part_offset.assign(L.prefix.begin() + x.child, L.prefix.begin() + x.child + x.count);
  return true;
}

// A root table longer than a Rows table, as segments (Plan::segments). Chosen when at least
// half its entries are blocks: a table of sub-tables is as well served by the walk.
bool list(const Layout& L, Plan& p) {
  const Node& x = L.nodes[L.root];
  if (x.kind != Kind::Seq || x.count <= kRowsMax) return false;
  const Entry* e = L.entries.data() + x.child;
  // One pass: segments and the 32-bit displacements together (commit pays for this pass: tables
  // of 10^4 entries are DDTBench's largest).
  p.list.resize(x.count);
  int32_t* out = p.list.data();
  int64_t lo = INT64_MAX, hi = INT64_MIN, blocks = 0;
  int64_t run_node = -1, run_count = 0;  // the block run being counted (-1: none)
  const auto close_run = [&] {
    if (run_node >= 0) p.segments.back().count = run_count;
  };
  for (int64_t j = 0; j < x.count; ++j) {
    const int64_t d = e[j].disp, node = e[j].node;
    lo = std::min(lo, d), hi = std::max(hi, d);
    out[j] = static_cast<int32_t>(d);  // rewritten below if some displacement does not fit
    if (node == run_node) {  // the common case: the run of one block goes on
      ++run_count;
      continue;
    }
    close_run();
    const Node& n = L.nodes[node];
    const bool block = n.kind == Kind::Block;
    blocks += run_count;
    run_node = block ? node : -1, run_count = block ? 1 : 0;
    p.segments.push_back({j, 1, block ? n.size : 0, node});
  }
  close_run();
  blocks += run_count;
  const bool fits = lo >= INT32_MIN && hi <= INT32_MAX;
  if (2 * blocks < x.count) {
    p.segments.clear();
    p.list.clear();
    return false;
  }
  if (!fits) {
    p.list.clear();
    p.list64.resize(x.count);
    for (int64_t j = 0; j < x.count; ++j) p.list64[j] = e[j].disp;
  }
  if (p.uniform_list()) p.width = p.segments[0].width;
  return true;
}

// Blocks and ascending order of the whole layout, bottom-up over the node array (children come
// before parents): O(nodes + entries), never O(blocks).
void profile(const Layout& L, Plan& p) {
  std::vector<int64_t> blocks(L.nodes.size());
  std::vector<char> up(L.nodes.size());
  const auto times = [](int64_t a, int64_t b) {
    int64_t r;
    return __builtin_mul_overflow(a, b, &r) ? INT64_MAX : r;
  };
  for (size_t i = 0; i < L.nodes.size(); ++i) {
    const Node& n = L.nodes[i];
    if (n.kind == Kind::Block) {
      blocks[i] = 1, up[i] = 1;
    } else if (n.kind == Kind::Vec) {
      const Node& c = L.nodes[n.child];
      blocks[i] = times(n.count, blocks[n.child]);
      up[i] = up[n.child] && n.stride >= c.hi - c.lo;  // copies follow each other, apart
    } else {
      int64_t b = 0, end = INT64_MIN;
      bool a = true;
      for (int64_t e = n.child; e < n.child + n.count; ++e) {
        const Entry& en = L.entries[e];
        const Node& c = L.nodes[en.node];
        b = b > INT64_MAX - blocks[en.node] ? INT64_MAX : b + blocks[en.node];
        a = a && up[en.node] && en.disp + c.lo >= end;  // displacements are representable (builder)
        end = en.disp + c.hi;
      }
      blocks[i] = b, up[i] = a;
    }
  }
  p.blocks = blocks[L.root];
  p.ascending = up[L.root];
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

void drop(const void* p) { delete static_cast<const Plan*>(p); }

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
  profile(L, p);
  if (nest(L, L.root, p)) {
    p.shape = Shape::Nest;
    p.kernel_width = kernel_width(p.width);
    shuffle(p);
  } else if (rows(L, p)) {
    p.shape = Shape::Rows;
  } else if (parts(L, p)) {
    p.shape = Shape::Parts;
  } else if (list(L, p)) {
    p.shape = Shape::List;
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
