// The collectives applications use with derived types, blocking and non-blocking: Bcast,
// Gather(v), Scatter(v), Allgather(v), Alltoall(v,w), and their I-forms.
//
// Each is written once: a Coll (coll.hpp) holds both sides, the byte counts and displacements
// handed to the MPI (they must outlive a non-blocking call: the MPI may read them until it
// completes) and the ranges of the receive stream to unpack afterwards. The chunk of peer i in an element-unit
// collective is elements [i*count, (i+1)*count) of the buffer, i.e. packed bytes
// [i*count*size, ...): one staging buffer per side holds every chunk at that position, so v-forms
// keep their displacements (scaled from extents to packed sizes). MPI_IN_PLACE chunks that the
// MPI reads from the receive buffer (allgather: mine; alltoall: all) are packed there first, and
// chunks it does not write are not unpacked. A side whose type is Pass, or whose
// displacements are negative, goes to the MPI with the user's own arguments.
#include <algorithm>
#include <initializer_list>

#include "mpi/coll.hpp"
#include "mpi/local.hpp"
#include "mpi/shim.hpp"

using namespace ddtmpi;

namespace ddtmpi {

Group group(MPI_Comm comm) {
  int inter = 0, me = 0, n = 0;
  PMPI_Comm_test_inter(comm, &inter);
  PMPI_Comm_rank(comm, &me);
  if (inter) PMPI_Comm_remote_size(comm, &n);
  else PMPI_Comm_size(comm, &n);
  return {inter != 0, me, n};
}

Roles roles(const Group& g, int root, const void* leaf_buf) {
  const bool is_root = g.inter ? root == MPI_ROOT : g.me == root;
  return {is_root, g.inter ? root >= 0 : !(is_root && leaf_buf == MPI_IN_PLACE)};
}

int send_side(Side& x, bool sends, const void* buf, int64_t count, MPI_Datatype dt) {
  if (sends) return prepare_send(x, buf, count, dt);
  x.as_is(buf, count, dt);
  return MPI_SUCCESS;
}

int per(const Side& x, int count) { return x.converted() ? static_cast<int>(count * x.info->size) : count; }

int64_t span(int n, const int counts[], const int displs[]) {
  int64_t total = 0;
  for (int i = 0; i < n; ++i) {
    if (displs[i] < 0) return -1;
    if (counts[i] > 0) total = std::max<int64_t>(total, int64_t(displs[i]) + counts[i]);
  }
  return total;
}

void scale(const Side& x, int n, const int counts[], const int displs[], std::vector<int>& c, std::vector<int>& d) {
  for (int i = 0; i < n; ++i) {
    c.push_back(static_cast<int>(counts[i] * x.info->size));
    d.push_back(static_cast<int>(displs[i] * x.info->size));
  }
}

int pack_range(const Side& x, int64_t off, int64_t len) {
  int64_t n;
  return mpi_error(ddt_pack(x.user, x.count, x.info->t, off, static_cast<char*>(x.data) + off, len, &n));
}

namespace {

int unpack_ranges(const Coll& c) {
  for (auto [off, len] : c.ranges) {
    int64_t n;
    int rc = ddt_unpack(static_cast<const char*>(c.r.data) + off, len, const_cast<void*>(c.r.user), c.r.count,
                        c.r.info->t, off, &n);
    if (rc != DDT_SUCCESS) return mpi_error(rc);
  }
  return MPI_SUCCESS;
}

}  // namespace

int run(int rc, MPI_Comm comm, MPI_Request* req, CollRef c) {
  if (rc != MPI_SUCCESS) return rc;
  const bool unpack = c->r.staging.ok() && !c->ranges.empty();
  if (!req) return unpack ? raise(comm, unpack_ranges(*c)) : rc;
  const bool keep = c->s.staging.ok() || c->r.staging.ok() || !c->sc.empty() || !c->rc.empty();
  if (keep) {
    auto p = std::make_shared<Pending>();
    p->complete = [c, comm, unpack](const MPI_Status&) { return unpack ? raise(comm, unpack_ranges(*c)) : MPI_SUCCESS; };
    attach(*req, std::move(p));
  }
  return rc;
}

}  // namespace ddtmpi

