// Collectives over the point-to-point protocols (issue 15; seed 002's figures 14 to 16):
// ddt_comm_bcast, ddt_comm_scatter, ddt_comm_gather, ddt_comm_alltoall and ddt_comm_reduce,
// built from the runtime's own sends and receives (runtime.hpp: isend_as, irecv_as, send_as,
// recv_as), so that whatever rendezvous protocol moves a message moves a collective's too.
//
// The call pattern is the point (seed 002, section III-C and Table II): a process that sends to
// every other one posts non-blocking sends and waits for them all, a process that receives one
// message blocks in it, and the reverse for all-to-one. COOP_COLL reads those calls from the RTS
// and the receive: isend/recv in bcast and scatter gives RGET (every receiver copies its own
// block, all at once, while the root only waits), send/irecv in gather gives RPUT (every sender
// writes its own block into the root's buffer). reduce from 64 KiB on is both (its
// reduce-scatter isend/recv, its gather send/irecv: seed 002's figure 16, where neither static
// protocol suits both phases); alltoall is irecv/isend (COOP: both sides of every pair are busy
// anyway). The calls below say blocking or not explicitly; changing one changes who copies.
//
// Invariants:
//  - Tags: collective k's messages carry kCollTag - k, negative, so no user receive (DDT_ANY_TAG
//    included) ever matches them. Every receive here names its source, and the messages of one
//    pair arrive in order and are matched in posting order, so consecutive collectives, whatever
//    their roots, never take each other's messages.
//  - Arguments are checked, and every temporary buffer is allocated, before the first message:
//    an argument error returns with every buffer untouched and nothing sent. A request once
//    posted is always waited for before the call returns (its buffer is in use until then),
//    whatever else has failed; and a process sends what its peers wait for even after its own
//    part failed, so that a failure is reported instead of hanging its peers.
//  - Every process derives the same pieces (a reduce's slices) from the same arguments, so the
//    two ends of each message agree on its size without asking.
// The arguments that only the root's side uses (scatter's send, gather's receive, reduce's
// recvbuf) are checked on the root only, as MPI says they are significant there only. A process
// whose own arguments are wrong returns before sending: its peers then wait for it, as an MPI
// collective with mismatched arguments would (the program is erroneous).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "ddtkit.h"
#include "cpu/arguments.hpp"
#include "shm/runtime.hpp"
#include "util/guarded.hpp"

namespace {

using namespace ddt::shm;

// Each collective's tag (kCollTag - its number); a reduce's two phases have one each.
constexpr int kTagBcast = kCollTag - 0;
constexpr int kTagScatter = kCollTag - 1;
constexpr int kTagGather = kCollTag - 2;
constexpr int kTagAlltoall = kCollTag - 3;
constexpr int kTagReduce = kCollTag - 4;        // straight to the root, or the reduce-scatter
constexpr int kTagReduceGather = kCollTag - 5;  // the reduced slices to the root

enum : int { kSum = DDT_OP_SUM, kMax = DDT_OP_MAX, kMin = DDT_OP_MIN };

// Seed 002's figure 16: from this many bytes per process on, reduce goes by reduce-scatter then
// gather (every process reduces a slice, so the root is not the only one combining).
constexpr int64_t kReduceScatterBytes = int64_t{64} << 10;

bool ready() { return rt.job != nullptr; }

// Block i of a buffer of blocks of count elements of extent ext. In integer arithmetic: an
// absolute-address type's buffer may be NULL (MPI_BOTTOM), and the caller has checked that
// every element's address is representable.
char* block(const void* buf, int64_t i, int64_t count, int64_t ext) {
  return reinterpret_cast<char*>(reinterpret_cast<uintptr_t>(buf) + static_cast<uintptr_t>(i * count * ext));
}

int64_t extent_of(ddt_type t) {
  int64_t lb = 0, ext = 0;
  ddt_type_extent(t, &lb, &ext);
  return ext;
}

// (buf, count, type) usable for a message, as a send or receive would check it when posted.
int check_buffer(const void* buf, int64_t count, ddt_type type) {
  int64_t total = 0;
  if (int e = ddt::stream(type, count, 0, &total)) return e;
  if (total > 0 && ddt::hostile(buf, count, type)) return DDT_ERR_ARG;
  return DDT_SUCCESS;
}

// size blocks of count elements: the same check over the size * count elements they are.
int check_blocks(const void* buf, int64_t count, ddt_type type) {
  if (int e = check_buffer(buf, count, type)) return e;
  int64_t all = 0;
  if (__builtin_mul_overflow(count, static_cast<int64_t>(rt.size), &all)) return DDT_ERR_OVERFLOW;
  return check_buffer(buf, all, type);
}

// The requests of one phase: posted, then all waited for, keeping the first error. Room for
// every request is reserved before the first is posted, so that no allocation can fail between
// posting a request and keeping it.
class Phase {
 public:
  explicit Phase(int n) { reqs_.reserve(static_cast<size_t>(std::max(n, 0))); }
  void isend(const void* buf, int64_t count, ddt_type t, int dest, int tag) {
    ddt_request r = DDT_REQUEST_NULL;
    note(isend_as(buf, count, t, dest, tag, DDT_SEND_STANDARD, false, &r));
    if (r) reqs_.push_back(r);
  }
  void irecv(void* buf, int64_t count, ddt_type t, int source, int tag) {
    ddt_request r = DDT_REQUEST_NULL;
    note(irecv_as(buf, count, t, source, tag, false, &r));
    if (r) reqs_.push_back(r);
  }
  void note(int e) {
    if (e != DDT_SUCCESS && error_ == DDT_SUCCESS) error_ = e;
  }
  int wait() {
    if (!reqs_.empty()) note(ddt_comm_waitall(static_cast<int>(reqs_.size()), reqs_.data(), nullptr));
    reqs_.clear();
    return error_;
  }
  ~Phase() { wait(); }  // a request is never left behind, whatever path leaves the call

