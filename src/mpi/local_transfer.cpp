// Same-node transfers through the runtime, each side of one (local.hpp: the protocol): the
// sender's runtime send and ticket, the receiver's recognition of a ticket and its copy.
#include <sched.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <vector>

#include "mpi/local.hpp"
#include "shm/heap.hpp"
#include "shm/runtime.hpp"

namespace ddtmpi {

namespace {

// Whether count elements of t at buf lie in one segment of the mapped heap.
bool in_heap(ddt_type t, const void* buf, int64_t count, int peer) {
  int64_t lb = 0, ext = 0, tlb = 0, text = 0;
  if (ddt_type_extent(t, &lb, &ext) || ddt_type_true_extent(t, &tlb, &text)) return false;
  __int128 span = static_cast<__int128>(count - 1) * ext;
  const __int128 base = static_cast<__int128>(reinterpret_cast<uintptr_t>(buf)) + tlb;
  const __int128 lo = base + std::min<__int128>(0, span), hi = base + text + std::max<__int128>(0, span);
  if (lo < 0 || hi > static_cast<__int128>(UINTPTR_MAX)) return false;
  return ddt::shm::find_segment(static_cast<uintptr_t>(lo), static_cast<uintptr_t>(hi), peer).id != 0;
}

bool named(MPI_Datatype dt) {
  int ni = 0, na = 0, nd = 0, comb = 0;
  return PMPI_Type_get_envelope(dt, &ni, &na, &nd, &comb) == MPI_SUCCESS && comb == MPI_COMBINER_NAMED;
}

}  // namespace

int LocalSend::post() {
  auto lock = runtime_lock();
  ticket = make_ticket(peer, count * info->size);
  const int e =
      ddt::shm::isend_as(buf, count, info->t, peer, static_cast<int>(ticket.seq), mode, blocking, &req, heap_rts);
  error = e;
  if (e) {
    req = DDT_REQUEST_NULL;
    return mpi_error(e);
  }
  count_local(true);
  return MPI_SUCCESS;
}

bool LocalSend::poll() {
  if (!req) return true;
  auto lock = runtime_lock();
  int done = 0;
  const int e = ddt_comm_test(&req, &done, nullptr);
  if (!done && e == DDT_SUCCESS) return false;
  error = e;
  req = DDT_REQUEST_NULL;
  return true;
}

// The MPI is poked every 16th round only: a probe costs about a microsecond, and while the
// receiver drains pipelined cells this loop is what refills them.
int LocalSend::wait() {
  for (int i = 0; !poll(); ++i) {
    if (i % 16 == 15) poke_mpi();
    deliver_pending();  // the receiver may wait, in turn, for a copy this process owes it
    if (i > 64) sched_yield();  // an oversubscribed node: let the peer run
  }
  return mpi_error(error);
}

int local_send_peer(const TypeInfo& info, const void* buf, int64_t count, MPI_Comm comm, int dest, bool blocking,
                    bool persistent, int* heap_rts) {
  const bool contig = info.mode == TypeInfo::Contig;
  if (!local_on() || (info.mode != TypeInfo::Pack && !contig) || count <= 0 || info.size <= 0) return -1;
  if (count > INT64_MAX / info.size) return -1;
  const int64_t bytes = count * info.size;
  if (contig ? bytes < runtime_contig_min_bytes() || runtime_contig_gap(bytes) : bytes < runtime_min_bytes()) return -1;
  const int peer = local_peer(comm, dest);
  if (peer < 0) return -1;
  // A contiguous message is one piece. The heap's lookup is made once, and only where asked.
  const bool big_pieces = (contig ? bytes : info.mean_block) >= ddt::shm::kCmaMinPiece;
  int heap = -1;  // unknown
  const auto in_segment = [&] {
    if (heap < 0) heap = in_heap(info.t, buf, count, peer) ? 1 : 0;
    return heap == 1;
  };
  // A message Open MPI could move itself keeps the runtime past the eager cells where the runtime
  // may move it with one copy: pieces CMA takes, or data in the heap, but not the heap's pieces of
  // one basic element. The heap rule (rendezvous.cpp: select) sends those through the cells, so
  // the runtime makes two copies as Open MPI does, plus the ticket: NAS_MG_x A (128 KiB of single
  // doubles) under DDTKIT_MALLOC=1, ddtbench_mpi, 2 ranks, far distance, 0.88-0.98x native in six
  // launches through the runtime, 0.98-1.00 handed over. SPECFEM3D_mt's 12-byte pieces (three
  // floats) go through the cells too, but Open MPI's own path is slow on them: 2.2-2.7x kept.
  const auto keep = [&] { return big_pieces || (info.mean_block > info.unit && in_segment()); };
  // And one of short pieces (at most 32 B on average, of any basic element) that the runtime
  // would send from its heap by RTS though a cell holds it (rendezvous.cpp: rendezvous_from_heap):
  // the receiver's one copy out of the heap against Open MPI's pack and unpack, which pay per piece.
  // ddtbench_mpi under Open MPI 5.0.11, 2 ranks, native / interposed, launches alternated:
  // - with this clause for every layout / without it (four each, cores near): osu_latency -D
  //   vect:8:4 of size 16384 (8 KiB of 4-byte blocks) 1.11-1.14 / 0.95-0.98; but MILC_su3_zd
  //   8,8,8,8 (12 KiB, pieces of 768 B) 0.80-0.87 / 0.96-0.99 and NAS_LU_y N=162 (6.3 KiB, 40 B)
  //   0.84-0.88 / 0.97-1.00, whose pieces Open MPI moves well;
  // - with it for short pieces only / without it (four each, two near, two far): that size 1.15
  //   near and 2.47-2.58 far / 0.97-1.00; MILC 0.96-1.03 / 0.97-1.01, NAS_LU_y 0.96-1.00 /
  //   0.98-1.00, geometric mean over the 66 kernels 1.96-2.05 / 1.91-2.07.
  // osu_latency's tiny blocks no longer take it: rendezvous_from_heap keeps blocks that the heap
  // would copy in masked windows in the cells (layout_pays_heap), since sent in place, their data
  // rewritten between messages, they ran 1.7-2x slower by RTS than through the cells, near and far;
  // osu_latency sends unchanged data, which the heap copy finds in the receiver's cache. Such a
  // message goes to Open MPI as it is, as it did before this clause.
  const auto from_heap = [&] {
    if (bytes > ddt::shm::rt.eager_max || !short_pieces(info) || !in_segment()) return false;
    auto lock = runtime_lock();
    if (!ddt::shm::rendezvous_from_heap(info.t, buf, count, peer, bytes)) return false;
    if (heap_rts) *heap_rts = 1;
    return true;
  };
  if (!contig && native_pipeline(info, count) && !(bytes > ddt::shm::rt.eager_max && keep()) && !from_heap())
    return -1;
  if (blocking) return peer;
  auto lock = runtime_lock();
  if (!persistent && !ddt::shm::can_post(peer, 2)) return -1;
  return big_pieces || in_segment() ? peer : -1;
}

bool may_get_ticket(const void* buf, int64_t count, MPI_Datatype dt, MPI_Comm comm, int source) {
  (void)buf;
  return may_get_ticket(peek(dt).size, count, comm, source);
}

// Told from the first 16 bytes, without packing the message or taking a reference to its type:
// a 64-byte message of a derived type paid ~1,000 instructions for the general way's pack
// (callgrind, vector(16, 4, 8, MPI_CHAR) under Open MPI, where osu_latency -D vect:8:4 of size
// 128 ran 0.54-0.68x native), 463 now, the receive's own path included.
bool maybe_ticket(const TypeInfo& ti, const void* buf) {
  const char* user = static_cast<const char*>(buf);
  if (ti.mode == TypeInfo::Contig || (ti.mode == TypeInfo::Pass && ti.named)) return ticket_magic(user + ti.offset);
  if (ti.mode != TypeInfo::Pack || ti.head_n == 0) return true;  // the general way decides
  return ticket_magic(user, ti.head_off, ti.head_len, ti.head_n);
}

namespace {
bool maybe_ticket(const Side& s) { return s.converted() ? ticket_magic(s.data) : maybe_ticket(peek(s.dt), s.user); }
}  // namespace

int take_ticket(const Side& s, MPI_Comm comm, MPI_Status& status, bool* taken) {
  *taken = false;
  if (!local_on() || received_bytes(status) != static_cast<int64_t>(sizeof(Ticket))) return MPI_SUCCESS;
  if (!maybe_ticket(s)) return MPI_SUCCESS;
  // The 64 bytes that arrived, wherever the receive put them.
  const TypeRef info = s.converted() ? s.info : lookup(s.dt);
  const bool predefined = !s.converted() && !info->t && named(s.dt);
  const MPI_Comm any = comm == MPI_COMM_NULL ? MPI_COMM_WORLD : comm;
  char raw[sizeof(Ticket)];
  std::vector<char> packed;
  const void* p = nullptr;
  if (s.converted()) {
    p = s.data;
  } else if (predefined) {
    p = s.user;
  } else if (info->t) {
    int64_t n = 0;
    if (ddt_pack(s.user, s.count, info->t, 0, raw, sizeof raw, &n) != DDT_SUCCESS || n != sizeof raw) return MPI_SUCCESS;
    p = raw;
  } else {  // a type the interposer cannot translate: the MPI packs it
    int size = 0, pos = 0;
    if (s.count > INT_MAX || PMPI_Pack_size(static_cast<int>(s.count), s.dt, any, &size) != MPI_SUCCESS) return MPI_SUCCESS;
    packed.resize(static_cast<size_t>(size));
    if (PMPI_Pack(s.user, static_cast<int>(s.count), s.dt, packed.data(), size, &pos, any) != MPI_SUCCESS) return MPI_SUCCESS;
    p = packed.data();
  }
  Ticket t{};
  int peer = -1;
  if (!read_ticket(p, sizeof(Ticket), comm, status.MPI_SOURCE, &t, &peer)) return MPI_SUCCESS;
  *taken = true;
  return receive_ticket(s, comm, t, peer, status, info);
}

int receive_ticket(const Side& s, MPI_Comm comm, const Ticket& t, int peer, MPI_Status& status) {
  return receive_ticket(s, comm, t, peer, status, s.converted() ? s.info : lookup(s.dt));
}

int receive_ticket(const Side& s, MPI_Comm comm, const Ticket& t, int peer, MPI_Status& status, const TypeRef& info) {
  const bool predefined = !s.converted() && !info->t && named(s.dt);
  const MPI_Comm any = comm == MPI_COMM_NULL ? MPI_COMM_WORLD : comm;
  std::vector<char> packed;
  // The message, from the runtime straight into the receive's buffer and type.
  ddt_status ds{};
  int e = DDT_SUCCESS;
  void* user = const_cast<void*>(s.user);
  if (info->t || predefined) {
    int64_t count = s.count;
    ddt_type type = info->t;
    if (predefined) {
      MPI_Count size = 0;
      PMPI_Type_size_x(s.dt, &size);
      count *= size, type = DDT_BYTE;
    }
    auto lock = runtime_lock();
    e = ddt::shm::recv_as(user, count, type, peer, static_cast<int>(t.seq), &ds);
  } else {  // received as bytes, unpacked by the MPI (at most INT_MAX elements: its int forms)
    int size = 0, pos = 0;
    PMPI_Pack_size(static_cast<int>(std::min<int64_t>(s.count, INT_MAX)), s.dt, any, &size);
    packed.assign(static_cast<size_t>(size), 0);
    {
      auto lock = runtime_lock();
      e = ddt::shm::recv_as(packed.data(), size, DDT_BYTE, peer, static_cast<int>(t.seq), &ds);
    }
    MPI_Count one = 0;
    PMPI_Type_size_x(s.dt, &one);
    const int64_t whole = one > 0 ? std::min<int64_t>(ds.bytes / one, s.count) : 0;
    if (whole > 0) PMPI_Unpack(packed.data(), size, &pos, user, static_cast<int>(whole), s.dt, any);
  }
  count_local(false);
  PMPI_Status_set_elements_x(&status, MPI_BYTE, ds.bytes);
  return mpi_error(e);
}

}  // namespace ddtmpi

