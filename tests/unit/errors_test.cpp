// Bad input: every public function returns an error code and leaves the caller's buffers as
// they were.
#include <gtest/gtest.h>

#include <climits>
#include <cstring>
#include <vector>

#include "ddtkit.h"

namespace {
const ddt_type kSentinel = reinterpret_cast<ddt_type>(0x1);  // *newtype must keep this on failure
}

TEST(Errors, NullPointers) {
  ddt_type t = kSentinel;
  EXPECT_EQ(ddt_type_contiguous(1, DDT_INT, nullptr), DDT_ERR_ARG);
  EXPECT_EQ(ddt_type_contiguous(1, nullptr, &t), DDT_ERR_TYPE);
  EXPECT_EQ(ddt_type_indexed(2, nullptr, nullptr, DDT_INT, &t), DDT_ERR_ARG);
  EXPECT_EQ(ddt_type_struct(1, nullptr, nullptr, nullptr, &t), DDT_ERR_ARG);
  EXPECT_EQ(ddt_type_subarray(1, nullptr, nullptr, nullptr, DDT_ORDER_C, DDT_INT, &t), DDT_ERR_ARG);
  EXPECT_EQ(t, kSentinel);
  EXPECT_EQ(ddt_type_size(DDT_INT, nullptr), DDT_ERR_ARG);
  EXPECT_EQ(ddt_type_extent(DDT_INT, nullptr, nullptr), DDT_ERR_ARG);
  EXPECT_EQ(ddt_type_free(nullptr), DDT_ERR_ARG);
  int64_t n;
  EXPECT_EQ(ddt_pack(nullptr, 1, DDT_INT, 0, nullptr, 4, &n), DDT_ERR_ARG);
  EXPECT_EQ(ddt_pack(nullptr, 1, DDT_INT, 0, &n, 4, nullptr), DDT_ERR_ARG);
  EXPECT_EQ(ddt_iov(nullptr, 1, DDT_INT, 0, nullptr, 4, &n, &n), DDT_ERR_ARG);
  EXPECT_EQ(ddt_type_hash(DDT_INT, nullptr), DDT_ERR_ARG);
  EXPECT_EQ(ddt_type_serialize(DDT_INT, nullptr, 0, nullptr), DDT_ERR_ARG);
  EXPECT_EQ(ddt_type_deserialize(nullptr, 10, &t), DDT_ERR_ARG);
  EXPECT_EQ(ddt_type_describe(DDT_INT, nullptr, 10), DDT_ERR_ARG);
  EXPECT_STRNE(ddt_error_string(DDT_ERR_TYPE), ddt_error_string(12345));
}

TEST(Errors, NegativeCounts) {
  ddt_type t = kSentinel;
  int64_t bl[] = {-1}, d[] = {0};
  ddt_type types[] = {DDT_INT};
  EXPECT_EQ(ddt_type_contiguous(-1, DDT_INT, &t), DDT_ERR_COUNT);
  EXPECT_EQ(ddt_type_vector(-1, 1, 1, DDT_INT, &t), DDT_ERR_COUNT);
  EXPECT_EQ(ddt_type_vector(1, -1, 1, DDT_INT, &t), DDT_ERR_COUNT);
  EXPECT_EQ(ddt_type_hvector(2, -3, 8, DDT_INT, &t), DDT_ERR_COUNT);
  EXPECT_EQ(ddt_type_indexed(1, bl, d, DDT_INT, &t), DDT_ERR_COUNT);
  EXPECT_EQ(ddt_type_indexed_block(1, -2, d, DDT_INT, &t), DDT_ERR_COUNT);
  EXPECT_EQ(ddt_type_struct(1, bl, d, types, &t), DDT_ERR_COUNT);
  EXPECT_EQ(ddt_type_struct(-1, bl, d, types, &t), DDT_ERR_COUNT);
  EXPECT_EQ(t, kSentinel);
  char buf[16] = {};
  int64_t n = 77;
  EXPECT_EQ(ddt_pack(buf, -1, DDT_INT, 0, buf, 16, &n), DDT_ERR_COUNT);
  EXPECT_EQ(ddt_unpack(buf, 4, buf, -1, DDT_INT, 0, &n), DDT_ERR_COUNT);
  EXPECT_EQ(n, 77);
}

