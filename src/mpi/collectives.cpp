// The collectives applications use with derived types: Bcast, Gather(v), Scatter(v),
// Allgather(v), Alltoall(v,w), blocking, non-blocking (I-forms) and persistent (MPI 4's _init
// forms: coll.hpp's How; every packing of send data runs at each MPI_Start instead of now).
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

int pack_side(Coll& c, Side& x) {
  Side* p = &x;
  return c.now_or_at_start([p] { return repack(*p); });
}

int send_side(Coll& c, Side& x, bool sends, const void* buf, int64_t count, MPI_Datatype dt) {
  if (!sends) {
    x.as_is(buf, count, dt);
    return MPI_SUCCESS;
  }
  if (int e = prepare_send(x, buf, count, dt, false)) return e;
  return pack_side(c, x);
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

int pack_range(Coll& c, Side& x, int64_t off, int64_t len) {
  const Side* p = &x;
  return c.now_or_at_start([p, off, len] {
    int64_t n;
    return mpi_error(ddt_pack(p->user, p->count, p->info->t, off, static_cast<char*>(p->data) + off, len, &n));
  });
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

void attach_persistent(MPI_Request req, std::function<int()> start, std::function<int()> complete) {
  auto p = std::make_shared<Pending>();
  p->persistent = true;
  p->active = false;
  p->start = std::move(start);
  p->complete = [complete = std::move(complete)](MPI_Status&) { return complete(); };
  attach(req, std::move(p));
}

int run(int rc, MPI_Comm comm, const How& h, CollRef c) {
  if (rc != MPI_SUCCESS) return rc;
  const bool unpack = c->r.staging.ok() && !c->ranges.empty();
  if (!h.req) return unpack ? raise(comm, unpack_ranges(*c)) : rc;
  const bool keep = c->s.staging.ok() || c->r.staging.ok() || !c->sc.empty() || !c->rc.empty() || !c->starts.empty();
  if (keep && h.persistent) {
    attach_persistent(
        *h.req,
        [c, comm] {
          for (const auto& f : c->starts)
            if (int e = f()) return raise(comm, e);
          return MPI_SUCCESS;
        },
        [c, comm, unpack] { return unpack ? raise(comm, unpack_ranges(*c)) : MPI_SUCCESS; });
  } else if (keep) {
    auto p = std::make_shared<Pending>();
    p->complete = [c, comm, unpack](const MPI_Status&) { return unpack ? raise(comm, unpack_ranges(*c)) : MPI_SUCCESS; };
    attach(*h.req, std::move(p));
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
  return all_pass(used) && (!blocking || !local_on() || chunk < min);
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

int bcast(void* buf, int count, MPI_Datatype dt, int root, MPI_Comm comm, const How& h) {
  if (untouched(!h.req, bytes(count, dt), {dt}, runtime_bcast_min_bytes()))
    return mpi_call<PMPI_Bcast, PMPI_Ibcast, PMPI_Bcast_init>(h, buf, count, dt, root, comm);
  if (!h.req) {  // every rank of one node: the runtime, where all of them go alike (local_coll.cpp)
    bool taken = false;
    const int e = local_bcast(buf, count, dt, root, comm, &taken);
    if (taken) return raise(comm, e);
  }
  Group g = group(comm);
  auto c = make_coll(h);
  const bool sender = g.inter ? root == MPI_ROOT : g.me == root;
  const bool receiver = g.inter ? root >= 0 : g.me != root;
  Side& x = sender ? c->s : c->r;
  if (sender) {
    if (int e = send_side(*c, x, true, buf, count, dt)) return raise(comm, e);
  } else if (receiver) {
    if (int e = prepare_recv(x, buf, count, dt)) return raise(comm, e);
  } else {
    x.as_is(buf, count, dt);
  }
  if (receiver && x.staging.ok()) c->ranges.push_back({0, x.bytes});
  int rc = mpi_call<PMPI_Bcast, PMPI_Ibcast, PMPI_Bcast_init>(h, x.buf(), x.n(), x.type(), root, comm);
  return run(rc, comm, h, c);
}

int gather(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount, MPI_Datatype rtype, int root,
           MPI_Comm comm, const How& h) {
  if (!h.req) {  // every rank of one node: the runtime, where all of them go alike (local_coll.cpp)
    bool taken = false;
    const int e = local_gather(sbuf, scount, stype, rbuf, rcount, rtype, root, comm, &taken);
    if (taken) return raise(comm, e);
  }
  Group g = group(comm);
  auto c = make_coll(h);
  const auto [is_root, sends] = roles(g, root, sbuf);
  if (int e = send_side(*c, c->s, sends, sbuf, scount, stype)) return raise(comm, e);
  if (is_root) {
    if (int e = prepare_recv(c->r, rbuf, int64_t(g.peers) * rcount, rtype)) return raise(comm, e);
    if (c->r.converted()) chunks(*c, g.peers, rcount * c->r.info->size, sends ? -1 : g.me);
  } else {
    c->r.as_is(rbuf, rcount, rtype);
  }
  const Side &s = c->s, &r = c->r;
  int rc = mpi_call<PMPI_Gather, PMPI_Igather, PMPI_Gather_init>(h, s.buf(), s.n(), s.type(), r.buf(), per(r, rcount),
                                                                  r.type(), root, comm);
  return run(rc, comm, h, c);
}

int gatherv(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, const int rcounts[], const int displs[],
            MPI_Datatype rtype, int root, MPI_Comm comm, const How& h) {
  Group g = group(comm);
  auto c = make_coll(h);
  const auto [is_root, sends] = roles(g, root, sbuf);
  if (int e = send_side(*c, c->s, sends, sbuf, scount, stype)) return raise(comm, e);
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
  int rc = mpi_call<PMPI_Gatherv, PMPI_Igatherv, PMPI_Gatherv_init>(h, s.buf(), s.n(), s.type(), r.buf(), rcs, rds,
                                                                     r.type(), root, comm);
  return run(rc, comm, h, c);
}

int scatter(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount, MPI_Datatype rtype, int root,
            MPI_Comm comm, const How& h) {
  if (!h.req) {  // every rank of one node: the runtime, where all of them go alike (local_coll.cpp)
    bool taken = false;
    const int e = local_scatter(sbuf, scount, stype, rbuf, rcount, rtype, root, comm, &taken);
    if (taken) return raise(comm, e);
  }
  Group g = group(comm);
  auto c = make_coll(h);
  const auto [is_root, receives] = roles(g, root, rbuf);
  if (int e = send_side(*c, c->s, is_root, sbuf, is_root ? int64_t(g.peers) * scount : scount, stype))
    return raise(comm, e);
  if (receives) {
    if (int e = prepare_recv(c->r, rbuf, rcount, rtype)) return raise(comm, e);
    if (c->r.staging.ok()) c->ranges.push_back({0, c->r.bytes});
  } else {
    c->r.as_is(rbuf, rcount, rtype);
  }
  const Side &s = c->s, &r = c->r;
  int rc = mpi_call<PMPI_Scatter, PMPI_Iscatter, PMPI_Scatter_init>(h, s.buf(), per(s, scount), s.type(), r.buf(),
                                                                     r.n(), r.type(), root, comm);
  return run(rc, comm, h, c);
}

int scatterv(const void* sbuf, const int scounts[], const int displs[], MPI_Datatype stype, void* rbuf, int rcount,
             MPI_Datatype rtype, int root, MPI_Comm comm, const How& h) {
  Group g = group(comm);
  auto c = make_coll(h);
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
          if (int e = pack_range(*c, c->s, c->sd[i], c->sc[i])) return raise(comm, e);
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
  int rc = mpi_call<PMPI_Scatterv, PMPI_Iscatterv, PMPI_Scatterv_init>(h, s.buf(), scs, sds, s.type(), r.buf(), r.n(),
                                                                        r.type(), root, comm);
  return run(rc, comm, h, c);
}

int allgather(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount, MPI_Datatype rtype,
              MPI_Comm comm, const How& h) {
  // local_allgather never takes an in-place call
  if (sbuf == MPI_IN_PLACE ? untouched(!h.req, 0, {rtype}) : untouched(!h.req, bytes(scount, stype), {stype, rtype}))
    return mpi_call<PMPI_Allgather, PMPI_Iallgather, PMPI_Allgather_init>(h, sbuf, scount, stype, rbuf, rcount, rtype,
                                                                           comm);
  if (!h.req) {  // every rank of one node: the runtime, where all of them go alike (local_coll.cpp)
    bool taken = false;
    const int e = local_allgather(sbuf, scount, stype, rbuf, rcount, rtype, comm, &taken);
    if (taken) return raise(comm, e);
  }
  Group g = group(comm);
  auto c = make_coll(h);
  const bool in_place = sbuf == MPI_IN_PLACE;
  if (int e = send_side(*c, c->s, !in_place, sbuf, scount, stype)) return raise(comm, e);
  if (int e = prepare_recv(c->r, rbuf, int64_t(g.peers) * rcount, rtype)) return raise(comm, e);
  if (c->r.converted()) {
    const int64_t chunk = rcount * c->r.info->size;
    chunks(*c, g.peers, chunk, in_place ? g.me : -1);
    if (in_place && c->r.staging.ok())  // the MPI sends my chunk from the receive buffer
      if (int e = pack_range(*c, c->r, g.me * chunk, chunk)) return raise(comm, e);
  }
  const Side &s = c->s, &r = c->r;
  int rc = mpi_call<PMPI_Allgather, PMPI_Iallgather, PMPI_Allgather_init>(h, s.buf(), s.n(), s.type(), r.buf(),
                                                                           per(r, rcount), r.type(), comm);
  return run(rc, comm, h, c);
}

int allgatherv(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, const int rcounts[], const int displs[],
               MPI_Datatype rtype, MPI_Comm comm, const How& h) {
  Group g = group(comm);
  auto c = make_coll(h);
  const bool in_place = sbuf == MPI_IN_PLACE;
  if (int e = send_side(*c, c->s, !in_place, sbuf, scount, stype)) return raise(comm, e);
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
      if (int e = pack_range(*c, c->r, c->rd[g.me], c->rc[g.me])) return raise(comm, e);
  }
  const Side &s = c->s, &r = c->r;
  const int* rcs = r.converted() ? c->rc.data() : rcounts;
  const int* rds = r.converted() ? c->rd.data() : displs;
  int rc = mpi_call<PMPI_Allgatherv, PMPI_Iallgatherv, PMPI_Allgatherv_init>(h, s.buf(), s.n(), s.type(), r.buf(),
                                                                              rcs, rds, r.type(), comm);
  return run(rc, comm, h, c);
}

// Both sides converted, within one group: my own chunk is copied type to type by ddtkit, in one
// pass and without staging, and the MPI moves the others as an alltoallv that skips me (FFT2D on
// 2 ranks stages half the data instead of all of it).
int alltoall_skip_self(CollRef c, const Group& g, int scount, int rcount, MPI_Comm comm, const How& h) {
  Side &s = c->s, &r = c->r;
  const int64_t sc = scount * s.info->size, rc = rcount * r.info->size;
  for (int i = 0; i < g.peers; ++i) {
    c->sc.push_back(i == g.me ? 0 : static_cast<int>(sc));
    c->sd.push_back(static_cast<int>(i * sc));
    c->rc.push_back(i == g.me ? 0 : static_cast<int>(rc));
    c->rd.push_back(static_cast<int>(i * rc));
    if (i == g.me) continue;
    if (s.staging.ok())
      if (int e = pack_range(*c, s, i * sc, sc)) return raise(comm, e);
    if (r.staging.ok()) c->ranges.push_back({i * rc, rc});
  }
  const char* mine = static_cast<const char*>(s.user) + g.me * scount * s.info->extent;
  char* theirs = static_cast<char*>(const_cast<void*>(r.user)) + g.me * rcount * r.info->extent;
  const ddt_type st = s.info->t, rt = r.info->t;
  if (int e = c->now_or_at_start([=] { return mpi_error(ddt_copy(mine, scount, st, theirs, rcount, rt)); }))
    return raise(comm, e);
  int e = mpi_call<PMPI_Alltoallv, PMPI_Ialltoallv, PMPI_Alltoallv_init>(
      h, s.buf(), c->sc.data(), c->sd.data(), MPI_BYTE, r.buf(), c->rc.data(), c->rd.data(), MPI_BYTE, comm);
  return run(e, comm, h, c);
}

// In place, the data to send is in the receive buffer: packed into the staging first.
int alltoall(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount, MPI_Datatype rtype,
             MPI_Comm comm, const How& h) {
  if (sbuf == MPI_IN_PLACE ? untouched(!h.req, bytes(rcount, rtype), {rtype})
                           : untouched(!h.req, bytes(scount, stype), {stype, rtype}))
    return mpi_call<PMPI_Alltoall, PMPI_Ialltoall, PMPI_Alltoall_init>(h, sbuf, scount, stype, rbuf, rcount, rtype,
                                                                        comm);
  if (!h.req) {  // every rank of one node: the runtime, where all of them go alike (local_coll.cpp)
    bool taken = false;
    const int e = local_alltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm, &taken);
    if (taken) return raise(comm, e);
  }
  Group g = group(comm);
  auto c = make_coll(h);
  const bool in_place = sbuf == MPI_IN_PLACE;
  if (in_place) c->s.as_is(sbuf, scount, stype);
  else if (int e = prepare_send(c->s, sbuf, int64_t(g.peers) * scount, stype, false)) return raise(comm, e);
  if (int e = prepare_recv(c->r, rbuf, int64_t(g.peers) * rcount, rtype)) return raise(comm, e);
  if (!in_place && !g.inter && c->s.converted() && c->r.converted() && scount * c->s.info->size == rcount * c->r.info->size)
    return alltoall_skip_self(c, g, scount, rcount, comm, h);
  if (!in_place)
    if (int e = pack_side(*c, c->s)) return raise(comm, e);  // the whole send side, as the MPI reads it
  if (c->r.converted()) {
    if (in_place && c->r.staging.ok())
      if (int e = pack_range(*c, c->r, 0, c->r.bytes)) return raise(comm, e);
    chunks(*c, 1, c->r.bytes, -1);
  }
  const Side &s = c->s, &r = c->r;
  int rc = mpi_call<PMPI_Alltoall, PMPI_Ialltoall, PMPI_Alltoall_init>(h, s.buf(), per(s, scount), s.type(), r.buf(),
                                                                        per(r, rcount), r.type(), comm);
  return run(rc, comm, h, c);
}

int alltoallv(const void* sbuf, const int scounts[], const int sdispls[], MPI_Datatype stype, void* rbuf,
              const int rcounts[], const int rdispls[], MPI_Datatype rtype, MPI_Comm comm, const How& h) {
  Group g = group(comm);
  auto c = make_coll(h);
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
          if (int e = pack_range(*c, c->s, c->sd[i], c->sc[i])) return raise(comm, e);
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
          if (int e = pack_range(*c, c->r, c->rd[i], c->rc[i])) return raise(comm, e);
        c->ranges.push_back({c->rd[i], c->rc[i]});
      }
  }
  const Side &s = c->s, &r = c->r;
  const int* scs = s.converted() ? c->sc.data() : scounts;
  const int* sds = s.converted() ? c->sd.data() : sdispls;
  const int* rcs = r.converted() ? c->rc.data() : rcounts;
  const int* rds = r.converted() ? c->rd.data() : rdispls;
  int rc = mpi_call<PMPI_Alltoallv, PMPI_Ialltoallv, PMPI_Alltoallv_init>(h, s.buf(), scs, sds, s.type(), r.buf(), rcs,
                                                                           rds, r.type(), comm);
  return run(rc, comm, h, c);
}

