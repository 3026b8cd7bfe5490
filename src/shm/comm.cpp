// The intra-node runtime: requests, matching, progress and the two protocols (ddtkit.h's comment
// on ddt_comm_*; the segment in job.hpp).
//
// Protocols, per message:
//   eager (packed size <= kCellPayload): the sender packs straight into a cell; the receiver
//     unpacks straight from it when a receive is posted, or keeps a copy as unexpected.
//   rendezvous: the sender's RTS carries its buffer address, count and serialized canonical layout
//     (O(description), not O(blocks)). The receiver, once matched, either
//       - copies straight from the sender's layout into its own with process_vm_readv (CMA),
//         building both sides' piece lists with ddt_iov (which lists the sender's pieces at the
//         sender's addresses without touching them), at most 1024 pieces a call, then sends FIN;
//       - or answers CTS, and the sender packs the stream into DATA cells, which the receiver
//         unpacks at their offsets (two copies, pipelined over the ring): when the layout does not
//         fit in a cell, CMA is not permitted (EPERM: another user's or a ptrace-restricted
//         process), or DDTKIT_MECH=pipe.
// Matching follows MPI: an arriving message (eager or RTS) takes the earliest posted receive that
// matches it, a posted receive the earliest arrived message that matches it; the ring of one pair
// is FIFO and every cell is read in order, so messages of one pair never overtake each other.
//
// Trust: a cell is written by another process and is read as hostile. Request ids are keys into
// this process's own table (never pointers); offsets and sizes are checked against the request; a
// layout is validated by ddt_type_deserialize; with CMA the kernel checks every remote address
// against the peer's mappings, and this side writes only through its own receive layout.
//
// Failure: the launcher marks a rank that ended abnormally (JobHeader::dead), and a waiting
// operation also probes its peer's pid; either fails the operation with DDT_ERR_PEER.
#include <signal.h>
#include <sched.h>
#include <sys/uio.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <unordered_map>
#include <vector>

#include "ddtkit.h"
#include "cpu/cursor.hpp"
#include "cpu/arguments.hpp"
#include "shm/job.hpp"
#include "type/type.hpp"
#include "util/guarded.hpp"

struct ddt_request_s {
  bool send = false, done = false;
  const void* sbuf = nullptr;
  void* rbuf = nullptr;
  int64_t count = 0;
  ddt_type type = DDT_TYPE_NULL;
  int peer = 0, tag = 0;
  int64_t bytes = 0;  // send: message bytes; receive: capacity
  uint64_t id = 0;    // key of this request in the live table
  ddt_status status{};
  // send, pipelined: the receiver's request (from its CTS) and the bytes put in cells so far
  uint64_t rid = 0;
  int64_t sent = 0;
  // pipelined, either side: the cursor the cells are packed from or unpacked into, sought once
  // at byte 0 and advanced cell by cell (never a fresh walk per cell)
  std::unique_ptr<ddt::Cursor> cursor;
  // receive: the message's bytes, and the bytes of it delivered so far (pipelined)
  int64_t msg = 0, got = 0;
};