TEST(Errors, UncommittedTypesDoNotMoveData) {
  ddt_type v;
  ASSERT_EQ(ddt_type_vector(2, 1, 2, DDT_INT, &v), DDT_SUCCESS);
  int in[4] = {1, 2, 3, 4}, out[2] = {9, 9};
  int64_t n = 5;
  struct iovec iov[2];
  EXPECT_EQ(ddt_pack(in, 1, v, 0, out, 8, &n), DDT_ERR_NOT_COMMITTED);
  EXPECT_EQ(ddt_unpack(out, 8, in, 1, v, 0, &n), DDT_ERR_NOT_COMMITTED);
  EXPECT_EQ(ddt_iov(in, 1, v, 0, iov, 2, &n, &n), DDT_ERR_NOT_COMMITTED);
  EXPECT_EQ(ddt_copy(in, 1, v, out, 2, DDT_INT), DDT_ERR_NOT_COMMITTED);
  EXPECT_EQ(out[0], 9);
  EXPECT_EQ(in[0], 1);
  EXPECT_EQ(n, 5);
  ddt_type_free(&v);
}

TEST(Errors, SubarrayOutOfRange) {
  ddt_type t = kSentinel;
  int64_t sizes[] = {4, 4}, sub[] = {2, 2}, st_bad[] = {3, 0}, st_ok[] = {2, 2}, sub0[] = {0, 2}, sub5[] = {5, 1};
  EXPECT_EQ(ddt_type_subarray(2, sizes, sub, st_bad, DDT_ORDER_C, DDT_INT, &t), DDT_ERR_DIMS);
  EXPECT_EQ(ddt_type_subarray(2, sizes, sub0, st_ok, DDT_ORDER_C, DDT_INT, &t), DDT_ERR_DIMS);
  EXPECT_EQ(ddt_type_subarray(2, sizes, sub5, st_ok, DDT_ORDER_C, DDT_INT, &t), DDT_ERR_DIMS);
  EXPECT_EQ(ddt_type_subarray(0, sizes, sub, st_ok, DDT_ORDER_C, DDT_INT, &t), DDT_ERR_DIMS);
  EXPECT_EQ(ddt_type_subarray(2, sizes, sub, st_ok, 7, DDT_INT, &t), DDT_ERR_ARG);
  int64_t neg[] = {-1, 0};
  EXPECT_EQ(ddt_type_subarray(2, sizes, sub, neg, DDT_ORDER_C, DDT_INT, &t), DDT_ERR_DIMS);
  EXPECT_EQ(t, kSentinel);
  ASSERT_EQ(ddt_type_subarray(2, sizes, sub, st_ok, DDT_ORDER_C, DDT_INT, &t), DDT_SUCCESS);
  ddt_type_free(&t);
}

TEST(Errors, InvalidDarrayDistributions) {
  ddt_type t = kSentinel;
  int64_t g[] = {10, 10};
  int block[] = {DDT_DISTRIBUTE_BLOCK, DDT_DISTRIBUTE_BLOCK}, dflt[] = {DDT_DISTRIBUTE_DFLT_DARG, DDT_DISTRIBUTE_DFLT_DARG};
  int p22[] = {2, 2}, p23[] = {2, 3};
  EXPECT_EQ(ddt_type_darray(4, 0, 2, g, block, dflt, p23, DDT_ORDER_C, DDT_INT, &t), DDT_ERR_DIMS);   // 6 != 4 procs
  EXPECT_EQ(ddt_type_darray(4, 4, 2, g, block, dflt, p22, DDT_ORDER_C, DDT_INT, &t), DDT_ERR_ARG);    // rank >= size
  int small[] = {3, 5};  // block of 3 on 2 procs cannot cover 10
  EXPECT_EQ(ddt_type_darray(4, 0, 2, g, block, small, p22, DDT_ORDER_C, DDT_INT, &t), DDT_ERR_DISTRIB);
  int none_dist[] = {DDT_DISTRIBUTE_NONE, DDT_DISTRIBUTE_BLOCK};  // none needs one process
  EXPECT_EQ(ddt_type_darray(4, 0, 2, g, none_dist, dflt, p22, DDT_ORDER_C, DDT_INT, &t), DDT_ERR_DISTRIB);
  int bogus[] = {42, DDT_DISTRIBUTE_BLOCK};
  EXPECT_EQ(ddt_type_darray(4, 0, 2, g, bogus, dflt, p22, DDT_ORDER_C, DDT_INT, &t), DDT_ERR_DISTRIB);
  int cyc[] = {DDT_DISTRIBUTE_CYCLIC, DDT_DISTRIBUTE_CYCLIC}, zero[] = {0, 1};
  EXPECT_EQ(ddt_type_darray(4, 0, 2, g, cyc, zero, p22, DDT_ORDER_C, DDT_INT, &t), DDT_ERR_DISTRIB);
  EXPECT_EQ(t, kSentinel);
}