 private:
  std::vector<ddt_request> reqs_;
  int error_ = DDT_SUCCESS;
};

// A process's block to itself, as a message would arrive: ddt_copy where the packed sizes agree
// (the usual case, no staging); a longer receive takes the bytes at its start, a shorter one is
// DDT_ERR_TRUNCATE with its first bytes delivered. Never throws (it runs while requests are out).
int self_copy(const void* src, int64_t scount, ddt_type stype, void* dst, int64_t rcount, ddt_type rtype) {
  int64_t ss = 0, rs = 0;
  ddt_type_size(stype, &ss);
  ddt_type_size(rtype, &rs);
  const int64_t n = ss * scount, m = rs * rcount;
  if (n == m) return n > 0 ? ddt_copy(src, scount, stype, dst, rcount, rtype) : DDT_SUCCESS;
  return ddt::guarded([&] {
    const int64_t k = std::min(n, m);
    std::vector<char> stage(static_cast<size_t>(k));
    int64_t done = 0;
    if (k > 0) {
      if (int e = ddt_pack(src, scount, stype, 0, stage.data(), k, &done)) return e;
      if (int e = ddt_unpack(stage.data(), k, dst, rcount, rtype, 0, &done)) return e;
    }
    return static_cast<int>(n > m ? DDT_ERR_TRUNCATE : DDT_SUCCESS);
  });
}

// ---- reduce's arithmetic -----------------------------------------------------------------------
// acc[i] = f(acc[i], x[i]) over n values of T. Through memcpy: the caller's buffers need not be
// aligned for T (the compiler makes plain loads and stores of it, vectorised).
template <class T, class F>
void apply(char* acc, const char* x, int64_t n, F f) {
  for (int64_t i = 0; i < n; ++i) {
    T a, b;
    std::memcpy(&a, acc + i * sizeof(T), sizeof(T));
    std::memcpy(&b, x + i * sizeof(T), sizeof(T));
    a = f(a, b);
    std::memcpy(acc + i * sizeof(T), &a, sizeof(T));
  }
}

// acc = acc op x over n elements of T (lanes values each: a complex number is two), one loop
// per op so that none decides per element. Integers wrap (in unsigned arithmetic) instead of
// overflowing, which would be undefined.
template <class T, int lanes = 1>
void combine(int op, char* acc, const char* x, int64_t n) {
  n *= lanes;
  if (op == kMax) return apply<T>(acc, x, n, [](T a, T b) { return b > a ? b : a; });
  if (op == kMin) return apply<T>(acc, x, n, [](T a, T b) { return b < a ? b : a; });
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    apply<T>(acc, x, n, [](T a, T b) { return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b))); });
  } else {
    apply<T>(acc, x, n, [](T a, T b) { return a + b; });
  }
}

struct Arith {
  void (*combine)(int op, char* acc, const char* x, int64_t n);
  bool ordered;  // max and min are defined (not for complex numbers)
};

