// MPI_Alltoall among the processes of one node through ddtkit's runtime (issue 11): each chunk
// moves with one copy from the sender's layout into the receiver's (the runtime's rendezvous),
// my own chunk is copied type to type, and nothing is staged. The staged way packs every chunk,
// hands the MPI bytes it copies again, and unpacks them: FFT2D's transposes under Open MPI were
// 0.67x of Open MPI's own Alltoall that way.
//
// Which way a collective goes must be the same at every rank, or some wait in the runtime for
// ranks that wait in the MPI. So the decision uses only what every rank of the communicator
// knows alike: the runtime is on, the communicator is an intracommunicator whose every process
// is a runtime process of this node, the call is blocking and not in place (MPI_IN_PLACE is
// given at all processes or none), and the packed bytes of a chunk, which the standard makes
// equal at every rank (each receive count and type match each send's), reach the runtime's
// threshold (DDTKIT_RUNTIME_MIN, the same at every rank). Never the types: one rank's vector
// may be another's MPI_DOUBLE. So each side is moved as what it is: a translated type as itself,
// a predefined one as its ddtkit twin, and a type the interposer cannot translate as bytes the
// MPI packs or unpacks (MPI_Pack / MPI_Unpack), through a staging buffer.
//
// Matching: the chunks of one collective carry a runtime tag of their own, 2^30 plus the
// communicator's collective sequence number (every rank counts the collectives it takes this
// way on a communicator alike; tickets' tags stay below 2^30). The runtime does not overtake
// between a pair of processes, so a collective on another communicator with the same number
// cannot take this one's chunks as long as collectives on the two are called in one order at the
// processes they share, which blocking collectives need anyway.
#include <sched.h>

#include <climits>
#include <vector>

#include "mpi/local.hpp"
#include "mpi/shim.hpp"
#include "shm/runtime.hpp"

