// DDTBench kernels (spec §3) against the spec's golden FNV-1a hashes (§4), their packed sizes,
// and the application's hand-written loop; unpack restores what pack read.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <vector>

#include "ddtbench.hpp"

TEST(Kernels, ListGeneratorMatchesSpotChecks) {
  uint64_t s = 1;
  auto l = index_list(s, 3534, 3062);
  EXPECT_EQ((std::vector<int64_t>(l.begin(), l.begin() + 5)), (std::vector<int64_t>{1415, 1015, 1971, 22, 147}));
  s = 1;
  l = index_list(s, 88881, 3225);
  EXPECT_EQ((std::vector<int64_t>(l.begin(), l.begin() + 5)), (std::vector<int64_t>{37653, 63511, 1270, 21224, 28274}));
  s = 1;
  l = index_list(s, 3697, 493);
  EXPECT_EQ((std::vector<int64_t>(l.begin(), l.begin() + 5)), (std::vector<int64_t>{3412, 193, 39, 2315, 8}));
}

TEST(Kernels, GoldenHashesManualLoopsAndRoundTrip) {
  auto ks = ddtbench_kernels(true);
  ASSERT_EQ(ks.size(), 69u);  // spec §2.1: 69 tests in DDTBench's default run
  int golden_checked = 0;
  for (auto& k : ks) {
    SCOPED_TRACE(k->name + " " + k->params);
    std::vector<char> packed(k->bytes), manual(k->bytes), again(k->bytes);
    int64_t n = 0;
    ASSERT_EQ(ddt_pack(k->buf, k->count, k->type, 0, packed.data(), k->bytes, &n), DDT_SUCCESS);
    ASSERT_EQ(n, k->bytes);
    uint64_t h = fnv1a64(packed.data(), n);
    if (k->golden) {
      EXPECT_EQ(h, k->golden) << std::hex << h;
      ++golden_checked;
    }
    k->manual_pack(manual.data());
    if (k->manual_matches_type) {
      EXPECT_EQ(std::memcmp(manual.data(), packed.data(), n), 0);
    } else if (k->golden_manual) {
      EXPECT_EQ(fnv1a64(manual.data(), n), k->golden_manual);
    }
    // Unpack what was packed, over scrambled data, then pack again.
    std::vector<char> junk(k->bytes, 0x7f);
    int64_t u = 0;
    ASSERT_EQ(ddt_unpack(junk.data(), k->bytes, const_cast<void*>(k->buf), k->count, k->type, 0, &u), DDT_SUCCESS);
    ASSERT_EQ(ddt_unpack(packed.data(), k->bytes, const_cast<void*>(k->buf), k->count, k->type, 0, &u), DDT_SUCCESS);
    ASSERT_EQ(ddt_pack(k->buf, k->count, k->type, 0, again.data(), k->bytes, &n), DDT_SUCCESS);
    EXPECT_EQ(again, packed);
    if (k->recv_type) {  // LAMMPS, FFT2D: DDTBench's receive type holds the same bytes, in stream order
      void* rbuf = const_cast<void*>(k->buf);
      int64_t rs = 0;
      ASSERT_EQ(ddt_type_size(k->recv_type, &rs), DDT_SUCCESS);
      ASSERT_EQ(rs * k->count, k->bytes);
      ASSERT_EQ(ddt_unpack(packed.data(), k->bytes, rbuf, k->count, k->recv_type, 0, &u), DDT_SUCCESS);
      ASSERT_EQ(ddt_pack(rbuf, k->count, k->recv_type, 0, again.data(), k->bytes, &n), DDT_SUCCESS);
      EXPECT_EQ(again, packed);
      // and the application's unpack writes the same places: it overwrites them all
      k->manual_unpack(manual.data());
      ASSERT_EQ(ddt_pack(rbuf, k->count, k->recv_type, 0, again.data(), k->bytes, &n), DDT_SUCCESS);
      if (k->manual_matches_type) {  // FFT2D: DDTBench's loop writes the receive type's places
        EXPECT_EQ(again, manual);
      } else {
        std::vector<char> a(again), b(manual);
        std::sort(a.begin(), a.end());
        std::sort(b.begin(), b.end());
        EXPECT_EQ(a, b);  // the multiset of bytes (spec 3.6: same bytes, AoS order)
      }
    }
  }
  EXPECT_EQ(golden_checked, 16 + 4 + 14 + 12 + 3 + 4 + 4 + 5);
}

TEST(Kernels, PackedSizesMatchTheSpec) {
  auto ks = ddtbench_kernels(false);
  std::map<std::string, std::vector<int64_t>> want = {
      {"WRF_y_vec", {90804, 75012, 63168, 55272, 43428}}, {"WRF_x_sa", {173712, 102648, 63168}},
      {"MILC_su3_zd", {98304, 49152, 24576, 12288}},     {"LAMMPS_atomic", {11664, 6960, 5472}},
      {"SPECFEM3D_mt", {91200, 76800, 67200, 74400}},     {"SPECFEM3D_cm", {177672, 106248, 55224, 26424}},
      {"FFT2D", {524288, 2097152, 4718592, 8388608, 18874368}}};
  std::map<std::string, std::vector<int64_t>> got;
  for (auto& k : ks)
    if (want.count(k->name)) got[k->name].push_back(k->bytes);
  EXPECT_EQ(got, want);
}
