// MPI 4's large-count collectives (MPI_Bcast_c ..., MPI_Count counts and MPI_Aint
// displacements), where the MPI has them (MPICH 5; Open MPI 5.0 has none). mpi4py 4 calls them
// wherever they exist, so without these its collectives of derived types under MPICH never
// reached the interposer (neither its staging nor the runtime), and a program whose ranks mix the
// two forms of one collective would see the interposer's protocol on some ranks and the MPI's on
// others.
//
// Counts and displacements that all fit an int go the int form's way (collectives.cpp); others
// go to the MPI as they are, which moves derived types correctly (pass.cpp keeps only the slow
// ones from it). An array is read only where the standard makes it significant (the root's of a
// rooted v-form, none of a send side that is MPI_IN_PLACE), so a null or stale pointer elsewhere
// is never read. A non-blocking v-form's int arrays live until its request completes (the
// interposer hands the MPI the user's arrays for the types it leaves to the MPI, and the MPI may
// read them until then): its Pending owns them.
//
// The neighborhood collectives' large-count forms take the same way to neighbor.cpp's int forms;
// their arrays have one entry per source (receive side) or destination (send side). The
// persistent forms (_init_c) take the way of the int _init forms, whose packing runs at each
// MPI_Start (coll.hpp's How).
//
// Not the MPI's own way for every type: MPICH 5.0.2 moves some derived types wrongly in its
// collectives (interposer_test's type 123 of seed 21 in Bcast, Alltoall, Allgather, Scatterv),
// which the int forms' staging gets right.
#include <array>
#include <climits>
#include <memory>
#include <tuple>
#include <vector>

#include "mpi/coll.hpp"
#include "mpi/shim.hpp"

#if MPI_VERSION >= 4