namespace {

using namespace ddt::shm;

// A cell to write, in order, to one destination.
struct Outgoing {
  CellKind kind;
  ddt_request req = nullptr;  // eager, rts, data: the send; cts: the receive
  uint64_t id = 0;            // cts, fin: the sender's request id
  int64_t bytes = 0;          // fin: bytes delivered
};

// A message that arrived before its receive.
struct Unexpected {
  int source, tag;
  CellKind kind;
  int64_t bytes;
  std::vector<char> data;  // eager: the packed bytes; rts: the serialized layout
  uint64_t id = 0, addr = 0;
  int64_t count = 0;
};

struct Runtime {
  JobHeader* job = nullptr;
  int rank = -1, size = 0;
  bool cma = true, pipe_only = false, cma_forced = false;
  uint64_t next_id = 1;
  std::vector<std::deque<Outgoing>> out;  // per destination
  std::deque<ddt_request> posted;          // receives not matched yet, in posting order
  std::deque<Unexpected> unexpected;       // messages not matched yet, in arrival order
  std::unordered_map<uint64_t, ddt_request> waiting;  // requests a peer's cell may name
};
Runtime rt;

bool ready() { return rt.job != nullptr; }

int64_t packed_size(ddt_type t, int64_t count) {
  int64_t s = 0;
  ddt_type_size(t, &s);
  return s * count;
}

void complete(ddt_request r, int error) {
  r->done = true;
  r->status.error = error;
  rt.waiting.erase(r->id);
}

// A request whose peer has died: out of every queue that holds it, completed with the error.
void fail(ddt_request r) {
  for (auto it = rt.posted.begin(); it != rt.posted.end(); ++it)
    if (*it == r) {
      rt.posted.erase(it);
      break;
    }
  for (auto& q : rt.out)
    for (auto it = q.begin(); it != q.end();)
      it = it->req == r ? q.erase(it) : it + 1;
  complete(r, DDT_ERR_PEER);
}

bool peer_dead(int peer) {
  if (peer < 0 || peer >= rt.size) return false;
  if (rt.job->dead[peer].load(std::memory_order_acquire)) return true;
  const pid_t pid = static_cast<pid_t>(rt.job->pid[peer].load(std::memory_order_acquire));
  return pid > 0 && kill(pid, 0) != 0 && errno == ESRCH;
}

bool any_peer_dead() {
  for (int p = 0; p < rt.size; ++p)
    if (p != rt.rank && peer_dead(p)) return true;
  return false;
}

// ---- writing cells -----------------------------------------------------------------------------

// The next free cell of the channel to dest, or null when the ring is full.
Cell* free_cell(int dest) {
  Channel* c = channel(rt.job, rt.rank, dest);
  const uint64_t head = c->head.load(std::memory_order_relaxed);
  if (head - c->tail.load(std::memory_order_acquire) >= static_cast<uint64_t>(kCells)) return nullptr;
  return &c->cells[head % kCells];
}
void publish(int dest) {
  Channel* c = channel(rt.job, rt.rank, dest);
  c->head.store(c->head.load(std::memory_order_relaxed) + 1, std::memory_order_release);
}

// Writes one cell of the item o for dest: kBlocked when the ring is full, kMore when a data item
// has more cells to write, kDone when the item is finished.
enum Emit { kBlocked, kMore, kDone };
Emit emit(int dest, Outgoing& o) {
  Cell* cell = free_cell(dest);
  if (!cell) return kBlocked;
  CellHeader& h = cell->h;
  h = CellHeader{};
  h.kind = o.kind;
  ddt_request r = o.req;
  Emit result = kDone;
  switch (o.kind) {
    case kEager: {
      int64_t n = 0;
      h.tag = r->tag, h.bytes = r->bytes;
      ddt_pack(r->sbuf, r->count, r->type, 0, cell->data, r->bytes, &n);
      complete(r, DDT_SUCCESS);
      break;
    }
    case kRts: {
      int64_t need = 0;
      h.tag = r->tag, h.bytes = r->bytes, h.id = r->id;
      h.addr = reinterpret_cast<uintptr_t>(r->sbuf), h.count = r->count;
      if (!rt.pipe_only && ddt_type_serialize(r->type, cell->data, kCellPayload, &need) == DDT_SUCCESS) h.desc = need;
      break;
    }
    case kCts:
      h.id = o.id, h.id2 = r->id;
      break;
    case kFin:
      h.id = o.id, h.bytes = o.bytes;
      break;
    case kData: {  // the next cell of the stream, from the send's cursor
      const int64_t n = std::min(kCellPayload, r->bytes - r->sent);
      h.id = r->rid, h.offset = r->sent, h.bytes = n;
      if (!r->cursor) r->cursor.reset(new ddt::Cursor(*r->type->layout, r->type->extent(), reinterpret_cast<uintptr_t>(r->sbuf), r->count));
      ddt::CursorCopy<true> op{cell->data};
      r->cursor->advance(n, op);
      r->sent += n;
      if (r->sent < r->bytes) result = kMore;
      else complete(r, DDT_SUCCESS);
      break;
    }
  }
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
      if (e == kDone) q.pop_front();
    }
  }
}

void enqueue(int dest, Outgoing o) {
  rt.out[dest].push_back(o);
  flush();
}

