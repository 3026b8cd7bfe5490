// Point-to-point: blocking, non-blocking, persistent and matched receives. Each wrapper turns
// its (buf, count, datatype) into a Side (side.cpp) and hands the MPI bytes; what remains to do
// when a request completes is attached to it (requests.cpp). A derived-type message to a process
// of the same node goes through ddtkit's runtime instead, the MPI carrying only its ticket
// (local.hpp); every receive that may get a ticket checks what arrived.
//
// MPI_PROC_NULL peers and predefined types go to the MPI untouched: nothing moves, or the MPI
// moves predefined types at memory speed itself. Statuses carry byte counts of MPI_BYTE, which
// is what MPI_Get_count and MPI_Get_elements divide by the user's datatype, so they answer in
// the user's datatype without being intercepted.
#include <sched.h>

#include <memory>
#include <optional>

#include "mpi/local.hpp"
#include "mpi/shim.hpp"
#include "shm/runtime.hpp"

using namespace ddtmpi;

namespace {

using SendFn = int (*)(const void*, int, MPI_Datatype, int, int, MPI_Comm);
using IsendFn = int (*)(const void*, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request*);

// The runtime's send mode for each MPI send (kNone: the staged way always; a buffered send keeps
// the MPI's attached buffer, whose capacity and errors the standard defines).
constexpr int kNone = -1;

// Whether a message of a Pass type may take the runtime: a predefined type's, of at least the
// contiguous threshold (the same bytes as a contiguous derived type's: local.cpp's measurement).
// The test that every other predefined message pays: one multiplication and a comparison.
bool large_pass(const TypeInfo& ti, int count) {
  const int64_t bytes = static_cast<int64_t>(count) * ti.size;  // the threshold is at least a ticket's 64 bytes
  return ti.mode == TypeInfo::Pass && bytes >= static_cast<int64_t>(sizeof(Ticket)) && local_on() &&
         bytes >= runtime_contig_min_bytes();
}

// The translation of dt and the runtime peer where a send of it goes through the runtime (a
// predefined type's as a contiguous translation: predefined_info).
int route(const TypeInfo& ti, const void* buf, int count, MPI_Datatype dt, int dest, MPI_Comm comm, bool blocking,
          bool persistent, TypeRef* info, int* heap_rts = nullptr) {
  if (!local_on()) return -1;
  // Below both thresholds no message takes the runtime: decided here, before the calls that
  // would each find it again (callgrind, contiguous(60, MPI_DOUBLE) under Open MPI: the
  // interposer's own instructions per send and receive of a rank 695 -> 625).
  // plain_send's fast path takes a Pack type's as-is count (the pass rule's) below route_below:
  // below both thresholds (route_min), or up to native_pipeline_upto, where local_send_peer never
  // routes such a message of a type other than small_pieces either (Open MPI's eager-size vectors:
  // the interposer's own instructions per send of an 8 KiB vect:8:4, callgrind, 516 -> 43).
  static const int64_t smallest = [] {
    const int64_t v = std::min(runtime_min_bytes(), runtime_contig_min_bytes());
    hot.route_min.store(v, std::memory_order_relaxed);
    hot.route_below.store(std::max(v, native_pipeline_upto() + 1), std::memory_order_relaxed);
    hot.contig_below.store(runtime_contig_min_bytes(), std::memory_order_relaxed);  // contig_send's
    return v;
  }();
  if (static_cast<int64_t>(count) * ti.size < smallest) return -1;
  if (ti.mode == TypeInfo::Pass) {
    TypeRef r = large_pass(ti, count) ? predefined_info(dt) : nullptr;
    const int peer = r ? local_send_peer(*r, buf, count, comm, dest, blocking, persistent, heap_rts) : -1;
    if (peer >= 0) *info = std::move(r);
    return peer;
  }
  const int peer = local_send_peer(ti, buf, count, comm, dest, blocking, persistent, heap_rts);
  if (peer >= 0) *info = lookup(dt);
  return peer;
}

// A receive that can get neither a ticket nor a stashed message: a Pass type without room for
// a ticket (or no runtime), and nothing stashed.
bool plain_recv(int count, const TypeInfo& ti) {
  if (ti.mode != TypeInfo::Pass || stashed_count.load(std::memory_order_relaxed) != 0) return false;
  return !local_on() || static_cast<int64_t>(count) * ti.size < static_cast<int64_t>(sizeof(Ticket));
}

// Whether a send of count elements of ti (the last peek's answer, or null) goes to the MPI as it
// is, decided in loads and compares only (blocking_send and request_send's fast paths): a Pass
// type too small for the runtime, a ticket's size or less, or no runtime at all; the interposer on.
// Also a Pack type whose last send of the same count went to the MPI as it is (as_is_count),
// one the runtime would not take (route_below), where no buffer can be on a device: the pass rule's
// messages under Open MPI (the 480 B vector of 12 x 40 B blocks: the interposer's instructions
// per round trip of one rank, callgrind, 632 -> see the commit).
// A Pack type's count that went to the MPI as it is before (note_as_is) goes so again, where no
// buffer can be on a device.
inline bool as_is_again(const TypeInfo& ti, int count) {
  return ti.mode == TypeInfo::Pack && count == ti.as_is_count.load(std::memory_order_relaxed) &&
         hot.device_mode.load(std::memory_order_relaxed) == 0;
}
template <int Mode>
inline bool plain_send(const TypeInfo* ti, int count, int dest) {
  if (!ti || dest == MPI_PROC_NULL || hot.disabled.load(std::memory_order_relaxed) != 0) return false;
  const int64_t bytes = static_cast<int64_t>(count) * ti->size;
  if (ti->mode == TypeInfo::Pass) return Mode == kNone || bytes < static_cast<int64_t>(sizeof(Ticket)) || !local_on();
  if (!as_is_again(*ti, count) || bytes >= hot.route_below.load(std::memory_order_relaxed)) return false;
  return bytes < hot.route_min.load(std::memory_order_relaxed) || !small_pieces(*ti);
}
// A Contig type's message (the last peek's answer, or null) that goes to the MPI as its bytes,
// decided in loads and compares only: fewer bytes than the runtime's contiguous threshold (no
// route takes it: local_send_peer), of a non-negative count, where no buffer can be on a device.
// Its bytes are then (buf + offset, count x size, MPI_BYTE), as direct() gives them (callgrind,
// osu_latency -D vect:8:4 of size 8, one 4 B block, under Open MPI: the interposer's instructions
// per round trip of a rank 468 -> 152; the MPI's own about 1,490).
inline bool contig_bytes(const TypeInfo* ti, int count) {
  return ti && ti->mode == TypeInfo::Contig && count >= 0 && hot.device_mode.load(std::memory_order_relaxed) == 0 &&
         static_cast<int64_t>(count) * ti->size < hot.contig_below.load(std::memory_order_relaxed);
}
inline bool contig_send(const TypeInfo* ti, int count, int dest) {
  return dest != MPI_PROC_NULL && hot.disabled.load(std::memory_order_relaxed) == 0 && contig_bytes(ti, count);
}
// The same for a receive, which must also be unable to get a ticket (below a ticket's size, or no
// runtime) or a stashed message.
inline bool contig_recv(const TypeInfo* ti, int count, int src) {
  return src != MPI_PROC_NULL && hot.disabled.load(std::memory_order_relaxed) == 0 && contig_bytes(ti, count) &&
         stashed_count.load(std::memory_order_relaxed) == 0 &&
         (!local_on() || static_cast<int64_t>(count) * ti->size < static_cast<int64_t>(sizeof(Ticket)));
}
inline char* bytes_of(const TypeInfo* ti, const void* buf) {
  return const_cast<char*>(static_cast<const char*>(buf)) + ti->offset;
}

// Remembers that count elements of a Pack type went to the MPI as they are (d: direct's answer),
// where that followed from the layout and count alone: a message of short pieces past the
// runtime's kHeapEagerMax went so for its buffer too (local_send_peer: one outside the heap), and
// the next one, from the heap, may take the runtime.
inline void note_as_is(const TypeInfo& ti, int count, MPI_Datatype dt, const Direct& d) {
  if (ti.mode == TypeInfo::Pack && d.type == dt && d.count == count &&
      !(short_pieces(ti) && static_cast<int64_t>(count) * ti.size > ddt::shm::kHeapEagerMax))
    ti.as_is_count.store(count, std::memory_order_relaxed);
}

// F, or while a receive of this process may hold a ticket (tickets_pending), its non-blocking
// form IF waited on by testing, delivering such receives meanwhile (shim.hpp says why).
template <SendFn F, IsendFn IF>
[[gnu::noinline]] int send_delivering_slow(const void* buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm) {
  MPI_Request r = MPI_REQUEST_NULL;
  const int rc = IF(buf, count, dt, dest, tag, comm, &r);
  return rc != MPI_SUCCESS ? rc : wait_delivering(&r, MPI_STATUS_IGNORE);
}
template <SendFn F, IsendFn IF>
inline int send_delivering(const void* buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm) {
  if (!tickets_pending()) return F(buf, count, dt, dest, tag, comm);
  return send_delivering_slow<F, IF>(buf, count, dt, dest, tag, comm);
}

// Everything but the MPI's own messages (blocking_send below): the runtime, the pass rule's
// direct messages and the staged way.
template <SendFn F, IsendFn IF, int Mode>
[[gnu::noinline]] int blocking_send_general(const TypeInfo& ti, const void* buf, int count, MPI_Datatype dt, int dest,
                                            int tag, MPI_Comm comm) {
  TypeRef info;
  if (Mode != kNone) {
    int heap_rts = -1;
    const int peer = route(ti, buf, count, dt, dest, comm, true, false, &info, &heap_rts);
    if (peer >= 0) {  // posted in the runtime, then the ticket, then wait for the copy
      LocalSend ls;
      ls.info = info, ls.buf = buf, ls.count = count, ls.peer = peer, ls.mode = Mode, ls.blocking = true;
      ls.heap_rts = heap_rts;
      if (int rc = ls.post()) return raise(comm, rc);
      if (int rc = PMPI_Send(&ls.ticket, sizeof(Ticket), MPI_BYTE, dest, tag, comm)) return rc;
      return raise(comm, ls.wait());
    }
  }
  // The pass rule's messages go as they are, without a Side (callgrind: a third of the
  // interposer's instructions on a small vector's send).
  Direct d;
  if (direct(ti, buf, count, dt, &d)) {
    note_as_is(ti, count, dt, d);
    return send_delivering<F, IF>(d.buf, d.count, d.type, dest, tag, comm);
  }
  Side s;
  if (int rc = prepare_send(s, buf, count, dt, true, &ti)) return raise(comm, rc);
  return send_delivering<F, IF>(s.buf(), s.n(), s.type(), dest, tag, comm);
}

// Predefined and untranslatable types go to the MPI at once, for the price of one lookup: a
// 1-byte MPI_BYTE ping-pong may not slow down measurably (issue 11), and under Open MPI its
// round trip is 0.3-0.9 us here. Large same-node messages of predefined types (large_pass) take
// the runtime.
template <SendFn F, IsendFn IF, int Mode>
[[gnu::noinline]] int blocking_send_full(const void* buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm) {
  if (dest != MPI_PROC_NULL && !disabled()) {
    const TypeInfo& ti = peek(dt);  // one lookup for every decision
    if (ti.mode != TypeInfo::Pass || (Mode != kNone && large_pass(ti, count)))
      return blocking_send_general<F, IF, Mode>(ti, buf, count, dt, dest, tag, comm);
  }
  return send_delivering<F, IF>(buf, count, dt, dest, tag, comm);
}
// The common case in loads and compares only, as MPI_Recv's: a Pass type that this thread's last
// call peeked, too small for the runtime (below a ticket's size, or no runtime), and no receive
// holding a ticket.
template <SendFn F, IsendFn IF, int Mode>
inline int blocking_send(const void* buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm) {
  const TypeInfo* ti = peek_hit(dt);
  if (hot.tickets.load(std::memory_order_relaxed) == 0) {
    if (plain_send<Mode>(ti, count, dest)) return F(buf, count, dt, dest, tag, comm);
    if (contig_send(ti, count, dest))
      return F(bytes_of(ti, buf), static_cast<int>(count * ti->size), MPI_BYTE, dest, tag, comm);
  }
  return blocking_send_full<F, IF, Mode>(buf, count, dt, dest, tag, comm);
}

// Non-blocking (F = PMPI_Isend ...) and persistent (F = PMPI_Send_init ...) sends: a staged send
// keeps its staging until the request completes; a persistent one packs at each MPI_Start, from
// the user's buffer as it is then, and not at all before. Through the runtime, the MPI request
// is the ticket's (sent by F0: PMPI_Isend or PMPI_Send_init) and stays busy until the receiver
// has copied; a persistent one posts in the runtime at each start.
template <IsendFn F, IsendFn F0, bool Persistent, int Mode>
[[gnu::noinline]] int request_send_full(const void* buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
                                        MPI_Request* req);
template <IsendFn F, IsendFn F0, bool Persistent, int Mode>
inline int request_send(const void* buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request* req) {
  const TypeInfo* ti = peek_hit(dt);
  if (plain_send<Mode>(ti, count, dest)) return F(buf, count, dt, dest, tag, comm, req);
  if (contig_send(ti, count, dest)) return F(bytes_of(ti, buf), static_cast<int>(count * ti->size), MPI_BYTE, dest, tag, comm, req);
  return request_send_full<F, F0, Persistent, Mode>(buf, count, dt, dest, tag, comm, req);
}
template <IsendFn F, IsendFn F0, bool Persistent, int Mode>
int request_send_full(const void* buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request* req) {
  if (dest == MPI_PROC_NULL || disabled()) return F(buf, count, dt, dest, tag, comm, req);
  const TypeInfo& ti = peek(dt);  // one lookup for every decision below
  if (ti.mode == TypeInfo::Pass && (Mode == kNone || !large_pass(ti, count))) return F(buf, count, dt, dest, tag, comm, req);
  TypeRef info;
  if (Mode != kNone) {
    // (A persistent send's starts judge each post afresh: no answer is kept for them.)
    int heap_rts = -1;
    const int peer = route(ti, buf, count, dt, dest, comm, false, Persistent, &info, Persistent ? nullptr : &heap_rts);
    if (peer >= 0) {
      auto ls = std::make_shared<LocalSend>();
      ls->info = info, ls->buf = buf, ls->count = count, ls->peer = peer, ls->mode = Mode, ls->blocking = false;
      ls->heap_rts = heap_rts;
      if (!Persistent)
        if (int rc = ls->post()) return raise(comm, rc);
      const int rc = F0(&ls->ticket, sizeof(Ticket), MPI_BYTE, dest, tag, comm, req);
      if (rc != MPI_SUCCESS) return rc;
      auto p = std::make_shared<Pending>();
      p->busy = [ls] { return !ls->poll(); };
      p->complete = [ls, comm](MPI_Status&) { return raise(comm, mpi_error(ls->error)); };
      if (Persistent) {
        p->persistent = true;
        p->active = false;
        p->start = [ls, comm] { return raise(comm, ls->post()); };
      }
      attach(*req, std::move(p));
      return rc;
    }
  }
  // What goes as it is, or as the user's own bytes, needs nothing at completion or at a start
  // (the general way below would attach nothing either): no Side.
  Direct d;
  if (direct(ti, buf, count, dt, &d)) {
    note_as_is(ti, count, dt, d);
    return F(d.buf, d.count, d.type, dest, tag, comm, req);
  }
  auto s = std::make_shared<Side>();
  if (int rc = prepare_send(*s, buf, count, dt, !Persistent)) return raise(comm, rc);
  int rc = F(s->buf(), s->n(), s->type(), dest, tag, comm, req);
  if (rc == MPI_SUCCESS && s->staging.ok()) {
    auto p = std::make_shared<Pending>();
    if (Persistent) {
      p->persistent = true;
      p->active = false;
      p->start = [s, comm] { return raise(comm, repack(*s)); };
    } else {
      p->complete = [s](MPI_Status&) { return MPI_SUCCESS; };
    }
    attach(*req, std::move(p));
  }
  return rc;
}

// What a completed receive ends with: the runtime's copy where a ticket arrived, else the unpack
// of the staging (a no-op where the MPI received into the user's buffer).
int finish(const Side& s, MPI_Comm comm, MPI_Status& st) {
  bool taken = false;
  int rc = MPI_SUCCESS;
  if (local_on()) rc = take_ticket(s, comm, st, &taken);
  if (!taken) rc = finish_recv(s, received_bytes(st));
  return raise(comm, rc);
}

// Whether a receive needs finish() at completion: it is staged, or may get a ticket.
bool needs_finish(const Side& s, MPI_Comm comm, int src) {
  if (s.staging.ok()) return true;
  return may_get_ticket(s.user, s.count, s.dt, comm, src);
}

// The MPI's receive calls for a count type C: the int forms, or MPI 4's large-count forms (the
// general ways below serve both: large_count.cpp's receives of more than INT_MAX elements).
template <class C> struct Recvs;
template <> struct Recvs<int> {
  static constexpr auto recv = PMPI_Recv;
  static constexpr auto irecv = PMPI_Irecv;
  static constexpr auto recv_init = PMPI_Recv_init;
  static constexpr auto mrecv = PMPI_Mrecv;
  static constexpr auto imrecv = PMPI_Imrecv;
};
#if MPI_VERSION >= 4
template <> struct Recvs<MPI_Count> {
  static constexpr auto recv = PMPI_Recv_c;
  static constexpr auto irecv = PMPI_Irecv_c;
  static constexpr auto recv_init = PMPI_Recv_init_c;
  static constexpr auto mrecv = PMPI_Mrecv_c;
  static constexpr auto imrecv = PMPI_Imrecv_c;
};
#endif
// The count the MPI gets for a side (Side::n() as C: a converted side's bytes fit an int, and an
// unconverted one keeps the caller's count).
template <class C>
C n_of(const Side& s) {
  return static_cast<C>(s.converted() ? s.bytes : s.count);
}

// PMPI_Recv, or where tickets_pending(), PMPI_Irecv waited on by testing (see send_delivering).
template <class C>
[[gnu::noinline]] int recv_delivering_slow(void* buf, C count, MPI_Datatype dt, int src, int tag, MPI_Comm comm,
                                          MPI_Status* st) {
  MPI_Request r = MPI_REQUEST_NULL;
  int rc = Recvs<C>::irecv(buf, count, dt, src, tag, comm, &r);
  if (rc != MPI_SUCCESS) return rc;
  // MPI_Recv leaves the status's MPI_ERROR as it was; MPICH's MPI_Test writes its request's there
  // (mpi4py's test_util_pkl5 found a garbage error field).
  const int error = st != MPI_STATUS_IGNORE ? st->MPI_ERROR : MPI_SUCCESS;
  rc = wait_delivering(&r, st);
  if (st != MPI_STATUS_IGNORE) st->MPI_ERROR = error;
  return rc;
}
template <class C>
inline int recv_delivering(void* buf, C count, MPI_Datatype dt, int src, int tag, MPI_Comm comm, MPI_Status* st) {
  if (!tickets_pending()) return Recvs<C>::recv(buf, count, dt, src, tag, comm, st);
  return recv_delivering_slow(buf, count, dt, src, tag, comm, st);
}

PendingRef finish_on_completion(std::shared_ptr<Side> s, MPI_Comm comm) {
  auto p = std::make_shared<Pending>();
  p->ticket = local_on();  // needs_finish said it may get one (or it is staged)
  p->complete = [s, comm](MPI_Status& st) { return finish(*s, comm, st); };
  return p;
}

// The general ways of the receives, over the count type C (int, or MPI_Count for the large-count
// forms): the Side, the stash a probe may have filled, the MPI's receive, and finish() where a
// ticket may arrive. Callers have left out MPI_PROC_NULL sources and a disabled interposer.

template <class C>
int recv_side(void* buf, C count, MPI_Datatype dt, int src, int tag, MPI_Comm comm, MPI_Status* status,
              const TypeInfo* refused = nullptr) {
  Side s;
  if (int rc = prepare_recv(s, buf, count, dt, refused)) return raise(comm, rc);
  Stashed e;
  if (take_stashed(comm, src, tag, &e)) {  // a probe took it from the MPI already
    MPI_Status local;
    return raise(comm, deliver_stashed(e, s, status == MPI_STATUS_IGNORE ? local : *status));
  }
  if (!needs_finish(s, comm, src)) return recv_delivering(s.buf(), n_of<C>(s), s.type(), src, tag, comm, status);
  MPI_Status local;
  MPI_Status* st = status == MPI_STATUS_IGNORE ? &local : status;
  int rc = recv_delivering(s.buf(), n_of<C>(s), s.type(), src, tag, comm, st);
  return rc != MPI_SUCCESS ? rc : finish(s, comm, *st);
}

template <class C>
int irecv_side(void* buf, C count, MPI_Datatype dt, int src, int tag, MPI_Comm comm, MPI_Request* req) {
  auto s = std::make_shared<Side>();
  if (int rc = prepare_recv(*s, buf, count, dt)) return raise(comm, rc);
  auto e = std::make_shared<Stashed>();
  if (take_stashed(comm, src, tag, e.get())) {  // a request that completes at once, delivering it
    int rc = completed_request(req);
    if (rc != MPI_SUCCESS) return rc;
    auto p = std::make_shared<Pending>();
    p->complete = [s, e, comm](MPI_Status& st) { return raise(comm, deliver_stashed(*e, *s, st)); };
    attach(*req, std::move(p));
    return rc;
  }
  int rc = Recvs<C>::irecv(s->buf(), n_of<C>(*s), s->type(), src, tag, comm, req);
  if (rc == MPI_SUCCESS && needs_finish(*s, comm, src)) attach(*req, finish_on_completion(s, comm));
  return rc;
}

template <class C>
int recv_init_side(void* buf, C count, MPI_Datatype dt, int src, int tag, MPI_Comm comm, MPI_Request* req) {
  auto s = std::make_shared<Side>();
  if (int rc = prepare_recv(*s, buf, count, dt)) return raise(comm, rc);
  int rc = Recvs<C>::recv_init(s->buf(), n_of<C>(*s), s->type(), src, tag, comm, req);
  if (rc == MPI_SUCCESS && needs_finish(*s, comm, src)) {
    PendingRef p = finish_on_completion(s, comm);
    p->persistent = true;
    p->active = false;
    // Each start first looks in the stash: a message a probe took is this activation's (held),
    // delivered at its completion instead of the MPI's.
    auto held = std::make_shared<std::optional<Stashed>>();
    p->start = [held, comm, src, tag] {
      Stashed e;
      if (stashed_count.load(std::memory_order_relaxed) == 0 || !take_stashed(comm, src, tag, &e)) return MPI_SUCCESS;
      *held = e;
      return kStartHeld;
    };
    p->complete = [s, comm, held](MPI_Status& st) {
      if (!held->has_value()) return finish(*s, comm, st);
      const Stashed e = **held;
      held->reset();
      return deliver_stashed(e, *s, st);
    };
    attach(*req, std::move(p));
  }
  return rc;
}

// A matched message names no communicator: its ticket is vouched for by the magic alone.
template <class C>
int mrecv_side(void* buf, C count, MPI_Datatype dt, MPI_Message* msg, MPI_Status* status) {
  Side s;
  if (int rc = prepare_recv(s, buf, count, dt)) return rc;
  Stashed e;
  if (take_matched(msg, &e)) {  // the message a matched probe took from the MPI (probe.cpp)
    MPI_Status local;
    return deliver_stashed(e, s, status == MPI_STATUS_IGNORE ? local : *status);
  }
  if (!needs_finish(s, MPI_COMM_NULL, MPI_ANY_SOURCE)) return Recvs<C>::mrecv(s.buf(), n_of<C>(s), s.type(), msg, status);
  MPI_Status local;
  MPI_Status* st = status == MPI_STATUS_IGNORE ? &local : status;
  int rc = Recvs<C>::mrecv(s.buf(), n_of<C>(s), s.type(), msg, st);
  return rc != MPI_SUCCESS ? rc : finish(s, MPI_COMM_NULL, *st);
}

template <class C>
int imrecv_side(void* buf, C count, MPI_Datatype dt, MPI_Message* msg, MPI_Request* req) {
  auto s = std::make_shared<Side>();
  if (int rc = prepare_recv(*s, buf, count, dt)) return rc;
  auto e = std::make_shared<Stashed>();
  if (take_matched(msg, e.get())) {
    int rc = completed_request(req);
    if (rc != MPI_SUCCESS) return rc;
    auto p = std::make_shared<Pending>();
    p->complete = [s, e](MPI_Status& st) { return deliver_stashed(*e, *s, st); };
    attach(*req, std::move(p));
    return rc;
  }
  int rc = Recvs<C>::imrecv(s->buf(), n_of<C>(*s), s->type(), msg, req);
  if (rc == MPI_SUCCESS && needs_finish(*s, MPI_COMM_NULL, MPI_ANY_SOURCE)) attach(*req, finish_on_completion(s, MPI_COMM_NULL));
  return rc;
}

}  // namespace