namespace {

// Whether a collective goes to the MPI untouched: every type this rank's call reads or writes is
// one the MPI moves itself (Pass: predefined, or untranslatable) and, for a blocking call, a
// chunk's packed bytes are below the runtime's collective threshold, so that local_coll.cpp's
// plan() declines it at every rank alike (the standard makes a chunk's bytes equal at every rank).
// Why: the general way's set-up (a Group's three PMPI queries, a Coll on the heap, two Sides)
// cost 0.2 us of a 3 us MPI_Bcast of 32 KiB of MPI_DOUBLE under Open MPI 5.0.11 (0.93x native).
// min: the collective's runtime threshold (runtime_coll_min_bytes, or Bcast's own).
bool untouched(bool blocking, int64_t chunk, std::initializer_list<MPI_Datatype> used,
               int64_t min = runtime_coll_min_bytes()) {
  for (MPI_Datatype dt : used)
    if (peek(dt).mode != TypeInfo::Pass) return false;
  return !blocking || !local_on() || chunk < min;
}
// count elements of dt in packed bytes, as local_coll.cpp measures a chunk (Pass types have
// their MPI size in the translation too).
int64_t bytes(int count, MPI_Datatype dt) { return count > 0 ? count * peek(dt).size : 0; }

// Unpack ranges: every peer's chunk of `chunk` bytes at i*chunk, but skip (the in-place one).
void chunks(Coll& c, int peers, int64_t chunk, int skip) {
  if (!c.r.staging.ok()) return;
  for (int i = 0; i < peers; ++i)
    if (i != skip) c.ranges.push_back({i * chunk, chunk});
}

int bcast(void* buf, int count, MPI_Datatype dt, int root, MPI_Comm comm, MPI_Request* req) {
  if (untouched(!req, bytes(count, dt), {dt}, runtime_bcast_min_bytes()))
    return req ? PMPI_Ibcast(buf, count, dt, root, comm, req) : PMPI_Bcast(buf, count, dt, root, comm);
  if (!req) {  // every rank of one node: the runtime, where all of them go alike (local_coll.cpp)
    bool taken = false;
    const int e = local_bcast(buf, count, dt, root, comm, &taken);
    if (taken) return raise(comm, e);
  }
  Group g = group(comm);
  auto c = std::make_shared<Coll>();
  const bool sender = g.inter ? root == MPI_ROOT : g.me == root;
  const bool receiver = g.inter ? root >= 0 : g.me != root;
  Side& x = sender ? c->s : c->r;
  if (sender || receiver)
    if (int e = sender ? prepare_send(x, buf, count, dt) : prepare_recv(x, buf, count, dt)) return raise(comm, e);
  if (!sender && !receiver) x.as_is(buf, count, dt);
  if (receiver && x.staging.ok()) c->ranges.push_back({0, x.bytes});
  int rc = req ? PMPI_Ibcast(x.buf(), x.n(), x.type(), root, comm, req) : PMPI_Bcast(x.buf(), x.n(), x.type(), root, comm);
  return run(rc, comm, req, c);
}

int gather(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount, MPI_Datatype rtype, int root,
           MPI_Comm comm, MPI_Request* req) {
  if (!req) {  // every rank of one node: the runtime, where all of them go alike (local_coll.cpp)
    bool taken = false;
    const int e = local_gather(sbuf, scount, stype, rbuf, rcount, rtype, root, comm, &taken);
    if (taken) return raise(comm, e);
  }
  Group g = group(comm);
  auto c = std::make_shared<Coll>();
  const auto [is_root, sends] = roles(g, root, sbuf);
  if (int e = send_side(c->s, sends, sbuf, scount, stype)) return raise(comm, e);
  if (is_root) {
    if (int e = prepare_recv(c->r, rbuf, int64_t(g.peers) * rcount, rtype)) return raise(comm, e);
    if (c->r.converted()) chunks(*c, g.peers, rcount * c->r.info->size, sends ? -1 : g.me);
  } else {
    c->r.as_is(rbuf, rcount, rtype);
  }
  const Side &s = c->s, &r = c->r;
  int rc = req ? PMPI_Igather(s.buf(), s.n(), s.type(), r.buf(), per(r, rcount), r.type(), root, comm, req)
               : PMPI_Gather(s.buf(), s.n(), s.type(), r.buf(), per(r, rcount), r.type(), root, comm);
  return run(rc, comm, req, c);
}

int gatherv(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, const int rcounts[], const int displs[],
            MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Request* req) {
  Group g = group(comm);
  auto c = std::make_shared<Coll>();
  const auto [is_root, sends] = roles(g, root, sbuf);
  if (int e = send_side(c->s, sends, sbuf, scount, stype)) return raise(comm, e);
  c->r.as_is(rbuf, 0, rtype);
  if (is_root) {
    int64_t total = span(g.peers, rcounts, displs);
    if (total >= 0)
      if (int e = prepare_recv(c->r, rbuf, total, rtype)) return raise(comm, e);
    if (c->r.converted()) {
      scale(c->r, g.peers, rcounts, displs, c->rc, c->rd);
      if (c->r.staging.ok())
        for (int i = 0; i < g.peers; ++i)
          if (sends || i != g.me) c->ranges.push_back({c->rd[i], c->rc[i]});
    }
  }
  const Side &s = c->s, &r = c->r;
  const int* rcs = r.converted() ? c->rc.data() : rcounts;
  const int* rds = r.converted() ? c->rd.data() : displs;
  int rc = req ? PMPI_Igatherv(s.buf(), s.n(), s.type(), r.buf(), rcs, rds, r.type(), root, comm, req)
               : PMPI_Gatherv(s.buf(), s.n(), s.type(), r.buf(), rcs, rds, r.type(), root, comm);
  return run(rc, comm, req, c);
}

int scatter(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount, MPI_Datatype rtype, int root,
            MPI_Comm comm, MPI_Request* req) {
  if (!req) {  // every rank of one node: the runtime, where all of them go alike (local_coll.cpp)
    bool taken = false;
    const int e = local_scatter(sbuf, scount, stype, rbuf, rcount, rtype, root, comm, &taken);
    if (taken) return raise(comm, e);
  }
  Group g = group(comm);
  auto c = std::make_shared<Coll>();
  const auto [is_root, receives] = roles(g, root, rbuf);
  if (is_root) {
    if (int e = prepare_send(c->s, sbuf, int64_t(g.peers) * scount, stype)) return raise(comm, e);
  } else {
    c->s.as_is(sbuf, scount, stype);
  }
  if (receives) {
    if (int e = prepare_recv(c->r, rbuf, rcount, rtype)) return raise(comm, e);
    if (c->r.staging.ok()) c->ranges.push_back({0, c->r.bytes});
  } else {
    c->r.as_is(rbuf, rcount, rtype);
  }
  const Side &s = c->s, &r = c->r;
  int rc = req ? PMPI_Iscatter(s.buf(), per(s, scount), s.type(), r.buf(), r.n(), r.type(), root, comm, req)
               : PMPI_Scatter(s.buf(), per(s, scount), s.type(), r.buf(), r.n(), r.type(), root, comm);
  return run(rc, comm, req, c);
}

int scatterv(const void* sbuf, const int scounts[], const int displs[], MPI_Datatype stype, void* rbuf, int rcount,
             MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Request* req) {
  Group g = group(comm);
  auto c = std::make_shared<Coll>();
  const auto [is_root, receives] = roles(g, root, rbuf);
  c->s.as_is(sbuf, 0, stype);
  if (is_root) {
    int64_t total = span(g.peers, scounts, displs);
    if (total >= 0)
      if (int e = prepare_send(c->s, sbuf, total, stype, false)) return raise(comm, e);
    if (c->s.converted()) {
      scale(c->s, g.peers, scounts, displs, c->sc, c->sd);
      if (c->s.staging.ok())
        for (int i = 0; i < g.peers; ++i)
          if (int e = pack_range(c->s, c->sd[i], c->sc[i])) return raise(comm, e);
    }
  }
  if (receives) {
    if (int e = prepare_recv(c->r, rbuf, rcount, rtype)) return raise(comm, e);
    if (c->r.staging.ok()) c->ranges.push_back({0, c->r.bytes});
  } else {
    c->r.as_is(rbuf, rcount, rtype);
  }
  const Side &s = c->s, &r = c->r;
  const int* scs = s.converted() ? c->sc.data() : scounts;
  const int* sds = s.converted() ? c->sd.data() : displs;
  int rc = req ? PMPI_Iscatterv(s.buf(), scs, sds, s.type(), r.buf(), r.n(), r.type(), root, comm, req)
               : PMPI_Scatterv(s.buf(), scs, sds, s.type(), r.buf(), r.n(), r.type(), root, comm);
  return run(rc, comm, req, c);
}

int allgather(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount, MPI_Datatype rtype,
              MPI_Comm comm, MPI_Request* req) {
  // local_allgather never takes an in-place call
  if (sbuf == MPI_IN_PLACE ? untouched(!req, 0, {rtype}) : untouched(!req, bytes(scount, stype), {stype, rtype}))
    return req ? PMPI_Iallgather(sbuf, scount, stype, rbuf, rcount, rtype, comm, req)
               : PMPI_Allgather(sbuf, scount, stype, rbuf, rcount, rtype, comm);
  if (!req) {  // every rank of one node: the runtime, where all of them go alike (local_coll.cpp)
    bool taken = false;
    const int e = local_allgather(sbuf, scount, stype, rbuf, rcount, rtype, comm, &taken);
    if (taken) return raise(comm, e);
  }
  Group g = group(comm);
  auto c = std::make_shared<Coll>();
  const bool in_place = sbuf == MPI_IN_PLACE;
  if (int e = send_side(c->s, !in_place, sbuf, scount, stype)) return raise(comm, e);
  if (int e = prepare_recv(c->r, rbuf, int64_t(g.peers) * rcount, rtype)) return raise(comm, e);
  if (c->r.converted()) {
    const int64_t chunk = rcount * c->r.info->size;
    chunks(*c, g.peers, chunk, in_place ? g.me : -1);
    if (in_place && c->r.staging.ok())  // the MPI sends my chunk from the receive buffer
      if (int e = pack_range(c->r, g.me * chunk, chunk)) return raise(comm, e);
  }
  const Side &s = c->s, &r = c->r;
  int rc = req ? PMPI_Iallgather(s.buf(), s.n(), s.type(), r.buf(), per(r, rcount), r.type(), comm, req)
               : PMPI_Allgather(s.buf(), s.n(), s.type(), r.buf(), per(r, rcount), r.type(), comm);
  return run(rc, comm, req, c);
}

int allgatherv(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, const int rcounts[], const int displs[],
               MPI_Datatype rtype, MPI_Comm comm, MPI_Request* req) {
  Group g = group(comm);
  auto c = std::make_shared<Coll>();
  const bool in_place = sbuf == MPI_IN_PLACE;
  if (int e = send_side(c->s, !in_place, sbuf, scount, stype)) return raise(comm, e);
  c->r.as_is(rbuf, 0, rtype);
  int64_t total = span(g.peers, rcounts, displs);
  if (total >= 0)
    if (int e = prepare_recv(c->r, rbuf, total, rtype)) return raise(comm, e);
  if (c->r.converted()) {
    scale(c->r, g.peers, rcounts, displs, c->rc, c->rd);
    if (c->r.staging.ok())
      for (int i = 0; i < g.peers; ++i)
        if (!in_place || i != g.me) c->ranges.push_back({c->rd[i], c->rc[i]});
    if (in_place && c->r.staging.ok())
      if (int e = pack_range(c->r, c->rd[g.me], c->rc[g.me])) return raise(comm, e);
  }
  const Side &s = c->s, &r = c->r;
  const int* rcs = r.converted() ? c->rc.data() : rcounts;
  const int* rds = r.converted() ? c->rd.data() : displs;
  int rc = req ? PMPI_Iallgatherv(s.buf(), s.n(), s.type(), r.buf(), rcs, rds, r.type(), comm, req)
               : PMPI_Allgatherv(s.buf(), s.n(), s.type(), r.buf(), rcs, rds, r.type(), comm);
  return run(rc, comm, req, c);
}

// Both sides converted, within one group: my own chunk is copied type to type by ddtkit, in one
// pass and without staging, and the MPI moves the others as an alltoallv that skips me (FFT2D on
// 2 ranks stages half the data instead of all of it).
int alltoall_skip_self(CollRef c, const Group& g, int scount, int rcount, MPI_Comm comm, MPI_Request* req) {
  Side &s = c->s, &r = c->r;
  const int64_t sc = scount * s.info->size, rc = rcount * r.info->size;
  for (int i = 0; i < g.peers; ++i) {
    c->sc.push_back(i == g.me ? 0 : static_cast<int>(sc));
    c->sd.push_back(static_cast<int>(i * sc));
    c->rc.push_back(i == g.me ? 0 : static_cast<int>(rc));
    c->rd.push_back(static_cast<int>(i * rc));
    if (i == g.me) continue;
    if (s.staging.ok())
      if (int e = pack_range(s, i * sc, sc)) return raise(comm, e);
    if (r.staging.ok()) c->ranges.push_back({i * rc, rc});
  }
  const char* mine = static_cast<const char*>(s.user) + g.me * scount * s.info->extent;
  char* theirs = static_cast<char*>(const_cast<void*>(r.user)) + g.me * rcount * r.info->extent;
  if (int e = ddt_copy(mine, scount, s.info->t, theirs, rcount, r.info->t)) return raise(comm, mpi_error(e));
  int e = req ? PMPI_Ialltoallv(s.buf(), c->sc.data(), c->sd.data(), MPI_BYTE, r.buf(), c->rc.data(), c->rd.data(),
                                MPI_BYTE, comm, req)
              : PMPI_Alltoallv(s.buf(), c->sc.data(), c->sd.data(), MPI_BYTE, r.buf(), c->rc.data(), c->rd.data(),
                               MPI_BYTE, comm);
  return run(e, comm, req, c);
}

// In place, the data to send is in the receive buffer: packed into the staging first.
int alltoall(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount, MPI_Datatype rtype,
             MPI_Comm comm, MPI_Request* req) {
  if (sbuf == MPI_IN_PLACE ? untouched(!req, bytes(rcount, rtype), {rtype})
                           : untouched(!req, bytes(scount, stype), {stype, rtype}))
    return req ? PMPI_Ialltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm, req)
               : PMPI_Alltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm);
  if (!req) {  // every rank of one node: the runtime, where all of them go alike (local_coll.cpp)
    bool taken = false;
    const int e = local_alltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm, &taken);
    if (taken) return raise(comm, e);
  }
  Group g = group(comm);
  auto c = std::make_shared<Coll>();
  const bool in_place = sbuf == MPI_IN_PLACE;
  if (in_place) c->s.as_is(sbuf, scount, stype);
  else if (int e = prepare_send(c->s, sbuf, int64_t(g.peers) * scount, stype, false)) return raise(comm, e);
  if (int e = prepare_recv(c->r, rbuf, int64_t(g.peers) * rcount, rtype)) return raise(comm, e);
  if (!in_place && !g.inter && c->s.converted() && c->r.converted() && scount * c->s.info->size == rcount * c->r.info->size)
    return alltoall_skip_self(c, g, scount, rcount, comm, req);
  if (int e = repack(c->s)) return raise(comm, e);  // the whole send side, as the MPI reads it
  if (c->r.converted()) {
    if (in_place && c->r.staging.ok())
      if (int e = pack_range(c->r, 0, c->r.bytes)) return raise(comm, e);
    chunks(*c, 1, c->r.bytes, -1);
  }
  const Side &s = c->s, &r = c->r;
  int rc = req ? PMPI_Ialltoall(s.buf(), per(s, scount), s.type(), r.buf(), per(r, rcount), r.type(), comm, req)
               : PMPI_Alltoall(s.buf(), per(s, scount), s.type(), r.buf(), per(r, rcount), r.type(), comm);
  return run(rc, comm, req, c);
}

