// The plan layer: which shape each kind of layout gets, and that the executors' view of a nest
// with a count (NestShape) merges the element dimension exactly when elements continue it.
#include <gtest/gtest.h>

#include "cpu/nest.hpp"
#include "ddtkit.h"
#include "plan/plan.hpp"
#include "type/type.hpp"

namespace {

const ddt::Plan& planned(ddt_type t) {
  EXPECT_EQ(ddt_type_commit(t), DDT_SUCCESS);
  return ddt::plan_of(t);
}

}  // namespace

TEST(Plan, Shapes) {
  ddt_type contig, vec, face, deep, pair, table, empty;
  ASSERT_EQ(ddt_type_contiguous(10, DDT_DOUBLE, &contig), DDT_SUCCESS);
  ASSERT_EQ(ddt_type_vector(12, 5, 7, DDT_DOUBLE, &vec), DDT_SUCCESS);
  const int64_t sizes[3] = {20, 30, 40}, sub[3] = {4, 5, 6}, starts[3] = {1, 2, 3};
  ASSERT_EQ(ddt_type_subarray(3, sizes, sub, starts, DDT_ORDER_C, DDT_FLOAT, &face), DDT_SUCCESS);
  const int64_t bls[3] = {1, 2, 1}, displs[3] = {0, 3, 9};  // a short table of blocks
  ASSERT_EQ(ddt_type_indexed(3, bls, displs, DDT_INT, &table), DDT_SUCCESS);
  ddt_type t = vec;
  for (int i = 0; i < 5; ++i) {  // vectors of vectors: deeper than kMaxNest
    ddt_type next;
    ASSERT_EQ(ddt_type_hvector(3, 1, 100000 * (i + 1), t, &next), DDT_SUCCESS);
    if (t != vec) ddt_type_free(&t);
    t = next;
  }
  deep = t;
  ASSERT_EQ(ddt_type_hvector(2, 1, 1000, DDT_INT, &pair), DDT_SUCCESS);  // vec-2 makes a pair table
  ASSERT_EQ(ddt_type_contiguous(0, DDT_INT, &empty), DDT_SUCCESS);

  const ddt::Plan& c = planned(contig);
  EXPECT_EQ(c.shape, ddt::Shape::Nest);
  EXPECT_EQ(c.dims, 0);
  EXPECT_EQ(c.width, 80);
  const ddt::Plan& v = planned(vec);
  EXPECT_EQ(v.shape, ddt::Shape::Nest);
  EXPECT_EQ(v.dims, 1);
  EXPECT_EQ(v.n[0], 12);
  EXPECT_EQ(v.s[0], 56);
  EXPECT_EQ(v.width, 40);
  EXPECT_EQ(v.kernel_width, 40);
  const ddt::Plan& f = planned(face);
  EXPECT_EQ(f.shape, ddt::Shape::Nest);
  EXPECT_EQ(f.dims, 2);
  EXPECT_EQ(f.width, 24);
  EXPECT_EQ(f.n[0], 5);
  EXPECT_EQ(f.s[0], 160);
  EXPECT_EQ(f.n[1], 4);
  EXPECT_EQ(f.s[1], 4800);
  const ddt::Plan& p = planned(pair);
  EXPECT_EQ(p.shape, ddt::Shape::Nest);
  EXPECT_EQ(p.dims, 1);
  EXPECT_EQ(p.n[0], 2);
  EXPECT_EQ(planned(table).shape, ddt::Shape::Rows);
  EXPECT_EQ(planned(table).rows, 3);
  EXPECT_EQ(planned(deep).shape, ddt::Shape::Walk);
  EXPECT_EQ(planned(empty).shape, ddt::Shape::Empty);
  // A type deserialized (committed without ddt_type_commit) gets its plan at first use.
  int64_t need;
  ddt_type_serialize(face, nullptr, 0, &need);
  std::vector<char> bytes(need);
  ASSERT_EQ(ddt_type_serialize(face, bytes.data(), need, &need), DDT_SUCCESS);
  ddt_type back;
  ASSERT_EQ(ddt_type_deserialize(bytes.data(), need, &back), DDT_SUCCESS);
  EXPECT_EQ(back->plan.load(), nullptr);
  EXPECT_EQ(ddt::plan_of(back).dims, 2);
  for (ddt_type* x : {&contig, &vec, &face, &deep, &pair, &table, &empty, &back}) ddt_type_free(x);
}

TEST(Plan, CountMergesIntoTheNest) {
  ddt::Layout L;
  ddt::Plan p;
  p.shape = ddt::Shape::Nest;
  p.dims = 1;
  p.width = 8;
  p.n[0] = 4;
  p.s[0] = 16;
  p.extent = 64;  // elements continue the vector: one dimension of 4 * count
  ddt::NestShape a(p, 3);
  EXPECT_EQ(a.dims, 1);
  EXPECT_EQ(a.n[0], 12);
  EXPECT_EQ(a.size[1], 96);
  p.extent = 72;  // a gap between elements: a dimension of its own
  ddt::NestShape b(p, 3);
  EXPECT_EQ(b.dims, 2);
  EXPECT_EQ(b.n[1], 3);
  EXPECT_EQ(b.s[1], 72);
  EXPECT_EQ(b.size[2], 96);
  p.dims = 0;  // blocks: contiguous when the extent is the width
  p.extent = 8;
  ddt::NestShape c(p, 5);
  EXPECT_EQ(c.dims, 0);
  EXPECT_EQ(c.size[0], 40);
}
