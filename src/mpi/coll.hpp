// The staged way of the collectives, shared by the global ones (collectives.cpp) and the
// neighborhood ones (neighbor.cpp): each side that needs ddtkit is packed into one staging
// buffer (or handed over as bytes where its layout is contiguous), the MPI moves bytes, and the
// receive side's chunks are unpacked after the MPI call or at the request's completion.
#pragma once
#include <functional>
#include <initializer_list>
#include <memory>
#include <utility>
#include <vector>

#include "mpi/shim.hpp"

namespace ddtmpi {

// How a collective is called: blocking (req null), non-blocking, or persistent (MPI 4's _init
// forms, both MPIs have them): then every packing of the send data runs at each MPI_Start, from
// the user's buffers as they are then, and the unpacking at each completion, until
// MPI_Request_free.
struct How {
  MPI_Request* req = nullptr;
  bool persistent = false;
  MPI_Info info = MPI_INFO_NULL;
};
inline How blocking() { return {}; }
inline How nonblocking(MPI_Request* req) { return {req, false, MPI_INFO_NULL}; }
inline How persistent(MPI_Info info, MPI_Request* req) { return {req, true, info}; }

// The MPI's blocking (B), non-blocking (I) or persistent (P) form of one collective, as h says,
// with the arguments a the three share.
template <auto B, auto I, auto P, class... A>
int mpi_call(const How& h, A... a) {
  if (h.persistent) return P(a..., h.info, h.req);
  return h.req ? I(a..., h.req) : B(a...);
}

// Both sides of one collective call, with the byte counts and displacements handed to the MPI
// (they must outlive a non-blocking call, and a persistent request: the MPI may read them until
// it completes or is freed), the ranges of the receive stream to unpack afterwards, and, for a
// persistent call, the packings each start runs.
struct Coll {
  Side s, r;
  std::vector<int> sc, sd, rc, rd;                  // byte counts and displacements of v-forms
  std::vector<std::pair<int64_t, int64_t>> ranges;  // (offset, bytes) of r to unpack after
  bool persistent = false;
  std::vector<std::function<int()>> starts;  // persistent: run in order at each MPI_Start
  // Runs f (a packing or a copy of send data) now, or, persistent, at every start. f may refer
  // to this Coll (by pointer: it lives as long as the request's work does).
  int now_or_at_start(std::function<int()> f) {
    if (!persistent) return f();
    starts.push_back(std::move(f));
    return MPI_SUCCESS;
  }
};
using CollRef = std::shared_ptr<Coll>;
inline CollRef make_coll(const How& h) {
  auto c = std::make_shared<Coll>();
  c->persistent = h.persistent;
  return c;
}

// Whether every type a call reads or writes is one the MPI moves itself (Pass: predefined, or
// untranslatable): such a call goes to the MPI as it is.
inline bool all_pass(std::initializer_list<MPI_Datatype> used) {
  for (MPI_Datatype dt : used)
    if (peek(dt).mode != TypeInfo::Pass) return false;
  return true;
}

// The send side: prepared where this rank sends from it (packed now or at each start), the
// user's arguments otherwise (in place, or a rank whose send arguments the collective ignores).
int send_side(Coll& c, Side& x, bool sends, const void* buf, int64_t count, MPI_Datatype dt);
// Packs a whole prepared send side, now or at each start.
int pack_side(Coll& c, Side& x);
// A per-peer count for the MPI: bytes where the side is converted.
int per(const Side& x, int count);
// Elements a v-form buffer spans (max of displ + count), or -1 if a displacement is negative.
int64_t span(int n, const int counts[], const int displs[]);
// v-form arrays in bytes.
void scale(const Side& x, int n, const int counts[], const int displs[], std::vector<int>& c, std::vector<int>& d);
// Packs bytes [off, off + len) of a side's stream into its staging at the same offset, now or at
// each start.
int pack_range(Coll& c, Side& x, int64_t off, int64_t len);
// After the MPI call: unpack c's ranges now (blocking) or at completion (h.req), keeping c alive
// until then; a persistent request also runs c's starts at each MPI_Start. rc: the MPI call's
// code.
int run(int rc, MPI_Comm comm, const How& h, CollRef c);
// Attaches a persistent collective's work to its request (also for w-forms): start runs at each
// MPI_Start, complete at each completion; the request owns both until it is freed.
void attach_persistent(MPI_Request req, std::function<int()> start, std::function<int()> complete);

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

// A w-form's packing of its send side (sconv): now, or for a persistent call at each start,
// from the user's counts and displacements as given at the call (copied here: the standard
// keeps them unchanged until the request is freed, but nothing makes the caller keep them).
template <class D>
struct WPack {
  std::shared_ptr<WSide<D>> s;
  const void* buf;
  std::vector<int> counts;
  std::vector<D> displs;
  int operator()() const { return w_pack(*s, buf, counts.data(), displs.data()); }
};

// After a w-form's MPI call: unpack now (blocking) or at completion, keeping both sides alive;
// a persistent request packs at each start.
template <class D>
int w_run(int rc, MPI_Comm comm, const How& h, WPack<D> pack, bool sconv, bool rconv, WUnpack<D> unpack) {
  if (rc != MPI_SUCCESS) return rc;
  if (!h.req) return rconv ? raise(comm, unpack()) : rc;
  if (h.persistent) {
    if (sconv || rconv)
      attach_persistent(
          *h.req, [pack, sconv, comm] { return sconv ? raise(comm, pack()) : MPI_SUCCESS; },
          [unpack, rconv, comm] { return rconv ? raise(comm, unpack()) : MPI_SUCCESS; });
  } else if (sconv || rconv) {
    auto p = std::make_shared<Pending>();
    p->complete = [pack, rconv, unpack, comm](const MPI_Status&) { return rconv ? raise(comm, unpack()) : MPI_SUCCESS; };
    attach(*h.req, std::move(p));
  }
  return rc;
}

}  // namespace ddtmpi