// The predefined types reduce combines: MPI's C integer, floating point, complex and
// multi-language types. Characters, bytes, booleans and the pair types are not numbers here.
const Arith* arith_of(ddt_type t) {
  struct Entry {
    ddt_type type;
    Arith a;
  };
  static const Entry table[] = {
      {DDT_SIGNED_CHAR, {combine<signed char>, true}},
      {DDT_UNSIGNED_CHAR, {combine<unsigned char>, true}},
      {DDT_SHORT, {combine<short>, true}},
      {DDT_UNSIGNED_SHORT, {combine<unsigned short>, true}},
      {DDT_INT, {combine<int>, true}},
      {DDT_UNSIGNED, {combine<unsigned>, true}},
      {DDT_LONG, {combine<long>, true}},
      {DDT_UNSIGNED_LONG, {combine<unsigned long>, true}},
      {DDT_LONG_LONG, {combine<long long>, true}},
      {DDT_UNSIGNED_LONG_LONG, {combine<unsigned long long>, true}},
      {DDT_FLOAT, {combine<float>, true}},
      {DDT_DOUBLE, {combine<double>, true}},
      {DDT_LONG_DOUBLE, {combine<long double>, true}},
      {DDT_INT8_T, {combine<int8_t>, true}},
      {DDT_INT16_T, {combine<int16_t>, true}},
      {DDT_INT32_T, {combine<int32_t>, true}},
      {DDT_INT64_T, {combine<int64_t>, true}},
      {DDT_UINT8_T, {combine<uint8_t>, true}},
      {DDT_UINT16_T, {combine<uint16_t>, true}},
      {DDT_UINT32_T, {combine<uint32_t>, true}},
      {DDT_UINT64_T, {combine<uint64_t>, true}},
      {DDT_AINT, {combine<intptr_t>, true}},
      {DDT_OFFSET, {combine<int64_t>, true}},
      {DDT_COUNT, {combine<int64_t>, true}},
      {DDT_C_FLOAT_COMPLEX, {combine<float, 2>, false}},
      {DDT_C_DOUBLE_COMPLEX, {combine<double, 2>, false}},
      {DDT_C_LONG_DOUBLE_COMPLEX, {combine<long double, 2>, false}},
  };
  for (const Entry& e : table)
    if (e.type == t) return &e.a;
  return nullptr;
}

// reduce's temporary memory (the others' contributions, a process's reduced slice), kept from
// call to call and grown as needed: a fresh allocation of some MiB costs a page fault per 4 KiB
// on every call, as much as the copies it serves. One thread per process calls the runtime
// (ddtkit.h), so one buffer serves every call; it is taken before the first message.
char* scratch(int64_t bytes) {
  static std::vector<char> buf;
  if (static_cast<int64_t>(buf.size()) < bytes) {
    buf = std::vector<char>();  // the old one is given back before the larger one is taken
    buf.resize(static_cast<size_t>(bytes));
  }
  return buf.data();
}

// Rank r's slice of n elements, [lo(r), lo(r + 1)): as equal as they come, the first n % size
// one element longer.
int64_t slice_lo(int64_t n, int r) {
  const int64_t base = n / rt.size, extra = n % rt.size;
  return base * r + std::min<int64_t>(r, extra);
}

// acc = the contributions of ranks 0, 1, ... size - 1 combined in rank order (whatever order
// they arrived in: every run, and every process count's expectation, combine alike).
// contribution(q) gives rank q's n elements.
template <class F>
void reduce_in_order(const Arith& a, int op, char* acc, int64_t n, int64_t esize, F contribution) {
  std::memcpy(acc, contribution(0), static_cast<size_t>(n * esize));
  for (int q = 1; q < rt.size; ++q) a.combine(op, acc, contribution(q), n);
}

// Small messages: every process sends its whole vector to the root (a blocking send: the root's
// receives are non-blocking, the gather pattern), which combines them all.
int reduce_direct(const char* sendbuf, char* recvbuf, int64_t count, ddt_type type, int op, int root, const Arith& a,
                  int64_t esize) {
  if (rt.rank != root) return send_as(sendbuf, count, type, root, kTagReduce, DDT_SEND_STANDARD);
  const int64_t bytes = count * esize;
  char* in = scratch(bytes * (rt.size - 1));
  auto slot = [&](int q) { return in + (q < root ? q : q - 1) * bytes; };
  Phase p(rt.size);
  for (int q = 0; q < rt.size; ++q)
    if (q != root) p.irecv(slot(q), count, type, q, kTagReduce);
  const int e = p.wait();
  if (e == DDT_SUCCESS)
    reduce_in_order(a, op, recvbuf, count, esize, [&](int q) { return q == root ? sendbuf : slot(q); });
  return e;
}