int alltoallv(const void* sbuf, const int scounts[], const int sdispls[], MPI_Datatype stype, void* rbuf,
              const int rcounts[], const int rdispls[], MPI_Datatype rtype, MPI_Comm comm, MPI_Request* req) {
  Group g = group(comm);
  auto c = std::make_shared<Coll>();
  const bool in_place = sbuf == MPI_IN_PLACE;
  c->s.as_is(sbuf, 0, stype);
  c->r.as_is(rbuf, 0, rtype);
  if (!in_place) {
    int64_t total = span(g.peers, scounts, sdispls);
    if (total >= 0)
      if (int e = prepare_send(c->s, sbuf, total, stype, false)) return raise(comm, e);
    if (c->s.converted()) {
      scale(c->s, g.peers, scounts, sdispls, c->sc, c->sd);
      if (c->s.staging.ok())
        for (int i = 0; i < g.peers; ++i)
          if (int e = pack_range(c->s, c->sd[i], c->sc[i])) return raise(comm, e);
    }
  }
  int64_t total = span(g.peers, rcounts, rdispls);
  if (total >= 0)
    if (int e = prepare_recv(c->r, rbuf, total, rtype)) return raise(comm, e);
  if (c->r.converted()) {
    scale(c->r, g.peers, rcounts, rdispls, c->rc, c->rd);
    if (c->r.staging.ok())
      for (int i = 0; i < g.peers; ++i) {
        if (in_place)
          if (int e = pack_range(c->r, c->rd[i], c->rc[i])) return raise(comm, e);
        c->ranges.push_back({c->rd[i], c->rc[i]});
      }
  }
  const Side &s = c->s, &r = c->r;
  const int* scs = s.converted() ? c->sc.data() : scounts;
  const int* sds = s.converted() ? c->sd.data() : sdispls;
  const int* rcs = r.converted() ? c->rc.data() : rcounts;
  const int* rds = r.converted() ? c->rd.data() : rdispls;
  int rc = req ? PMPI_Ialltoallv(s.buf(), scs, sds, s.type(), r.buf(), rcs, rds, r.type(), comm, req)
               : PMPI_Alltoallv(s.buf(), scs, sds, s.type(), r.buf(), rcs, rds, r.type(), comm);
  return run(rc, comm, req, c);
}