namespace {

using namespace ddtmpi;

bool fits(MPI_Count c) { return c >= 0 && c <= INT_MAX; }
bool fits_disp(MPI_Aint d) { return d >= INT_MIN && d <= INT_MAX; }

// One array narrowed to int: `out` is null where the array is not significant (`used` false),
// and false comes back when an entry does not fit (a count must also not be negative).
struct Narrow {
  std::vector<int> v;
  const int* out = nullptr;
  template <class T>
  bool from(const T* a, int n, bool used, bool counts) {
    if (!used || a == nullptr) return true;
    v.resize(n);
    for (int i = 0; i < n; ++i) {
      if (counts ? !fits(a[i]) : !fits_disp(a[i])) return false;
      v[i] = static_cast<int>(a[i]);
    }
    out = v.data();
    return true;
  }
  bool counts(const MPI_Count* a, int n, bool used) { return from(a, n, used, true); }
  bool displs(const MPI_Aint* a, int n, bool used) { return from(a, n, used, false); }
};

// A count the standard makes insignificant on this rank (a root's receive count on the other
// ranks, an MPI_IN_PLACE side's) may hold anything, so it neither decides the way (every rank must
// take the same one: the runtime's collectives agree among the ranks through the MPI) nor is
// read: 0 goes in its place.
struct Counts {
  bool ok = true;
  int take(MPI_Count c, bool significant) {
    if (!significant) return 0;
    if (!fits(c)) ok = false;
    return static_cast<int>(c);
  }
};

// Keeps `arrays` until req completes (a persistent request: until it is freed): its Pending's
// completion (attached by the int form, or a new one) owns them.
void keep_until_done(MPI_Request req, std::shared_ptr<void> arrays, bool persistent) {
  if (req == MPI_REQUEST_NULL) return;
  PendingRef p = find(req);
  if (!p) {
    p = std::make_shared<Pending>();
    p->persistent = persistent;
    p->active = !persistent;
    attach(req, p);
  }
  auto prev = std::move(p->complete);
  p->complete = [prev, arrays](MPI_Status& st) { return prev ? prev(st) : MPI_SUCCESS; };
}

using Arrays = std::array<Narrow, 4>;

// After a v-form's int call: a non-blocking one (tail: its request) keeps its arrays until it
// completes, a persistent one (tail: its info and request) until it is freed.
template <class... T>
int kept(int rc, const std::shared_ptr<Arrays>& a, T... tail) {
  if constexpr (sizeof...(T) > 0)
    if (rc == MPI_SUCCESS) keep_until_done(*std::get<sizeof...(T) - 1>(std::make_tuple(tail...)), a, sizeof...(T) == 2);
  return rc;
}

// Each set of forms is one template over the int form F and the MPI's large-count form FC; the
// trailing arguments T are none for the blocking form, the request for the non-blocking one, and
// the info and the request for the persistent one (MPI 4's _init_c forms).

// Gather (the leaves send) and Scatter (the leaves receive): the root's side counts at the root
// only, a leaf's side at the leaves only (roles, collectives.cpp).
template <auto F, auto FC, bool Gather, class... T>
int rooted_c(const void* sb, MPI_Count sc, MPI_Datatype st, void* rb, MPI_Count rc, MPI_Datatype rt, int root,
             MPI_Comm comm, T... tail) {
  const Roles x = roles(group(comm), root, Gather ? sb : rb);
  Counts k;
  const int s = k.take(sc, Gather ? x.leaf : x.root), r = k.take(rc, Gather ? x.root : x.leaf);
  return k.ok ? F(sb, s, st, rb, r, rt, root, comm, tail...) : FC(sb, sc, st, rb, rc, rt, root, comm, tail...);
}
// Allgather and Alltoall.
template <auto F, auto FC, class... T>
int all_c(const void* sb, MPI_Count sc, MPI_Datatype st, void* rb, MPI_Count rc, MPI_Datatype rt, MPI_Comm comm,
          T... tail) {
  Counts k;
  const int s = k.take(sc, sb != MPI_IN_PLACE), r = k.take(rc, true);
  return k.ok ? F(sb, s, st, rb, r, rt, comm, tail...) : FC(sb, sc, st, rb, rc, rt, comm, tail...);
}
template <auto F, auto FC, class... T>
int gatherv_c(const void* sb, MPI_Count sc, MPI_Datatype st, void* rb, const MPI_Count rcs[], const MPI_Aint ds[],
              MPI_Datatype rt, int root, MPI_Comm comm, T... tail) {
  const Group g = group(comm);
  const Roles x = roles(g, root, sb);
  auto a = std::make_shared<Arrays>();
  Counts k;
  const int s = k.take(sc, x.leaf);
  if (!k.ok || !(*a)[0].counts(rcs, g.peers, x.root) || !(*a)[1].displs(ds, g.peers, x.root))
    return FC(sb, sc, st, rb, rcs, ds, rt, root, comm, tail...);
  return kept(F(sb, s, st, rb, (*a)[0].out, (*a)[1].out, rt, root, comm, tail...), a, tail...);
}
template <auto F, auto FC, class... T>
int scatterv_c(const void* sb, const MPI_Count scs[], const MPI_Aint ds[], MPI_Datatype st, void* rb, MPI_Count rc,
               MPI_Datatype rt, int root, MPI_Comm comm, T... tail) {
  const Group g = group(comm);
  const Roles x = roles(g, root, rb);
  auto a = std::make_shared<Arrays>();
  Counts k;
  const int r = k.take(rc, x.leaf);
  if (!k.ok || !(*a)[0].counts(scs, g.peers, x.root) || !(*a)[1].displs(ds, g.peers, x.root))
    return FC(sb, scs, ds, st, rb, rc, rt, root, comm, tail...);
  return kept(F(sb, (*a)[0].out, (*a)[1].out, st, rb, r, rt, root, comm, tail...), a, tail...);
}
// How many entries a v- or w-form's arrays have on each side: every peer of the group, or the
// topology's destinations and sources (neighbor.cpp).
Degrees group_degrees(MPI_Comm comm) {
  const int n = group(comm).peers;
  return {n, n};
}
template <auto F, auto FC, Degrees (*Peers)(MPI_Comm) = group_degrees, class... T>
int allgatherv_c(const void* sb, MPI_Count sc, MPI_Datatype st, void* rb, const MPI_Count rcs[], const MPI_Aint ds[],
                 MPI_Datatype rt, MPI_Comm comm, T... tail) {
  auto a = std::make_shared<Arrays>();
  const int n = Peers(comm).recv;
  Counts k;
  const int s = k.take(sc, sb != MPI_IN_PLACE);
  if (!k.ok || !(*a)[0].counts(rcs, n, true) || !(*a)[1].displs(ds, n, true))
    return FC(sb, sc, st, rb, rcs, ds, rt, comm, tail...);
  return kept(F(sb, s, st, rb, (*a)[0].out, (*a)[1].out, rt, comm, tail...), a, tail...);
}
// Alltoallv (D = MPI_Datatype) and Alltoallw (D = const MPI_Datatype*): the same arrays.
template <auto F, auto FC, class D, Degrees (*Peers)(MPI_Comm) = group_degrees, class... T>
int alltoallvw_c(const void* sb, const MPI_Count scs[], const MPI_Aint sds[], D st, void* rb, const MPI_Count rcs[],
                 const MPI_Aint rds[], D rt, MPI_Comm comm, T... tail) {
  auto a = std::make_shared<Arrays>();
  Arrays& x = *a;
  const Degrees n = Peers(comm);
  const bool sends = sb != MPI_IN_PLACE;
  if (!x[0].counts(scs, n.send, sends) || !x[1].displs(sds, n.send, sends) || !x[2].counts(rcs, n.recv, true) ||
      !x[3].displs(rds, n.recv, true))
    return FC(sb, scs, sds, st, rb, rcs, rds, rt, comm, tail...);
  return kept(F(sb, x[0].out, x[1].out, st, rb, x[2].out, x[3].out, rt, comm, tail...), a, tail...);
}
// Neighbor_alltoallw: counts narrowed, byte displacements MPI_Aint in both forms.
template <auto F, auto FC, class... T>
int neighbor_alltoallw_c(const void* sb, const MPI_Count scs[], const MPI_Aint sds[], const MPI_Datatype sts[],
                         void* rb, const MPI_Count rcs[], const MPI_Aint rds[], const MPI_Datatype rts[], MPI_Comm comm,
                         T... tail) {
  auto a = std::make_shared<Arrays>();
  Arrays& x = *a;
  const Degrees n = neighbor_degrees(comm);
  if (!x[0].counts(scs, n.send, true) || !x[2].counts(rcs, n.recv, true))
    return FC(sb, scs, sds, sts, rb, rcs, rds, rts, comm, tail...);
  return kept(F(sb, x[0].out, sds, sts, rb, x[2].out, rds, rts, comm, tail...), a, tail...);
}

}  // namespace