TEST(Errors, SizeOverflow) {
  ddt_type t = kSentinel, big;
  ASSERT_EQ(ddt_type_contiguous(INT64_MAX / 8, DDT_DOUBLE, &big), DDT_SUCCESS);
  EXPECT_EQ(ddt_type_contiguous(3, big, &t), DDT_ERR_OVERFLOW);
  EXPECT_EQ(ddt_type_vector(4, 1, INT64_MAX / 2, DDT_INT, &t), DDT_ERR_OVERFLOW);
  EXPECT_EQ(ddt_type_hvector(3, 1, INT64_MAX / 2, DDT_INT, &t), DDT_ERR_OVERFLOW);
  EXPECT_EQ(ddt_type_resized(DDT_INT, INT64_MAX, 10, &t), DDT_ERR_OVERFLOW);
  int64_t sizes[] = {INT64_MAX / 2, 4}, sub[] = {1, 1}, st[] = {0, 0};
  EXPECT_EQ(ddt_type_subarray(2, sizes, sub, st, DDT_ORDER_C, DDT_INT, &t), DDT_ERR_OVERFLOW);
  EXPECT_EQ(t, kSentinel);
  ddt_type_commit(big);
  char buf[8];
  int64_t n = 3;
  EXPECT_EQ(ddt_pack(buf, 2, big, 0, buf, 8, &n), DDT_ERR_OVERFLOW);  // 2 x size overflows
  EXPECT_EQ(n, 3);
  ddt_type_free(&big);
}

TEST(Errors, UndersizedOutputsLeaveBuffersUntouched) {
  ddt_type v;
  ddt_type_vector(3, 1, 2, DDT_INT, &v);
  ddt_type_commit(v);
  char out[4];
  std::memset(out, 0x42, sizeof out);
  int64_t needed = -1;
  EXPECT_EQ(ddt_type_serialize(v, out, sizeof out, &needed), DDT_ERR_TRUNCATE);
  EXPECT_GT(needed, 4);
  EXPECT_EQ(ddt_type_describe(v, out, sizeof out), DDT_ERR_TRUNCATE);
  for (char c : out) EXPECT_EQ(c, 0x42);
  // Unpacking more bytes than the type holds is truncation, and nothing is written.
  int dst[5] = {7, 7, 7, 7, 7}, src[4] = {1, 2, 3, 4};
  int64_t n = -1;
  EXPECT_EQ(ddt_unpack(src, 16, dst, 1, v, 0, &n), DDT_ERR_TRUNCATE);
  EXPECT_EQ(ddt_unpack(src, 4, dst, 1, v, 12, &n), DDT_ERR_TRUNCATE);
  for (int x : dst) EXPECT_EQ(x, 7);
  // Packing from beyond the stream is an error; packing at its end is an empty success.
  EXPECT_EQ(ddt_pack(dst, 1, v, 13, out, 4, &n), DDT_ERR_TRUNCATE);
  EXPECT_EQ(ddt_pack(dst, 1, v, 12, out, 4, &n), DDT_SUCCESS);
  EXPECT_EQ(n, 0);
  // Contents with too-small arrays.
  int64_t ints[1], addrs[1];
  ddt_type types[1];
  EXPECT_EQ(ddt_type_contents(v, 1, 0, 1, ints, addrs, types), DDT_ERR_TRUNCATE);
  // Copy between different packed sizes.
  EXPECT_EQ(ddt_copy(src, 1, v, dst, 2, DDT_INT), DDT_ERR_SIZE_MISMATCH);
  for (int x : dst) EXPECT_EQ(x, 7);
  ddt_type_free(&v);
}

TEST(Errors, PredefinedAndStaleHandles) {
  ddt_type i = DDT_INT;
  EXPECT_EQ(ddt_type_free(&i), DDT_ERR_PREDEFINED);
  EXPECT_EQ(i, DDT_INT);
  EXPECT_EQ(ddt_type_set_bounds(DDT_INT, 0, 8), DDT_ERR_PREDEFINED);
  ddt_type v;
  ddt_type_contiguous(2, DDT_INT, &v);
  ddt_type_commit(v);
  EXPECT_EQ(ddt_type_set_bounds(v, 0, 16), DDT_ERR_ARG);  // committed types are immutable
  ddt_type_free(&v);
  EXPECT_EQ(v, DDT_TYPE_NULL);
  int64_t s;
  EXPECT_EQ(ddt_type_size(v, &s), DDT_ERR_TYPE);
}

