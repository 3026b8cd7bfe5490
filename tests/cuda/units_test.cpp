// The GPU kernels' logic on the CPU: every unit of a call (src/cuda/units.hpp: the grain, the
// nest, tree and list locators, the per-unit moves) run in a loop over the unit index, exactly as the
// kernels' threads run it, over random types (all constructors, depth up to 4, negative strides,
// shifted bounds), full and partial byte ranges, and buffers at every alignment the grains
// distinguish; the bytes are compared with the reference interpreter (tests/support). What this
// cannot check, a GPU checks (tests/cuda/gpu_test.cpp): the launch, memory kinds, concurrency.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "cuda/units.hpp"
#include "gen.hpp"
#include "type/type.hpp"

namespace {

int failures = 0;
int64_t calls[3] = {}, grains[17] = {};  // calls per locator: nest, tree, list
int64_t boxes = 0;  // calls the DMA engine could take (units.hpp's box_of)
int64_t splits[2] = {};  // packs whose typed side is aligned to the unit (0) or less (1)

bool check(bool ok, const char* what, const TNode& t, uint64_t seed) {
  if (!ok && ++failures <= 10)
    std::fprintf(stderr, "FAIL %s (type seed %llu): %s\n", what, (unsigned long long)seed, describe(t).c_str());
  return ok;
}

// The side of t as the GPU layer builds it, its arrays the host's own (held in `keep` while the
// side is used).
struct Keep {
  std::vector<ddt::gpu::Divider> divs;
  std::vector<int32_t> list32;
  std::vector<int64_t> list;
};
int64_t flats = 0;  // calls whose tree side became a flat list (layouts.hpp's Part::Flat)
bool general = false;  // every side by the tree locator (DDT_CUDA_GENERAL's general kernel)
ddt::gpu::Bits host_side(ddt_type t, int64_t count, ddt::gpu::Side* s, Keep& keep) {
  ddt::gpu::Bits bits = ddt::gpu::side_of(t, count, s, general);
  if (s->kind != ddt::gpu::Loc::Nest) {
    const ddt::Layout& L = *t->layout;
    const auto lists = [&] {
      return std::make_pair(keep.list32.empty() ? nullptr : keep.list32.data(), keep.list.empty() ? nullptr : keep.list.data());
    };
    int64_t w = 0;  // as api.cpp's prepare: a tree side becomes a flat list where there is one
    if (s->kind == ddt::gpu::Loc::Tree && !general && (w = ddt::gpu::flatten(t, ddt::plan_of(t), keep.list32, keep.list)) > 0) {
      ddt::gpu::flat_side(t, lists().first, lists().second, w, s);
      ++flats;
    } else {
      ddt::gpu::vec_dividers(L, keep.divs);
      s->t.nodes = L.nodes.data(), s->t.entries = L.entries.data(), s->t.prefix = L.prefix.data();
      s->t.vec_div = keep.divs.data();
      if (s->kind == ddt::gpu::Loc::List) {
        ddt::gpu::list_displacements(ddt::plan_of(t), keep.list32, keep.list);
        s->l.list32 = lists().first, s->l.list = lists().second;
      }
    }
    bits |= ddt::gpu::layout_bits(L);
  }
  ++calls[static_cast<int>(s->kind)];
  return bits;
}


uint64_t addr(const void* p) { return reinterpret_cast<uintptr_t>(p); }

// A kernel's work, unit by unit, in reverse order (threads run in no order; a unit that depended
// on another having run first would show up here).
void emulate_move(bool gather, ddt_type t, int64_t count, char* buf, int64_t lo, int64_t n, char* seq) {
  ddt::gpu::Side s;
  Keep keep;
  // The kernels' rule (api.cpp's move_on, kernels.cu's launch_move): a pack in units of the
  // stream's grain, whatever the typed buffer's alignment (the kernels then load each in narrower
  // typed words; memcpy here), an unpack in units of the typed grain. A unit that straddled two
  // blocks would copy the wrong bytes, which the comparison catches.
  const ddt::gpu::Bits bits = host_side(t, count, &s, keep);
  const int64_t sg = ddt::gpu::grain_of(bits.stream | addr(seq) | uint64_t(lo) | uint64_t(n));
  const int64_t tg = std::min(sg, ddt::gpu::grain_of(bits.typed | addr(buf)));
  const int64_t g = gather ? sg : tg;
  ++splits[gather && tg < sg];
  ++grains[g];
  ddt::gpu::with_grain(g, [&](auto gc) {
    constexpr int G = decltype(gc)::value;
    ddt::gpu::with_locator(s, [&](const auto& loc) {
      for (int64_t u = n / G - 1; u >= 0; --u)
        gather ? ddt::gpu::move_unit<true, G>(loc, buf, seq, lo, u) : ddt::gpu::move_unit<false, G>(loc, buf, seq, lo, u);
    });
  });
}

void emulate_copy(ddt_type st, int64_t sc, const char* src, ddt_type dt, int64_t dc, char* dst, int64_t n) {
  ddt::gpu::Side a, b;
  Keep ka, kb;
  ddt::gpu::Bits bits = host_side(st, sc, &a, ka);
  bits |= host_side(dt, dc, &b, kb);
  const int64_t g = ddt::gpu::grain_of(bits.all() | addr(src) | addr(dst) | uint64_t(n));
  ddt::gpu::with_grain(g, [&](auto gc) {
    constexpr int G = decltype(gc)::value;
    ddt::gpu::with_locator(a, [&](const auto& sl) {
      ddt::gpu::with_locator(b, [&](const auto& dl) {
        for (int64_t u = 0; u < n / G; ++u) ddt::gpu::copy_unit<G>(sl, src, dl, dst, u);
      });
    });
  });
}

// What cudaMemcpy2DAsync would do with the rows box_of finds, row by row; false where the call
// is not rows.
bool emulate_rows(bool gather, ddt_type t, int64_t count, char* buf, int64_t lo, int64_t n, char* seq) {
  ddt::gpu::Box b;
  if (!ddt::gpu::box_of(ddt::plan_of(t), count, lo, n, &b)) return false;
  ++boxes;
  for (int64_t i = 0; i < b.height; ++i) {
    char* row = buf + b.offset + i * b.pitch;
    gather ? std::memcpy(seq + i * b.width, row, b.width) : std::memcpy(row, seq + i * b.width, b.width);
  }
  return true;
}

// A buffer covering what count elements touch, with margins, its type address at a chosen
// distance past a 16-byte boundary (so that every grain occurs).
struct Buf {
  std::vector<char> mem;
  int64_t origin;
  Buf(const RefType& r, int64_t count, int64_t shift, std::mt19937_64* rng, char fill = 0) {
    int64_t lo, hi;
    ref_span(r, count, lo, hi);
    mem.resize(hi - lo + 160);
    const int64_t want = 64 - lo;  // at least 64 bytes of margin below
    const uintptr_t base = reinterpret_cast<uintptr_t>(mem.data());
    origin = want + static_cast<int64_t>((shift - (base + want) % 16 + 32) % 16);
    if (rng)
      for (auto& c : mem) c = static_cast<char>((*rng)());
    else
      std::fill(mem.begin(), mem.end(), fill);
  }
  char* at() { return mem.data() + origin; }
};

// 16-byte aligned packed buffers with a shift.
struct Packed {
  std::vector<char> mem;
  int64_t shift;
  Packed(int64_t n, int64_t s) : mem(n + 32, 0), shift(s) {}
  char* at() {
    const uintptr_t b = reinterpret_cast<uintptr_t>(mem.data());
    return mem.data() + (16 - b % 16) % 16 + shift;
  }
};

void check_type(std::mt19937_64& rng, uint64_t seed) {
  GenOptions opt;
  RefType ref;
  TPtr t = random_type(rng, opt, ref);
  int err;
  ddt_type ty = build_ddt(*t, &err);
  if (!check(ty != nullptr, "construction", *t, seed)) return;
  ddt_type_commit(ty);
  const int64_t shifts[] = {0, 0, 0, 1, 2, 4, 8};
  const int64_t count = rng() % 4, total = count * ref.size;
  const int64_t s1 = shifts[rng() % 7], s2 = shifts[rng() % 7];
  Buf src(ref, count, s1, &rng);
  std::vector<char> want(total);
  ref_pack(ref, src.at(), count, want.data());
  // Full pack, then random ranges at random byte offsets.
  Packed got(total, s2);
  emulate_move(true, ty, count, src.at(), 0, total, got.at());
  check(total == 0 || std::memcmp(got.at(), want.data(), total) == 0, "pack", *t, seed);
  {  // the general kernel's locator on the same call, whatever the plan
    Packed tree(total, s2);
    general = true;
    emulate_move(true, ty, count, src.at(), 0, total, tree.at());
    general = false;
    check(total == 0 || std::memcmp(tree.at(), want.data(), total) == 0, "general pack", *t, seed);
  }
  for (int k = 0; k < 4 && total > 0; ++k) {
    int64_t lo = rng() % total, hi = lo + 1 + rng() % (total - lo);
    if (k == 0) lo = lo / 16 * 16, hi = std::max(lo + 1, hi / 16 * 16);  // ranges the wide grains can take
    Packed part(hi - lo, shifts[rng() % 7]);
    emulate_move(true, ty, count, src.at(), lo, hi - lo, part.at());
    check(std::memcmp(part.at(), want.data() + lo, hi - lo) == 0, "partial pack", *t, seed);
  }
  // The DMA engine's rows, where the call is rows: the whole stream, and a range of whole blocks.
  if (total > 0) {
    Packed rows(total, 0);
    if (emulate_rows(true, ty, count, src.at(), 0, total, rows.at()))
      check(std::memcmp(rows.at(), want.data(), total) == 0, "rows pack", *t, seed);
    const ddt::Plan& pl = ddt::plan_of(ty);
    if (pl.shape == ddt::Shape::Nest && pl.width > 0 && total / pl.width > 1) {
      const int64_t blocks = total / pl.width, a = rng() % blocks, z = a + 1 + rng() % (blocks - a);
      Packed part((z - a) * pl.width, 0);
      if (emulate_rows(true, ty, count, src.at(), a * pl.width, (z - a) * pl.width, part.at()))
        check(std::memcmp(part.at(), want.data() + a * pl.width, (z - a) * pl.width) == 0, "rows partial pack", *t, seed);
    }
  }
  // Unpack (bytes outside the typemap untouched), where the typemap does not overlap: the
  // kernels' units run in no order, so an overlapping receive type has no defined result on a
  // GPU (as the CPU campaign, which excludes them from unpack checks too).
  if (!ref_overlaps(ref, count) && total > 0) {
    Buf mine(ref, count, s1, nullptr, 0x5a), theirs(ref, count, s1, nullptr, 0x5a);
    std::vector<char> stream(total);
    for (auto& c : stream) c = static_cast<char>(rng());
    ref_unpack(ref, stream.data(), count, theirs.at());
    Packed in(total, s2);
    std::memcpy(in.at(), stream.data(), total);
    emulate_move(false, ty, count, mine.at(), 0, total, in.at());
    check(mine.mem == theirs.mem, "unpack", *t, seed);
    Buf by_rows(ref, count, s1, nullptr, 0x5a);
    if (emulate_rows(false, ty, count, by_rows.at(), 0, total, in.at())) check(by_rows.mem == theirs.mem, "rows unpack", *t, seed);
    const int64_t lo = rng() % total, hi = lo + 1 + rng() % (total - lo);
    Buf part(ref, count, s1, nullptr, 0x5a), want_part(ref, count, s1, nullptr, 0x5a);
    ref_unpack(ref, stream.data(), count, want_part.at());
    // The reference unpacks everything; keep only [lo, hi) of it by packing the rest back from
    // a pristine copy: simpler to compare packs of the two buffers over [lo, hi).
    emulate_move(false, ty, count, part.at(), lo, hi - lo, stream.data() + lo);
    std::vector<char> a(total), b(total);
    ref_pack(ref, part.at(), count, a.data());
    ref_pack(ref, want_part.at(), count, b.data());
    check(std::memcmp(a.data() + lo, b.data() + lo, hi - lo) == 0, "partial unpack", *t, seed);
  }
  // Copy into a second random type of the same packed size.
  if (total > 0) {
    RefType ref2;
    int64_t c2 = 0;
    TPtr t2 = random_type_packing(rng, opt, total, 6, true, ref2, &c2);
    if (c2) {
      ddt_type ty2 = build_ddt(*t2, &err);
      ddt_type_commit(ty2);
      const int64_t s3 = shifts[rng() % 7];
      Buf want_dst(ref2, c2, s3, nullptr, 0x33), dst(ref2, c2, s3, nullptr, 0x33);
      ref_unpack(ref2, want.data(), c2, want_dst.at());
      emulate_copy(ty, count, src.at(), ty2, c2, dst.at(), total);
      check(dst.mem == want_dst.mem, "copy", *t2, seed);
      ddt_type_free(&ty2);
    }
  }
  ddt_type_free(&ty);
}

// Long index lists (the ListLoc path, which random types reach rarely): hindexed_block of 17 to
// 2,000 blocks of 1 to 24 bytes at shuffled, sometimes negative, non-overlapping displacements,
// 1 to 3 elements (some resized), full and partial ranges, both directions, against the CPU
// executors (ddt_pack / ddt_unpack).
void check_lists(std::mt19937_64& rng) {
  const int64_t widths[] = {1, 2, 3, 4, 8, 12, 16, 24};
  for (int it = 0; it < 300; ++it) {
    const int64_t n = 17 + rng() % 1984, w = widths[rng() % 8], slot = w + rng() % 9;
    std::vector<int64_t> d(n);
    const int64_t shift = rng() % 2 ? n / 2 * slot : 0;  // some lists reach below their base
    for (int64_t i = 0; i < n; ++i) d[i] = i * slot - shift;
    std::shuffle(d.begin(), d.end(), rng);
    ddt_type t, r;
    // Every third list has blocks of different lengths (1 to w bytes): a table of unequal
    // entries, which the tree locator searches (interpolation, gallop, binary search) and,
    // every other time, the general kernel's locator does for any list.
    const bool unequal = it % 3 == 0;
    general = it % 2 == 1;
    int64_t bytes = n * w;
    if (unequal) {
      std::vector<int64_t> bl(n);
      bytes = 0;
      for (auto& b : bl) bytes += b = 1 + static_cast<int64_t>(rng() % w);
      ddt_type_hindexed(n, bl.data(), d.data(), DDT_BYTE, &t);
    } else {
      ddt_type_hindexed_block(n, w, d.data(), DDT_BYTE, &t);
    }
    int64_t lb, ext;
    ddt_type_extent(t, &lb, &ext);
    if (rng() % 2) {
      ddt_type_resized(t, lb, ext + 16 * (rng() % 4), &r);
      ddt_type_free(&t);
      t = r;
      ddt_type_extent(t, &lb, &ext);
    }
    ddt_type_commit(t);
    const int64_t count = 1 + rng() % 3, total = count * bytes;
    std::vector<char> mem(count * ext + 64);
    for (auto& c : mem) c = static_cast<char>(rng());
    char* buf = mem.data() + 32 - lb;
    std::vector<char> want(total), got(total + 16);
    int64_t k;
    ddt_pack(buf, count, t, 0, want.data(), total, &k);
    const int64_t lo = rng() % 2 ? 0 : rng() % total, hi = lo + 1 + rng() % (total - lo);
    char* seq = got.data() + (rng() % 2) * 8;
    emulate_move(true, t, count, buf, lo, hi - lo, seq);
    if (std::memcmp(seq, want.data() + lo, hi - lo) != 0 && ++failures <= 10)
      std::fprintf(stderr, "FAIL list pack: n %lld w %lld count %lld [%lld, %lld)\n", (long long)n, (long long)w,
                   (long long)count, (long long)lo, (long long)hi);
    std::vector<char> a = mem, b = mem;
    std::vector<char> in(total);
    for (auto& c : in) c = static_cast<char>(rng());
    ddt_unpack(in.data() + lo, hi - lo, a.data() + 32 - lb, count, t, lo, &k);
    emulate_move(false, t, count, b.data() + 32 - lb, lo, hi - lo, in.data() + lo);
    if (a != b && ++failures <= 10)
      std::fprintf(stderr, "FAIL list unpack: n %lld w %lld count %lld [%lld, %lld)\n", (long long)n, (long long)w,
                   (long long)count, (long long)lo, (long long)hi);
    ddt_type_free(&t);
    general = false;
  }
}

// The multiply that replaces division (units.hpp's Divider) against the division it replaces:
// divisors and numerators of every magnitude, powers of two and their neighbours, the largest
// numerators a stream position can take.
bool check_dividers(std::mt19937_64& rng) {
  std::vector<int64_t> ds = {1, 2, 3, 5, 7, 12, 24, 640, 1000003};
  for (int b = 1; b < 63; ++b) {
    const int64_t p = int64_t{1} << b;
    ds.insert(ds.end(), {p - 1, p, p + 1});
  }
  for (int i = 0; i < 2000; ++i) ds.push_back(1 + static_cast<int64_t>(rng() >> (2 + rng() % 62)));  // below 2^62 + 1
  int bad = 0;
  for (int64_t d : ds) {
    const ddt::gpu::Divider v = ddt::gpu::divider(d);
    std::vector<int64_t> ns = {0, 1, d - 1, d, d + 1, INT64_MAX, INT64_MAX - 1, INT64_MAX / d * d, INT64_MAX / d * d - 1};
    for (int i = 0; i < 300; ++i) ns.push_back(static_cast<int64_t>(rng() >> (1 + rng() % 63)));
    for (int64_t n : ns)
      if (n >= 0 && v.div(n) != n / d && ++bad <= 5)
        std::fprintf(stderr, "FAIL divider: %lld / %lld gave %lld\n", (long long)n, (long long)d, (long long)v.div(n));
  }
  return bad == 0;
}

}  // namespace

