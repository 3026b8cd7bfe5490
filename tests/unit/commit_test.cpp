// Commit of index lists (builder.cpp's cost section): the canonicalisation passes skip the
// settled items of a list and work on windows around the others. These tests build the same
// random lists with windowed passes and with passes over the whole list, and require identical
// layouts: the windows are an optimisation, never a change of canonical form.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "layout/builder.hpp"

namespace {

// One item of a list, as a recipe both builders can follow.
struct Item {
  int kind;                  // 0 block, 1 vec of a block, 2 table of blocks
  int64_t disp, len, n, s;   // len: block bytes; n, s: vec count and stride
  std::vector<std::pair<int64_t, int64_t>> table;  // kind 2: (disp, len) pairs
};

ddt::Placed make(ddt::Builder& b, const Item& it) {
  if (it.kind == 0) return b.shift(b.block(it.len), it.disp);
  if (it.kind == 1) return b.shift(b.vec(it.n, it.s, b.block(it.len)), it.disp);
  std::vector<ddt::Placed> ps;
  for (auto [d, l] : it.table) ps.push_back(b.shift(b.block(l), d));
  return b.shift(b.seq(ps), it.disp);
}

// Displacements that step by a few recurring deltas, so that touching blocks, runs, runs of
// runs and repeated patterns are frequent, next to irregular steps.
std::vector<Item> random_list(std::mt19937_64& rng, bool with_runs) {
  auto pick = [&](int64_t n) { return static_cast<int64_t>(rng() % static_cast<uint64_t>(n)); };
  const int64_t lens[] = {1, 2, 4, 8};
  const int64_t n = 1 + pick(pick(4) == 0 ? 400 : 60);
  std::vector<Item> items;
  int64_t disp = pick(100) - 50, delta = 8, len = 4;
  for (int64_t i = 0; i < n; ++i) {
    if (pick(2)) len = lens[pick(pick(3) == 0 ? 4 : 2)];  // else the same length again
    Item it{0, disp, len, 0, 0, {}};
    const int64_t r = with_runs ? pick(20) : 1;
    if (r == 0) {
      it.kind = 1, it.n = 3 + pick(3), it.s = it.len + pick(3) * 4;
    } else if (r == 1 && with_runs) {
      it.kind = 2;
      int64_t d = 0;
      for (int64_t k = 0, m = 2 + pick(5); k < m; ++k, d += 4 + pick(3) * 4) it.table.push_back({d, lens[pick(2)]});
    }
    items.push_back(it);
    if (it.kind == 1 && pick(2)) {  // singles that continue the run
      disp += it.n * it.s;
      delta = it.s;
      continue;
    }
    switch (pick(6)) {  // the next step: touching, the same as the last, or something else
      case 0: delta = it.len; break;
      case 1: case 2: break;
      case 3: delta = -16 + pick(40); break;
      default: delta = 4 * (1 + pick(6)); break;
    }
    disp += delta;
  }
  return items;
}

void expect_same(const ddt::Layout& a, const ddt::Layout& b) {
  ASSERT_EQ(a.root, b.root);
  ASSERT_EQ(a.disp, b.disp);
  ASSERT_EQ(a.nodes.size(), b.nodes.size());
  for (size_t i = 0; i < a.nodes.size(); ++i) {
    const ddt::Node &x = a.nodes[i], &y = b.nodes[i];
    ASSERT_TRUE(x.kind == y.kind && x.size == y.size && x.count == y.count && x.stride == y.stride &&
                x.child == y.child && x.lo == y.lo && x.hi == y.hi)
        << "node " << i;
  }
  ASSERT_EQ(a.entries.size(), b.entries.size());
  for (size_t i = 0; i < a.entries.size(); ++i) {
    ASSERT_EQ(a.entries[i].disp, b.entries[i].disp) << "entry " << i;
    ASSERT_EQ(a.entries[i].node, b.entries[i].node) << "entry " << i;
  }
  ASSERT_EQ(a.prefix, b.prefix);
}

void check(const std::vector<Item>& list) {
  ddt::Builder windowed(true), whole(false);
  std::vector<ddt::Placed> pw, ph;
  for (const Item& it : list) pw.push_back(make(windowed, it)), ph.push_back(make(whole, it));
  ddt::Placed rw = windowed.seq(pw), rh = whole.seq(ph);
  ASSERT_EQ(windowed.error(), whole.error());
  expect_same(*windowed.finish(rw), *whole.finish(rh));
}

}  // namespace

TEST(Commit, WindowedPassesMatchWholeListPassesOnBlocks) {
  std::mt19937_64 rng(7);
  for (int t = 0; t < 10000; ++t) {
    SCOPED_TRACE(t);
    check(random_list(rng, false));
    if (HasFatalFailure()) return;
  }
}

TEST(Commit, WindowedPassesMatchWholeListPassesOnRunsAndTables) {
  std::mt19937_64 rng(11);
  for (int t = 0; t < 10000; ++t) {
    SCOPED_TRACE(t);
    check(random_list(rng, true));
    if (HasFatalFailure()) return;
  }
}

// A table built from a list and the same table imported into a parent that flattens it: the
// parent's layout is the child's, and importing twice shares one node.
TEST(Commit, ImportedTableIsSharedAndFlattened) {
  std::mt19937_64 rng(3);
  for (int t = 0; t < 200; ++t) {
    std::vector<Item> list = random_list(rng, true);
    ddt::Builder child;
    std::vector<ddt::Placed> ps;
    for (const Item& it : list) ps.push_back(make(child, it));
    auto L = child.finish(child.seq(ps));
    if (L->root < 0) continue;
    ddt::Builder parent;
    ddt::Placed a = parent.import(*L), b = parent.import(*L);
    ASSERT_EQ(a.node, b.node);
    ddt::Placed one = parent.seq({a});
    expect_same(*parent.finish(one), *L);
  }
}
