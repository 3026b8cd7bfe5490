// The MPI interposer (libddtkit-mpi.so): shared declarations of its parts.
//
// The application keeps the real MPI's datatype handles: the real MPI builds every type, so
// get_envelope/get_contents, names, attributes and every function we do not intercept keep
// answering as that MPI does. Beside each committed derived type we keep a ddtkit type
// translated from it (types.cpp) with the real MPI's lb and extent imposed, and data movement
// goes through ddtkit: a contiguous layout is sent straight from the user's buffer as bytes,
// any other layout is packed into a pooled buffer and sent as bytes, and received bytes are
// unpacked when the operation completes (requests.cpp). The real MPI is reached through its
// profiling interface (PMPI_*) only, so this file compiles against any mpi.h; the library is
// built once per MPI because handles and constants differ between MPI ABIs.
#pragma once
#include <mpi.h>

#include <atomic>
#include <climits>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <vector>

#include "ddtkit.h"
#include "util/buffer_pool.hpp"

namespace ddtmpi {

// An MPI handle (an int in MPICH, a pointer in Open MPI) as a hash key.
template <class Handle>
uint64_t handle_key(Handle h) {
  static_assert(sizeof(Handle) <= sizeof(uint64_t), "handles fit in 64 bits");
  uint64_t k = 0;
  std::memcpy(&k, &h, sizeof h);
  return k;
}

// What every intercepted call reads before it decides anything, kept as plain globals that the
// inline accessors below read in one load each. As functions with a function-local static each
// (a guard check and a call), disabled(), tickets_pending(), local_on() and peek() took 127 of
// the interposer's 219 instructions per round trip of a 1-byte MPI_BYTE ping-pong under Open
// MPI (callgrind, one rank, the difference between 20,000 and 60,000 round trips).
struct Hot {
  std::atomic<int8_t> disabled{-1};      // DDTKIT_DISABLE, read at the first call (-1: not yet)
  std::atomic<bool> local_on{false};     // local.cpp: the runtime is on (local_init)
  std::atomic<size_t> tickets{0};        // requests.cpp: receives that may hold a ticket
  std::atomic<size_t> live{0};           // requests.cpp: requests with work attached or adopted
  std::atomic<int8_t> device_mode{0};    // device.cpp's mode: 0 when no buffer can be on a device
  // p2p.cpp's route, for the fast paths (0 until the first route: no fast path before):
  std::atomic<int64_t> route_below{0};   // bytes below which no send of a count the pass rule
                                         // hands over as it is takes the runtime, except that
  std::atomic<int64_t> route_min{0};     // from these bytes on, one of a small_pieces type may
  std::atomic<int64_t> contig_below{0};  // bytes below which no Contig type's send takes it
  std::atomic<uint64_t> generation{1};   // types.cpp: bumped by every change of the type cache
                                         // (from 1: a zeroed PeekHit matches no generation)
  std::atomic<uint64_t> comms{1};        // local.cpp: bumped by forget_comm (from 1: a zeroed
                                         // LocalHit matches none)
};
extern Hot hot;

// DDTKIT_DISABLE=1: every intercepted function forwards straight to the real MPI.
// DDTKIT_PASS_BLOCK=B (MPICH only): messages of 64 KiB and more of monotone types whose mean
//   contiguous piece is at least B bytes go to the MPI as they are (default 2048; 0: never).
//   Open MPI has its own rule. See pass.cpp.
// DDTKIT_VERBOSE=1: one line on stderr per datatype: what the interposer does with it.
bool read_disabled();  // the first call's: reads the environment into hot.disabled
inline bool disabled() {
  const int8_t d = hot.disabled.load(std::memory_order_relaxed);
  return d >= 0 ? d != 0 : read_disabled();
}
bool verbose();
int64_t pass_block_bytes();

// The contiguous pieces of count elements of t from stream offset 0 on, in stream order, as
// ddt_iov lists them (merged, 256 per call); f(base, len) with base relative to a null buffer.
template <class F>
void each_piece(ddt_type t, int64_t count, int64_t total_bytes, F f) {
  struct iovec iov[256];
  int64_t off = 0, got, bytes;
  while (off < total_bytes && ddt_iov(nullptr, count, t, off, iov, 256, &got, &bytes) == DDT_SUCCESS && bytes > 0) {
    for (int64_t i = 0; i < got; ++i) f(reinterpret_cast<uintptr_t>(iov[i].iov_base), iov[i].iov_len);
    off += bytes;
  }
}

// What the interposer knows of one MPI datatype.
struct TypeInfo {
  enum Mode { Pass, Contig, Pack } mode = Pass;  // Pass: hand the call to the MPI unchanged
  ddt_type t = DDT_TYPE_NULL;  // Contig and Pack: the translation, with the MPI's bounds
  int64_t size = 0, extent = 0;  // size: every type's (Pass ones as the MPI reports it)
  int64_t offset = 0;          // Contig: where the data of element 0 starts, from buf
  int64_t mean_block = 0;      // Pack: packed bytes per contiguous piece of one element
  bool monotone = false;       // Pack: pieces ascend without overlap, elements do not overlap
  int64_t pieces = 0;          // Pack: contiguous pieces of one element
  // Pack, not monotone: the largest count whose elements were found not to share a byte.
  mutable std::atomic<int64_t> disjoint_upto{0};
  // Pack: the count of the last send of this type that went to the MPI as it is (the pass rule
  // held for that count: a function of the type and the count alone), -1 before any; p2p.cpp's
  // plain_send lets the next send of that count skip the decision.
  mutable std::atomic<int64_t> as_is_count{-1};
  bool x87 = false;            // holds an x87 long double (10 value bytes in a 16-byte slot)
  bool aligned = false;        // Pack: see naturally_aligned (pass.cpp)
  bool parts = false;          // Pack: a struct over several multi-piece members (struct_of_parts)
  int64_t unit = 0;            // Pack: its largest basic element's size, at most 16 (naturally_aligned)
  bool named = false;          // a predefined type (Pass): its data is the buffer's bytes
  // Pack: where the first 16 packed bytes of a message lie from its buffer, in head_n pieces
  // (0: not known), so that a receive of 64 bytes can tell a ticket's magic from data without
  // packing the message (local_transfer.cpp: maybe_ticket).
  int head_n = 0;
  int64_t head_off[16] = {};
  uint8_t head_len[16] = {};
  ~TypeInfo() { if (t) ddt_type_free(&t); }
};
using TypeRef = std::shared_ptr<const TypeInfo>;

// The interposer's view of a datatype (translated and cached on first use; predefined types
// and types it cannot translate are Pass).
TypeRef lookup(MPI_Datatype dt);
// The same view without taking a reference, for deciding at the top of a call: valid while dt
// is not freed, so for the call that names it. A TypeRef copy is an atomic increment and
// decrement, which perf found to be most of MPI_Send's own time in a 1-byte MPI_BYTE ping-pong
// under Open MPI (the interposer then cost 10% of the round trip).
const TypeInfo& peek_slow(MPI_Datatype dt);
// The last peek of this thread, valid while the cache's generation is the one it was made in:
// every entry that generation holds stays in the cache until the next change (which bumps it).
// Trivial and zero-initialised (generation 0, which the cache never has), and declared __thread,
// not thread_local: another file's reference to an extern thread_local calls the variable's TLS
// init function first (and made MPI_Recv set up a stack frame for that call).
struct PeekHit {
  uint64_t key, generation;
  const TypeInfo* info;
};
extern __thread PeekHit last_peek __attribute__((tls_model("initial-exec")));
// The last peek's answer where it is dt's, else null: loads and compares only, no call.
inline const TypeInfo* peek_hit(MPI_Datatype dt) {
  const PeekHit& h = last_peek;
  return h.key == handle_key(dt) && h.generation == hot.generation.load(std::memory_order_acquire) ? h.info : nullptr;
}
inline const TypeInfo& peek(MPI_Datatype dt) {
  const TypeInfo* hit = peek_hit(dt);
  return hit ? *hit : peek_slow(dt);
}
// ddtkit's twin of a predefined type both libraries know (MPI_DOUBLE: DDT_DOUBLE), else
// DDT_TYPE_NULL.
ddt_type predefined_type(MPI_Datatype dt);
// A predefined type as a contiguous translation (Contig, t its twin), for the runtime's way of
// large same-node messages (p2p.cpp); null where the type has no twin or its size is not its
// extent.
TypeRef predefined_info(MPI_Datatype dt);
// The true bounds of a derived type's data, as ddtkit computes them from the typemap (the
// committed translation, or one made for this call and not kept); false for predefined types,
// types without data and types ddtkit cannot translate, which the MPI answers (hooks.cpp says why).
bool true_bounds(MPI_Datatype dt, int64_t* lb, int64_t* extent);
// Called from MPI_Type_commit and MPI_Type_free.
void on_commit(MPI_Datatype dt);
void on_free(MPI_Datatype dt);

// Staging memory: a buffer from the process-wide pool of reused allocations
// (src/util/buffer_pool.hpp), which the intra-node runtime shares.
using Buffer = ddt::PooledBuffer;

// One side of a data movement, as the interposer performs it: (buf, count, type) becomes
// (data, bytes, MPI_BYTE) where the type is Contig or Pack; otherwise (predefined or
// untranslatable type, or more than INT_MAX bytes) the MPI gets the user's arguments unchanged.
struct Side {
  TypeRef info;                // set when converted
  const void* user = nullptr;  // the user's buffer
  int64_t count = 0;
  MPI_Datatype dt = MPI_DATATYPE_NULL;
  int64_t bytes = 0;           // packed bytes of count elements
  void* data = nullptr;        // what the MPI is given: the user's bytes or staging.data()
  Buffer staging;
  bool device = false;         // the user's buffer is GPU memory: always staged (device.cpp)
  bool converted() const { return info != nullptr; }
  // Not converted: the MPI gets exactly these arguments.
  void as_is(const void* b, int64_t c, MPI_Datatype t) { user = b, count = c, dt = t; }
  // The arguments for the MPI call.
  void* buf() const { return converted() ? data : const_cast<void*>(user); }
  int n() const { return static_cast<int>(converted() ? bytes : count); }
  MPI_Datatype type() const { return converted() ? MPI_BYTE : dt; }
};

// Device buffers (device.cpp): decided once at MPI_Init; whether count elements of t (the
// translation; null: the bytes at p) at p take the device buffers' way.
void device_init();
bool device_buffer(const void* p, int64_t count, ddt_type t);

// Whether count elements of a type at buf go to the MPI as they are (prepare_send and
// prepare_recv would leave the side unconverted): a Pass type, a byte count past an int, or the
// pass rule's message outside GPU memory.
bool stays_as_is(const TypeInfo& ti, const void* buf, int64_t count);
// The arguments the MPI gets for a side that needs no Side (the blocking and non-blocking calls'
// shortcut, p2p.cpp): the user's as they are (stays_as_is), or a Contig type's bytes as MPI_BYTE
// outside GPU memory; what prepare_send and prepare_recv would make of them. False otherwise.
struct Direct {
  void* buf;
  int count;
  MPI_Datatype type;
};
bool direct(const TypeInfo& ti, const void* buf, int count, MPI_Datatype dt, Direct* out);
// Prepares a send side: packs (buf, count, dt) into staging when the type needs it (not yet
// when pack_now is false: persistent sends pack at each start). Returns an MPI error code
// (MPI_SUCCESS when it is ready or passes through). refused: dt's info where direct() has just
// refused this very message, so that the pass rules are not asked twice (callgrind, a staged
// 2 KiB vector under MPICH: 2,098 -> 1,909 of the interposer's instructions per round trip).
int prepare_send(Side& s, const void* buf, int64_t count, MPI_Datatype dt, bool pack_now = true,
                 const TypeInfo* refused = nullptr);
// Packs the user's data again (persistent sends, at each start).
int repack(Side& s);
// Prepares a receive side: staging of count elements' packed size when the type needs it
// (refused: as prepare_send's).
int prepare_recv(Side& s, void* buf, int64_t count, MPI_Datatype dt, const TypeInfo* refused = nullptr);
// Unpacks the first `bytes` received bytes into the user's buffer (no-op when not staged).
int finish_recv(const Side& s, int64_t bytes);
// Bytes a completed receive delivered (from its status).
int64_t received_bytes(const MPI_Status& st);
// Checks once, after the MPI has started, whether received_bytes may read statuses' fields
// directly (side.cpp); until then, and where they disagree, it asks the MPI.
void status_init();

// Work attached to an MPI request. `complete` runs once per activation when the request
// completes (a receive unpacks, or takes the message a ticket stands for and sets the status's
// count; its closure also owns the staging buffer, which is released with it). For persistent
// requests `start` runs before each MPI_Start (a send packs, or posts in the runtime).
//
// `busy`, where set, says whether work remains that the MPI does not see (a send through the
// runtime, whose MPI request is only its ticket: complete in the MPI long before the receiver has
// copied), progressing it: while busy, the request is not complete, and the completion functions
// neither ask the MPI about it nor let the MPI free it (requests.cpp).
struct Pending {
  std::function<int(MPI_Status&)> complete;
  std::function<int()> start;
  std::function<bool()> busy;
  std::function<int()> cancel;  // where set, MPI_Cancel runs it instead of the MPI's (isendrecv.cpp)
  bool persistent = false;
  bool active = true;      // persistent: between MPI_Start and completion
  bool delivered = false;  // `complete` already ran this activation (MPI_Request_get_status, a wait loop)
  int delivered_rc = MPI_SUCCESS;  // what it returned then
  MPI_Status delivered_status{};   // and the status it left, given again at the end
  bool ticket = false;     // a receive that may get a ticket (deliver_pending)
  // A persistent receive whose message, this activation, came from the stash (probe.cpp): its
  // `start` returned kStartHeld, so the MPI request was not started, and it completes as an
  // inactive one does (at once, with an empty status that `complete` fills).
  bool held = false;
  MPI_Request req = MPI_REQUEST_NULL;  // its MPI request, as attached
};
using PendingRef = std::shared_ptr<Pending>;
// What a persistent receive's `start` returns when its message is in the stash (Pending::held).
constexpr int kStartHeld = -1;
void attach(MPI_Request req, PendingRef p);
PendingRef find(MPI_Request req);
// Forgets req's work if it is still p (the MPI may reuse a completed request's handle).
void detach(MPI_Request req, const PendingRef& p);
// Runs p's completion for a request that completed with status st (err: its error field).
int complete(MPI_Request before, const PendingRef& p, MPI_Status& st);
// Runs p's completion early for a request that the MPI says is complete but still holds
// (MPI_Request_get_status): marks it delivered and keeps what the final completion must repeat.
int deliver_early(const PendingRef& p, MPI_Status& st);
// A receive whose MPI request has taken a ticket must copy its message before the sender can
// finish; an MPI program may meanwhile block in another call (MPI_Irecv(a); MPI_Recv(b); with the
// peer's MPI_Send(a); MPI_Send(b): the MPI completes the send of a, its receive being posted), so
// the interposer's blocking calls, while any such receive is outstanding (tickets_pending), wait
// by testing and run deliver_pending between tests: every outstanding receive that the MPI has
// completed gets its copy now (its request stays the MPI's; the user's wait or test ends it).
// Under MPI_THREAD_MULTIPLE another thread may be completing the same request, so there it does
// nothing. The interposer's receives, sends, waits (MPI_Wait, MPI_Waitall), MPI_Sendrecv and its
// runtime sends and collectives wait this way. Not the MPI's collectives: a blocking collective
// cannot become a non-blocking one on some ranks only (the standard does not match the two, and
// MPICH hung so), so a process that blocks in MPI_Barrier, say, while its posted receive holds a
// ticket whose blocking sender waits for the copy, hangs with it; and not MPI_Waitany/Waitsome
// over requests without work, nor probes. A fix at the sender (turn the send into a buffered one
// once the receiver is slow to copy) needs the runtime to re-point a posted message.
// No request has work attached, none is adopted, and no receive holds a ticket: the request
// calls (MPI_Wait, MPI_Test, ...) go to the MPI as they are. Loads only, for their fast paths.
inline bool requests_plain() {
  return hot.disabled.load(std::memory_order_relaxed) == 0 && hot.live.load(std::memory_order_relaxed) == 0 &&
         hot.tickets.load(std::memory_order_relaxed) == 0;
}
bool thread_multiple();  // the MPI runs at MPI_THREAD_MULTIPLE (asked once)
inline bool tickets_pending() { return hot.tickets.load(std::memory_order_relaxed) != 0 && !thread_multiple(); }
void deliver_pending();
// A request of its own that is complete already (a generalized request), for a receive whose
// message the interposer holds (a probe stashed it): its Pending delivers at completion. Not a
// receive from MPI_PROC_NULL: both MPIs may hand out one shared handle for those, and the second
// such receive's Pending replaced the first's in the registry (keyed by handle), so a Waitall of
// two stashed messages delivered the second twice and waited for ever in the first's place
// (mpi4py's pkl5 testBigMPI under both MPIs: two matched probes, two MPI_Imrecv, MPI_Waitall).
int completed_request(MPI_Request* req);
// A generalized request's cancel_fn for requests whose cancel the interposer does itself.
int nothing_to_cancel(void*, int);
// The packed bytes of count elements of dt at buf (MPI_Pack, the interposer's), `*bytes` of
// `out`, for a send that must not read the buffer later (MPI_Sendrecv_replace's and
// MPI_Isendrecv_replace's, whose receive overwrites it). Nothing for MPI_PROC_NULL.
int pack_aside(const void* buf, int count, MPI_Datatype dt, int dest, MPI_Comm comm, std::vector<char>& out,
               int* bytes);
#if MPI_VERSION >= 4
// The receives' general ways (p2p.cpp) with MPI 4's large counts, for large_count.cpp's receives
// of more than INT_MAX elements: the stash and tickets as the int forms have them. Not for
// MPI_PROC_NULL or a disabled interposer (the callers hand those to the MPI).
int recv_c(void* buf, MPI_Count count, MPI_Datatype dt, int src, int tag, MPI_Comm comm, MPI_Status* status);
int irecv_c(void* buf, MPI_Count count, MPI_Datatype dt, int src, int tag, MPI_Comm comm, MPI_Request* req);
int recv_init_c(void* buf, MPI_Count count, MPI_Datatype dt, int src, int tag, MPI_Comm comm, MPI_Request* req);
int mrecv_c(void* buf, MPI_Count count, MPI_Datatype dt, MPI_Message* msg, MPI_Status* status);
int imrecv_c(void* buf, MPI_Count count, MPI_Datatype dt, MPI_Message* msg, MPI_Request* req);
// MPI_Isendrecv with large counts (isendrecv.cpp): MPI_Irecv_c and MPI_Isend_c as one request.
int isendrecv_c(const void* sbuf, MPI_Count scount, MPI_Datatype stype, int dest, int stag, void* rbuf,
                MPI_Count rcount, MPI_Datatype rtype, int src, int rtag, MPI_Comm comm, MPI_Request* req);
#endif

// A collective's communicator (collectives.cpp): `peers` is the group the data goes to or comes
// from (the remote group of an intercommunicator).
struct Group {
  bool inter;
  int me, peers;
};
Group group(MPI_Comm comm);
// The two roles of a rooted collective (gather, scatter and their v-forms): the root, which
// sends to or receives from every peer, and a leaf, which sends or receives its own chunk: every
// rank of an intracommunicator (the root too, unless its own buffer is MPI_IN_PLACE), and in an
// intercommunicator the ranks of the group that does not hold the root.
struct Roles {
  bool root, leaf;
};
Roles roles(const Group& g, int root, const void* leaf_buf);
// PMPI_Wait of one request, delivering pending receives meanwhile where tickets_pending().
int wait_delivering(MPI_Request* req, MPI_Status* st);
// Requests the user freed while active: kept here and finished at later calls and at finalize.
void adopt(MPI_Request req, PendingRef p);
void progress_adopted(bool wait);

// Whether every basic element of any number of elements of t lies at a multiple of its own size
// (at most 16) from the buffer address, read from t's constructor history (pass.cpp); *unit, if
// given, gets the largest basic element's size (at most 16).
bool naturally_aligned(ddt_type t, int64_t* unit = nullptr);
// Whether t is a struct of two or more members of several pieces each (pass.cpp).
bool struct_of_parts(ddt_type t);
// The pass rule (pass.cpp). MPICH: whether large messages of this type may go to the MPI as
// they are (the part of the rule that depends on the type only).
bool large_pass_candidate(const TypeInfo& info);
// Whether count elements of a Pack type go to the MPI as they are. MPICH: a candidate type, a
// message of 64 KiB or more, and elements that share no byte. Open MPI: a monotone, naturally
// aligned type without x87 long doubles, and a message of at most 4 MiB. count * info.size must
// not overflow.
bool pass_as_is(const TypeInfo& info, int64_t count);
// Open MPI: a Pack type whose basic elements are 4 bytes or more and whose pieces average 32
// bytes or less, which Open MPI's own path moves slowly up to some KiB (pass.cpp, local.cpp).
// Inline: MPI_Send's fast path asks it, and a call there made MPI_Send set up a stack frame.
constexpr int64_t kOmpiSlowPiece = 32;
// The same size of pieces, of basic elements of any size (chars too).
inline bool short_pieces(const TypeInfo& info) { return info.mean_block <= kOmpiSlowPiece; }
inline bool small_pieces(const TypeInfo& info) { return info.unit >= 4 && short_pieces(info); }

// The first of two MPI return codes that is an error.
inline int first_error(int a, int b) { return a != MPI_SUCCESS ? a : b; }
// An error raised the way the MPI would raise it: through the communicator's error handler
// (errors.cpp).
int raise(MPI_Comm comm, int code);
// ddtkit error code -> MPI error class (errors.cpp).
int mpi_error(int ddt_code);

}  // namespace ddtmpi