namespace ddtmpi {

int pack_aside(const void* buf, int count, MPI_Datatype dt, int dest, MPI_Comm comm, std::vector<char>& out,
               int* bytes) {
  int size = 0;
  *bytes = 0;
  out.assign(1, 0);  // a valid pointer even for nothing
  if (dest == MPI_PROC_NULL) return MPI_SUCCESS;
  if (int rc = MPI_Pack_size(count, dt, comm, &size)) return rc;
  out.resize(size > 0 ? size : 1);
  return MPI_Pack(buf, count, dt, out.data(), size, bytes, comm);
}

}  // namespace ddtmpi

extern "C" {

int MPI_Send(const void* buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm) {
  return blocking_send<PMPI_Send, PMPI_Isend, DDT_SEND_STANDARD>(buf, count, dt, dest, tag, comm);
}
int MPI_Ssend(const void* buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm) {
  return blocking_send<PMPI_Ssend, PMPI_Issend, DDT_SEND_SYNC>(buf, count, dt, dest, tag, comm);
}
int MPI_Rsend(const void* buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm) {
  return blocking_send<PMPI_Rsend, PMPI_Irsend, DDT_SEND_READY>(buf, count, dt, dest, tag, comm);
}
// The attached buffer must hold the packed bytes: MPI_Pack_size, which applications size it
// with, answers count x size for translated types, the same bytes Bsend then uses.
int MPI_Bsend(const void* buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm) {
  return blocking_send<PMPI_Bsend, PMPI_Ibsend, kNone>(buf, count, dt, dest, tag, comm);
}
int MPI_Isend(const void* buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request* req) {
  return request_send<PMPI_Isend, PMPI_Isend, false, DDT_SEND_STANDARD>(buf, count, dt, dest, tag, comm, req);
}
int MPI_Issend(const void* buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request* req) {
  return request_send<PMPI_Issend, PMPI_Isend, false, DDT_SEND_SYNC>(buf, count, dt, dest, tag, comm, req);
}
int MPI_Irsend(const void* buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request* req) {
  return request_send<PMPI_Irsend, PMPI_Isend, false, DDT_SEND_READY>(buf, count, dt, dest, tag, comm, req);
}
int MPI_Ibsend(const void* buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request* req) {
  return request_send<PMPI_Ibsend, PMPI_Isend, false, kNone>(buf, count, dt, dest, tag, comm, req);
}
int MPI_Send_init(const void* buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request* req) {
  return request_send<PMPI_Send_init, PMPI_Send_init, true, DDT_SEND_STANDARD>(buf, count, dt, dest, tag, comm, req);
}
int MPI_Ssend_init(const void* buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request* req) {
  return request_send<PMPI_Ssend_init, PMPI_Send_init, true, DDT_SEND_SYNC>(buf, count, dt, dest, tag, comm, req);
}
int MPI_Rsend_init(const void* buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request* req) {
  return request_send<PMPI_Rsend_init, PMPI_Send_init, true, DDT_SEND_READY>(buf, count, dt, dest, tag, comm, req);
}
int MPI_Bsend_init(const void* buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request* req) {
  return request_send<PMPI_Bsend_init, PMPI_Send_init, true, kNone>(buf, count, dt, dest, tag, comm, req);
}

// A receive into the user's buffer as direct() gives it (d), with nothing stashed: where a ticket
// may come, the status says whether one did, and its receive is then prepared as the general way
// prepares it, onto the same buffer.
[[gnu::always_inline]] static inline int recv_into(const TypeInfo& ti, const Direct& d, void* buf, int count,
                                                    MPI_Datatype dt, int src, int tag, MPI_Comm comm, MPI_Status* status) {
  if (!may_get_ticket(ti.size, count, comm, src)) return recv_delivering(d.buf, d.count, d.type, src, tag, comm, status);
  MPI_Status local;
  MPI_Status* st = status == MPI_STATUS_IGNORE ? &local : status;
  const int rc = recv_delivering(d.buf, d.count, d.type, src, tag, comm, st);
  if (rc != MPI_SUCCESS || received_bytes(*st) != static_cast<int64_t>(sizeof(Ticket)) || !maybe_ticket(ti, buf))
    return rc;
  Side s;
  if (int e = prepare_recv(s, buf, count, dt)) return raise(comm, e);
  return finish(s, comm, *st);
}
[[gnu::noinline]] static int recv_direct(const TypeInfo& ti, const Direct& d, void* buf, int count, MPI_Datatype dt,
                                         int src, int tag, MPI_Comm comm, MPI_Status* status) {
  return recv_into(ti, d, buf, count, dt, src, tag, comm, status);
}
[[gnu::noinline]] static int recv_full(void* buf, int count, MPI_Datatype dt, int src, int tag, MPI_Comm comm,
                                       MPI_Status* status);
// recv_into for a Pack type's count that went to the MPI as it is before (as_is_again), reached
// from MPI_Recv by a jump: it takes MPI_Recv's own seven arguments (ti is this thread's last peek,
// which MPI_Recv has just found to be dt's), where recv_known and recv_direct's ten cost each
// such receive two frames (callgrind, vect:8:4 of 512 B under Open MPI: 103 instructions in
// them of the interposer's 189 on a round trip's receive).
[[gnu::noinline]] static int recv_as_is(void* buf, int count, MPI_Datatype dt, int src, int tag, MPI_Comm comm,
                                        MPI_Status* status) {
  const TypeInfo* ti = peek_hit(dt);
  if (!ti) return recv_full(buf, count, dt, src, tag, comm, status);  // the type cache changed since
  return recv_into(*ti, Direct{buf, count, dt}, buf, count, dt, src, tag, comm, status);
}

// The receives the MPI takes as they are stay in MPI_Recv, small and frameless as blocking_send
// (p2p.cpp's namespace) is; the rest is here.
[[gnu::noinline]] static int recv_general(const TypeInfo& ti, void* buf, int count, MPI_Datatype dt, int src, int tag,
                                          MPI_Comm comm, MPI_Status* status) {
  // A receive the MPI takes into the user's buffer (its type as it is, or a Contig type's bytes as
  // MPI_BYTE), with nothing stashed: no Side unless a ticket may have come (the general way below
  // does the same with more set-up; callgrind: 566 instructions beside PMPI_Recv for a 480 B
  // vector under Open MPI). A ticket's receive is then prepared as the general way prepares it,
  // onto the same buffer.
  // A Pack type's count whose sends or receives went as they are goes so again (plain_send).
  Direct d;
  const bool as_is = as_is_again(ti, count);
  if (as_is) d = Direct{buf, count, dt};
  const bool none_stashed = stashed_count.load(std::memory_order_relaxed) == 0;
  if (none_stashed && (as_is || direct(ti, buf, count, dt, &d))) {
    note_as_is(ti, count, dt, d);
    return recv_direct(ti, d, buf, count, dt, src, tag, comm, status);
  }
  // Where direct() was asked, it refused: the Side need not ask the pass rules again.
  return recv_side(buf, count, dt, src, tag, comm, status, none_stashed && !as_is ? &ti : nullptr);
}

static int recv_full(void* buf, int count, MPI_Datatype dt, int src, int tag, MPI_Comm comm, MPI_Status* status) {
  if (src != MPI_PROC_NULL && !disabled()) {
    const TypeInfo& ti = peek(dt);  // one lookup for the decisions up to the general way
    if (!plain_recv(count, ti)) return recv_general(ti, buf, count, dt, src, tag, comm, status);
  }
  return recv_delivering(buf, count, dt, src, tag, comm, status);
}

// A Contig type's bytes that may hold a ticket (MPI_Recv takes those that cannot: contig_recv),
// received into the user's buffer without the general way's set-up; anything else, the first
// call included, takes recv_full. (MPI_Recv sends a Pack type's count that went as it is before
// to recv_as_is.) contig_recv stays in MPI_Recv, frameless, although recv_into would find the
// same: callgrind, vect:8:4 of size 8 under Open MPI, 152 against about 225 instructions of the
// interposer's per round trip without it; recv_into is inline here, where a call to recv_direct
// cost a 480 B contiguous message 46 instructions more.
[[gnu::noinline]] static int recv_known(void* buf, int count, MPI_Datatype dt, int src, int tag, MPI_Comm comm,
                                        MPI_Status* status) {
  const TypeInfo* ti = peek_hit(dt);  // found again: MPI_Recv's seven arguments let it jump here
  if (ti && src != MPI_PROC_NULL && hot.disabled.load(std::memory_order_relaxed) == 0 &&
      stashed_count.load(std::memory_order_relaxed) == 0) {
    if (contig_bytes(ti, count))
      return recv_into(*ti, Direct{bytes_of(ti, buf), static_cast<int>(count * ti->size), MPI_BYTE}, buf, count, dt,
                       src, tag, comm, status);
  }
  return recv_full(buf, count, dt, src, tag, comm, status);
}

// The common case first, in loads and compares that call nothing, so that the compiler ends it in
// a jump to the MPI with no stack frame: the type is the one this thread's last call peeked, the
// interposer is on and the MPI takes this receive as it is (plain_recv), and no receive holds a
// ticket. Then a Pack type's as-is count (recv_as_is, also by a jump), the receives recv_known
// decides alone, and recv_full for anything else.
int MPI_Recv(void* buf, int count, MPI_Datatype dt, int src, int tag, MPI_Comm comm, MPI_Status* status) {
  const TypeInfo* ti = peek_hit(dt);
  if (hot.tickets.load(std::memory_order_relaxed) != 0) return recv_full(buf, count, dt, src, tag, comm, status);
  if (ti && src != MPI_PROC_NULL && hot.disabled.load(std::memory_order_relaxed) == 0) {
    if (plain_recv(count, *ti)) return PMPI_Recv(buf, count, dt, src, tag, comm, status);
    if (as_is_again(*ti, count) && stashed_count.load(std::memory_order_relaxed) == 0)
      return recv_as_is(buf, count, dt, src, tag, comm, status);
  }
  if (contig_recv(ti, count, src))
    return PMPI_Recv(bytes_of(ti, buf), static_cast<int>(count * ti->size), MPI_BYTE, src, tag, comm, status);
  return recv_known(buf, count, dt, src, tag, comm, status);
}

[[gnu::noinline]] static int irecv_full(void* buf, int count, MPI_Datatype dt, int src, int tag, MPI_Comm comm,
                                        MPI_Request* req);
// The fast path as MPI_Recv's (no ticket check: nothing here blocks).
int MPI_Irecv(void* buf, int count, MPI_Datatype dt, int src, int tag, MPI_Comm comm, MPI_Request* req) {
  const TypeInfo* ti = peek_hit(dt);
  if (ti && src != MPI_PROC_NULL && hot.disabled.load(std::memory_order_relaxed) == 0 && plain_recv(count, *ti))
    return PMPI_Irecv(buf, count, dt, src, tag, comm, req);
  if (contig_recv(ti, count, src))
    return PMPI_Irecv(bytes_of(ti, buf), static_cast<int>(count * ti->size), MPI_BYTE, src, tag, comm, req);
  return irecv_full(buf, count, dt, src, tag, comm, req);
}
static int irecv_full(void* buf, int count, MPI_Datatype dt, int src, int tag, MPI_Comm comm, MPI_Request* req) {
  if (src == MPI_PROC_NULL || disabled()) return PMPI_Irecv(buf, count, dt, src, tag, comm, req);
  const TypeInfo& ti = peek(dt);
  if (plain_recv(count, ti)) return PMPI_Irecv(buf, count, dt, src, tag, comm, req);
  // Into the user's buffer (as it is, or a Contig type's bytes), with nothing stashed and no
  // ticket possible: nothing to do at completion, so no Side and no Pending (the general way
  // below would attach none either).
  Direct d;
  if (stashed_count.load(std::memory_order_relaxed) == 0 && !may_get_ticket(ti.size, count, comm, src) &&
      direct(ti, buf, count, dt, &d))
    return PMPI_Irecv(d.buf, d.count, d.type, src, tag, comm, req);
  return irecv_side(buf, count, dt, src, tag, comm, req);
}

int MPI_Recv_init(void* buf, int count, MPI_Datatype dt, int src, int tag, MPI_Comm comm, MPI_Request* req) {
  if (disabled() || src == MPI_PROC_NULL) return PMPI_Recv_init(buf, count, dt, src, tag, comm, req);
  return recv_init_side(buf, count, dt, src, tag, comm, req);
}

int MPI_Mrecv(void* buf, int count, MPI_Datatype dt, MPI_Message* msg, MPI_Status* status) {
  if (disabled() || *msg == MPI_MESSAGE_NO_PROC) return PMPI_Mrecv(buf, count, dt, msg, status);
  return mrecv_side(buf, count, dt, msg, status);
}

int MPI_Imrecv(void* buf, int count, MPI_Datatype dt, MPI_Message* msg, MPI_Request* req) {
  if (disabled() || *msg == MPI_MESSAGE_NO_PROC) return PMPI_Imrecv(buf, count, dt, msg, req);
  return imrecv_side(buf, count, dt, msg, req);
}

// Through the runtime, the send is posted and its ticket sent first, and the receive is waited
// for while the runtime progresses (the peer may be copying from this process meanwhile).
int MPI_Sendrecv(const void* sbuf, int scount, MPI_Datatype stype, int dest, int stag, void* rbuf, int rcount,
                 MPI_Datatype rtype, int src, int rtag, MPI_Comm comm, MPI_Status* status) {
  if (disabled())
    return PMPI_Sendrecv(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, src, rtag, comm, status);
  Stashed e;
  if (src != MPI_PROC_NULL && take_stashed(comm, src, rtag, &e)) {
    // A probe took the message from the MPI already: it is delivered first (this process's own
    // copy, or its 64 bytes, needs nothing from the peer, whose blocking send of it may wait for
    // that copy), then the send goes out alone. Sent first, it could wait on that peer for ever.
    Side r;
    if (int rc = prepare_recv(r, rbuf, rcount, rtype)) return raise(comm, rc);
    MPI_Status local;
    const int rc = raise(comm, deliver_stashed(e, r, status == MPI_STATUS_IGNORE ? local : *status));
    const int rc2 = blocking_send<PMPI_Send, PMPI_Isend, DDT_SEND_STANDARD>(sbuf, scount, stype, dest, stag, comm);
    return rc != MPI_SUCCESS ? rc : rc2;
  }
  Side s, r;
  LocalSend ls;
  int peer = -1;
  if (dest != MPI_PROC_NULL)
    peer = route(peek(stype), sbuf, scount, stype, dest, comm, true, false, &ls.info, &ls.heap_rts);
  if (dest != MPI_PROC_NULL && peer < 0)
    if (int rc = prepare_send(s, sbuf, scount, stype)) return raise(comm, rc);
  if (src != MPI_PROC_NULL)
    if (int rc = prepare_recv(r, rbuf, rcount, rtype)) return raise(comm, rc);
  if (dest == MPI_PROC_NULL) s.as_is(sbuf, scount, stype);
  if (src == MPI_PROC_NULL) r.as_is(rbuf, rcount, rtype);
  MPI_Status local;
  MPI_Status* st = status == MPI_STATUS_IGNORE ? &local : status;
  if (peer >= 0) {
    ls.buf = sbuf, ls.count = scount, ls.peer = peer, ls.mode = DDT_SEND_STANDARD, ls.blocking = true;
    if (int rc = ls.post()) return raise(comm, rc);
    MPI_Request tr = MPI_REQUEST_NULL, rr = MPI_REQUEST_NULL;
    int rc = PMPI_Isend(&ls.ticket, sizeof(Ticket), MPI_BYTE, dest, stag, comm, &tr);
    if (rc == MPI_SUCCESS) rc = PMPI_Irecv(r.buf(), r.n(), r.type(), src, rtag, comm, &rr);
    for (int flag = 0, i = 0; rc == MPI_SUCCESS && !flag; ++i) {
      rc = PMPI_Test(&rr, &flag, st);
      if (!flag) {
        ls.poll();
        deliver_pending();
        if (i > 64) sched_yield();
      }
    }
    int rc2 = rc == MPI_SUCCESS && src != MPI_PROC_NULL ? finish(r, comm, *st) : MPI_SUCCESS;
    rc2 = first_error(rc2, ls.wait());
    if (tr != MPI_REQUEST_NULL) rc = first_error(rc, PMPI_Wait(&tr, MPI_STATUS_IGNORE));
    return first_error(rc, raise(comm, rc2));
  }
  int rc = PMPI_Sendrecv(s.buf(), s.n(), s.type(), dest, stag, r.buf(), r.n(), r.type(), src, rtag, comm, st);
  if (rc != MPI_SUCCESS || src == MPI_PROC_NULL || !needs_finish(r, comm, src)) return rc;
  return finish(r, comm, *st);
}

// The packed bytes are sent and replaced in the staging buffer, then unpacked into the user's
// (or, where a ticket arrived, the runtime copies into the user's buffer). A message a probe
// stashed is delivered first, as MPI_Sendrecv's is, after the buffer's bytes are packed aside;
// the packed bytes are sent then (MPI_PACKED, which any receive type matches).
int MPI_Sendrecv_replace(void* buf, int count, MPI_Datatype dt, int dest, int stag, int src, int rtag,
                         MPI_Comm comm, MPI_Status* status) {
  if (disabled()) return PMPI_Sendrecv_replace(buf, count, dt, dest, stag, src, rtag, comm, status);
  Stashed e;
  if (src != MPI_PROC_NULL && take_stashed(comm, src, rtag, &e)) {
    Side r;
    if (int rc = prepare_recv(r, buf, count, dt)) return raise(comm, rc);
    int position = 0;
    std::vector<char> packed;
    if (int rc = pack_aside(buf, count, dt, dest, comm, packed, &position)) return rc;
    MPI_Status local;
    const int rc = raise(comm, deliver_stashed(e, r, status == MPI_STATUS_IGNORE ? local : *status));
    const int rc2 = PMPI_Send(packed.data(), position, MPI_PACKED, dest, stag, comm);
    return rc != MPI_SUCCESS ? rc : rc2;
  }
  Side s;
  if (int rc = prepare_send(s, buf, count, dt)) return raise(comm, rc);
  if (src == MPI_PROC_NULL || !needs_finish(s, comm, src))
    return PMPI_Sendrecv_replace(s.buf(), s.n(), s.type(), dest, stag, src, rtag, comm, status);
  MPI_Status local;
  MPI_Status* st = status == MPI_STATUS_IGNORE ? &local : status;
  int rc = PMPI_Sendrecv_replace(s.buf(), s.n(), s.type(), dest, stag, src, rtag, comm, st);
  return rc != MPI_SUCCESS ? rc : finish(s, comm, *st);
}

}  // extern "C"

#if MPI_VERSION >= 4
namespace ddtmpi {

int recv_c(void* buf, MPI_Count count, MPI_Datatype dt, int src, int tag, MPI_Comm comm, MPI_Status* status) {
  return recv_side(buf, count, dt, src, tag, comm, status);
}
int irecv_c(void* buf, MPI_Count count, MPI_Datatype dt, int src, int tag, MPI_Comm comm, MPI_Request* req) {
  return irecv_side(buf, count, dt, src, tag, comm, req);
}
int recv_init_c(void* buf, MPI_Count count, MPI_Datatype dt, int src, int tag, MPI_Comm comm, MPI_Request* req) {
  return recv_init_side(buf, count, dt, src, tag, comm, req);
}
int mrecv_c(void* buf, MPI_Count count, MPI_Datatype dt, MPI_Message* msg, MPI_Status* status) {
  return mrecv_side(buf, count, dt, msg, status);
}
int imrecv_c(void* buf, MPI_Count count, MPI_Datatype dt, MPI_Message* msg, MPI_Request* req) {
  return imrecv_side(buf, count, dt, msg, req);
}

}  // namespace ddtmpi
#endif
