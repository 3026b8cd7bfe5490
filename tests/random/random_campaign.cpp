// The random campaign: for each random type, ddtkit against the reference interpreter.
// Checks bounds and size, full pack, unpack (bytes outside the typemap untouched), partial pack
// and unpack of random byte ranges in random order, iov coverage with continuation and
// merging, and copy into a second, different random type of the same packed size.
#include <sys/uio.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "cpu/cursor.hpp"
#include "cpu/in_order.hpp"
#include "gen.hpp"
#include "type/type.hpp"

namespace {

int failures = 0;

bool check(bool ok, const char* what, const TNode& t, uint64_t seed) {
  if (!ok && ++failures <= 10)
    std::fprintf(stderr, "FAIL %s (type seed %llu): %s\n", what, (unsigned long long)seed, describe(t).c_str());
  return ok;
}

// A buffer covering the bytes count elements touch, with guard margins on both sides.
struct Buf {
  std::vector<char> mem;
  int64_t origin;  // offset of the type's buffer address inside mem
  Buf(const RefType& r, int64_t count, std::mt19937_64* rng, char fill = 0) {
    int64_t lo, hi;
    ref_span(r, count, lo, hi);
    const int64_t margin = 64;
    mem.resize(hi - lo + 2 * margin);
    origin = margin - lo;
    if (rng)
      for (auto& c : mem) c = static_cast<char>((*rng)());
    else
      std::fill(mem.begin(), mem.end(), fill);
  }
  char* at() { return mem.data() + origin; }
};

bool eq(const char* a, const char* b, int64_t n) { return n == 0 || std::memcmp(a, b, n) == 0; }

// A cursor operation that gathers every byte it is given, in order.
struct Gather {
  std::vector<char> bytes;
  void piece(uintptr_t p, int64_t n) { bytes.insert(bytes.end(), reinterpret_cast<const char*>(p), reinterpret_cast<const char*>(p) + n); }
  void blocks(uintptr_t p, int64_t stride, int64_t w, int64_t count) {
    for (int64_t i = 0; i < count; ++i) piece(p + static_cast<uintptr_t>(i * stride), w);
  }
  int64_t table(uintptr_t base, const ddt::Entry* e, int64_t max, int64_t w, int64_t node) {
    int64_t i = 0;
    for (; i < max && e[i].node == node; ++i) piece(base + static_cast<uintptr_t>(e[i].disp), w);
    return i;
  }
};

// Random cut points of [0, total), as (offset, length) pieces.
std::vector<std::pair<int64_t, int64_t>> pieces(std::mt19937_64& rng, int64_t total) {
  std::vector<std::pair<int64_t, int64_t>> p;
  for (int64_t pos = 0; pos < total;) {
    int64_t n = std::min<int64_t>(total - pos, 1 + rng() % std::max<int64_t>(1, total / 3));
    p.push_back({pos, n});
    pos += n;
  }
  return p;
}

void check_type(std::mt19937_64& rng, uint64_t seed, const GenOptions& opt) {
  RefType ref;
  TPtr t = random_type(rng, opt, ref);
  int err;
  ddt_type ty = build_ddt(*t, &err);
  if (!check(ty != nullptr, "construction", *t, seed)) return;
  ddt_type_commit(ty);
  int64_t size, lb, ext, tlb, text;
  ddt_type_size(ty, &size);
  ddt_type_extent(ty, &lb, &ext);
  ddt_type_true_extent(ty, &tlb, &text);
  bool bounds_ok = check(size == ref.size, "size", *t, seed) && check(lb == ref.lb && ext == ref.extent(), "lb/extent", *t, seed) &&
                   check(tlb == ref.true_lb && text == ref.true_ub - ref.true_lb, "true extent", *t, seed);
  if (!bounds_ok) {
    ddt_type_free(&ty);
    return;
  }
  int64_t count = rng() % 4;
  const int64_t total = count * size;
  Buf src(ref, count, &rng);
  std::vector<char> want(total), got(total + 1, 0);
  ref_pack(ref, src.at(), count, want.data());
  int64_t n = -1;
  // Full pack.
  int e = ddt_pack(src.at(), count, ty, 0, got.data(), total, &n);
  check(e == DDT_SUCCESS && n == total && eq(got.data(), want.data(), total), "pack", *t, seed);
  // Partial pack, random pieces in random order.
  std::fill(got.begin(), got.end(), 0);
  auto ps = pieces(rng, total);
  std::shuffle(ps.begin(), ps.end(), rng);
  bool ok = true;
  for (auto& p : ps) {
    e = ddt_pack(src.at(), count, ty, p.first, got.data() + p.first, p.second, &n);
    ok = ok && e == DDT_SUCCESS && n == p.second;
  }
  check(ok && eq(got.data(), want.data(), total), "partial pack", *t, seed);
  // The resumable cursor: sought to a random byte, then advanced in random steps to the end;
  // another sought from 0 and advanced to the same byte must equal it (same state, same place).
  if (total > 0) {
    const int64_t start = rng() % total;
    ddt::Cursor c(*ty->layout, ty->extent(), reinterpret_cast<uintptr_t>(src.at()), count);
    c.seek(start);
    Gather g;
    ok = c.position() == start;
    while (!c.done() && ok) {
      const int64_t before = c.position(), step = 1 + rng() % (1 + total / 3);
      ok = c.advance(step, g) == std::min(step, total - before) && c.position() == before + std::min(step, total - before);
    }
    check(ok && eq(g.bytes.data(), want.data() + start, total - start) && static_cast<int64_t>(g.bytes.size()) == total - start,
          "cursor", *t, seed);
    ddt::Cursor a(*ty->layout, ty->extent(), reinterpret_cast<uintptr_t>(src.at()), count), b = a;
    Gather sink;
    a.advance(start, sink);
    b.seek(start);
    check(a == b && (start == 0 || a != ddt::Cursor(*ty->layout, ty->extent(), reinterpret_cast<uintptr_t>(src.at()), count)),
          "cursor state", *t, seed);
  }
  // Unpack: whole, then in pieces (random order unless entries overlap, where order matters).
  Buf ref_dst(ref, count, nullptr, 0x5a);
  ref_unpack(ref, want.data(), count, ref_dst.at());
  Buf dst(ref, count, nullptr, 0x5a);
  e = ddt_unpack(want.data(), total, dst.at(), count, ty, 0, &n);
  check(e == DDT_SUCCESS && n == total && dst.mem == ref_dst.mem, "unpack", *t, seed);
  Buf dst2(ref, count, nullptr, 0x5a);
  ps = pieces(rng, total);
  if (!ref_overlaps(ref, count)) std::shuffle(ps.begin(), ps.end(), rng);
  ok = true;
  for (auto& p : ps) {
    e = ddt_unpack(want.data() + p.first, p.second, dst2.at(), count, ty, p.first, &n);
    ok = ok && e == DDT_SUCCESS && n == p.second;
  }
  check(ok && dst2.mem == ref_dst.mem, "partial unpack", *t, seed);
  // The pipelined cells' way (cpu/in_order.hpp: ranged calls or the cursor, by the plan), pieces
  // in stream order: packed, and unpacked into a fresh buffer.
  {
    std::vector<char> cells(static_cast<size_t>(total) + 1, 0);
    ddt::InOrderPack packer(ty, src.at(), count);
    Buf dst3(ref, count, nullptr, 0x5a);
    ddt::InOrderUnpack unpacker(ty, dst3.at(), count);
    for (auto& p : pieces(rng, total)) {
      packer.give(cells.data() + p.first, p.second);
      unpacker.take(want.data() + p.first, p.second);
    }
    unpacker.finish();
    check(eq(cells.data(), want.data(), total), "in-order pack", *t, seed);
    check(dst3.mem == ref_dst.mem, "in-order unpack", *t, seed);
  }
  // iov with a small array, continued from where each call stopped.
  std::vector<char> gathered;
  ok = true;
  for (int64_t off = 0; off < total && ok;) {
    struct iovec iov[4];
    int64_t max = 1 + rng() % 4, nio = -1, bytes = -1;
    e = ddt_iov(src.at(), count, ty, off, iov, max, &nio, &bytes);
    ok = e == DDT_SUCCESS && nio >= 1 && nio <= max && bytes > 0;
    int64_t sum = 0;
    for (int64_t i = 0; ok && i < nio; ++i) {
      const char* b = static_cast<const char*>(iov[i].iov_base);
      gathered.insert(gathered.end(), b, b + iov[i].iov_len);
      sum += iov[i].iov_len;
      if (i > 0 && static_cast<const char*>(iov[i - 1].iov_base) + iov[i - 1].iov_len == b) ok = false;  // unmerged
    }
    ok = ok && sum == bytes;
    off += bytes;
  }
  check(ok && gathered.size() == want.size() && eq(gathered.data(), want.data(), total), "iov", *t, seed);
  // ddt_type_blocks against the listing of one element: block count at least the merged piece
  // count, one exactly when the listing has one piece, ascending exactly when the listing is.
  if (size > 0) {
    int64_t blocks = -1, pieces_n = 0, nio, bytes;
    int asc = -1;
    bool up = true;
    int64_t end = 0;  // offsets from a NULL base: signed, some are negative
    for (int64_t off = 0; off < size;) {
      struct iovec iov[16];
      e = ddt_iov(nullptr, 1, ty, off, iov, 16, &nio, &bytes);
      if (e != DDT_SUCCESS || bytes <= 0) break;
      for (int64_t i = 0; i < nio; ++i) {
        const int64_t b = static_cast<int64_t>(reinterpret_cast<uintptr_t>(iov[i].iov_base));
        if (pieces_n++ > 0 && b < end) up = false;
        end = b + static_cast<int64_t>(iov[i].iov_len);
      }
      off += bytes;
    }
    e = ddt_type_blocks(ty, &blocks, &asc);
    check(e == DDT_SUCCESS && blocks >= pieces_n && (blocks == 1) == (pieces_n == 1) && asc == (up ? 1 : 0), "blocks",
          *t, seed);
  }
  // Copy into the same type at another buffer (the runtime's common case, cpu/twin.hpp and
  // twin_tables.hpp: block j to block j).
  if (size > 0) {
    Buf d(ref, count, nullptr, 0x5a);
    e = ddt_copy(src.at(), count, ty, d.at(), count, ty);
    check(e == DDT_SUCCESS && d.mem == ref_dst.mem, "copy into itself", *t, seed);
  }
  // Copy into a different random type with the same packed size.
  if (size > 0) {
    RefType ref2;
    int64_t c2 = 0;
    TPtr t2 = random_type_packing(rng, opt, total, 6, false, ref2, &c2);
    if (c2) {
      ddt_type ty2 = build_ddt(*t2, &err);
      ddt_type_commit(ty2);
      Buf d_ref(ref2, c2, nullptr, 0x33), d(ref2, c2, nullptr, 0x33);
      ref_unpack(ref2, want.data(), c2, d_ref.at());
      e = ddt_copy(src.at(), count, ty, d.at(), c2, ty2);
      check(e == DDT_SUCCESS && d.mem == d_ref.mem, "copy", *t2, seed);
      ddt_type_free(&ty2);
    }
  }
  ddt_type_free(&ty);
}

}  // namespace