// Seed 002's figure 16: reduce-scatter, then gather. Process r owns elements
// [slice_lo(r), slice_lo(r + 1)). Reduce-scatter: it sends every owner its part of the owner's
// slice (isends), then receives the parts of its own slice in rank order, each with a blocking
// receive, combining each into its slice as soon as it has arrived (still in cache; one slice
// of scratch whatever the process count). Gather: the owners send their reduced slices to the
// root (blocking sends into the root's non-blocking receives), straight into recvbuf.
// So the two phases make the two patterns of Table II: isend/recv in the reduce-scatter, where
// COOP_COLL has every owner copy its parts (RGET: every process copies, none waits for another's
// CTS, and a read of the mapped heap is the cheapest copy there is), send/irecv in the gather,
// where every owner writes its slice into the root (RPUT: the root does not copy them all).
int reduce_scatter_gather(const char* sendbuf, char* recvbuf, int64_t count, ddt_type type, int op, int root,
                          const Arith& a, int64_t esize) {
  const int me = rt.rank, size = rt.size;
  auto lo = [&](int r) { return slice_lo(count, r); };
  auto len = [&](int r) { return lo(r + 1) - lo(r); };
  const int64_t mine = len(me), mine_bytes = mine * esize;
  // Before the first message: a slice to receive into, and this process's reduced slice (the
  // root reduces straight into its recvbuf).
  char* tmp = scratch(me == root ? mine_bytes : 2 * mine_bytes);
  char* acc = me == root ? recvbuf + lo(me) * esize : tmp + mine_bytes;
  // The root's receives of the gather go out first: they wait in its posted queue, and each
  // owner's slice lands as soon as it is reduced.
  Phase gather(me == root ? size : 0);
  if (me == root)
    for (int q = 0; q < size; ++q)
      if (q != root && len(q) > 0) gather.irecv(recvbuf + lo(q) * esize, len(q), type, q, kTagReduceGather);
  Phase scatter(size);
  for (int k = 1; k < size; ++k) {  // each process starts with a different owner
    const int q = (me + k) % size;
    if (len(q) > 0) scatter.isend(sendbuf + lo(q) * esize, len(q), type, q, kTagReduce);
  }
  // acc = contribution 0 op contribution 1 op ...: rank order, as reduce_in_order. Every part is
  // received, even after a failure, so none is left for the next reduce to take.
  int e = DDT_SUCCESS;
  for (int q = 0; q < size && mine > 0; ++q) {
    const char* c = sendbuf + lo(me) * esize;
    if (q != me) {
      char* into = q == 0 ? acc : tmp;
      const int r = recv_as(into, mine, type, q, kTagReduce, nullptr);
      if (e == DDT_SUCCESS) e = r;
      c = into;
    }
    if (q == 0) {
      if (c != acc) std::memcpy(acc, c, static_cast<size_t>(mine_bytes));
    } else {
      a.combine(op, acc, c, mine);
    }
  }
  scatter.note(e);
  e = scatter.wait();
  if (me != root) {
    // Sent even after a failure above: the root waits for this slice.
    if (mine > 0) {
      const int g = send_as(acc, mine, type, root, kTagReduceGather, DDT_SEND_STANDARD);
      if (e == DDT_SUCCESS) e = g;
    }
    return e;
  }
  gather.note(e);
  return gather.wait();
}

}  // namespace

