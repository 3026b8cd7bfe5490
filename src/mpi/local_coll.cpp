// Blocking collectives among the processes of one node through ddtkit's runtime (issue 11):
// MPI_Alltoall, MPI_Allgather, MPI_Bcast, MPI_Gather and MPI_Scatter. Each chunk moves with one
// copy from the sender's layout into the receiver's (the runtime's rendezvous: the receivers of
// one root copy from it side by side), a rank's own chunk is copied type to type, and nothing is
// staged. The staged way packs every chunk, hands the MPI bytes it copies again, and unpacks
// them: FFT2D's transposes under Open MPI were 0.67x of Open MPI's own Alltoall that way.
//
// Which way a collective goes must be the same at every rank, or some wait in the runtime for
// ranks that wait in the MPI. So the decision uses only what every rank of the communicator
// knows alike: the runtime is on, the communicator is an intracommunicator whose every process
// is a runtime process of this node, the call is blocking (and for Alltoall not in place, which
// is given at all processes or none), and the packed bytes of a chunk, which the standard makes
// equal at every rank (each receive count and type match each send's), reach the collectives'
// threshold (DDTKIT_RUNTIME_COLL_MIN, the same at every rank; 1 MiB: local.cpp; Bcast's own,
// 256 KiB, DDTKIT_RUNTIME_BCAST_MIN), and, except for
// Bcast, that some rank's data is scattered, which the ranks agree on with one MPI_Allreduce
// (plan() says why; it is cheap beside a 1 MiB chunk, and only a collective past every other
// test pays it). The v- and w-forms, whose chunks differ
// from rank to rank, and the non-blocking forms stay with the MPI. Never the types: one rank's vector
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

// n chunks as the runtime moves them: chunk i is `count` elements of `type` at base + i * stride.
struct Chunks {
  TypeRef info;  // keeps a translation alive while the runtime reads or writes by it
  ddt_type type = DDT_TYPE_NULL;
  int64_t count = 0, stride = 0;
  char* base = nullptr;
  Buffer staging;      // a type the interposer cannot translate: its packed bytes
  int64_t packed = 0;  // and how many
  char* at(int i) const { return base + i * stride; }
};

// n chunks of count elements of dt at buf. A translated type or a predefined one is used as it
// is; any other is packed by the MPI (when `pack`: data to send) into staging, and unpacked by it
// afterwards (finish).
int describe(Chunks& c, const void* buf, int count, MPI_Datatype dt, int n, bool pack, MPI_Comm comm) {
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
  if (pack) {
    int pos = 0;
    if (int e = PMPI_Pack(buf, static_cast<int>(total), dt, c.staging.data(), room, &pos, comm)) return e;
    if (pos != c.packed) return MPI_ERR_INTERN;  // not the native representation: cannot be chunked
  }
  return MPI_SUCCESS;
}

// What the MPI could not describe to ddtkit, unpacked by it into the user's buffer.
int finish(const Chunks& c, void* buf, int count, MPI_Datatype dt, int n, MPI_Comm comm) {
  if (!c.staging.ok()) return MPI_SUCCESS;
  int pos = 0;
  return PMPI_Unpack(c.staging.data(), static_cast<int>(c.packed), &pos, buf, count * n, dt, comm);
}

// One collective on comm as the runtime moves it.
struct Plan {
  int me = 0, n = 0, tag = 0;
  std::vector<int> peer;  // runtime rank of each rank of comm (-1: me)
};

// Whether a type's data lies in more than one piece (or the interposer cannot tell): what the
// staged way pays for and the runtime does not.
bool scattered(MPI_Datatype dt) {
  const TypeInfo& ti = peek(dt);
  return ti.mode == TypeInfo::Pack || (ti.mode == TypeInfo::Pass && !predefined_type(dt));
}

// Whether this collective goes through the runtime (the same answer at every rank: see the top of
// the file), given a chunk's packed bytes; if so, p gets the runtime ranks and the collective's tag.
// With `agree`, only where some rank's data is scattered (mine: this rank's types that the call
// reads or writes): the ranks agree on it with one MPI_Allreduce of an int, a few microseconds
// against the at least 1 MiB a chunk moves. Alltoall, Allgather, Gather and Scatter agree: on
// contiguous data the MPIs' own were as fast or faster (2 MiB of MPI_DOUBLE: 0.91-0.97x through
// the runtime). Bcast does not: the runtime's was 2.0-2.7x faster there.
bool plan(MPI_Comm comm, int64_t chunk_bytes, bool agree, bool mine, Plan& p) {
  int inter = 0;
  if (!local_on() || chunk_bytes < (agree ? runtime_coll_min_bytes() : runtime_bcast_min_bytes())) return false;
  if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter) return false;
  PMPI_Comm_rank(comm, &p.me);
  PMPI_Comm_size(comm, &p.n);
  if (p.n < 2) return false;
  p.peer.assign(p.n, -1);
  for (int i = 0; i < p.n; ++i)
    if (i != p.me && (p.peer[i] = local_peer(comm, i)) < 0) return false;
  if (agree) {
    int any = 0, flag = mine ? 1 : 0;
    if (PMPI_Allreduce(&flag, &any, 1, MPI_INT, MPI_MAX, comm) != MPI_SUCCESS || !any) return false;
  }
  p.tag = static_cast<int>(0x40000000u | (next_coll_seq(comm) & 0x3fffffffu));
  return true;
}

