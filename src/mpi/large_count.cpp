// MPI 4's large-count point-to-point calls (MPI_Send_c ..., MPI_Count counts), where the MPI has
// them (MPICH 5; Open MPI 5.0 has none). mpi4py 4 calls them for every message wherever they
// exist, so they must take the interposer's ways as the int forms do: a matched probe of a
// 64-byte message hands out a handle of the interposer's own (probe.cpp), which only its MPI_Mrecv
// knows; a probe may have stashed the message a receive waits for; and a receive may get a ticket
// (local.hpp) from a send of the int form. Uncovered, mpi4py's test_p2p_buf_matched lost every
// 64-byte message under MPICH: MPI_Mrecv_c received the empty message behind the handle, and the
// buffer kept its old bytes.
//
// A count that fits an int goes the int form's way. A larger one goes to the MPI as it is, except
// a matched receive of a stashed message, whose data is 64 bytes (any count of at least one
// element holds it, so the int way with INT_MAX). What that leaves uncovered, written where the
// choice is: a receive of more than INT_MAX elements does not look in the stash or for a ticket.
// The runtime sends a ticket for no count above INT_MAX (the int forms carry none), so only a
// 64-byte message from an int-form send, received with such a count, can be missed that way.
#include <climits>

#include "mpi/local.hpp"
#include "mpi/shim.hpp"

#if MPI_VERSION >= 4

namespace {

bool fits(MPI_Count c) { return c >= 0 && c <= INT_MAX; }

// A send's large-count form: the interposer's int form F where the count fits, else the MPI's FC
// (R: nothing for a blocking send, MPI_Request for a non-blocking or persistent one).
template <auto F, auto FC, class... R>
int send_c(const void* buf, MPI_Count count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, R*... req) {
  return fits(count) ? F(buf, static_cast<int>(count), dt, dest, tag, comm, req...)
                     : FC(buf, count, dt, dest, tag, comm, req...);
}
// A receive's (L: MPI_Status* for MPI_Recv, MPI_Request* for MPI_Irecv and MPI_Recv_init).
template <auto F, auto FC, class L>
int recv_c(void* buf, MPI_Count count, MPI_Datatype dt, int src, int tag, MPI_Comm comm, L last) {
  return fits(count) ? F(buf, static_cast<int>(count), dt, src, tag, comm, last)
                     : FC(buf, count, dt, src, tag, comm, last);
}
// MPI_Sendrecv and MPI_Isendrecv (L: MPI_Status* or MPI_Request*), and their _replace forms.
template <auto F, auto FC, class L>
int sendrecv_c(const void* sbuf, MPI_Count scount, MPI_Datatype stype, int dest, int stag, void* rbuf,
               MPI_Count rcount, MPI_Datatype rtype, int src, int rtag, MPI_Comm comm, L last) {
  if (fits(scount) && fits(rcount))
    return F(sbuf, static_cast<int>(scount), stype, dest, stag, rbuf, static_cast<int>(rcount), rtype, src, rtag,
             comm, last);
  return FC(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, src, rtag, comm, last);
}
template <auto F, auto FC, class L>
int sendrecv_replace_c(void* buf, MPI_Count count, MPI_Datatype dt, int dest, int stag, int src, int rtag,
                       MPI_Comm comm, L last) {
  if (fits(count)) return F(buf, static_cast<int>(count), dt, dest, stag, src, rtag, comm, last);
  return FC(buf, count, dt, dest, stag, src, rtag, comm, last);
}

}  // namespace

using namespace ddtmpi;

