// API behaviour: predefined types, bounds rules, envelope/contents, reference counting, partial
// ranges and iov continuation, copies, threads, and the README example.
#include <gtest/gtest.h>

#include <cstring>
#include <thread>
#include <vector>

#include "ddtkit.h"

TEST(Api, PredefinedSizesAndPairs) {
  int64_t s, lb, e;
  ddt_type_size(DDT_LONG_DOUBLE, &s);
  EXPECT_EQ(s, static_cast<int64_t>(sizeof(long double)));
  ddt_type_size(DDT_DOUBLE_INT, &s);
  ddt_type_extent(DDT_DOUBLE_INT, &lb, &e);
  EXPECT_EQ(s, 12);
  EXPECT_EQ(e, 16);
  ddt_type_size(DDT_SHORT_INT, &s);
  ddt_type_extent(DDT_SHORT_INT, &lb, &e);
  EXPECT_EQ(s, 6);
  EXPECT_EQ(e, 8);
  ddt_type_size(DDT_C_LONG_DOUBLE_COMPLEX, &s);
  EXPECT_EQ(s, 2 * static_cast<int64_t>(sizeof(long double)));
}

TEST(Api, StructBoundsFollowTheStandard) {
  // struct{resized(short, lb 2, extent 6) at 4, 3 doubles at 0}: the explicit markers decide.
  ddt_type r, s;
  ddt_type_resized(DDT_SHORT, 2, 6, &r);
  int64_t bl[] = {1, 3}, d[] = {4, 0}, lb, ext, tlb, text;
  ddt_type ts[] = {r, DDT_DOUBLE};
  ddt_type_struct(2, bl, d, ts, &s);
  ddt_type_extent(s, &lb, &ext);
  ddt_type_true_extent(s, &tlb, &text);
  EXPECT_EQ(lb, 6);
  EXPECT_EQ(ext, 6);
  EXPECT_EQ(tlb, 0);
  EXPECT_EQ(text, 24);
  // Without markers a struct pads to its largest alignment.
  ddt_type p;
  ddt_type ts2[] = {DDT_DOUBLE, DDT_CHAR};
  int64_t bl2[] = {1, 1}, d2[] = {0, 8};
  ddt_type_struct(2, bl2, d2, ts2, &p);
  ddt_type_extent(p, &lb, &ext);
  EXPECT_EQ(ext, 16);
  for (ddt_type t : {r, s, p}) ddt_type_free(&t);
}

TEST(Api, EnvelopeAndContentsRoundTrip) {
  int64_t bl[] = {2, 1}, d[] = {0, 24};
  ddt_type v, s;
  ddt_type_vector(3, 2, 5, DDT_FLOAT, &v);
  ddt_type ts[] = {v, DDT_CHAR};
  ddt_type_struct(2, bl, d, ts, &s);
  int64_t ni, na, nd;
  int comb;
  ASSERT_EQ(ddt_type_envelope(s, &ni, &na, &nd, &comb), DDT_SUCCESS);
  EXPECT_EQ(comb, DDT_COMBINER_STRUCT);
  EXPECT_EQ(ni, 3);
  EXPECT_EQ(na, 2);
  EXPECT_EQ(nd, 2);
  int64_t ints[3], addrs[2];
  ddt_type types[2];
  ASSERT_EQ(ddt_type_contents(s, 3, 2, 2, ints, addrs, types), DDT_SUCCESS);
  EXPECT_EQ(ints[0], 2);
  EXPECT_EQ(ints[1], 2);
  EXPECT_EQ(ints[2], 1);
  EXPECT_EQ(addrs[1], 24);
  EXPECT_EQ(types[0], v);
  EXPECT_EQ(types[1], DDT_CHAR);
  ddt_type_free(&types[0]);  // contents returned a reference
  ddt_type_envelope(v, &ni, &na, &nd, &comb);
  EXPECT_EQ(comb, DDT_COMBINER_VECTOR);
  ddt_type_contents(v, 3, 0, 1, ints, addrs, types);
  EXPECT_EQ(ints[0], 3);
  EXPECT_EQ(ints[1], 2);
  EXPECT_EQ(ints[2], 5);
  ddt_type_free(&types[0]);
  ddt_type_envelope(DDT_INT, &ni, &na, &nd, &comb);
  EXPECT_EQ(comb, DDT_COMBINER_NAMED);
  ddt_type_free(&v);
  ddt_type_free(&s);
}

