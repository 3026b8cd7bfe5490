// The plan layer: which shape each kind of layout gets, and that the executors' view of a nest
// with a count (NestShape) merges the element dimension exactly when elements continue it.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <random>
#include <utility>
#include <vector>

#include "cpu/copy.hpp"
#include "cpu/cursor.hpp"
#include "cpu/in_order.hpp"
#include "cpu/nest.hpp"
#include "cpu/twin.hpp"
#include "cpu/twin_tables.hpp"
#include "ddtkit.h"
#include "plan/plan.hpp"
#include "type/type.hpp"

namespace {

const ddt::Plan& planned(ddt_type t) {
  EXPECT_EQ(ddt_type_commit(t), DDT_SUCCESS);
  return ddt::plan_of(t);
}

// Trial r of a copy test's byte ranges of a stream of total bytes: the whole stream first, then
// random non-empty ranges.
std::pair<int64_t, int64_t> trial_range(std::mt19937_64& rng, int64_t total, int r) {
  if (r == 0) return {0, total};
  const int64_t lo = static_cast<int64_t>(rng() % static_cast<uint64_t>(total));
  return {lo, lo + 1 + static_cast<int64_t>(rng() % static_cast<uint64_t>(total - lo))};
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
  EXPECT_EQ(planned(table).row_n, 1);
  ddt_type rows5;  // five copies of the short table: rows of one loop, not five table walks
  ASSERT_EQ(ddt_type_contiguous(5, table, &rows5), DDT_SUCCESS);
  EXPECT_EQ(planned(rows5).shape, ddt::Shape::Rows);
  EXPECT_EQ(planned(rows5).row_n, 5);
  EXPECT_EQ(planned(rows5).row_stride, 40);
  ddt_type_free(&rows5);
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

namespace {

// Naive gather of a vector of char: count blocks of bl bytes, stride st.
std::vector<char> gather(const char* src, int64_t count, int64_t bl, int64_t st) {
  std::vector<char> out;
  out.reserve(count * bl);
  for (int64_t i = 0; i < count; ++i) out.insert(out.end(), src + i * st, src + i * st + bl);
  return out;
}

}  // namespace

// Outputs past kStreamBytes take the streaming kernels (non-temporal stores, prefetch of the
// strided source): whole and partial, aligned and not, through the nest and through the walk.
TEST(Executors, StreamingStoresMoveTheSameBytes) {
  // 4-32: output lines assembled from blocks; 64-512: whole lines streamed into a line-aligned
  // output (shift 0). Into outputs 16 and 48 past a line (as malloc's large blocks are) blocks of
  // whole lines stream 16 bytes at a time (stream_gather_chunks): with prefetches below 512 B,
  // and from 512 B only where, as for the pairs with a stride of whole lines at source shifts 16
  // and 48, the blocks leave no line untouched between them; other outputs take plain stores.
  // From a line-aligned source (shift 0), the pairs with a stride of whole lines up to 384 B and a
  // gap no wider than the block read their gap lines too (copy_kernels.hpp's touch_gaps).
  const std::pair<int64_t, int64_t> shapes[] = {{4, 16},    {8, 24},    {16, 40},     {64, 136},  {100, 208},
                                                {512, 1032}, {1024, 2056}, {4099, 8206}, {64, 128}, {128, 192},
                                                {192, 256}, {128, 256}, {192, 384},   {32, 72},   {32, 64},
                                                {128, 320}, {384, 832}};
  EXPECT_TRUE(ddt::touch_gaps(0, 128, 64) && ddt::touch_gaps(0, 384, 192) && ddt::touch_gaps(0, 192, 128));
  EXPECT_FALSE(ddt::touch_gaps(16, 128, 64) || ddt::touch_gaps(0, 512, 256) || ddt::touch_gaps(0, 320, 128));
  for (const auto& [bl, st] : shapes) {
    const int64_t count = (ddt::kStreamBytes + (1 << 20)) / bl + 3;
    std::vector<char> src(count * st + 128);
    for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<char>(i * 131 + (i >> 9));
    ddt_type v;
    ASSERT_EQ(ddt_type_vector(count, bl, st, DDT_CHAR, &v), DDT_SUCCESS);
    ASSERT_EQ(ddt_type_commit(v), DDT_SUCCESS);
    const char* aligned = src.data() + (64 - (reinterpret_cast<uintptr_t>(src.data()) & 63)) % 64;
    for (int64_t shift : {0, 1, 7, 8, 16, 48}) {  // 8: the output reaches a line boundary after some blocks
      const char* in = aligned + shift;
      const std::vector<char> want = gather(in, count, bl, st);
      std::vector<char> out(want.size() + 128, 0);
      char* line = out.data() + 64 - (reinterpret_cast<uintptr_t>(out.data()) & 63);  // line-aligned, a byte or more in
      int64_t n;
      ASSERT_EQ(ddt_pack(in, 1, v, 0, line + shift, want.size(), &n), DDT_SUCCESS);
      EXPECT_EQ(0, std::memcmp(line + shift, want.data(), want.size())) << bl << " " << shift;
      EXPECT_EQ(line[-1], 0);  // neighbours untouched
      EXPECT_EQ(line[shift + want.size()], 0);
      const int64_t off = 12345;  // a partial range that is still past the threshold
      std::fill(out.begin(), out.end(), 0);
      ASSERT_EQ(ddt_pack(in, 1, v, off, out.data(), want.size() - off, &n), DDT_SUCCESS);
      EXPECT_EQ(0, std::memcmp(out.data(), want.data() + off, want.size() - off)) << bl << " " << shift;
      std::vector<char> back(src.size(), 0);
      ASSERT_EQ(ddt_unpack(want.data(), want.size(), back.data() + shift, 1, v, 0, &n), DDT_SUCCESS);
      EXPECT_EQ(gather(back.data() + shift, count, bl, st), want) << bl << " " << shift;
    }
    ddt_type_free(&v);
  }
  // A 6-dimensional subarray is deeper than a plan's nest: the walk's streaming path.
  const int64_t sizes[6] = {4, 4, 4, 4, 4, 70100}, sub[6] = {3, 3, 3, 3, 3, 70001}, starts[6] = {1, 0, 1, 0, 1, 3};
  ddt_type s6;
  ASSERT_EQ(ddt_type_subarray(6, sizes, sub, starts, DDT_ORDER_C, DDT_CHAR, &s6), DDT_SUCCESS);
  ASSERT_EQ(ddt_type_commit(s6), DDT_SUCCESS);
  EXPECT_EQ(ddt::plan_of(s6).shape, ddt::Shape::Walk);
  int64_t total, lb, ext;
  ddt_type_size(s6, &total);
  ddt_type_extent(s6, &lb, &ext);
  ASSERT_GE(total, ddt::kStreamBytes);
  std::vector<char> arr(ext);
  for (size_t i = 0; i < arr.size(); ++i) arr[i] = static_cast<char>(i * 7 + 1);
  std::vector<char> via_iov, out(total);
  for (int64_t off = 0; off < total;) {  // the expected stream, from the listing
    struct iovec iov[64];
    int64_t nio, bytes;
    ASSERT_EQ(ddt_iov(arr.data(), 1, s6, off, iov, 64, &nio, &bytes), DDT_SUCCESS);
    for (int64_t i = 0; i < nio; ++i)
      via_iov.insert(via_iov.end(), static_cast<char*>(iov[i].iov_base), static_cast<char*>(iov[i].iov_base) + iov[i].iov_len);
    off += bytes;
  }
  int64_t n;
  ASSERT_EQ(ddt_pack(arr.data(), 1, s6, 0, out.data(), total, &n), DDT_SUCCESS);
  EXPECT_EQ(out, via_iov);
  ddt_type_free(&s6);
  // The walk's streaming path with 8-byte blocks (output lines assembled from blocks): a 6-D
  // subarray of doubles, every other double of the innermost dimension, 2.5 M blocks.
  const int64_t sz[6] = {20, 20, 20, 20, 20, 2}, sb[6] = {19, 19, 19, 19, 19, 1}, st[6] = {1, 0, 1, 0, 1, 1};
  ASSERT_EQ(ddt_type_subarray(6, sz, sb, st, DDT_ORDER_C, DDT_DOUBLE, &s6), DDT_SUCCESS);
  ASSERT_EQ(ddt_type_commit(s6), DDT_SUCCESS);
  EXPECT_EQ(ddt::plan_of(s6).shape, ddt::Shape::Walk);
  ddt_type_size(s6, &total);
  ASSERT_GE(total, ddt::kStreamBytes);
  std::vector<double> grid(20 * 20 * 20 * 20 * 20 * 2);
  for (size_t i = 0; i < grid.size(); ++i) grid[i] = static_cast<double>(i);
  std::vector<double> expect;
  for (int64_t a = 1; a < 20; ++a)
    for (int64_t b = 0; b < 19; ++b)
      for (int64_t c = 1; c < 20; ++c)
        for (int64_t d = 0; d < 19; ++d)
          for (int64_t e = 1; e < 20; ++e) expect.push_back(grid[((((a * 20 + b) * 20 + c) * 20 + d) * 20 + e) * 2 + 1]);
  for (int64_t shift : {0, 8}) {  // 8: the output reaches a line boundary after a block
    std::vector<char> o(total + 128, 0);
    char* at = o.data() + 64 - (reinterpret_cast<uintptr_t>(o.data()) & 63) + shift;
    ASSERT_EQ(ddt_pack(grid.data(), 1, s6, 0, at, total, &n), DDT_SUCCESS);
    EXPECT_EQ(0, std::memcmp(at, expect.data(), total)) << shift;
    EXPECT_EQ(at[-1], 0);
    EXPECT_EQ(at[total], 0);
  }
  ddt_type_free(&s6);
}

// The shuffle kernel for tiny blocks (width < stride <= 8): every width and stride it takes, any
// count, partial ranges, with the source's last block ending right before an unmapped page (the
// vector loop must not read past it) and the output's neighbours left alone.
TEST(Executors, ShuffleGatherOfTinyBlocks) {
  const long page = sysconf(_SC_PAGESIZE);
  char* map = static_cast<char*>(mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(map, MAP_FAILED);
  ASSERT_EQ(mprotect(map + page, page, PROT_NONE), 0);
  for (int64_t i = 0; i < page; ++i) map[i] = static_cast<char>(i * 37 + 11);
  std::vector<int64_t> counts;  // every count up to past the steps' boundaries, and longer runs
  for (int64_t c = 1; c <= 40; ++c) counts.push_back(c);
  counts.push_back(64), counts.push_back(333);
  for (int64_t w = 1; w <= 7; ++w)
    for (int64_t s = w + 1; s <= 8; ++s)
      for (int64_t count : counts) {
        ddt_type v;
        ASSERT_EQ(ddt_type_vector(count, w, s, DDT_CHAR, &v), DDT_SUCCESS);
        ASSERT_EQ(ddt_type_commit(v), DDT_SUCCESS);
        const char* src = map + page - ((count - 1) * s + w);  // last byte just below the guard page
        const std::vector<char> want = gather(src, count, w, s);
        const int64_t total = count * w;
        for (int64_t off : {int64_t{0}, int64_t{1}, total / 3}) {
          std::vector<char> out(total + 32, 0x5a);
          int64_t n;
          ASSERT_EQ(ddt_pack(src, 1, v, off, out.data() + 16, total - off, &n), DDT_SUCCESS);
          EXPECT_EQ(0, std::memcmp(out.data() + 16, want.data() + off, total - off)) << w << " " << s << " " << count;
          for (int64_t i = 0; i < 16; ++i) EXPECT_EQ(out[i], 0x5a);
          for (int64_t i = 16 + total - off; i < total + 32; ++i) ASSERT_EQ(out[i], 0x5a) << w << " " << s << " " << count;
        }
        ddt_type_free(&v);
      }
  munmap(map, 2 * page);
}

// Strided blocks of 128 bytes and more (copy_kernels.hpp's wide_blocks_avx2: a gather loads each
// block's two ends first, and from kWideMin prefetches two blocks ahead): widths around the
// kernel's 128-byte steps, strides forward and backward, outputs at every alignment to 32, the
// source's last byte just below an unmapped page; pack then unpack into a cleared copy, and the
// bytes around the output and between the blocks left alone.
TEST(Executors, StridedWideBlocks) {
  const long page = sysconf(_SC_PAGESIZE);
  const int64_t span = 64 * page;
  char* map = static_cast<char*>(mmap(nullptr, span + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(map, MAP_FAILED);
  ASSERT_EQ(mprotect(map + span, page, PROT_NONE), 0);
  for (int64_t i = 0; i < span; ++i) map[i] = static_cast<char>(i * 131 + (i >> 9) * 7 + 3);
  for (int64_t w : {64, 128, 129, 160, 192, 255, 256, 257, 383, 384, 511, 512, 700, 1000, 1024, 1025, 2047, 2048, 4099})
    for (int64_t gap : {int64_t{1}, w, 3 * w})
      for (int64_t count : {1, 2, 3, 7})
        for (bool backward : {false, true}) {
          const int64_t stride = (backward ? -1 : 1) * (w + gap), total = count * w;
          ddt_type v;
          ASSERT_EQ(ddt_type_hvector(count, w, stride, DDT_CHAR, &v), DDT_SUCCESS);
          ASSERT_EQ(ddt_type_commit(v), DDT_SUCCESS);
          // The element's lowest block starts at base; the highest ends at the guard page.
          const int64_t reach = (count - 1) * (w + gap) + w;
          const char* src = map + span - reach + (backward ? (count - 1) * (w + gap) : 0);
          const std::vector<char> expect = gather(src, count, w, stride);
          for (int64_t shift : {0, 1, 8, 16, 31}) {
            std::vector<char> o(total + 128, 0x5a);
            char* at = o.data() + 64 - (reinterpret_cast<uintptr_t>(o.data()) & 63) + shift;
            int64_t n = 0;
            ASSERT_EQ(ddt_pack(src, 1, v, 0, at, total, &n), DDT_SUCCESS);
            ASSERT_EQ(0, std::memcmp(at, expect.data(), total)) << w << " " << stride << " " << count << " " << shift;
            EXPECT_EQ(at[-1], 0x5a);
            EXPECT_EQ(at[total], 0x5a);
            // Unpack into a zeroed buffer of the element's reach: the blocks come back, the gaps stay 0.
            std::vector<char> back(reach + 64, 0);
            char* base = back.data() + 32 + (backward ? (count - 1) * (w + gap) : 0);
            ASSERT_EQ(ddt_unpack(at, total, base, 1, v, 0, &n), DDT_SUCCESS);
            for (int64_t i = 0; i < count; ++i)
              ASSERT_EQ(0, std::memcmp(base + i * stride, expect.data() + i * w, w)) << w << " " << stride << " " << i;
            int64_t nonzero = 0;
            for (char c : back) nonzero += c != 0;
            int64_t want_nonzero = 0;
            for (char c : expect) want_nonzero += c != 0;
            EXPECT_EQ(nonzero, want_nonzero) << w << " " << stride << " " << count;
          }
          ddt_type_free(&v);
        }
  munmap(map, span + page);
}

// One page mapped at least 8 GiB away from near (tried at several distances; pages stay mapped
// for the test program's life), or null.
char* far_page(const void* near) {
  static char* page = nullptr;
  const auto distance = [&](const void* p) {
    const intptr_t d = reinterpret_cast<intptr_t>(p) - reinterpret_cast<intptr_t>(near);
    return d < 0 ? -d : d;
  };
  if (page && distance(page) < (intptr_t{8} << 30)) page = nullptr;  // near this array: another one
  if (!page) {  // where the kernel puts mappings (below the stack) is usually far from the heap
    void* p = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p != MAP_FAILED && distance(p) >= (intptr_t{8} << 30)) page = static_cast<char*>(p);
    else if (p != MAP_FAILED) munmap(p, 4096);
  }
  for (uintptr_t gib = 8; !page && gib <= 1024; gib *= 2) {
    const uintptr_t at = (reinterpret_cast<uintptr_t>(near) + (gib << 30)) & ~uintptr_t{0xfff};
    void* p = mmap(reinterpret_cast<void*>(at), 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (p != MAP_FAILED) page = static_cast<char*>(p);
  }
  return page;
}

// List plans (a long table of blocks of one width): 32-bit displacements, and 64-bit ones
// (absolute addresses with a NULL buffer), several elements, partial ranges, pack and unpack.
TEST(Executors, ListsOfOneWidth) {
  std::mt19937_64 rng(7);
  for (int64_t w : {1, 3, 4, 8, 24, 100}) {
    const int64_t n = 50 + rng() % 200, span = 8 * n * w + 64, count = 1 + rng() % 3;
    std::vector<char> arr(count * span + 64);
    for (size_t i = 0; i < arr.size(); ++i) arr[i] = static_cast<char>(rng());
    std::vector<int64_t> d(n);  // distinct slots of w bytes with gaps between them (no merging), in random order
    std::vector<int64_t> slots(4 * n);
    for (int64_t i = 0; i < 4 * n; ++i) slots[i] = 2 * i * w;
    const auto has_run = [&] {  // three at one stride would canonicalise into a run (seq-run)
      for (int64_t i = 0; i + 2 < n; ++i)
        if (slots[i + 1] - slots[i] == slots[i + 2] - slots[i + 1]) return true;
      return false;
    };
    do std::shuffle(slots.begin(), slots.end(), rng);
    while (has_run());
    for (int64_t i = 0; i < n; ++i) d[i] = slots[i];
    for (bool absolute : {false, true}) {
      // Absolute: the first block lives in a page mapped 8 GiB or more from the array that holds
      // the others, so the displacements need 64 bits.
      char* far = far_page(arr.data());
      ASSERT_NE(far, nullptr) << "no page could be mapped 8 GiB or more from the heap";
      for (int64_t i = 0; i < w; ++i) far[i] = arr[d[0] + i];
      std::vector<int64_t> ds = d;
      if (absolute) {
        for (int64_t& x : ds) x += static_cast<int64_t>(reinterpret_cast<uintptr_t>(arr.data()));
        ds[0] = static_cast<int64_t>(reinterpret_cast<uintptr_t>(far));
      }
      ddt_type t, r;
      ASSERT_EQ(ddt_type_hindexed_block(n, w, ds.data(), DDT_BYTE, &t), DDT_SUCCESS);
      ASSERT_EQ(ddt_type_resized(t, 0, span, &r), DDT_SUCCESS);
      ASSERT_EQ(ddt_type_commit(r), DDT_SUCCESS);
      const ddt::Plan& p = ddt::plan_of(r);
      EXPECT_EQ(p.shape, ddt::Shape::List) << w;
      EXPECT_EQ(p.list64.empty(), !absolute) << w;
      EXPECT_EQ(p.plain[1], ddt::kPlainList) << w;  // one whole element: the entry point's plain call
      EXPECT_EQ(p.plain[0], ddt::kPlainList) << w;
      const char* buf = absolute ? nullptr : arr.data();
      const int64_t c = absolute ? 1 : count;  // absolute lists name one element's addresses
      std::vector<char> want;
      for (int64_t k = 0; k < c; ++k)
        for (int64_t i = 0; i < n; ++i) want.insert(want.end(), arr.data() + k * span + d[i], arr.data() + k * span + d[i] + w);
      const int64_t total = static_cast<int64_t>(want.size());
      std::vector<char> got(total);
      int64_t m;
      for (int64_t off = 0; off < total;) {  // random pieces
        const int64_t len = std::min<int64_t>(total - off, 1 + rng() % (3 * w + 5));
        ASSERT_EQ(ddt_pack(buf, c, r, off, got.data() + off, len, &m), DDT_SUCCESS);
        off += len;
      }
      EXPECT_EQ(got, want) << w << " " << absolute;
      std::fill(got.begin(), got.end(), 0);  // whole, and in pieces of up to 40 blocks (the gather kernels' steps)
      ASSERT_EQ(ddt_pack(buf, c, r, 0, got.data(), total, &m), DDT_SUCCESS);
      EXPECT_EQ(got, want) << w << " " << absolute << " whole";
      {  // one element, both ways: the plain call
        std::vector<char> one(n * w), back1(arr.size(), 0), ref1(arr.size(), 0);
        ASSERT_EQ(ddt_pack(buf, 1, r, 0, one.data(), n * w, &m), DDT_SUCCESS);
        EXPECT_EQ(0, std::memcmp(one.data(), want.data(), n * w)) << w << " " << absolute << " one element";
        if (!absolute) {
          for (int64_t i = 0; i < n; ++i) std::memcpy(ref1.data() + d[i], one.data() + i * w, w);
          ASSERT_EQ(ddt_unpack(one.data(), n * w, back1.data(), 1, r, 0, &m), DDT_SUCCESS);
          EXPECT_EQ(back1, ref1) << w << " one element";
        }
      }
      std::fill(got.begin(), got.end(), 0);
      for (int64_t off = 0; off < total;) {
        const int64_t len = std::min<int64_t>(total - off, 1 + rng() % (40 * w));
        ASSERT_EQ(ddt_pack(buf, c, r, off, got.data() + off, len, &m), DDT_SUCCESS);
        off += len;
      }
      EXPECT_EQ(got, want) << w << " " << absolute << " long pieces";
      std::vector<char> back(arr.size(), 0), ref(arr.size(), 0);
      for (int64_t k = 0; k < c; ++k)
        for (int64_t i = 0; i < n; ++i) std::memcpy(ref.data() + k * span + d[i], want.data() + (k * n + i) * w, w);
      if (!absolute) {
        ASSERT_EQ(ddt_unpack(want.data(), total, back.data(), c, r, 0, &m), DDT_SUCCESS);
        EXPECT_EQ(back, ref) << w;
      }
      ddt_type_free(&t);
      ddt_type_free(&r);
    }
  }
}

// Segmented lists: a struct of index lists of different widths and a nested vector (an entry
// that is not a block) packs and unpacks as its listing says, for several elements; partial
// ranges take the walk.
TEST(Executors, SegmentedLists) {
  std::mt19937_64 rng(11);
  std::vector<int64_t> d24, d8;
  for (int64_t i = 0; i < 300; ++i) d24.push_back(64 * static_cast<int64_t>(rng() % 4000));
  for (int64_t i = 0; i < 200; ++i) d8.push_back(64 * static_cast<int64_t>(rng() % 4000) + 32);
  std::sort(d24.begin(), d24.end());
  d24.erase(std::unique(d24.begin(), d24.end()), d24.end());
  std::shuffle(d24.begin(), d24.end(), rng);
  std::sort(d8.begin(), d8.end());
  d8.erase(std::unique(d8.begin(), d8.end()), d8.end());
  std::shuffle(d8.begin(), d8.end(), rng);
  ddt_type a, b, v, s, r;
  ASSERT_EQ(ddt_type_hindexed_block(d24.size(), 24, d24.data(), DDT_BYTE, &a), DDT_SUCCESS);
  ASSERT_EQ(ddt_type_hindexed_block(d8.size(), 1, d8.data(), DDT_DOUBLE, &b), DDT_SUCCESS);
  ASSERT_EQ(ddt_type_vector(3, 1, 7, DDT_INT, &v), DDT_SUCCESS);
  const int64_t bls[3] = {1, 1, 1}, at[3] = {0, 0, 40};
  const ddt_type ts[3] = {a, b, v};
  ASSERT_EQ(ddt_type_struct(3, bls, at, ts, &s), DDT_SUCCESS);
  const int64_t span = 64 * 4000 + 128;
  ASSERT_EQ(ddt_type_resized(s, 0, span, &r), DDT_SUCCESS);
  ASSERT_EQ(ddt_type_commit(r), DDT_SUCCESS);
  const ddt::Plan& p = ddt::plan_of(r);
  ASSERT_EQ(p.shape, ddt::Shape::List);
  EXPECT_FALSE(p.uniform_list());
  for (int64_t count : {1, 3}) {
    std::vector<char> arr(count * span);
    for (size_t i = 0; i < arr.size(); ++i) arr[i] = static_cast<char>(rng());
    int64_t total;
    ddt_type_size(r, &total);
    total *= count;
    std::vector<char> want;
    for (int64_t off = 0; off < total;) {
      struct iovec iov[64];
      int64_t nio, bytes;
      ASSERT_EQ(ddt_iov(arr.data(), count, r, off, iov, 64, &nio, &bytes), DDT_SUCCESS);
      for (int64_t i = 0; i < nio; ++i)
        want.insert(want.end(), static_cast<char*>(iov[i].iov_base), static_cast<char*>(iov[i].iov_base) + iov[i].iov_len);
      off += bytes;
    }
    std::vector<char> got(total), parts(total);
    int64_t n;
    ASSERT_EQ(ddt_pack(arr.data(), count, r, 0, got.data(), total, &n), DDT_SUCCESS);
    EXPECT_EQ(got, want) << count;
    for (int64_t off = 0; off < total; off += 777)
      ASSERT_EQ(ddt_pack(arr.data(), count, r, off, parts.data() + off, std::min<int64_t>(777, total - off), &n), DDT_SUCCESS);
    EXPECT_EQ(parts, want) << count;
    std::vector<char> back(arr.size(), 0), ref(arr.size(), 0);
    ASSERT_EQ(ddt_unpack(want.data(), total, back.data(), count, r, 0, &n), DDT_SUCCESS);
    for (int64_t off = 0; off < total;) {  // the reference: the same listing, written back
      struct iovec iov[64];
      int64_t nio, bytes;
      ASSERT_EQ(ddt_iov(ref.data(), count, r, off, iov, 64, &nio, &bytes), DDT_SUCCESS);
      for (int64_t i = 0, at2 = off; i < nio; at2 += iov[i].iov_len, ++i)
        std::memcpy(iov[i].iov_base, want.data() + at2, iov[i].iov_len);
      off += bytes;
    }
    EXPECT_EQ(back, ref) << count;
  }
  for (ddt_type* t : {&a, &b, &v, &s, &r}) ddt_type_free(t);
}

// A list entry whose node is a tree of blocks is listed block by block (LAMMPS's arrays of one
// spacing: a vector of an index list), unless the tree has more than the plan's expansion limit
// of blocks, which stays one walked entry: both against the type's own listing.
TEST(Executors, ListsExpandSmallTrees) {
  std::mt19937_64 rng(5);
  std::vector<int64_t> d;
  for (int64_t i = 0; i < 400; ++i) d.push_back(i * 40 + static_cast<int64_t>(rng() % 16));
  std::shuffle(d.begin(), d.end(), rng);
  for (int64_t big : {int64_t{3}, int64_t{200}}) {  // 1,200 and 80,000 blocks
    ddt_type a, t, v, s;
    ASSERT_EQ(ddt_type_hindexed_block(d.size(), 12, d.data(), DDT_BYTE, &a), DDT_SUCCESS);
    ASSERT_EQ(ddt_type_hindexed_block(d.size(), 1, d.data(), DDT_INT, &t), DDT_SUCCESS);
    ASSERT_EQ(ddt_type_hvector(big, 1, 16 * 1024, t, &v), DDT_SUCCESS);  // big copies of the list
    const int64_t bls[2] = {1, 1}, at[2] = {0, 20000};
    const ddt_type ts[2] = {a, v};
    ASSERT_EQ(ddt_type_struct(2, bls, at, ts, &s), DDT_SUCCESS);
    ASSERT_EQ(ddt_type_commit(s), DDT_SUCCESS);
    const ddt::Plan& p = ddt::plan_of(s);
    ASSERT_EQ(p.shape, ddt::Shape::List) << big;
    bool walked = false;
    for (const ddt::Plan::Segment& g : p.segments) walked |= g.width == 0;
    EXPECT_EQ(walked, big > 3) << "trees of more blocks than the limit stay one walked entry";
    int64_t lb, extent, total;
    ddt_type_true_extent(s, &lb, &extent);
    ddt_type_size(s, &total);
    std::vector<char> arr(lb + extent);
    for (size_t i = 0; i < arr.size(); ++i) arr[i] = static_cast<char>(rng());
    std::vector<char> want;
    for (int64_t off = 0; off < total;) {
      struct iovec iov[256];
      int64_t nio, bytes;
      ASSERT_EQ(ddt_iov(arr.data(), 1, s, off, iov, 256, &nio, &bytes), DDT_SUCCESS);
      for (int64_t i = 0; i < nio; ++i)
        want.insert(want.end(), static_cast<char*>(iov[i].iov_base), static_cast<char*>(iov[i].iov_base) + iov[i].iov_len);
      off += bytes;
    }
    std::vector<char> got(total);
    int64_t n;
    ASSERT_EQ(ddt_pack(arr.data(), 1, s, 0, got.data(), total, &n), DDT_SUCCESS);
    EXPECT_EQ(got, want) << big;
    std::vector<char> pieces(total);  // partial ranges: listed where every entry is, else walked
    for (int64_t off = 0; off < total; off += 1001)
      ASSERT_EQ(ddt_pack(arr.data(), 1, s, off, pieces.data() + off, std::min<int64_t>(1001, total - off), &n), DDT_SUCCESS);
    EXPECT_EQ(pieces, want) << big;
    std::vector<char> back(arr.size(), 0);
    for (int64_t off = 0; off < total; off += 1001)
      ASSERT_EQ(ddt_unpack(want.data() + off, std::min<int64_t>(1001, total - off), back.data(), 1, s, off, &n), DDT_SUCCESS);
    std::vector<char> again(total);
    ASSERT_EQ(ddt_pack(back.data(), 1, s, 0, again.data(), total, &n), DDT_SUCCESS);
    EXPECT_EQ(again, want) << big;
    for (ddt_type* x : {&a, &t, &v, &s}) ddt_type_free(x);
  }
}

// Run-time widths from 1 KiB to 8 KiB take the 32-byte loop (narrower ones memcpy): widths that
// are and are not multiples of 32, pack and unpack, the gaps left alone.
TEST(Executors, WideBlocksInCache) {
  for (int64_t bl : {127, 128, 161, 333, 511, 512, 1000, 1024, 1030, 4099, 8191}) {  // both AVX2 ranges and their edges
    const int64_t count = 37, st = bl + 24;
    std::vector<char> src(count * st + 64);
    for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<char>(i * 13 + 5);
    ddt_type v;
    ASSERT_EQ(ddt_type_vector(count, bl, st, DDT_CHAR, &v), DDT_SUCCESS);
    ASSERT_EQ(ddt_type_commit(v), DDT_SUCCESS);
    const std::vector<char> want = gather(src.data() + 3, count, bl, st);
    std::vector<char> out(want.size());
    int64_t n;
    ASSERT_EQ(ddt_pack(src.data() + 3, 1, v, 0, out.data(), out.size(), &n), DDT_SUCCESS);
    EXPECT_EQ(out, want) << bl;
    std::vector<char> back(src.size(), 0x11), ref(src.size(), 0x11);
    for (int64_t i = 0; i < count; ++i) std::memcpy(ref.data() + 3 + i * st, want.data() + i * bl, bl);
    ASSERT_EQ(ddt_unpack(want.data(), want.size(), back.data() + 3, 1, v, 0, &n), DDT_SUCCESS);
    EXPECT_EQ(back, ref) << bl;
    ddt_type_free(&v);
  }
}

// Every block width from 1 to 130 B (the fixed-width kernels, the paired gather of 24 and 40 B
// blocks, the overlapping moves of the widths between, the 32-byte loops above) at odd and even
// counts, packed and unpacked as whole single elements (the entry points' plain call), as two
// elements and from a byte offset (the general way), against a plain byte loop; an unpack writes
// nothing between the blocks. Contiguous types around the single-copy thresholds too.
TEST(Executors, EveryWidthWholeAndPartial) {
  std::vector<int64_t> widths;
  for (int64_t w = 1; w <= 130; ++w) widths.push_back(w);
  for (int64_t w : {255, 256, 257, 480, 2047, 2048, 2560, 4095, 4096}) widths.push_back(w);
  for (int64_t bl : widths)
    for (int64_t count : {1, 2, 5, 12}) {
      const int64_t st = bl + 8 + bl % 24, reps = 2;
      std::vector<char> src(reps * count * st + 64);
      for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<char>(i * 29 + bl);
      ddt_type u, v;  // elements continue the vector: its extent is count strides
      ASSERT_EQ(ddt_type_vector(count, bl, st, DDT_CHAR, &u), DDT_SUCCESS);
      ASSERT_EQ(ddt_type_resized(u, 0, count * st, &v), DDT_SUCCESS);
      ddt_type_free(&u);
      ASSERT_EQ(ddt_type_commit(v), DDT_SUCCESS);
      const std::vector<char> want = gather(src.data() + 5, reps * count, bl, st);
      for (int64_t elements : {int64_t{1}, reps})
        for (int64_t off : {int64_t{0}, bl / 2 + 1}) {
          const int64_t total = elements * count * bl;
          if (off >= total) continue;
          std::vector<char> out(total - off + 16, 0x5a);
          int64_t n;
          ASSERT_EQ(ddt_pack(src.data() + 5, elements, v, off, out.data(), total - off, &n), DDT_SUCCESS);
          ASSERT_EQ(n, total - off);
          EXPECT_TRUE(std::equal(want.begin() + off, want.begin() + total, out.begin())) << bl << " " << count;
          EXPECT_TRUE(std::all_of(out.end() - 16, out.end(), [](char c) { return c == 0x5a; })) << bl;
          std::vector<char> back(src.size(), 0x11), ref(src.size(), 0x11);
          for (int64_t b = 0, at = 0; b < elements * count; ++b)
            for (int64_t j = 0; j < bl; ++j, ++at)
              if (at >= off) ref[5 + b * st + j] = want[at];
          ASSERT_EQ(ddt_unpack(want.data() + off, total - off, back.data() + 5, elements, v, off, &n), DDT_SUCCESS);
          EXPECT_EQ(back, ref) << bl << " " << count << " " << elements << " " << off;
        }
      ddt_type_free(&v);
    }
}

// Paired gathers of 24 and 40 B blocks at strides of a page and more over spans past kFarSpan
// (the prefetching loop), odd and even counts, whole and from an offset.
TEST(Executors, PairedGathersAtPageStrides) {
  for (int64_t bl : {24, 40})
    for (int64_t st : {int64_t{4096}, int64_t{4160}, int64_t{16400}})
      for (int64_t count : {int64_t{7}, int64_t{64}, int64_t{101}}) {
        std::vector<char> src(count * st);
        for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<char>(i * 7 + bl);
        ddt_type v;
        ASSERT_EQ(ddt_type_vector(count, bl, st, DDT_CHAR, &v), DDT_SUCCESS);
        ASSERT_EQ(ddt_type_commit(v), DDT_SUCCESS);
        const std::vector<char> want = gather(src.data(), count, bl, st);
        for (int64_t off : {int64_t{0}, bl + 3}) {
          std::vector<char> out(want.size() - off);
          int64_t n;
          ASSERT_EQ(ddt_pack(src.data(), 1, v, off, out.data(), out.size(), &n), DDT_SUCCESS);
          EXPECT_TRUE(std::equal(out.begin(), out.end(), want.begin() + off)) << bl << " " << st << " " << count;
        }
        ddt_type_free(&v);
      }
}

// Tiny blocks packed with byte shuffles (copy_kernels.hpp's gather_shuffle, the plan's shuffle
// mask: width < stride <= 8): 1, 2 and 4 B blocks at strides of 2 W and 3 W (1 B also at 4),
// counts around the kernel's 16-byte steps, and partial packs that start and end inside the run;
// the last block ends at a page followed by an inaccessible one, so a load that read past it
// would fault, and nothing may be written past the output.
TEST(Executors, TinyBlocksShuffleGather) {
  const long page = sysconf(_SC_PAGESIZE);
  for (int64_t w : {1, 2, 4}) {
    std::vector<int64_t> strides = {2 * w, 3 * w};
    if (w == 1) strides.push_back(4);
    for (int64_t st : strides) {
      for (int64_t count : {1, 5, 63, 64, 65, 66, 67, 70, 71, 200, 1001, 4096}) {
        const int64_t span = (count - 1) * st + w;
        const size_t len = static_cast<size_t>((span + page - 1) / page + 1) * static_cast<size_t>(page);
        char* mem = static_cast<char*>(mmap(nullptr, len + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
        ASSERT_NE(mem, MAP_FAILED);
        ASSERT_EQ(mprotect(mem + len, page, PROT_NONE), 0);
        char* src = mem + len - span;  // the last block ends at the guard page
        for (int64_t i = 0; i < span; ++i) src[i] = static_cast<char>(i * 29 + w + st);
        ddt_type v;
        ASSERT_EQ(ddt_type_vector(count, w, st, DDT_CHAR, &v), DDT_SUCCESS);
        ASSERT_EQ(ddt_type_commit(v), DDT_SUCCESS);
        const std::vector<char> want = gather(src, count, w, st);
        std::vector<char> out(want.size() + 32, 0x5a);
        int64_t n = 0;
        ASSERT_EQ(ddt_pack(src, 1, v, 0, out.data(), static_cast<int64_t>(want.size()), &n), DDT_SUCCESS);
        EXPECT_EQ(std::vector<char>(out.begin(), out.begin() + n), want) << w << " " << st << " " << count;
        for (size_t i = want.size(); i < out.size(); ++i) ASSERT_EQ(out[i], 0x5a) << "wrote past the output";
        // Partial packs: from inside the run to inside the run, and to its end.
        const int64_t total = static_cast<int64_t>(want.size());
        for (int64_t from : {int64_t{1}, total / 3, total / 2 + 1}) {
          for (int64_t to : {total - 3, total}) {
            if (from >= to) continue;
            std::vector<char> part(static_cast<size_t>(to - from) + 32, 0x5a);
            ASSERT_EQ(ddt_pack(src, 1, v, from, part.data(), to - from, &n), DDT_SUCCESS);
            EXPECT_EQ(n, to - from);
            EXPECT_TRUE(std::equal(part.begin(), part.begin() + n, want.begin() + from)) << w << " " << st << " " << count << " " << from;
            EXPECT_EQ(part[static_cast<size_t>(n)], 0x5a);
          }
        }
        ddt_type_free(&v);
        munmap(mem, len + page);
      }
    }
  }
}

// Tiny blocks moved with AVX-512 byte permutes (cpu/permute_avx512.hpp, the plan's permute
// kernel: width <= 12, width < stride <= 64), packed and unpacked: every width, strides on both
// sides of the kernel's limits, counts around its steps; whole and partial moves, one element and
// several (the nest's general path), and rows of runs (a two-level nest). The source's last block
// ends at an unmapped page (no load may reach past it); the unpack's destination ends there too,
// and so does the packed input (a masked load or store may not touch what its mask leaves out);
// gap bytes must keep their values (the masked store writes none of them). Where the CPU has the
// kernel (and DDTKIT_AVX512 is not 0) the plan must have chosen it exactly for the shapes the
// rule names; the test runs again with DDTKIT_AVX512=0 (CMakeLists.txt), where no plan may.
TEST(Executors, PermuteTinyBlocks) {
  const char* env = std::getenv("DDTKIT_AVX512");
  const bool cpu = __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vbmi") &&
                   !(env && std::strcmp(env, "0") == 0);
  if (!cpu) std::printf("PermuteTinyBlocks: no AVX-512 VBMI here (or DDTKIT_AVX512=0): the other kernels are checked\n");
  const long page = sysconf(_SC_PAGESIZE);
  // A region of `bytes` whose end is followed by an inaccessible page.
  struct Guarded {
    char* map = nullptr;
    size_t len = 0;
    char* end = nullptr;
    Guarded(int64_t bytes, long page) {
      len = static_cast<size_t>((bytes + page - 1) / page + 1) * static_cast<size_t>(page);
      map = static_cast<char*>(mmap(nullptr, len + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
      if (map != MAP_FAILED) mprotect(map + len, page, PROT_NONE);
      end = map + len;
    }
    ~Guarded() { munmap(map, len + page_size()); }
    static size_t page_size() { return static_cast<size_t>(sysconf(_SC_PAGESIZE)); }
  };
  int64_t chosen = 0;
  for (int64_t w = 1; w <= 13; ++w) {
    for (int64_t s : {w + 1, 2 * w, 3 * w, 5 * w, int64_t{63}, int64_t{64}, int64_t{65}}) {
      if (s <= w) continue;
      for (int64_t count : {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 63, 64, 65, 100, 257}) {
        const int64_t span = (count - 1) * s + w, total = count * w;
        ddt_type v;
        ASSERT_EQ(ddt_type_hvector(count, w, s, DDT_BYTE, &v), DDT_SUCCESS);
        ASSERT_EQ(ddt_type_commit(v), DDT_SUCCESS);
        const ddt::Plan& plan = ddt::plan_of(v);
        const int64_t gather_k = std::min<int64_t>(64 / w, (128 - w) / s + 1), scatter_k = (64 - w) / s + 1;
        const bool rule = cpu && count > 1 && w <= 12 && s <= 64 && gather_k >= 4;
        const bool unpack_rule = rule && (scatter_k >= 4 || (scatter_k == 3 && w > 8));
        EXPECT_EQ(plan.permute_stride, rule ? s : 0) << w << " " << s << " " << count;
        EXPECT_EQ(plan.permute_blocks[0], unpack_rule ? scatter_k : 0) << w << " " << s << " " << count;
        chosen += plan.permute_stride != 0;
        Guarded in(span, page);
        ASSERT_NE(in.map, MAP_FAILED);
        char* src = in.end - span;  // the last block ends at the guard page
        for (int64_t i = 0; i < span; ++i) src[i] = static_cast<char>(i * 29 + w * 7 + s);
        const std::vector<char> want = gather(src, count, w, s);
        // Whole and partial packs.
        for (int64_t from : {int64_t{0}, int64_t{1}, total / 3}) {
          for (int64_t to : {total - 1, total}) {
            if (from >= to) continue;
            std::vector<char> out(static_cast<size_t>(to - from) + 80, 0x5a);
            int64_t n = 0;
            ASSERT_EQ(ddt_pack(src, 1, v, from, out.data() + 8, to - from, &n), DDT_SUCCESS);
            ASSERT_EQ(n, to - from);
            ASSERT_TRUE(std::equal(out.begin() + 8, out.begin() + 8 + n, want.begin() + from)) << w << " " << s << " " << count << " " << from;
            for (int64_t i = 0; i < 8; ++i) ASSERT_EQ(out[i], 0x5a);
            for (size_t i = static_cast<size_t>(8 + n); i < out.size(); ++i) ASSERT_EQ(out[i], 0x5a) << "wrote past the output";
          }
        }
        // Unpack: the packed bytes end at a guard page, and so does the destination's last block.
        Guarded packed(total, page), dst(span, page);
        ASSERT_NE(packed.map, MAP_FAILED);
        ASSERT_NE(dst.map, MAP_FAILED);
        char* seq = packed.end - total;
        std::memcpy(seq, want.data(), static_cast<size_t>(total));
        char* base = dst.end - span;
        for (int64_t from : {int64_t{0}, int64_t{1}, total / 2}) {
          for (int64_t i = 0; i < span; ++i) base[i] = static_cast<char>(0xa5 ^ i);
          int64_t n = 0;
          ASSERT_EQ(ddt_unpack(seq + from, total - from, base, 1, v, from, &n), DDT_SUCCESS);
          ASSERT_EQ(n, total - from);
          for (int64_t i = 0; i < span; ++i) {
            const int64_t b = i / s, o = i % s, at = b * w + o;  // stream byte of i, where o < w
            const char expect = o < w && at >= from ? want[static_cast<size_t>(at)] : static_cast<char>(0xa5 ^ i);
            ASSERT_EQ(base[i], expect) << w << " " << s << " " << count << " from " << from << " byte " << i;
          }
        }
        // ddt_copy into the same layout elsewhere (twin.hpp: 64-byte windows under the block
        // mask), whole and truncated at a stream byte inside the run.
        for (std::pair<int64_t, int64_t> range : {std::pair<int64_t, int64_t>{0, total}, {0, total / 2 + 1}, {1, total}}) {
          const int64_t from = range.first, upto = range.second;
          if (from >= upto) continue;
          for (int64_t i = 0; i < span; ++i) base[i] = static_cast<char>(0x3c ^ i);
          ddt::copy_range(src, 1, v, base, 1, v, from, upto);
          for (int64_t i = 0; i < span; ++i) {
            const int64_t o = i % s, at = (i / s) * w + o;
            const char expect = o < w && at >= from && at < upto ? src[i] : static_cast<char>(0x3c ^ i);
            ASSERT_EQ(base[i], expect) << "copy " << w << " " << s << " " << count << " " << from << "-" << upto << " byte " << i;
          }
        }
        // Several elements (the general path) and rows of runs (two levels), pack then unpack.
        ddt_type rows;
        const int64_t nrows = 3, rstride = span + 5;
        ASSERT_EQ(ddt_type_hvector(nrows, 1, rstride, v, &rows), DDT_SUCCESS);
        ASSERT_EQ(ddt_type_commit(rows), DDT_SUCCESS);
        for (ddt_type t : {v, rows}) {
          const int64_t copies = t == v ? 3 : 1;
          int64_t size = 0, lb = 0, extent = 0;
          ASSERT_EQ(ddt_type_size(t, &size), DDT_SUCCESS);
          ASSERT_EQ(ddt_type_extent(t, &lb, &extent), DDT_SUCCESS);
          const int64_t reach = (copies - 1) * extent + (t == v ? span : (nrows - 1) * rstride + span);
          std::vector<char> buf(static_cast<size_t>(reach)), back(static_cast<size_t>(reach), 0), ref(static_cast<size_t>(copies * size));
          for (int64_t i = 0; i < reach; ++i) buf[static_cast<size_t>(i)] = static_cast<char>(i * 13 + 1);
          std::vector<char> out(static_cast<size_t>(copies * size));
          int64_t n = 0;
          ASSERT_EQ(ddt_pack(buf.data(), copies, t, 0, out.data(), copies * size, &n), DDT_SUCCESS);
          // The reference: every element's blocks in order, element by element.
          int64_t k = 0;
          for (int64_t c = 0; c < copies; ++c)
            for (int64_t r = 0; r < (t == v ? 1 : nrows); ++r)
              for (int64_t b = 0; b < count; ++b)
                for (int64_t o = 0; o < w; ++o) ref[static_cast<size_t>(k++)] = buf[static_cast<size_t>(c * extent + r * rstride + b * s + o)];
          ASSERT_EQ(out, ref) << w << " " << s << " " << count;
          ASSERT_EQ(ddt_unpack(out.data(), copies * size, back.data(), copies, t, 0, &n), DDT_SUCCESS);
          for (int64_t i = 0; i < reach; ++i) {
            const int64_t in_el = i % extent, e = i / extent;
            const int64_t r = t == v ? 0 : in_el / rstride, o = (t == v ? in_el : in_el % rstride);
            const bool block = e < copies && r < (t == v ? 1 : nrows) && o < span && o % s < w;
            ASSERT_EQ(back[static_cast<size_t>(i)], block ? buf[static_cast<size_t>(i)] : 0) << w << " " << s << " " << count << " byte " << i;
          }
          // The pipelined cells' way (in_order.hpp: a cursor advanced piece by piece, its runs
          // through the permute kernel): pieces of 37 bytes packed, of 53 unpacked.
          std::vector<char> piecewise(out.size()), back2(back.size(), 0);
          ddt::InOrderPack packer(t, buf.data(), copies);
          for (int64_t at = 0; at < copies * size; at += 37) packer.give(piecewise.data() + at, std::min<int64_t>(37, copies * size - at));
          ASSERT_EQ(piecewise, ref) << "in order " << w << " " << s << " " << count;
          ddt::InOrderUnpack unpacker(t, back2.data(), copies);
          for (int64_t at = 0; at < copies * size; at += 53) unpacker.take(out.data() + at, std::min<int64_t>(53, copies * size - at));
          unpacker.finish();
          ASSERT_EQ(back2, back) << "in order " << w << " " << s << " " << count;
        }
        ddt_type_free(&rows);
        ddt_type_free(&v);
      }
    }
  }
  if (cpu) {
    EXPECT_GT(chosen, 0);
  }
}

// ddt_copy between two layouts of blocks of one width (Nest plans: block paired with block,
// cpu/execute.cpp's pair_blocks) must leave exactly what a pack of the source unpacked into the
// destination leaves: every common width and odd ones, negative strides, two-level nests, counts
// that continue the nest; and copy_range of a prefix ending inside a block (a truncated receive)
// moves exactly that prefix.
TEST(Executors, PairedBlocksCopy) {
  std::mt19937_64 rng(7);
  for (int64_t w : {1, 3, 4, 8, 12, 16, 32, 64, 100, 128, 256, 512, 1000, 2048}) {
    for (int trial = 0; trial < 6; ++trial) {
      const int64_t blocks = 24 + static_cast<int64_t>(rng() % 40) * 4;  // a multiple of 4: both shapes fit
      // Source: a vector of `blocks` blocks, stride at least w (sign varies).
      const int64_t sstride = (w + static_cast<int64_t>(rng() % 64)) * (trial % 3 == 2 ? -1 : 1);
      ddt_type src_t = DDT_TYPE_NULL, dst_inner = DDT_TYPE_NULL, dst_t = DDT_TYPE_NULL;
      ASSERT_EQ(ddt_type_hvector(blocks, w, sstride, DDT_BYTE, &src_t), DDT_SUCCESS);
      // Destination: 4 rows of blocks/4 blocks, another stride (a two-level nest).
      const int64_t dstride = w + static_cast<int64_t>(rng() % 48);
      ASSERT_EQ(ddt_type_hvector(blocks / 4, w, dstride, DDT_BYTE, &dst_inner), DDT_SUCCESS);
      ASSERT_EQ(ddt_type_hvector(4, 1, dstride * (blocks / 4) + 80, dst_inner, &dst_t), DDT_SUCCESS);
      ddt_type_commit(src_t);
      ddt_type_commit(dst_t);
      const int64_t span = std::abs(sstride) * blocks + w + 64;
      const size_t dbytes = static_cast<size_t>(dstride * blocks + 4 * 80 + w + 128);
      std::vector<char> src(2 * span), dst(dbytes, 0x11), want(dbytes, 0x11), packed(blocks * w);
      for (auto& c : src) c = static_cast<char>(rng());
      char* s = src.data() + span;  // room for negative strides
      char* d = dst.data() + 64;
      int64_t k = 0;
      ASSERT_EQ(ddt_pack(s, 1, src_t, 0, packed.data(), blocks * w, &k), DDT_SUCCESS);
      ASSERT_EQ(ddt_unpack(packed.data(), blocks * w, want.data() + 64, 1, dst_t, 0, &k), DDT_SUCCESS);
      ASSERT_EQ(ddt_copy(s, 1, src_t, d, 1, dst_t), DDT_SUCCESS);
      EXPECT_EQ(dst, want) << "width " << w << " trial " << trial;
      // A prefix that ends inside a block.
      const int64_t n = blocks * w - w / 2 - 1;
      std::fill(dst.begin(), dst.end(), 0x22);
      std::fill(want.begin(), want.end(), 0x22);
      ASSERT_EQ(ddt_unpack(packed.data(), n, want.data() + 64, 1, dst_t, 0, &k), DDT_SUCCESS);
      ddt::copy_range(s, 1, src_t, d, 1, dst_t, n);
      EXPECT_EQ(dst, want) << "prefix, width " << w << " trial " << trial;
      ddt_type_free(&src_t);
      ddt_type_free(&dst_inner);
      ddt_type_free(&dst_t);
    }
  }
}

// copy_range with a footprint past kStreamBytes (a COOP share or a chunk of a large message,
// rendezvous.cpp) moves a small range with the streaming kernels that otherwise run only on
// ranges of 16 MiB and more: it must leave exactly what the same range copied with plain stores
// leaves, for pack-like (contiguous destination) and unpack-like (contiguous source) copies of
// vectors of every streamed width and of short ones, a contiguous run, and an irregular table,
// over random byte ranges (unaligned starts and ends, inside blocks) and destinations 0-63 bytes
// past a line.
TEST(Executors, FootprintStreamedRange) {
  std::mt19937_64 rng(23);
  std::vector<ddt_type> types;
  for (int64_t w : {1, 4, 8, 16, 24, 64, 100, 1024, 3000}) {
    ddt_type v;
    ASSERT_EQ(ddt_type_hvector(40, w, 2 * w + 8, DDT_BYTE, &v), DDT_SUCCESS);
    types.push_back(v);
  }
  ddt_type c, table;
  ASSERT_EQ(ddt_type_contiguous(20000, DDT_BYTE, &c), DDT_SUCCESS);
  types.push_back(c);
  std::vector<int64_t> bl, disp;
  for (int64_t i = 0, at = 0; i < 60; ++i) {
    bl.push_back(1 + static_cast<int64_t>(rng() % 300));
    disp.push_back(at);
    at += bl.back() + static_cast<int64_t>(rng() % 200);
  }
  ASSERT_EQ(ddt_type_hindexed(60, bl.data(), disp.data(), DDT_BYTE, &table), DDT_SUCCESS);
  types.push_back(table);
  for (ddt_type t : types) {
    ASSERT_EQ(ddt_type_commit(t), DDT_SUCCESS);
    int64_t size = 0, lb = 0, extent = 0;
    ddt_type_size(t, &size);
    ddt_type_extent(t, &lb, &extent);
    const int64_t count = 2;
    const int64_t n = size * count;
    ddt_type bytes;
    ASSERT_EQ(ddt_type_contiguous(n, DDT_BYTE, &bytes), DDT_SUCCESS);
    ASSERT_EQ(ddt_type_commit(bytes), DDT_SUCCESS);
    const size_t span = static_cast<size_t>(extent * count + 128);
    std::vector<char> laid(span), flat(static_cast<size_t>(n) + 128);
    for (auto& ch : laid) ch = static_cast<char>(rng());
    for (auto& ch : flat) ch = static_cast<char>(rng());
    for (int trial = 0; trial < 12; ++trial) {
      int64_t from = static_cast<int64_t>(rng() % static_cast<uint64_t>(n)), to = static_cast<int64_t>(rng() % static_cast<uint64_t>(n + 1));
      if (from > to) std::swap(from, to);
      if (trial == 0) from = 0, to = n;
      const size_t shift = static_cast<size_t>(rng() % 64);
      // Pack-like: the layout into bytes.
      std::vector<char> plain(flat.size() + 64, 0x5a), streamed(flat.size() + 64, 0x5a);
      ddt::copy_range(laid.data() + 64, count, t, plain.data() + shift, 1, bytes, from, to);
      ddt::copy_range(laid.data() + 64, count, t, streamed.data() + shift, 1, bytes, from, to, ddt::kStreamBytes);
      EXPECT_EQ(plain, streamed) << "gather, size " << size << " range " << from << "-" << to;
      // Unpack-like: bytes into the layout.
      std::vector<char> uplain(span + 64, 0x3c), ustreamed(span + 64, 0x3c);
      ddt::copy_range(flat.data(), 1, bytes, uplain.data() + 64 + shift, count, t, from, to);
      ddt::copy_range(flat.data(), 1, bytes, ustreamed.data() + 64 + shift, count, t, from, to, ddt::kStreamBytes);
      EXPECT_EQ(uplain, ustreamed) << "scatter, size " << size << " range " << from << "-" << to;
      // And the plain range is the range of a pack.
      std::vector<char> packed(static_cast<size_t>(n));
      int64_t k = 0;
      ASSERT_EQ(ddt_pack(laid.data() + 64, count, t, 0, packed.data(), n, &k), DDT_SUCCESS);
      EXPECT_EQ(0, std::memcmp(plain.data() + shift + from, packed.data() + from, static_cast<size_t>(to - from)));
    }
    ddt_type_free(&bytes);
  }
  for (ddt_type& t : types) ddt_type_free(&t);
}

// ddt_copy between two nests of one shape placed apart (cpu/twin.hpp: a halo face sent from the
// boundary layer into the halo layer, the same type on both sides of a ping-pong): the shapes
// are recognised (twins), including a subarray against the vectors that make the same nest, and
// copy_range of the whole stream and of random byte ranges leaves exactly what a pack of the
// source range unpacked into the destination range leaves, for every kernel width and odd
// ones, negative strides, up to three dimensions, and counts that continue the nest or add one.
TEST(Executors, TwinNestsCopy) {
  std::mt19937_64 rng(11);
  int twinned = 0;
  for (int64_t w : {1, 2, 3, 4, 6, 8, 12, 16, 20, 24, 32, 40, 48, 64, 100, 512, 5000}) {
    for (int trial = 0; trial < 8; ++trial) {
      const int dims = 1 + trial % 3;
      ddt_type t = DDT_TYPE_NULL;
      ASSERT_EQ(ddt_type_contiguous(w, DDT_BYTE, &t), DDT_SUCCESS);
      int64_t span = w;
      for (int d = 0; d < dims; ++d) {
        const int64_t n = 2 + static_cast<int64_t>(rng() % 6);
        int64_t stride = span + static_cast<int64_t>(rng() % 40);
        if (d == 0 && trial % 4 == 3) stride = -stride;
        ddt_type v;
        ASSERT_EQ(ddt_type_hvector(n, 1, stride, t, &v), DDT_SUCCESS);
        ddt_type_free(&t);
        t = v;
        span = std::abs(stride) * n + span;
      }
      ddt_type_commit(t);
      const int64_t count = 1 + trial % 2;
      int64_t size = 0, lb = 0, extent = 0;
      ddt_type_size(t, &size);
      ddt_type_extent(t, &lb, &extent);
      const ddt::Plan& p = planned(t);
      if (p.shape != ddt::Shape::Nest) continue;
      ASSERT_TRUE(ddt::twins(p, count, p, count));
      ++twinned;
      const int64_t total = size * count, room = span * (count + 1) + 256;
      std::vector<char> src(2 * room), dst(2 * room), want(2 * room), packed(total);
      for (auto& c : src) c = static_cast<char>(rng());
      char* s = src.data() + room;  // room for negative strides
      const int64_t shift = 1 + static_cast<int64_t>(rng() % 97);
      for (int r = 0; r < 6; ++r) {
        const auto [lo, hi] = trial_range(rng, total, r);
        std::fill(dst.begin(), dst.end(), 0x5a);
        std::fill(want.begin(), want.end(), 0x5a);
        char* d = dst.data() + room + shift;
        int64_t k = 0;
        ASSERT_EQ(ddt_pack(s, count, t, lo, packed.data(), hi - lo, &k), DDT_SUCCESS);
        ASSERT_EQ(ddt_unpack(packed.data(), hi - lo, want.data() + room + shift, count, t, lo, &k), DDT_SUCCESS);
        if (r == 0)
          ASSERT_EQ(ddt_copy(s, count, t, d, count, t), DDT_SUCCESS);
        else
          ddt::copy_range(s, count, t, d, count, t, lo, hi);
        ASSERT_EQ(dst, want) << "width " << w << " trial " << trial << " range " << lo << ".." << hi;
        // The same range as a share of a transfer past the caches: streaming stores (twin.hpp).
        std::fill(dst.begin(), dst.end(), 0x5a);
        ddt::copy_range(s, count, t, d, count, t, lo, hi, ddt::kStreamBytes);
        ASSERT_EQ(dst, want) << "streamed, width " << w << " trial " << trial << " range " << lo << ".." << hi;
      }
      ddt_type_free(&t);
    }
  }
  EXPECT_GT(twinned, 100);
  // A 2-D subarray face and the vector that makes the same nest are twins; a different stride is not.
  const int64_t sizes[2] = {10, 12}, sub[2] = {10, 1}, at[2] = {0, 5};
  ddt_type face, vec, other;
  ASSERT_EQ(ddt_type_subarray(2, sizes, sub, at, DDT_ORDER_C, DDT_DOUBLE, &face), DDT_SUCCESS);
  ASSERT_EQ(ddt_type_vector(10, 1, 12, DDT_DOUBLE, &vec), DDT_SUCCESS);
  ASSERT_EQ(ddt_type_vector(10, 1, 13, DDT_DOUBLE, &other), DDT_SUCCESS);
  for (ddt_type x : {face, vec, other}) ddt_type_commit(x);
  EXPECT_TRUE(ddt::twins(planned(face), 1, planned(vec), 1));
  EXPECT_FALSE(ddt::twins(planned(face), 1, planned(other), 1));
  std::vector<double> a(120), b(130, -1.0), c(130, -1.0);
  for (int i = 0; i < 120; ++i) a[i] = i;
  ASSERT_EQ(ddt_copy(a.data(), 1, face, b.data(), 1, vec), DDT_SUCCESS);
  for (int i = 0; i < 10; ++i) c[i * 12] = a[i * 12 + 5];
  EXPECT_EQ(b, c);
  for (ddt_type x : {face, vec, other}) ddt_type_free(&x);
}

// ddt_copy between two tables of one shape whose displacements differ (cpu/twin_tables.hpp: the
// same type built over each process's own arrays, as DDTBench's MPI_BOTTOM kernels are): a
// struct of vectors over arrays placed differently on each side (each member moved by its own
// amount) is twin Parts, and a struct of index lists of up to three widths (and a single list)
// so placed is twin Lists, or twin Rows where the table is short. copy_range of the whole stream and of random byte ranges, with counts of one and
// two, leaves exactly what a pack of the source range unpacked into the destination range leaves
// (block j to block j, every byte outside the destination's blocks untouched).
TEST(Executors, TwinTablesCopy) {
  std::mt19937_64 rng(23);
  constexpr int64_t kArena = 1 << 18;
  std::vector<char> src(2 * kArena), dst(2 * kArena), want(2 * kArena), packed(2 * kArena);
  for (auto& c : src) c = static_cast<char>(rng());
  int parts = 0, lists = 0, rows = 0;
  for (int trial = 0; trial < 60; ++trial) {
    // Both sides' types: the same structure, each side its own displacements.
    ddt_type side[2] = {DDT_TYPE_NULL, DDT_TYPE_NULL};
    const bool table = trial % 2 == 1;
    const int members = 1 + static_cast<int>(rng() % 3);
    std::vector<int64_t> width(members), n(members), stride(members);
    std::vector<std::vector<int64_t>> slots(members);
    for (int m = 0; m < members; ++m) {
      const int64_t widths[] = {1, 4, 8, 12, 16, 24, 40, 100};
      width[m] = widths[rng() % 8];
      n[m] = 2 + static_cast<int64_t>(rng() % (table ? (trial % 6 == 1 ? 4 : 60) : 8));  // short tables: Rows
      stride[m] = width[m] + 1 + static_cast<int64_t>(rng() % 64);
      // An index list: n[m] distinct slots of width[m] bytes, shuffled, apart (no two blocks merge).
      slots[m].resize(static_cast<size_t>(n[m] * 3));
      for (size_t i = 0; i < slots[m].size(); ++i) slots[m][i] = static_cast<int64_t>(i) * 2 * width[m];
      std::shuffle(slots[m].begin(), slots[m].end(), rng);
      slots[m].resize(static_cast<size_t>(n[m]));
    }
    for (int k = 0; k < 2; ++k) {
      std::vector<int64_t> lens(members, 1), disp(members);
      std::vector<ddt_type> kids(members);
      int64_t at = static_cast<int64_t>(rng() % 512);
      for (int m = 0; m < members; ++m) {
        ddt_type block;
        ASSERT_EQ(ddt_type_contiguous(width[m], DDT_BYTE, &block), DDT_SUCCESS);
        if (table) {
          ASSERT_EQ(ddt_type_hindexed_block(n[m], 1, slots[m].data(), block, &kids[m]), DDT_SUCCESS);
          disp[m] = at, at += n[m] * 6 * width[m] + static_cast<int64_t>(rng() % 256);
        } else {
          ASSERT_EQ(ddt_type_hvector(n[m], 1, stride[m], block, &kids[m]), DDT_SUCCESS);
          disp[m] = at, at += n[m] * stride[m] + static_cast<int64_t>(rng() % 256);
        }
        ddt_type_free(&block);
      }
      ASSERT_LT(at + 128, kArena);
      if (members == 1 && k == 0 && trial % 4 == 1) {
        side[k] = kids[0], kids[0] = DDT_TYPE_NULL;  // a lone list as the root, against a struct of one
      } else {
        ASSERT_EQ(ddt_type_struct(members, lens.data(), disp.data(), kids.data(), &side[k]), DDT_SUCCESS);
      }
      for (ddt_type& c : kids)
        if (c) ddt_type_free(&c);
      ASSERT_EQ(ddt_type_commit(side[k]), DDT_SUCCESS);
    }
    const int64_t count = 1 + trial % 3 / 2;
    const ddt::Plan &ps = planned(side[0]), &pd = planned(side[1]);
    // (A short index list whose slots happen to fall in arithmetic runs canonicalises to Parts.)
    const bool twin = ddt::rows_twins(ps, count, pd, count) || ddt::list_twins(ps, count, pd, count) ||
                      ddt::parts_twins(ps, count, pd, count);
    // A struct of one vector is a Nest (twin.hpp's case), of one list a List; the rest must pair.
    if (table || members > 1) {
      ASSERT_TRUE(twin) << (table ? "lists" : "parts") << " of " << members << ", trial " << trial << ": shapes "
                        << static_cast<int>(ps.shape) << "/" << static_cast<int>(pd.shape) << ", segments "
                        << ps.segments.size() << "/" << pd.segments.size() << ", parts " << ps.parts.size() << "/"
                        << pd.parts.size();
      ++(ps.shape == ddt::Shape::Rows ? rows : ps.shape == ddt::Shape::List ? lists : parts);
    }
    int64_t size = 0;
    ddt_type_size(side[0], &size);
    const int64_t total = size * count;
    for (int r = 0; r < 6; ++r) {
      const auto [lo, hi] = trial_range(rng, total, r);
      std::fill(dst.begin(), dst.end(), 0x5a);
      std::fill(want.begin(), want.end(), 0x5a);
      const int64_t shift = static_cast<int64_t>(rng() % 64);
      int64_t got = 0;
      ASSERT_EQ(ddt_pack(src.data() + 64, count, side[0], lo, packed.data(), hi - lo, &got), DDT_SUCCESS);
      ASSERT_EQ(ddt_unpack(packed.data(), hi - lo, want.data() + shift, count, side[1], lo, &got), DDT_SUCCESS);
      if (r == 0)
        ASSERT_EQ(ddt_copy(src.data() + 64, count, side[0], dst.data() + shift, count, side[1]), DDT_SUCCESS);
      else
        ddt::copy_range(src.data() + 64, count, side[0], dst.data() + shift, count, side[1], lo, hi);
      ASSERT_EQ(dst, want) << (table ? "lists" : "parts") << " trial " << trial << " range " << lo << ".." << hi;
    }
    for (ddt_type& t : side) ddt_type_free(&t);
  }
  EXPECT_GT(parts, 10);
  EXPECT_GT(lists, 10);
  EXPECT_GT(rows, 3);
}

// A struct of two vectors (seed 004's 4D edge built as one type of both matrices) is a Parts
// plan, and moves the same bytes as the two vectors packed one after the other, whole and from
// every cut of the stream, for several elements.
TEST(Executors, PartsOfNests) {
  const int64_t N = 6, rows = N * N, fbase = 8 * N * N * N;
  ddt_type dv, fv, parts[2];
  ASSERT_EQ(ddt_type_vector(rows, 5, N, DDT_DOUBLE, &dv), DDT_SUCCESS);
  ASSERT_EQ(ddt_type_vector(rows, 5, N, DDT_FLOAT, &fv), DDT_SUCCESS);
  parts[0] = dv, parts[1] = fv;
  const int64_t bl[2] = {1, 1}, displs[2] = {0, fbase};
  ddt_type s;
  ASSERT_EQ(ddt_type_struct(2, bl, displs, parts, &s), DDT_SUCCESS);
  const ddt::Plan& p = planned(s);
  ASSERT_EQ(p.shape, ddt::Shape::Parts);
  ASSERT_EQ(p.parts.size(), 2u);
  EXPECT_EQ(p.parts[1].dims, 1);
  int64_t size, lb, extent;
  ddt_type_size(s, &size);
  ddt_type_extent(s, &lb, &extent);
  const int64_t count = 3;
  std::vector<char> buf(count * extent + 64);
  for (size_t i = 0; i < buf.size(); ++i) buf[i] = static_cast<char>(i * 37 + 11);
  std::vector<char> want;  // the two vectors, element by element
  for (int64_t k = 0; k < count; ++k) {
    const char* e = buf.data() + k * extent;
    for (int64_t r = 0; r < rows; ++r) want.insert(want.end(), e + 8 * r * N, e + 8 * r * N + 40);
    for (int64_t r = 0; r < rows; ++r) want.insert(want.end(), e + fbase + 4 * r * N, e + fbase + 4 * r * N + 20);
  }
  ASSERT_EQ(static_cast<int64_t>(want.size()), count * size);
  std::vector<char> out(want.size());
  int64_t n;
  ASSERT_EQ(ddt_pack(buf.data(), count, s, 0, out.data(), out.size(), &n), DDT_SUCCESS);
  EXPECT_EQ(out, want);
  std::vector<int64_t> at;  // the buffer offset of every stream byte, from ddt_iov (the walk, not the plan)
  std::vector<struct iovec> iov(4 * count * rows);
  int64_t n_iov, bytes;
  ASSERT_EQ(ddt_iov(buf.data(), count, s, 0, iov.data(), iov.size(), &n_iov, &bytes), DDT_SUCCESS);
  ASSERT_EQ(bytes, count * size);
  for (int64_t i = 0; i < n_iov; ++i)
    for (size_t b = 0; b < iov[i].iov_len; ++b) at.push_back(static_cast<char*>(iov[i].iov_base) + b - buf.data());
  // One whole element takes the entry point's plain call (plan.hpp's kPlainParts: every part has
  // a plain kernel): the same bytes both ways, and nothing written outside the typemap.
  EXPECT_EQ(p.plain[1], ddt::kPlainParts);
  EXPECT_EQ(p.plain[0], ddt::kPlainParts);
  {
    std::vector<char> one(size), back(buf.size(), 0), expect(buf.size(), 0);
    ASSERT_EQ(ddt_pack(buf.data(), 1, s, 0, one.data(), size, &n), DDT_SUCCESS);
    EXPECT_EQ(n, size);
    EXPECT_EQ(0, std::memcmp(one.data(), want.data(), size));
    ASSERT_EQ(ddt_unpack(one.data(), size, back.data(), 1, s, 0, &n), DDT_SUCCESS);
    for (int64_t i = 0; i < size; ++i) expect[at[i]] = one[i];
    EXPECT_EQ(back, expect);
  }
  for (int64_t lo : {int64_t{0}, int64_t{1}, int64_t{39}, size - 3, size, size + 1441, 2 * size - 1})
    for (int64_t len : {int64_t{1}, int64_t{20}, int64_t{41}, size, count * size - lo}) {
      if (lo + len > count * size) continue;
      std::vector<char> piece(len);
      ASSERT_EQ(ddt_pack(buf.data(), count, s, lo, piece.data(), len, &n), DDT_SUCCESS);
      EXPECT_EQ(0, std::memcmp(piece.data(), want.data() + lo, len)) << lo << " " << len;
      std::vector<char> back(buf.size(), 0), expect(buf.size(), 0);
      ASSERT_EQ(ddt_unpack(piece.data(), len, back.data(), count, s, lo, &n), DDT_SUCCESS);
      for (int64_t i = 0; i < len; ++i) expect[at[lo + i]] = piece[i];  // the walk's addresses
      EXPECT_EQ(back, expect) << lo << " " << len;
    }
  std::vector<char> back(buf.size(), 0);
  ASSERT_EQ(ddt_unpack(want.data(), want.size(), back.data(), count, s, 0, &n), DDT_SUCCESS);
  for (int64_t k = 0; k < count; ++k)
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t d = k * extent + 8 * r * N, f = k * extent + fbase + 4 * r * N;
      EXPECT_EQ(0, std::memcmp(back.data() + d, buf.data() + d, 40));
      EXPECT_EQ(0, std::memcmp(back.data() + f, buf.data() + f, 20));
    }
  for (ddt_type* x : {&dv, &fv, &s}) ddt_type_free(x);
}

// The grid of a transpose (cpu/tile.hpp: a two-dimensional nest whose outer dimension is the
// contiguous one, FFT2D's receive type) runs in tiles of whole lines: the plan says so exactly
// for the widths that tile a line and inner strides of a line or more, and pack, unpack and copy
// (against the rows of a send type, another grid, and itself) of the whole stream and of random
// byte ranges move exactly the bytes an explicit list of the typemap says, for column counts
// that are and are not whole tiles, negative strides, and counts whose elements continue the
// grid or lie apart. The oracle is the list, built here from the grid's definition, not from
// any executor.
namespace {

struct GridType {
  int64_t e, n0, s0, n1, s1, extent;  // element (i1, i0) of copy k at k * extent + i1 * s1 + i0 * s0
  int64_t size() const { return e * n0 * n1; }
  int64_t at(int64_t x) const {  // the buffer offset of stream byte x
    const int64_t el = x / e, k = el / (n0 * n1), r = el % (n0 * n1);
    return k * extent + (r / n0) * s1 + (r % n0) * s0 + x % e;
  }
};

// The transpose grid: contiguous(n1, resized(hvector(n0, 1, s0, e bytes), 0, e)), resized to
// `extent` when it is not n1 * e.
ddt_type grid_type(const GridType& g) {
  ddt_type blk, col, colr, all, out;
  EXPECT_EQ(ddt_type_contiguous(g.e, DDT_BYTE, &blk), DDT_SUCCESS);
  EXPECT_EQ(ddt_type_hvector(g.n0, 1, g.s0, blk, &col), DDT_SUCCESS);
  EXPECT_EQ(ddt_type_resized(col, 0, g.e, &colr), DDT_SUCCESS);
  EXPECT_EQ(ddt_type_contiguous(g.n1, colr, &all), DDT_SUCCESS);
  if (g.extent != g.n1 * g.e) {
    EXPECT_EQ(ddt_type_resized(all, 0, g.extent, &out), DDT_SUCCESS);
    ddt_type_free(&all);
  } else {
    out = all;
  }
  for (ddt_type* x : {&blk, &col, &colr}) ddt_type_free(x);
  EXPECT_EQ(ddt_type_commit(out), DDT_SUCCESS);
  return out;
}

// Rows of the same elements: hvector(n1, n0 * e bytes, s1), resized to extent.
ddt_type rows_type(const GridType& g) {
  ddt_type v, out;
  EXPECT_EQ(ddt_type_hvector(g.n1, g.n0 * g.e, g.s1, DDT_BYTE, &v), DDT_SUCCESS);
  EXPECT_EQ(ddt_type_resized(v, 0, g.extent, &out), DDT_SUCCESS);
  ddt_type_free(&v);
  EXPECT_EQ(ddt_type_commit(out), DDT_SUCCESS);
  return out;
}

}  // namespace

TEST(Executors, TransposedGridTiles) {
  std::mt19937_64 rng(31);
  int tiled = 0;
  for (int64_t e : {4, 8, 16, 32, 12, 64}) {
    for (int trial = 0; trial < 14; ++trial) {
      const int64_t T = 64 / e;
      GridType g;
      g.e = e;
      g.n0 = 2 + static_cast<int64_t>(rng() % 30);
      // Columns: whole tiles, a tile and a part, fewer than a tile.
      g.n1 = trial % 3 == 0 ? T * (1 + static_cast<int64_t>(rng() % 6)) : trial % 3 == 1 ? T * 3 + 1 + static_cast<int64_t>(rng() % 7) : 1 + static_cast<int64_t>(rng() % 6);
      g.s1 = e;
      const int64_t col = g.n1 * e + static_cast<int64_t>(rng() % 3) * 8;  // a row of the grid
      g.s0 = trial % 4 == 3 ? -col : col;
      if (trial == 5) g.s0 = e * 2;  // inner stride under a line: not tiled
      g.extent = trial % 2 ? g.n1 * e : g.n1 * e + std::abs(g.s0) * g.n0 + 16;
      const int64_t count = 1 + trial % 3;
      ddt_type grid = grid_type(g);
      const ddt::Plan& p = ddt::plan_of(grid);
      const bool expect_tile = (e == 4 || e == 8 || e == 16 || e == 32) && std::abs(g.s0) >= 64 && g.n1 >= T && g.n1 > 1;
      ASSERT_EQ(p.tile, expect_tile ? e : 0) << "e " << e << " n0 " << g.n0 << " n1 " << g.n1 << " s0 " << g.s0;
      tiled += expect_tile;
      const int64_t total = g.size() * count;
      // The grid reaches n0 inner strides before or after an element's position (their sign).
      const int64_t room = std::abs(g.s0) * g.n0 + 128, span = 2 * room + g.extent * count + g.n1 * e;
      std::vector<char> src(span), dst(span), want(span), packed(total), expect(total);
      for (auto& c : src) c = static_cast<char>(rng());
      const char* s = src.data() + room;
      for (int64_t x = 0; x < total; ++x) expect[x] = s[g.at(x)];
      // Rows of the same elements elsewhere, and a second grid with another inner stride.
      GridType r = g;
      r.s0 = e, r.s1 = g.n0 * e + static_cast<int64_t>(rng() % 5) * 4, r.extent = r.s1 * g.n1 + 8;
      GridType h = g;
      h.s0 = g.s0 + (g.s0 > 0 ? 24 : -24), h.extent = g.n1 * e + std::abs(h.s0) * g.n0 + 8;
      ddt_type rows = rows_type(r), other = grid_type(h);
      const int64_t rspan = room + r.extent * count + 128, hspan = 2 * (std::abs(h.s0) * g.n0 + 128) + h.extent * count + g.n1 * e;
      for (int rep = 0; rep < 8; ++rep) {
        int64_t lo = 0, hi = total;
        if (rep > 0) {
          lo = static_cast<int64_t>(rng() % static_cast<uint64_t>(total));
          hi = lo + 1 + static_cast<int64_t>(rng() % static_cast<uint64_t>(total - lo));
        }
        const std::string where = "e " + std::to_string(e) + " trial " + std::to_string(trial) + " range " +
                                  std::to_string(lo) + ".." + std::to_string(hi);
        int64_t k = 0;
        // Pack.
        ASSERT_EQ(ddt_pack(s, count, grid, lo, packed.data(), hi - lo, &k), DDT_SUCCESS);
        ASSERT_EQ(0, std::memcmp(packed.data(), expect.data() + lo, static_cast<size_t>(hi - lo))) << "pack, " << where;
        // Unpack into the grid.
        std::fill(dst.begin(), dst.end(), 0x5a);
        std::fill(want.begin(), want.end(), 0x5a);
        for (int64_t x = lo; x < hi; ++x) want[room + g.at(x)] = expect[x];
        ASSERT_EQ(ddt_unpack(expect.data() + lo, hi - lo, dst.data() + room, count, grid, lo, &k), DDT_SUCCESS);
        ASSERT_EQ(dst, want) << "unpack, " << where;
        // Copies: rows into the grid, the grid into rows, the grid into the other grid.
        std::vector<char> rsrc(rspan), rdst(rspan, 0x3c), rwant(rspan, 0x3c), hdst(hspan, 0x2d), hwant(hspan, 0x2d);
        for (int64_t x = 0; x < total; ++x) rsrc[room + r.at(x)] = expect[x];
        std::fill(dst.begin(), dst.end(), 0x5a);
        ddt::copy_range(rsrc.data() + room, count, rows, dst.data() + room, count, grid, lo, hi);
        ASSERT_EQ(dst, want) << "rows to grid, " << where;
        for (int64_t x = lo; x < hi; ++x) rwant[room + r.at(x)] = expect[x];
        ddt::copy_range(s, count, grid, rdst.data() + room, count, rows, lo, hi);
        ASSERT_EQ(rdst, rwant) << "grid to rows, " << where;
        const int64_t hroom = std::abs(h.s0) * g.n0 + 128;
        for (int64_t x = lo; x < hi; ++x) hwant[hroom + h.at(x)] = expect[x];
        ddt::copy_range(s, count, grid, hdst.data() + hroom, count, other, lo, hi);
        ASSERT_EQ(hdst, hwant) << "grid to grid, " << where;
        if (rep == 0) {  // the public call, and the grid into itself elsewhere (twins)
          std::fill(dst.begin(), dst.end(), 0x5a);
          ASSERT_EQ(ddt_copy(rsrc.data() + room, count, rows, dst.data() + room, count, grid), DDT_SUCCESS);
          ASSERT_EQ(dst, want) << "ddt_copy, " << where;
          std::fill(dst.begin(), dst.end(), 0x5a);
          ASSERT_EQ(ddt_copy(s, count, grid, dst.data() + room, count, grid), DDT_SUCCESS);
          ASSERT_EQ(dst, want) << "ddt_copy to a twin, " << where;
        }
      }
      for (ddt_type* x : {&grid, &rows, &other}) ddt_type_free(x);
    }
  }
  EXPECT_GT(tiled, 20);
}

// A stream taken in order in pieces of any size (the runtime's data cells: cpu/in_order.hpp)
// leaves the receive as one unpack of the same bytes does: into transposed grids (staged into
// whole tiles), with counts whose elements are not whole tiles, and into a grid of 12-byte
// elements (the cursor); a prefix taken and finished leaves what an unpack of the prefix leaves.
// And given in pieces of any size, the sending side's bytes are one pack's.
TEST(Executors, InOrderUnpackStagesTiles) {
  std::mt19937_64 rng(37);
  for (int trial = 0; trial < 24; ++trial) {
    GridType g;
    g.e = trial % 4 == 3 ? 12 : int64_t{4} << (trial % 3);  // 4, 8, 16; 12 is no tile
    g.n0 = 3 + static_cast<int64_t>(rng() % 200);
    g.n1 = 16 + static_cast<int64_t>(rng() % 40);
    g.s1 = g.e;
    g.s0 = g.n1 * g.e + 8;
    g.extent = trial % 2 ? g.n1 * g.e : g.n1 * g.e + g.s0 * g.n0;
    ddt_type t = grid_type(g);
    EXPECT_EQ(ddt::plan_of(t).tile, g.e == 12 ? 0 : g.e);
    const int64_t count = 1 + trial % 3, total = g.size() * count;
    const int64_t span = g.extent * count + g.s0 * g.n0 + 256;
    std::vector<char> stream(total), got(span, 0x11), want(span, 0x11);
    for (auto& c : stream) c = static_cast<char>(rng());
    const int64_t prefix = trial % 5 == 4 ? 1 + static_cast<int64_t>(rng() % static_cast<uint64_t>(total)) : total;
    int64_t k = 0;
    ASSERT_EQ(ddt_unpack(stream.data(), prefix, want.data() + 64, count, t, 0, &k), DDT_SUCCESS);
    {
      ddt::InOrderUnpack u(t, got.data() + 64, count);
      for (int64_t at = 0; at < prefix;) {
        const int64_t n = std::min(prefix - at, 1 + static_cast<int64_t>(rng() % (trial % 2 ? 20000 : 700)));
        u.take(stream.data() + at, n);
        at += n;
      }
      u.finish();
    }
    EXPECT_EQ(got, want) << "trial " << trial << " e " << g.e << " n0 " << g.n0 << " n1 " << g.n1 << " count " << count
                         << " prefix " << prefix << " of " << total;
    // The sending side: packed in pieces of any size, the stream of one ddt_pack.
    std::vector<char> packed(total), given(total, 0x22);
    ASSERT_EQ(ddt_pack(want.data() + 64, count, t, 0, packed.data(), total, &k), DDT_SUCCESS);
    {
      ddt::InOrderPack out(t, want.data() + 64, count);
      for (int64_t at = 0; at < total;) {
        const int64_t n = std::min(total - at, 1 + static_cast<int64_t>(rng() % (trial % 2 ? 20000 : 700)));
        out.give(given.data() + at, n);
        at += n;
      }
    }
    EXPECT_EQ(given, packed) << "pack, trial " << trial << " e " << g.e << " n0 " << g.n0 << " n1 " << g.n1;
    ddt_type_free(&t);
  }
}

// A cursor over elements that abut (DDT_BYTE x n, a contiguous type x n: the root is one block
// at an extent equal to its size) moves a run of them as one piece; advanced in random steps it
// packs and unpacks what ddt_pack and ddt_unpack do, also next to elements that do not abut.
TEST(Executors, CursorOverAbuttingElements) {
  std::mt19937_64 rng(41);
  ddt_type c3, gap;
  ASSERT_EQ(ddt_type_contiguous(3, DDT_INT, &c3), DDT_SUCCESS);
  ASSERT_EQ(ddt_type_resized(c3, 0, 16, &gap), DDT_SUCCESS);  // 12 bytes every 16: not abutting
  for (ddt_type t : {c3, gap}) ASSERT_EQ(ddt_type_commit(t), DDT_SUCCESS);
  for (ddt_type t : {DDT_BYTE, c3, gap}) {
    int64_t size = 0, lb = 0, ext = 0;
    ddt_type_size(t, &size);
    ddt_type_extent(t, &lb, &ext);
    for (int trial = 0; trial < 20; ++trial) {
      const int64_t count = 1 + static_cast<int64_t>(rng() % 5000), total = count * size;
      std::vector<char> src(static_cast<size_t>(count * ext + 64)), packed(static_cast<size_t>(total)), got(packed.size());
      for (auto& c : src) c = static_cast<char>(rng());
      int64_t k = 0;
      ASSERT_EQ(ddt_pack(src.data(), count, t, 0, packed.data(), total, &k), DDT_SUCCESS);
      ddt::Cursor in(*t->layout, t->extent(), reinterpret_cast<uintptr_t>(src.data()), count);
      const int64_t start = static_cast<int64_t>(rng() % static_cast<uint64_t>(total));
      in.seek(start);
      for (int64_t at = start; at < total;) {
        const int64_t n = std::min(total - at, 1 + static_cast<int64_t>(rng() % 3000));
        ddt::CursorCopy<true> op{got.data() + at};
        ASSERT_EQ(in.advance(n, op), n);
        at += n;
      }
      ASSERT_EQ(0, std::memcmp(got.data() + start, packed.data() + start, static_cast<size_t>(total - start)));
      std::vector<char> dst(src.size(), 0x5a), want(src.size(), 0x5a);
      ASSERT_EQ(ddt_unpack(packed.data(), total, want.data(), count, t, 0, &k), DDT_SUCCESS);
      ddt::Cursor out(*t->layout, t->extent(), reinterpret_cast<uintptr_t>(dst.data()), count);
      for (int64_t at = 0; at < total;) {
        const int64_t n = std::min(total - at, 1 + static_cast<int64_t>(rng() % 3000));
        ddt::CursorCopy<false> op{packed.data() + at};
        ASSERT_EQ(out.advance(n, op), n);
        at += n;
      }
      ASSERT_EQ(dst, want);
    }
  }
  for (ddt_type* t : {&c3, &gap}) ddt_type_free(t);
}
