// MPI 4's large-count point-to-point calls (MPI_Send_c ..., MPI_Count counts), where the MPI has
// them (MPICH 5; Open MPI 5.0 has none). mpi4py 4 calls them for every message wherever they
// exist, so they must take the interposer's ways as the int forms do: a matched probe of a
// 64-byte message hands out a handle of the interposer's own (probe.cpp), which only its MPI_Mrecv
// knows; a probe may have stashed the message a receive waits for; and a receive may get a ticket
// (local.hpp) from a send of the int form. Uncovered, mpi4py's test_p2p_buf_matched lost every
// 64-byte message under MPICH: MPI_Mrecv_c received the empty message behind the handle, and the
// buffer kept its old bytes.
//
// A count that fits an int goes the int form's way. A receive of more than INT_MAX elements takes
// the int forms' general way with MPI_Count (p2p.cpp's recv_c ...): its side is the user's
// arguments as they are (their bytes pass an int), a probe's stash is looked in first, and what
// arrives is checked for a ticket, since a same-node int-form send of a derived type may have sent
// one whatever the receive's count; a matched handle's stashed message is delivered with the
// whole count. Uncovered before: such a receive got the ticket's 64 bytes as its data, or waited
// in the MPI for a message a probe had already taken. A send of more than INT_MAX elements goes
// to the MPI as it is (the runtime carries no count above INT_MAX). MPI_Sendrecv_c and
// MPI_Isendrecv_c with such a count on either side are the interposer's MPI_Irecv_c and
// MPI_Send_c / MPI_Isend_c; the _replace forms with such a count go to the MPI as they are
// (uncovered: a receive half of those can still take a ticket as data; their int forms' ways
// pack the buffer aside with an int count).
#include <climits>

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
// A receive's (L: MPI_Status* for MPI_Recv, MPI_Request* for MPI_Irecv and MPI_Recv_init): the
// interposer's int form F, its general way G with the large count, or the MPI's FC for a
// MPI_PROC_NULL source or a disabled interposer.
template <auto F, auto G, auto FC, class L>
int receive_c(void* buf, MPI_Count count, MPI_Datatype dt, int src, int tag, MPI_Comm comm, L last) {
  if (fits(count)) return F(buf, static_cast<int>(count), dt, src, tag, comm, last);
  if (src == MPI_PROC_NULL || ddtmpi::disabled()) return FC(buf, count, dt, src, tag, comm, last);
  return G(buf, count, dt, src, tag, comm, last);
}
// A matched receive's: the same with the message handle.
template <auto F, auto G, auto FC, class L>
int matched_c(void* buf, MPI_Count count, MPI_Datatype dt, MPI_Message* msg, L last) {
  if (fits(count)) return F(buf, static_cast<int>(count), dt, msg, last);
  if (*msg == MPI_MESSAGE_NO_PROC || ddtmpi::disabled()) return FC(buf, count, dt, msg, last);
  return G(buf, count, dt, msg, last);
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
  return receive_c<MPI_Recv, recv_c, PMPI_Recv_c>(buf, count, dt, src, tag, comm, status);
}
int MPI_Irecv_c(void* buf, MPI_Count count, MPI_Datatype dt, int src, int tag, MPI_Comm comm, MPI_Request* req) {
  return receive_c<MPI_Irecv, irecv_c, PMPI_Irecv_c>(buf, count, dt, src, tag, comm, req);
}
int MPI_Recv_init_c(void* buf, MPI_Count count, MPI_Datatype dt, int src, int tag, MPI_Comm comm, MPI_Request* req) {
  return receive_c<MPI_Recv_init, recv_init_c, PMPI_Recv_init_c>(buf, count, dt, src, tag, comm, req);
}
int MPI_Mrecv_c(void* buf, MPI_Count count, MPI_Datatype dt, MPI_Message* msg, MPI_Status* status) {
  return matched_c<MPI_Mrecv, mrecv_c, PMPI_Mrecv_c>(buf, count, dt, msg, status);
}
int MPI_Imrecv_c(void* buf, MPI_Count count, MPI_Datatype dt, MPI_Message* msg, MPI_Request* req) {
  return matched_c<MPI_Imrecv, imrecv_c, PMPI_Imrecv_c>(buf, count, dt, msg, req);
}
// A count past an int on either side: the interposer's MPI_Irecv_c (the stash, a ticket), posted
// before MPI_Send_c and waited for after it, which is what MPI_Sendrecv is defined to be (the
// MPI's own MPI_Sendrecv_c would receive a ticket as data, or miss a stashed message).
int MPI_Sendrecv_c(const void* sbuf, MPI_Count scount, MPI_Datatype stype, int dest, int stag, void* rbuf,
                   MPI_Count rcount, MPI_Datatype rtype, int src, int rtag, MPI_Comm comm, MPI_Status* status) {
  if ((fits(scount) && fits(rcount)) || disabled())
    return sendrecv_c<MPI_Sendrecv, PMPI_Sendrecv_c>(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, src, rtag,
                                                     comm, status);
  MPI_Request r = MPI_REQUEST_NULL;
  int rc = MPI_Irecv_c(rbuf, rcount, rtype, src, rtag, comm, &r);
  if (rc != MPI_SUCCESS) return rc;
  rc = MPI_Send_c(sbuf, scount, stype, dest, stag, comm);
  if (rc != MPI_SUCCESS) {  // the receive is withdrawn: the call failed as a whole
    MPI_Cancel(&r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    return rc;
  }
  return MPI_Wait(&r, status);
}
int MPI_Sendrecv_replace_c(void* buf, MPI_Count count, MPI_Datatype dt, int dest, int stag, int src, int rtag,
                           MPI_Comm comm, MPI_Status* status) {
  return sendrecv_replace_c<MPI_Sendrecv_replace, PMPI_Sendrecv_replace_c>(buf, count, dt, dest, stag, src, rtag,
                                                                           comm, status);
}
int MPI_Isendrecv_c(const void* sbuf, MPI_Count scount, MPI_Datatype stype, int dest, int stag, void* rbuf,
                    MPI_Count rcount, MPI_Datatype rtype, int src, int rtag, MPI_Comm comm, MPI_Request* req) {
  if ((fits(scount) && fits(rcount)) || disabled())
    return sendrecv_c<MPI_Isendrecv, PMPI_Isendrecv_c>(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, src,
                                                       rtag, comm, req);
  return isendrecv_c(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, src, rtag, comm, req);
}
int MPI_Isendrecv_replace_c(void* buf, MPI_Count count, MPI_Datatype dt, int dest, int stag, int src, int rtag,
                            MPI_Comm comm, MPI_Request* req) {
  return sendrecv_replace_c<MPI_Isendrecv_replace, PMPI_Isendrecv_replace_c>(buf, count, dt, dest, stag, src, rtag,
                                                                             comm, req);
}

}  // extern "C"

#endif  // MPI_VERSION >= 4