namespace ddtmpi {

namespace {

// One side as the runtime moves it: chunk i is `count` elements of `type` at base + i * stride.
struct Chunks {
  TypeRef info;  // keeps a translation alive while the runtime reads or writes by it
  ddt_type type = DDT_TYPE_NULL;
  int64_t count = 0, stride = 0;
  char* base = nullptr;
  Buffer staging;  // a type the interposer cannot translate: its packed bytes
  int64_t packed = 0;  // and how many
};

// n chunks of count elements of dt at buf. A translated type or a predefined one is used as it
// is; any other is packed by the MPI (send side) or unpacked by it afterwards (receive side).
int describe(Chunks& c, const void* buf, int count, MPI_Datatype dt, int n, bool send, MPI_Comm comm) {
  c.info = lookup(dt);
  c.base = static_cast<char*>(const_cast<void*>(buf));
  MPI_Aint lb = 0, extent = 0;
  if (PMPI_Type_get_extent(dt, &lb, &extent) != MPI_SUCCESS) return MPI_ERR_TYPE;
  c.count = count;
  c.stride = static_cast<int64_t>(count) * extent;
  c.type = c.info->t ? c.info->t : predefined_type(dt);
  if (c.type) return MPI_SUCCESS;
  // A chunk is count x the type's size bytes as the MPI packs it (its native representation);
  // MPI_Pack_size is only a bound, so the staging has that room and the packed length is checked.
  MPI_Count tsize = 0;
  int room = 0;
  const int64_t total = static_cast<int64_t>(count) * n;
  if (PMPI_Type_size_x(dt, &tsize) != MPI_SUCCESS || total > INT_MAX ||
      PMPI_Pack_size(static_cast<int>(total), dt, comm, &room) != MPI_SUCCESS || room < total * tsize)
    return MPI_ERR_TYPE;
  c.staging = Buffer(room > 0 ? room : 1);
  if (!c.staging.ok()) return MPI_ERR_NO_MEM;
  c.type = DDT_BYTE;
  c.count = c.stride = static_cast<int64_t>(count) * tsize;
  c.base = c.staging.data();
  c.packed = total * tsize;
  if (send) {
    int pos = 0;
    if (int e = PMPI_Pack(buf, static_cast<int>(total), dt, c.staging.data(), room, &pos, comm)) return e;
    if (pos != c.packed) return MPI_ERR_INTERN;  // not the native representation: cannot be chunked
  }
  return MPI_SUCCESS;
}

}  // namespace

int local_alltoall(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount, MPI_Datatype rtype,
                   MPI_Comm comm, bool* taken) {
  *taken = false;
  if (!local_on() || sbuf == MPI_IN_PLACE || scount <= 0) return MPI_SUCCESS;
  int inter = 0, me = 0, n = 0;
  if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter) return MPI_SUCCESS;
  PMPI_Comm_rank(comm, &me);
  PMPI_Comm_size(comm, &n);
  MPI_Count size = 0;
  if (n < 2 || PMPI_Type_size_x(stype, &size) != MPI_SUCCESS || size * scount < runtime_min_bytes()) return MPI_SUCCESS;
  std::vector<int> peer(n, -1);
  for (int i = 0; i < n; ++i)
    if (i != me && (peer[i] = local_peer(comm, i)) < 0) return MPI_SUCCESS;
  // From here every rank takes this way: errors are reported, never a fall back to the MPI.
  *taken = true;
  const int tag = static_cast<int>(0x40000000u | (next_coll_seq(comm) & 0x3fffffffu));
  Chunks s, r;
  if (int e = describe(s, sbuf, scount, stype, n, true, comm)) return e;
  if (int e = describe(r, rbuf, rcount, rtype, n, false, comm)) return e;
  std::vector<ddt_request> reqs;
  int error = DDT_SUCCESS;
  {
    auto lock = runtime_lock();
    for (int k = 1; k < n && error == DDT_SUCCESS; ++k) {  // receives first, each from a different peer
      const int i = (me + n - k) % n;
      ddt_request q = DDT_REQUEST_NULL;
      error = ddt::shm::irecv_as(r.base + i * r.stride, r.count, r.type, peer[i], tag, true, &q);
      if (error == DDT_SUCCESS) reqs.push_back(q);
    }
    for (int k = 1; k < n && error == DDT_SUCCESS; ++k) {
      const int i = (me + k) % n;
      ddt_request q = DDT_REQUEST_NULL;
      error = ddt::shm::isend_as(s.base + i * s.stride, s.count, s.type, peer[i], tag, DDT_SEND_STANDARD, true, &q);
      if (error == DDT_SUCCESS) reqs.push_back(q);
    }
  }
  if (error == DDT_SUCCESS)  // my own chunk, while the peers copy theirs
    error = ddt_copy(s.base + me * s.stride, s.count, s.type, r.base + me * r.stride, r.count, r.type);
  // Every posted request runs to its end (a failed one, a dead peer say, ends with an error).
  size_t open = reqs.size();
  for (int round = 0; open > 0; ++round) {
    {
      auto lock = runtime_lock();
      for (ddt_request& q : reqs) {
        if (!q) continue;
        int done = 0;
        const int e = ddt_comm_test(&q, &done, nullptr);
        if (!done && e == DDT_SUCCESS) continue;
        if (e != DDT_SUCCESS && error == DDT_SUCCESS) error = e;
        q = DDT_REQUEST_NULL;
        --open;
      }
    }
    if (open == 0) break;
    if (round % 16 == 15) poke_mpi();  // a peer may still be in an MPI call that needs this process
    if (round > 64) sched_yield();
  }
  count_local(true);
  if (error != DDT_SUCCESS) return mpi_error(error);
  if (r.staging.ok()) {  // the MPI unpacks what it could not describe to ddtkit
    int pos = 0;
    return PMPI_Unpack(r.staging.data(), static_cast<int>(r.packed), &pos, rbuf, rcount * n, rtype, comm);
  }
  return MPI_SUCCESS;
}

}  // namespace ddtmpi
