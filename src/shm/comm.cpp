// The intra-node runtime's public calls, requests, cells, matching and progress (runtime.hpp;
// large messages in rendezvous.cpp; the segment in job.hpp).
//
// Protocols, per message:
//   eager (packed size <= rt.eager_max, at most kCellPayload, except a send from the mapped heap
//     that the receiver copies faster out of the heap: rendezvous_from_heap): the sender packs straight into a
//     cell; the receiver unpacks straight from it when a receive is posted, or keeps a copy as
//     unexpected.
//   rendezvous: an RTS that describes the send (rendezvous.cpp), answered by FIN once the
//     receiver has copied the bytes, or by CTS when it needs more: data cells, piece lists, or
//     the layout again; with the RPUT and COOP protocols by a CTS that carries the receive's
//     layout, after which the sender copies (all of it, or its share) and sends its own FIN.
// Matching follows MPI: an arriving message (eager or RTS) takes the earliest posted receive that
// matches it, a posted receive the earliest arrived message that matches it; the ring of one pair
// is FIFO and every cell is read in order, so messages of one pair never overtake each other.
//
// Trust: a cell is written by another process and is read as hostile. Request ids are keys into
// this process's own table (never pointers); offsets and sizes are checked against the request; a
// layout is validated by ddt_type_deserialize; addresses by rendezvous.cpp.
//
// Failure: the launcher marks a rank that ended abnormally (JobHeader::dead), and a waiting
// operation also probes its peer's pid; either fails the operation with DDT_ERR_PEER.
#include <signal.h>
#include <sched.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <unordered_map>
#include <vector>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include "ddtkit.h"
#include "cpu/arguments.hpp"
#include "cpu/copy_kernels.hpp"
#include "cpu/device.hpp"
#include "cpu/cursor.hpp"
#include "plan/plan.hpp"
#include "shm/engine.hpp"
#include "shm/heap.hpp"
#include "shm/protocol.hpp"
#include "shm/runtime.hpp"
#include "shm/stream.hpp"
#include "type/type.hpp"
#include "util/guarded.hpp"

namespace ddt::shm {

Runtime rt;

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

int64_t phase_ticks() {
#if defined(__x86_64__)
  return static_cast<int64_t>(__rdtsc());
#else
  return now_ns();
#endif
}

}  // namespace ddt::shm

namespace {

using namespace ddt::shm;

bool ready() { return rt.job != nullptr; }
void free_request(ddt_request r);

int64_t packed_size(ddt_type t, int64_t count) {
  int64_t s = 0;
  ddt_type_size(t, &s);
  return s * count;
}

}  // namespace

namespace ddt::shm {

void complete(ddt_request r, int error) {
  // A staged receive (a device buffer) gets what arrived now, before anyone sees it done.
  if (r->user_buf && (error == DDT_SUCCESS || error == DDT_ERR_TRUNCATE) && r->status.bytes > 0) {
    int64_t n = 0;
    const int64_t bytes = std::min<int64_t>(r->status.bytes, static_cast<int64_t>(r->staging.size()));
    if (int e = ddt_unpack(r->staging.data(), bytes, r->user_buf, r->user_count, r->user_type, 0, &n))
      if (error == DDT_SUCCESS) error = e;
  }
  if (r->learn.slot >= 0 && error == DDT_SUCCESS) rt.learner.record(r->learn, phase_ticks());
  r->learn.slot = -1;
  r->done = true;
  r->status.error = error;
  untrack(r);
  if (r->detached) rt.orphans.push_back(r);  // nobody waits for it: progress frees it
}

}  // namespace ddt::shm

namespace {

// Removes every cell still queued for request r (it has completed or failed).
void unqueue(ddt_request r) {
  for (auto& q : rt.out)
    for (auto it = q.begin(); it != q.end();)
      it = it->req == r ? q.erase(it) : it + 1;
}

// A request whose peer has died: out of every queue that holds it, completed with the error.
void fail(ddt_request r) {
  for (auto it = rt.posted.begin(); it != rt.posted.end(); ++it)
    if (*it == r) {
      rt.posted.erase(it);
      break;
    }
  for (auto it = rt.deferred.begin(); it != rt.deferred.end(); ++it)
    if (it->r == r) {
      rt.deferred.erase(it);
      break;
    }
  unqueue(r);
  drop_copies(r);
  complete(r, DDT_ERR_PEER);
}

}  // namespace

bool ddt::shm::streams_to(int dest) {
  return rt.stream_cells == 1 || (rt.stream_cells < 0 && rt.stream_learner.settled_second(dest));
}

bool ddt::shm::peer_dead(int peer) {
  if (peer < 0 || peer >= rt.size) return false;
  if (rt.job->dead[peer].load(std::memory_order_acquire)) return true;
  const pid_t pid = static_cast<pid_t>(rt.job->pid[peer].load(std::memory_order_acquire));
  if (pid <= 0) return false;
  if (kill(pid, 0) != 0) return errno == ESRCH;
  // A process killed a moment ago is a zombie until its parent reaps it, and kill() still
  // finds it; its memory is gone already, so a copy from it fails first. Its state in /proc
  // says it has ended (a copy that failed then is the peer's death, not a corrupt message).
  char path[64], stat[256];
  std::snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(pid));
  FILE* f = std::fopen(path, "r");
  if (!f) return false;
  const size_t n = std::fread(stat, 1, sizeof stat - 1, f);
  std::fclose(f);
  stat[n] = '\0';
  const char* close = std::strrchr(stat, ')');  // the state follows the command's name
  return close && (close[1] == ' ') && (close[2] == 'Z' || close[2] == 'X');
}

