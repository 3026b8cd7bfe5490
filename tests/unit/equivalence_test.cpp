// The equivalences of the canonical form (DESIGN.md, issue 2): every pair builds the same bytes
// through different constructors and must get one layout and one hash. The table printed at the
// end lists each equivalence with its hash.
#include <gtest/gtest.h>

#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "ddtbench.hpp"
#include "layout/layout.hpp"
#include "type/type.hpp"

namespace {

std::string hex(ddt_type t) {
  uint8_t h[16];
  EXPECT_EQ(ddt_type_hash(t, h), DDT_SUCCESS);
  char s[33];
  for (int i = 0; i < 16; ++i) std::snprintf(s + 2 * i, 3, "%02x", h[i]);
  return s;
}

struct Row {
  std::string name, hash;
};
std::vector<Row>& table() {
  static std::vector<Row> t;
  return t;
}

// All types must have one hash and equal layouts; records the row and frees them.
void same(const std::string& name, std::vector<ddt_type> ts) {
  SCOPED_TRACE(name);
  std::string h0 = hex(ts[0]);
  for (size_t i = 1; i < ts.size(); ++i) {
    EXPECT_EQ(hex(ts[i]), h0) << "construction " << i;
    const ddt::Layout &a = *ts[0]->layout, &b = *ts[i]->layout;
    EXPECT_EQ(a.nodes.size(), b.nodes.size());
    EXPECT_EQ(a.disp, b.disp);
  }
  table().push_back({name, h0});
  for (ddt_type& t : ts) ddt_type_free(&t);
}

ddt_type V(int64_t n, int64_t b, int64_t s, ddt_type o) { ddt_type t; ddt_type_vector(n, b, s, o, &t); return t; }
ddt_type HV(int64_t n, int64_t b, int64_t s, ddt_type o) { ddt_type t; ddt_type_hvector(n, b, s, o, &t); return t; }
ddt_type C(int64_t n, ddt_type o) { ddt_type t; ddt_type_contiguous(n, o, &t); return t; }
ddt_type R(ddt_type o, int64_t lb, int64_t e) { ddt_type t; ddt_type_resized(o, lb, e, &t); return t; }
// Frees the inner handle once the outer exists (derived types keep their children alive).
ddt_type own(ddt_type outer, ddt_type inner) { ddt_type_free(&inner); return outer; }

}  // namespace

TEST(Equivalence, ContiguousOfContiguous) {
  ddt_type c6 = C(6, DDT_INT);
  same("contiguous(4, contiguous(6, int)) = contiguous(24, int)", {own(C(4, c6), c6), C(24, DDT_INT)});
}

TEST(Equivalence, VectorWithStrideEqualToBlock) {
  same("vector(5, 3, 3, double) = contiguous(15, double)", {V(5, 3, 3, DDT_DOUBLE), C(15, DDT_DOUBLE)});
}

TEST(Equivalence, VectorAndHvector) {
  same("vector(7, 2, 5, int) = hvector(7, 2, 20 B, int)", {V(7, 2, 5, DDT_INT), HV(7, 2, 20, DDT_INT)});
}

TEST(Equivalence, TablesWithConstantStride) {
  std::vector<int64_t> bl(6, 3), d(6), db(6);
  for (int i = 0; i < 6; ++i) d[i] = 10 * i, db[i] = 80 * i;
  ddt_type a, b, c, e;
  ddt_type_indexed(6, bl.data(), d.data(), DDT_DOUBLE, &a);
  ddt_type_hindexed(6, bl.data(), db.data(), DDT_DOUBLE, &b);
  ddt_type_indexed_block(6, 3, d.data(), DDT_DOUBLE, &c);
  ddt_type_hindexed_block(6, 3, db.data(), DDT_DOUBLE, &e);
  same("indexed = hindexed = indexed_block = hindexed_block (stride 10, block 3) = vector(6, 3, 10, double)",
       {V(6, 3, 10, DDT_DOUBLE), a, b, c, e});
}

