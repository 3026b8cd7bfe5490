// Point-to-point: blocking, non-blocking, persistent and matched receives. Each wrapper turns
// its (buf, count, datatype) into a Side (side.cpp) and hands the MPI bytes; what remains to do
// when a request completes is attached to it (requests.cpp).
//
// MPI_PROC_NULL peers and predefined types go to the MPI untouched: nothing moves, or the MPI
// moves predefined types at memory speed itself. Statuses carry byte counts of MPI_BYTE, which
// is what MPI_Get_count and MPI_Get_elements divide by the user's datatype, so they answer in
// the user's datatype without being intercepted.
#include <memory>

#include "mpi/shim.hpp"

using namespace ddtmpi;

namespace {

using SendFn = int (*)(const void*, int, MPI_Datatype, int, int, MPI_Comm);
using IsendFn = int (*)(const void*, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request*);

template <SendFn F>
int blocking_send(const void* buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm) {
  if (disabled() || dest == MPI_PROC_NULL) return F(buf, count, dt, dest, tag, comm);
  Side s;
  if (int rc = prepare_send(s, buf, count, dt)) return raise(comm, rc);
  return F(s.buf(), s.n(), s.type(), dest, tag, comm);
}

// Non-blocking (F = PMPI_Isend ...) and persistent (F = PMPI_Send_init ...) sends: a staged send
// keeps its staging until the request completes; a persistent one packs at each MPI_Start, from
// the user's buffer as it is then, and not at all before.
template <IsendFn F, bool Persistent>
int request_send(const void* buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request* req) {
  if (disabled() || dest == MPI_PROC_NULL) return F(buf, count, dt, dest, tag, comm, req);
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
      p->complete = [s](const MPI_Status&) { return MPI_SUCCESS; };
    }
    attach(*req, std::move(p));
  }
  return rc;
}

// Completion of a staged receive: unpack what arrived.
PendingRef unpack_on_completion(std::shared_ptr<Side> s, MPI_Comm comm) {
  auto p = std::make_shared<Pending>();
  p->complete = [s, comm](const MPI_Status& st) { return raise(comm, finish_recv(*s, received_bytes(st))); };
  return p;
}

}  // namespace