namespace {

bool any_peer_dead() {
  for (int p = 0; p < rt.size; ++p)
    if (p != rt.rank && peer_dead(p)) return true;
  return false;
}

// ---- writing cells -----------------------------------------------------------------------------

// The next free cell of the channel to dest, or null when the ring is full. The channel's pages
// are mapped in whole before its first cell is written (job.cpp's prefault_channel says why).
Cell* free_cell(int dest) {
  if (!rt.faulted_out[dest]) {
    prefault_channel(rt.job, rt.rank, dest);
    rt.faulted_out[dest] = true;
  }
  Channel* c = channel(rt.job, rt.rank, dest);
  const uint64_t head = c->head.load(std::memory_order_relaxed);
  uint64_t& tail = rt.tail_seen[dest];  // the consumer's line is read only when the ring looks full
  if (head - tail >= static_cast<uint64_t>(kCells)) {
    tail = c->tail.load(std::memory_order_acquire);
    if (head - tail >= static_cast<uint64_t>(kCells)) return nullptr;
  }
  return &c->cells[head % kCells];
}
// The cell at head is written: its seq tells the consumer (job.hpp).
void publish(int dest) {
  Channel* c = channel(rt.job, rt.rank, dest);
  const uint64_t head = c->head.load(std::memory_order_relaxed);
  __atomic_store_n(&c->cells[head % kCells].hot.seq, static_cast<uint32_t>(head + 1), __ATOMIC_RELEASE);
  c->head.store(head + 1, std::memory_order_relaxed);
}
// Writes the next cell of an item with a body (rts, layout): the first cell carries the header
// and the body's start, kMore cells the rest. True when the body is all written.
bool emit_body(CellHeader& h, char* data, Outgoing& o) {
  const int64_t total = o.body ? static_cast<int64_t>(o.body->size()) : 0;
  const int64_t from = std::max<int64_t>(0, o.body_sent);
  const int64_t n = std::min(kCellPayload, total - from);
  if (o.body_sent >= 0) h = CellHeader{}, h.kind = kMore, h.bytes = n;
  else h.desc = total;
  if (n > 0) std::memcpy(data, o.body->data() + from, static_cast<size_t>(n));
  o.body_sent = from + n;
  return o.body_sent >= total;
}

// Whether an eager pack takes its cell's lines for writing before it writes them. The cell's
// lines were last read by the receiver, so each store needs its line back (a read for
// ownership), and the stores leave the store buffer in order: a pack of pieces smaller than a
// line stalls on one ownership request after another, and the cell's seq, stored after them,
// reaches the receiver that much later (the send call itself returns sooner: 170-330 ns against
// 290-430 with the prefetches, while the receiver waited 700 ns more per round trip). Asking
// for every line first (prefetchw) overlaps those requests. Measured here (2 cores), round
// trips of runtime_mpi_ompi's DDTBench kernels, three runs each way, alternated:
//   NAS_LU_y (40 B pieces) N=12 1.21-1.55 -> 1.18-1.24 us, N=33 1.58-2.14 -> 1.51-1.59,
//   N=64 (2,560 B) 2.14-2.99 -> 1.97-2.02, without prefetch slow in most runs (a second state
//   of this machine, bimodal between process runs), with it never;
//   N=102 (4,080 B) 2.46-2.87 -> 2.40-2.67 and N=162 3.17-3.90 -> 3.09-3.76: no loss, no clear
//   gain, and a microbenchmark of the same layout lost 7-20% there (64-102 prefetches fill the
//   line-fill buffers the pack's own loads need): hence the 3 KiB bound;
//   NAS_MG_x S (2,048 B of 8 B pieces) 1.74-1.88 -> 1.97-2.04: a gather of one line per 8 B
//   needs those buffers itself: hence pieces of at least 16 B;
//   a contiguous message (glibc's memcpy writes whole lines) 1.83-1.91 -> 1.84-1.96: not asked.
constexpr int64_t kClaimMaxBytes = 3072, kClaimMinPiece = 16;
bool claim_lines_first(ddt_type type, int64_t count, int64_t bytes) {
  if (bytes > kClaimMaxBytes || bytes < 2 * kClaimMinPiece) return false;
  const int64_t blocks = ddt::plan_of(type).blocks;
  int64_t pieces = 0;
  if (__builtin_mul_overflow(blocks, count, &pieces) || pieces < 2) return false;
  return bytes / pieces >= kClaimMinPiece;
}

// Whether a message of bytes to dest streams into its cells (stream.hpp), and, where the stream
// learner chose, its ticket (told when the message's last cell is written). kind: kEagerClass or
// kDataClass (a rendezvous' data cells), learned apart.
struct StreamChoice {
  MechLearner::Ticket ticket;
  bool stream = false;
};
StreamChoice choose_stream(int dest, int64_t bytes, int kind) {
  StreamChoice c;
  if (bytes < kStreamMinBytes || rt.stream_cells == 0) return c;
  if (rt.stream_cells == 1) {
    c.stream = true;
    return c;
  }
  c.ticket = rt.stream_learner.choose(dest, stream_class(bytes, kind), 1, Hash{}, 1, false);
  c.stream = c.ticket.heap;
  return c;
}
// A cell's bytes packed here first, then streamed into the cell (the runtime runs on one thread
// at a time: runtime_lock).
char* stream_staging() {
  alignas(64) static char staging[kCellPayload];
  return staging;
}

// An eager message: its header words into h (which the caller puts into the cell), its bytes
// packed straight from the sender's layout into the cell, or, streamed (stream.hpp), packed into
// a buffer of this process and copied into the cell with non-temporal stores, fenced before the
// caller publishes the cell. From kStreamMinBytes the stream learner chooses, and is told when
// the cell is written (its period: the time between two such sends of the size to dest).
void write_eager(Cell& cell, CellHeader& h, const void* buf, int64_t count, ddt_type type, int tag, int64_t bytes,
                 uint64_t id, uint32_t flags, int dest) {
  h.kind = kEager, h.tag = tag, h.bytes = bytes, h.id = id, h.flags = flags;
  const StreamChoice c = choose_stream(dest, bytes, kEagerClass);
  int64_t n = 0;
  if (c.stream) {
    ddt_pack(buf, count, type, 0, stream_staging(), bytes, &n);
    ddt::stream_copy(cell.data, stream_staging(), bytes);
    ddt::stream_fence();
  } else {
    if (claim_lines_first(type, count, bytes))
      for (int64_t i = 0; i < bytes; i += 64) {
#if defined(__x86_64__)
        asm volatile("prefetchw %0" ::"m"(cell.data[i]));  // a no-op on cores without it
#else
        __builtin_prefetch(cell.data + i, 1, 3);
#endif
      }
    ddt_pack(buf, count, type, 0, cell.data, bytes, &n);
  }
  if (c.ticket.slot >= 0) rt.stream_learner.record(c.ticket, phase_ticks());
}

// Writes one cell of the item o for dest: kBlocked when the ring is full, kUnfinished when the
// item has more cells to write, kFinished when it is done.
enum Emit { kBlocked, kUnfinished, kFinished };
Emit emit(int dest, Outgoing& o) {
  Cell* cell = free_cell(dest);
  if (!cell) return kBlocked;
  CellHeader h{};
  h.kind = o.kind;
  ddt_request r = o.req;
  Emit result = kFinished;
  switch (o.kind) {
    case kEager:
      write_eager(*cell, h, r->sbuf, r->count, r->type, r->tag, r->bytes, r->id, o.flags, dest);
      if (!(o.flags & kSync)) complete(r, DDT_SUCCESS);  // a synchronous send waits for the match's FIN
      break;
    case kRts:
    case kLayout:
      if (o.body_sent < 0) {
        if (r) h.tag = r->tag, h.bytes = r->bytes, h.id = r->id, h.addr = reinterpret_cast<uintptr_t>(r->sbuf), h.count = r->count;
        h.id2 = o.id, h.seg = o.seg, h.flags = o.flags;
        put_key(h, o.hash);
      }
      if (!emit_body(h, cell->data, o)) result = kUnfinished;
      break;
    case kCts:  // with kPut or kCoop, the receive's layout follows as a body
      if (o.body_sent < 0) {
        h.id = o.id, h.id2 = r->id, h.flags = o.flags, h.seg = o.seg;
        if (o.flags & (kPut | kCoop)) {
          h.addr = reinterpret_cast<uintptr_t>(r->rbuf), h.count = r->count, h.offset = r->split;
          // The sender's share, counted in its load counter as the CTS that gives it goes out
          // (COOP-load); the sender uncounts it as it copies.
          h.bytes = std::max<int64_t>(0, std::min(r->msg, r->bytes) - r->split);
          rt.job->load[dest].bytes.fetch_add(h.bytes, std::memory_order_relaxed);
        }
        put_key(h, o.hash);
      }
      if (!emit_body(h, cell->data, o)) result = kUnfinished;
      break;
    case kFin:
      h.id = o.id, h.bytes = o.bytes, h.flags = o.flags;
      break;
    case kAgain:
      h.id = o.id;
      break;
    case kForget:
      put_key(h, o.hash);
      break;
    case kUnmap:
      h.seg = o.seg;
      break;
    case kData: {  // the next cell of the stream, from the send's cursor
      if (r->share_error) {  // the sender has no bytes to give (stage_ipc_send): a cell out of
        h.id = r->rid, h.offset = -1, h.bytes = 0;  // order, which fails the receive rather than
        complete(r, r->share_error);                // leave it waiting, and the send with its error
        break;
      }
      // Whole cells. Cells of 4 KiB for messages under 128 KiB (finer pipelining of the gather
      // and the scatter) lost: DDTKIT_MECH=pipe round trips through ddt_runtime_bench at
      // 9fd499a, ranks' cores on different dies (160-174 ns a line), 0.80-0.92 of whole cells
      // on WRF_x, WRF_y, MILC, LAMMPS_full and SPECFEM3D (geomean 0.93 over the 16-128 KiB
      // kernels): each handoff is a line crossing, and there were four times as many.
      const int64_t n = std::min(kCellPayload, r->bytes - r->sent);
      h.id = r->rid, h.offset = r->sent, h.bytes = n;
      if (!r->packer) {
        r->packer.reset(new ddt::InOrderPack(r->type, r->sbuf, r->count));
        const StreamChoice c = choose_stream(dest, r->bytes, kDataClass);
        r->stream_ticket = c.ticket, r->streamed = c.stream;
      }
      if (r->streamed) {
        r->packer->give(stream_staging(), n);
        ddt::stream_copy(cell->data, stream_staging(), n);
        ddt::stream_fence();
      } else {
        r->packer->give(cell->data, n);
      }
      r->sent += n;
      if (r->sent < r->bytes) {
        result = kUnfinished;
      } else {
        if (r->stream_ticket.slot >= 0) rt.stream_learner.record(r->stream_ticket, phase_ticks());
        r->stream_ticket = MechLearner::Ticket{};
        complete(r, DDT_SUCCESS);
      }
      break;
    }
    case kIov: {  // the next cell of the send's piece list (iov exchange)
      const int64_t t0 = phase_ticks();
      int64_t nv = 0, b = 0;
      ddt_iov(r->sbuf, r->count, r->type, r->sent, reinterpret_cast<struct iovec*>(cell->data),
              kCellPayload / static_cast<int64_t>(sizeof(struct iovec)), &nv, &b);
      h.id = r->rid, h.offset = r->sent, h.bytes = b, h.count = nv;
      r->sent += b;
      if (b > 0 && r->sent < r->bytes) result = kUnfinished;  // the send completes at FIN
      rt.phases.exchange += phase_ticks() - t0;
      break;
    }
    default:
      break;
  }
  put_header(*cell, h);
  publish(dest);
  return result;
}

// Writes what each destination's queue holds, as far as the rings have room.
void flush() {
  for (int d = 0; d < rt.size; ++d) {
    auto& q = rt.out[d];
    while (!q.empty()) {
      const Emit e = emit(d, q.front());
      if (e == kBlocked) break;
      if (e == kFinished) q.pop_front();
    }
  }
}

}  // namespace