// ---- receiving ----------------------------------------------------------------------------------

bool matches(const ddt_request r, int source, int tag) {
  return (r->peer == DDT_ANY_SOURCE || r->peer == source) && (r->tag == DDT_ANY_TAG || r->tag == tag);
}

// Drops `over` bytes from the end of the piece list (iov, *n).
void trim(struct iovec* iov, int64_t* n, int64_t over) {
  while (over > 0) {
    const int64_t cut = std::min<int64_t>(over, iov[*n - 1].iov_len);
    iov[*n - 1].iov_len -= cut, over -= cut;
    if (iov[*n - 1].iov_len == 0) --*n;
  }
}

// Copies stream bytes [0, n) of count elements of the sender's layout `remote` at its address
// addr into the receive (CMA). False when the kernel refuses (then the pipelined path is used).
bool cma_copy(ddt_request r, int source, ddt_type remote, uint64_t addr, int64_t count, int64_t n, bool* refused) {
  constexpr int64_t kMaxIov = 1024;  // the kernel's limit per call (IOV_MAX)
  struct iovec riov[kMaxIov], liov[kMaxIov], rslice[kMaxIov];
  const pid_t pid = static_cast<pid_t>(rt.job->pid[source].load(std::memory_order_acquire));
  *refused = false;
  for (int64_t off = 0; off < n;) {
    int64_t nr = 0, rb = 0;
    if (ddt_iov(reinterpret_cast<const void*>(addr), count, remote, off, riov, kMaxIov, &nr, &rb) != DDT_SUCCESS || rb <= 0)
      return false;
    if (off + rb > n) {  // trim the listing to the bytes this receive takes
      trim(riov, &nr, off + rb - n);
      rb = n - off;
    }
    // Local pieces for the same bytes, and the remote slice that matches them, call by call.
    int64_t ri = 0, rused = 0;
    for (int64_t lo = off; lo < off + rb;) {
      int64_t nl = 0, lb = 0;
      if (ddt_iov(r->rbuf, r->count, r->type, lo, liov, kMaxIov, &nl, &lb) != DDT_SUCCESS || lb <= 0) return false;
      if (lo + lb > off + rb) {
        trim(liov, &nl, lo + lb - (off + rb));
        lb = off + rb - lo;
      }
      int64_t ns = 0, want = lb;
      while (want > 0 && ns < kMaxIov) {
        const int64_t take = std::min<int64_t>(want, riov[ri].iov_len - rused);
        rslice[ns].iov_base = static_cast<char*>(riov[ri].iov_base) + rused;
        rslice[ns].iov_len = take;
        ++ns, want -= take, rused += take;
        if (rused == static_cast<int64_t>(riov[ri].iov_len)) ++ri, rused = 0;
      }
      if (want > 0) {  // the remote slice needs more than kMaxIov pieces: shorten the local side
        trim(liov, &nl, want);
        lb -= want;
      }
      const ssize_t got = process_vm_readv(pid, liov, nl, rslice, ns, 0);
      if (got < 0 && (errno == EPERM || errno == ENOSYS)) {
        *refused = true;
        return false;
      }
      if (got != lb) return false;
      lo += lb;
    }
    off += rb;
  }
  return true;
}

// The mechanism's cost model. process_vm_readv costs about 1-1.5 us per call and 0.35 us per
// piece (issue 10's measurement on this machine kind), and moves the bytes once; the pipelined
// path moves them twice through cells that stay in cache (about 0.1-0.2 ns per byte each way).
// So one copy pays when the pieces are long enough that 0.35 us per piece costs less than the
// second pass: at pieces of some KiB. The pieces of a transfer are the finer of the two sides'
// layouts (ddt_type_blocks, from the plans). The threshold is the estimate, not yet
// measured by a benchmark here; DDTKIT_MECH=cma forces CMA regardless.
constexpr int64_t kCmaMinPiece = 4096;

bool cma_pays(ddt_type remote, int64_t rcount, ddt_request r, int64_t n) {
  int64_t rb = 0, lb = 0;
  int asc = 0;
  if (ddt_type_blocks(remote, &rb, &asc) != DDT_SUCCESS || ddt_type_blocks(r->type, &lb, &asc) != DDT_SUCCESS) return false;
  const int64_t pieces = std::max(rb * rcount, lb * r->count);  // no overflow: blocks <= bytes
  return pieces > 0 && n / pieces >= kCmaMinPiece;
}