// One message of a collective: count elements of type at buf, to or from rank `rank` of comm.
struct Move {
  int rank;
  char* buf;
  int64_t count;
  ddt_type type;
};

// Posts the receives, then the sends (each list rotated from my rank, so that not every rank
// starts with the same peer), copies my own chunk (self_from -> self_to, where given) meanwhile,
// and waits for every posted request, driving the MPI's progress now and then (a peer may still
// be in an MPI call that needs this process). Every posted request runs to its end; a failed one
// (a dead peer, a truncation) ends with its error, the first of which is returned.
int exchange(const Plan& p, const std::vector<Move>& recvs, const std::vector<Move>& sends, const Move* self_from,
             const Move* self_to) {
  std::vector<ddt_request> reqs;
  int error = DDT_SUCCESS;
  {
    auto lock = runtime_lock();
    for (const Move& m : recvs) {
      ddt_request q = DDT_REQUEST_NULL;
      if (error == DDT_SUCCESS) error = ddt::shm::irecv_as(m.buf, m.count, m.type, p.peer[m.rank], p.tag, true, &q);
      if (q) reqs.push_back(q);
    }
    for (const Move& m : sends) {
      ddt_request q = DDT_REQUEST_NULL;
      if (error == DDT_SUCCESS)
        error = ddt::shm::isend_as(m.buf, m.count, m.type, p.peer[m.rank], p.tag, DDT_SEND_STANDARD, true, &q);
      if (q) reqs.push_back(q);
    }
  }
  if (error == DDT_SUCCESS && self_from && self_to)
    error = ddt_copy(self_from->buf, self_from->count, self_from->type, self_to->buf, self_to->count, self_to->type);
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
    deliver_pending();  // a peer may wait for a copy that this process owes it
    if (round % 16 == 15) poke_mpi();
    if (round > 64) sched_yield();
  }
  if (!sends.empty()) count_local(true);
  if (!recvs.empty()) count_local(false);
  return mpi_error(error);
}

// Rank i's k-th peer from me: k = 1 .. n-1.
int around(const Plan& p, int k) { return (p.me + k) % p.n; }

int64_t chunk_bytes(int count, MPI_Datatype dt) {
  MPI_Count size = 0;
  return count > 0 && PMPI_Type_size_x(dt, &size) == MPI_SUCCESS ? size * count : 0;
}

}  // namespace

int local_alltoall(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount, MPI_Datatype rtype,
                   MPI_Comm comm, bool* taken) {
  Plan p;
  *taken = sbuf != MPI_IN_PLACE && plan(comm, chunk_bytes(scount, stype), true, scattered(stype) || scattered(rtype), p);
  if (!*taken) return MPI_SUCCESS;
  // From here every rank takes this way: errors are reported, never a fall back to the MPI.
  Chunks s, r;
  if (int e = describe(s, sbuf, scount, stype, p.n, true, comm)) return e;
  if (int e = describe(r, rbuf, rcount, rtype, p.n, false, comm)) return e;
  std::vector<Move> recvs, sends;
  for (int k = 1; k < p.n; ++k) {
    const int from = (p.me + p.n - k) % p.n, to = around(p, k);
    recvs.push_back({from, r.at(from), r.count, r.type});
    sends.push_back({to, s.at(to), s.count, s.type});
  }
  const Move mine{p.me, s.at(p.me), s.count, s.type}, into{p.me, r.at(p.me), r.count, r.type};
  if (int e = exchange(p, recvs, sends, &mine, &into)) return e;
  return finish(r, rbuf, rcount, rtype, p.n, comm);
}

// In place, my contribution is my chunk of rbuf: it is sent from there and not copied.
int local_allgather(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount, MPI_Datatype rtype,
                    MPI_Comm comm, bool* taken) {
  Plan p;
  const bool in_place = sbuf == MPI_IN_PLACE;
  *taken = plan(comm, in_place ? chunk_bytes(rcount, rtype) : chunk_bytes(scount, stype), true,
                scattered(rtype) || (!in_place && scattered(stype)), p);
  if (!*taken) return MPI_SUCCESS;
  Chunks s, r;
  if (int e = describe(r, rbuf, rcount, rtype, p.n, in_place, comm)) return e;
  if (!in_place)
    if (int e = describe(s, sbuf, scount, stype, 1, true, comm)) return e;
  const Move mine = in_place ? Move{p.me, r.at(p.me), r.count, r.type} : Move{p.me, s.at(0), s.count, s.type};
  const Move into{p.me, r.at(p.me), r.count, r.type};
  std::vector<Move> recvs, sends;
  for (int k = 1; k < p.n; ++k) {
    const int from = (p.me + p.n - k) % p.n, to = around(p, k);
    recvs.push_back({from, r.at(from), r.count, r.type});
    sends.push_back({to, mine.buf, mine.count, mine.type});
  }
  if (int e = exchange(p, recvs, sends, in_place ? nullptr : &mine, &into)) return e;
  return finish(r, rbuf, rcount, rtype, p.n, comm);
}