// Alltoallw: one type per peer and byte displacements (coll.hpp's WSide). Other cases (a
// predefined or untranslatable type among the peers, MPI_IN_PLACE) go to the MPI unchanged.
int alltoallw(const void* sbuf, const int scounts[], const int sdispls[], const MPI_Datatype stypes[], void* rbuf,
              const int rcounts[], const int rdispls[], const MPI_Datatype rtypes[], MPI_Comm comm, const How& h) {
  Group g = group(comm);
  auto s = std::make_shared<WSide<int>>(), r = std::make_shared<WSide<int>>();
  const bool sconv = sbuf != MPI_IN_PLACE && w_convert(*s, g.peers, scounts, stypes);
  const bool rconv = sbuf != MPI_IN_PLACE && w_convert(*r, g.peers, rcounts, rtypes);
  WPack<int> pack{s, sbuf, std::vector<int>(scounts, scounts + (sconv ? g.peers : 0)),
                  std::vector<int>(sdispls, sdispls + (sconv ? g.peers : 0))};
  if (sconv && !h.persistent)
    if (int e = pack()) return raise(comm, e);
  WUnpack<int> unpack{r, rbuf, std::vector<int>(rcounts, rcounts + (rconv ? g.peers : 0)),
                      std::vector<int>(rdispls, rdispls + (rconv ? g.peers : 0)), {}};
  const void* sb = sconv ? s->staging.data() : sbuf;
  void* rb = rconv ? r->staging.data() : rbuf;
  const int* scs = sconv ? s->counts.data() : scounts;
  const int* sds = sconv ? s->displs.data() : sdispls;
  const MPI_Datatype* sts = sconv ? s->types.data() : stypes;
  const int* rcs = rconv ? r->counts.data() : rcounts;
  const int* rds = rconv ? r->displs.data() : rdispls;
  const MPI_Datatype* rts = rconv ? r->types.data() : rtypes;
  int rc = mpi_call<PMPI_Alltoallw, PMPI_Ialltoallw, PMPI_Alltoallw_init>(h, sb, scs, sds, sts, rb, rcs, rds, rts, comm);
  return w_run(rc, comm, h, std::move(pack), sconv, rconv, std::move(unpack));
}

}  // namespace

