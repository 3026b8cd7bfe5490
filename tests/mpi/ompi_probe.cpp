// Which derived types Open MPI moves correctly: an ordinary MPI program (not preloaded) that
// builds random types through the MPI and through ddtkit with the same calls (the MPI's own lb
// and extent imposed on the ddtkit type, as the interposer does), and checks Open MPI's own
// engine against ddtkit's:
//   - transfers: every rank sends count elements to the next rank and receives from the previous
//     one, natively, with counts that make messages from one element to about --max-bytes; each
//     message goes typed -> typed, typed -> MPI_BYTE and MPI_BYTE -> typed (which side's engine is
//     wrong), and the receive buffer is compared byte for byte with what ddt_pack of the sender's
//     buffer and ddt_unpack into the receiver's initial buffer make of it, gaps and guard bytes
//     around the buffer included;
//   - in one process: MPI_Pack and MPI_Unpack against ddt_pack and ddt_unpack, and
//     MPI_Type_get_true_extent_x against ddt_type_true_extent.
// For each check it asks the interposer's pass rule (src/mpi/pass.cpp, compiled in) whether the
// interposer would hand that message to this MPI as it is. A mismatch of a message the rule
// passes is a failure (exit 1); every other mismatch is a finding of this MPI's, printed and
// counted. --log FILE.<rank> writes one line per check (facts of the type, the message and the
// outcome), to test a candidate rule against every check.
//
//   mpiexec -n 2|3 ompi_probe [--types N] [--seed S] [--max-bytes B] [--log PREFIX] [--quiet]
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "gen.hpp"
#include "mpi/shim.hpp"
#include "mpi_build.hpp"

namespace {

int me = 0, np = 1;
bool quiet = false;
FILE* log_file = nullptr;
int64_t checks = 0, findings = 0, failures = 0, passed_checks = 0;
constexpr int64_t kGuard = 256;  // bytes checked on either side of every receive buffer

// Deterministic contents of rank r's buffer for (type i, count index k): any rank can make any.
void fill(std::vector<char>& v, uint64_t i, int k, int r) {
  uint64_t s = i * 0x9e3779b97f4a7c15ULL + static_cast<uint64_t>(k) * 0x94d049bb133111ebULL +
               static_cast<uint64_t>(r) * 0xbf58476d1ce4e5b9ULL + 1;
  for (auto& c : v) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    c = static_cast<char>(s);
  }
}

// What the interposer knows of the type (make_info in src/mpi/types.cpp, for a Pack type), so
// the probe asks the pass rule exactly what the interposer would.
struct Probe {
  std::unique_ptr<ddtmpi::TypeInfo> info{new ddtmpi::TypeInfo};
  int64_t lb = 0, tlb = 0, text = 0, blocks = 0;
  int ascending = 0;
  bool c_aligned = false;  // every basic element at a multiple of its C alignment (reference)
};

// Whether every basic element of count elements lies at a multiple of its own alignment from
// the buffer address (entries and the extent both), from the reference expansion r.
bool naturally_aligned(const RefType& r, int64_t extent) {
  for (size_t k = 0; k < r.map.size(); ++k) {
    const int64_t a = basic_align(r.kinds[k]);
    if (r.map[k].first % a != 0 || extent % a != 0) return false;
  }
  return true;
}

bool has_x87(const TNode& t) {
  if (t.kind == TNode::Basic) {
    int err = 0;
    ddt_type b = build_ddt(t, &err);  // a predefined handle
    return b == DDT_LONG_DOUBLE || b == DDT_C_LONG_DOUBLE_COMPLEX || b == DDT_LONG_DOUBLE_INT;
  }
  for (const TPtr& k : t.kids)
    if (has_x87(*k)) return true;
  return false;
}

void facts(Probe& p, ddt_type t, bool x87) {
  ddtmpi::TypeInfo& info = *p.info;
  info.t = t;
  info.x87 = x87;
  ddt_type_size(t, &info.size);
  ddt_type_extent(t, &p.lb, &info.extent);
  ddt_type_blocks(t, &p.blocks, &p.ascending);
  ddt_type_true_extent(t, &p.tlb, &p.text);
  if (info.size == 0 || (p.blocks == 1 && info.extent == info.size)) {
    info.mode = ddtmpi::TypeInfo::Contig;
  } else {
    info.mode = ddtmpi::TypeInfo::Pack;
    info.pieces = p.blocks;
    info.mean_block = info.size / p.blocks;
    info.monotone = p.ascending && info.extent >= p.text;
    info.aligned = ddtmpi::naturally_aligned(t, &info.unit);
  }
}

