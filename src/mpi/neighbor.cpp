// The neighborhood collectives with derived types, blocking and non-blocking:
// Neighbor_allgather(v) and Neighbor_alltoall(v,w), and their I-forms, on communicators with a
// Cartesian, graph or distributed-graph topology. Halo codes call them with subarray and vector
// types; left to the MPI, those go through the MPI's own engine, which Open MPI 5.0.11 runs wrong
// for some layouts (pass.cpp) and MPICH 5 for some random types in its collectives (issue 11's
// note). So each converted side is staged the way collectives.cpp stages the global ones
// (coll.hpp): packed once, moved by the MPI as bytes, unpacked after.
//
// The peers of a side are the topology's neighbors in the standard's order: sources for what
// this rank receives, destinations for what it sends. A Cartesian neighbor at a non-periodic edge
// is MPI_PROC_NULL: the MPI neither sends to it nor writes its chunk of the receive buffer, so
// that chunk of the staging holds nothing and is not unpacked (the user's bytes there stay as
// they were). Where every type of a call is one the MPI moves itself (predefined or
// untranslatable), or the communicator has no topology (the MPI reports the error), the call goes
// to the MPI unchanged. MPI 4's persistent forms (MPI_Neighbor_*_init) pack at each start
// (coll.hpp's How), and MPICH's large-count forms come here where their counts fit an int
// (large_count_coll.cpp).
#include <vector>

#include "mpi/coll.hpp"
#include "mpi/shim.hpp"

using namespace ddtmpi;

namespace {

// The neighbors of a topology communicator: the sources in the order of the receive buffer's
// chunks, and how many destinations. ok is false where the communicator has none.
struct Neighbors {
  bool ok = false;
  std::vector<int> sources;
  int out = 0;
  int in() const { return static_cast<int>(sources.size()); }
  bool null_source(int i) const { return sources[i] == MPI_PROC_NULL; }
};

Neighbors neighbors(MPI_Comm comm) {
  Neighbors n;
  int topo = MPI_UNDEFINED;
  if (PMPI_Topo_test(comm, &topo) != MPI_SUCCESS) return n;
  if (topo == MPI_CART) {  // per dimension the neighbor at -1, then the one at +1
    int dims = 0;
    PMPI_Cartdim_get(comm, &dims);
    for (int d = 0; d < dims; ++d) {
      int below = MPI_PROC_NULL, above = MPI_PROC_NULL;
      PMPI_Cart_shift(comm, d, 1, &below, &above);
      n.sources.push_back(below);
      n.sources.push_back(above);
    }
    n.out = 2 * dims;
  } else if (topo == MPI_GRAPH) {  // the same list both ways
    int me = 0, k = 0;
    PMPI_Comm_rank(comm, &me);
    PMPI_Graph_neighbors_count(comm, me, &k);
    n.sources.resize(k);
    if (k > 0) PMPI_Graph_neighbors(comm, me, k, n.sources.data());
    n.out = k;
  } else if (topo == MPI_DIST_GRAPH) {
    int in = 0, out = 0, weighted = 0;
    PMPI_Dist_graph_neighbors_count(comm, &in, &out, &weighted);
    // Weight arrays of their full size either way: the standard leaves passing MPI_UNWEIGHTED
    // for a weighted graph's weights undefined.
    std::vector<int> srcs(in + 1), sw(in + 1), dsts(out + 1), dw(out + 1);
    PMPI_Dist_graph_neighbors(comm, in, srcs.data(), sw.data(), out, dsts.data(), dw.data());
    n.sources.assign(srcs.begin(), srcs.begin() + in);
    n.out = out;
  } else {
    return n;
  }
  n.ok = true;
  return n;
}

}  // namespace

// Only large_count_coll.cpp asks, for its narrowing of the arrays: the same topology queries as
// the call itself makes.
Degrees ddtmpi::neighbor_degrees(MPI_Comm comm) {
  const Neighbors n = neighbors(comm);
  return {n.out, n.in()};
}

