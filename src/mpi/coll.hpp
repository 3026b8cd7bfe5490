// The staged way of the collectives, shared by the global ones (collectives.cpp) and the
// neighborhood ones (neighbor.cpp): each side that needs ddtkit is packed into one staging
// buffer (or handed over as bytes where its layout is contiguous), the MPI moves bytes, and the
// receive side's chunks are unpacked after the MPI call or at the request's completion.
#pragma once
#include <memory>
#include <utility>
#include <vector>

#include "mpi/shim.hpp"

namespace ddtmpi {

// Both sides of one collective call, with the byte counts and displacements handed to the MPI
// (they must outlive a non-blocking call: the MPI may read them until it completes) and the
// ranges of the receive stream to unpack afterwards.
struct Coll {
  Side s, r;
  std::vector<int> sc, sd, rc, rd;                  // byte counts and displacements of v-forms
  std::vector<std::pair<int64_t, int64_t>> ranges;  // (offset, bytes) of r to unpack after
};
using CollRef = std::shared_ptr<Coll>;

// The send side: prepared where this rank sends from it, the user's arguments otherwise (in
// place, or a rank whose send arguments the collective ignores).
int send_side(Side& x, bool sends, const void* buf, int64_t count, MPI_Datatype dt);
// A per-peer count for the MPI: bytes where the side is converted.
int per(const Side& x, int count);
// Elements a v-form buffer spans (max of displ + count), or -1 if a displacement is negative.
int64_t span(int n, const int counts[], const int displs[]);
// v-form arrays in bytes.
void scale(const Side& x, int n, const int counts[], const int displs[], std::vector<int>& c, std::vector<int>& d);
// Packs bytes [off, off + len) of a side's stream into its staging at the same offset.
int pack_range(const Side& x, int64_t off, int64_t len);
// After the MPI call: unpack c's ranges now (blocking) or at completion (req), keeping c alive
// until then. rc: the MPI call's code.
int run(int rc, MPI_Comm comm, MPI_Request* req, CollRef c);

// How many entries a v- or w-form's per-peer arrays have: send (destinations) and receive
// (sources) side. neighbor_degrees: the topology's out- and in-degree (neighbor.cpp), 0 and 0
// for a communicator without one.
struct Degrees {
  int send, recv;
};
Degrees neighbor_degrees(MPI_Comm comm);

// One side of a w-form (one type per peer, byte displacements of type D: int for Alltoallw,
// MPI_Aint for Neighbor_alltoallw). Converted when every peer's type is translated (Contig or
// Pack): its chunks are then packed one after another into one staging buffer and handed to the
// MPI as bytes.
template <class D>
struct WSide {
  std::vector<TypeRef> infos;
  std::vector<int> counts;
  std::vector<D> displs;
  std::vector<MPI_Datatype> types;
  Buffer staging;
  int64_t bytes = 0;
};

template <class D>
bool w_convert(WSide<D>& w, int n, const int counts[], const MPI_Datatype types[]) {
  for (int i = 0; i < n; ++i) {
    TypeRef r = lookup(types[i]);
    if (r->mode == TypeInfo::Pass || counts[i] < 0) return false;
    int64_t b = int64_t(counts[i]) * r->size;
    if (w.bytes + b > INT_MAX) return false;
    w.counts.push_back(static_cast<int>(b));
    w.displs.push_back(static_cast<D>(w.bytes));
    w.types.push_back(MPI_BYTE);
    w.bytes += b;
    w.infos.push_back(std::move(r));
  }
  w.staging = Buffer(w.bytes);
  return w.staging.ok();
}

// Packs peer i's chunk (counts[i] elements at buf + displs[i]) into w's staging, every peer.
template <class D>
int w_pack(WSide<D>& w, const void* buf, const int counts[], const D displs[]) {
  for (size_t i = 0; i < w.infos.size(); ++i) {
    int64_t n;
    int e = ddt_pack(static_cast<const char*>(buf) + displs[i], counts[i], w.infos[i]->t, 0,
                     w.staging.data() + w.displs[i], w.counts[i], &n);
    if (e != DDT_SUCCESS) return mpi_error(e);
  }
  return MPI_SUCCESS;
}

// What a w-form's receive side unpacks at the end: the user's counts and displacements (copied:
// a non-blocking call's arrays may be gone by then), and which peers' chunks the MPI writes.
template <class D>
struct WUnpack {
  std::shared_ptr<WSide<D>> r;
  void* buf;
  std::vector<int> counts;
  std::vector<D> displs;
  std::vector<bool> skip;  // empty: none skipped
  int operator()() const {
    for (size_t i = 0; i < counts.size(); ++i) {
      if (!skip.empty() && skip[i]) continue;
      int64_t n;
      int e = ddt_unpack(r->staging.data() + r->displs[i], r->counts[i], static_cast<char*>(buf) + displs[i], counts[i],
                         r->infos[i]->t, 0, &n);
      if (e != DDT_SUCCESS) return mpi_error(e);
    }
    return MPI_SUCCESS;
  }
};

// After a w-form's MPI call: unpack now (blocking) or at completion, keeping both sides alive.
template <class D>
int w_run(int rc, MPI_Comm comm, MPI_Request* req, std::shared_ptr<WSide<D>> s, bool sconv, bool rconv,
          WUnpack<D> unpack) {
  if (rc != MPI_SUCCESS) return rc;
  if (!req) return rconv ? raise(comm, unpack()) : rc;
  if (sconv || rconv) {
    auto p = std::make_shared<Pending>();
    p->complete = [s, rconv, unpack, comm](const MPI_Status&) { return rconv ? raise(comm, unpack()) : MPI_SUCCESS; };
    attach(*req, std::move(p));
  }
  return rc;
}

}  // namespace ddtmpi