namespace ddtmpi {

int deliver_stashed(const Stashed& e, const Side& s, MPI_Status& st) {
  st.MPI_SOURCE = e.source, st.MPI_TAG = e.tag, st.MPI_ERROR = MPI_SUCCESS;
  PMPI_Status_set_cancelled(&st, 0);
  if (e.ticket) return receive_ticket(s, e.comm, e.t, e.peer, st);
  // The 64 bytes a probe took, as the MPI would have delivered them.
  const int64_t want = sizeof e.data;
  int64_t n = want;
  int rc = MPI_SUCCESS;
  if (s.converted()) {
    n = std::min(want, s.bytes);
    std::memcpy(s.data, e.data, static_cast<size_t>(n));
    rc = finish_recv(s, n);
  } else {
    MPI_Count one = 0;
    PMPI_Type_size_x(s.dt, &one);
    const int64_t capacity = one > 0 ? s.count * one : 0;
    n = std::min(want, capacity);
    if (named(s.dt)) {
      std::memcpy(const_cast<void*>(s.user), e.data, static_cast<size_t>(n));
    } else if (one > 0) {
      int pos = 0;
      char copy[sizeof e.data];
      std::memcpy(copy, e.data, sizeof copy);
      PMPI_Unpack(copy, static_cast<int>(n), &pos, const_cast<void*>(s.user), static_cast<int>(n / one), s.dt,
                  e.comm == MPI_COMM_NULL ? MPI_COMM_WORLD : e.comm);
    }
  }
  PMPI_Status_set_elements_x(&st, MPI_BYTE, n);
  return rc != MPI_SUCCESS ? rc : n < want ? MPI_ERR_TRUNCATE : MPI_SUCCESS;
}

}  // namespace ddtmpi