extern "C" {

int MPI_Bcast(void* buf, int count, MPI_Datatype dt, int root, MPI_Comm comm) {
  return disabled() ? PMPI_Bcast(buf, count, dt, root, comm) : bcast(buf, count, dt, root, comm, blocking());
}
int MPI_Ibcast(void* buf, int count, MPI_Datatype dt, int root, MPI_Comm comm, MPI_Request* req) {
  return disabled() ? PMPI_Ibcast(buf, count, dt, root, comm, req) : bcast(buf, count, dt, root, comm, nonblocking(req));
}
int MPI_Bcast_init(void* buf, int count, MPI_Datatype dt, int root, MPI_Comm comm, MPI_Info info, MPI_Request* req) {
  return disabled() ? PMPI_Bcast_init(buf, count, dt, root, comm, info, req)
                    : bcast(buf, count, dt, root, comm, persistent(info, req));
}
int MPI_Gather(const void* sb, int sc, MPI_Datatype st, void* rb, int rc, MPI_Datatype rt, int root, MPI_Comm comm) {
  return disabled() ? PMPI_Gather(sb, sc, st, rb, rc, rt, root, comm)
                    : gather(sb, sc, st, rb, rc, rt, root, comm, blocking());
}
int MPI_Igather(const void* sb, int sc, MPI_Datatype st, void* rb, int rc, MPI_Datatype rt, int root, MPI_Comm comm,
                MPI_Request* req) {
  return disabled() ? PMPI_Igather(sb, sc, st, rb, rc, rt, root, comm, req)
                    : gather(sb, sc, st, rb, rc, rt, root, comm, nonblocking(req));
}
int MPI_Gather_init(const void* sb, int sc, MPI_Datatype st, void* rb, int rc, MPI_Datatype rt, int root,
                    MPI_Comm comm, MPI_Info info, MPI_Request* req) {
  return disabled() ? PMPI_Gather_init(sb, sc, st, rb, rc, rt, root, comm, info, req)
                    : gather(sb, sc, st, rb, rc, rt, root, comm, persistent(info, req));
}
int MPI_Gatherv(const void* sb, int sc, MPI_Datatype st, void* rb, const int rcs[], const int ds[], MPI_Datatype rt,
                int root, MPI_Comm comm) {
  return disabled() ? PMPI_Gatherv(sb, sc, st, rb, rcs, ds, rt, root, comm)
                    : gatherv(sb, sc, st, rb, rcs, ds, rt, root, comm, blocking());
}
int MPI_Igatherv(const void* sb, int sc, MPI_Datatype st, void* rb, const int rcs[], const int ds[], MPI_Datatype rt,
                 int root, MPI_Comm comm, MPI_Request* req) {
  return disabled() ? PMPI_Igatherv(sb, sc, st, rb, rcs, ds, rt, root, comm, req)
                    : gatherv(sb, sc, st, rb, rcs, ds, rt, root, comm, nonblocking(req));
}
int MPI_Gatherv_init(const void* sb, int sc, MPI_Datatype st, void* rb, const int rcs[], const int ds[],
                     MPI_Datatype rt, int root, MPI_Comm comm, MPI_Info info, MPI_Request* req) {
  return disabled() ? PMPI_Gatherv_init(sb, sc, st, rb, rcs, ds, rt, root, comm, info, req)
                    : gatherv(sb, sc, st, rb, rcs, ds, rt, root, comm, persistent(info, req));
}
int MPI_Scatter(const void* sb, int sc, MPI_Datatype st, void* rb, int rc, MPI_Datatype rt, int root, MPI_Comm comm) {
  return disabled() ? PMPI_Scatter(sb, sc, st, rb, rc, rt, root, comm)
                    : scatter(sb, sc, st, rb, rc, rt, root, comm, blocking());
}
int MPI_Iscatter(const void* sb, int sc, MPI_Datatype st, void* rb, int rc, MPI_Datatype rt, int root, MPI_Comm comm,
                 MPI_Request* req) {
  return disabled() ? PMPI_Iscatter(sb, sc, st, rb, rc, rt, root, comm, req)
                    : scatter(sb, sc, st, rb, rc, rt, root, comm, nonblocking(req));
}
int MPI_Scatter_init(const void* sb, int sc, MPI_Datatype st, void* rb, int rc, MPI_Datatype rt, int root,
                     MPI_Comm comm, MPI_Info info, MPI_Request* req) {
  return disabled() ? PMPI_Scatter_init(sb, sc, st, rb, rc, rt, root, comm, info, req)
                    : scatter(sb, sc, st, rb, rc, rt, root, comm, persistent(info, req));
}
int MPI_Scatterv(const void* sb, const int scs[], const int ds[], MPI_Datatype st, void* rb, int rc, MPI_Datatype rt,
                 int root, MPI_Comm comm) {
  return disabled() ? PMPI_Scatterv(sb, scs, ds, st, rb, rc, rt, root, comm)
                    : scatterv(sb, scs, ds, st, rb, rc, rt, root, comm, blocking());
}
int MPI_Iscatterv(const void* sb, const int scs[], const int ds[], MPI_Datatype st, void* rb, int rc, MPI_Datatype rt,
                  int root, MPI_Comm comm, MPI_Request* req) {
  return disabled() ? PMPI_Iscatterv(sb, scs, ds, st, rb, rc, rt, root, comm, req)
                    : scatterv(sb, scs, ds, st, rb, rc, rt, root, comm, nonblocking(req));
}
int MPI_Scatterv_init(const void* sb, const int scs[], const int ds[], MPI_Datatype st, void* rb, int rc,
                      MPI_Datatype rt, int root, MPI_Comm comm, MPI_Info info, MPI_Request* req) {
  return disabled() ? PMPI_Scatterv_init(sb, scs, ds, st, rb, rc, rt, root, comm, info, req)
                    : scatterv(sb, scs, ds, st, rb, rc, rt, root, comm, persistent(info, req));
}
int MPI_Allgather(const void* sb, int sc, MPI_Datatype st, void* rb, int rc, MPI_Datatype rt, MPI_Comm comm) {
  return disabled() ? PMPI_Allgather(sb, sc, st, rb, rc, rt, comm) : allgather(sb, sc, st, rb, rc, rt, comm, blocking());
}
int MPI_Iallgather(const void* sb, int sc, MPI_Datatype st, void* rb, int rc, MPI_Datatype rt, MPI_Comm comm,
                   MPI_Request* req) {
  return disabled() ? PMPI_Iallgather(sb, sc, st, rb, rc, rt, comm, req)
                    : allgather(sb, sc, st, rb, rc, rt, comm, nonblocking(req));
}
int MPI_Allgather_init(const void* sb, int sc, MPI_Datatype st, void* rb, int rc, MPI_Datatype rt, MPI_Comm comm,
                       MPI_Info info, MPI_Request* req) {
  return disabled() ? PMPI_Allgather_init(sb, sc, st, rb, rc, rt, comm, info, req)
                    : allgather(sb, sc, st, rb, rc, rt, comm, persistent(info, req));
}
int MPI_Allgatherv(const void* sb, int sc, MPI_Datatype st, void* rb, const int rcs[], const int ds[], MPI_Datatype rt,
                   MPI_Comm comm) {
  return disabled() ? PMPI_Allgatherv(sb, sc, st, rb, rcs, ds, rt, comm)
                    : allgatherv(sb, sc, st, rb, rcs, ds, rt, comm, blocking());
}
int MPI_Iallgatherv(const void* sb, int sc, MPI_Datatype st, void* rb, const int rcs[], const int ds[],
                    MPI_Datatype rt, MPI_Comm comm, MPI_Request* req) {
  return disabled() ? PMPI_Iallgatherv(sb, sc, st, rb, rcs, ds, rt, comm, req)
                    : allgatherv(sb, sc, st, rb, rcs, ds, rt, comm, nonblocking(req));
}
int MPI_Allgatherv_init(const void* sb, int sc, MPI_Datatype st, void* rb, const int rcs[], const int ds[],
                        MPI_Datatype rt, MPI_Comm comm, MPI_Info info, MPI_Request* req) {
  return disabled() ? PMPI_Allgatherv_init(sb, sc, st, rb, rcs, ds, rt, comm, info, req)
                    : allgatherv(sb, sc, st, rb, rcs, ds, rt, comm, persistent(info, req));
}
int MPI_Alltoall(const void* sb, int sc, MPI_Datatype st, void* rb, int rc, MPI_Datatype rt, MPI_Comm comm) {
  return disabled() ? PMPI_Alltoall(sb, sc, st, rb, rc, rt, comm) : alltoall(sb, sc, st, rb, rc, rt, comm, blocking());
}
int MPI_Ialltoall(const void* sb, int sc, MPI_Datatype st, void* rb, int rc, MPI_Datatype rt, MPI_Comm comm,
                  MPI_Request* req) {
  return disabled() ? PMPI_Ialltoall(sb, sc, st, rb, rc, rt, comm, req)
                    : alltoall(sb, sc, st, rb, rc, rt, comm, nonblocking(req));
}
int MPI_Alltoall_init(const void* sb, int sc, MPI_Datatype st, void* rb, int rc, MPI_Datatype rt, MPI_Comm comm,
                      MPI_Info info, MPI_Request* req) {
  return disabled() ? PMPI_Alltoall_init(sb, sc, st, rb, rc, rt, comm, info, req)
                    : alltoall(sb, sc, st, rb, rc, rt, comm, persistent(info, req));
}
int MPI_Alltoallv(const void* sb, const int scs[], const int sds[], MPI_Datatype st, void* rb, const int rcs[],
                  const int rds[], MPI_Datatype rt, MPI_Comm comm) {
  return disabled() ? PMPI_Alltoallv(sb, scs, sds, st, rb, rcs, rds, rt, comm)
                    : alltoallv(sb, scs, sds, st, rb, rcs, rds, rt, comm, blocking());
}
int MPI_Ialltoallv(const void* sb, const int scs[], const int sds[], MPI_Datatype st, void* rb, const int rcs[],
                   const int rds[], MPI_Datatype rt, MPI_Comm comm, MPI_Request* req) {
  return disabled() ? PMPI_Ialltoallv(sb, scs, sds, st, rb, rcs, rds, rt, comm, req)
                    : alltoallv(sb, scs, sds, st, rb, rcs, rds, rt, comm, nonblocking(req));
}
int MPI_Alltoallv_init(const void* sb, const int scs[], const int sds[], MPI_Datatype st, void* rb, const int rcs[],
                       const int rds[], MPI_Datatype rt, MPI_Comm comm, MPI_Info info, MPI_Request* req) {
  return disabled() ? PMPI_Alltoallv_init(sb, scs, sds, st, rb, rcs, rds, rt, comm, info, req)
                    : alltoallv(sb, scs, sds, st, rb, rcs, rds, rt, comm, persistent(info, req));
}
int MPI_Alltoallw(const void* sb, const int scs[], const int sds[], const MPI_Datatype sts[], void* rb,
                  const int rcs[], const int rds[], const MPI_Datatype rts[], MPI_Comm comm) {
  return disabled() ? PMPI_Alltoallw(sb, scs, sds, sts, rb, rcs, rds, rts, comm)
                    : alltoallw(sb, scs, sds, sts, rb, rcs, rds, rts, comm, blocking());
}
int MPI_Ialltoallw(const void* sb, const int scs[], const int sds[], const MPI_Datatype sts[], void* rb,
                   const int rcs[], const int rds[], const MPI_Datatype rts[], MPI_Comm comm, MPI_Request* req) {
  return disabled() ? PMPI_Ialltoallw(sb, scs, sds, sts, rb, rcs, rds, rts, comm, req)
                    : alltoallw(sb, scs, sds, sts, rb, rcs, rds, rts, comm, nonblocking(req));
}
int MPI_Alltoallw_init(const void* sb, const int scs[], const int sds[], const MPI_Datatype sts[], void* rb,
                       const int rcs[], const int rds[], const MPI_Datatype rts[], MPI_Comm comm, MPI_Info info,
                       MPI_Request* req) {
  return disabled() ? PMPI_Alltoallw_init(sb, scs, sds, sts, rb, rcs, rds, rts, comm, info, req)
                    : alltoallw(sb, scs, sds, sts, rb, rcs, rds, rts, comm, persistent(info, req));
}

}  // extern "C"