// Alltoallw: one type per peer and byte displacements (coll.hpp's WSide). Other cases (a
// predefined or untranslatable type among the peers, MPI_IN_PLACE) go to the MPI unchanged.
int alltoallw(const void* sbuf, const int scounts[], const int sdispls[], const MPI_Datatype stypes[], void* rbuf,
              const int rcounts[], const int rdispls[], const MPI_Datatype rtypes[], MPI_Comm comm, MPI_Request* req) {
  Group g = group(comm);
  auto s = std::make_shared<WSide<int>>(), r = std::make_shared<WSide<int>>();
  const bool sconv = sbuf != MPI_IN_PLACE && w_convert(*s, g.peers, scounts, stypes);
  const bool rconv = sbuf != MPI_IN_PLACE && w_convert(*r, g.peers, rcounts, rtypes);
  if (sconv)
    if (int e = w_pack(*s, sbuf, scounts, sdispls)) return raise(comm, e);
  WUnpack<int> unpack{r, rbuf, std::vector<int>(rcounts, rcounts + g.peers),
                      std::vector<int>(rdispls, rdispls + g.peers), {}};
  const void* sb = sconv ? s->staging.data() : sbuf;
  void* rb = rconv ? r->staging.data() : rbuf;
  const int* scs = sconv ? s->counts.data() : scounts;
  const int* sds = sconv ? s->displs.data() : sdispls;
  const MPI_Datatype* sts = sconv ? s->types.data() : stypes;
  const int* rcs = rconv ? r->counts.data() : rcounts;
  const int* rds = rconv ? r->displs.data() : rdispls;
  const MPI_Datatype* rts = rconv ? r->types.data() : rtypes;
  int rc = req ? PMPI_Ialltoallw(sb, scs, sds, sts, rb, rcs, rds, rts, comm, req)
               : PMPI_Alltoallw(sb, scs, sds, sts, rb, rcs, rds, rts, comm);
  return w_run(rc, comm, req, s, sconv, rconv, std::move(unpack));
}

}  // namespace