namespace {

// Unpack ranges of a receive side of element-unit chunks: every source's chunk but MPI_PROC_NULL's.
void chunks(Coll& c, const Neighbors& nb, int64_t chunk) {
  if (!c.r.staging.ok()) return;
  for (int i = 0; i < nb.in(); ++i)
    if (!nb.null_source(i)) c.ranges.push_back({i * chunk, chunk});
}

int allgather(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount, MPI_Datatype rtype,
              MPI_Comm comm, const How& h) {
  Neighbors nb;
  if (all_pass({stype, rtype}) || !(nb = neighbors(comm)).ok)
    return mpi_call<PMPI_Neighbor_allgather, PMPI_Ineighbor_allgather, PMPI_Neighbor_allgather_init>(
        h, sbuf, scount, stype, rbuf, rcount, rtype, comm);
  auto c = make_coll(h);
  if (int e = send_side(*c, c->s, true, sbuf, scount, stype)) return raise(comm, e);
  if (int e = prepare_recv(c->r, rbuf, int64_t(nb.in()) * rcount, rtype)) return raise(comm, e);
  if (c->r.converted()) chunks(*c, nb, rcount * c->r.info->size);
  const Side &s = c->s, &r = c->r;
  int rc = mpi_call<PMPI_Neighbor_allgather, PMPI_Ineighbor_allgather, PMPI_Neighbor_allgather_init>(
      h, s.buf(), s.n(), s.type(), r.buf(), per(r, rcount), r.type(), comm);
  return run(rc, comm, h, c);
}

// The receive side of a v-form: converted where its displacements are not negative; then its
// counts and displacements in bytes, and every non-null source's chunk to unpack.
int recv_v(Coll& c, const Neighbors& nb, void* rbuf, const int rcounts[], const int rdispls[], MPI_Datatype rtype) {
  c.r.as_is(rbuf, 0, rtype);
  const int64_t total = span(nb.in(), rcounts, rdispls);
  if (total >= 0)
    if (int e = prepare_recv(c.r, rbuf, total, rtype)) return e;
  if (!c.r.converted()) return MPI_SUCCESS;
  scale(c.r, nb.in(), rcounts, rdispls, c.rc, c.rd);
  if (c.r.staging.ok())
    for (int i = 0; i < nb.in(); ++i)
      if (!nb.null_source(i)) c.ranges.push_back({c.rd[i], c.rc[i]});
  return MPI_SUCCESS;
}

int allgatherv(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, const int rcounts[], const int displs[],
               MPI_Datatype rtype, MPI_Comm comm, const How& h) {
  Neighbors nb;
  if (all_pass({stype, rtype}) || !(nb = neighbors(comm)).ok)
    return mpi_call<PMPI_Neighbor_allgatherv, PMPI_Ineighbor_allgatherv, PMPI_Neighbor_allgatherv_init>(
        h, sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm);
  auto c = make_coll(h);
  if (int e = send_side(*c, c->s, true, sbuf, scount, stype)) return raise(comm, e);
  if (int e = recv_v(*c, nb, rbuf, rcounts, displs, rtype)) return raise(comm, e);
  const Side &s = c->s, &r = c->r;
  const int* rcs = r.converted() ? c->rc.data() : rcounts;
  const int* rds = r.converted() ? c->rd.data() : displs;
  int rc = mpi_call<PMPI_Neighbor_allgatherv, PMPI_Ineighbor_allgatherv, PMPI_Neighbor_allgatherv_init>(
      h, s.buf(), s.n(), s.type(), r.buf(), rcs, rds, r.type(), comm);
  return run(rc, comm, h, c);
}

// Destination j's chunk is elements [j*scount, (j+1)*scount) of the send buffer: packed whole,
// every chunk lies at its own packed offset.
int alltoall(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount, MPI_Datatype rtype,
             MPI_Comm comm, const How& h) {
  Neighbors nb;
  if (all_pass({stype, rtype}) || !(nb = neighbors(comm)).ok)
    return mpi_call<PMPI_Neighbor_alltoall, PMPI_Ineighbor_alltoall, PMPI_Neighbor_alltoall_init>(
        h, sbuf, scount, stype, rbuf, rcount, rtype, comm);
  auto c = make_coll(h);
  if (int e = send_side(*c, c->s, true, sbuf, int64_t(nb.out) * scount, stype)) return raise(comm, e);
  if (int e = prepare_recv(c->r, rbuf, int64_t(nb.in()) * rcount, rtype)) return raise(comm, e);
  if (c->r.converted()) chunks(*c, nb, rcount * c->r.info->size);
  const Side &s = c->s, &r = c->r;
  int rc = mpi_call<PMPI_Neighbor_alltoall, PMPI_Ineighbor_alltoall, PMPI_Neighbor_alltoall_init>(
      h, s.buf(), per(s, scount), s.type(), r.buf(), per(r, rcount), r.type(), comm);
  return run(rc, comm, h, c);
}

int alltoallv(const void* sbuf, const int scounts[], const int sdispls[], MPI_Datatype stype, void* rbuf,
              const int rcounts[], const int rdispls[], MPI_Datatype rtype, MPI_Comm comm, const How& h) {
  Neighbors nb;
  if (all_pass({stype, rtype}) || !(nb = neighbors(comm)).ok)
    return mpi_call<PMPI_Neighbor_alltoallv, PMPI_Ineighbor_alltoallv, PMPI_Neighbor_alltoallv_init>(
        h, sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm);
  auto c = make_coll(h);
  c->s.as_is(sbuf, 0, stype);
  const int64_t total = span(nb.out, scounts, sdispls);
  if (total >= 0)
    if (int e = prepare_send(c->s, sbuf, total, stype, false)) return raise(comm, e);
  if (c->s.converted()) {
    scale(c->s, nb.out, scounts, sdispls, c->sc, c->sd);
    if (c->s.staging.ok())
      for (int j = 0; j < nb.out; ++j)
        if (int e = pack_range(*c, c->s, c->sd[j], c->sc[j])) return raise(comm, e);
  }
  if (int e = recv_v(*c, nb, rbuf, rcounts, rdispls, rtype)) return raise(comm, e);
  const Side &s = c->s, &r = c->r;
  const int* scs = s.converted() ? c->sc.data() : scounts;
  const int* sds = s.converted() ? c->sd.data() : sdispls;
  const int* rcs = r.converted() ? c->rc.data() : rcounts;
  const int* rds = r.converted() ? c->rd.data() : rdispls;
  int rc = mpi_call<PMPI_Neighbor_alltoallv, PMPI_Ineighbor_alltoallv, PMPI_Neighbor_alltoallv_init>(
      h, s.buf(), scs, sds, s.type(), r.buf(), rcs, rds, r.type(), comm);
  return run(rc, comm, h, c);
}

// One type per neighbor and byte displacements (MPI_Aint): coll.hpp's w-form sides.
int alltoallw(const void* sbuf, const int scounts[], const MPI_Aint sdispls[], const MPI_Datatype stypes[], void* rbuf,
              const int rcounts[], const MPI_Aint rdispls[], const MPI_Datatype rtypes[], MPI_Comm comm,
              const How& h) {
  Neighbors nb = neighbors(comm);
  auto s = std::make_shared<WSide<MPI_Aint>>(), r = std::make_shared<WSide<MPI_Aint>>();
  const bool sconv = nb.ok && w_convert(*s, nb.out, scounts, stypes);
  const bool rconv = nb.ok && w_convert(*r, nb.in(), rcounts, rtypes);
  WPack<MPI_Aint> pack{s, sbuf, std::vector<int>(scounts, scounts + (sconv ? nb.out : 0)),
                       std::vector<MPI_Aint>(sdispls, sdispls + (sconv ? nb.out : 0))};
  if (sconv && !h.persistent)
    if (int e = pack()) return raise(comm, e);
  const int in = rconv ? nb.in() : 0;
  WUnpack<MPI_Aint> unpack{r, rbuf, std::vector<int>(rcounts, rcounts + in),
                           std::vector<MPI_Aint>(rdispls, rdispls + in), std::vector<bool>(in)};
  for (int i = 0; i < in; ++i) unpack.skip[i] = nb.null_source(i);
  const void* sb = sconv ? s->staging.data() : sbuf;
  void* rb = rconv ? r->staging.data() : rbuf;
  const int* scs = sconv ? s->counts.data() : scounts;
  const MPI_Aint* sds = sconv ? s->displs.data() : sdispls;
  const MPI_Datatype* sts = sconv ? s->types.data() : stypes;
  const int* rcs = rconv ? r->counts.data() : rcounts;
  const MPI_Aint* rds = rconv ? r->displs.data() : rdispls;
  const MPI_Datatype* rts = rconv ? r->types.data() : rtypes;
  int rc = mpi_call<PMPI_Neighbor_alltoallw, PMPI_Ineighbor_alltoallw, PMPI_Neighbor_alltoallw_init>(
      h, sb, scs, sds, sts, rb, rcs, rds, rts, comm);
  return w_run(rc, comm, h, std::move(pack), sconv, rconv, std::move(unpack));
}

}  // namespace