// A NULL or near-NULL base with relative displacements is an argument error for every entry
// point that moves data (the bytes would fall in the never-mapped first 64 KiB), and nothing is
// written; absolute-address types used with a NULL buffer (MPI_BOTTOM) keep working.
TEST(Errors, HostileBuffers) {
  ddt_type v, neg;
  ASSERT_EQ(ddt_type_vector(4, 1, 2, DDT_INT, &v), DDT_SUCCESS);
  ASSERT_EQ(ddt_type_commit(v), DDT_SUCCESS);
  const int64_t bl = 2, back = -64;  // bytes below the buffer address
  ASSERT_EQ(ddt_type_hindexed(1, &bl, &back, DDT_INT, &neg), DDT_SUCCESS);
  ASSERT_EQ(ddt_type_commit(neg), DDT_SUCCESS);
  int data[8] = {1, 2, 3, 4, 5, 6, 7, 8}, other[8] = {0};
  char out[64];
  std::memset(out, 0x42, sizeof out);
  int64_t n = -1;
  for (uintptr_t low : {uintptr_t{0}, uintptr_t{8}, uintptr_t{4096}, uintptr_t{65535 - 16}}) {
    void* p = reinterpret_cast<void*>(low);
    EXPECT_EQ(ddt_pack(p, 1, v, 0, out, sizeof out, &n), DDT_ERR_ARG) << low;
    EXPECT_EQ(ddt_pack(p, 3, v, 5, out, 7, &n), DDT_ERR_ARG) << low;  // partial, several elements
    EXPECT_EQ(ddt_unpack(out, 16, p, 1, v, 0, &n), DDT_ERR_ARG) << low;
    EXPECT_EQ(ddt_copy(p, 1, v, other, 4, DDT_INT), DDT_ERR_ARG) << low;
    EXPECT_EQ(ddt_copy(data, 4, DDT_INT, p, 1, v), DDT_ERR_ARG) << low;
    EXPECT_EQ(ddt_pack(data, 1, v, 0, p, 16, &n), DDT_ERR_ARG) << low;  // the packed side too
    EXPECT_EQ(ddt_unpack(p, 16, other, 1, v, 0, &n), DDT_ERR_ARG) << low;
  }
  for (char c : out) EXPECT_EQ(c, 0x42);
  for (int x : other) EXPECT_EQ(x, 0);
  // A displacement that reaches below address 0 from a small base.
  EXPECT_EQ(ddt_pack(reinterpret_cast<void*>(uintptr_t{32}), 1, neg, 0, out, 8, &n), DDT_ERR_ARG);
  EXPECT_EQ(n, -1);
  // Empty operations touch nothing and succeed with any base.
  EXPECT_EQ(ddt_pack(nullptr, 0, v, 0, out, sizeof out, &n), DDT_SUCCESS);
  EXPECT_EQ(n, 0);
  // MPI_BOTTOM: absolute displacements with a NULL buffer.
  const int64_t abs_disp[2] = {static_cast<int64_t>(reinterpret_cast<uintptr_t>(&data[1])),
                               static_cast<int64_t>(reinterpret_cast<uintptr_t>(&data[6]))};
  ddt_type bottom;
  ASSERT_EQ(ddt_type_hindexed_block(2, 1, abs_disp, DDT_INT, &bottom), DDT_SUCCESS);
  ASSERT_EQ(ddt_type_commit(bottom), DDT_SUCCESS);
  int packed[2] = {0, 0};
  ASSERT_EQ(ddt_pack(nullptr, 1, bottom, 0, packed, sizeof packed, &n), DDT_SUCCESS);
  EXPECT_EQ(packed[0], 2);
  EXPECT_EQ(packed[1], 7);
  const int fresh[2] = {20, 70};
  ASSERT_EQ(ddt_unpack(fresh, sizeof fresh, nullptr, 1, bottom, 0, &n), DDT_SUCCESS);
  EXPECT_EQ(data[1], 20);
  EXPECT_EQ(data[6], 70);
  ASSERT_EQ(ddt_copy(nullptr, 1, bottom, other, 2, DDT_INT), DDT_SUCCESS);
  EXPECT_EQ(other[1], 70);
  // Listing pieces touches no byte: a NULL base lists offsets (the interposer relies on it).
  struct iovec iov[4];
  int64_t nio, bytes;
  ASSERT_EQ(ddt_iov(nullptr, 1, v, 0, iov, 4, &nio, &bytes), DDT_SUCCESS);
  EXPECT_EQ(nio, 4);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(iov[1].iov_base), 8u);
  ddt_type_free(&v);
  ddt_type_free(&neg);
  ddt_type_free(&bottom);
}
