// The runtime's collectives (issue 15, src/shm/collectives.cpp) under `ddtkit run`, written
// against the public API and checked with the independent reference interpreter of tests/support:
//
//   ddtkit run -n N coll_test [--seed S] [--heap 0|1]
//
// bcast, scatter, gather and alltoall move (buffer, count, type) with derived types on both sides:
// a pool of layouts of one packed size per element (contiguous, vector, indexed out of order,
// struct with gaps, resized with a negative lower bound, plain bytes), the two sides of every
// message from different entries. Every root, and sizes from 0 bytes through eager (below one
// cell) to rendezvous (96 KiB, 1 MiB and 4 MiB per block). Every process can regenerate every
// other's buffer from the seed, so each receiver computes its expected buffer itself: the sender's
// block packed by the reference interpreter and unpacked into a copy of its own initial buffer.
// Every byte of every buffer is compared, margins and the typemap's holes included, and the
// buffers a collective only reads must come back unchanged.
// reduce: sum, max and min over int32, int64, float and double (integer values, so every result is
// exact whatever the order), below and above 64 KiB (straight to the root, or reduce-scatter and
// gather), with counts that do not divide among the processes.
// Then: argument errors (bad root, bad op, types reduce refuses, uncommitted types, negative
// counts, and every collective before ddt_comm_init) return their codes and leave every buffer
// as it was; a receive a process has posted with DDT_ANY_SOURCE and DDT_ANY_TAG before a
// collective does not take the collective's message; a receive shorter than the root's message
// is DDT_ERR_TRUNCATE with the message's first bytes delivered, and a longer one takes it whole.
// Last, with COOP_COLL set, that the collectives' calls make the receivers of bcast and scatter
// copy (RGET) and the senders of gather write (RPUT), as seed 002's Table II says.
// Each rank prints one line per failed check (the first 25); rank 0 gathers the counts and
// prints `coll_test: N passed, M failed`; the exit status is non-zero when a check failed.
#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "gen.hpp"
#include "job_tally.hpp"

namespace {

constexpr int kSum = DDT_OP_SUM, kMax = DDT_OP_MAX, kMin = DDT_OP_MIN;

// ---- bookkeeping ---------------------------------------------------------------------------

int g_rank = -1, g_size = 0;
uint64_t g_seed = 1;
bool g_heap = false;  // --heap 1: message buffers from ddt_alloc (the mapped heap), else malloc
int64_t& g_passed = jobtest::tally.passed;  // job_tally.hpp: counted, gathered and closed there
int64_t& g_failed = jobtest::tally.failed;
uint64_t g_case = 0;  // the number of the current case: the same on every rank

bool check(bool ok, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
bool check(bool ok, const char* fmt, ...) {
  char where[96] = "";
  if (!ok) std::snprintf(where, sizeof where, "seed %llu, case %llu", (unsigned long long)g_seed, (unsigned long long)g_case);
  va_list ap;
  va_start(ap, fmt);
  const bool r = jobtest::vrecord(ok, where, fmt, ap);
  va_end(ap);
  return r;
}

using jobtest::err_name;

uint64_t mix(uint64_t x) {  // splitmix64
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}
uint64_t key(std::initializer_list<uint64_t> parts) {
  uint64_t h = 0x636f6c6c74657374ULL;
  for (uint64_t p : parts) h = mix(h ^ p);
  return h;
}
void fill(char* p, int64_t n, uint64_t seed) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const uint64_t v = mix(seed + static_cast<uint64_t>(i));
    std::memcpy(p + i, &v, 8);
  }
  const uint64_t v = mix(seed + static_cast<uint64_t>(i));
  std::memcpy(p + i, &v, static_cast<size_t>(n - i));
}

// The first differing byte of two buffers (-1: equal) and how many differ.
int64_t first_diff(const char* a, const char* b, int64_t n, int64_t* count) {
  int64_t first = -1;
  *count = 0;
  if (std::memcmp(a, b, static_cast<size_t>(n)) == 0) return -1;
  for (int64_t i = 0; i < n; ++i)
    if (a[i] != b[i]) {
      if (first < 0) first = i;
      ++*count;
    }
  return first;
}

// ---- the layouts -----------------------------------------------------------------------------
// Every entry packs kUnit bytes per `mult` elements, so any two take the same message with
// counts n * mult: equal packed sizes, different layouts.
constexpr int64_t kUnit = 48;
constexpr int kByte = 3, kInt16 = 17, kInt32 = 18, kInt64 = 19, kDouble = 13;  // DDT_PREDEFINED_LIST indices