extern "C" {

int MPI_Neighbor_allgather(const void* sb, int sc, MPI_Datatype st, void* rb, int rc, MPI_Datatype rt, MPI_Comm comm) {
  return disabled() ? PMPI_Neighbor_allgather(sb, sc, st, rb, rc, rt, comm)
                    : allgather(sb, sc, st, rb, rc, rt, comm, blocking());
}
int MPI_Ineighbor_allgather(const void* sb, int sc, MPI_Datatype st, void* rb, int rc, MPI_Datatype rt, MPI_Comm comm,
                            MPI_Request* req) {
  return disabled() ? PMPI_Ineighbor_allgather(sb, sc, st, rb, rc, rt, comm, req)
                    : allgather(sb, sc, st, rb, rc, rt, comm, nonblocking(req));
}
int MPI_Neighbor_allgather_init(const void* sb, int sc, MPI_Datatype st, void* rb, int rc, MPI_Datatype rt,
                                MPI_Comm comm, MPI_Info info, MPI_Request* req) {
  return disabled() ? PMPI_Neighbor_allgather_init(sb, sc, st, rb, rc, rt, comm, info, req)
                    : allgather(sb, sc, st, rb, rc, rt, comm, persistent(info, req));
}
int MPI_Neighbor_allgatherv(const void* sb, int sc, MPI_Datatype st, void* rb, const int rcs[], const int ds[],
                            MPI_Datatype rt, MPI_Comm comm) {
  return disabled() ? PMPI_Neighbor_allgatherv(sb, sc, st, rb, rcs, ds, rt, comm)
                    : allgatherv(sb, sc, st, rb, rcs, ds, rt, comm, blocking());
}
int MPI_Ineighbor_allgatherv(const void* sb, int sc, MPI_Datatype st, void* rb, const int rcs[], const int ds[],
                             MPI_Datatype rt, MPI_Comm comm, MPI_Request* req) {
  return disabled() ? PMPI_Ineighbor_allgatherv(sb, sc, st, rb, rcs, ds, rt, comm, req)
                    : allgatherv(sb, sc, st, rb, rcs, ds, rt, comm, nonblocking(req));
}
int MPI_Neighbor_allgatherv_init(const void* sb, int sc, MPI_Datatype st, void* rb, const int rcs[], const int ds[],
                                 MPI_Datatype rt, MPI_Comm comm, MPI_Info info, MPI_Request* req) {
  return disabled() ? PMPI_Neighbor_allgatherv_init(sb, sc, st, rb, rcs, ds, rt, comm, info, req)
                    : allgatherv(sb, sc, st, rb, rcs, ds, rt, comm, persistent(info, req));
}
int MPI_Neighbor_alltoall(const void* sb, int sc, MPI_Datatype st, void* rb, int rc, MPI_Datatype rt, MPI_Comm comm) {
  return disabled() ? PMPI_Neighbor_alltoall(sb, sc, st, rb, rc, rt, comm)
                    : alltoall(sb, sc, st, rb, rc, rt, comm, blocking());
}
int MPI_Ineighbor_alltoall(const void* sb, int sc, MPI_Datatype st, void* rb, int rc, MPI_Datatype rt, MPI_Comm comm,
                           MPI_Request* req) {
  return disabled() ? PMPI_Ineighbor_alltoall(sb, sc, st, rb, rc, rt, comm, req)
                    : alltoall(sb, sc, st, rb, rc, rt, comm, nonblocking(req));
}
int MPI_Neighbor_alltoall_init(const void* sb, int sc, MPI_Datatype st, void* rb, int rc, MPI_Datatype rt,
                               MPI_Comm comm, MPI_Info info, MPI_Request* req) {
  return disabled() ? PMPI_Neighbor_alltoall_init(sb, sc, st, rb, rc, rt, comm, info, req)
                    : alltoall(sb, sc, st, rb, rc, rt, comm, persistent(info, req));
}
int MPI_Neighbor_alltoallv(const void* sb, const int scs[], const int sds[], MPI_Datatype st, void* rb, const int rcs[],
                           const int rds[], MPI_Datatype rt, MPI_Comm comm) {
  return disabled() ? PMPI_Neighbor_alltoallv(sb, scs, sds, st, rb, rcs, rds, rt, comm)
                    : alltoallv(sb, scs, sds, st, rb, rcs, rds, rt, comm, blocking());
}
int MPI_Ineighbor_alltoallv(const void* sb, const int scs[], const int sds[], MPI_Datatype st, void* rb,
                            const int rcs[], const int rds[], MPI_Datatype rt, MPI_Comm comm, MPI_Request* req) {
  return disabled() ? PMPI_Ineighbor_alltoallv(sb, scs, sds, st, rb, rcs, rds, rt, comm, req)
                    : alltoallv(sb, scs, sds, st, rb, rcs, rds, rt, comm, nonblocking(req));
}
int MPI_Neighbor_alltoallv_init(const void* sb, const int scs[], const int sds[], MPI_Datatype st, void* rb,
                                const int rcs[], const int rds[], MPI_Datatype rt, MPI_Comm comm, MPI_Info info,
                                MPI_Request* req) {
  return disabled() ? PMPI_Neighbor_alltoallv_init(sb, scs, sds, st, rb, rcs, rds, rt, comm, info, req)
                    : alltoallv(sb, scs, sds, st, rb, rcs, rds, rt, comm, persistent(info, req));
}
int MPI_Neighbor_alltoallw(const void* sb, const int scs[], const MPI_Aint sds[], const MPI_Datatype sts[], void* rb,
                           const int rcs[], const MPI_Aint rds[], const MPI_Datatype rts[], MPI_Comm comm) {
  return disabled() ? PMPI_Neighbor_alltoallw(sb, scs, sds, sts, rb, rcs, rds, rts, comm)
                    : alltoallw(sb, scs, sds, sts, rb, rcs, rds, rts, comm, blocking());
}
int MPI_Ineighbor_alltoallw(const void* sb, const int scs[], const MPI_Aint sds[], const MPI_Datatype sts[], void* rb,
                            const int rcs[], const MPI_Aint rds[], const MPI_Datatype rts[], MPI_Comm comm,
                            MPI_Request* req) {
  return disabled() ? PMPI_Ineighbor_alltoallw(sb, scs, sds, sts, rb, rcs, rds, rts, comm, req)
                    : alltoallw(sb, scs, sds, sts, rb, rcs, rds, rts, comm, nonblocking(req));
}
int MPI_Neighbor_alltoallw_init(const void* sb, const int scs[], const MPI_Aint sds[], const MPI_Datatype sts[],
                                void* rb, const int rcs[], const MPI_Aint rds[], const MPI_Datatype rts[],
                                MPI_Comm comm, MPI_Info info, MPI_Request* req) {
  return disabled() ? PMPI_Neighbor_alltoallw_init(sb, scs, sds, sts, rb, rcs, rds, rts, comm, info, req)
                    : alltoallw(sb, scs, sds, sts, rb, rcs, rds, rts, comm, persistent(info, req));
}

}  // extern "C"