TEST(Equivalence, StructOfRegularIdenticalMembers) {
  ddt_type inner = V(3, 1, 4, DDT_FLOAT), s;
  int64_t bl[4] = {1, 1, 1, 1}, d[4] = {0, 100, 200, 300};
  ddt_type ts[4] = {inner, inner, inner, inner};
  ddt_type_struct(4, bl, d, ts, &s);
  ddt_type h = HV(4, 1, 100, inner);
  ddt_type_free(&inner);
  same("struct of 4 x vector(3,1,4,float) at 0,100,200,300 = hvector(4, 1, 100 B, same)", {h, s});
}

TEST(Equivalence, FlatTableOfTwoLevelPattern) {
  // 3 groups of 3 ints, 10 ints apart inside a group, groups 100 ints apart, listed flat.
  std::vector<int64_t> bl(9, 1), d;
  for (int g = 0; g < 3; ++g)
    for (int i = 0; i < 3; ++i) d.push_back(100 * g + 10 * i);
  ddt_type flat, inner = V(3, 1, 10, DDT_INT);
  ddt_type_indexed(9, bl.data(), d.data(), DDT_INT, &flat);
  ddt_type nested = HV(3, 1, 400, inner);
  ddt_type_free(&inner);
  same("indexed of a two-level regular pattern = hvector(3, 1, 400 B, vector(3, 1, 10, int))", {nested, flat});
}

TEST(Equivalence, ResizedKeepingBounds) {
  ddt_type v = V(3, 2, 4, DDT_INT);
  int64_t lb, ext;
  ddt_type_extent(v, &lb, &ext);
  ddt_type r = R(v, lb, ext);
  ddt_type v2 = V(3, 2, 4, DDT_INT);
  ddt_type_free(&v);
  same("resized(T, lb(T), extent(T)) = T", {v2, r});
}

TEST(Equivalence, SubarraysAreNestedVectors) {
  for (int order : {DDT_ORDER_C, DDT_ORDER_FORTRAN}) {
    const char* o = order == DDT_ORDER_C ? "C" : "Fortran";
    // 2-D: sizes {8, 6}, subsizes {3, 4}, starts {2, 1}
    int64_t s2[] = {8, 6}, u2[] = {3, 4}, t2[] = {2, 1};
    ddt_type a;
    ddt_type_subarray(2, s2, u2, t2, order, DDT_DOUBLE, &a);
    ddt_type n2 = order == DDT_ORDER_C ? V(3, 4, 6, DDT_DOUBLE) : V(4, 3, 8, DDT_DOUBLE);
    ddt_type n2s;  // placed at the start element, as a hindexed of one block
    int64_t one = 1, disp = order == DDT_ORDER_C ? 8 * (2 * 6 + 1) : 8 * (2 + 1 * 8);
    ddt_type_hindexed(1, &one, &disp, n2, &n2s);
    ddt_type_free(&n2);
    same(std::string("2-D subarray (") + o + ") = vector at the start", {a, n2s});
    // 3-D and 4-D
    int64_t s4[] = {5, 4, 6, 7}, u4[] = {2, 3, 4, 5}, t4[] = {1, 1, 2, 1};
    for (int nd : {3, 4}) {
      const int64_t* sz = s4 + (4 - nd);
      const int64_t* sub = u4 + (4 - nd);
      const int64_t* st = t4 + (4 - nd);
      ddt_type sa;
      ddt_type_subarray(nd, sz, sub, st, order, DDT_INT, &sa);
      // nested hvectors, fastest dimension innermost
      ddt_type cur = DDT_INT;
      int64_t stride = 4, disp0 = 0;
      for (int k = 0; k < nd; ++k) {
        int d = order == DDT_ORDER_C ? nd - 1 - k : k;
        ddt_type next = HV(sub[d], 1, stride, cur);
        if (cur != DDT_INT) ddt_type_free(&cur);
        cur = next;
        disp0 += st[d] * stride;
        stride *= sz[d];
      }
      ddt_type placed;
      ddt_type_hindexed(1, &one, &disp0, cur, &placed);
      ddt_type_free(&cur);
      same(std::to_string(nd) + "-D subarray (" + o + ") = nested hvectors", {sa, placed});
    }
  }
}