struct Layout {
  const char* name;
  TPtr tree;
  RefType ref;
  ddt_type type = DDT_TYPE_NULL;
  int64_t mult = 1;
};
std::vector<Layout> g_pool;

TPtr node(TNode n) { return std::make_shared<const TNode>(std::move(n)); }
TPtr basic(int i) {
  TNode n;
  n.kind = TNode::Basic, n.basic = i;
  return node(n);
}

void add_layout(const char* name, TPtr t, int64_t mult) {
  Layout l{name, t, {}, DDT_TYPE_NULL, mult};
  int err = DDT_SUCCESS;
  if (!ref_eval(*t, l.ref) || !(l.type = build_ddt(*t, &err)) || ddt_type_commit(l.type) != DDT_SUCCESS) {
    std::fprintf(stderr, "coll_test: cannot build layout %s (%s)\n", name, err_name(err));
    std::exit(2);
  }
  if (l.ref.size * mult != kUnit) {
    std::fprintf(stderr, "coll_test: layout %s packs %lld bytes, not %lld\n", name, (long long)(l.ref.size * mult),
                 (long long)kUnit);
    std::exit(2);
  }
  g_pool.push_back(std::move(l));
}

void build_pool() {
  TNode c;  // contiguous(12, INT32_T): extent 48
  c.kind = TNode::Contig, c.count = 12, c.kids = {basic(kInt32)};
  add_layout("contig", node(c), 1);
  TNode v;  // vector(3, 2, 5, DOUBLE): blocks of 16 B every 40 B, extent 96
  v.kind = TNode::Vector, v.count = 3, v.bl = 2, v.stride = 5, v.kids = {basic(kDouble)};
  add_layout("vector", node(v), 1);
  TNode x;  // indexed({1, 3, 2}, {7, 0, 4}, INT64_T): blocks out of address order, extent 64
  x.kind = TNode::Indexed, x.count = 3, x.bls = {1, 3, 2}, x.displs = {7, 0, 4}, x.kids = {basic(kInt64)};
  add_layout("indexed", node(x), 1);
  TNode s;  // struct {int32 x2 @0, double x4 @16, int16 x4 @56}: holes at 8..16, extent 64
  s.kind = TNode::Struct, s.count = 3, s.bls = {2, 4, 4}, s.displs = {0, 16, 56},
  s.kids = {basic(kInt32), basic(kDouble), basic(kInt16)};
  add_layout("struct", node(s), 1);
  TNode w;  // resized(vector(4, 3, 4, INT32_T), lb -8, extent 80)
  w.kind = TNode::Vector, w.count = 4, w.bl = 3, w.stride = 4, w.kids = {basic(kInt32)};
  TNode r;
  r.kind = TNode::Resized, r.lb = -8, r.extent = 80, r.kids = {node(w)};
  add_layout("resized", node(r), 1);
  add_layout("bytes", basic(kByte), kUnit);  // DDT_BYTE, 48 per unit: the predefined contiguous case
}

// ---- buffers -----------------------------------------------------------------------------------

constexpr int64_t kMargin = 64;  // bytes on either side of the span that nothing may write

// count elements of a layout with margins, from malloc or (--heap) the mapped heap.
struct Buf {
  char* mem = nullptr;
  int64_t size = 0, origin = 0;  // origin: the offset of the buffer's address within mem
  bool heap = false;
  Buf() = default;
  Buf(const Buf&) = delete;
  Buf& operator=(const Buf&) = delete;
  ~Buf() { release(); }
  void release() {
    if (mem && heap) ddt_free(mem);
    else std::free(mem);
    mem = nullptr;
  }
  // The span of count elements of r (empty for 0), with margins, filled from seed.
  void make(const RefType& r, int64_t count, uint64_t seed, bool from_heap) {
    release();
    int64_t lo = 0, hi = 0;
    if (count > 0) ref_span(r, count, lo, hi);
    size = hi - lo + 2 * kMargin;
    origin = kMargin - lo;
    heap = from_heap;
    if (heap) {
      void* p = nullptr;
      if (ddt_alloc(size, &p) != DDT_SUCCESS) std::abort();
      mem = static_cast<char*>(p);
    } else {
      mem = static_cast<char*>(std::malloc(static_cast<size_t>(size)));
      if (!mem) std::abort();
    }
    fill(mem, size, seed);
  }
  char* at() const { return mem + origin; }
  std::vector<char> copy() const { return std::vector<char>(mem, mem + size); }
};