extern "C" {

int MPI_Bcast_c(void* buf, MPI_Count count, MPI_Datatype dt, int root, MPI_Comm comm) {
  if (fits(count)) return MPI_Bcast(buf, static_cast<int>(count), dt, root, comm);
  return PMPI_Bcast_c(buf, count, dt, root, comm);
}
int MPI_Ibcast_c(void* buf, MPI_Count count, MPI_Datatype dt, int root, MPI_Comm comm, MPI_Request* req) {
  if (fits(count)) return MPI_Ibcast(buf, static_cast<int>(count), dt, root, comm, req);
  return PMPI_Ibcast_c(buf, count, dt, root, comm, req);
}

int MPI_Gather_c(const void* sb, MPI_Count sc, MPI_Datatype st, void* rb, MPI_Count rc, MPI_Datatype rt,
                 int root, MPI_Comm comm) {
  return rooted_c<MPI_Gather, PMPI_Gather_c, true>(sb, sc, st, rb, rc, rt, root, comm);
}
int MPI_Igather_c(const void* sb, MPI_Count sc, MPI_Datatype st, void* rb, MPI_Count rc, MPI_Datatype rt,
                  int root, MPI_Comm comm, MPI_Request* req) {
  return rooted_c<MPI_Igather, PMPI_Igather_c, true>(sb, sc, st, rb, rc, rt, root, comm, req);
}
int MPI_Scatter_c(const void* sb, MPI_Count sc, MPI_Datatype st, void* rb, MPI_Count rc, MPI_Datatype rt,
                  int root, MPI_Comm comm) {
  return rooted_c<MPI_Scatter, PMPI_Scatter_c, false>(sb, sc, st, rb, rc, rt, root, comm);
}
int MPI_Iscatter_c(const void* sb, MPI_Count sc, MPI_Datatype st, void* rb, MPI_Count rc, MPI_Datatype rt,
                   int root, MPI_Comm comm, MPI_Request* req) {
  return rooted_c<MPI_Iscatter, PMPI_Iscatter_c, false>(sb, sc, st, rb, rc, rt, root, comm, req);
}
int MPI_Allgather_c(const void* sb, MPI_Count sc, MPI_Datatype st, void* rb, MPI_Count rc, MPI_Datatype rt,
                    MPI_Comm comm) {
  return all_c<MPI_Allgather, PMPI_Allgather_c>(sb, sc, st, rb, rc, rt, comm);
}
int MPI_Iallgather_c(const void* sb, MPI_Count sc, MPI_Datatype st, void* rb, MPI_Count rc, MPI_Datatype rt,
                     MPI_Comm comm, MPI_Request* req) {
  return all_c<MPI_Iallgather, PMPI_Iallgather_c>(sb, sc, st, rb, rc, rt, comm, req);
}
int MPI_Alltoall_c(const void* sb, MPI_Count sc, MPI_Datatype st, void* rb, MPI_Count rc, MPI_Datatype rt,
                   MPI_Comm comm) {
  return all_c<MPI_Alltoall, PMPI_Alltoall_c>(sb, sc, st, rb, rc, rt, comm);
}
int MPI_Ialltoall_c(const void* sb, MPI_Count sc, MPI_Datatype st, void* rb, MPI_Count rc, MPI_Datatype rt,
                    MPI_Comm comm, MPI_Request* req) {
  return all_c<MPI_Ialltoall, PMPI_Ialltoall_c>(sb, sc, st, rb, rc, rt, comm, req);
}

// The v-forms.
int MPI_Gatherv_c(const void* sb, MPI_Count sc, MPI_Datatype st, void* rb, const MPI_Count rcs[], const MPI_Aint ds[],
                  MPI_Datatype rt, int root, MPI_Comm comm) {
  return gatherv_c<MPI_Gatherv, PMPI_Gatherv_c>(sb, sc, st, rb, rcs, ds, rt, root, comm);
}
int MPI_Igatherv_c(const void* sb, MPI_Count sc, MPI_Datatype st, void* rb, const MPI_Count rcs[], const MPI_Aint ds[],
                   MPI_Datatype rt, int root, MPI_Comm comm, MPI_Request* req) {
  return gatherv_c<MPI_Igatherv, PMPI_Igatherv_c>(sb, sc, st, rb, rcs, ds, rt, root, comm, req);
}
int MPI_Scatterv_c(const void* sb, const MPI_Count scs[], const MPI_Aint ds[], MPI_Datatype st, void* rb, MPI_Count rc,
                   MPI_Datatype rt, int root, MPI_Comm comm) {
  return scatterv_c<MPI_Scatterv, PMPI_Scatterv_c>(sb, scs, ds, st, rb, rc, rt, root, comm);
}
int MPI_Iscatterv_c(const void* sb, const MPI_Count scs[], const MPI_Aint ds[], MPI_Datatype st, void* rb,
                    MPI_Count rc, MPI_Datatype rt, int root, MPI_Comm comm, MPI_Request* req) {
  return scatterv_c<MPI_Iscatterv, PMPI_Iscatterv_c>(sb, scs, ds, st, rb, rc, rt, root, comm, req);
}
int MPI_Allgatherv_c(const void* sb, MPI_Count sc, MPI_Datatype st, void* rb, const MPI_Count rcs[],
                     const MPI_Aint ds[], MPI_Datatype rt, MPI_Comm comm) {
  return allgatherv_c<MPI_Allgatherv, PMPI_Allgatherv_c>(sb, sc, st, rb, rcs, ds, rt, comm);
}
int MPI_Iallgatherv_c(const void* sb, MPI_Count sc, MPI_Datatype st, void* rb, const MPI_Count rcs[],
                      const MPI_Aint ds[], MPI_Datatype rt, MPI_Comm comm, MPI_Request* req) {
  return allgatherv_c<MPI_Iallgatherv, PMPI_Iallgatherv_c>(sb, sc, st, rb, rcs, ds, rt, comm, req);
}
int MPI_Alltoallv_c(const void* sb, const MPI_Count scs[], const MPI_Aint sds[], MPI_Datatype st, void* rb,
                    const MPI_Count rcs[], const MPI_Aint rds[], MPI_Datatype rt, MPI_Comm comm) {
  return alltoallvw_c<MPI_Alltoallv, PMPI_Alltoallv_c>(sb, scs, sds, st, rb, rcs, rds, rt, comm);
}
int MPI_Ialltoallv_c(const void* sb, const MPI_Count scs[], const MPI_Aint sds[], MPI_Datatype st, void* rb,
                     const MPI_Count rcs[], const MPI_Aint rds[], MPI_Datatype rt, MPI_Comm comm, MPI_Request* req) {
  return alltoallvw_c<MPI_Ialltoallv, PMPI_Ialltoallv_c>(sb, scs, sds, st, rb, rcs, rds, rt, comm, req);
}
int MPI_Alltoallw_c(const void* sb, const MPI_Count scs[], const MPI_Aint sds[], const MPI_Datatype sts[], void* rb,
                    const MPI_Count rcs[], const MPI_Aint rds[], const MPI_Datatype rts[], MPI_Comm comm) {
  return alltoallvw_c<MPI_Alltoallw, PMPI_Alltoallw_c>(sb, scs, sds, sts, rb, rcs, rds, rts, comm);
}
int MPI_Ialltoallw_c(const void* sb, const MPI_Count scs[], const MPI_Aint sds[], const MPI_Datatype sts[], void* rb,
                     const MPI_Count rcs[], const MPI_Aint rds[], const MPI_Datatype rts[], MPI_Comm comm,
                     MPI_Request* req) {
  return alltoallvw_c<MPI_Ialltoallw, PMPI_Ialltoallw_c>(sb, scs, sds, sts, rb, rcs, rds, rts, comm, req);
}


// The neighborhood collectives.
int MPI_Neighbor_allgather_c(const void* sb, MPI_Count sc, MPI_Datatype st, void* rb, MPI_Count rc, MPI_Datatype rt,
                             MPI_Comm comm) {
  return all_c<MPI_Neighbor_allgather, PMPI_Neighbor_allgather_c>(sb, sc, st, rb, rc, rt, comm);
}
int MPI_Ineighbor_allgather_c(const void* sb, MPI_Count sc, MPI_Datatype st, void* rb, MPI_Count rc, MPI_Datatype rt,
                              MPI_Comm comm, MPI_Request* req) {
  return all_c<MPI_Ineighbor_allgather, PMPI_Ineighbor_allgather_c>(sb, sc, st, rb, rc, rt, comm, req);
}
int MPI_Neighbor_alltoall_c(const void* sb, MPI_Count sc, MPI_Datatype st, void* rb, MPI_Count rc, MPI_Datatype rt,
                            MPI_Comm comm) {
  return all_c<MPI_Neighbor_alltoall, PMPI_Neighbor_alltoall_c>(sb, sc, st, rb, rc, rt, comm);
}
int MPI_Ineighbor_alltoall_c(const void* sb, MPI_Count sc, MPI_Datatype st, void* rb, MPI_Count rc, MPI_Datatype rt,
                             MPI_Comm comm, MPI_Request* req) {
  return all_c<MPI_Ineighbor_alltoall, PMPI_Ineighbor_alltoall_c>(sb, sc, st, rb, rc, rt, comm, req);
}
int MPI_Neighbor_allgatherv_c(const void* sb, MPI_Count sc, MPI_Datatype st, void* rb, const MPI_Count rcs[],
                              const MPI_Aint ds[], MPI_Datatype rt, MPI_Comm comm) {
  return allgatherv_c<MPI_Neighbor_allgatherv, PMPI_Neighbor_allgatherv_c, neighbor_degrees>(sb, sc, st, rb, rcs, ds,
                                                                                               rt, comm);
}
int MPI_Ineighbor_allgatherv_c(const void* sb, MPI_Count sc, MPI_Datatype st, void* rb, const MPI_Count rcs[],
                               const MPI_Aint ds[], MPI_Datatype rt, MPI_Comm comm, MPI_Request* req) {
  return allgatherv_c<MPI_Ineighbor_allgatherv, PMPI_Ineighbor_allgatherv_c, neighbor_degrees>(sb, sc, st, rb, rcs,
                                                                                                 ds, rt, comm, req);
}
int MPI_Neighbor_alltoallv_c(const void* sb, const MPI_Count scs[], const MPI_Aint sds[], MPI_Datatype st, void* rb,
                             const MPI_Count rcs[], const MPI_Aint rds[], MPI_Datatype rt, MPI_Comm comm) {
  return alltoallvw_c<MPI_Neighbor_alltoallv, PMPI_Neighbor_alltoallv_c, MPI_Datatype, neighbor_degrees>(
      sb, scs, sds, st, rb, rcs, rds, rt, comm);
}
int MPI_Ineighbor_alltoallv_c(const void* sb, const MPI_Count scs[], const MPI_Aint sds[], MPI_Datatype st, void* rb,
                              const MPI_Count rcs[], const MPI_Aint rds[], MPI_Datatype rt, MPI_Comm comm,
                              MPI_Request* req) {
  return alltoallvw_c<MPI_Ineighbor_alltoallv, PMPI_Ineighbor_alltoallv_c, MPI_Datatype, neighbor_degrees>(
      sb, scs, sds, st, rb, rcs, rds, rt, comm, req);
}
int MPI_Neighbor_alltoallw_c(const void* sb, const MPI_Count scs[], const MPI_Aint sds[], const MPI_Datatype sts[],
                             void* rb, const MPI_Count rcs[], const MPI_Aint rds[], const MPI_Datatype rts[],
                             MPI_Comm comm) {
  return neighbor_alltoallw_c<MPI_Neighbor_alltoallw, PMPI_Neighbor_alltoallw_c>(sb, scs, sds, sts, rb, rcs, rds, rts,
                                                                                  comm);
}
int MPI_Ineighbor_alltoallw_c(const void* sb, const MPI_Count scs[], const MPI_Aint sds[], const MPI_Datatype sts[],
                              void* rb, const MPI_Count rcs[], const MPI_Aint rds[], const MPI_Datatype rts[],
                              MPI_Comm comm, MPI_Request* req) {
  return neighbor_alltoallw_c<MPI_Ineighbor_alltoallw, PMPI_Ineighbor_alltoallw_c>(sb, scs, sds, sts, rb, rcs, rds,
                                                                                    rts, comm, req);
}

// The persistent forms (MPI 4's _init_c): the trailing info and request.
int MPI_Bcast_init_c(void* buf, MPI_Count count, MPI_Datatype dt, int root, MPI_Comm comm, MPI_Info info,
                     MPI_Request* req) {
  if (fits(count)) return MPI_Bcast_init(buf, static_cast<int>(count), dt, root, comm, info, req);
  return PMPI_Bcast_init_c(buf, count, dt, root, comm, info, req);
}
int MPI_Gather_init_c(const void* sb, MPI_Count sc, MPI_Datatype st, void* rb, MPI_Count rc, MPI_Datatype rt, int root,
                      MPI_Comm comm, MPI_Info info, MPI_Request* req) {
  return rooted_c<MPI_Gather_init, PMPI_Gather_init_c, true>(sb, sc, st, rb, rc, rt, root, comm, info, req);
}
int MPI_Scatter_init_c(const void* sb, MPI_Count sc, MPI_Datatype st, void* rb, MPI_Count rc, MPI_Datatype rt,
                       int root, MPI_Comm comm, MPI_Info info, MPI_Request* req) {
  return rooted_c<MPI_Scatter_init, PMPI_Scatter_init_c, false>(sb, sc, st, rb, rc, rt, root, comm, info, req);
}
int MPI_Allgather_init_c(const void* sb, MPI_Count sc, MPI_Datatype st, void* rb, MPI_Count rc, MPI_Datatype rt,
                         MPI_Comm comm, MPI_Info info, MPI_Request* req) {
  return all_c<MPI_Allgather_init, PMPI_Allgather_init_c>(sb, sc, st, rb, rc, rt, comm, info, req);
}
int MPI_Alltoall_init_c(const void* sb, MPI_Count sc, MPI_Datatype st, void* rb, MPI_Count rc, MPI_Datatype rt,
                        MPI_Comm comm, MPI_Info info, MPI_Request* req) {
  return all_c<MPI_Alltoall_init, PMPI_Alltoall_init_c>(sb, sc, st, rb, rc, rt, comm, info, req);
}
int MPI_Gatherv_init_c(const void* sb, MPI_Count sc, MPI_Datatype st, void* rb, const MPI_Count rcs[],
                       const MPI_Aint ds[], MPI_Datatype rt, int root, MPI_Comm comm, MPI_Info info, MPI_Request* req) {
  return gatherv_c<MPI_Gatherv_init, PMPI_Gatherv_init_c>(sb, sc, st, rb, rcs, ds, rt, root, comm, info, req);
}
int MPI_Scatterv_init_c(const void* sb, const MPI_Count scs[], const MPI_Aint ds[], MPI_Datatype st, void* rb,
                        MPI_Count rc, MPI_Datatype rt, int root, MPI_Comm comm, MPI_Info info, MPI_Request* req) {
  return scatterv_c<MPI_Scatterv_init, PMPI_Scatterv_init_c>(sb, scs, ds, st, rb, rc, rt, root, comm, info, req);
}
int MPI_Allgatherv_init_c(const void* sb, MPI_Count sc, MPI_Datatype st, void* rb, const MPI_Count rcs[],
                          const MPI_Aint ds[], MPI_Datatype rt, MPI_Comm comm, MPI_Info info, MPI_Request* req) {
  return allgatherv_c<MPI_Allgatherv_init, PMPI_Allgatherv_init_c>(sb, sc, st, rb, rcs, ds, rt, comm, info, req);
}
int MPI_Alltoallv_init_c(const void* sb, const MPI_Count scs[], const MPI_Aint sds[], MPI_Datatype st, void* rb,
                         const MPI_Count rcs[], const MPI_Aint rds[], MPI_Datatype rt, MPI_Comm comm, MPI_Info info,
                         MPI_Request* req) {
  return alltoallvw_c<MPI_Alltoallv_init, PMPI_Alltoallv_init_c>(sb, scs, sds, st, rb, rcs, rds, rt, comm, info, req);
}
int MPI_Alltoallw_init_c(const void* sb, const MPI_Count scs[], const MPI_Aint sds[], const MPI_Datatype sts[],
                         void* rb, const MPI_Count rcs[], const MPI_Aint rds[], const MPI_Datatype rts[], MPI_Comm comm,
                         MPI_Info info, MPI_Request* req) {
  return alltoallvw_c<MPI_Alltoallw_init, PMPI_Alltoallw_init_c>(sb, scs, sds, sts, rb, rcs, rds, rts, comm, info,
                                                                  req);
}
int MPI_Neighbor_allgather_init_c(const void* sb, MPI_Count sc, MPI_Datatype st, void* rb, MPI_Count rc,
                                  MPI_Datatype rt, MPI_Comm comm, MPI_Info info, MPI_Request* req) {
  return all_c<MPI_Neighbor_allgather_init, PMPI_Neighbor_allgather_init_c>(sb, sc, st, rb, rc, rt, comm, info, req);
}
int MPI_Neighbor_alltoall_init_c(const void* sb, MPI_Count sc, MPI_Datatype st, void* rb, MPI_Count rc,
                                 MPI_Datatype rt, MPI_Comm comm, MPI_Info info, MPI_Request* req) {
  return all_c<MPI_Neighbor_alltoall_init, PMPI_Neighbor_alltoall_init_c>(sb, sc, st, rb, rc, rt, comm, info, req);
}
int MPI_Neighbor_allgatherv_init_c(const void* sb, MPI_Count sc, MPI_Datatype st, void* rb, const MPI_Count rcs[],
                                   const MPI_Aint ds[], MPI_Datatype rt, MPI_Comm comm, MPI_Info info,
                                   MPI_Request* req) {
  return allgatherv_c<MPI_Neighbor_allgatherv_init, PMPI_Neighbor_allgatherv_init_c, neighbor_degrees>(
      sb, sc, st, rb, rcs, ds, rt, comm, info, req);
}
int MPI_Neighbor_alltoallv_init_c(const void* sb, const MPI_Count scs[], const MPI_Aint sds[], MPI_Datatype st,
                                  void* rb, const MPI_Count rcs[], const MPI_Aint rds[], MPI_Datatype rt, MPI_Comm comm,
                                  MPI_Info info, MPI_Request* req) {
  return alltoallvw_c<MPI_Neighbor_alltoallv_init, PMPI_Neighbor_alltoallv_init_c, MPI_Datatype, neighbor_degrees>(
      sb, scs, sds, st, rb, rcs, rds, rt, comm, info, req);
}
int MPI_Neighbor_alltoallw_init_c(const void* sb, const MPI_Count scs[], const MPI_Aint sds[], const MPI_Datatype sts[],
                                  void* rb, const MPI_Count rcs[], const MPI_Aint rds[], const MPI_Datatype rts[],
                                  MPI_Comm comm, MPI_Info info, MPI_Request* req) {
  return neighbor_alltoallw_c<MPI_Neighbor_alltoallw_init, PMPI_Neighbor_alltoallw_init_c>(sb, scs, sds, sts, rb, rcs,
                                                                                            rds, rts, comm, info, req);
}

}  // extern "C"

#endif  // MPI_VERSION >= 4