// The bytes count elements touch: [lo, hi) from the buffer address.
void span(const Probe& p, int64_t count, int64_t& lo, int64_t& hi) {
  const int64_t ext = p.info->extent, last = (count - 1) * ext;
  lo = p.tlb + std::min<int64_t>(0, last);
  hi = p.tlb + p.text + std::max<int64_t>(0, last);
  if (hi < lo) hi = lo;
}

// Whether count elements touch some byte twice (a receive into them has no defined result).
bool overlapping(const Probe& p, int64_t count) {
  if (p.info->monotone || p.info->size == 0) return false;
  std::vector<std::pair<int64_t, int64_t>> all;
  bool many = false;
  ddtmpi::each_piece(p.info->t, count, count * p.info->size, [&](uintptr_t base, size_t len) {
    if (all.size() > (1u << 20)) many = true;
    else all.push_back({static_cast<int64_t>(base), static_cast<int64_t>(len)});
  });
  if (many) return true;  // not checked: treated as overlapping (received as bytes only)
  std::sort(all.begin(), all.end());
  for (size_t i = 1; i < all.size(); ++i)
    if (all[i].first < all[i - 1].first + all[i - 1].second) return true;
  return false;
}

// A buffer of count elements with kGuard bytes either side; base() is the MPI buffer address,
// at an address 16 * n + shift (the same on every rank for a given type and count), so the rule
// is checked at every alignment of the user's buffer, not only the allocator's.
struct Buf {
  std::vector<char> data;
  int64_t lo = 0, shift = 0;
  char* base() { return data.data() + kGuard + shift - lo; }
};
Buf make_buf(const Probe& p, int64_t count, uint64_t i, int k, int r) {
  Buf b;
  int64_t hi;
  span(p, count, b.lo, hi);
  const int64_t lo_mod = ((b.lo % 16) + 16) % 16;
  b.shift = ((static_cast<int64_t>(i) + k) % 16 + lo_mod) % 16;  // base() % 16 == (i + k) % 16
  b.data.resize(hi - b.lo + 2 * kGuard + 16);
  fill(b.data, i, k, r);
  return b;
}

std::vector<char> ddt_stream(const Probe& p, Buf& b, int64_t count) {
  std::vector<char> out(count * p.info->size);
  int64_t n = 0;
  ddt_pack(b.base(), count, p.info->t, 0, out.data(), out.size(), &n);
  return out;
}

// Where two buffers first differ and how many bytes do (-1, 0: equal).
std::pair<int64_t, int64_t> diff(const std::vector<char>& a, const std::vector<char>& b) {
  int64_t first = -1, n = 0;
  for (size_t k = 0; k < a.size() && k < b.size(); ++k)
    if (a[k] != b[k]) {
      if (first < 0) first = static_cast<int64_t>(k);
      ++n;
    }
  if (a.size() != b.size() && first < 0) first = static_cast<int64_t>(std::min(a.size(), b.size())), n = 1;
  return {first, n};
}

// Records one check; `where` locates the first wrong byte (its meaning depends on `what`).
void record(uint64_t i, const TNode& t, const Probe& p, const char* what, int64_t count, bool passes,
            std::pair<int64_t, int64_t> d, const std::string& extra = "") {
  ++checks;
  if (passes) ++passed_checks;
  const bool ok = d.second == 0;
  const ddtmpi::TypeInfo& f = *p.info;
  if (log_file)
    std::fprintf(log_file, "%llu %s count %lld bytes %lld ok %d pass %d size %lld lb %lld extent %lld tlb %lld text %lld "
                       "blocks %lld asc %d mono %d x87 %d aligned %d c_aligned %d mean %lld first %lld ndiff %lld%s | %s\n",
                 (unsigned long long)i, what, (long long)count, (long long)(count * f.size), ok, passes,
                 (long long)f.size, (long long)p.lb, (long long)f.extent, (long long)p.tlb, (long long)p.text,
                 (long long)p.blocks, p.ascending, f.monotone, f.x87, f.aligned, p.c_aligned, (long long)f.mean_block, (long long)d.first,
                 (long long)d.second, extra.c_str(), describe(t).c_str());
  if (ok) return;
  if (passes) ++failures;
  else ++findings;
  if (!quiet && (passes || findings <= 40))
    std::printf("  %s rank %d: type %llu %s count %lld (%lld bytes): first wrong byte %lld, %lld wrong%s; size %lld "
                "extent %lld true [%lld, +%lld] blocks %lld monotone %d: %s\n",
                passes ? "FAILURE (passed by the rule)" : "finding", me, (unsigned long long)i, what, (long long)count,
                (long long)(count * f.size), (long long)d.first, (long long)d.second, extra.c_str(), (long long)f.size,
                (long long)f.extent, (long long)p.tlb, (long long)p.text, (long long)p.blocks, f.monotone,
                describe(t).c_str());
}