// What a receive of rcount elements of r (initial contents from seed) holds once the stream has
// been delivered into it: the stream's bytes unpacked into a copy of the initial buffer, as many
// whole elements as the stream holds (the streams here are whole elements of every layout).
std::vector<char> expect(const Layout& r, int64_t rcount, uint64_t seed, const std::vector<char>& stream) {
  Buf init;
  init.make(r.ref, rcount, seed, false);
  std::vector<char> want = init.copy();
  const int64_t elems = std::min<int64_t>(rcount, static_cast<int64_t>(stream.size()) / std::max<int64_t>(1, r.ref.size));
  if (elems > 0) ref_unpack(r.ref, stream.data(), elems, want.data() + init.origin);
  return want;
}

// The packed stream of count elements of l at p.
std::vector<char> pack(const Layout& l, const char* p, int64_t count) {
  std::vector<char> s(static_cast<size_t>(count * l.ref.size));
  if (count > 0) ref_pack(l.ref, p, count, s.data());
  return s;
}

void compare(const char* got, const std::vector<char>& want, int64_t size, const std::string& what) {
  int64_t n = 0;
  const int64_t first = size == static_cast<int64_t>(want.size()) ? first_diff(got, want.data(), size, &n) : 0;
  check(first < 0, "%s: %lld wrong bytes, first at offset %lld of %lld", what.c_str(), (long long)n, (long long)first,
        (long long)size);
}

// Seeds of a case's buffers: what the rank sends from and what it receives into.
uint64_t send_seed(int rank) { return key({g_seed, g_case, static_cast<uint64_t>(rank), 1}); }
uint64_t recv_seed(int rank) { return key({g_seed, g_case, static_cast<uint64_t>(rank), 2}); }

std::string label(const char* coll, int root, int64_t units, const Layout& s, const Layout& r) {
  char b[160];
  std::snprintf(b, sizeof b, "%s root %d, %lld B per block, %s -> %s", coll, root, (long long)(units * kUnit), s.name,
                r.name);
  return b;
}

int64_t extent(const Layout& l) { return l.ref.extent(); }

// ---- the four data movements -----------------------------------------------------------------
// units: the message per block in kUnit bytes; extra: units the receive has beyond the message
// (negative: fewer, a truncation).

void case_bcast(int root, int64_t units, const Layout& s, const Layout& r, int64_t extra = 0) {
  ++g_case;
  const bool me_root = g_rank == root;
  const Layout& mine = me_root ? s : r;
  const int64_t count = me_root ? units * s.mult : (units + extra) * r.mult;
  Buf b;
  b.make(mine.ref, count, me_root ? send_seed(g_rank) : recv_seed(g_rank), g_heap);
  const int e = ddt_comm_bcast(b.at(), count, mine.type, root);
  const std::string what = label("bcast", root, units, s, r) + (extra ? " (receive " + std::to_string(extra) + " units longer)" : "");
  if (me_root) {
    Buf orig;
    orig.make(s.ref, count, send_seed(g_rank), false);
    check(e == DDT_SUCCESS || extra < 0, "%s: root returned %s", what.c_str(), err_name(e));
    compare(b.mem, orig.copy(), b.size, what + ": the root's buffer");
    return;
  }
  check(e == (extra < 0 ? DDT_ERR_TRUNCATE : DDT_SUCCESS), "%s: returned %s", what.c_str(), err_name(e));
  Buf src;
  src.make(s.ref, units * s.mult, send_seed(root), false);
  std::vector<char> stream = pack(s, src.at(), units * s.mult);
  compare(b.mem, expect(r, count, recv_seed(g_rank), stream), b.size, what);
}

void case_scatter(int root, int64_t units, const Layout& s, const Layout& r, int64_t extra = 0) {
  ++g_case;
  const bool me_root = g_rank == root;
  const int64_t sc = units * s.mult, rc = (units + extra) * r.mult;
  Buf sb, rb;
  if (me_root) sb.make(s.ref, sc * g_size, send_seed(g_rank), g_heap);
  rb.make(r.ref, rc, recv_seed(g_rank), g_heap);
  // The arguments only the root reads are nonsense elsewhere.
  const int e = ddt_comm_scatter(me_root ? sb.at() : nullptr, me_root ? sc : -1, me_root ? s.type : DDT_TYPE_NULL,
                                 rb.at(), rc, r.type, root);
  const std::string what = label("scatter", root, units, s, r) + (extra ? " (receive longer)" : "");
  check(e == DDT_SUCCESS, "%s: returned %s", what.c_str(), err_name(e));
  Buf src;
  src.make(s.ref, sc * g_size, send_seed(root), false);
  if (me_root) compare(sb.mem, src.copy(), sb.size, what + ": the root's send buffer");
  std::vector<char> stream = pack(s, src.at() + g_rank * sc * extent(s), sc);
  compare(rb.mem, expect(r, rc, recv_seed(g_rank), stream), rb.size, what);
}

