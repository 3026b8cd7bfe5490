// Serialize / deserialize: round trips keep layout, hash and bounds; hostile bytes return an
// error without crashing or allocating absurd memory (the fuzz target pushes harder).
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "gen.hpp"

namespace {
std::vector<uint8_t> serialize(ddt_type t) {
  int64_t need = 0;
  EXPECT_EQ(ddt_type_serialize(t, nullptr, 0, &need), DDT_ERR_TRUNCATE);  // never empty: it has a header
  std::vector<uint8_t> b(need);
  EXPECT_EQ(ddt_type_serialize(t, b.data(), need, &need), DDT_SUCCESS);
  return b;
}
}  // namespace

TEST(Serialize, RandomTypesRoundTrip) {
  GenOptions opt;
  for (int i = 0; i < 500; ++i) {
    std::mt19937_64 rng(777 + i);
    RefType ref;
    TPtr t = random_type(rng, opt, ref);
    int err;
    ddt_type a = build_ddt(*t, &err);
    ASSERT_NE(a, nullptr);
    ddt_type_commit(a);
    auto bytes = serialize(a);
    ddt_type b;
    ASSERT_EQ(ddt_type_deserialize(bytes.data(), bytes.size(), &b), DDT_SUCCESS);
    uint8_t ha[16], hb[16];
    ddt_type_hash(a, ha);
    ddt_type_hash(b, hb);
    EXPECT_EQ(std::memcmp(ha, hb, 16), 0);
    int64_t v[2][5];
    ddt_type ts[2] = {a, b};
    for (int k = 0; k < 2; ++k) {
      ddt_type_size(ts[k], &v[k][0]);
      ddt_type_extent(ts[k], &v[k][1], &v[k][2]);
      ddt_type_true_extent(ts[k], &v[k][3], &v[k][4]);
    }
    EXPECT_EQ(std::memcmp(v[0], v[1], sizeof v[0]), 0);
    EXPECT_EQ(serialize(b), bytes);  // canonical: re-serialising gives the same bytes
    // The received type moves the same bytes.
    int64_t lo, hi;
    ref_span(ref, 2, lo, hi);
    std::vector<char> buf(hi - lo + 1), p1(2 * ref.size + 1), p2(2 * ref.size + 1);
    for (auto& c : buf) c = static_cast<char>(rng());
    int64_t n1, n2;
    ddt_pack(buf.data() - lo, 2, a, 0, p1.data(), 2 * ref.size, &n1);
    ddt_pack(buf.data() - lo, 2, b, 0, p2.data(), 2 * ref.size, &n2);
    EXPECT_EQ(p1, p2);
    int64_t ni, na, nd;
    int comb;
    ddt_type_envelope(b, &ni, &na, &nd, &comb);
    EXPECT_EQ(comb, DDT_COMBINER_LAYOUT);
    ddt_type_free(&a);
    ddt_type_free(&b);
  }
}

TEST(Serialize, CorruptionIsAnErrorNotACrash) {
  ddt_type v, s;
  ddt_type_vector(100, 3, 7, DDT_DOUBLE, &v);
  int64_t bl[] = {1, 2}, d[] = {0, 4096};
  ddt_type ts[] = {v, DDT_INT};
  ddt_type_struct(2, bl, d, ts, &s);
  auto good = serialize(s);
  std::mt19937_64 rng(5);
  int accepted = 0, rejected = 0;
  for (int i = 0; i < 20000; ++i) {
    auto bad = good;
    int flips = 1 + rng() % 4;
    for (int f = 0; f < flips; ++f) bad[rng() % bad.size()] ^= static_cast<uint8_t>(1 + rng() % 255);
    size_t len = rng() % 4 == 0 ? rng() % bad.size() : bad.size();
    ddt_type t = DDT_TYPE_NULL;
    int e = ddt_type_deserialize(bad.data(), len, &t);
    if (e == DDT_SUCCESS) {
      ++accepted;  // still a valid layout: it must be usable
      char desc[4096];
      EXPECT_NE(ddt_type_describe(t, desc, sizeof desc), DDT_ERR_TYPE);
      ddt_type_free(&t);
    } else {
      ++rejected;
      EXPECT_TRUE(e == DDT_ERR_CORRUPT || e == DDT_ERR_VERSION) << e;
    }
  }
  EXPECT_GT(rejected, 10000);
  // Declared counts far beyond the input are refused before anything is reserved.
  std::vector<uint8_t> huge = {'D', 'D', 'T', 'L', 1, 0, 0, 1, 0, 0, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x01};
  ddt_type t;
  EXPECT_EQ(ddt_type_deserialize(huge.data(), huge.size(), &t), DDT_ERR_CORRUPT);
  std::vector<uint8_t> v2 = good;
  v2[4] = 2;
  EXPECT_EQ(ddt_type_deserialize(v2.data(), v2.size(), &t), DDT_ERR_VERSION);
  ddt_type_free(&v);
  ddt_type_free(&s);
}