extern "C" {

int MPI_Send(const void* buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm) {
  return blocking_send<PMPI_Send>(buf, count, dt, dest, tag, comm);
}
int MPI_Ssend(const void* buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm) {
  return blocking_send<PMPI_Ssend>(buf, count, dt, dest, tag, comm);
}
int MPI_Rsend(const void* buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm) {
  return blocking_send<PMPI_Rsend>(buf, count, dt, dest, tag, comm);
}
// The attached buffer must hold the packed bytes: MPI_Pack_size, which applications size it
// with, answers count x size for translated types, the same bytes Bsend then uses.
int MPI_Bsend(const void* buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm) {
  return blocking_send<PMPI_Bsend>(buf, count, dt, dest, tag, comm);
}
int MPI_Isend(const void* buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request* req) {
  return request_send<PMPI_Isend, false>(buf, count, dt, dest, tag, comm, req);
}
int MPI_Issend(const void* buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request* req) {
  return request_send<PMPI_Issend, false>(buf, count, dt, dest, tag, comm, req);
}
int MPI_Irsend(const void* buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request* req) {
  return request_send<PMPI_Irsend, false>(buf, count, dt, dest, tag, comm, req);
}
int MPI_Ibsend(const void* buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request* req) {
  return request_send<PMPI_Ibsend, false>(buf, count, dt, dest, tag, comm, req);
}
int MPI_Send_init(const void* buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request* req) {
  return request_send<PMPI_Send_init, true>(buf, count, dt, dest, tag, comm, req);
}
int MPI_Ssend_init(const void* buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request* req) {
  return request_send<PMPI_Ssend_init, true>(buf, count, dt, dest, tag, comm, req);
}
int MPI_Rsend_init(const void* buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request* req) {
  return request_send<PMPI_Rsend_init, true>(buf, count, dt, dest, tag, comm, req);
}
int MPI_Bsend_init(const void* buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request* req) {
  return request_send<PMPI_Bsend_init, true>(buf, count, dt, dest, tag, comm, req);
}

int MPI_Recv(void* buf, int count, MPI_Datatype dt, int src, int tag, MPI_Comm comm, MPI_Status* status) {
  if (disabled() || src == MPI_PROC_NULL) return PMPI_Recv(buf, count, dt, src, tag, comm, status);
  Side s;
  if (int rc = prepare_recv(s, buf, count, dt)) return raise(comm, rc);
  if (!s.staging.ok()) return PMPI_Recv(s.buf(), s.n(), s.type(), src, tag, comm, status);
  MPI_Status local;
  MPI_Status* st = status == MPI_STATUS_IGNORE ? &local : status;
  int rc = PMPI_Recv(s.buf(), s.n(), s.type(), src, tag, comm, st);
  return first_error(rc, raise(comm, finish_recv(s, received_bytes(*st))));
}

int MPI_Irecv(void* buf, int count, MPI_Datatype dt, int src, int tag, MPI_Comm comm, MPI_Request* req) {
  if (disabled() || src == MPI_PROC_NULL) return PMPI_Irecv(buf, count, dt, src, tag, comm, req);
  auto s = std::make_shared<Side>();
  if (int rc = prepare_recv(*s, buf, count, dt)) return raise(comm, rc);
  int rc = PMPI_Irecv(s->buf(), s->n(), s->type(), src, tag, comm, req);
  if (rc == MPI_SUCCESS && s->staging.ok()) attach(*req, unpack_on_completion(s, comm));
  return rc;
}

int MPI_Recv_init(void* buf, int count, MPI_Datatype dt, int src, int tag, MPI_Comm comm, MPI_Request* req) {
  if (disabled() || src == MPI_PROC_NULL) return PMPI_Recv_init(buf, count, dt, src, tag, comm, req);
  auto s = std::make_shared<Side>();
  if (int rc = prepare_recv(*s, buf, count, dt)) return raise(comm, rc);
  int rc = PMPI_Recv_init(s->buf(), s->n(), s->type(), src, tag, comm, req);
  if (rc == MPI_SUCCESS && s->staging.ok()) {
    PendingRef p = unpack_on_completion(s, comm);
    p->persistent = true;
    p->active = false;
    attach(*req, std::move(p));
  }
  return rc;
}

int MPI_Mrecv(void* buf, int count, MPI_Datatype dt, MPI_Message* msg, MPI_Status* status) {
  if (disabled() || *msg == MPI_MESSAGE_NO_PROC) return PMPI_Mrecv(buf, count, dt, msg, status);
  Side s;
  if (int rc = prepare_recv(s, buf, count, dt)) return rc;
  if (!s.staging.ok()) return PMPI_Mrecv(s.buf(), s.n(), s.type(), msg, status);
  MPI_Status local;
  MPI_Status* st = status == MPI_STATUS_IGNORE ? &local : status;
  int rc = PMPI_Mrecv(s.buf(), s.n(), s.type(), msg, st);
  return first_error(rc, finish_recv(s, received_bytes(*st)));
}

int MPI_Imrecv(void* buf, int count, MPI_Datatype dt, MPI_Message* msg, MPI_Request* req) {
  if (disabled() || *msg == MPI_MESSAGE_NO_PROC) return PMPI_Imrecv(buf, count, dt, msg, req);
  auto s = std::make_shared<Side>();
  if (int rc = prepare_recv(*s, buf, count, dt)) return rc;
  int rc = PMPI_Imrecv(s->buf(), s->n(), s->type(), msg, req);
  if (rc == MPI_SUCCESS && s->staging.ok()) attach(*req, unpack_on_completion(s, MPI_COMM_NULL));
  return rc;
}

int MPI_Sendrecv(const void* sbuf, int scount, MPI_Datatype stype, int dest, int stag, void* rbuf, int rcount,
                 MPI_Datatype rtype, int src, int rtag, MPI_Comm comm, MPI_Status* status) {
  if (disabled())
    return PMPI_Sendrecv(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, src, rtag, comm, status);
  Side s, r;
  if (dest != MPI_PROC_NULL)
    if (int rc = prepare_send(s, sbuf, scount, stype)) return raise(comm, rc);
  if (src != MPI_PROC_NULL)
    if (int rc = prepare_recv(r, rbuf, rcount, rtype)) return raise(comm, rc);
  if (dest == MPI_PROC_NULL) s.as_is(sbuf, scount, stype);
  if (src == MPI_PROC_NULL) r.as_is(rbuf, rcount, rtype);
  MPI_Status local;
  MPI_Status* st = status == MPI_STATUS_IGNORE ? &local : status;
  int rc = PMPI_Sendrecv(s.buf(), s.n(), s.type(), dest, stag, r.buf(), r.n(), r.type(), src, rtag, comm, st);
  return first_error(rc, r.staging.ok() ? raise(comm, finish_recv(r, received_bytes(*st))) : MPI_SUCCESS);
}

// The packed bytes are sent and replaced in the staging buffer, then unpacked into the user's.
int MPI_Sendrecv_replace(void* buf, int count, MPI_Datatype dt, int dest, int stag, int src, int rtag,
                         MPI_Comm comm, MPI_Status* status) {
  if (disabled()) return PMPI_Sendrecv_replace(buf, count, dt, dest, stag, src, rtag, comm, status);
  Side s;
  if (int rc = prepare_send(s, buf, count, dt)) return raise(comm, rc);
  if (!s.staging.ok()) return PMPI_Sendrecv_replace(s.buf(), s.n(), s.type(), dest, stag, src, rtag, comm, status);
  MPI_Status local;
  MPI_Status* st = status == MPI_STATUS_IGNORE ? &local : status;
  int rc = PMPI_Sendrecv_replace(s.buf(), s.n(), s.type(), dest, stag, src, rtag, comm, st);
  return first_error(rc, src == MPI_PROC_NULL ? MPI_SUCCESS : raise(comm, finish_recv(s, received_bytes(*st))));
}

}  // extern "C"