// One message of count elements around the ring, in one of three forms.
enum Form { Typed, ToBytes, FromBytes };
const char* form_name(Form f) { return f == Typed ? "typed->typed" : f == ToBytes ? "typed->bytes" : "bytes->typed"; }

void transfer(uint64_t i, const TNode& t, const Probe& p, MPI_Datatype mt, int64_t count, int k, Form form) {
  const int next = (me + 1) % np, prev = (me + np - 1) % np;
  const int64_t bytes = count * p.info->size;
  Buf sbuf = make_buf(p, count, i, k, me);
  std::vector<char> spacked;
  if (form == FromBytes) spacked = ddt_stream(p, sbuf, count);
  Buf rbuf = make_buf(p, count, i, k, 1000 + me);
  const Buf rinit = rbuf;
  std::vector<char> raw(bytes + 2 * kGuard, 0x5a);
  MPI_Request rq[2];
  int rc1, rc2;
  if (form == ToBytes) rc1 = MPI_Irecv(raw.data() + kGuard, (int)bytes, MPI_BYTE, prev, k, MPI_COMM_WORLD, &rq[0]);
  else rc1 = MPI_Irecv(rbuf.base(), (int)count, mt, prev, k, MPI_COMM_WORLD, &rq[0]);
  if (form == FromBytes) rc2 = MPI_Isend(spacked.data(), (int)bytes, MPI_BYTE, next, k, MPI_COMM_WORLD, &rq[1]);
  else rc2 = MPI_Isend(sbuf.base(), (int)count, mt, next, k, MPI_COMM_WORLD, &rq[1]);
  int rc3 = MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
  // The reference: the previous rank's buffer, packed by ddtkit, unpacked by ddtkit.
  Buf theirs = make_buf(p, count, i, k, prev);
  std::vector<char> stream = ddt_stream(p, theirs, count);
  const bool sender_passes = ddtmpi::pass_as_is(*p.info, count), receiver_passes = sender_passes;
  std::pair<int64_t, int64_t> d;
  std::string extra;
  if (rc1 != MPI_SUCCESS || rc2 != MPI_SUCCESS || rc3 != MPI_SUCCESS) {
    d = {0, 1};
    extra = " (MPI error)";
  } else if (form == ToBytes) {
    std::vector<char> want(bytes + 2 * kGuard, 0x5a);
    std::memcpy(want.data() + kGuard, stream.data(), bytes);
    d = diff(raw, want);
    if (d.first >= 0) d.first -= kGuard, extra = " (stream offset)";
  } else {
    Buf want = rinit;
    int64_t n;
    ddt_unpack(stream.data(), bytes, want.base(), count, p.info->t, 0, &n);
    d = diff(rbuf.data, want.data);
    if (d.first >= 0) {
      // The stream offset of the first wrong byte, where it lies in the typemap.
      std::vector<char> got_stream = ddt_stream(p, rbuf, count);
      std::pair<int64_t, int64_t> ds = diff(got_stream, stream);
      extra = " (buffer offset from the true lb; stream offset " + std::to_string(ds.first) + ")";
      d.first -= kGuard + rbuf.shift;
    }
  }
  // The interposer hands a side to the MPI as it is where the rule passes it: a typed send
  // when the sender's side passes, a typed receive when the receiver's does.
  const bool passes = (form != FromBytes && sender_passes) || (form != ToBytes && receiver_passes);
  record(i, t, p, form_name(form), count, passes, d, extra);
}

// MPI_Pack and MPI_Unpack of count elements against ddtkit, and the true extent.
void in_process(uint64_t i, const TNode& t, const Probe& p, MPI_Datatype mt, int64_t count, int k) {
  Buf b = make_buf(p, count, i, k, me);
  std::vector<char> want = ddt_stream(p, b, count);
  int size = 0, pos = 0;
  MPI_Pack_size((int)count, mt, MPI_COMM_WORLD, &size);
  std::vector<char> got(std::max<int64_t>(size, want.size()) + 64, 0x5a);
  int rc = MPI_Pack(b.base(), (int)count, mt, got.data(), (int)got.size(), &pos, MPI_COMM_WORLD);
  got.resize(pos);
  std::pair<int64_t, int64_t> d = rc == MPI_SUCCESS ? diff(got, want) : std::make_pair(int64_t(0), int64_t(1));
  const bool passes = ddtmpi::pass_as_is(*p.info, count);
  record(i, t, p, "MPI_Pack", count, passes, d, " (stream offset)");
  if (overlapping(p, count)) return;
  Buf r = make_buf(p, count, i, k, 2000 + me), wantbuf = r;
  pos = 0;
  rc = MPI_Unpack(want.data(), (int)want.size(), &pos, r.base(), (int)count, mt, MPI_COMM_WORLD);
  int64_t n;
  ddt_unpack(want.data(), want.size(), wantbuf.base(), count, p.info->t, 0, &n);
  d = rc == MPI_SUCCESS ? diff(r.data, wantbuf.data) : std::make_pair(int64_t(0), int64_t(1));
  if (d.first >= 0) d.first -= kGuard + r.shift;
  record(i, t, p, "MPI_Unpack", count, passes, d, " (buffer offset from the true lb)");
}