TEST(Api, FreeingAChildKeepsItAliveForItsParent) {
  ddt_type v, c;
  ddt_type_vector(4, 1, 3, DDT_INT, &v);
  ddt_type_contiguous(2, v, &c);
  ddt_type_free(&v);  // c still uses it
  ddt_type_commit(c);
  int in[24], out[8];
  for (int i = 0; i < 24; ++i) in[i] = i;
  int64_t n;
  ASSERT_EQ(ddt_pack(in, 1, c, 0, out, sizeof out, &n), DDT_SUCCESS);
  int want[] = {0, 3, 6, 9, 10, 13, 16, 19};
  EXPECT_EQ(std::memcmp(out, want, sizeof want), 0);
  int64_t ints[1], addrs[1];
  ddt_type types[1];
  ddt_type_contents(c, 1, 0, 1, ints, addrs, types);
  ddt_type_free(&c);  // the contents handle still holds the vector
  int64_t s;
  EXPECT_EQ(ddt_type_size(types[0], &s), DDT_SUCCESS);
  EXPECT_EQ(s, 16);
  ddt_type_free(&types[0]);
}

TEST(Api, IovMergesAndContinues) {
  ddt_type v;
  ddt_type_vector(10, 2, 3, DDT_INT, &v);  // blocks of 8 B, stride 12 B
  ddt_type_commit(v);
  int buf[30];
  struct iovec iov[3];
  int64_t n, bytes, off = 5;  // start in the middle of the first block
  ASSERT_EQ(ddt_iov(buf, 1, v, off, iov, 3, &n, &bytes), DDT_SUCCESS);
  EXPECT_EQ(n, 3);
  EXPECT_EQ(bytes, 3 + 8 + 8);
  EXPECT_EQ(iov[0].iov_base, reinterpret_cast<char*>(buf) + 5);
  EXPECT_EQ(iov[1].iov_base, reinterpret_cast<char*>(buf) + 12);
  off += bytes;
  ASSERT_EQ(ddt_iov(buf, 1, v, off, iov, 3, &n, &bytes), DDT_SUCCESS);
  EXPECT_EQ(iov[0].iov_base, reinterpret_cast<char*>(buf) + 36);
  ddt_type c;  // contiguous data is one piece however many elements
  ddt_type_contiguous(4, DDT_INT, &c);
  ddt_type_commit(c);
  ASSERT_EQ(ddt_iov(buf, 7, c, 0, iov, 1, &n, &bytes), DDT_SUCCESS);
  EXPECT_EQ(n, 1);
  EXPECT_EQ(bytes, 7 * 16);
  ddt_type_free(&v);
  ddt_type_free(&c);
}

TEST(Api, PartialPackAtAnyByte) {
  ddt_type v;
  ddt_type_vector(64, 3, 5, DDT_DOUBLE, &v);
  ddt_type_commit(v);
  std::vector<double> in(64 * 5 * 3);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<double>(i);
  std::vector<char> whole(3 * 64 * 24), parts(whole.size());
  int64_t n;
  ASSERT_EQ(ddt_pack(in.data(), 3, v, 0, whole.data(), whole.size(), &n), DDT_SUCCESS);
  for (int64_t off = 0; off < static_cast<int64_t>(whole.size()); off += 7) {
    ASSERT_EQ(ddt_pack(in.data(), 3, v, off, parts.data() + off, 7, &n), DDT_SUCCESS);
    EXPECT_EQ(n, std::min<int64_t>(7, whole.size() - off));
  }
  EXPECT_EQ(parts, whole);
  ddt_type_free(&v);
}