TEST(Equivalence, FourDEdgeConstructions) {
  // Seed 004: an N x N x N double matrix and a float matrix after it; the edge is 5 elements
  // wide in the first dimension: N*N blocks of 5 elements with stride N.
  const int64_t N = 12;
  // per-matrix constructions (double)
  std::vector<int64_t> bl5(N * N, 5), d(N * N), one(5 * N * N, 1), de(5 * N * N);
  for (int64_t r = 0; r < N * N; ++r) d[r] = r * N;
  for (int64_t r = 0; r < N * N; ++r)
    for (int i = 0; i < 5; ++i) de[r * 5 + i] = 8 * (r * N + i);
  std::vector<ddt_type> dbl(5 * N * N, DDT_DOUBLE);
  ddt_type st, ix;
  ddt_type_struct(5 * N * N, one.data(), de.data(), dbl.data(), &st);
  ddt_type_indexed(N * N, bl5.data(), d.data(), DDT_DOUBLE, &ix);
  ddt_type five = C(5, DDT_DOUBLE);
  ddt_type rs = own(R(five, 0, 8 * N), five);
  ddt_type cr = own(C(N * N, rs), rs);
  same("4D edge (double matrix): struct = indexed = vector = cont_of_resized", {st, ix, V(N * N, 5, N, DDT_DOUBLE), cr});
  // the whole edge: one struct over both matrices = struct of the two per-matrix vectors
  const int64_t fbase = 8 * N * N * N;
  std::vector<int64_t> d2(10 * N * N), one2(10 * N * N, 1);
  std::vector<ddt_type> t2(10 * N * N);
  for (int64_t r = 0; r < N * N; ++r)
    for (int i = 0; i < 5; ++i) {
      d2[r * 5 + i] = 8 * (r * N + i), t2[r * 5 + i] = DDT_DOUBLE;
      d2[5 * N * N + r * 5 + i] = fbase + 4 * (r * N + i), t2[5 * N * N + r * 5 + i] = DDT_FLOAT;
    }
  ddt_type whole, pair;
  ddt_type_struct(10 * N * N, one2.data(), d2.data(), t2.data(), &whole);
  ddt_type vd = V(N * N, 5, N, DDT_DOUBLE), vf = V(N * N, 5, N, DDT_FLOAT);
  int64_t b2[] = {1, 1}, dd[] = {0, fbase};
  ddt_type tt[] = {vd, vf};
  ddt_type_struct(2, b2, dd, tt, &pair);
  ddt_type_free(&vd);
  ddt_type_free(&vf);
  same("4D edge (both matrices): struct of 10N^2 elements = struct{vector double, vector float}", {whole, pair});
}

TEST(Equivalence, DdtbenchMilcAndWrf) {
  auto ks = ddtbench_kernels(false);
  for (auto& k : ks) {
    if (k->name != "MILC_su3_zd" || k->params != "16,16,16,16") continue;
    // 2*Lt blocks of 12*Lx*Ly bytes with stride 12*Lx*Ly*Lz bytes
    ddt_type v = HV(2 * 16, 12 * 16 * 16, 12 * 16 * 16 * 16, DDT_BYTE), t;
    ddt_type_dup(k->type, &t);
    same("MILC (16,16,16,16) = one vector of 2*Lt blocks", {t, v});
  }
  for (auto& k : ks) {
    if (k->name != "WRF_y_vec" && k->name != "WRF_x_vec") continue;
    ddt_type vec, sa;  // both over the same nine arrays
    ddt_type_dup(k->type, &vec);
    k->build_alternative(&sa);
    same(k->name.substr(0, 5) + " " + k->params + ": _vec = _sa", {vec, sa});
  }
}

TEST(Equivalence, OrderIsPreserved) {
  // The same blocks in another order are another layout: a transpose must transpose.
  int64_t bl[] = {1, 1}, fwd[] = {0, 1}, rev[] = {1, 0};
  ddt_type a, b;
  ddt_type_indexed(2, bl, fwd, DDT_INT, &a);
  ddt_type_indexed(2, bl, rev, DDT_INT, &b);
  EXPECT_NE(hex(a), hex(b));
  ddt_type_free(&a);
  ddt_type_free(&b);
}

TEST(Equivalence, ZPrintTable) {
  std::printf("\n| equivalence | hash |\n|---|---|\n");
  for (auto& r : table()) std::printf("| %s | %s |\n", r.name.c_str(), r.hash.c_str());
  EXPECT_GE(table().size(), 15u);
}