namespace ddt::shm {

void enqueue(int dest, Outgoing o) {
  rt.out[dest].push_back(std::move(o));
  flush();
}

}  // namespace ddt::shm

namespace {

// ---- receiving ----------------------------------------------------------------------------------

// MPI's matching; DDT_ANY_TAG matches users' tags only (the runtime's own are negative).
bool matches(const ddt_request r, int source, int tag) {
  return (r->peer == DDT_ANY_SOURCE || r->peer == source) && (r->tag == tag || (r->tag == DDT_ANY_TAG && tag >= 0));
}

// An eager message (header h, its bytes in data) into the receive r; a synchronous send's is
// acknowledged now that it has matched (FIN naming the send).
void deliver_eager(ddt_request r, int source, const CellHeader& h, const char* data) {
  const int64_t n = std::min(h.bytes, r->bytes);
  int64_t u = 0;
  if (n > 0) ddt_unpack(data, n, r->rbuf, r->count, r->type, 0, &u);
  r->status.source = source, r->status.tag = h.tag, r->status.bytes = n;
  complete(r, h.bytes > r->bytes ? DDT_ERR_TRUNCATE : DDT_SUCCESS);
  if (h.flags & kSync) enqueue(source, Outgoing{kFin, nullptr, h.id, n});
}

// A request of ours (a send or a receive, as asked) that the peer's cell names by id and that is
// in progress with that peer; null when the cell names none.
ddt_request named(uint64_t id, int source, bool send) {
  auto it = rt.waiting.find(id);
  if (it == rt.waiting.end() || it->second->send != send) return nullptr;
  const int peer = send ? it->second->peer : it->second->status.source;
  return peer == source ? it->second : nullptr;
}

// A whole eager message, rts or layout (its body gathered), from source.
void dispatch(int source, const CellHeader& h, const char* body, int64_t nbody) {
  if (h.kind == kLayout) return on_layout(source, h, body, nbody);
  if (h.kind == kCts) {  // RPUT or COOP: the receiver's layout has arrived whole
    if (ddt_request s = named(h.id, source, true)) on_put_cts(s, source, h, body, nbody);
    return;
  }
  if (h.kind == kRts && (h.flags & kResent)) {  // the layout a matched receive asked for
    if (ddt_request r = named(h.id2, source, false)) deliver_rts(r, source, h, body, nbody);
    return;
  }
  ddt_request r = nullptr;
  for (auto it = rt.posted.begin(); it != rt.posted.end(); ++it)
    if (matches(*it, source, h.tag)) {
      r = *it;
      if (it == rt.posted.begin()) rt.posted.pop_front();  // the usual case, without erase's shifting
      else rt.posted.erase(it);
      break;
    }
  if (r && h.kind == kEager) {
    deliver_eager(r, source, h, body);
  } else if (r && rt.defer) {
    rt.deferred.push_back(Deferred{r, source, h, std::vector<char>(body, body + nbody)});
  } else if (r) {
    deliver_rts(r, source, h, body, nbody);
  } else {
    rt.unexpected.push_back(Unexpected{source, h, std::vector<char>(body, body + nbody)});
  }
}

// A CTS without a body (RGET's answers): the layout again, the piece lists or the data cells.
void plain_cts(int source, const CellHeader& h) {
  ddt_request s = named(h.id, source, true);
  if (!s) return;
  s->rid = h.id2;
  if (h.flags & kNeedLayout) {  // the receiver evicted the layout: the rts again, with it
    stage_ipc_send(s);  // (a device send is never asked this: a forged CTS gets host bytes)
    Outgoing o{kRts, s, h.id2};
    o.flags = kHasHash | kResent;
    o.hash = key_of(s->type);
    rt.sent.erase(source, o.hash);
    o.body = serialized(s->type);
    rt.sent.add(source, o.hash);
    rt.out[source].push_back(std::move(o));
  } else {
    stage_ipc_send(s);  // a device send the receiver could not copy by IPC: the bytes from host memory
    s->sent = 0;
    rt.out[source].push_back(Outgoing{(h.flags & kSendIov) && !s->share_error ? kIov : kData, s});
  }
}

// Reads every cell that has arrived from source, in order.
void drain(int source) {
  Channel* c = channel(rt.job, source, rt.rank);
  uint64_t tail = c->tail.load(std::memory_order_relaxed);
  // The cell at t is written when its seq says so (job.hpp). At most a ring's worth per call: a
  // peer that kept rewriting seqs must not hold this process here.
  const auto ready = [c](uint64_t t) {
    return __atomic_load_n(&c->cells[t % kCells].hot.seq, __ATOMIC_ACQUIRE) == static_cast<uint32_t>(t + 1);
  };
  if (!ready(tail)) return;
  if (!rt.faulted_in[source]) {  // the first cell from source: its ring mapped in whole
    prefault_channel(rt.job, source, rt.rank);
    rt.faulted_in[source] = true;
  }
  Partial& part = rt.partial[source];
  const uint64_t end = tail + kCells;
  for (; tail < end && ready(tail); ++tail) {
    const Cell& cell = c->cells[tail % kCells];
    const CellHeader h = get_header(cell);
    switch (h.kind) {
      case kEager:
        if (h.bytes >= 0 && h.bytes <= kCellPayload) dispatch(source, h, cell.data, h.bytes);
        break;
      case kCts:
        if (!(h.flags & (kPut | kCoop))) {
          plain_cts(source, h);
          break;
        }
        [[fallthrough]];  // a body, as an rts's
      case kRts:
      case kLayout:
        if (h.bytes < 0 || h.desc < 0 || h.desc > kMaxBody) break;  // broken: dropped
        if (h.desc <= kCellPayload) {
          dispatch(source, h, cell.data, h.desc);
        } else {  // the body continues in kMore cells
          part.active = true, part.h = h;
          part.data.assign(cell.data, cell.data + kCellPayload);
        }
        break;
      case kMore: {
        if (!part.active) break;
        const int64_t left = part.h.desc - static_cast<int64_t>(part.data.size());
        if (h.bytes <= 0 || h.bytes > kCellPayload || h.bytes > left) {  // broken: dropped
          part.active = false;
          break;
        }
        part.data.insert(part.data.end(), cell.data, cell.data + h.bytes);
        if (h.bytes == left) {
          part.active = false;
          dispatch(source, part.h, part.data.data(), part.h.desc);
        }
        break;
      }
      case kData: {
        ddt_request r = named(h.id, source, false);
        if (!r) break;
        if (h.offset != r->got || h.bytes <= 0 || h.bytes > kCellPayload || h.offset + h.bytes > r->msg) {
          r->status.bytes = std::min(r->got, r->bytes);
          // Out of order or out of bounds: a broken peer, or one that died mid-write.
          complete(r, peer_dead(source) ? DDT_ERR_PEER : DDT_ERR_CORRUPT);
          break;
        }
        if (h.offset < r->bytes) {  // cells arrive in order (checked above): unpacked in order
          if (!r->unpacker) r->unpacker.reset(new ddt::InOrderUnpack(r->type, r->rbuf, r->count));
          r->unpacker->take(cell.data, std::min(h.bytes, r->bytes - h.offset));
        }
        r->got += h.bytes;
        if (r->got == r->msg) {
          if (r->unpacker) r->unpacker->finish();
          r->status.bytes = std::min(r->msg, r->bytes);
          complete(r, r->msg > r->bytes ? DDT_ERR_TRUNCATE : DDT_SUCCESS);
        }
        break;
      }
      case kIov:
        if (ddt_request r = named(h.id, source, false)) on_iov(r, source, h, cell.data);
        break;
      case kFin:
        if (h.flags & kFinRecv) {  // the sender's share of an RPUT or COOP receive
          if (ddt_request r = named(h.id, source, false)) on_put_fin(r, source, h);
        } else if (ddt_request s = named(h.id, source, true)) {
          if (s->proto == DDT_PROTO_COOP) {
            // The receiver has read its share: done once this side's share is too. A sender
            // whose write was refused sends the message in data cells first (await_cells).
            if (s->await_cells) break;
            s->peer_fin = true;
            if (s->share_done) complete(s, s->share_error);
          } else if (s->proto == DDT_PROTO_RGET) {
            unqueue(s);  // piece lists the receiver no longer needs
            complete(s, DDT_SUCCESS);
          }  // RPUT's receiver sends no FIN: one naming it is ignored
        }
        break;
      case kAgain:
        if (ddt_request r = named(h.id, source, false)) on_again(r, source);
        break;
      case kForget:
        rt.layouts.unpin(source, key_of(h));
        break;
      case kUnmap:
        // A copy still reading that segment keeps it mapped until it ends: a peer that frees a
        // buffer its own send still uses must not make this process fault.
        if (segment_busy(source, h.seg)) {
          rt.late_unmaps.emplace_back(source, h.seg);
          break;
        }
        rt.layouts.drop_segment(source, h.seg);
        rt.attacher.drop(source, h.seg);
        break;
      default:
        break;  // unknown kinds are ignored
    }
  }
  c->tail.store(tail, std::memory_order_release);
}

void progress() {
  while (!rt.defer && !rt.deferred.empty()) {  // copies that an irecv matched
    Deferred d = std::move(rt.deferred.front());
    rt.deferred.pop_front();
    deliver_rts(d.r, d.source, d.h, d.body.data(), static_cast<int64_t>(d.body.size()));
  }
  for (const Released& r : take_released())  // peers drop their mappings of freed segments
    for (int p : r.peers)
      if (p != rt.rank && p < rt.size) {
        Outgoing o{kUnmap};
        o.seg = r.id;
        rt.out[p].push_back(o);
      }
  flush();
  for (int s = 0; s < rt.size; ++s) drain(s);
  flush();
  if (!rt.defer && !rt.copies.empty()) {  // a chunk of each copy (or each whole), then its cells
    run_copies();
    flush();
  }
  for (size_t i = 0; i < rt.late_unmaps.size();) {
    const auto [peer, seg] = rt.late_unmaps[i];
    if (segment_busy(peer, seg)) {
      ++i;
      continue;
    }
    rt.layouts.drop_segment(peer, seg);
    rt.attacher.drop(peer, seg);
    rt.late_unmaps.erase(rt.late_unmaps.begin() + static_cast<std::ptrdiff_t>(i));
  }
  while (!rt.orphans.empty()) {  // buffered sends' own copies that have been delivered
    ddt_request r = rt.orphans.back();
    rt.orphans.pop_back();
    --rt.detached;
    ddt_free(const_cast<void*>(r->sbuf));
    free_request(r);
  }
}

// Whether the job's ranks share cores, judged on the union of every rank's affinity mask (each
// wrote its own into the job before `listening`): oversubscribed where the job has fewer cores
// than ranks. Each rank's own mask alone misjudged bound ranks: Open MPI binds each of 2 ranks to
// a core by default (measured on the 16-core machine: Cpus_allowed_list 0 and 1), and a one-core
// mask read as "2 ranks on 1 core", so every wait yielded from its 65th turn and the protocols
// balanced as on shared cores. COOP_HCA's engine spins between tasks only where every process can
// have a second core of its own (engine.cpp): this process's mask holds two and the job has two
// per rank. DDTKIT_ENGINE_SPIN=0|1 decides instead (benchmarks).
void judge_cores(const JobHeader& job, int rank, int size) {
  cpu_set_t all;
  CPU_ZERO(&all);
  for (int p = 0; p < size; ++p) CPU_OR(&all, &all, &job.cpus[p]);
  const int cores = std::max(1, CPU_COUNT(&all)), own = CPU_COUNT(&job.cpus[rank]);
  rt.oversubscribed = cores < size;
  bool spare = own >= 2 && cores >= 2 * size;
  if (const char* c = std::getenv("DDTKIT_ENGINE_SPIN")) spare = std::atoi(c) != 0;
  engine_set_spinning(spare);
}

// Waits, progressing, until done() holds; DDT_ERR_PEER when failed() says the peer it needs
// has died. Spins first, then yields the core. The clock is read every 64th turn only (64 turns
// last far less than the 20 ms between two questions about the peer): read at every turn it
// drew a sixth of a 480 B ping-pong's perf samples, all while waiting; end to end the gain is
// small (1 B round trip, best of 6 runs each, alternated: 0.91-0.98 us against 0.93-1.04).
//
// When to yield: a sched_yield is a system call (212 ns here), and a wait that makes one per turn
// sees the peer's message that much later. Where every process of the job has a core of its own,
// a wait spins without yielding for its first millisecond (16,000 B eager round trips, whose
// waits outlast 64 turns: 7.33 us yielding from the 65th turn, 6.88 us spinning; 1 B round trips,
// whose waits do not, the same); where the job oversubscribes the cores (3 or 4 ranks on this
// 2-core machine), the peer may be waiting for this core, and the wait yields from the 65th turn.
//
// The clock is first read at the 64th turn, not on entry: most waits of a small-message ping-pong
// end before it, and a read costs 20-40 ns here (clock_gettime drew 28% of the samples of a
// process sending 1-byte messages to itself while it was read on entry and in every test). The
// wait's times count from that first read, 64 turns late: well inside the 1 ms and 20 ms below.
template <class Done, class Failed>
int spin(Done done, Failed failed) {
  std::chrono::steady_clock::time_point start{}, last_check{};
  bool yield = rt.oversubscribed;
  for (int64_t i = 0;; ++i) {
    progress();
    if (done()) return DDT_SUCCESS;
    if (yield && i > 64) sched_yield();
    if (i % 64 != 63) continue;
    const auto now = std::chrono::steady_clock::now();
    if (i == 63) start = last_check = now;
    if (now - start > std::chrono::milliseconds(1)) yield = true;
    if (now - last_check > std::chrono::milliseconds(20)) {
      last_check = now;
      progress();  // whatever arrived before the peer died counts
      if (done()) return DDT_SUCCESS;
      if (failed()) return DDT_ERR_PEER;
    }
  }
}

// Posts the send r: eager into a cell, or an RTS (rendezvous.cpp) that carries the call's kind.
// heap_rts: rendezvous_from_heap's answer for r if the caller has it (isend_as), else -1.
void start_send(ddt_request r, int heap_rts = -1) {
  const auto from_heap = [&] {
    return heap_rts >= 0 ? heap_rts == 1 : rendezvous_from_heap(r->type, r->sbuf, r->count, r->peer, r->bytes);
  };
  if (r->bytes <= rt.eager_max && !(r->staging.empty() && !r->ipc && from_heap())) {
    Outgoing o{kEager, r};
    if (r->mode == DDT_SEND_SYNC) {  // completes on the receiver's FIN, sent when it matches
      o.flags = kSync;
      track(r);
    }
    enqueue(r->peer, o);
  } else {
    track(r);
    enqueue(r->peer, make_rts(r));
  }
}

// A buffered send: the message packed into memory of the runtime's own (the mapped heap, so the
// receiver reads it with plain loads), sent from there by a detached request, and the caller's
// request complete at once. finalize waits until every detached send has been delivered.
int buffered_send(const void* buf, int64_t count, ddt_type type, int dest, int tag, bool blocking, ddt_request* req) {
  const int64_t n = packed_size(type, count);
  void* copy = nullptr;
  if (ddt_alloc(std::max<int64_t>(n, 1), &copy) != DDT_SUCCESS) return static_cast<int>(DDT_ERR_NO_MEM);
  int64_t packed = 0;
  if (n > 0) ddt_pack(buf, count, type, 0, copy, n, &packed);
  ddt_request b = new ddt_request_s;
  b->send = true, b->sbuf = copy, b->count = n, b->type = DDT_BYTE, b->peer = dest, b->tag = tag;
  b->mode = DDT_SEND_BUFFERED, b->blocking = blocking, b->detached = true;
  b->bytes = n;
  b->id = rt.next_id++;
  b->exchange = rt.exchange;
  ++rt.detached;
  start_send(b);
  ddt_request r = new ddt_request_s;  // the caller's: complete already
  r->send = true, r->peer = dest, r->tag = tag, r->bytes = n, r->done = true;
  r->status = ddt_status{dest, tag, DDT_SUCCESS, n};
  *req = r;
  return static_cast<int>(DDT_SUCCESS);
}

// The arguments of a send or receive; the tag is the public calls' to check (internal tags are
// negative).
int check_args(const void* buf, int64_t count, ddt_type type, int peer, bool recv) {
  if (!ready()) return DDT_ERR_COMM;
  int64_t total = 0;
  if (int e = ddt::stream(type, count, 0, &total)) return e;  // the engine's own checks
  if (recv ? (peer != DDT_ANY_SOURCE && (peer < 0 || peer >= rt.size)) : (peer < 0 || peer >= rt.size)) return DDT_ERR_ARG;
  if (total > 0 && ddt::hostile(buf, count, type)) return DDT_ERR_ARG;  // checked here: the copy may run later
  return DDT_SUCCESS;
}
bool user_tag(int tag, bool recv) { return tag >= 0 || (recv && tag == DDT_ANY_TAG); }

void free_request(ddt_request r) {
  untrack(r);
  if (r->type) ddt::release(r->type);
  if (r->user_type) ddt::release(r->user_type);
  delete r;
}

// A done request's status out to the caller, and the request released.
int finish(ddt_request* req, ddt_status* status) {
  ddt_request r = *req;
  if (status) *status = r->status;
  const int e = r->status.error;
  free_request(r);
  *req = DDT_REQUEST_NULL;
  return e;
}

}  // namespace

