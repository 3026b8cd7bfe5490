// MPI 4's MPI_Isendrecv and MPI_Isendrecv_replace (MPICH 5 and Open MPI 5.0 both have them).
//
// They must be the interposer's: left to the MPI, their receive half could take a same-node
// peer's ticket (local.hpp) as if it were the data, or wait for a message a probe has stashed,
// and their send half would hand Open MPI derived types it moves wrongly (pass.cpp). So each is
// the interposer's own MPI_Irecv and MPI_Isend, posted together and completed as one request:
// a generalized request whose Pending is `busy` until both halves are complete (requests.cpp
// polls busy requests in every wait and test, and keeps the others moving meanwhile, so a
// receive here that holds a ticket gets its copy while its peer waits for it). When both are
// complete the generalized request is completed, and its status is the receive's.
//
// MPI_Isendrecv_replace packs the buffer first (pack_aside, p2p.cpp) and sends the packed
// bytes as MPI_PACKED, which any receive type matches; the receive then lands in the buffer. It
// gives up the runtime's one-copy path for its send half: the buffer is overwritten while the
// send may still read it, so the send needs a copy of its own either way.
//
// MPI_Cancel cancels both halves (Pending::cancel) where they can be (a send through the runtime
// cannot, and completes normally); the status says cancelled when the receive was.
#include <memory>
#include <vector>

#include "mpi/shim.hpp"

namespace {

using namespace ddtmpi;

struct Pair {
  MPI_Request send = MPI_REQUEST_NULL, recv = MPI_REQUEST_NULL;
  MPI_Request self = MPI_REQUEST_NULL;  // the generalized request the user holds
  MPI_Status status{};                  // the receive's, handed out by query()
  int error = MPI_SUCCESS;              // the first error of either half
  bool done = false;                    // both halves complete, self completed
  std::vector<char> packed;             // MPI_Isendrecv_replace: the bytes its send half sends
};
using PairRef = std::shared_ptr<Pair>;

// The generalized request's functions; extra_state is a heap PairRef that free() releases.
int query(void* extra, MPI_Status* st) {
  const Pair& p = **static_cast<PairRef*>(extra);
  *st = p.status;
  return p.error;
}
int release(void* extra) {
  delete static_cast<PairRef*>(extra);
  return MPI_SUCCESS;
}

// Tests one half once. A half that fails is complete (the MPI frees a request that completes in
// error), its error kept.
void test_half(Pair& p, MPI_Request* half, MPI_Status* st) {
  if (*half == MPI_REQUEST_NULL) return;
  int flag = 0;
  const int rc = MPI_Test(half, &flag, st);
  if (rc == MPI_SUCCESS) return;
  p.error = first_error(p.error, rc);
  if (st != MPI_STATUS_IGNORE) st->MPI_ERROR = rc;
  *half = MPI_REQUEST_NULL;
}

// True while a half is still incomplete; completes the generalized request once both are.
bool progress(Pair& p) {
  if (p.done) return false;
  test_half(p, &p.recv, &p.status);
  test_half(p, &p.send, MPI_STATUS_IGNORE);
  if (p.recv != MPI_REQUEST_NULL || p.send != MPI_REQUEST_NULL) return true;
  p.done = true;
  p.error = first_error(p.error, PMPI_Grequest_complete(p.self));
  return false;
}

// The interposer's halves for a count type C: the int forms, or MPI 4's large-count forms (which
// take the int forms' ways where a count fits, large_count.cpp).
template <class C> struct Halves {
  static constexpr auto irecv = MPI_Irecv;
  static constexpr auto isend = MPI_Isend;
};
#if MPI_VERSION >= 4
template <> struct Halves<MPI_Count> {
  static constexpr auto irecv = MPI_Irecv_c;
  static constexpr auto isend = MPI_Isend_c;
};
#endif

// Posts the receive, then the send (posted in that order, a peer's ticket finds its receive
// waiting), and returns the generalized request standing for both.
template <class C>
int post_pair(const PairRef& p, const void* sbuf, C scount, MPI_Datatype stype, int dest, int stag, void* rbuf,
              C rcount, MPI_Datatype rtype, int src, int rtag, MPI_Comm comm, MPI_Request* req) {
  if (int rc = Halves<C>::irecv(rbuf, rcount, rtype, src, rtag, comm, &p->recv)) return rc;
  if (int rc = Halves<C>::isend(sbuf, scount, stype, dest, stag, comm, &p->send)) {
    // The receive may have matched already: the interposer keeps and finishes it.
    MPI_Cancel(&p->recv);
    MPI_Request_free(&p->recv);
    return rc;
  }
  auto* extra = new PairRef(p);
  if (int rc = PMPI_Grequest_start(query, release, nothing_to_cancel, extra, &p->self)) {
    delete extra;
    MPI_Cancel(&p->recv);
    MPI_Request_free(&p->recv);
    MPI_Request_free(&p->send);
    return rc;
  }
  auto w = std::make_shared<Pending>();
  w->busy = [p] { return progress(*p); };
  w->cancel = [p] {
    int rc = p->recv != MPI_REQUEST_NULL ? MPI_Cancel(&p->recv) : MPI_SUCCESS;
    return first_error(rc, p->send != MPI_REQUEST_NULL ? MPI_Cancel(&p->send) : MPI_SUCCESS);
  };
  attach(p->self, std::move(w));
  *req = p->self;
  return MPI_SUCCESS;
}

}  // namespace

#if MPI_VERSION >= 4
int ddtmpi::isendrecv_c(const void* sbuf, MPI_Count scount, MPI_Datatype stype, int dest, int stag, void* rbuf,
                        MPI_Count rcount, MPI_Datatype rtype, int src, int rtag, MPI_Comm comm, MPI_Request* req) {
  if (req == nullptr) return raise(comm, MPI_ERR_REQUEST);
  return post_pair(std::make_shared<Pair>(), sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, src, rtag, comm,
                   req);
}
#endif

extern "C" {

int MPI_Isendrecv(const void* sbuf, int scount, MPI_Datatype stype, int dest, int stag, void* rbuf, int rcount,
                  MPI_Datatype rtype, int src, int rtag, MPI_Comm comm, MPI_Request* req) {
  if (disabled())
    return PMPI_Isendrecv(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, src, rtag, comm, req);
  if (req == nullptr) return raise(comm, MPI_ERR_REQUEST);
  return post_pair(std::make_shared<Pair>(), sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, src, rtag, comm,
                   req);
}

int MPI_Isendrecv_replace(void* buf, int count, MPI_Datatype dt, int dest, int stag, int src, int rtag,
                          MPI_Comm comm, MPI_Request* req) {
  if (disabled()) return PMPI_Isendrecv_replace(buf, count, dt, dest, stag, src, rtag, comm, req);
  if (req == nullptr) return raise(comm, MPI_ERR_REQUEST);
  auto p = std::make_shared<Pair>();
  int position = 0;
  if (int rc = pack_aside(buf, count, dt, dest, comm, p->packed, &position)) return rc;
  return post_pair(p, p->packed.data(), position, MPI_PACKED, dest, stag, buf, count, dt, src, rtag, comm, req);
}

}  // extern "C"