// A matched message: eager bytes (data, n) or a rendezvous to start.
void deliver_eager(ddt_request r, int source, int tag, const char* data, int64_t bytes) {
  const int64_t n = std::min(bytes, r->bytes);
  int64_t u = 0;
  if (n > 0) ddt_unpack(data, n, r->rbuf, r->count, r->type, 0, &u);
  r->status.source = source, r->status.tag = tag, r->status.bytes = n;
  complete(r, bytes > r->bytes ? DDT_ERR_TRUNCATE : DDT_SUCCESS);
}

void deliver_rts(ddt_request r, int source, int tag, int64_t bytes, uint64_t sid, uint64_t addr, int64_t count,
                 const char* desc, int64_t ndesc) {
  r->status.source = source, r->status.tag = tag;
  r->msg = bytes;
  const int64_t n = std::min(bytes, r->bytes);
  if (rt.cma && ndesc > 0) {
    ddt_type remote = DDT_TYPE_NULL;
    bool refused = false, ok = false, tried = false;
    if (ddt_type_deserialize(desc, ndesc, &remote) == DDT_SUCCESS) {
      // The peer's count is checked as any caller's (no negative count, no overflow) before
      // the layout is taken to describe the message.
      int64_t total = -1;
      const bool describes = ddt::stream(remote, count, 0, &total) == DDT_SUCCESS && total == bytes;
      if (describes && (rt.cma_forced || cma_pays(remote, count, r, n))) {
        tried = true;
        ok = cma_copy(r, source, remote, addr, count, n, &refused);
      } else if (!describes) {
        tried = true;  // a layout that does not describe the message: refused below
      }
      ddt_type_free(&remote);
    } else {
      tried = true;
    }
    if (tried && (ok || !refused)) {  // done, or a descriptor that fails validation: either way the sender is released
      r->status.bytes = ok ? n : 0;
      complete(r, !ok ? DDT_ERR_CORRUPT : bytes > r->bytes ? DDT_ERR_TRUNCATE : DDT_SUCCESS);
      enqueue(source, Outgoing{kFin, nullptr, sid, ok ? n : 0});
      return;
    }
    if (refused) rt.cma = false;  // not permitted here: the pipelined path from now on
  }
  r->id = rt.next_id++;
  rt.waiting[r->id] = r;
  enqueue(source, Outgoing{kCts, r, sid, 0});
}