namespace ddt::shm {

int join(JobHeader* job, int rank, int size, const std::string& path) {
  if (ready()) {
    detach_job(job);
    return DDT_ERR_COMM;  // once per process
  }
  // Waits until every rank has counted itself in `counter`: DDT_SUCCESS, or DDT_ERR_PEER when one
  // has died, DDT_ERR_COMM after a minute (the job is left, as a failed join must).
  auto all_of = [&](std::atomic<int32_t>& counter) {
    const auto start = std::chrono::steady_clock::now();
    while (counter.load(std::memory_order_acquire) < size) {
      for (int p = 0; p < size; ++p)
        if (job->dead[p].load(std::memory_order_acquire)) {
          detach_job(job);
          return static_cast<int>(DDT_ERR_PEER);
        }
      if (std::chrono::steady_clock::now() - start > std::chrono::seconds(60)) {
        detach_job(job);
        return static_cast<int>(DDT_ERR_COMM);
      }
      sched_yield();
    }
    return static_cast<int>(DDT_SUCCESS);
  };
  return ddt::guarded([&] {
    // Every rank attached (or one has died) before the segment's name goes away.
    if (int e = all_of(job->attached)) return e;
    if (rank == 0) unlink(path.c_str());
    rt.layouts.clear();
    rt.put_layouts.clear();
    rt.attacher.close();
    rt.out.assign(size, {});
    rt.posted.clear(), rt.unexpected.clear(), rt.waiting.clear(), rt.deferred.clear();
    rt.partial.assign(size, Partial{});
    rt.sent = SentSet{};
    rt.put_sent = SentSet{};
    rt.times = ddt_comm_times{};
    rt.phases = Runtime::Phases{};
    rt.ticks0 = phase_ticks(), rt.ns0 = now_ns();
    rt.job = job, rt.rank = rank, rt.size = size, rt.cma = true;
    rt.faulted_out.assign(size, false), rt.faulted_in.assign(size, false), rt.tail_seen.assign(size, 0);
    rt.mech = DDT_MECH_AUTO, rt.exchange = DDT_EXCHANGE_MEMOIZED, rt.protocol = DDT_PROTO_HYBRID;
    rt.copies.clear(), rt.orphans.clear(), rt.late_unmaps.clear(), rt.detached = 0;
    if (const char* m = std::getenv("DDTKIT_MECH")) {
      for (auto [name, v] : {std::pair{"auto", DDT_MECH_AUTO}, {"pipe", DDT_MECH_PIPE}, {"cma", DDT_MECH_CMA}, {"heap", DDT_MECH_HEAP}})
        if (!std::strcmp(m, name)) rt.mech = v;
    }
    if (const char* x = std::getenv("DDTKIT_EXCHANGE")) {
      for (auto [name, v] : {std::pair{"memoized", DDT_EXCHANGE_MEMOIZED}, {"descriptor", DDT_EXCHANGE_DESCRIPTOR},
                             {"naive", DDT_EXCHANGE_NAIVE}, {"pipelined", DDT_EXCHANGE_PIPELINED}})
        if (!std::strcmp(x, name)) rt.exchange = v;
    }
    if (const char* p = std::getenv("DDTKIT_PROTOCOL")) {
      for (auto [name, v] : {std::pair{"rget", DDT_PROTO_RGET}, {"rput", DDT_PROTO_RPUT}, {"coop", DDT_PROTO_COOP},
                             {"coll", DDT_PROTO_COOP_COLL}, {"load", DDT_PROTO_COOP_LOAD}, {"chunked", DDT_PROTO_COOP_CHUNKED},
                             {"hca", DDT_PROTO_COOP_HCA}, {"hybrid", DDT_PROTO_HYBRID}})
        if (!std::strcmp(p, name)) rt.protocol = v;
    }
    // The eager limit: one cell's payload, the most an eager message can carry. Measured eager
    // against rendezvous (the heap, memoized, HYBRID) below it, in one process with the limit
    // flipped between interleaved samples (2 ranks, ddt_alloc buffers, round trips, two runs,
    // one in each of this machine's speed phases): rendezvous / eager 1.11-3.18 for contiguous
    // messages of 1-16 KB, 1.36-3.74 for a vector of 64 B blocks, 1.31-2.64 for 8 B blocks:
    // the rendezvous' RTS/FIN round trip (2.5-6 us) outweighs its saved copy at every size a
    // cell can hold. DDTKIT_EAGER_MAX lowers it (tests run every message by rendezvous with it).
    // (That was before the rendezvous' round trip fell to 1.5-2 us: at 0a58793 the heap's one
    // copy beat the cell from 6 KiB, and rendezvous_from_heap, rendezvous.cpp, sends such
    // messages by RTS unless DDTKIT_EAGER_MAX is set.)
    rt.stage_all = std::getenv("DDTKIT_STAGE_ALL") ? std::clamp(std::atoi(std::getenv("DDTKIT_STAGE_ALL")), 0, 2) : 0;
    rt.eager_max = kCellPayload;
    rt.learner = MechLearner{};
    rt.stream_learner = MechLearner(kStreamTuning);
    rt.stream_cells = std::getenv("DDTKIT_STREAM_CELLS") ? std::clamp(std::atoi(std::getenv("DDTKIT_STREAM_CELLS")), -1, 1) : -1;
    rt.learn = !(std::getenv("DDTKIT_LEARN") && std::strcmp(std::getenv("DDTKIT_LEARN"), "0") == 0);
    rt.eager_fixed = false;
    if (const char* e = std::getenv("DDTKIT_EAGER_MAX")) {
      rt.eager_max = std::clamp<int64_t>(std::atoll(e), 0, kCellPayload);
      rt.eager_fixed = true;
    }
    rt.chunk_min = kChunkMinBytes, rt.chunk_bytes = kChunkBytes, rt.engine_ratio = 1.0;
    // This rank's cores, for judge_cores below once every rank has written its own.
    cpu_set_t& mine = job->cpus[rank];
    if (sched_getaffinity(0, sizeof mine, &mine) != 0) {
      CPU_ZERO(&mine);
      for (long c = 0, n = sysconf(_SC_NPROCESSORS_ONLN); c < n && c < CPU_SETSIZE; ++c) CPU_SET(c, &mine);
    }
    if (const char* c = std::getenv("DDTKIT_CHUNK_MIN")) rt.chunk_min = std::atoll(c);
    if (const char* c = std::getenv("DDTKIT_CHUNK_BYTES"))
      if (std::atoll(c) > 0) rt.chunk_bytes = std::atoll(c);
    if (const char* c = std::getenv("DDTKIT_CACHE_ENTRIES")) {
      const int64_t n = std::atoll(c);
      if (n > 0) {
        rt.layouts.set_capacity(n), rt.sent.set_capacity(n);
        rt.put_layouts.set_capacity(n), rt.put_sent.set_capacity(n);
      }
    }
    // The heap's segment socket, named by the job's segment (unique per job and user); without
    // it sends from the heap go by CMA or cells.
    // Every peer's socket is bound before init returns: a descriptor sent to a socket not yet
    // bound is refused, and the first heap message to that peer would go another way.
    const std::string key = path.substr(path.find_last_of('/') + 1);
    rt.attacher.open(key, rank, job);
    job->listening.fetch_add(1, std::memory_order_acq_rel);
    if (int e = all_of(job->listening)) {
      rt.job = nullptr;
      rt.attacher.close();
      return e;
    }
    judge_cores(*job, rank, size);
    return static_cast<int>(DDT_SUCCESS);
  });
}

// Device buffers (cpu/device.hpp's hook says which; every buffer with DDTKIT_STAGE_ALL) are
// staged in host memory: the heap, CMA and the cursors' cells reach host memory only. A send packs
// its data (ddt_pack: on the GPU) into the request's staging at once and moves those bytes; a
// receive takes the bytes into its staging and unpacks them (ddt_unpack: on the GPU) as it
// completes. Correct for every mechanism and protocol, not zero-copy: two more copies, one of
// them over the bus. Above the eager limit a device send is offered by CUDA IPC instead (below),
// and a receiver with the GPU layer copies it with one kernel (rendezvous.cpp's deliver_ipc).
bool staged(const void* buf, int64_t count, ddt_type type, int64_t bytes) {
  if (bytes <= 0) return false;
  if (rt.stage_all) return true;
  const ddt::DeviceHook* d = ddt::device_hook.load(std::memory_order_relaxed);
  return d && d->on_device(buf, count, type);
}

int isend_as(const void* buf, int64_t count, ddt_type type, int dest, int tag, int mode, bool blocking, ddt_request* req,
             int heap_rts, bool checked) {
  if (!req) return DDT_ERR_ARG;
  if (mode < DDT_SEND_STANDARD || mode > DDT_SEND_READY) return DDT_ERR_ARG;
  if (!checked)
    if (int e = check_args(buf, count, type, dest, false)) return e;
  return ddt::guarded([&] {
    if (mode == DDT_SEND_BUFFERED) return buffered_send(buf, count, type, dest, tag, blocking, req);
    std::vector<char> staging;
    const int64_t bytes = packed_size(type, count);
    bool ipc = false;
    char desc[ddt::kIpcDesc] = {};
    if (staged(buf, count, type, bytes)) {
      // A rendezvous-sized device buffer is offered by CUDA IPC (FALCON-X's GPU zero copy: the
      // receiver's kernel reads it); an eager one, or one IPC cannot export, is staged.
      const ddt::DeviceHook* d = ddt::device_hook.load(std::memory_order_relaxed);
      // Not for a passive non-blocking send (the interposer's: its process may block in the MPI,
      // so nothing may depend on its answering a CTS), which a receiver without the GPU layer
      // would have to ask for cells.
      const bool may = bytes > rt.eager_max && !(rt.passive_isends && !blocking);
      if (may && rt.stage_all == 2)
        ipc = true;  // tests: an empty description, which the receiver cannot open
      else if (may && !rt.stage_all && d && d->ipc_export && d->ipc_export(buf, count, type, desc) == DDT_SUCCESS)
        ipc = true;
      if (!ipc) {
        staging.resize(static_cast<size_t>(bytes));
        int64_t n = 0;
        if (int e = ddt_pack(buf, count, type, 0, staging.data(), bytes, &n)) return e;
        buf = staging.data(), count = bytes, type = DDT_BYTE;
      }
    }
    ddt_request r = new ddt_request_s;
    r->staging = std::move(staging);
    r->ipc = ipc;
    std::memcpy(r->ipc_desc, desc, sizeof desc);
    r->send = true, r->sbuf = buf, r->count = count, r->type = type, r->peer = dest, r->tag = tag;
    r->mode = mode, r->blocking = blocking;
    r->bytes = packed_size(type, count);
    ddt::retain(type);  // the type may be freed while the send is in flight
    r->id = rt.next_id++;
    r->exchange = rt.exchange;
    start_send(r, heap_rts);  // (read only for an unstaged send, whose buffer is the one judged)
    *req = r;
    return static_cast<int>(DDT_SUCCESS);
  });
}

namespace {

// The first message set aside (rt.unexpected, in arrival order) that the receive r matches, taken
// by r: an eager one delivered now, a rendezvous one's copy deferred to the next progress.
bool take_unexpected(ddt_request r) {
  for (auto it = rt.unexpected.begin(); it != rt.unexpected.end(); ++it) {
    if (!matches(r, it->source, it->h.tag)) continue;
    Unexpected u = std::move(*it);
    if (it == rt.unexpected.begin()) rt.unexpected.pop_front();  // the usual case, as in dispatch
    else rt.unexpected.erase(it);
    if (u.h.kind == kEager)
      deliver_eager(r, u.source, u.h, u.data.data());
    else
      rt.deferred.push_back(Deferred{r, u.source, u.h, std::move(u.data)});
    return true;
  }
  return false;
}

}  // namespace

int irecv_as(void* buf, int64_t count, ddt_type type, int source, int tag, bool blocking, ddt_request* req, bool waits) {
  if (!req) return DDT_ERR_ARG;
  if (int e = check_args(buf, count, type, source, true)) return e;
  return ddt::guarded([&] {
    ddt_request r = new ddt_request_s;
    r->rbuf = buf, r->count = count, r->type = type, r->peer = source, r->tag = tag, r->blocking = blocking;
    r->bytes = packed_size(type, count);
    r->status.source = source, r->status.tag = tag;
    ddt::retain(type);
    if (staged(buf, count, type, r->bytes)) {  // received as bytes into staging, unpacked by complete()
      r->staging.resize(static_cast<size_t>(r->bytes));
      r->user_buf = buf, r->user_count = count, r->user_type = type;  // the reference taken above
      r->rbuf = r->staging.data(), r->count = r->bytes, r->type = DDT_BYTE;
    }
    // A receive whose wait follows at once (waits: recv_as) takes the messages already set
    // aside first, then is posted, and only then reads the rings: what has arrived meanwhile
    // goes to the earliest posted receive that matches it, in arrival order, which is the order
    // the other way gives, and a match is delivered straight from its cell and, for a
    // rendezvous, copied now, as the wait would. The other way set each newly arrived message
    // aside first (its cell's bytes copied into a vector, an eager message's payload too) and
    // deferred its copy to the wait: about 100-150 ns of each 8 KiB rendezvous under the MPI
    // interposer (rdtsc timeline, osu_latency -D vect:8:4 of size 16384 under Open MPI).
    if (!waits) {
      struct Defer {  // matched rendezvous copies wait for the next wait or test
        Defer() { rt.defer = true; }
        ~Defer() { rt.defer = false; }
      } defer;
      progress();  // messages that have arrived are matched before this receive is
    }
    *req = r;  // (only now: a failure above leaves the caller's request as it was)
    if (take_unexpected(r)) return static_cast<int>(DDT_SUCCESS);
    rt.posted.push_back(r);
    if (waits) progress();
    return static_cast<int>(DDT_SUCCESS);
  });
}

void set_passive_isends(bool on) { rt.passive_isends = on; }

bool can_post(int dest, int cells) {
  if (!ready() || dest < 0 || dest >= rt.size) return false;
  if (!rt.out[dest].empty()) return false;
  Channel* c = channel(rt.job, rt.rank, dest);
  const uint64_t used = c->head.load(std::memory_order_relaxed) - c->tail.load(std::memory_order_acquire);
  return used + static_cast<uint64_t>(cells) <= static_cast<uint64_t>(kCells);
}

void stage_ipc_send(ddt_request s) {
  if (!s->ipc) return;
  s->ipc = false;
  s->staging.resize(static_cast<size_t>(s->bytes));
  int64_t n = 0;
  const int e = s->bytes > 0 ? ddt_pack(s->sbuf, s->count, s->type, 0, s->staging.data(), s->bytes, &n) : DDT_SUCCESS;
  if (e) s->share_error = e;  // its data cell fails the receive (emit), and the send with e
  ddt::release(s->type);
  s->sbuf = s->staging.data(), s->count = s->bytes, s->type = DDT_BYTE;
  s->packer.reset();
}

// A blocking standard (or ready) send that fits a cell, written at once when nothing is queued
// ahead of it to dest and the ring has a free cell: no request, no queue entry, no progress call.
// The cell and its place in the stream are those start_send's path would write, so matching and
// order are unchanged; a send that cannot go now takes that path. In the 1-byte ping-pong this
// is the whole critical path of a send (a request's allocation, its queue entry, a wait whose
// progress runs flush, drain and their bookkeeping again, and its release lay on it).
// *heap_rts: rendezvous_from_heap's answer where it was asked (for isend_as), else left as is;
// *checked: whether the arguments passed check_args here (isend_as then need not check them again).
bool sent_now(const void* buf, int64_t count, ddt_type type, int dest, int tag, int mode, int* heap_rts, bool* checked) {
  if (mode != DDT_SEND_STANDARD && mode != DDT_SEND_READY) return false;
  if (check_args(buf, count, type, dest, false)) return false;  // the full path reports it
  *checked = true;
  const int64_t bytes = packed_size(type, count);
  if (bytes > rt.eager_max || !rt.out[dest].empty() || staged(buf, count, type, bytes)) return false;
  *heap_rts = rendezvous_from_heap(type, buf, count, dest, bytes) ? 1 : 0;
  if (*heap_rts) return false;
  Cell* cell = free_cell(dest);
  if (!cell) return false;
  CellHeader h{};
  write_eager(*cell, h, buf, count, type, tag, bytes, rt.next_id++, 0, dest);
  put_header(*cell, h);
  publish(dest);
  return true;
}

int send_as(const void* buf, int64_t count, ddt_type type, int dest, int tag, int mode) {
  int heap_rts = -1;
  bool checked = false;
  if (sent_now(buf, count, type, dest, tag, mode, &heap_rts, &checked)) return DDT_SUCCESS;
  ddt_request r = DDT_REQUEST_NULL;
  if (int e = isend_as(buf, count, type, dest, tag, mode, true, &r, heap_rts, checked)) return e;
  return ddt_comm_wait(&r, nullptr);
}

int recv_as(void* buf, int64_t count, ddt_type type, int source, int tag, ddt_status* status) {
  ddt_request r = DDT_REQUEST_NULL;
  if (int e = irecv_as(buf, count, type, source, tag, true, &r, true)) return e;
  return ddt_comm_wait(&r, status);
}

}  // namespace ddt::shm