extern "C" {

int MPI_Bcast(void* buf, int count, MPI_Datatype dt, int root, MPI_Comm comm) {
  return disabled() ? PMPI_Bcast(buf, count, dt, root, comm) : bcast(buf, count, dt, root, comm, nullptr);
}
int MPI_Ibcast(void* buf, int count, MPI_Datatype dt, int root, MPI_Comm comm, MPI_Request* req) {
  return disabled() ? PMPI_Ibcast(buf, count, dt, root, comm, req) : bcast(buf, count, dt, root, comm, req);
}
int MPI_Gather(const void* sb, int sc, MPI_Datatype st, void* rb, int rc, MPI_Datatype rt, int root, MPI_Comm comm) {
  return disabled() ? PMPI_Gather(sb, sc, st, rb, rc, rt, root, comm) : gather(sb, sc, st, rb, rc, rt, root, comm, nullptr);
}
int MPI_Igather(const void* sb, int sc, MPI_Datatype st, void* rb, int rc, MPI_Datatype rt, int root, MPI_Comm comm,
                MPI_Request* req) {
  return disabled() ? PMPI_Igather(sb, sc, st, rb, rc, rt, root, comm, req) : gather(sb, sc, st, rb, rc, rt, root, comm, req);
}
int MPI_Gatherv(const void* sb, int sc, MPI_Datatype st, void* rb, const int rcs[], const int ds[], MPI_Datatype rt,
                int root, MPI_Comm comm) {
  return disabled() ? PMPI_Gatherv(sb, sc, st, rb, rcs, ds, rt, root, comm)
                    : gatherv(sb, sc, st, rb, rcs, ds, rt, root, comm, nullptr);
}
int MPI_Igatherv(const void* sb, int sc, MPI_Datatype st, void* rb, const int rcs[], const int ds[], MPI_Datatype rt,
                 int root, MPI_Comm comm, MPI_Request* req) {
  return disabled() ? PMPI_Igatherv(sb, sc, st, rb, rcs, ds, rt, root, comm, req)
                    : gatherv(sb, sc, st, rb, rcs, ds, rt, root, comm, req);
}
int MPI_Scatter(const void* sb, int sc, MPI_Datatype st, void* rb, int rc, MPI_Datatype rt, int root, MPI_Comm comm) {
  return disabled() ? PMPI_Scatter(sb, sc, st, rb, rc, rt, root, comm) : scatter(sb, sc, st, rb, rc, rt, root, comm, nullptr);
}
int MPI_Iscatter(const void* sb, int sc, MPI_Datatype st, void* rb, int rc, MPI_Datatype rt, int root, MPI_Comm comm,
                 MPI_Request* req) {
  return disabled() ? PMPI_Iscatter(sb, sc, st, rb, rc, rt, root, comm, req)
                    : scatter(sb, sc, st, rb, rc, rt, root, comm, req);
}
int MPI_Scatterv(const void* sb, const int scs[], const int ds[], MPI_Datatype st, void* rb, int rc, MPI_Datatype rt,
                 int root, MPI_Comm comm) {
  return disabled() ? PMPI_Scatterv(sb, scs, ds, st, rb, rc, rt, root, comm)
                    : scatterv(sb, scs, ds, st, rb, rc, rt, root, comm, nullptr);
}
int MPI_Iscatterv(const void* sb, const int scs[], const int ds[], MPI_Datatype st, void* rb, int rc, MPI_Datatype rt,
                  int root, MPI_Comm comm, MPI_Request* req) {
  return disabled() ? PMPI_Iscatterv(sb, scs, ds, st, rb, rc, rt, root, comm, req)
                    : scatterv(sb, scs, ds, st, rb, rc, rt, root, comm, req);
}
int MPI_Allgather(const void* sb, int sc, MPI_Datatype st, void* rb, int rc, MPI_Datatype rt, MPI_Comm comm) {
  return disabled() ? PMPI_Allgather(sb, sc, st, rb, rc, rt, comm) : allgather(sb, sc, st, rb, rc, rt, comm, nullptr);
}
int MPI_Iallgather(const void* sb, int sc, MPI_Datatype st, void* rb, int rc, MPI_Datatype rt, MPI_Comm comm,
                   MPI_Request* req) {
  return disabled() ? PMPI_Iallgather(sb, sc, st, rb, rc, rt, comm, req) : allgather(sb, sc, st, rb, rc, rt, comm, req);
}
int MPI_Allgatherv(const void* sb, int sc, MPI_Datatype st, void* rb, const int rcs[], const int ds[], MPI_Datatype rt,
                   MPI_Comm comm) {
  return disabled() ? PMPI_Allgatherv(sb, sc, st, rb, rcs, ds, rt, comm)
                    : allgatherv(sb, sc, st, rb, rcs, ds, rt, comm, nullptr);
}
int MPI_Iallgatherv(const void* sb, int sc, MPI_Datatype st, void* rb, const int rcs[], const int ds[],
                    MPI_Datatype rt, MPI_Comm comm, MPI_Request* req) {
  return disabled() ? PMPI_Iallgatherv(sb, sc, st, rb, rcs, ds, rt, comm, req)
                    : allgatherv(sb, sc, st, rb, rcs, ds, rt, comm, req);
}
int MPI_Alltoall(const void* sb, int sc, MPI_Datatype st, void* rb, int rc, MPI_Datatype rt, MPI_Comm comm) {
  return disabled() ? PMPI_Alltoall(sb, sc, st, rb, rc, rt, comm) : alltoall(sb, sc, st, rb, rc, rt, comm, nullptr);
}
int MPI_Ialltoall(const void* sb, int sc, MPI_Datatype st, void* rb, int rc, MPI_Datatype rt, MPI_Comm comm,
                  MPI_Request* req) {
  return disabled() ? PMPI_Ialltoall(sb, sc, st, rb, rc, rt, comm, req) : alltoall(sb, sc, st, rb, rc, rt, comm, req);
}
int MPI_Alltoallv(const void* sb, const int scs[], const int sds[], MPI_Datatype st, void* rb, const int rcs[],
                  const int rds[], MPI_Datatype rt, MPI_Comm comm) {
  return disabled() ? PMPI_Alltoallv(sb, scs, sds, st, rb, rcs, rds, rt, comm)
                    : alltoallv(sb, scs, sds, st, rb, rcs, rds, rt, comm, nullptr);
}
int MPI_Ialltoallv(const void* sb, const int scs[], const int sds[], MPI_Datatype st, void* rb, const int rcs[],
                   const int rds[], MPI_Datatype rt, MPI_Comm comm, MPI_Request* req) {
  return disabled() ? PMPI_Ialltoallv(sb, scs, sds, st, rb, rcs, rds, rt, comm, req)
                    : alltoallv(sb, scs, sds, st, rb, rcs, rds, rt, comm, req);
}
int MPI_Alltoallw(const void* sb, const int scs[], const int sds[], const MPI_Datatype sts[], void* rb,
                  const int rcs[], const int rds[], const MPI_Datatype rts[], MPI_Comm comm) {
  return disabled() ? PMPI_Alltoallw(sb, scs, sds, sts, rb, rcs, rds, rts, comm)
                    : alltoallw(sb, scs, sds, sts, rb, rcs, rds, rts, comm, nullptr);
}
int MPI_Ialltoallw(const void* sb, const int scs[], const int sds[], const MPI_Datatype sts[], void* rb,
                   const int rcs[], const int rds[], const MPI_Datatype rts[], MPI_Comm comm, MPI_Request* req) {
  return disabled() ? PMPI_Ialltoallw(sb, scs, sds, sts, rb, rcs, rds, rts, comm, req)
                    : alltoallw(sb, scs, sds, sts, rb, rcs, rds, rts, comm, req);
}

}  // extern "C"