extern "C" {

int ddt_comm_bcast(void* buf, int64_t count, ddt_type type, int root) {
  if (!ready()) return DDT_ERR_COMM;
  if (root < 0 || root >= rt.size) return DDT_ERR_ARG;
  if (int e = check_buffer(buf, count, type)) return e;
  return ddt::guarded([&] {
    if (rt.rank != root) return recv_as(buf, count, type, root, kTagBcast, nullptr);
    Phase p(rt.size);
    for (int k = 1; k < rt.size; ++k) p.isend(buf, count, type, (root + k) % rt.size, kTagBcast);
    return p.wait();
  });
}

int ddt_comm_scatter(const void* sendbuf, int64_t sendcount, ddt_type sendtype, void* recvbuf, int64_t recvcount,
                     ddt_type recvtype, int root) {
  if (!ready()) return DDT_ERR_COMM;
  if (root < 0 || root >= rt.size) return DDT_ERR_ARG;
  if (int e = check_buffer(recvbuf, recvcount, recvtype)) return e;
  if (rt.rank == root)
    if (int e = check_blocks(sendbuf, sendcount, sendtype)) return e;
  return ddt::guarded([&] {
    if (rt.rank != root) return recv_as(recvbuf, recvcount, recvtype, root, kTagScatter, nullptr);
    const int64_t ext = extent_of(sendtype);
    Phase p(rt.size);
    for (int k = 1; k < rt.size; ++k) {
      const int q = (root + k) % rt.size;
      p.isend(block(sendbuf, q, sendcount, ext), sendcount, sendtype, q, kTagScatter);
    }
    // The root's own block while the others copy theirs.
    p.note(self_copy(block(sendbuf, root, sendcount, ext), sendcount, sendtype, recvbuf, recvcount, recvtype));
    return p.wait();
  });
}

int ddt_comm_gather(const void* sendbuf, int64_t sendcount, ddt_type sendtype, void* recvbuf, int64_t recvcount,
                    ddt_type recvtype, int root) {
  if (!ready()) return DDT_ERR_COMM;
  if (root < 0 || root >= rt.size) return DDT_ERR_ARG;
  if (int e = check_buffer(sendbuf, sendcount, sendtype)) return e;
  if (rt.rank == root)
    if (int e = check_blocks(recvbuf, recvcount, recvtype)) return e;
  return ddt::guarded([&] {
    if (rt.rank != root) return send_as(sendbuf, sendcount, sendtype, root, kTagGather, DDT_SEND_STANDARD);
    const int64_t ext = extent_of(recvtype);
    Phase p(rt.size);
    for (int k = 1; k < rt.size; ++k) {
      const int q = (root + k) % rt.size;
      p.irecv(block(recvbuf, q, recvcount, ext), recvcount, recvtype, q, kTagGather);
    }
    p.note(self_copy(sendbuf, sendcount, sendtype, block(recvbuf, root, recvcount, ext), recvcount, recvtype));
    return p.wait();
  });
}

int ddt_comm_alltoall(const void* sendbuf, int64_t sendcount, ddt_type sendtype, void* recvbuf, int64_t recvcount,
                      ddt_type recvtype) {
  if (!ready()) return DDT_ERR_COMM;
  if (int e = check_blocks(sendbuf, sendcount, sendtype)) return e;
  if (int e = check_blocks(recvbuf, recvcount, recvtype)) return e;
  return ddt::guarded([&] {
    const int me = rt.rank, size = rt.size;
    const int64_t sext = extent_of(sendtype), rext = extent_of(recvtype);
    // Receives first, so every message finds its receive posted; then the sends, each process
    // starting with a different peer so that no process is everyone's first.
    Phase p(2 * size);
    for (int k = 1; k < size; ++k) {
      const int q = (me + size - k) % size;
      p.irecv(block(recvbuf, q, recvcount, rext), recvcount, recvtype, q, kTagAlltoall);
    }
    for (int k = 1; k < size; ++k) {
      const int q = (me + k) % size;
      p.isend(block(sendbuf, q, sendcount, sext), sendcount, sendtype, q, kTagAlltoall);
    }
    p.note(self_copy(block(sendbuf, me, sendcount, sext), sendcount, sendtype, block(recvbuf, me, recvcount, rext),
                     recvcount, recvtype));
    return p.wait();
  });
}

int ddt_comm_reduce(const void* sendbuf, void* recvbuf, int64_t count, ddt_type type, int op, int root) {
  if (!ready()) return DDT_ERR_COMM;
  if (root < 0 || root >= rt.size) return DDT_ERR_ARG;
  if (op != kSum && op != kMax && op != kMin) return DDT_ERR_ARG;
  if (int e = ddt::check_type(type)) return e;
  const Arith* a = arith_of(type);
  if (!a || (op != kSum && !a->ordered)) return DDT_ERR_TYPE;
  if (int e = check_buffer(sendbuf, count, type)) return e;
  if (rt.rank == root)
    if (int e = check_buffer(recvbuf, count, type)) return e;
  if (count == 0) return DDT_SUCCESS;  // every process has nothing to send, alike
  // A predefined type is its own bytes: extent = size, no gaps.
  int64_t esize = 0;
  ddt_type_size(type, &esize);
  const char* s = static_cast<const char*>(sendbuf);
  char* r = static_cast<char*>(recvbuf);
  return ddt::guarded([&] {
    if (count * esize >= kReduceScatterBytes && rt.size > 1)
      return reduce_scatter_gather(s, r, count, type, op, root, *a, esize);
    return reduce_direct(s, r, count, type, op, root, *a, esize);
  });
}

}  // extern "C"