int local_bcast(void* buf, int count, MPI_Datatype dt, int root, MPI_Comm comm, bool* taken) {
  Plan p;
  *taken = plan(comm, chunk_bytes(count, dt), false, false, p) && root >= 0 && root < p.n;
  if (!*taken) return MPI_SUCCESS;
  Chunks c;
  if (int e = describe(c, buf, count, dt, 1, p.me == root, comm)) return e;
  std::vector<Move> recvs, sends;
  if (p.me == root)
    for (int k = 1; k < p.n; ++k) sends.push_back({around(p, k), c.at(0), c.count, c.type});
  else
    recvs.push_back({root, c.at(0), c.count, c.type});
  if (int e = exchange(p, recvs, sends, nullptr, nullptr)) return e;
  return p.me == root ? MPI_SUCCESS : finish(c, buf, count, dt, 1, comm);
}

// At the root, in place (sbuf MPI_IN_PLACE), its own chunk is in rbuf already.
int local_gather(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount, MPI_Datatype rtype, int root,
                 MPI_Comm comm, bool* taken) {
  Plan p;
  int me = 0;
  PMPI_Comm_rank(comm, &me);
  const bool in_place = me == root && sbuf == MPI_IN_PLACE;
  const bool mine = me == root ? scattered(rtype) || (!in_place && scattered(stype)) : scattered(stype);
  *taken = plan(comm, me == root ? chunk_bytes(rcount, rtype) : chunk_bytes(scount, stype), true, mine, p) &&
           root >= 0 && root < p.n;
  if (!*taken) return MPI_SUCCESS;
  Chunks s, r;
  if (!in_place)
    if (int e = describe(s, sbuf, scount, stype, 1, true, comm)) return e;
  std::vector<Move> recvs, sends;
  if (p.me == root) {
    if (int e = describe(r, rbuf, rcount, rtype, p.n, in_place, comm)) return e;
    for (int k = 1; k < p.n; ++k) {
      const int from = around(p, k);
      recvs.push_back({from, r.at(from), r.count, r.type});
    }
    const Move mine{root, in_place ? nullptr : s.at(0), s.count, s.type}, into{root, r.at(root), r.count, r.type};
    if (int e = exchange(p, recvs, sends, in_place ? nullptr : &mine, &into)) return e;
    return finish(r, rbuf, rcount, rtype, p.n, comm);
  }
  sends.push_back({root, s.at(0), s.count, s.type});
  return exchange(p, recvs, sends, nullptr, nullptr);
}

// At the root, in place (rbuf MPI_IN_PLACE), its own chunk stays where it is in sbuf.
int local_scatter(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount, MPI_Datatype rtype, int root,
                  MPI_Comm comm, bool* taken) {
  Plan p;
  int me = 0;
  PMPI_Comm_rank(comm, &me);
  const bool in_place = me == root && rbuf == MPI_IN_PLACE;
  const bool mine = me == root ? scattered(stype) || (!in_place && scattered(rtype)) : scattered(rtype);
  *taken = plan(comm, me == root ? chunk_bytes(scount, stype) : chunk_bytes(rcount, rtype), true, mine, p) &&
           root >= 0 && root < p.n;
  if (!*taken) return MPI_SUCCESS;
  Chunks s, r;
  if (!in_place)
    if (int e = describe(r, rbuf, rcount, rtype, 1, false, comm)) return e;
  std::vector<Move> recvs, sends;
  if (p.me == root) {
    if (int e = describe(s, sbuf, scount, stype, p.n, true, comm)) return e;
    for (int k = 1; k < p.n; ++k) {
      const int to = around(p, k);
      sends.push_back({to, s.at(to), s.count, s.type});
    }
    const Move mine{root, s.at(root), s.count, s.type}, into{root, in_place ? nullptr : r.at(0), r.count, r.type};
    if (int e = exchange(p, recvs, sends, &mine, in_place ? nullptr : &into)) return e;
  } else {
    recvs.push_back({root, r.at(0), r.count, r.type});
    if (int e = exchange(p, recvs, sends, nullptr, nullptr)) return e;
  }
  return in_place ? MPI_SUCCESS : finish(r, rbuf, rcount, rtype, 1, comm);
}

}  // namespace ddtmpi