int main(int argc, char** argv) {
  int64_t types = 20000;
  uint64_t seed = 1;
  campaign_args(argc, argv, &types, &seed);
  GenOptions opt;
  if (argc == 4 && !std::strcmp(argv[1], "--write-corpus")) {  // seeds for fuzz_deserialize
    for (int64_t i = 0; i < std::atoll(argv[3]); ++i) {
      std::mt19937_64 rng(424242 + i);
      RefType ref;
      int err;
      ddt_type t = build_ddt(*random_type(rng, opt, ref), &err);
      int64_t need;
      ddt_type_serialize(t, nullptr, 0, &need);
      std::vector<char> b(need);
      ddt_type_serialize(t, b.data(), need, &need);
      std::string path = std::string(argv[2]) + "/seed" + std::to_string(i);
      if (FILE* f = std::fopen(path.c_str(), "wb")) std::fwrite(b.data(), 1, need, f), std::fclose(f);
      ddt_type_free(&t);
    }
    return 0;
  }
  for (int64_t i = 0; i < types; ++i) {
    std::mt19937_64 rng(seed * 1000003 + i);
    check_type(rng, seed * 1000003 + i, opt);
  }
  std::printf("random campaign: %lld types checked against the reference, %d failures\n", (long long)types, failures);
  return failures ? 1 : 0;
}
