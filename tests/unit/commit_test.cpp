// Commit of index lists (builder.cpp's cost section): the canonicalisation passes skip the
// settled items of a list and work on windows around the others. These tests build the same
// random lists with windowed passes and with passes over the whole list, and require identical
// layouts: the windows are an optimisation, never a change of canonical form.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "ddtkit.h"

#include "layout/builder.hpp"
#include "layout/codec.hpp"

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

namespace {

// A child layout from a random list (its tables settled or not, by chance).
std::shared_ptr<const ddt::Layout> child_layout(std::mt19937_64& rng, bool with_runs) {
  ddt::Builder b;
  std::vector<ddt::Placed> ps;
  for (const Item& it : random_list(rng, with_runs)) ps.push_back(make(b, it));
  return b.finish(b.seq(ps));
}

// The layout read back from its encoding: the same nodes and entries, without the builder's
// facts (layout.hpp), which an import then recomputes.
std::shared_ptr<const ddt::Layout> reread(const ddt::Layout& L) {
  std::string bytes;
  ddt::encode_layout(L, bytes);
  auto out = std::make_shared<ddt::Layout>();
  ddt::Reader r(reinterpret_cast<const uint8_t*>(bytes.data()), static_cast<int64_t>(bytes.size()));
  EXPECT_EQ(ddt::decode_layout(r, *out), DDT_SUCCESS);
  EXPECT_TRUE(out->facts.empty());
  return out;
}

}  // namespace

// Tables imported from finished layouts and inlined into a parent's list (a struct of index
// lists): the parent's scan looks again only near the ends of the settled tables it inlined, and
// the child's facts replace reading its tables. Placed so that members touch, continue each
// other's runs, repeat, and sit near the int64 limits, the result must be that of passes that
// scan every item exactly, every time.
TEST(Commit, InlinedSettledTablesMatchWholeListPasses) {
  std::mt19937_64 rng(5);
  auto pick = [&](int64_t n) { return static_cast<int64_t>(rng() % static_cast<uint64_t>(n)); };
  for (int t = 0; t < 3000; ++t) {
    SCOPED_TRACE(t);
    std::vector<std::shared_ptr<const ddt::Layout>> kids;
    for (int64_t k = 0, m = 1 + pick(3); k < m; ++k) {
      auto L = child_layout(rng, pick(2) == 0);
      if (L->root < 0) continue;
      kids.push_back(pick(4) == 0 ? reread(*L) : L);
    }
    if (kids.empty()) continue;
    ddt::Builder windowed(true), whole(false);
    std::vector<ddt::Placed> pw, ph;
    int64_t disp = pick(1000) - 500;
    if (pick(3) == 0) disp += (int64_t{1} << 61) - 4096;  // tables on both sides of the limit of clean ones
    if (pick(16) == 0) disp = INT64_MAX - 20000 + pick(10000);  // and past int64: both report the overflow
    for (int64_t k = 0, m = 1 + pick(6); k < m; ++k) {
      const auto& L = kids[pick(static_cast<int64_t>(kids.size()))];
      const ddt::Node& r = L->nodes[L->root];
      int64_t at, next;  // the member's position (the builder's shift does not check), the next one's
      const int64_t step = pick(4) == 0 ? r.hi : (pick(2) ? r.hi + 4 * pick(3) : r.hi - r.lo + 1 + pick(200));
      if (__builtin_add_overflow(disp, L->disp, &at) || __builtin_add_overflow(disp, step, &next)) break;
      ddt::Placed a = windowed.import(*L), b = whole.import(*L);
      pw.push_back(windowed.shift(a, disp)), ph.push_back(whole.shift(b, disp));
      disp = next;  // touching this member, one of its entries' steps on, or apart
      if (pick(8) == 0 && disp < INT64_MAX - 8) {  // a single block between members
        pw.push_back(windowed.shift(windowed.block(4), disp)), ph.push_back(whole.shift(whole.block(4), disp));
        disp += 4 + pick(2) * 4;
      }
    }
    ddt::Placed rw = windowed.seq(pw), rh = whole.seq(ph);
    ASSERT_EQ(windowed.error(), whole.error());
    if (windowed.error()) continue;
    expect_same(*windowed.finish(rw), *whole.finish(rh));
    if (HasFatalFailure()) return;
  }
}

// A layout and its copy read back by deserialize import as one node: the structural hash kept
// in a built layout's facts is the one an import computes for a layout without them.
TEST(Commit, ReadBackLayoutImportsAsItsSource) {
  std::mt19937_64 rng(9);
  for (int t = 0; t < 500; ++t) {
    auto L = child_layout(rng, true);
    if (L->root < 0) continue;
    auto R = reread(*L);
    ddt::Builder b;
    const ddt::Placed x = b.import(*L), y = b.import(*R);
    ASSERT_EQ(x.node, y.node) << t;
    ASSERT_EQ(x.disp, y.disp) << t;
  }
}