TEST(Api, ConcurrentPacksOfOneType) {
  ddt_type v;
  ddt_type_vector(1000, 1, 2, DDT_INT, &v);
  ddt_type_commit(v);
  std::vector<int> in(2000);
  for (int i = 0; i < 2000; ++i) in[i] = i;
  std::vector<std::thread> th;
  std::vector<int> ok(4, 0);
  for (int t = 0; t < 4; ++t)
    th.emplace_back([&, t] {
      std::vector<int> out(1000);
      int64_t n;
      bool good = true;
      for (int r = 0; r < 200; ++r) {
        ddt_pack(in.data(), 1, v, 0, out.data(), 4000, &n);
        for (int i = 0; i < 1000; ++i) good = good && out[i] == 2 * i;
      }
      ok[t] = good;
    });
  for (auto& x : th) x.join();
  EXPECT_EQ(ok, std::vector<int>(4, 1));
  ddt_type_free(&v);
}

// The README's example, verbatim in spirit: pack column 2 of a 4x5 row-major matrix, unpack it.
TEST(Api, ReadmeExample) {
  double m[4][5], col[4], back[4][5] = {};
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 5; ++j) m[i][j] = 10 * i + j;
  ddt_type column;
  ASSERT_EQ(ddt_type_vector(4, 1, 5, DDT_DOUBLE, &column), DDT_SUCCESS);
  ASSERT_EQ(ddt_type_commit(column), DDT_SUCCESS);
  int64_t packed, unpacked;
  ASSERT_EQ(ddt_pack(&m[0][2], 1, column, 0, col, sizeof col, &packed), DDT_SUCCESS);
  EXPECT_EQ(packed, 32);
  EXPECT_EQ(col[3], 32.0);
  ASSERT_EQ(ddt_unpack(col, packed, &back[0][2], 1, column, 0, &unpacked), DDT_SUCCESS);
  EXPECT_EQ(back[3][2], 32.0);
  EXPECT_EQ(back[3][1], 0.0);
  ddt_type_free(&column);
}

// Outputs past the streaming threshold take the non-temporal path (copy_kernels.hpp), which the
// random campaign's small types never reach: pack and unpack 20 MiB of odd-strided blocks.
TEST(Api, LargeOutputsStream) {
  const int64_t blocks = (20 << 20) / 96, bl = 96, stride = 2 * bl + 3, total = blocks * bl;
  ddt_type t;
  ASSERT_EQ(ddt_type_vector(blocks, bl, stride, DDT_CHAR, &t), DDT_SUCCESS);
  ddt_type_commit(t);
  std::vector<char> src(blocks * stride + 8), out(total + 1), back(src.size(), 0);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<char>(i * 31 + 7);
  int64_t n;
  ASSERT_EQ(ddt_pack(src.data() + 1, 1, t, 0, out.data() + 1, total, &n), DDT_SUCCESS);  // misaligned output
  ASSERT_EQ(n, total);
  bool ok = true;
  for (int64_t b = 0; b < blocks; ++b) ok = ok && !std::memcmp(out.data() + 1 + b * bl, src.data() + 1 + b * stride, bl);
  EXPECT_TRUE(ok);
  ASSERT_EQ(ddt_unpack(out.data() + 1, total, back.data() + 1, 1, t, 0, &n), DDT_SUCCESS);
  for (int64_t b = 0; b < blocks; ++b) ok = ok && !std::memcmp(back.data() + 1 + b * stride, src.data() + 1 + b * stride, bl);
  EXPECT_TRUE(ok);
  EXPECT_EQ(back[1 + bl], 0);  // the gaps stay untouched
  ddt_type_free(&t);
}