void case_gather(int root, int64_t units, const Layout& s, const Layout& r) {
  ++g_case;
  const bool me_root = g_rank == root;
  const int64_t sc = units * s.mult, rc = units * r.mult;
  Buf sb, rb;
  sb.make(s.ref, sc, send_seed(g_rank), g_heap);
  if (me_root) rb.make(r.ref, rc * g_size, recv_seed(g_rank), g_heap);
  const int e = ddt_comm_gather(sb.at(), sc, s.type, me_root ? rb.at() : nullptr, me_root ? rc : -1,
                                me_root ? r.type : DDT_TYPE_NULL, root);
  const std::string what = label("gather", root, units, s, r);
  check(e == DDT_SUCCESS, "%s: returned %s", what.c_str(), err_name(e));
  Buf orig;
  orig.make(s.ref, sc, send_seed(g_rank), false);
  compare(sb.mem, orig.copy(), sb.size, what + ": the send buffer");
  if (!me_root) return;
  // Every block's stream, in rank order, unpacked as one stream of size * rc elements.
  std::vector<char> stream;
  for (int q = 0; q < g_size; ++q) {
    Buf src;
    src.make(s.ref, sc, send_seed(q), false);
    std::vector<char> part = pack(s, src.at(), sc);
    stream.insert(stream.end(), part.begin(), part.end());
  }
  compare(rb.mem, expect(r, rc * g_size, recv_seed(g_rank), stream), rb.size, what);
}

void case_alltoall(int64_t units, const Layout& s, const Layout& r) {
  ++g_case;
  const int64_t sc = units * s.mult, rc = units * r.mult;
  Buf sb, rb;
  sb.make(s.ref, sc * g_size, send_seed(g_rank), g_heap);
  rb.make(r.ref, rc * g_size, recv_seed(g_rank), g_heap);
  const int e = ddt_comm_alltoall(sb.at(), sc, s.type, rb.at(), rc, r.type);
  const std::string what = label("alltoall", -1, units, s, r);
  check(e == DDT_SUCCESS, "%s: returned %s", what.c_str(), err_name(e));
  Buf orig;
  orig.make(s.ref, sc * g_size, send_seed(g_rank), false);
  compare(sb.mem, orig.copy(), sb.size, what + ": the send buffer");
  std::vector<char> stream;  // block q comes from q's block g_rank
  for (int q = 0; q < g_size; ++q) {
    Buf src;
    src.make(s.ref, sc * g_size, send_seed(q), false);
    std::vector<char> part = pack(s, src.at() + g_rank * sc * extent(s), sc);
    stream.insert(stream.end(), part.begin(), part.end());
  }
  compare(rb.mem, expect(r, rc * g_size, recv_seed(g_rank), stream), rb.size, what);
}

// Sizes per block in units: empty, one element, eager (4.7 and 15 KiB: below one cell),
// rendezvous (96 KiB, 1 MiB and 4 MiB; the largest for the first and last root only).
const int64_t kSizes[] = {0, 1, 100, 320, 2048, 21846, 87382};
constexpr int kLargest = 6;

// The two sides' layouts of case (c, a, b): different entries, every pair in turn.
std::pair<const Layout*, const Layout*> pair_of(int c, int a, int b) {
  const int n = static_cast<int>(g_pool.size());
  const int s = (c * 5 + a * 7 + b * 3) % n;
  const int r = (s + 1 + (a + b + c) % (n - 1)) % n;
  return {&g_pool[s], &g_pool[r]};
}

void movements() {
  for (int c = 0; c < 4; ++c)
    for (int root = 0; root < g_size; ++root)
      for (int z = 0; z < static_cast<int>(sizeof kSizes / sizeof kSizes[0]); ++z) {
        if (z == kLargest && root != 0 && root != g_size - 1) continue;
        if (c == 3 && root > 0 && z >= kLargest - 1) continue;  // alltoall has no root: its large sizes once
        auto [s, r] = pair_of(c, root, z);
        if (c == 0) case_bcast(root, kSizes[z], *s, *r);
        else if (c == 1) case_scatter(root, kSizes[z], *s, *r);
        else if (c == 2) case_gather(root, kSizes[z], *s, *r);
        else case_alltoall(kSizes[z], *s, *r);
      }
  // Receives longer than the message (the rest untouched), in the self copy too; receives
  // shorter than bcast's message (DDT_ERR_TRUNCATE, its first bytes delivered), eager and
  // rendezvous.
  for (int root = 0; root < g_size; ++root)
    for (int64_t units : {int64_t{7}, int64_t{5000}}) {
      auto [s, r] = pair_of(5, root, static_cast<int>(units % 7));
      case_scatter(root, units, *s, *r, 2);
      case_bcast(root, units, *s, *r, 1);
      case_bcast(root, units, *s, *r, -1);
    }
}