extern "C" {

int ddt_comm_init(void) {
  if (ready()) return DDT_ERR_COMM;  // once per process
  JobHeader* job = nullptr;
  int rank = -1, size = 0;
  if (int e = attach_job(&job, &rank, &size)) return e;
  return join(job, rank, size, std::getenv("DDTKIT_JOB"));
}

int ddt_comm_finalize(void) {
  if (!ready()) return DDT_ERR_COMM;
  // What this process still owes its peers (FIN, CTS, data cells) goes out before the barrier.
  int e = spin([] {
    for (auto& q : rt.out)
      if (!q.empty()) return false;
    return rt.detached == 0;  // buffered sends delivered too
  }, [] { return any_peer_dead(); });
  if (!e) e = ddt_comm_barrier();
  engine_stop();
  rt.layouts.clear();
  rt.put_layouts.clear();
  rt.attacher.close();
  detach_job(rt.job);
  rt.job = nullptr;
  return e;
}

int ddt_comm_rank(int* rank) {
  if (!ready()) return DDT_ERR_COMM;
  if (!rank) return DDT_ERR_ARG;
  *rank = rt.rank;
  return DDT_SUCCESS;
}

int ddt_comm_size(int* size) {
  if (!ready()) return DDT_ERR_COMM;
  if (!size) return DDT_ERR_ARG;
  *size = rt.size;
  return DDT_SUCCESS;
}

int ddt_comm_isend(const void* buf, int64_t count, ddt_type type, int dest, int tag, ddt_request* req) {
  return ddt_comm_isend_mode(buf, count, type, dest, tag, DDT_SEND_STANDARD, req);
}

int ddt_comm_isend_mode(const void* buf, int64_t count, ddt_type type, int dest, int tag, int mode, ddt_request* req) {
  if (ready() && !user_tag(tag, false)) return DDT_ERR_ARG;
  return isend_as(buf, count, type, dest, tag, mode, false, req);
}

int ddt_comm_irecv(void* buf, int64_t count, ddt_type type, int source, int tag, ddt_request* req) {
  if (ready() && !user_tag(tag, true)) return DDT_ERR_ARG;
  return irecv_as(buf, count, type, source, tag, false, req);
}

int ddt_comm_test(ddt_request* req, int* done, ddt_status* status) {
  if (!req || !done) return DDT_ERR_ARG;
  if (!*req) {
    *done = 1;
    if (status) *status = ddt_status{DDT_ANY_SOURCE, DDT_ANY_TAG, DDT_SUCCESS, 0};
    return DDT_SUCCESS;
  }
  if (!ready()) return DDT_ERR_COMM;
  return ddt::guarded([&] {
    progress();
    ddt_request r = *req;
    // Whether the peer has died is asked at most every 20 ms (as spin does): the answer costs a
    // system call and a read of /proc, ten times a test, and a caller polling a request in a loop
    // (the MPI interposer) would spend its time there instead of moving cells.
    // The clock is read only for a request not done yet (a read costs 20-40 ns here: see spin).
    static auto last_check = std::chrono::steady_clock::time_point{};
    bool ask = false;
    if (!r->done) {
      const auto now = std::chrono::steady_clock::now();
      ask = now - last_check > std::chrono::milliseconds(20);
      if (ask) last_check = now;
    }
    if (ask && (r->peer == DDT_ANY_SOURCE ? any_peer_dead() : peer_dead(r->peer))) {
      progress();
      if (!r->done) fail(r);  // its peer is gone: the request fails, and is released
    }
    *done = r->done;
    if (!r->done) return static_cast<int>(DDT_SUCCESS);
    return finish(req, status);
  });
}

int ddt_comm_wait(ddt_request* req, ddt_status* status) {
  if (!req) return DDT_ERR_ARG;
  int done = 0;
  if (!*req) return ddt_comm_test(req, &done, status);
  if (!ready()) return DDT_ERR_COMM;
  ddt_request r = *req;
  const int e = spin([&] { return r->done; },
                     [&] { return r->peer == DDT_ANY_SOURCE ? any_peer_dead() : peer_dead(r->peer); });
  if (e == DDT_ERR_PEER && !r->done) fail(r);
  return finish(req, status);  // done now: no second progress (test's) on a ping-pong's path
}

int ddt_comm_waitall(int n, ddt_request reqs[], ddt_status statuses[]) {
  if (n < 0 || (n > 0 && !reqs)) return DDT_ERR_ARG;
  int first = DDT_SUCCESS;
  for (int i = 0; i < n; ++i) {
    const int e = ddt_comm_wait(&reqs[i], statuses ? &statuses[i] : nullptr);
    if (e && !first) first = e;
  }
  return first;
}

int ddt_comm_send(const void* buf, int64_t count, ddt_type type, int dest, int tag) {
  return ddt_comm_send_mode(buf, count, type, dest, tag, DDT_SEND_STANDARD);
}

int ddt_comm_send_mode(const void* buf, int64_t count, ddt_type type, int dest, int tag, int mode) {
  if (ready() && !user_tag(tag, false)) return DDT_ERR_ARG;
  return send_as(buf, count, type, dest, tag, mode);
}

int ddt_comm_recv(void* buf, int64_t count, ddt_type type, int source, int tag, ddt_status* status) {
  if (ready() && !user_tag(tag, true)) return DDT_ERR_ARG;
  return recv_as(buf, count, type, source, tag, status);
}

int ddt_comm_barrier(void) {
  if (!ready()) return DDT_ERR_COMM;
  // Sense by generation: the last to arrive resets the count and opens the next generation.
  JobHeader* j = rt.job;
  const uint64_t gen = j->barrier_generation.load(std::memory_order_acquire);
  if (j->barrier_arrived.fetch_add(1, std::memory_order_acq_rel) == static_cast<uint64_t>(rt.size) - 1) {
    j->barrier_arrived.store(0, std::memory_order_relaxed);
    j->barrier_generation.fetch_add(1, std::memory_order_release);
    return DDT_SUCCESS;
  }
  return spin([&] { return j->barrier_generation.load(std::memory_order_acquire) != gen; },
              [] { return any_peer_dead(); });
}

int ddt_comm_configure(int mechanism, int exchange, int64_t cache_entries) {
  if (!ready()) return DDT_ERR_COMM;
  if (mechanism < DDT_MECH_AUTO || mechanism > DDT_MECH_HEAP || exchange < DDT_EXCHANGE_MEMOIZED ||
      exchange > DDT_EXCHANGE_PIPELINED)
    return DDT_ERR_ARG;
  rt.mech = mechanism, rt.exchange = exchange;
  if (cache_entries > 0) {
    rt.layouts.set_capacity(cache_entries);
    rt.sent.set_capacity(cache_entries);
    rt.put_layouts.set_capacity(cache_entries);
    rt.put_sent.set_capacity(cache_entries);
  }
  return DDT_SUCCESS;
}

int ddt_comm_set_protocol(int protocol) {
  if (!ready()) return DDT_ERR_COMM;
  if (protocol < DDT_PROTO_RGET || protocol > DDT_PROTO_HYBRID) return DDT_ERR_ARG;
  rt.protocol = protocol;
  return DDT_SUCCESS;
}

int ddt_comm_set_chunking(int64_t min_bytes, int64_t chunk_bytes) {
  if (!ready()) return DDT_ERR_COMM;
  rt.chunk_min = min_bytes < 0 ? -1 : min_bytes;
  if (chunk_bytes > 0) rt.chunk_bytes = chunk_bytes;
  return DDT_SUCCESS;
}

int ddt_comm_set_engine_ratio(double ratio) {
  if (!(ratio > 0) || !std::isfinite(ratio)) return DDT_ERR_ARG;
  rt.engine_ratio = ratio;
  return DDT_SUCCESS;
}

int ddt_comm_get_load(int rank, int64_t* pending_bytes) {
  if (!ready()) return DDT_ERR_COMM;
  if (!pending_bytes || rank < 0 || rank >= rt.size) return DDT_ERR_ARG;
  *pending_bytes = rt.job->load[rank].bytes.load(std::memory_order_acquire);
  return DDT_SUCCESS;
}

int ddt_comm_get_times(ddt_comm_times* t) {
  if (!t) return DDT_ERR_ARG;
  if (!ready()) return DDT_ERR_COMM;
  *t = rt.times;
  // The phases' ticks in ns, at the rate the ticks ran against the system clock since join.
  const int64_t dt = phase_ticks() - rt.ticks0, dn = now_ns() - rt.ns0;
  const double ns_per_tick = dt > 0 && dn > 0 ? static_cast<double>(dn) / static_cast<double>(dt) : 1.0;
  const auto ns = [&](int64_t ticks) { return static_cast<int64_t>(static_cast<double>(ticks) * ns_per_tick); };
  t->exchange_ns = ns(rt.phases.exchange), t->translate_ns = ns(rt.phases.translate);
  t->attach_ns = ns(rt.phases.attach), t->copy_ns = ns(rt.phases.copy);
  return DDT_SUCCESS;
}

int ddt_type_commit_comm(ddt_type type) {
  if (!ready()) return DDT_ERR_COMM;
  if (int e = ddt::check_type(type)) return e;
  if (!type->committed.load(std::memory_order_acquire)) return DDT_ERR_NOT_COMMITTED;
  return ddt::guarded([&] {
    const Hash h = key_of(type);
    auto body = serialized(type);
    if (!body) return static_cast<int>(DDT_ERR_NO_MEM);
    rt.sent.pin(h);
    for (int p = 0; p < rt.size; ++p) {
      if (p == rt.rank) continue;
      Outgoing o{kLayout};
      o.hash = h, o.body = body;
      enqueue(p, std::move(o));
    }
    return static_cast<int>(DDT_SUCCESS);
  });
}

int ddt_type_free_comm(ddt_type type) {
  if (!ready()) return DDT_ERR_COMM;
  if (int e = ddt::check_type(type)) return e;
  return ddt::guarded([&] {
    const Hash h = key_of(type);
    rt.sent.unpin(h);
    for (int p = 0; p < rt.size; ++p) {
      if (p == rt.rank) continue;
      Outgoing o{kForget};
      o.hash = h;
      enqueue(p, std::move(o));
    }
    return static_cast<int>(DDT_SUCCESS);
  });
}

}  // extern "C"