// Reads every cell that has arrived from source, in order.
void drain(int source) {
  Channel* c = channel(rt.job, source, rt.rank);
  uint64_t tail = c->tail.load(std::memory_order_relaxed);
  const uint64_t head = c->head.load(std::memory_order_acquire);
  for (; tail < head; ++tail) {
    const Cell& cell = c->cells[tail % kCells];
    const CellHeader h = cell.h;  // a copy: the peer cannot change what is checked below
    switch (h.kind) {
      case kEager:
      case kRts: {
        const int64_t ndesc = h.kind == kRts ? h.desc : 0;
        if (h.bytes < 0 || (h.kind == kEager && h.bytes > kCellPayload) || ndesc < 0 || ndesc > kCellPayload) break;
        ddt_request r = nullptr;
        for (auto it = rt.posted.begin(); it != rt.posted.end(); ++it)
          if (matches(*it, source, h.tag)) {
            r = *it;
            rt.posted.erase(it);
            break;
          }
        if (r && h.kind == kEager) {
          deliver_eager(r, source, h.tag, cell.data, h.bytes);
        } else if (r) {
          deliver_rts(r, source, h.tag, h.bytes, h.id, h.addr, h.count, cell.data, ndesc);
        } else {
          Unexpected u{source, h.tag, static_cast<CellKind>(h.kind), h.bytes, {}, h.id, h.addr, h.count};
          const int64_t keep = h.kind == kEager ? h.bytes : ndesc;
          u.data.assign(cell.data, cell.data + keep);
          rt.unexpected.push_back(std::move(u));
        }
        break;
      }
      case kCts: {
        auto it = rt.waiting.find(h.id);
        if (it == rt.waiting.end() || !it->second->send || it->second->peer != source) break;  // not ours
        ddt_request s = it->second;
        s->rid = h.id2;
        rt.out[source].push_back(Outgoing{kData, s, 0, 0});
        break;
      }
      case kData: {
        auto it = rt.waiting.find(h.id);
        if (it == rt.waiting.end() || it->second->send || it->second->status.source != source) break;
        ddt_request r = it->second;
        if (h.offset != r->got || h.bytes <= 0 || h.bytes > kCellPayload || h.offset + h.bytes > r->msg) {
          r->status.bytes = std::min(r->got, r->bytes);
          complete(r, DDT_ERR_CORRUPT);  // out of order or out of bounds: a broken peer
          break;
        }
        if (h.offset < r->bytes) {  // cells arrive in order (checked above): one cursor, advanced
          if (!r->cursor)
            r->cursor.reset(new ddt::Cursor(*r->type->layout, r->type->extent(), reinterpret_cast<uintptr_t>(r->rbuf), r->count));
          ddt::CursorCopy<false> op{const_cast<char*>(cell.data)};
          r->cursor->advance(std::min(h.bytes, r->bytes - h.offset), op);
        }
        r->got += h.bytes;
        if (r->got == r->msg) {
          r->status.bytes = std::min(r->msg, r->bytes);
          complete(r, r->msg > r->bytes ? DDT_ERR_TRUNCATE : DDT_SUCCESS);
        }
        break;
      }
      case kFin: {
        auto it = rt.waiting.find(h.id);
        if (it == rt.waiting.end() || !it->second->send || it->second->peer != source) break;
        complete(it->second, DDT_SUCCESS);
        break;
      }
      default:
        break;  // unknown kinds are ignored
    }
  }
  c->tail.store(tail, std::memory_order_release);
}

void progress() {
  flush();
  for (int s = 0; s < rt.size; ++s) drain(s);
  flush();
}

// Waits, progressing, until done() holds; DDT_ERR_PEER when failed() says the peer it needs
// has died. Spins first, then yields the core.
template <class Done, class Failed>
int spin(Done done, Failed failed) {
  auto last_check = std::chrono::steady_clock::now();
  for (int64_t i = 0;; ++i) {
    progress();
    if (done()) return DDT_SUCCESS;
    if (i > 64) sched_yield();
    const auto now = std::chrono::steady_clock::now();
    if (now - last_check > std::chrono::milliseconds(20)) {
      last_check = now;
      progress();  // whatever arrived before the peer died counts
      if (done()) return DDT_SUCCESS;
      if (failed()) return DDT_ERR_PEER;
    }
  }
}

int check_args(const void* buf, int64_t count, ddt_type type, int peer, int tag, bool recv) {
  if (!ready()) return DDT_ERR_COMM;
  int64_t total = 0;
  if (int e = ddt::stream(type, count, 0, &total)) return e;  // the engine's own checks
  if (recv ? (peer != DDT_ANY_SOURCE && (peer < 0 || peer >= rt.size)) : (peer < 0 || peer >= rt.size)) return DDT_ERR_ARG;
  if (recv ? (tag < 0 && tag != DDT_ANY_TAG) : tag < 0) return DDT_ERR_ARG;
  if (total > 0 && ddt::hostile(buf, count, type)) return DDT_ERR_ARG;  // checked here: the copy may run later
  return DDT_SUCCESS;
}

void free_request(ddt_request r) {
  rt.waiting.erase(r->id);
  if (r->type) ddt::release(r->type);
  delete r;
}

}  // namespace