int main(int argc, char** argv) {
  int64_t types = 5000;
  uint64_t seed = 1;
  campaign_args(argc, argv, &types, &seed);
  std::mt19937_64 drng(seed);
  if (!check_dividers(drng)) ++failures;
  check_lists(drng);
  for (int64_t i = 0; i < types; ++i) {
    std::mt19937_64 rng(seed * 7777777 + i);
    check_type(rng, seed * 7777777 + i);
  }
  std::printf("gpu units on the CPU: %lld types, %lld nest, %lld tree and %lld list calls, grains 1/2/4/8/16: %lld/%lld/%lld/%lld/%lld; %d failures\n",
              (long long)types, (long long)calls[0], (long long)calls[1], (long long)calls[2], (long long)grains[1], (long long)grains[2],
              (long long)grains[4], (long long)grains[8], (long long)grains[16], failures);
  // The campaign must have exercised both locators and every grain, or it proves less than it says.
  std::printf("gpu units on the CPU: %lld calls as DMA rows, %lld by a flat list, %lld packs in typed words narrower than their units\n",
              (long long)boxes, (long long)flats, (long long)splits[1]);
  const bool covered = boxes > 0 && flats > 0 && splits[1] > 0 && calls[0] > 0 && calls[1] > 0 && calls[2] > 0 && grains[1] && grains[2] && grains[4] && grains[8] && grains[16];
  if (!covered) std::fprintf(stderr, "FAIL: a locator or a grain was never exercised\n");
  return failures || !covered ? 1 : 0;
}
