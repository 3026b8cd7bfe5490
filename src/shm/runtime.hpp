// The runtime's state and the seams between its files:
//   comm.cpp        the public calls, requests, cells in and out, matching, progress, failure;
//   rendezvous.cpp  large messages: the layout exchange designs and the mechanisms that move
//                   the bytes (mapped heap, CMA, pipelined cells) with the cost model between them.
// One thread per process drives all of it (ddtkit.h), so nothing here is locked.
#pragma once
#include <sys/uio.h>

#include <deque>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "cpu/cursor.hpp"
#include "cpu/in_order.hpp"
#include "ddtkit.h"
#include "shm/attach.hpp"
#include "shm/job.hpp"
#include "shm/learn.hpp"
#include "shm/memo.hpp"

struct ddt_request_s {
  bool send = false, done = false;
  const void* sbuf = nullptr;
  void* rbuf = nullptr;
  int64_t count = 0;
  ddt_type type = DDT_TYPE_NULL;
  int peer = 0, tag = 0;
  int64_t bytes = 0;  // send: message bytes; receive: capacity
  uint64_t id = 0;    // key of this request in the live table
  bool tracked = false;  // in the live table now (track / untrack)
  ddt_status status{};
  // send, rendezvous: the exchange design it uses, the receiver's request (from its CTS) and the
  // stream bytes put in data or iov cells so far
  int exchange = DDT_EXCHANGE_MEMOIZED;
  uint64_t rid = 0;
  int64_t sent = 0;
  // receive, rendezvous: what the sender's RTS said, and for an iov exchange whether it reads
  // through the heap (else CMA) and, when naive, the pieces gathered until the last arrives
  uint64_t sid = 0, raddr = 0, rseg = 0;
  // receive, RPUT and COOP: the heap segment holding the receive, offered to the sender and named
  // in the CTS (0: none), so that the sender writes its share through it
  uint64_t wseg = 0;
  int64_t rcount = 0;
  bool via_heap = false, naive = false;
  std::vector<struct iovec> pieces;
  // receive, iov exchange (rendezvous.cpp's pull): the cursor the pieces are copied into, sought
  // once and advanced piece list by piece list (never a fresh walk per list)
  std::unique_ptr<ddt::Cursor> cursor;
  // pipelined: the data cells' bytes come out of the send and go into the receive in order
  // through these (cpu/in_order.hpp: a cursor, or tiles for a transpose)
  std::unique_ptr<ddt::InOrderPack> packer;
  std::unique_ptr<ddt::InOrderUnpack> unpacker;
  // receive: the message's bytes, and the bytes of it delivered so far (pipelined)
  int64_t msg = 0, got = 0;
  // rendezvous protocol, either side (rendezvous.cpp): what the receiver chose for this message
  // (the sender learns it from the CTS); COOP: the receiver copies stream bytes [0, split), the
  // sender the rest. A side completes once share_done (its own copy has run; RPUT's receiver has
  // none) and peer_fin (the other side's FIN has arrived; RPUT's sender waits for none), with
  // share_error the first failure either reported. share_refused (receive): its own CMA read was
  // refused; await_cells (send): its CMA write was: either way the receiver then asks for the
  // whole message in data cells, and the sender ignores the receiver's FIN until those are sent.
  int proto = DDT_PROTO_RGET;
  int64_t split = 0;
  bool share_done = false, peer_fin = false, share_refused = false, await_cells = false;
  int share_error = DDT_SUCCESS;
  // The call that made the request (seed 002's Table II): blocking (send, recv, and the runtime's
  // collectives' blocking calls) or not, and a send's mode (DDT_SEND_*). A detached request is a
  // buffered send's own copy of the message (sbuf from the heap, owned): nobody waits for it, and
  // progress frees it, with its buffer, once it completes.
  bool blocking = false, detached = false;
  int mode = DDT_SEND_STANDARD;
  uint32_t send_flags = 0;  // receive: the RTS's flags (the sender's call)
  // Either side: the stream bytes this process counted in its load counter for this request
  // (COOP-load), uncounted as its copies end or fail; whether its copy runs in chunks and on
  // the second engine too (COOP_HCA), as the protocol's choice said.
  int64_t charged = 0;
  bool chunked = false, engine = false;
  bool share_taken = false;  // send: a CTS has given this side its share (later ones are ignored)
  ddt::shm::MechLearner::Ticket learn;  // receive: its time goes to the mechanism learner (learn.hpp) when it completes
  // send in data cells: whether they are streamed (stream.hpp), chosen at the first cell, and the
  // stream learner's ticket, told when the last cell is written.
  ddt::shm::MechLearner::Ticket stream_ticket;
  bool streamed = false;
  // A buffer the runtime's mechanisms cannot reach (device memory: cpu/device.hpp), staged in host
  // memory (comm.cpp's stage_send / stage_recv): staging holds the packed bytes and the request
  // moves them as bytes; a receive unpacks them into (user_buf, user_count, user_type) when it
  // completes.
  std::vector<char> staging;
  void* user_buf = nullptr;
  int64_t user_count = 0;
  ddt_type user_type = DDT_TYPE_NULL;
  // send: a device buffer offered by CUDA IPC (the RTS carries ipc_desc; the receiver copies
  // from it with one kernel); staged as above only if the receiver asks for the bytes in cells.
  bool ipc = false;
  char ipc_desc[72] = {};  // cpu/device.hpp's kIpcDesc
};