extern "C" {

int ddt_comm_init(void) {
  if (ready()) return DDT_ERR_COMM;  // once per process
  return ddt::guarded([] {
    JobHeader* job = nullptr;
    int rank = -1, size = 0;
    if (int e = attach_job(&job, &rank, &size)) return e;
    // Every rank attached (or one has died) before the segment's name goes away.
    const auto start = std::chrono::steady_clock::now();
    while (job->attached.load(std::memory_order_acquire) < size) {
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
    if (rank == 0)
      if (const char* path = std::getenv("DDTKIT_JOB")) unlink(path);
    rt = Runtime{};
    rt.job = job, rt.rank = rank, rt.size = size;
    rt.out.resize(size);
    const char* mech = std::getenv("DDTKIT_MECH");
    rt.pipe_only = mech && !std::strcmp(mech, "pipe");
    rt.cma_forced = mech && !std::strcmp(mech, "cma");
    rt.cma = !rt.pipe_only;
    return static_cast<int>(DDT_SUCCESS);
  });
}

int ddt_comm_finalize(void) {
  if (!ready()) return DDT_ERR_COMM;
  // What this process still owes its peers (FIN, CTS, data cells) goes out before the barrier.
  int e = spin([] {
    for (auto& q : rt.out)
      if (!q.empty()) return false;
    return true;
  }, [] { return any_peer_dead(); });
  if (!e) e = ddt_comm_barrier();
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
  if (!req) return DDT_ERR_ARG;
  if (int e = check_args(buf, count, type, dest, tag, false)) return e;
  return ddt::guarded([&] {
    ddt_request r = new ddt_request_s;
    r->send = true, r->sbuf = buf, r->count = count, r->type = type, r->peer = dest, r->tag = tag;
    r->bytes = packed_size(type, count);
    ddt::retain(type);  // the type may be freed while the send is in flight
    r->id = rt.next_id++;
    if (r->bytes <= kCellPayload) {
      enqueue(dest, Outgoing{kEager, r, 0, 0});
    } else {
      rt.waiting[r->id] = r;
      enqueue(dest, Outgoing{kRts, r, 0, 0});
    }
    *req = r;
    return static_cast<int>(DDT_SUCCESS);
  });
}

int ddt_comm_irecv(void* buf, int64_t count, ddt_type type, int source, int tag, ddt_request* req) {
  if (!req) return DDT_ERR_ARG;
  if (int e = check_args(buf, count, type, source, tag, true)) return e;
  return ddt::guarded([&] {
    ddt_request r = new ddt_request_s;
    r->rbuf = buf, r->count = count, r->type = type, r->peer = source, r->tag = tag;
    r->bytes = packed_size(type, count);
    r->status.source = source, r->status.tag = tag;
    ddt::retain(type);
    progress();  // messages that have arrived are matched before this receive is
    for (auto it = rt.unexpected.begin(); it != rt.unexpected.end(); ++it) {
      if (!matches(r, it->source, it->tag)) continue;
      Unexpected u = std::move(*it);
      rt.unexpected.erase(it);
      if (u.kind == kEager)
        deliver_eager(r, u.source, u.tag, u.data.data(), u.bytes);
      else
        deliver_rts(r, u.source, u.tag, u.bytes, u.id, u.addr, u.count, u.data.data(),
                    static_cast<int64_t>(u.data.size()));
      *req = r;
      return static_cast<int>(DDT_SUCCESS);
    }
    rt.posted.push_back(r);
    *req = r;
    return static_cast<int>(DDT_SUCCESS);
  });
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
    int e = DDT_SUCCESS;
    if (!r->done && (r->peer == DDT_ANY_SOURCE ? any_peer_dead() : peer_dead(r->peer))) {
      progress();
      if (!r->done) fail(r);  // its peer is gone: the request fails, and is released
    }
    *done = r->done;
    if (!r->done) return static_cast<int>(DDT_SUCCESS);
    if (status) *status = r->status;
    e = r->status.error;
    free_request(r);
    *req = DDT_REQUEST_NULL;
    return e;
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
  return ddt_comm_test(req, &done, status);
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
  ddt_request r = DDT_REQUEST_NULL;
  if (int e = ddt_comm_isend(buf, count, type, dest, tag, &r)) return e;
  return ddt_comm_wait(&r, nullptr);
}

int ddt_comm_recv(void* buf, int64_t count, ddt_type type, int source, int tag, ddt_status* status) {
  ddt_request r = DDT_REQUEST_NULL;
  if (int e = ddt_comm_irecv(buf, count, type, source, tag, &r)) return e;
  return ddt_comm_wait(&r, status);
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

}  // extern "C"