// ---- reduce ----------------------------------------------------------------------------------

template <class T>
T value(int rank, int64_t i) {  // integers in [-1000, 1000]: every sum of them is exact
  return static_cast<T>(static_cast<int64_t>(key({g_seed, g_case, static_cast<uint64_t>(rank),
                                                  static_cast<uint64_t>(i)}) % 2001) - 1000);
}

template <class T>
void case_reduce(ddt_type type, const char* tname, int op, int root, int64_t count) {
  ++g_case;
  const int64_t bytes = count * static_cast<int64_t>(sizeof(T));
  const bool me_root = g_rank == root;
  // Send and receive buffers with margins; the receive's initial bytes are a pattern.
  auto alloc = [](int64_t n) {
    void* p = nullptr;
    if (g_heap) {
      if (ddt_alloc(n, &p) != DDT_SUCCESS) std::abort();
    } else if (!(p = std::malloc(static_cast<size_t>(n)))) {
      std::abort();
    }
    return static_cast<char*>(p);
  };
  auto release = [](char* p) { g_heap ? (void)ddt_free(p) : std::free(p); };
  char* s = alloc(bytes + 2 * kMargin);
  char* r = alloc(bytes + 2 * kMargin);
  fill(s, bytes + 2 * kMargin, recv_seed(g_rank) + 1);
  for (int64_t i = 0; i < count; ++i) {
    const T v = value<T>(g_rank, i);
    std::memcpy(s + kMargin + i * sizeof(T), &v, sizeof(T));
  }
  fill(r, bytes + 2 * kMargin, recv_seed(g_rank));
  const std::vector<char> s0(s, s + bytes + 2 * kMargin), r0(r, r + bytes + 2 * kMargin);
  const int e = ddt_comm_reduce(s + kMargin, r + kMargin, count, type, op, root);
  char what[160];
  std::snprintf(what, sizeof what, "reduce %s %s, root %d, %lld elements (%lld B)", op == kSum ? "sum" : op == kMax ? "max" : "min",
                tname, root, (long long)count, (long long)bytes);
  check(e == DDT_SUCCESS, "%s: returned %s", what, err_name(e));
  compare(s, s0, bytes + 2 * kMargin, std::string(what) + ": the send buffer");
  std::vector<char> want = r0;
  if (me_root)
    for (int64_t i = 0; i < count; ++i) {
      T acc = value<T>(0, i);
      for (int q = 1; q < g_size; ++q) {
        const T v = value<T>(q, i);
        acc = op == kSum ? static_cast<T>(acc + v) : op == kMax ? std::max(acc, v) : std::min(acc, v);
      }
      std::memcpy(want.data() + kMargin + i * sizeof(T), &acc, sizeof(T));
    }
  compare(r, want, bytes + 2 * kMargin, std::string(what) + (me_root ? "" : ": a non-root's receive buffer"));
  release(s);
  release(r);
}

template <class T>
void reduce_type(ddt_type type, const char* tname) {
  // Below 64 KiB: straight to the root; from 64 KiB on: reduce-scatter and gather, with counts
  // that no process count divides, and one where some slices are empty of nothing.
  const int64_t below[] = {0, 1, 3, 1000, (int64_t{64} << 10) / static_cast<int64_t>(sizeof(T)) - 1};
  const int64_t above[] = {(int64_t{64} << 10) / static_cast<int64_t>(sizeof(T)),
                           (int64_t{1} << 20) / static_cast<int64_t>(sizeof(T)) + 7};
  for (int op : {kSum, kMax, kMin})
    for (int root = 0; root < g_size; ++root) {
      for (int64_t c : below) case_reduce<T>(type, tname, op, root, c);
      for (int64_t c : above)
        if (root == (op + c) % g_size || root == g_size - 1) case_reduce<T>(type, tname, op, root, c);
    }
}

void reductions() {
  reduce_type<int32_t>(DDT_INT32_T, "int32");
  reduce_type<int64_t>(DDT_INT64_T, "int64");
  reduce_type<float>(DDT_FLOAT, "float");
  reduce_type<double>(DDT_DOUBLE, "double");
}

// ---- argument errors -----------------------------------------------------------------------
// Every rank makes the same bad call, so none waits for another; each buffer it passed must be as
// it was. A correct collective afterwards shows that no message was left behind.