namespace ddt::shm {

// A cell (or, with a body, a run of cells) to write, in order, to one destination.
struct Outgoing {
  explicit Outgoing(CellKind k, ddt_request r = nullptr, uint64_t i = 0, int64_t b = 0) : kind(k), req(r), id(i), bytes(b) {}
  CellKind kind;
  ddt_request req = nullptr;  // eager, rts, data, iov: the send; cts: the receive
  uint64_t id = 0;            // cts, fin: the sender's request; rts resent: the receive
  uint64_t seg = 0;           // rts: the heap segment of the send; cts: of the receive; unmap: freed
  int64_t bytes = 0;          // fin: bytes delivered
  uint32_t flags = 0;
  Hash hash{};
  std::shared_ptr<const std::string> body;  // rts, layout: the serialized layout
  int64_t body_sent = -1;                   // body bytes written; -1: the first cell not yet
};

// A message that arrived before its receive: the header, and the eager bytes or the layout.
struct Unexpected {
  int source;
  CellHeader h;
  std::vector<char> data;
};

// An rts or layout whose body spans cells: gathered until its last kMore arrives.
struct Partial {
  bool active = false;
  CellHeader h{};
  std::vector<char> data;
};

// A receive matched to an RTS whose copy has not run yet (see Runtime::defer).
struct Deferred {
  ddt_request r;
  int source;
  CellHeader h;
  std::vector<char> body;
};

// A copy this process has to make for a rendezvous (its share, or the whole message), run by
// the progress engine: whole, or a chunk at a time when chunked, with cells from every peer read
// between chunks (COOP-chunked). remote is retained by the job (a cache may evict it meanwhile).
struct CopyJob {
  enum Kind { kHeapRead, kCmaRead, kCmaWrite, kHeapWrite } kind;
  ddt_request r;
  int peer;
  ddt_type remote;
  // heap read / write: the local address of the peer's buffer (the send / the receive) in the
  // mapping of its segment; CMA: the peer's address
  uint64_t addr;
  int64_t rcount;
  int64_t from, to, pos;  // stream bytes [from, to); pos: copied up to here
  uint64_t seg = 0;       // heap read / write: the peer's segment (kept mapped until the job ends)
  int error = DDT_SUCCESS;
};

struct Runtime {
  JobHeader* job = nullptr;
  int rank = -1, size = 0;
  // More processes in the job than cores its ranks may run on, all masks together (comm.cpp's
  // judge_cores): a wait yields the core early (comm.cpp's spin), since the peer it waits for may
  // need it, and the protocols balance as on shared cores (protocol.hpp's shared_cores).
  bool oversubscribed = false;
  int mech = DDT_MECH_AUTO, exchange = DDT_EXCHANGE_MEMOIZED;
  int protocol = DDT_PROTO_RGET;  // this process's receives (ddt_comm_set_protocol)
  MechLearner learner;  // heap or cells for layouts the cost model cannot call (learn.hpp)
  // Ordinary or streamed cells (eager, and a rendezvous' data cells) per destination and size
  // (stream.hpp; its second way is streaming); DDTKIT_STREAM_CELLS: -1 learned (the default), 0 never, 1 always (tests).
  MechLearner stream_learner;
  int stream_cells = -1;
  bool learn = true;    // DDTKIT_LEARN=0: the cost model alone
  bool cma = true;  // false once the kernel has refused CMA here
  // Channels whose pages this process has mapped in (job.hpp's prefault_channel), to each
  // destination and from each source.
  std::vector<bool> faulted_out, faulted_in;
  // Per destination: the consumer's `tail` as this producer last read it (free_cell).
  std::vector<uint64_t> tail_seen;
  uint64_t next_id = 1;
  std::vector<std::deque<Outgoing>> out;  // per destination
  std::deque<ddt_request> posted;          // receives not matched yet, in posting order
  std::deque<Unexpected> unexpected;       // messages not matched yet, in arrival order
  std::unordered_map<uint64_t, ddt_request> waiting;  // requests a peer's cell may name
  std::vector<Partial> partial;            // per source
  // While ddt_comm_irecv progresses, a matched RTS is not copied but queued here, and copied by
  // the next wait or test: a receive posted before its process's own sends (irecv, isend,
  // waitall: every exchange) must not make those sends wait for a copy, or the two processes'
  // copies run one after the other instead of at once.
  bool defer = false;
  std::deque<Deferred> deferred;
  Attacher attacher;
  // rendezvous.cpp's heap_segment: its last answer that named a segment, for peer, while the
  // heap's generation is still gen (heap.hpp's heap_generation).
  struct {
    uint64_t gen = 0;
    int peer = -1;
    SegmentRef seg;
  } last_segment;
  LayoutCache layouts;
  SentSet sent;
  // The same memo in the other direction, for RPUT and COOP: the layouts of peers' receives that
  // their CTSs carried (kept by this process as a sender), and which of this process's receive
  // layouts it has sent to which peer (as a receiver).
  LayoutCache put_layouts;
  SentSet put_sent;
  ddt_comm_times times{};
  // The cost split's phases (ddt_comm_times' exchange, translate, attach and copy), in
  // phase_ticks() units, converted to ns by ddt_comm_get_times against the clock read at join.
  struct Phases {
    int64_t exchange = 0, translate = 0, attach = 0, copy = 0;
  } phases;
  int64_t ticks0 = 0, ns0 = 0;
  // Copies waiting for the progress engine (CopyJob), in the order they were decided.
  std::deque<CopyJob> copies;
  // Chunking (ddt_comm_set_chunking) and COOP_HCA's engine ratio.
  int64_t chunk_min = 0, chunk_bytes = 0;
  double engine_ratio = 1.0;
  // Requests that completed while detached (buffered sends' own copies): freed by progress.
  std::vector<ddt_request> orphans;
  int64_t detached = 0;  // buffered sends' own copies not yet delivered
  // Segments a peer freed (kUnmap) while a copy job still reads them: dropped once it is done.
  std::vector<std::pair<int, uint64_t>> late_unmaps;
  // set_passive_isends: a non-blocking send's process is not asked for work after its RTS.
  bool passive_isends = false;
  // Sends of at most this many packed bytes go eager (comm.cpp's kEagerMax; DDTKIT_EAGER_MAX, at
  // most one cell's payload).
  int64_t eager_max = 0;
  bool eager_fixed = false;  // DDTKIT_EAGER_MAX was given: it holds for every message (no rendezvous_from_heap)
  // DDTKIT_STAGE_ALL=1 (tests): every buffer takes the device buffers' staged way, so that the
  // path runs where no GPU is; 2: rendezvous sends also go as device (IPC) sends with an empty
  // description, which a receiver without the GPU layer answers by asking for cells.
  int stage_all = 0;
};
extern Runtime rt;

// The shortest average piece for which the receiver's one copy by CMA beats the pipelined cells
// (its cost model and measurement: rendezvous.cpp). The interposer applies the same bound when
// it decides which sends the runtime takes (src/mpi/local_transfer.cpp).
extern const int64_t kCmaMinPiece;

// The live table (Runtime::waiting) holds the requests a peer's cell may name by id: sends and
// receives in a rendezvous, synchronous eager sends. Other eager requests never enter it, and a
// request that never entered it leaves it without a lookup (an unordered_map erase is a hash and
// a probe: three of them were on each hop of a 1-byte ping-pong's critical path).
inline void track(ddt_request r) {
  rt.waiting[r->id] = r;
  r->tracked = true;
}
inline void untrack(ddt_request r) {
  if (!r->tracked) return;
  rt.waiting.erase(r->id);
  r->tracked = false;
}

// Tags of the runtime's own messages (collectives.cpp): negative, so that no user's receive,
// DDT_ANY_TAG included, ever matches them; each collective takes kCollTag - its number.
constexpr int kCollTag = -16;
// Point-to-point as the public calls, with any tag (internal ones included) and the call's kind
// said explicitly: blocking (as ddt_comm_send and ddt_comm_recv are) or not, and a send's mode.
// The blocking forms are the non-blocking ones followed by ddt_comm_wait. heap_rts: the caller's
// answer of rendezvous_from_heap for exactly this send (0 or 1), so that it is not asked twice
// (about 60 ns for an 8 KiB vector); -1 where the caller has none. checked: the caller has passed
// these arguments through the same checks (send_as), which are not made again.
int isend_as(const void* buf, int64_t count, ddt_type type, int dest, int tag, int mode, bool blocking, ddt_request* req,
             int heap_rts = -1, bool checked = false);
// waits: the caller waits for the receive at once (recv_as), so arrivals are matched after it is
// posted and a matched rendezvous is copied within this call.
int irecv_as(void* buf, int64_t count, ddt_type type, int source, int tag, bool blocking, ddt_request* req,
             bool waits = false);
int send_as(const void* buf, int64_t count, ddt_type type, int dest, int tag, int mode);
int recv_as(void* buf, int64_t count, ddt_type type, int source, int tag, ddt_status* status);

// For a caller that cannot promise to progress the runtime between a non-blocking send and its
// wait (the MPI interposer: its process may sit in an MPI call that ddtkit never sees, a barrier
// say): from now on this process's receives of messages whose sender did not block in the call
// (the RTS has no kBlocking) take RGET by a mechanism that needs nothing more of the sender than
// the RTS (the heap, else CMA; the pipelined cells only where CMA is refused), so such a send
// completes whatever its process does meanwhile. Every process of the job should set it alike.
void set_passive_isends(bool on);
// Whether a send to dest posted now would have its first cells written at once: nothing is
// queued for dest and its ring has room for `cells` cells (an RTS with a short layout is one).
bool can_post(int dest, int cells);

// Bodies longer than this are refused as broken (a layout is O(description), far below it).
constexpr int64_t kMaxBody = int64_t{256} << 20;

// comm.cpp
// Starts the runtime on an attached job segment (job.hpp) as rank of size: waits until every rank
// has attached (or one has died), and rank 0 unlinks the segment's path. Takes job (detached on
// failure). ddt_comm_init calls it with the launcher's segment; a bootstrap through MPI with one
// that its node's first rank created.
int join(JobHeader* job, int rank, int size, const std::string& path);
void complete(ddt_request r, int error);
// Whether peer has died (the launcher marked it, or its pid is gone).
bool peer_dead(int peer);
void enqueue(int dest, Outgoing o);
int64_t now_ns();
// A cheap timestamp for local durations (the cost split's phases), in ticks of an unspecified
// unit (the TSC on x86-64, else ns); never compared between processes. now_ns() reads the
// system clock (22 ns a read here, against 10 for the TSC), and a 16 KiB rendezvous round trip
// read it 21 times per rank, 18 of them for these phases (3 remain: the load history).
int64_t phase_ticks();
// Whether this process streams its cells to dest (stream.hpp: the stream learner settled on it
// for some size and kind of cell, or DDTKIT_STREAM_CELLS=1). comm.cpp.
bool streams_to(int dest);

// rendezvous.cpp
// Sender: whether a message of n bytes that fits an eager cell goes by RTS, for the receiver to
// copy it once out of this process's heap. Never for n <= kHeapEagerMax (the measurements are
// beside the function).
constexpr int64_t kHeapEagerMax = int64_t{6} << 10;
bool rendezvous_from_heap(ddt_type type, const void* buf, int64_t count, int peer, int64_t n);
// Sender: the RTS of r (exchange design, heap segment, layout or key), ready to enqueue.
Outgoing make_rts(ddt_request r);
// Receiver: a matched RTS (or one resent with the layout it asked for).
void deliver_rts(ddt_request r, int source, const CellHeader& h, const char* body, int64_t nbody);
// Receiver: a cell of the sender's piece lists (iov exchange).
void on_iov(ddt_request r, int source, const CellHeader& h, const char* data);
// Receiver: a layout pinned by the sender's ddt_type_commit_comm.
void on_layout(int source, const CellHeader& h, const char* body, int64_t nbody);
// Sender: a device (IPC) send asked for its bytes in cells: staged in host memory first.
void stage_ipc_send(ddt_request s);
// Sender: the serialized layout of r's type (for a resend).
std::shared_ptr<const std::string> serialized(ddt_type t);
// Either side: runs the copy jobs (rt.copies): each whole, or one chunk of each chunked one.
void run_copies();
// What follows a job's last chunk (or its failure): FINs, completion, the load uncounted.
void copy_done(const CopyJob& j, bool ok, bool refused);
// Removes r's copy jobs (r has failed) and uncounts what it had counted.
void drop_copies(ddt_request r);
// Whether a copy job reads or writes the peer's heap segment seg.
bool segment_busy(int peer, uint64_t seg);
// Sender: a CTS of RPUT or COOP (kPut, kCoop: the receive's layout, address, count and split).
void on_put_cts(ddt_request s, int source, const CellHeader& h, const char* body, int64_t nbody);
// Receiver: the sender's FIN of an RPUT or COOP receive (kFinRecv).
void on_put_fin(ddt_request r, int source, const CellHeader& h);
// Receiver: the sender has evicted the receive's layout (kAgain): the CTS again, with it.
void on_again(ddt_request r, int source);

}  // namespace ddt::shm