// Counts for messages from one element to about max_bytes, jittered so fragment boundaries fall
// at different places in the layout; the buffer span is kept under max_span.
std::vector<int64_t> counts_for(const Probe& p, uint64_t i, int64_t max_bytes, int64_t max_span) {
  std::vector<int64_t> out = {1, 2, 3};
  const int64_t size = p.info->size, ext = std::max<int64_t>(std::abs(p.info->extent), 1);
  for (int64_t target : {int64_t(700), int64_t(3000), int64_t(9000), int64_t(40000), int64_t(70000),
                         int64_t(300000), int64_t(1100000), int64_t(4200000)}) {
    if (target > max_bytes) break;
    int64_t c = target / size + static_cast<int64_t>((i * 7919 + target) % 5);
    if (c <= out.back()) continue;
    if (c * ext + p.text > max_span || c * size > INT32_MAX / 2) break;
    out.push_back(c);
  }
  return out;
}

}  // namespace

// The small-message part of the rule (pass.cpp: ompi_slow_eager), on vectors whose answer the
// measurement decided: staged within Open MPI's eager limit (4016 bytes) where pieces of 4-byte and larger
// elements are 48 bytes or less (64 from 3 KiB), and from 1 KiB where char and short pieces are
// 32 bytes or less (char pieces over 8 bytes); passed otherwise. Returns the number of wrong
// answers.
int rule_cases() {
  struct Case {
    ddt_type base;
    int64_t block, bytes;
    bool passes;
  };
  const Case cases[] = {
      {DDT_DOUBLE, 8, 2048, false}, {DDT_DOUBLE, 32, 4000, false}, {DDT_FLOAT, 16, 256, false},
      {DDT_INT, 8, 3072, false},    {DDT_DOUBLE, 40, 480, false},  {DDT_DOUBLE, 64, 3072, false},
      {DDT_CHAR, 16, 2048, false},  {DDT_CHAR, 32, 1024, false},   {DDT_SHORT, 8, 2048, false},
      {DDT_DOUBLE, 64, 2048, true}, {DDT_INT, 64, 1024, true},     {DDT_DOUBLE, 8, 8192, true},
      {DDT_CHAR, 8, 2048, true},    {DDT_CHAR, 16, 512, true},     {DDT_SHORT, 16, 256, true},
      {DDT_FLOAT, 8, 4096, true},   {DDT_DOUBLE, 40, 4080, true},  {DDT_DOUBLE, 8, 4016, false},
  };
  int wrong = 0;
  for (const Case& c : cases) {
    int64_t esz = 0;
    ddt_type_size(c.base, &esz);
    ddt_type t = DDT_TYPE_NULL;
    ddt_type_vector(c.bytes / c.block, c.block / esz, 2 * c.block / esz, c.base, &t);
    ddt_type_commit(t);
    Probe p;
    facts(p, t, false);  // p.info owns t from here
    const bool got = ddtmpi::pass_as_is(*p.info, 1);
    if (got != c.passes) {
      ++wrong;
      std::printf("rule: vector of %lld B of %lld-byte elements in %lld B blocks: pass_as_is %d, want %d\n",
                  (long long)c.bytes, (long long)esz, (long long)c.block, got, c.passes);
    }
  }
  return wrong;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int64_t types = 200, max_bytes = 1200000, max_span = 16 << 20;
  uint64_t seed = 1;
  const char* log_prefix = nullptr;
  for (int k = 1; k < argc; ++k) {
    if (!std::strcmp(argv[k], "--types") && k + 1 < argc) types = std::atoll(argv[++k]);
    else if (!std::strcmp(argv[k], "--seed") && k + 1 < argc) seed = std::strtoull(argv[++k], nullptr, 10);
    else if (!std::strcmp(argv[k], "--max-bytes") && k + 1 < argc) max_bytes = std::atoll(argv[++k]);
    else if (!std::strcmp(argv[k], "--log") && k + 1 < argc) log_prefix = argv[++k];
    else if (!std::strcmp(argv[k], "--quiet")) quiet = true;
    else {
      if (me == 0) std::printf("usage: ompi_probe [--types N] [--seed S] [--max-bytes B] [--log PREFIX] [--quiet]\n");
      MPI_Finalize();
      return 2;
    }
  }
  const int rule_wrong = me == 0 ? rule_cases() : 0;
  if (log_prefix) log_file = std::fopen((std::string(log_prefix) + "." + std::to_string(me)).c_str(), "w");
  int64_t skipped = 0, true_extent_checks = 0, true_extent_wrong = 0;
  for (int64_t i = 0; i < types; ++i) {
    std::mt19937_64 rng(seed * 1000003 + i);
    GenOptions opt;
    opt.allow_overlap = i % 4 == 3;  // overlapping types are sent (typed -> bytes), never received
    RefType ref;
    TPtr t = random_type(rng, opt, ref, 2000, 1 << 16);
    TPtr adj;
    MPI_Datatype mt = mpi_build_adjusted(*t, adj);
    int err = 0;
    ddt_type dt = mt == MPI_DATATYPE_NULL ? DDT_TYPE_NULL : build_ddt(*adj, &err);
    if (dt == DDT_TYPE_NULL || ddt_type_commit(dt) != DDT_SUCCESS) {  // the MPI refuses a legal type
      ++skipped;
      if (dt != DDT_TYPE_NULL) ddt_type_free(&dt);
      if (mt != MPI_DATATYPE_NULL && t->kind != TNode::Basic) MPI_Type_free(&mt);
      continue;
    }
    MPI_Type_commit(&mt);
    Probe p;
    facts(p, dt, has_x87(*t));
    RefType aref;
    p.c_aligned = ref_eval(*adj, aref, 1 << 22) && naturally_aligned(aref, p.info->extent);
    MPI_Count msize = 0, tlb = 0, text = 0;
    MPI_Type_size_x(mt, &msize);
    MPI_Type_get_true_extent_x(mt, &tlb, &text);
    if (me == 0) ++true_extent_checks;
    if (me == 0 && (tlb != p.tlb || text != p.text)) {
      ++true_extent_wrong;
      if (!quiet && true_extent_wrong <= 20)
        std::printf("  true extent rank %d: type %lld MPI [%lld, +%lld], ddtkit [%lld, +%lld]: %s\n", me, (long long)i,
                    (long long)tlb, (long long)text, (long long)p.tlb, (long long)p.text, describe(*t).c_str());
    }
    if (msize != p.info->size || p.info->size == 0 || t->kind == TNode::Basic) {
      if (t->kind != TNode::Basic) MPI_Type_free(&mt);
      continue;
    }
    std::vector<int64_t> counts = counts_for(p, i, max_bytes, max_span);
    for (size_t k = 0; k < counts.size(); ++k) {
      const int64_t c = counts[k];
      if (me == 0 && k < 4) in_process(i, *t, p, mt, c, static_cast<int>(k));
      if (np < 2) continue;
      // Every rank decides alike (same type, same count), so the ring never waits on a peer
      // that skipped a form.
      const bool over = overlapping(p, c);
      for (Form f : {Typed, ToBytes, FromBytes})
        if (f == ToBytes || !over) transfer(i, *t, p, mt, c, static_cast<int>(k), f);
    }
    MPI_Type_free(&mt);
  }
  int64_t mine[6] = {checks, findings, failures, passed_checks, true_extent_checks, true_extent_wrong}, all[6];
  MPI_Reduce(mine, all, 6, MPI_INT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
  if (me == 0) {
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    MPI_Get_library_version(version, &len);
    std::string v(version, std::strcspn(version, "\n,"));
    std::printf("%s, %d ranks, seed %llu: %lld types (%lld refused by the MPI), %lld checks (%lld of messages the "
                "pass rule hands to the MPI), %lld findings, %lld failures; true extent wrong for %lld of %lld types "
                "(rank 0)\n",
                v.c_str(), np, (unsigned long long)seed, (long long)types, (long long)skipped, (long long)all[0],
                (long long)all[3], (long long)all[1], (long long)all[2], (long long)true_extent_wrong,
                (long long)true_extent_checks);
  }
  if (log_file) std::fclose(log_file);
  MPI_Finalize();
  if (me == 0 && rule_wrong) std::printf("%d answers of the small-message rule wrong\n", rule_wrong);
  return me == 0 && (all[2] || rule_wrong) ? 1 : 0;
}