void errors() {
  ++g_case;
  const Layout& l = g_pool[1];
  const int64_t n = 8;
  Buf a, b;
  a.make(l.ref, n * g_size, send_seed(g_rank), g_heap);
  b.make(l.ref, n * g_size, recv_seed(g_rank), g_heap);
  const std::vector<char> a0 = a.copy(), b0 = b.copy();
  auto untouched = [&](const char* what) {
    compare(a.mem, a0, a.size, std::string(what) + ": first buffer");
    compare(b.mem, b0, b.size, std::string(what) + ": second buffer");
  };
  auto expect_code = [&](int got, int want, const char* what) {
    check(got == want, "%s: returned %s, expected %s", what, err_name(got), err_name(want));
    untouched(what);
  };
  for (int root : {-1, g_size, -16}) {
    expect_code(ddt_comm_bcast(a.at(), n, l.type, root), DDT_ERR_ARG, "bcast, bad root");
    expect_code(ddt_comm_scatter(a.at(), n, l.type, b.at(), n, l.type, root), DDT_ERR_ARG, "scatter, bad root");
    expect_code(ddt_comm_gather(a.at(), n, l.type, b.at(), n, l.type, root), DDT_ERR_ARG, "gather, bad root");
    expect_code(ddt_comm_reduce(a.at(), b.at(), n, DDT_INT32_T, kSum, root), DDT_ERR_ARG, "reduce, bad root");
  }
  for (int op : {-1, 3, 100})
    expect_code(ddt_comm_reduce(a.at(), b.at(), n, DDT_INT32_T, op, 0), DDT_ERR_ARG, "reduce, bad op");
  // reduce combines predefined numbers only: a derived type, even of int32, is refused, as are
  // bytes, characters, booleans and the pair types; complex numbers have no max or min.
  ddt_type c2 = DDT_TYPE_NULL;
  ddt_type_contiguous(2, DDT_INT32_T, &c2);
  ddt_type_commit(c2);
  ddt_type dup = DDT_TYPE_NULL;
  ddt_type_dup(DDT_DOUBLE, &dup);
  ddt_type_commit(dup);
  for (ddt_type t : {c2, dup, l.type, DDT_BYTE, DDT_CHAR, DDT_C_BOOL, DDT_2INT, DDT_DOUBLE_INT, DDT_PACKED})
    expect_code(ddt_comm_reduce(a.at(), b.at(), 2, t, kSum, 0), DDT_ERR_TYPE, "reduce, a type it does not combine");
  expect_code(ddt_comm_reduce(a.at(), b.at(), 2, DDT_C_DOUBLE_COMPLEX, kMax, 0), DDT_ERR_TYPE, "reduce, max of complex");
  expect_code(ddt_comm_reduce(a.at(), b.at(), 2, DDT_TYPE_NULL, kSum, 0), DDT_ERR_TYPE, "reduce, null type");
  expect_code(ddt_comm_reduce(a.at(), b.at(), -1, DDT_INT32_T, kSum, 0), DDT_ERR_COUNT, "reduce, negative count");
  expect_code(ddt_comm_reduce(nullptr, b.at(), 4, DDT_INT32_T, kSum, 0), DDT_ERR_ARG, "reduce, null send buffer");
  ddt_type_free(&c2);
  ddt_type_free(&dup);
  // Uncommitted types, negative counts, a null type, on any rank's side.
  ddt_type raw = DDT_TYPE_NULL;
  ddt_type_vector(2, 1, 3, DDT_INT, &raw);
  expect_code(ddt_comm_bcast(a.at(), 1, raw, 0), DDT_ERR_NOT_COMMITTED, "bcast, uncommitted type");
  expect_code(ddt_comm_bcast(a.at(), -1, l.type, 0), DDT_ERR_COUNT, "bcast, negative count");
  expect_code(ddt_comm_scatter(a.at(), n, l.type, b.at(), n, DDT_TYPE_NULL, 0), DDT_ERR_TYPE, "scatter, null receive type");
  expect_code(ddt_comm_gather(a.at(), -2, l.type, b.at(), n, l.type, 0), DDT_ERR_COUNT, "gather, negative count");
  expect_code(ddt_comm_alltoall(a.at(), n, raw, b.at(), n, l.type), DDT_ERR_NOT_COMMITTED, "alltoall, uncommitted type");
  expect_code(ddt_comm_alltoall(a.at(), n, l.type, b.at(), -1, l.type), DDT_ERR_COUNT, "alltoall, negative count");
  ddt_type_free(&raw);
  // Complex sums are defined: component by component.
  ++g_case;
  double z[4] = {1.0 + g_rank, -2.0 * g_rank, 0, 0}, out[4] = {7, 7, 7, 7};
  const int e = ddt_comm_reduce(z, out, 2, DDT_C_DOUBLE_COMPLEX, kSum, 0);
  const double n2 = static_cast<double>(g_size);
  const bool ok = g_rank != 0 || (out[0] == n2 + n2 * (n2 - 1) / 2 && out[1] == -n2 * (n2 - 1) && out[2] == 0 && out[3] == 0);
  check(e == DDT_SUCCESS && ok, "reduce, sum of complex: returned %s, (%g, %g)", err_name(e), out[0], out[1]);
  // And the same buffers still take a collective afterwards.
  case_bcast(g_size - 1, 5, g_pool[2], g_pool[3]);
}