extern "C" {

int MPI_Send_c(const void* buf, MPI_Count count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm) {
  return send_c<MPI_Send, PMPI_Send_c>(buf, count, dt, dest, tag, comm);
}
int MPI_Ssend_c(const void* buf, MPI_Count count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm) {
  return send_c<MPI_Ssend, PMPI_Ssend_c>(buf, count, dt, dest, tag, comm);
}
int MPI_Rsend_c(const void* buf, MPI_Count count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm) {
  return send_c<MPI_Rsend, PMPI_Rsend_c>(buf, count, dt, dest, tag, comm);
}
int MPI_Bsend_c(const void* buf, MPI_Count count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm) {
  return send_c<MPI_Bsend, PMPI_Bsend_c>(buf, count, dt, dest, tag, comm);
}
int MPI_Isend_c(const void* buf, MPI_Count count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request* req) {
  return send_c<MPI_Isend, PMPI_Isend_c>(buf, count, dt, dest, tag, comm, req);
}
int MPI_Issend_c(const void* buf, MPI_Count count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request* req) {
  return send_c<MPI_Issend, PMPI_Issend_c>(buf, count, dt, dest, tag, comm, req);
}
int MPI_Irsend_c(const void* buf, MPI_Count count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request* req) {
  return send_c<MPI_Irsend, PMPI_Irsend_c>(buf, count, dt, dest, tag, comm, req);
}
int MPI_Ibsend_c(const void* buf, MPI_Count count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request* req) {
  return send_c<MPI_Ibsend, PMPI_Ibsend_c>(buf, count, dt, dest, tag, comm, req);
}
int MPI_Send_init_c(const void* buf, MPI_Count count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request* req) {
  return send_c<MPI_Send_init, PMPI_Send_init_c>(buf, count, dt, dest, tag, comm, req);
}
int MPI_Ssend_init_c(const void* buf, MPI_Count count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request* req) {
  return send_c<MPI_Ssend_init, PMPI_Ssend_init_c>(buf, count, dt, dest, tag, comm, req);
}
int MPI_Rsend_init_c(const void* buf, MPI_Count count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request* req) {
  return send_c<MPI_Rsend_init, PMPI_Rsend_init_c>(buf, count, dt, dest, tag, comm, req);
}
int MPI_Bsend_init_c(const void* buf, MPI_Count count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request* req) {
  return send_c<MPI_Bsend_init, PMPI_Bsend_init_c>(buf, count, dt, dest, tag, comm, req);
}

int MPI_Recv_c(void* buf, MPI_Count count, MPI_Datatype dt, int src, int tag, MPI_Comm comm, MPI_Status* status) {
  return recv_c<MPI_Recv, PMPI_Recv_c>(buf, count, dt, src, tag, comm, status);
}
int MPI_Irecv_c(void* buf, MPI_Count count, MPI_Datatype dt, int src, int tag, MPI_Comm comm, MPI_Request* req) {
  return recv_c<MPI_Irecv, PMPI_Irecv_c>(buf, count, dt, src, tag, comm, req);
}
int MPI_Recv_init_c(void* buf, MPI_Count count, MPI_Datatype dt, int src, int tag, MPI_Comm comm, MPI_Request* req) {
  return recv_c<MPI_Recv_init, PMPI_Recv_init_c>(buf, count, dt, src, tag, comm, req);
}
int MPI_Mrecv_c(void* buf, MPI_Count count, MPI_Datatype dt, MPI_Message* msg, MPI_Status* status) {
  if (fits(count) || (count > 0 && is_matched(*msg)))
    return MPI_Mrecv(buf, fits(count) ? static_cast<int>(count) : INT_MAX, dt, msg, status);
  return PMPI_Mrecv_c(buf, count, dt, msg, status);
}
int MPI_Imrecv_c(void* buf, MPI_Count count, MPI_Datatype dt, MPI_Message* msg, MPI_Request* req) {
  if (fits(count) || (count > 0 && is_matched(*msg)))
    return MPI_Imrecv(buf, fits(count) ? static_cast<int>(count) : INT_MAX, dt, msg, req);
  return PMPI_Imrecv_c(buf, count, dt, msg, req);
}
int MPI_Sendrecv_c(const void* sbuf, MPI_Count scount, MPI_Datatype stype, int dest, int stag, void* rbuf,
                   MPI_Count rcount, MPI_Datatype rtype, int src, int rtag, MPI_Comm comm, MPI_Status* status) {
  return sendrecv_c<MPI_Sendrecv, PMPI_Sendrecv_c>(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, src, rtag,
                                                   comm, status);
}
int MPI_Sendrecv_replace_c(void* buf, MPI_Count count, MPI_Datatype dt, int dest, int stag, int src, int rtag,
                           MPI_Comm comm, MPI_Status* status) {
  return sendrecv_replace_c<MPI_Sendrecv_replace, PMPI_Sendrecv_replace_c>(buf, count, dt, dest, stag, src, rtag,
                                                                           comm, status);
}
int MPI_Isendrecv_c(const void* sbuf, MPI_Count scount, MPI_Datatype stype, int dest, int stag, void* rbuf,
                    MPI_Count rcount, MPI_Datatype rtype, int src, int rtag, MPI_Comm comm, MPI_Request* req) {
  return sendrecv_c<MPI_Isendrecv, PMPI_Isendrecv_c>(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, src, rtag,
                                                     comm, req);
}
int MPI_Isendrecv_replace_c(void* buf, MPI_Count count, MPI_Datatype dt, int dest, int stag, int src, int rtag,
                            MPI_Comm comm, MPI_Request* req) {
  return sendrecv_replace_c<MPI_Isendrecv_replace, PMPI_Isendrecv_replace_c>(buf, count, dt, dest, stag, src, rtag,
                                                                             comm, req);
}

}  // extern "C"

#endif  // MPI_VERSION >= 4