// ---- a user's wildcard receive posted before a collective -------------------------------------
// The receivers post irecv(DDT_ANY_SOURCE, DDT_ANY_TAG) before the collective; the collective's
// messages (eager or rendezvous) go to the collective, and the user's message sent after it goes
// to the user's receive.

void wildcard(int root, int64_t units, bool gather) {
  const int tag = 77;
  const bool receiver = gather ? g_rank == root : g_rank != root;
  int64_t msg[4] = {-1, -1, -1, -1};
  ddt_request req = DDT_REQUEST_NULL;
  if (receiver) check(ddt_comm_irecv(msg, 4, DDT_INT64_T, DDT_ANY_SOURCE, DDT_ANY_TAG, &req) == DDT_SUCCESS, "irecv");
  auto [s, r] = pair_of(7, root, static_cast<int>(units % 5));
  if (gather) case_gather(root, units, *s, *r);
  else case_bcast(root, units, *s, *r);
  // The user's message: gather: from the next rank to the root; bcast: from the root to each.
  const int64_t body[4] = {int64_t(g_case), 11, 22, 33};
  const int from = gather ? (root + 1) % g_size : root;
  if (g_rank == from) {
    if (gather) check(ddt_comm_send(body, 4, DDT_INT64_T, root, tag) == DDT_SUCCESS, "user send");
    else
      for (int q = 0; q < g_size; ++q)
        if (q != root) check(ddt_comm_send(body, 4, DDT_INT64_T, q, tag) == DDT_SUCCESS, "user send");
  }
  if (!receiver) return;
  ddt_status st{};
  const int e = ddt_comm_wait(&req, &st);
  check(e == DDT_SUCCESS && st.source == from && st.tag == tag && st.bytes == 32 && std::memcmp(msg, body, 32) == 0,
        "a wildcard receive posted before %s (root %d, %lld B): returned %s, source %d, tag %d, %lld bytes, "
        "first word %lld (expected the user's message from %d, tag %d)",
        gather ? "gather" : "bcast", root, (long long)(units * kUnit), err_name(e), st.source, st.tag,
        (long long)st.bytes, (long long)msg[0], from, tag);
}

void wildcards() {
  for (int root = 0; root < g_size; ++root)
    for (int64_t units : {int64_t{3}, int64_t{4000}}) {
      wildcard(root, units, false);
      wildcard(root, units, true);
    }
}

// ---- who copies: seed 002's Table II through the collectives' calls -------------------------
// Under COOP_COLL the collectives' calls decide the protocol (ddtkit.h): bcast and scatter are
// isend/recv, so every receiver copies its own block (RGET); gather is send/irecv, so every
// sender writes its block into the root (RPUT); reduce above 64 KiB is isend/recv in its
// reduce-scatter (RGET: every owner copies its parts) and send/irecv in its gather. Counted by the receivers' ddt_comm_get_times, with 1 MiB
// contiguous blocks (long pieces: no protocol falls back to cells). Run last: it leaves the
// protocol at COOP_COLL.
void patterns() {
  ++g_case;
  // Pipelined cells (DDTKIT_MECH=pipe) and the iov exchanges run every transfer as RGET through
  // cells, which no protocol counts (ddtkit.h).
  const std::string mech = std::getenv("DDTKIT_MECH") ? std::getenv("DDTKIT_MECH") : "";
  const std::string exch = std::getenv("DDTKIT_EXCHANGE") ? std::getenv("DDTKIT_EXCHANGE") : "";
  if (mech == "pipe" || exch == "naive" || exch == "pipelined") return;
  const int e0 = ddt_comm_set_protocol(DDT_PROTO_COOP_COLL);
  ddt_comm_barrier();
  if (e0 != DDT_SUCCESS) {
    if (g_rank == 0) std::printf("coll_test: COOP_COLL not available (%s): who copies not checked\n", err_name(e0));
    return;
  }
  const Layout& bytes = g_pool.back();
  const int64_t units = 21846;  // 1 MiB per block
  const int P = g_size, root = P - 1;
  auto count_of = [](const char* what, const std::function<void()>& op, int64_t rget, int64_t rput, int64_t coop) {
    ddt_comm_times a{}, b{};
    ddt_comm_get_times(&a);
    op();
    ddt_comm_get_times(&b);
    const int64_t g = b.by_rget - a.by_rget, r = b.by_rput - a.by_rput, c = b.by_coop - a.by_coop;
    check(g == rget && r == rput && c == coop,
          "COOP_COLL, %s: this rank received %lld by RGET, %lld by RPUT, %lld by COOP; expected %lld, %lld, %lld", what,
          (long long)g, (long long)r, (long long)c, (long long)rget, (long long)rput, (long long)coop);
  };
  const bool me_root = g_rank == root;
  count_of("scatter", [&] { case_scatter(root, units, bytes, bytes); }, me_root ? 0 : 1, 0, 0);
  count_of("bcast", [&] { case_bcast(root, units, bytes, bytes); }, me_root ? 0 : 1, 0, 0);
  count_of("gather", [&] { case_gather(root, units, bytes, bytes); }, 0, me_root ? P - 1 : 0, 0);
  const int64_t n = (int64_t{4} << 20) / 8;  // 4 MiB of doubles: 1 MiB slices at 4 ranks
  count_of("reduce", [&] { case_reduce<double>(DDT_DOUBLE, "double", kSum, root, n); }, P - 1, me_root ? P - 1 : 0, 0);
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--seed" && i + 1 < argc) g_seed = std::strtoull(argv[++i], nullptr, 10);
    else if (a == "--heap" && i + 1 < argc) g_heap = std::atoi(argv[++i]) != 0;
    else {
      std::fprintf(stderr, "usage: ddtkit run -n N coll_test [--seed S] [--heap 0|1]\n");
      return 2;
    }
  }
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  // Before ddt_comm_init: every collective is DDT_ERR_COMM, its buffers untouched.
  {
    int32_t buf[4] = {1, 2, 3, 4}, out[4] = {5, 6, 7, 8};
    const int codes[] = {ddt_comm_bcast(buf, 4, DDT_INT32_T, 0),
                         ddt_comm_scatter(buf, 1, DDT_INT32_T, out, 1, DDT_INT32_T, 0),
                         ddt_comm_gather(buf, 1, DDT_INT32_T, out, 1, DDT_INT32_T, 0),
                         ddt_comm_alltoall(buf, 1, DDT_INT32_T, out, 1, DDT_INT32_T),
                         ddt_comm_reduce(buf, out, 4, DDT_INT32_T, kSum, 0)};
    for (int c : codes) check(c == DDT_ERR_COMM, "a collective before ddt_comm_init returned %s", err_name(c));
    check(buf[0] == 1 && buf[3] == 4 && out[0] == 5 && out[3] == 8, "a collective before ddt_comm_init wrote a buffer");
  }
  int e = ddt_comm_init();
  if (e != DDT_SUCCESS) {
    std::fprintf(stderr, "coll_test: ddt_comm_init failed: %s (run it as `ddtkit run -n N coll_test ...`)\n",
                 err_name(e));
    return 2;
  }
  if (ddt_comm_rank(&g_rank) != DDT_SUCCESS || ddt_comm_size(&g_size) != DDT_SUCCESS || g_size < 2) {
    std::fprintf(stderr, "coll_test: rank/size queries failed, or fewer than 2 ranks (size %d)\n", g_size);
    return 2;
  }
  jobtest::tally.program = "coll_test", jobtest::tally.rank = g_rank;
  build_pool();
  if (g_rank == 0)
    std::printf("coll_test: %d ranks, seed %llu, buffers from %s%s%s\n", g_size, (unsigned long long)g_seed,
                g_heap ? "ddt_alloc" : "malloc", std::getenv("DDTKIT_PROTOCOL") ? ", DDTKIT_PROTOCOL=" : "",
                std::getenv("DDTKIT_PROTOCOL") ? std::getenv("DDTKIT_PROTOCOL") : "");
  movements();
  reductions();
  errors();
  wildcards();
  patterns();
  // COOP-load's counters are back at zero once every transfer has ended.
  if (ddt_comm_barrier() == DDT_SUCCESS)
    for (int r = 0; r < g_size; ++r) {
      int64_t l = -1;
      check(ddt_comm_get_load(r, &l) == DDT_SUCCESS && l == 0, "rank %d's load counter is %lld after the run", r,
            (long long)l);
    }
  for (Layout& l : g_pool)
    if (l.mult == 1) ddt_type_free(&l.type);
  return jobtest::close(g_size);  // the counts go over plain sends, not the collectives under test
}
