// Large messages (runtime.hpp): how the receiver learns the sender's layout, and how it moves the
// bytes once it knows it.
//
// Layout exchange, chosen by the sender (FALCON-X section 4):
//   memoized (default)  the RTS names the layout by its content hash, and carries the serialized
//                       layout only when this sender has not sent it to this peer before
//                       (memo.hpp); a receiver that has evicted it asks again (CTS kNeedLayout);
//   descriptor          the RTS carries the serialized canonical layout every time;
//   naive, pipelined    the RTS carries no layout: after the CTS, the sender lists its pieces
//                       (ddt_iov) into iov cells; the receiver copies after the last (naive) or
//                       as each arrives (pipelined). O(blocks) metadata: the designs the others
//                       are measured against.
// Mechanism, chosen by the receiver (select() below):
//   heap   the send buffer lies in the sender's mapped heap (heap.hpp) and this process has the
//          segment mapped (attach.hpp): ddt's own type-to-type copy runs from the mapping into
//          the receive, one pass, no system call;
//   cma    process_vm_readv with both sides' piece lists, at most 1024 pieces a call;
//   pipe   CTS, and the sender packs the stream into data cells that the receiver unpacks.
// Protocol, chosen by the receiver (ddt_comm_set_protocol; see "the protocols" below): RGET,
// the above; RPUT, the sender writes the receive; COOP-p2p, both copy a half at once. The sender
// writes through its mapping of the receive's heap segment when the receive lies in the
// receiver's heap (the CTS names the segment), else by CMA (process_vm_writev).
// Every address that arrives from a peer is checked before it is read or written: a layout's
// whole span (true bounds over count elements) must lie inside the segment it names, and with an
// iov exchange every piece must; with CMA the kernel checks them against the peer's mappings.
#include <sched.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "cpu/arguments.hpp"
#include "cpu/copy.hpp"
#include "cpu/device.hpp"
#include "shm/engine.hpp"
#include "shm/heap.hpp"
#include "shm/protocol.hpp"
#include "shm/runtime.hpp"
#include "type/type.hpp"

namespace ddt::shm {

namespace {

constexpr int64_t kMaxIov = 1024;  // the kernel's limit per process_vm_readv call (IOV_MAX)

// Set by a CMA call that found no process (ESRCH): the peer is exiting. A process killed a moment
// ago loses its memory before it is a zombie, let alone reaped, so the pid probe of peer_dead()
// can still find it while its copy has already failed; the copy's failure is its death then,
// not a corrupt message. Per thread: the second engine's calls set their own.
thread_local bool t_vanished = false;

// ---- the cost model -----------------------------------------------------------------------------
// heap: plain loads from a mapping, no per-piece or per-call kernel cost, one pass: chosen
//   whenever the send buffer is in the heap and the segment is mapped (its only cost, mapping on
//   first use, is paid once per segment and peer and then cached).
// cma: process_vm_readv costs about 1-1.5 us per call and 0.35 us per piece (issue 10's
//   measurement on this machine kind) and moves the bytes once; the pipelined path moves them
//   twice through cells that stay in cache (about 0.1-0.2 ns per byte each way). So one copy by
//   CMA pays when pieces are long enough that 0.35 us per piece costs less than the second pass:
//   pieces of some KiB. The pieces of a transfer are the finer of the two sides' layouts
//   (ddt_type_blocks, from the plans).
}  // namespace
const int64_t kCmaMinPiece = 4096;  // declared in runtime.hpp, for the interposer too
namespace {
// And for messages of kCmaMinBytes and more: below, the pipelined cells win even for one piece
// (round trips of n bytes of DDT_BYTE from malloc'd buffers, pipe / CMA, at 502677a: 16,320 B
// 8.06 / 9.91 us, 24,576 B 9.70 / 9.87; 40,800 B 12.75 / 11.84, 65,536 B 15.95 / 15.69,
// 131,072 B 24.56 / 22.47).
constexpr int64_t kCmaMinBytes = int64_t{32} << 10;
// heap vs pipelined cells. The heap copy reads the sender's lines from the sender's core, each on
// the receiver's core alone; the pipelined cells let the sender gather its own cache-hot blocks
// and move full lines, both cores working. So what the heap pays for is every cache line of the
// sender's layout it touches, and what it gets is the bytes in them: the rule is the bytes per
// touched line (sender_lines below), not the average piece. Round trips heap / pipe through
// ddt_runtime_bench --kernels at 6df77de, medians of five runs, all with the ranks' cores on
// different dies (bench/line_probe.hpp: 156-179 ns a line), with each kernel's exact bytes per
// touched line (every piece's lines, counted from ddt_iov):
//   heap wins:  NAS_LU_y N=1020 (40 B pieces, 26.7 B/line)  35.8 / 73.8 us; N=408 35.0 / 37.0
//               WRF_y_vec and _sa 2x2-8x8 (44-92 B pieces, 37-46 B/line)  0.66-0.83 of the pipe
//               LAMMPS_full (10.7 B pieces, dense: 55 B/line)  129.8 / 183.7, 107.5 / 143.9, 84.0 / 106.3
//   even:       SPECFEM3D_mt (12 B pieces, 32 B/line)  0.92-1.10
//   pipe wins:  WRF_x (12 B pieces, 10.7-12 B/line)  1.95-3.24x; NAS_MG_x W, A (8 B/line)  1.43, 1.48x;
//               SPECFEM3D_cm c=1 (12.6 B/line) 1.28x
// The average-piece rule (128 B) had sent WRF_y, LAMMPS_full and NAS_LU_y through the pipe. The
// kernels of under 16 KiB (LAMMPS_atomic, SPECFEM3D_oc, NAS_LU_y to N=162) ran even both ways.
// The lines are not all of it: SPECFEM3D_mt's 12 B pieces at 32 B a line lost 0.78-0.87 through
// the heap in 50e65a1's runs against d8c37bc's pipe (both distances; its type-to-type copy pays
// per piece on one core what the pipe's gather and scatter split between two), while NAS_LU_y's
// 40 B pieces at 26.7 B a line gained 1.63-1.67 and LAMMPS_full's 10.7 B pieces at 55 B a line
// 1.11-1.46. So a layout takes the heap with lines at least a third full (kHeapMinLineBytes) and
// pieces of kHeapMinPieceBytes, or with lines at least three quarters full whatever its pieces.
// Messages of 512 KiB and more (half of this machine's 1 MiB L2 per core) are not in the sender's
// cache, and the heap's one pass wins whatever the density: FFT2D's transposes of 16 B pieces,
// round trips pipe / heap, ddt_runtime_bench --kernels FFT2D at 9f6b866, cores near (39-49 ns a
// line): N=512 (1 MiB to the peer) 570 / 314, 510 / 252 us; far (make bench run S): 1384 / 808.
// Below it the sender gathers from its cache: N=256 (256 KiB to the peer) near 98 / 152, 99 /
// 142 us, far (run S) 387 / 476, where the threshold had been 256 KiB and sent it by the heap
// (fada53c had measured heap 22 / pipe 35 us at N=256, in a version of that kernel since changed).
//
// The distance between the cores moves the line further: with the vCPUs sharing caches (42-48 ns
// a line) the heap won even NAS_MG_x A (68.4 / 106.4, 75.9 / 93.5, 68.7 / 91.5, 87.5 / 103.6),
// and far (163-174 ns) it lost it (243.2 / 147.5, 276.6 / 175.1); WRF_y_vec 8x8 near 17.5-18.2 /
// 23.7-25.3; but WRF_x lost near too (4x4 70.3 / 29.8, 8x8 37.5 / 18.4: its struct of arrays
// is copied through a staging buffer, not by a twin nest). The threshold is placed for the far
// case, where a wrong heap costs most (up to 3x); near, the sparse kernels keep the pipe and give
// up 1.2-1.5x. Taking both: the receiver times both ways per layout and keeps the clearly
// faster one (learn.hpp, deliver_rts below), with this rule as its first guess.
//
// Except tiny blocks that the copy moves in masked 64-byte windows (ddt::copy_in_windows: both
// sides of one shape, blocks of 1-12 B at strides up to 64, AVX-512): a piece costs a fraction of
// a load and store there, so the heap wins whatever the lines. Round trips of one vector of
// bytes between two ranks' heap buffers, medians of 380, before (DDTKIT_AVX512=0: the cells) /
// after, us, cores near (42 ns a line): 1 B blocks at 2 B, 32 KiB of payload 32.2 / 2.9, 128 KiB
// 93.8 / 6.6; 4 B at 8 B (osu_latency's vect:8:4) 13.0 / 3.4, 30.2 / 8.0; 8 B at 16 B 10.0 / 2.9,
// 24.4 / 6.6; 12 B at 24 B 10.7 / 3.0, 26.8 / 7.1; 4 B at 12 B 11.6 / 3.9, 27.5 / 10.1.
//
// And except a copy that transposes by tiles (ddt::copy_by_tiles: FFT2D's send type into its
// receive type), which in cache costs about a pack and an unpack together on the receiver's core
// alone, where the cells split the two between both cores: below kSenderCached it takes the
// cells, whatever the sender's lines, and the learner is not asked, since the
// receiver's own time does not show what the sender's core does meanwhile (in FFT2D's
// all-to-all it copies its own block). FFT2D N=256 (256 KiB to the peer), round trips through
// ddt_runtime_bench --kernels FFT2D at 9f6b866, cells / heap: near 93-99 / 139-155 us, far
// (make bench run S) 387 / 476.
constexpr int64_t kHeapMinLineBytes = 20, kHeapMinPieceBytes = 32, kHeapDenseLineBytes = 48;
constexpr int64_t kSenderCached = int64_t{512} << 10;

// Contiguous pieces of count elements of t: blocks per element times count, or one when the
// elements are single blocks that follow each other (a contiguous buffer).
int64_t pieces_of(ddt_type t, int64_t count) {
  int64_t b = 0, size = 0, lb = 0, ext = 0;
  int asc = 0;
  if (ddt_type_blocks(t, &b, &asc) != DDT_SUCCESS) return INT64_MAX;
  ddt_type_size(t, &size);
  ddt_type_extent(t, &lb, &ext);
  int64_t tlb = 0, text = 0;
  ddt_type_true_extent(t, &tlb, &text);
  if (b == 1 && ext == size && text == size) return 1;
  int64_t p;
  return __builtin_mul_overflow(b, count, &p) ? INT64_MAX : p;
}

// The cache lines that count elements of t at addr touch, for the heap/pipe rule above.
//
// Counted, where the layout is keyed (memoized: the count is paid once per layout, count and
// alignment) and has at most kCountPieces pieces: every piece's lines from ddt_iov, sorted, the
// distinct ones kept (pieces of an index list come in any order, and neighbours share lines).
// Else estimated from the span: each piece its own lines (a piece of a bytes meets a / 64 + 1 on
// average) where the pieces lie apart, at most every line of the span where they lie closer. The
// estimate misses where the span has holes: LAMMPS_full 3534,3062 (a struct over arrays that lie
// apart) estimates 21,600 lines where it touches 3,534, which put it on the wrong side.
constexpr int64_t kCountPieces = int64_t{1} << 15;

int64_t estimated_lines(ddt_type t, int64_t count, int64_t pieces, int64_t n) {
  int64_t lb = 0, ext = 0, tlb = 0, text = 0;
  if (pieces <= 0 || count <= 0 || ddt_type_extent(t, &lb, &ext) != DDT_SUCCESS ||
      ddt_type_true_extent(t, &tlb, &text) != DDT_SUCCESS)
    return std::max<int64_t>(1, n);  // unknown: as sparse as can be (the pipe)
  const double span = static_cast<double>(text) + static_cast<double>(count - 1) * std::abs(static_cast<double>(ext));
  const double piece = static_cast<double>(n) / static_cast<double>(pieces);
  const double apart = static_cast<double>(pieces) * (piece / 64 + 1), close = span / 64 + 1;
  return std::max<int64_t>(1, static_cast<int64_t>(std::min({apart, close, 9e18})));
}

// -1 where ddt_iov refuses the address (a peer's near-NULL base with relative displacements).
int64_t counted_lines(ddt_type t, int64_t count, uintptr_t addr) {
  std::vector<uint64_t> lines;
  struct iovec v[256];
  for (int64_t off = 0;;) {
    int64_t nv = 0, bytes = 0;
    if (ddt_iov(reinterpret_cast<const void*>(addr), count, t, off, v, 256, &nv, &bytes) != DDT_SUCCESS) return -1;
    if (nv == 0 || bytes == 0) break;
    for (int64_t i = 0; i < nv; ++i) {
      if (v[i].iov_len == 0) continue;
      const uint64_t first = reinterpret_cast<uintptr_t>(v[i].iov_base) / 64;
      const uint64_t last = (reinterpret_cast<uintptr_t>(v[i].iov_base) + v[i].iov_len - 1) / 64;
      for (uint64_t l = first; l <= last; ++l) lines.push_back(l);
    }
    off += bytes;
  }
  std::sort(lines.begin(), lines.end());
  return std::max<int64_t>(1, std::unique(lines.begin(), lines.end()) - lines.begin());
}

int64_t sender_lines(ddt_type t, int64_t count, int64_t pieces, int64_t n, const Hash* key, uintptr_t addr) {
  // (n is the whole message's bytes, which a truncating receive may not read: counting stays
  // bounded by kCountPieces pieces and kSenderCached bytes, whatever the peer's layout.)
  if (!key || pieces > kCountPieces || n >= kSenderCached) return estimated_lines(t, count, pieces, n);
  thread_local Recent<Placed, int64_t, 8> memo;
  const Placed at{*key, count, static_cast<unsigned>(addr % 64)};  // the count moves with the line offset only
  if (const int64_t* lines = memo.find(at)) return *lines;
  int64_t lines = counted_lines(t, count, addr);
  if (lines < 0) lines = estimated_lines(t, count, pieces, n);
  memo.put(at, lines);
  return lines;
}

// The contiguous pieces of a transfer's two sides (pieces_of) and the lines the sender's touch
// (sender_lines), found once per message: the mechanism's cost model and the protocol's choice
// both read them.
struct Pieces {
  int64_t sender, receiver;
  int64_t lines = 0;      // the sender's
  bool windows = false;   // the heap's copy moves the blocks in masked windows (ddt::copy_in_windows)
  bool tiled = false;     // the heap's copy transposes by tiles (ddt::copy_by_tiles)
  int64_t finer() const { return std::max(sender, receiver); }
};

// The Pieces of count elements of remote (the sender's, at raddr, n bytes) moved into count of
// local; with model, also what the heap/pipe rule reads (windows, tiled, the sender's lines).
// Kept for the last few (the sender's layout key, its count and its address's offset in a line,
// the receive's key and count; keyed messages only): a repeated transfer asked pieces_of's type
// queries twice, copy_in_windows, copy_by_tiles and the lines' memo for every message, about
// 90 ns of the receiver's 320 before its copy (rdtsc timeline of an 8 KiB vector ping-pong).
Pieces transfer_pieces(ddt_type remote, int64_t rcount, const Hash* rkey, ddt_type local, int64_t count,
                       const Hash& lkey, uintptr_t raddr, int64_t n, bool model) {
  struct Key {
    Placed from;
    Hash lkey;
    int64_t count;
    bool model;
    bool operator==(const Key& o) const { return count == o.count && model == o.model && from == o.from && lkey == o.lkey; }
  };
  thread_local Recent<Key, Pieces, 4> memo;
  const Key k{rkey ? Placed{*rkey, rcount, static_cast<unsigned>(raddr % 64)} : Placed{}, lkey, count, model};
  if (rkey)
    if (const Pieces* p = memo.find(k)) return *p;
  Pieces p{pieces_of(remote, rcount), pieces_of(local, count)};
  if (model) {
    p.windows = ddt::copy_in_windows(remote, rcount, local, count);
    p.tiled = !p.windows && ddt::copy_by_tiles(remote, rcount, local, count);
    if (!p.windows && !p.tiled) p.lines = sender_lines(remote, rcount, p.sender, n, rkey, raddr);
  }
  if (rkey) memo.put(k, p);
  return p;
}

enum class Mech { kHeap, kCma, kPipe };

// Whether the heap's one copy beats the pipelined cells for n bytes of these pieces: by the bytes
// in each sender line it touches and by its pieces (kHeapMinLineBytes above); beyond the sender's
// cache the pipe loses its advantage and moves the bytes twice.
bool heap_pays(const Pieces& p, int64_t n) {
  if (n >= kSenderCached || p.windows) return true;
  if (p.tiled) return false;  // a transpose by tiles: the cells (above)
  const int64_t per_line = n / std::max<int64_t>(1, p.lines), per_piece = n / std::max<int64_t>(1, p.sender);
  return per_line >= kHeapDenseLineBytes || (per_line >= kHeapMinLineBytes && per_piece >= kHeapMinPieceBytes);
}

// p is null for an iov exchange (the pieces are not known yet: CMA whenever permitted).
Mech select(const Attachment* seg, const Pieces* p, int64_t n) {
  if (rt.mech == DDT_MECH_PIPE) return Mech::kPipe;
  if (seg && rt.mech == DDT_MECH_HEAP) return Mech::kHeap;
  if (seg && rt.mech == DDT_MECH_AUTO) return !p || heap_pays(*p, n) ? Mech::kHeap : Mech::kPipe;
  if (!rt.cma) return Mech::kPipe;
  if (rt.mech == DDT_MECH_CMA || !p) return Mech::kCma;
  // CMA pays where the finer side's pieces are long enough (kCmaMinPiece above).
  return p->finer() > 0 && n / p->finer() >= kCmaMinPiece && n >= kCmaMinBytes ? Mech::kCma : Mech::kPipe;
}

// ---- CMA ----------------------------------------------------------------------------------------

// Drops `over` bytes from the end of the piece list (iov, *n).
void trim(struct iovec* iov, int64_t* n, int64_t over) {
  while (over > 0) {
    const int64_t cut = std::min<int64_t>(over, iov[*n - 1].iov_len);
    iov[*n - 1].iov_len -= cut, over -= cut;
    if (iov[*n - 1].iov_len == 0) --*n;
  }
}

// One side of a CMA transfer in this process: count elements of type at buf.
struct Side {
  const void* buf;
  int64_t count;
  ddt_type type;
};

// Moves stream bytes [off, off + the pieces' total) between this process's side `local` and the
// peer's pieces remote[0, nr), which hold those bytes in the peer (the total at most what local
// holds from off): process_vm_readv into local (RGET, COOP's receiver) or process_vm_writev out
// of it (RPUT, COOP's sender). Both sides' piece lists are zipped a slice at a time, at most
// kMaxIov pieces each per call. False when the kernel refuses (*refused: not permitted here) or a
// call comes up short.
bool cma_zip(pid_t pid, bool write, const Side& local, const struct iovec* remote, int64_t nr, int64_t off, bool* refused) {
  struct iovec liov[kMaxIov], rslice[kMaxIov];
  int64_t end = off;
  for (int64_t i = 0; i < nr; ++i) end += static_cast<int64_t>(remote[i].iov_len);
  int64_t ri = 0, rused = 0;
  for (int64_t lo = off; lo < end;) {
    int64_t nl = 0, lb = 0;
    if (ddt_iov(local.buf, local.count, local.type, lo, liov, kMaxIov, &nl, &lb) != DDT_SUCCESS || lb <= 0) return false;
    if (lo + lb > end) {
      trim(liov, &nl, lo + lb - end);
      lb = end - lo;
    }
    // The remote slice that matches these local bytes, at most kMaxIov pieces of it.
    int64_t ns = 0, want = lb;
    while (want > 0 && ns < kMaxIov) {
      const int64_t take = std::min<int64_t>(want, remote[ri].iov_len - rused);
      rslice[ns].iov_base = static_cast<char*>(remote[ri].iov_base) + rused;
      rslice[ns].iov_len = take;
      ++ns, want -= take, rused += take;
      if (rused == static_cast<int64_t>(remote[ri].iov_len)) ++ri, rused = 0;
    }
    if (want > 0) {  // the remote slice needs more than kMaxIov pieces: shorten the local side
      trim(liov, &nl, want);
      lb -= want;
    }
    const ssize_t got = write ? process_vm_writev(pid, liov, nl, rslice, ns, 0) : process_vm_readv(pid, liov, nl, rslice, ns, 0);
    if (got < 0 && (errno == EPERM || errno == ENOSYS)) {
      *refused = true;
      return false;
    }
    if (got < 0 && errno == ESRCH) t_vanished = true;  // the peer is exiting: its memory is gone
    if (got != lb) return false;
    lo += lb;
  }
  return true;
}

// Copies the sender's pieces remote[0, nr) (stream bytes from off) into the receive r.
bool cma_pull(ddt_request r, pid_t pid, const struct iovec* remote, int64_t nr, int64_t off, bool* refused) {
  return cma_zip(pid, false, Side{r->rbuf, r->count, r->type}, remote, nr, off, refused);
}

// Stream bytes [from, to) between local and count elements of the peer's layout remote at its
// address addr (the engine seeks both layouts to from): read into local, or written from it.
bool cma_move(int peer, bool write, const Side& local, ddt_type remote, uint64_t addr, int64_t count, int64_t from,
              int64_t to, bool* refused) {
  struct iovec riov[kMaxIov];
  const pid_t pid = static_cast<pid_t>(rt.job->pid[peer].load(std::memory_order_acquire));
  *refused = false;
  for (int64_t off = from; off < to;) {
    int64_t nr = 0, rb = 0;
    if (ddt_iov(reinterpret_cast<const void*>(addr), count, remote, off, riov, kMaxIov, &nr, &rb) != DDT_SUCCESS || rb <= 0)
      return false;
    if (off + rb > to) {
      trim(riov, &nr, off + rb - to);
      rb = to - off;
    }
    if (!cma_zip(pid, write, local, riov, nr, off, refused)) return false;
    off += rb;
  }
  return true;
}

// ---- the mapped heap ---------------------------------------------------------------------------

// [*lo, *hi): the bytes that count elements of t at address addr touch (their true bounds, the
// first and last element placed by the extent, either sign); false when that is not a range of
// addresses.
bool data_span(ddt_type t, uint64_t addr, int64_t count, uintptr_t* lo, uintptr_t* hi) {
  int64_t tlb = 0, text = 0, lb = 0, ext = 0;
  if (count <= 0 || ddt_type_true_extent(t, &tlb, &text) || ddt_type_extent(t, &lb, &ext)) return false;
  const __int128 step = static_cast<__int128>(count - 1) * ext;
  const __int128 l = static_cast<__int128>(addr) + tlb + std::min<__int128>(0, step);
  const __int128 h = static_cast<__int128>(addr) + tlb + text + std::max<__int128>(0, step);
  if (l < 0 || h < l || h > static_cast<__int128>(UINTPTR_MAX)) return false;
  *lo = static_cast<uintptr_t>(l), *hi = static_cast<uintptr_t>(h);
  return true;
}

// The local address, in the mapping a of a peer's segment, of that peer's buffer addr (its send
// or its receive), when count elements of remote there lie wholly inside the segment; 0
// otherwise. (The buffer address itself may lie outside: only data bytes must be inside.)
uintptr_t heap_local(const Attachment& a, ddt_type remote, uint64_t addr, int64_t count) {
  uintptr_t lo, hi;
  if (!data_span(remote, addr, count, &lo, &hi) || !a.translate(lo, hi - lo)) return 0;
  return reinterpret_cast<uintptr_t>(a.local) + (static_cast<uintptr_t>(addr) - a.owner_base);  // mod 2^64
}

// This process's heap segment that holds every data byte of (buf, count, type), for a transfer
// with peer; id 0 when there is none or the heap mechanism is not allowed (DDT_MECH_PIPE, CMA).
// A send's segment goes in its RTS (the receiver reads through it), a receive's in its CTS (the
// sender writes its RPUT or COOP share through it).
// The last answer that named a segment is kept (rt.last_segment) and reused while the heap is
// unchanged: a program that repeats a transfer sends from the same segment every time.
SegmentRef heap_segment(ddt_type type, const void* buf, int64_t count, int peer) {
  uintptr_t lo, hi;
  if (rt.mech == DDT_MECH_PIPE || rt.mech == DDT_MECH_CMA || !rt.attacher.usable() ||
      !data_span(type, reinterpret_cast<uintptr_t>(buf), count, &lo, &hi))
    return {};
  auto& last = rt.last_segment;
  const uint64_t gen = heap_generation();  // before the lookup: a change after it is seen next time
  if (last.seg.id && last.gen == gen && last.peer == peer && lo >= last.seg.base &&
      hi <= last.seg.base + static_cast<uintptr_t>(last.seg.size))
    return last.seg;
  const SegmentRef seg = find_segment(lo, hi, peer);
  if (seg.id) last.gen = gen, last.peer = peer, last.seg = seg;
  return seg;
}

// Sends seg's descriptor to peer unless it has gone there already, before the cell that names
// the segment (so it has arrived when that cell is read); false when it cannot be sent now.
bool offer(const SegmentRef& seg, int peer) {
  if (seg.sent) return true;
  if (!rt.attacher.send(peer, seg)) return false;
  set_sent(seg.id, peer);
  return true;
}

// Copies the sender's pieces (stream bytes from off) out of the mapping into the receive; false
// when a piece is not inside the segment (nothing of it is read).
bool heap_pull(ddt_request r, const Attachment& a, const struct iovec* pieces, int64_t n, int64_t off) {
  if (!r->cursor || r->cursor->position() != off) {
    r->cursor.reset(new ddt::Cursor(*r->type->layout, r->type->extent(), reinterpret_cast<uintptr_t>(r->rbuf), r->count));
    r->cursor->seek(off);
  }
  for (int64_t i = 0; i < n && off < r->bytes; ++i) {
    const char* src = a.translate(reinterpret_cast<uintptr_t>(pieces[i].iov_base), pieces[i].iov_len);
    if (!src) return false;
    ddt::CursorCopy<false> op{const_cast<char*>(src)};
    off += r->cursor->advance(std::min<int64_t>(pieces[i].iov_len, r->bytes - off), op);
  }
  return true;
}

// Copies the sender's pieces[0, n), stream bytes [off, off + bytes), into the receive through
// the mechanism its CTS chose (the heap mapping or CMA); the part beyond the receive's capacity is
// dropped first. False when a piece fails the mechanism's checks.
bool pull(ddt_request r, int source, struct iovec* pieces, int64_t n, int64_t off, int64_t bytes) {
  const int64_t keep = std::max<int64_t>(0, std::min(bytes, r->bytes - off));
  if (keep == 0) return true;
  trim(pieces, &n, bytes - keep);
  const int64_t t0 = phase_ticks();
  bool ok;
  if (r->via_heap) {
    const Attachment* a = rt.attacher.find(source, r->rseg);
    ok = a && heap_pull(r, *a, pieces, n, off);
  } else {
    bool refused = false;
    ok = cma_pull(r, static_cast<pid_t>(rt.job->pid[source].load(std::memory_order_acquire)), pieces, n, off, &refused);
  }
  rt.phases.copy += phase_ticks() - t0;
  return ok;
}

void finish(ddt_request r, int source, bool ok, int64_t n, bool gone = false) {
  r->status.bytes = ok ? n : 0;
  // A copy that failed because the sender died (CMA reads a gone process) is the peer's failure,
  // not a corrupt message: the application must see DDT_ERR_PEER as for any other operation.
  const int error = ok ? (r->msg > r->bytes ? DDT_ERR_TRUNCATE : DDT_SUCCESS) : (gone || peer_dead(source)) ? DDT_ERR_PEER : DDT_ERR_CORRUPT;
  complete(r, error);
  enqueue(source, Outgoing{kFin, nullptr, r->sid, ok ? n : 0});
}

void ask(ddt_request r, int source, uint32_t flags) {
  if (flags == 0) ++rt.times.by_cells;  // the stream comes in data cells
  if (!r->id) r->id = rt.next_id++;
  track(r);
  Outgoing o{kCts, r, r->sid};
  o.flags = flags;
  enqueue(source, o);
}

// The local address of the sender's buffer in the segment mapping, when its data lie inside it
// (memoized under a keyed layout: checked once per (count, address, segment)); 0 otherwise.
uintptr_t heap_src(ddt_request r, int source, const Attachment& seg, ddt_type remote, const Hash& key, bool keyed) {
  const int64_t t0 = phase_ticks();
  uintptr_t src = 0;
  if (keyed)
    if (const char* t = rt.layouts.translation(source, key, r->rcount, r->raddr, r->rseg)) src = reinterpret_cast<uintptr_t>(t);
  if (!src) {
    src = heap_local(seg, remote, r->raddr, r->rcount);
    if (src && keyed) rt.layouts.remember(source, key, r->rcount, r->raddr, r->rseg, reinterpret_cast<const char*>(src));
  }
  rt.phases.attach += phase_ticks() - t0;
  return src;
}

// ---- the protocols (ddt_comm_set_protocol; seed 002, sections II-A and II-B) ------------------
// The receiver chooses (protocol.hpp: its setting, both calls' kinds, the size, the pieces, the
// load counters), once it has matched the RTS and holds the sender's layout, and says so in its
// CTS; the sender follows whatever the CTS says. So the choice is the receiver's alone and needs
// no agreement, and no control message is added to RGET's RTS/FIN.
//   RGET  the receiver copies everything (heap, CMA or cells, select() above) and sends FIN.
//   RPUT  CTS(kPut: the receive's layout, address, count); the sender writes every byte with
//         process_vm_writev, sends FIN(kFinRecv) and is done; the receiver completes on it.
//   COOP  CTS(kCoop, the same and the split); the receiver copies stream bytes [0, split)
//         (heap mapping or CMA read, as RGET does) and sends FIN; the sender, on the CTS, writes
//         [split, n) and sends FIN(kFinRecv). Each completes when its share is done and the
//         other's FIN has arrived: the sender's buffer must stay until the receiver has read its
//         share, and the receive is not whole until the sender has written its share.
// Every copy is a CopyJob (runtime.hpp) that the progress engine runs, whole or chunk by chunk
// (COOP-chunked: cells from every peer are read between chunks), striped over the second engine
// when the choice says so (COOP_HCA). Load counters (COOP-load): the receiver counts its share
// in its own counter and, as the CTS goes out, the sender's share in the sender's (comm.cpp's
// emit); each side uncounts its share chunk by chunk, and the rest when its copy fails.
// The receive's layout travels memoized, as the sender's does (rt.put_sent, rt.put_layouts); a
// sender that has evicted it asks again (kAgain). A CMA refused on either side (the FIN says so,
// or the receiver finds it on its share) turns the transfer into data cells from byte 0: the
// bytes already written are written again, the same.

void uncharge(ddt_request r, int64_t bytes) {
  bytes = std::min(bytes, r->charged);
  if (bytes <= 0) return;
  r->charged -= bytes;
  rt.job->load[rt.rank].bytes.fetch_sub(bytes, std::memory_order_relaxed);
}

// COOP-load's recent work (job.hpp's Load): this rank adds the stream bytes it has just copied
// to its own decayed sum, under the seqlock that peers read it by.
void record_copied(int64_t bytes) {
  if (bytes <= 0) return;
  JobHeader::Load& l = rt.job->load[rt.rank];
  const int64_t now = now_ns();
  const int64_t v = decayed(l.recent.load(std::memory_order_relaxed), now - l.stamp.load(std::memory_order_relaxed));
  const uint64_t s = l.seq.load(std::memory_order_relaxed);
  l.seq.store(s + 1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  l.recent.store(v > INT64_MAX - bytes ? INT64_MAX : v + bytes, std::memory_order_relaxed);
  l.stamp.store(now, std::memory_order_relaxed);
  l.seq.store(s + 2, std::memory_order_release);
}

// Rank's recent work as it stands now. A few tries at an untorn reading, then whatever was read:
// a peer that died while writing must not hold this side up.
int64_t recent_copied(int rank, int64_t now) {
  const JobHeader::Load& l = rt.job->load[rank];
  int64_t v = 0, t = 0;
  for (int tries = 0; tries < 4; ++tries) {
    const uint64_t s1 = l.seq.load(std::memory_order_acquire);
    v = l.recent.load(std::memory_order_relaxed);
    t = l.stamp.load(std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_acquire);
    if (!(s1 & 1) && l.seq.load(std::memory_order_relaxed) == s1) break;
  }
  return decayed(v, now - t);
}

void charge(ddt_request r, int64_t bytes) {
  if (bytes <= 0) return;
  r->charged += bytes;
  rt.job->load[rt.rank].bytes.fetch_add(bytes, std::memory_order_relaxed);
}

// Receiver: the CTS of an RPUT or COOP receive, its layout named by key and sent when this peer
// may not have it (with_layout: the sender asked again), and the receive's heap segment when it
// has one (r->wseg, offered to the sender in deliver_rts).
Outgoing put_cts(ddt_request r, int source, bool with_layout) {
  const int64_t t0 = phase_ticks();
  Outgoing o{kCts, r, r->sid};
  o.flags = (r->proto == DDT_PROTO_COOP ? kCoop : kPut) | (r->chunked ? kChunk : 0u);
  o.seg = r->wseg;
  if (rt.exchange == DDT_EXCHANGE_DESCRIPTOR) {
    o.body = serialized(r->type);
  } else {
    o.hash = key_of(r->type);
    o.flags |= kHasHash;
    if (with_layout) rt.put_sent.erase(source, o.hash);
    if (!rt.put_sent.has(source, o.hash)) {
      o.body = serialized(r->type);
      rt.put_sent.add(source, o.hash);
    }
  }
  rt.phases.exchange += phase_ticks() - t0;
  return o;
}

// Receiver: completes r once its share is done and the sender's FIN has arrived.
void settle(ddt_request r) {
  if (!r->share_done || !r->peer_fin) return;
  r->status.bytes = r->share_error ? 0 : std::min(r->msg, r->bytes);
  complete(r, r->share_error ? r->share_error : static_cast<int>(r->msg > r->bytes ? DDT_ERR_TRUNCATE : DDT_SUCCESS));
}

// Queues the copy of stream bytes [from, to) of r with the peer's layout remote (retained by the
// job): reading from the heap mapping at the local address src, by CMA from the peer's address,
// or writing by CMA.
void queue_copy(CopyJob::Kind kind, ddt_request r, int peer, ddt_type remote, uint64_t addr, int64_t rcount, int64_t from,
                int64_t to, uint64_t seg) {
  ddt::retain(remote);
  CopyJob j{kind, r, peer, remote, addr, rcount, from, to, from};
  j.seg = seg;
  rt.copies.push_back(j);
}

// Receiver: a matched RTS with the sender's layout remote, and the choice made (RPUT or COOP)
// for its stream bytes.
void start_protocol(ddt_request r, int source, const Attachment* seg, ddt_type remote, const Hash& key, bool keyed,
                    const Choice& c) {
  r->proto = c.proto, r->split = c.split, r->chunked = c.chunked;
  if (!r->id) r->id = rt.next_id++;
  track(r);
  enqueue(source, put_cts(r, source, false));  // the sender's share is counted as it goes out
  if (r->proto == DDT_PROTO_RPUT) {  // by the mechanism the CTS offered (the heap when it names a segment)
    ++rt.times.by_rput, ++(r->wseg ? rt.times.by_heap : rt.times.by_cma);
    r->share_done = true;  // the sender writes it all
    return;
  }
  ++rt.times.by_coop;
  charge(r, r->split);
  // This side's share, by the progress engine: the sender writes the rest once the CTS reaches it.
  if (seg) {  // the send lies in the sender's heap, mapped here (mech AUTO or HEAP)
    ++rt.times.by_heap;
    const uintptr_t src = heap_src(r, source, *seg, remote, key, keyed);
    if (src) return queue_copy(CopyJob::kHeapRead, r, source, remote, src, r->rcount, 0, r->split, r->rseg);
    CopyJob failed{CopyJob::kHeapRead, r, source, DDT_TYPE_NULL, 0, 0, 0, r->split, 0};
    failed.error = DDT_ERR_CORRUPT;
    return copy_done(failed, false, false);
  }
  ++rt.times.by_cma;
  queue_copy(CopyJob::kCmaRead, r, source, remote, r->raddr, r->rcount, 0, r->split, 0);
}

// ---- running the copies ---------------------------------------------------------------------

// Moves stream bytes [from, to) of job j; false on failure (*refused: CMA is not permitted).
// A share or a chunk chooses its store kind by the whole message (copy_range's footprint): both
// sides write one destination, which a single copy of the message would write with streaming
// stores from kStreamBytes on. By its own length, each 8 MiB share of a 16 MiB COOP message used
// plain stores (read-for-ownership) while RGET's one 16 MiB copy streamed. 2 ranks, 16 MiB
// contiguous through the heap (a 1-block vector type), round trips of one protocol in a row,
// medians of 100, two runs: COOP-p2p 1.27-1.28 -> 1.09-1.10 ms, COOP-chunked 1.31-1.33 -> 1.07-1.08,
// HYBRID 1.33-1.35 -> 1.10-1.11, RGET 2.01-2.08 both ways (COOP / RGET 1.57 -> 1.86). Two
// threads of one process copying 8 MiB each with memcpy: 1.86-2.11x one thread's 16 MiB.
bool move_range(const CopyJob& j, int64_t from, int64_t to, bool* refused) {
  ddt_request r = j.r;
  const int64_t whole = r->send ? r->bytes : std::min(r->msg, r->bytes);
  switch (j.kind) {
    case CopyJob::kHeapRead:
      ddt::copy_range(reinterpret_cast<const void*>(j.addr), j.rcount, j.remote, r->rbuf, r->count, r->type, from, to,
                      whole);
      return true;
    case CopyJob::kHeapWrite:
      ddt::copy_range(r->sbuf, r->count, r->type, reinterpret_cast<void*>(j.addr), j.rcount, j.remote, from, to,
                      whole);
      return true;
    case CopyJob::kCmaRead:
      return cma_move(j.peer, false, Side{r->rbuf, r->count, r->type}, j.remote, j.addr, j.rcount, from, to, refused);
    default:
      return cma_move(j.peer, true, Side{r->sbuf, r->count, r->type}, j.remote, j.addr, j.rcount, from, to, refused);
  }
}

// The same, striped over this core and the second engine (COOP_HCA): the engine takes
// R / (1 + R) of the range, from its end.
bool move_striped(const CopyJob& j, int64_t from, int64_t to, bool* refused) {
  const double R = rt.engine_ratio;
  const int64_t mid = from + (static_cast<int64_t>(static_cast<double>(to - from) / (1.0 + R)) & ~int64_t{63});
  if (mid >= to || mid <= from) return move_range(j, from, to, refused);
  bool engine_refused = false;
  const CopyJob copy = j;
  if (!engine_start([copy, mid, to, &engine_refused] { return move_range(copy, mid, to, &engine_refused); }))
    return move_range(j, from, to, refused);
  const bool mine = move_range(j, from, mid, refused);
  const bool theirs = engine_wait();
  *refused = *refused || engine_refused;
  rt.times.engine_bytes += to - mid;
  return mine && theirs;
}

// The layout's part of rendezvous_from_heap's answer (heap_pays, as the receiver will judge it).
// key: the type's.
//
// Not for pieces of kRtsMaxPiece bytes or more (contiguous buffers included): the cell's two
// copies of such pieces run at memory speed, and the RTS's handshake costs more than the copy it
// saves. The measurements beside rendezvous_from_heap sent unchanged data from one buffer and
// received into another, so the heap copy read lines already in the receiver's cache (8 KiB
// contiguous: 99 ns of copy a receive, ddt_comm_get_times); where the sender has written its
// data since (DDTBench's ping-pong receives into the buffer it sends from, as an application's
// halo is rewritten between exchanges) the same copy took 680-760 ns, and RTS lost. Round trips
// of one vector of char sent and received in place, ddt_alloc buffers, medians of 15, cores near
// (27-31 ns a line), RTS / eager (DDTKIT_EAGER_MAX=16384), us: contiguous 8 KiB 2.84-3.46 /
// 2.27, 12 KiB 2.71-2.75 / 2.11-2.19; 128 B blocks at 256 B, 8 KiB 3.21-3.22 / 2.39-2.53; 256 B
// at 512 B 2.93-2.95 / 2.74; but 64 B at 128 B, 12 KiB 2.90-2.91 / 3.48-3.65 (8 KiB 3.23 / 2.96)
// and 40 B at 560 B (NAS_LU_y's faces) 8 KiB 3.10 / 4.32, 16,000 B 4.98 / 7.53, at 1040 B 12,000
// B 3.84-3.93 / 5.62-5.72, where the cells' pack and unpack of the small pieces cost more. The
// same, cores far (160-175 ns a line), two runs: contiguous 8 KiB 10.04-10.07 / 8.45-8.48, 12 KiB
// 13.13-13.37 / 13.12-13.21; 128 B at 256 B 11.85-11.87 / 9.13-9.36; 64 B at 128 B, 12 KiB
// 9.27-10.51 / 13.67-13.89 (kept by RTS); 40 B at 6560 B (NAS_LU_y N=162) 11.78-12.03 / 11.56-11.68.
// make bench run V (cores far): NAS_LU_x N=162, a contiguous 6480 B face, 7.34 us by RTS against
// 6.79-6.85 eager (ddt_runtime_bench's forced pipe and heap columns, which keep it eager).
//
// Nor for the tiny blocks that the heap copy would move in masked windows (heap_pays' exception):
// the windows read every line of the span, twice the payload's at a stride of twice the block,
// all of them from the other core, where the cells' pack and unpack of such blocks run at about
// memory speed (the byte permutes). In place, cores near, RTS / eager, us: 4 B blocks at 8 B
// (osu_latency's vect:8:4), 8 KiB 4.55-5.65 / 2.47-3.06; 8 B at 16 B 2.34 / 1.35; 1 B at 2 B
// 5.01 / 2.52. (Unchanged data sent from one buffer into another, as osu_latency does, the other
// way round: 4 B at 8 B, 8 KiB 1.69 / 2.89.)
constexpr int64_t kRtsMaxPiece = 128;
bool layout_pays_heap(ddt_type type, const void* buf, int64_t count, int64_t n, const Hash& key) {
  const int64_t pieces = pieces_of(type, count);  // both sides': the receive taken to be of this shape
  if (n / std::max<int64_t>(1, pieces) >= kRtsMaxPiece) return false;
  if (ddt::copy_in_windows(type, count, type, count)) return false;
  Pieces p{pieces, pieces};
  // The lines are counted (memoized, as the receiver counts them) for up to kSenderCountPieces
  // pieces, else estimated from the span: a send that fits a cell must not pay for listing and
  // sorting thousands of lines whenever its layout has left the 8-entry memo. (Pieces that many in
  // 16 KB average under 16 B; the estimate is close for regular layouts and, for scattered ones,
  // errs toward too many lines, so toward the eager cell this message would have taken anyway.)
  constexpr int64_t kSenderCountPieces = 1024;
  p.lines = p.sender <= kSenderCountPieces ? sender_lines(type, count, p.sender, n, &key, reinterpret_cast<uintptr_t>(buf))
                                           : estimated_lines(type, count, p.sender, n);
  return heap_pays(p, n);
}

}  // namespace

// Sender: whether a message that an eager cell would hold goes by RTS instead, so that the
// receiver copies it once out of this process's heap (RGET) rather than the cell's two copies (the
// sender's pack into the cell, the receiver's unpack out of it). Where the send lies in the mapped
// heap, its layout is one the heap pays for (heap_pays, judged as the receiver will judge it, with
// the receive taken to be of the same shape; not for pieces of 128 B and more nor for masked
// windows: layout_pays_heap), and it is larger than kHeapEagerMax. Round trips of one vector of
// char between two ranks' heap buffers (ddt_alloc; unchanged data sent from one buffer and
// received into another, which favours the heap: layout_pays_heap), medians of 15 samples, cores
// near (30 ns a line), eager / RTS (DDTKIT_EAGER_MAX=0), us, at 4 / 6 / 8 / 16 KiB of payload:
// 4 B blocks at 8 B (osu_latency's vect:8:4) 1.30-1.63 / 1.33-2.26, 2.35 / 2.47, 2.85-3.21 /
// 1.77-2.57, 4.71 / 3.46; 64 B at 128 B 1.48 / 1.81, 2.14 / 1.96, 2.87 / 2.09, 5.31 / 2.51; 40 B
// at 560 B (NAS_LU_y's faces) 2.07 / 1.92, 3.12 / 2.21, 4.19 / 2.49, 7.34 / 3.33; contiguous 1.33 /
// 1.60, 1.92 / 1.64, 2.60 / 1.75, 4.38 / 2.05. (16 B blocks at 32 B, which the receiver's rule
// sends through the pipelined cells, lost by RTS: 4.93 / 7.13 at 16 KiB; heap_pays keeps them eager.)
// Only with the mechanism left to the runtime (DDT_MECH_AUTO): a forced one keeps the eager limit,
// as DDTKIT_EAGER_MAX does, set (every message up to it eager: for a program that, against MPI's
// rules, counts on its standard sends of some KiB being buffered; ddt_comm_send_mode's buffered
// mode is the portable way). The MPI interposer keeps the rule: neither MPI buffers such a message
// itself (two ranks each sending the other 12 KiB of vector(384, 4, 5, MPI_DOUBLE) with MPI_Send
// before MPI_Recv waited forever natively under MPICH 5.0.2 and Open MPI 5.0.11 alike).
//
// The layout's part of the answer (layout_pays_heap above) depends on the layout, the count and the
// buffer's offset in its cache line only, and is kept for the last few: a program that repeats a
// send asks it every time, and it cost a fifth of the sender's path to its RTS (pieces_of's five
// type queries, copy_in_windows, the layout's key and the lines' memo: about 60 ns of 290-330, an
// rdtsc timeline of a ddt_comm_send/recv ping-pong of vector(2048, 4, 8, DDT_CHAR) between
// ddt_alloc buffers). Keyed by the layout's content hash, so a type freed and another made at the
// same address never takes its answer.
bool rendezvous_from_heap(ddt_type type, const void* buf, int64_t count, int peer, int64_t n) {
  // Where eager cells to the peer stream (stream.hpp: its core is far), they take about a third
  // of the ordinary cell's time, below what the handshake alone costs there: eager.
  // ddt_runtime_bench, cores far, NAS_LU_y N=162 (6,480 B of 40 B pieces 6,560 B apart), round
  // trips: RTS 11.2-11.7 us, streamed eager 3.5. (Asked before the segment's lookup, the dearer.)
  if (n <= kHeapEagerMax || rt.mech != DDT_MECH_AUTO || rt.eager_fixed || streams_to(peer) ||
      !heap_segment(type, buf, count, peer).id)
    return false;
  thread_local Recent<Placed, bool, 4> memo;
  const Placed at{key_of(type), count, static_cast<unsigned>(reinterpret_cast<uintptr_t>(buf) % 64)};
  if (const bool* pays = memo.find(at)) return *pays;
  const bool pays = layout_pays_heap(type, buf, count, n, at.key);
  memo.put(at, pays);
  return pays;
}

// What follows a copy job, by role: RGET's receiver sends FIN and completes; COOP's receiver
// sends FIN for its share and settles; a sender (RPUT, COOP) sends FIN(kFinRecv) and completes
// when nothing else is awaited. ok: every byte moved; refused: CMA was not permitted.
void copy_done(const CopyJob& j, bool ok, bool refused) {
  ddt_request r = j.r;
  // Whether the peer has died, asked only of a failed copy: peer_dead() costs a kill() and a read
  // of /proc (about 10 us here), which every rendezvous paid before: 24 KB round trips through
  // the heap took 27 us of which the two copies were 3.6.
  const bool gone = !ok && (t_vanished || peer_dead(j.peer));
  t_vanished = false;
  uncharge(r, r->charged);  // whatever is left of this side's share: none of it will be copied now
  if (ok) ++rt.times.copies, rt.times.copy_bytes += j.to - j.from, record_copied(j.to - j.pos);  // earlier chunks: run_copies
  if (r->send) {
    if (refused) {  // not permitted here: the receiver asks for data cells
      rt.cma = false;
      r->await_cells = true;
      Outgoing o{kFin, nullptr, r->rid, 0};
      o.flags = kFinRecv | kRefused;
      return enqueue(j.peer, o);
    }
    r->share_done = true;
    if (!ok) r->share_error = gone ? DDT_ERR_PEER : DDT_ERR_CORRUPT;
    Outgoing o{kFin, nullptr, r->rid, ok ? j.to - j.from : 0};
    o.flags = kFinRecv | (ok ? 0u : static_cast<uint32_t>(kFailed));
    enqueue(j.peer, o);
    if (r->proto == DDT_PROTO_RPUT || r->peer_fin) complete(r, r->share_error);
    return;
  }
  if (r->proto == DDT_PROTO_RGET) {
    if (refused) {  // not permitted here: the pipelined path from now on
      rt.cma = false;
      --rt.times.by_cma, --rt.times.by_rget;
      return ask(r, j.peer, 0);
    }
    return finish(r, j.peer, ok, j.to, gone);
  }
  r->share_done = true;  // COOP's receiver
  if (refused) {  // no FIN: the sender's FIN comes, then the whole message in data cells
    rt.cma = false;
    r->share_refused = true;
    return;
  }
  if (!ok && !r->share_error) r->share_error = j.error ? j.error : gone ? DDT_ERR_PEER : DDT_ERR_CORRUPT;
  Outgoing fin{kFin, nullptr, r->sid, ok ? r->split : 0};
  if (!ok) fin.flags = kFailed;
  enqueue(j.peer, fin);
  settle(r);
}

void run_copies() {
  // Each job whole, or one chunk of each chunked one per call: the caller (progress) reads every
  // peer's cells before the next chunk. Jobs queued by continuations run on the next call.
  for (size_t i = 0, n = rt.copies.size(); i < n && !rt.copies.empty(); ++i) {
    CopyJob j = rt.copies.front();
    rt.copies.pop_front();
    ddt_request r = j.r;
    const int64_t step = r->chunked && rt.chunk_bytes > 0 ? rt.chunk_bytes : j.to - j.pos;
    const int64_t upto = std::min(j.to, j.pos + step);
    bool refused = false;
    const int64_t t0 = phase_ticks();
    const bool ok = upto <= j.pos || (r->engine ? move_striped(j, j.pos, upto, &refused) : move_range(j, j.pos, upto, &refused));
    rt.phases.copy += phase_ticks() - t0;
    if (ok && upto < j.to) {  // the next chunk after the next look at the cells
      ++rt.times.chunks;
      uncharge(r, upto - j.pos);
      record_copied(upto - j.pos);
      j.pos = upto;
      rt.copies.push_back(j);
      continue;
    }
    if (r->chunked && ok) ++rt.times.chunks;
    const ddt_type remote = j.remote;
    copy_done(j, ok, refused);
    if (remote) ddt::release(remote);
  }
}

void drop_copies(ddt_request r) {
  for (auto it = rt.copies.begin(); it != rt.copies.end();) {
    if (it->r != r) {
      ++it;
      continue;
    }
    if (it->remote) ddt::release(it->remote);
    it = rt.copies.erase(it);
  }
  uncharge(r, r->charged);
}

bool segment_busy(int peer, uint64_t seg) {
  for (const CopyJob& j : rt.copies)
    if ((j.kind == CopyJob::kHeapRead || j.kind == CopyJob::kHeapWrite) && j.peer == peer && j.seg == seg) return true;
  return false;
}

void on_put_fin(ddt_request r, int source, const CellHeader& h) {
  if (r->proto == DDT_PROTO_RGET || r->peer_fin) return;  // not waiting for one: ignored
  r->peer_fin = true;
  if ((h.flags & kRefused) || r->share_refused) {  // CMA refused: the message in data cells
    r->proto = DDT_PROTO_RGET, r->got = 0;
    return ask(r, source, 0);
  }
  const int64_t n = std::min(r->msg, r->bytes);
  if (((h.flags & kFailed) || h.bytes != n - r->split) && !r->share_error)
    r->share_error = peer_dead(source) ? DDT_ERR_PEER : DDT_ERR_CORRUPT;
  settle(r);
}

void on_again(ddt_request r, int source) {
  if (r->proto == DDT_PROTO_RGET || r->peer_fin) return;
  enqueue(source, put_cts(r, source, true));
}

void on_put_cts(ddt_request s, int source, const CellHeader& h, const char* body, int64_t nbody) {
  if (s->share_taken) {  // a CTS too many: ignored, and what it counted uncounted
    if (h.bytes > 0) rt.job->load[rt.rank].bytes.fetch_sub(h.bytes, std::memory_order_relaxed);
    return;
  }
  // The protocol from the first CTS on, even one this side must ask again for: the receiver's
  // FIN for its share may come before this side's copy starts, and must not be taken for RGET's.
  s->proto = (h.flags & kCoop) ? DDT_PROTO_COOP : DDT_PROTO_RPUT;
  s->rid = h.id2;
  // A device send writes no share from device memory (its receiver never asks: deliver_ipc; a
  // forged CTS gets the bytes staged in host memory first).
  stage_ipc_send(s);
  // What the receiver counted for this side's share: this side uncounts it, all of it, whatever
  // happens below (a hostile count only skews the balance, never this side's bookkeeping).
  const int64_t counted = std::max<int64_t>(0, h.bytes);
  s->charged = counted;
  auto fail = [&](uint32_t flags) {
    s->share_taken = true;
    uncharge(s, s->charged);
    if (flags & kRefused) {
      rt.cma = false;
      s->await_cells = true;
    } else {
      s->share_done = true;
      s->share_error = peer_dead(source) ? DDT_ERR_PEER : DDT_ERR_CORRUPT;
    }
    Outgoing o{kFin, nullptr, h.id2, 0};
    o.flags = kFinRecv | flags;
    enqueue(source, o);
    if (!(flags & kRefused) && (s->proto == DDT_PROTO_RPUT || s->peer_fin)) complete(s, s->share_error);
  };
  // The receive's layout: from the body (into the cache when keyed), or from the cache.
  int64_t t0 = phase_ticks();
  ddt_type remote = DDT_TYPE_NULL;
  bool owned = false;
  const Hash key = key_of(h);
  if (nbody > 0) {
    if (ddt_type_deserialize(body, nbody, &remote) == DDT_SUCCESS) {
      owned = true;
      if (h.flags & kHasHash) {
        if (key_of(remote) != key) {  // not what its key says: never cached, never used
          ddt_type_free(&remote);
          owned = false;
        } else {
          rt.put_layouts.insert(source, key, remote, false);
          owned = false;
        }
      }
    }
  } else if (h.flags & kHasHash) {
    remote = rt.put_layouts.find(source, key);
    if (!remote) {  // evicted here: the receiver sends the CTS again, with the layout
      ++rt.times.layout_requests;
      uncharge(s, s->charged);  // the CTS that comes again counts it again
      Outgoing o{kAgain};
      o.id = h.id2;
      return enqueue(source, o);
    }
    ++rt.times.cache_hits;
  }
  rt.phases.translate += phase_ticks() - t0;
  // The receive's count is checked as any caller's; the bytes written are the message's, at
  // most the receive's capacity (a longer message is the receiver's truncation).
  int64_t total = -1;
  bool ok = remote != DDT_TYPE_NULL && ddt::stream(remote, h.count, 0, &total) == DDT_SUCCESS;
  const int64_t n = ok ? std::min(s->bytes, total) : 0;
  const int64_t from = (h.flags & kCoop) ? h.offset : 0;
  ok = ok && from >= 0 && from <= n;
  // Through the receiver's heap segment when the CTS names one and this process may use the heap:
  // every byte of the receive (its layout at its address and count, as the receiver's own
  // capacity) must lie inside that segment, else the CTS is broken. Else by CMA.
  uintptr_t dst = 0;
  if (ok && h.seg && rt.mech != DDT_MECH_PIPE && rt.mech != DDT_MECH_CMA && rt.attacher.usable()) {
    t0 = phase_ticks();
    const Attachment* a = rt.attacher.writable(source, h.seg);
    if (a) {
      dst = heap_local(*a, remote, h.addr, h.count);
      ok = dst != 0;
    }
    rt.phases.attach += phase_ticks() - t0;
  }
  if (!ok || (!dst && !rt.cma)) {
    if (owned) ddt_type_free(&remote);
    return fail(ok ? static_cast<uint32_t>(kRefused) : static_cast<uint32_t>(kFailed));
  }
  s->share_taken = true;
  s->chunked = (h.flags & kChunk) != 0;
  if (dst) {
    ++rt.times.shares_heap;
    queue_copy(CopyJob::kHeapWrite, s, source, remote, dst, h.count, from, n, h.seg);
  } else {
    ++rt.times.shares_cma;
    queue_copy(CopyJob::kCmaWrite, s, source, remote, h.addr, h.count, from, n, 0);
  }
  if (owned) ddt_type_free(&remote);  // the job holds its own reference
}

std::shared_ptr<const std::string> serialized(ddt_type t) {
  int64_t need = 0;
  ddt_type_serialize(t, nullptr, 0, &need);
  auto s = std::make_shared<std::string>(static_cast<size_t>(need), '\0');
  if (ddt_type_serialize(t, s->data(), need, &need) != DDT_SUCCESS) return nullptr;
  return s;
}

Outgoing make_rts(ddt_request r) {
  const int64_t t0 = phase_ticks();
  Outgoing o{kRts, r};
  // The sender's call, for COOP-coll's table (seed 002, Table II).
  o.flags = (r->blocking ? kBlocking : 0u) | (r->mode == DDT_SEND_SYNC ? kSync : 0u) |
            (r->mode == DDT_SEND_BUFFERED ? kBuffered : 0u) | (r->mode == DDT_SEND_READY ? kReady : 0u);
  if (r->ipc && !serialized(r->type)) stage_ipc_send(r);  // (not expected: a committed type serializes)
  if (r->ipc) {  // a device send: its layout and CUDA IPC description, every time
    auto body = std::make_shared<std::string>(*serialized(r->type));
    body->append(r->ipc_desc, ddt::kIpcDesc);
    o.body = std::move(body);
    o.flags |= kIpc;
    rt.phases.exchange += phase_ticks() - t0;
    ++rt.times.sends;
    return o;
  }
  // The heap segment the whole send lies in, its descriptor sent to the peer if not yet.
  const SegmentRef seg = heap_segment(r->type, r->sbuf, r->count, r->peer);
  if (seg.id && offer(seg, r->peer)) o.seg = seg.id;
  if (rt.mech != DDT_MECH_PIPE) {
    switch (r->exchange) {
      case DDT_EXCHANGE_MEMOIZED: {
        o.hash = key_of(r->type);
        o.flags |= kHasHash;
        if (!rt.sent.has(r->peer, o.hash)) {
          o.body = serialized(r->type);
          rt.sent.add(r->peer, o.hash);
        }
        break;
      }
      case DDT_EXCHANGE_DESCRIPTOR:
        o.body = serialized(r->type);
        break;
      case DDT_EXCHANGE_NAIVE:
        o.flags |= kIovNaive;
        break;
      default:
        o.flags |= kIovPipelined;
        break;
    }
  }
  rt.phases.exchange += phase_ticks() - t0;
  ++rt.times.sends;
  return o;
}

// A device send (kIpc): the body is the sender's serialized layout followed by its CUDA IPC
// description. One kernel of this process copies from the sender's device memory into the
// receive (straight into a device receive's own buffer, which is then not unpacked from its
// staging). Where that cannot be (no GPU layer here, a description that does not open in this
// process, a receive too small for the message: truncation is the cells' to deliver), the bytes
// are asked for in cells, and the sender stages them (stage_ipc_send).
void deliver_ipc(ddt_request r, int source, const char* body, int64_t nbody, int64_t n) {
  const ddt::DeviceHook* d = ddt::device_hook.load(std::memory_order_relaxed);
  if (nbody <= ddt::kIpcDesc) return finish(r, source, false, 0);
  if (!d || !d->ipc_copy || r->msg > r->bytes) return ask(r, source, 0);
  ddt_type remote = DDT_TYPE_NULL;
  if (ddt_type_deserialize(body, nbody - ddt::kIpcDesc, &remote) != DDT_SUCCESS) return finish(r, source, false, 0);
  struct Owned {
    ddt_type t;
    ~Owned() { ddt_type_free(&t); }
  } own{remote};
  int64_t total = -1;
  if (ddt::stream(remote, r->rcount, 0, &total) != DDT_SUCCESS || total != r->msg) return finish(r, source, false, 0);
  void* dst = r->user_buf ? r->user_buf : r->rbuf;
  const int64_t dcount = r->user_buf ? r->user_count : r->count;
  ddt_type dtype = r->user_buf ? r->user_type : r->type;
  const int64_t t0 = phase_ticks();
  const int e = n > 0 ? d->ipc_copy(body + nbody - ddt::kIpcDesc, r->rcount, remote, dst, dcount, dtype, n) : DDT_SUCCESS;
  rt.phases.copy += phase_ticks() - t0;
  if (e == ddt::kIpcUnopened) return ask(r, source, 0);
  if (e == DDT_SUCCESS) r->user_buf = nullptr, ++rt.times.by_ipc;  // delivered into it: nothing to unpack
  finish(r, source, e == DDT_SUCCESS, n);
}

void deliver_rts(ddt_request r, int source, const CellHeader& h, const char* body, int64_t nbody) {
  if (!(h.flags & kResent)) {
    r->status.source = source, r->status.tag = h.tag;
    r->msg = h.bytes, r->sid = h.id, r->raddr = h.addr, r->rcount = h.count, r->rseg = h.seg;
    r->send_flags = h.flags;
    ++rt.times.receives;
  }
  const int64_t n = std::min(r->msg, r->bytes);
  if (h.flags & kIpc) return deliver_ipc(r, source, body, nbody, n);
  int64_t t0 = phase_ticks();
  const Attachment* seg = r->rseg && rt.mech != DDT_MECH_PIPE && rt.mech != DDT_MECH_CMA ? rt.attacher.find(source, r->rseg) : nullptr;
  rt.phases.attach += phase_ticks() - t0;

  if (h.flags & (kIovNaive | kIovPipelined)) {  // the layout comes as pieces after the CTS
    const Mech m = select(seg, nullptr, n);
    if (m == Mech::kPipe) return ask(r, source, 0);
    r->via_heap = m == Mech::kHeap, r->naive = h.flags & kIovNaive;
    ++(r->via_heap ? rt.times.by_heap : rt.times.by_cma);
    ++rt.times.by_rget;
    return ask(r, source, kSendIov);
  }
  if (rt.mech == DDT_MECH_PIPE || (!nbody && !(h.flags & kHasHash))) return ask(r, source, 0);

  // The sender's layout: from the body (and into the cache when it is keyed), or from the cache.
  t0 = phase_ticks();
  const Hash key = key_of(h);
  ddt_type remote = DDT_TYPE_NULL;
  bool owned = false;
  if (nbody > 0) {
    if (ddt_type_deserialize(body, nbody, &remote) != DDT_SUCCESS) return finish(r, source, false, 0);
    owned = true;
    if (h.flags & kHasHash) {
      if (key_of(remote) != key) {  // a layout that is not what its key says: never cached
        ddt_type_free(&remote);
        return finish(r, source, false, 0);
      }
      rt.layouts.insert(source, key, remote, false);
      owned = false;
    }
  } else {
    remote = rt.layouts.find(source, key);
    if (!remote) {  // evicted here: the sender resends it
      ++rt.times.layout_requests;
      return ask(r, source, kNeedLayout);
    }
    ++rt.times.cache_hits;
  }
  rt.phases.translate += phase_ticks() - t0;
  struct Owned {  // a layout deserialized for this message only: freed on every path out
    ddt_type t;
    ~Owned() {
      if (t) ddt_type_free(&t);
    }
  } own{owned ? remote : DDT_TYPE_NULL};

  // The peer's count is checked as any caller's (no negative count, no overflow) before the
  // layout is taken to describe the message.
  int64_t total = -1;
  if (ddt::stream(remote, r->rcount, 0, &total) != DDT_SUCCESS || total != r->msg) return finish(r, source, false, 0);
  const bool keyed = (h.flags & kHasHash) != 0;
  // The protocol: RPUT and COOP write the sender's share through the receive's heap segment or
  // by CMA; with neither, RGET. A passive sender (set_passive_isends) is given no share. The
  // segment is looked up only where a share may be given.
  Ask a{};
  const bool passive = rt.passive_isends && !(r->send_flags & kBlocking);
  // What only a share for the sender needs (the receive's heap segment, both load counters, the
  // recent work, each a lookup or a read of a line the peer writes) is read only where choose()
  // may give one: HYBRID below the smallest of its thresholds answers RGET whatever they say
  // (protocol.hpp: may_share). They cost about 140 ns of a 1.3-1.5 us one-way 8 KiB rendezvous
  // before the copy (an rdtsc timeline of both ranks of a ddt_comm_send/recv ping-pong of
  // vector(2048, 4, 8, DDT_CHAR) between ddt_alloc buffers). The same ping-pong, six launches of
  // each build alternated, one way: 0.82-1.10 us against 0.96-1.41 before (paired 0.64-0.86).
  const bool shares = !passive && rt.protocol != DDT_PROTO_RGET;
  const bool share_inputs = shares && may_share(rt.protocol, n);
  // (The segment also decides the setting where CMA has been refused: looked up then too.)
  const SegmentRef wseg = share_inputs || (shares && !rt.cma) ? heap_segment(r->type, r->rbuf, r->count, source) : SegmentRef{};
  a.heap_write = wseg.id != 0;
  a.setting = rt.mech == DDT_MECH_PIPE || (!rt.cma && !a.heap_write) || passive ? DDT_PROTO_RGET : rt.protocol;
  a.send_blocking = (r->send_flags & kBlocking) != 0;
  a.send_mode = (r->send_flags & kBuffered) ? DDT_SEND_BUFFERED : (r->send_flags & kSync) ? DDT_SEND_SYNC
              : (r->send_flags & kReady) ? DDT_SEND_READY : DDT_SEND_STANDARD;
  a.recv_blocking = r->blocking;
  a.n = n;
  const Hash local_key = key_of(r->type);
  // (windows, tiled and lines: the only case select() reads them)
  const Pieces pieces = transfer_pieces(remote, r->rcount, keyed ? &key : nullptr, r->type, r->count, local_key, r->raddr,
                                        r->msg, seg && rt.mech == DDT_MECH_AUTO && n < kSenderCached);
  a.avg_piece = n / std::max<int64_t>(1, pieces.finer());
  if (share_inputs) {
    a.load_self = rt.job->load[rt.rank].bytes.load(std::memory_order_relaxed);
    a.load_peer = rt.job->load[source].bytes.load(std::memory_order_relaxed);
    const int64_t now = now_ns();
    a.hist_self = recent_copied(rt.rank, now);
    a.hist_peer = recent_copied(source, now);
  }
  a.shared_cores = rt.oversubscribed;  // the job's cores, all ranks' masks (comm.cpp's judge_cores)
  a.chunk_min = rt.chunk_min;
  Mech model = select(seg, &pieces, n);
  // Where this process streams its cells to the sender (stream.hpp: their cores are far), the
  // sender's data cells stream too, and they beat the heap's copy, which fetches every line from
  // the other die: ddt_runtime_bench, cores far, the heap / the cells streamed, us: NAS_MG_x W
  // 68-88 / 18-20, WRF_y_sa 8x8 61-79 / 16-17, SPECFEM3D_cm c=3 138-166 / 36-52, NAS_LU_y N=1020
  // 33 / 13.7. Up to kSenderCached, as the learner (beyond, the cells' two copies run at memory speed).
  if (model == Mech::kHeap && seg && n < kSenderCached && rt.mech == DDT_MECH_AUTO && streams_to(source))
    model = Mech::kPipe;
  // Where the cost model decides by the lines (not past the sender's cache, not in windows), the
  // learner has the last word for a keyed layout (learn.hpp: the lines' cost is the cores' distance).
  // Not under COOP_HCA, which asks for the one copy striped over the receiver's two engines: a
  // trial of the cells there moved the message without them (ddt_runtime_bench --protocols-only
  // failed its check "the receive did not run hca" at 32 KiB, after the four other protocols'
  // receives of the same layout had given the learner its three heap samples).
  MechLearner::Ticket ticket;
  const bool learnable = seg && keyed && rt.learn && rt.mech == DDT_MECH_AUTO && rt.protocol != DDT_PROTO_COOP_HCA &&
                         n > 0 && n < kSenderCached && !pieces.windows && !pieces.tiled;
  if (learnable) {
    ticket = rt.learner.choose(source, key, r->rcount, local_key, r->count, model == Mech::kHeap, phase_ticks());
    model = ticket.heap ? Mech::kHeap : Mech::kPipe;
  }
  a.pipe = model == Mech::kPipe;
  const Choice c = n > 0 ? choose(a) : Choice{DDT_PROTO_RGET, n, false, false};
  if (c.proto != DDT_PROTO_RGET) {
    // RPUT, COOP and HYBRID copy through the heaps (or CMA), never the cells: timed as the heap's.
    if (learnable && ticket.heap) r->learn = ticket;
    r->wseg = wseg.id && offer(wseg, source) ? wseg.id : 0;  // else the sender writes by CMA
    return start_protocol(r, source, seg, remote, key, keyed, c);
  }
  r->proto = DDT_PROTO_RGET, r->chunked = c.chunked, r->engine = c.engine;
  Mech m = model;
  if (m == Mech::kPipe && passive && rt.cma && rt.mech != DDT_MECH_PIPE) m = seg ? Mech::kHeap : Mech::kCma;
  if (learnable && (m == Mech::kHeap) == ticket.heap) r->learn = ticket;  // timed as chosen
  if (m == Mech::kHeap) {
    ++rt.times.by_heap, ++rt.times.by_rget;
    const uintptr_t src = heap_src(r, source, *seg, remote, key, keyed);
    if (!src) return finish(r, source, false, 0);
    charge(r, n);
    return queue_copy(CopyJob::kHeapRead, r, source, remote, src, r->rcount, 0, n, r->rseg);
  }
  if (m == Mech::kCma) {
    ++rt.times.by_cma, ++rt.times.by_rget;
    charge(r, n);
    return queue_copy(CopyJob::kCmaRead, r, source, remote, r->raddr, r->rcount, 0, n, 0);
  }
  ask(r, source, 0);
}

void on_iov(ddt_request r, int source, const CellHeader& h, const char* data) {
  constexpr int64_t kMaxPieces = kCellPayload / static_cast<int64_t>(sizeof(struct iovec));
  struct iovec pieces[kMaxPieces];
  bool ok = h.offset == r->got && h.count > 0 && h.count <= kMaxPieces && h.bytes > 0 && h.bytes <= r->msg - h.offset;
  if (ok) {
    std::memcpy(pieces, data, static_cast<size_t>(h.count) * sizeof(struct iovec));  // a snapshot: the peer cannot change it
    uint64_t sum = 0;
    for (int64_t i = 0; i < h.count; ++i) sum += pieces[i].iov_len;
    ok = sum == static_cast<uint64_t>(h.bytes);
  }
  if (ok) {
    r->got += h.bytes;
    if (r->naive)
      r->pieces.insert(r->pieces.end(), pieces, pieces + h.count);
    else
      ok = pull(r, source, pieces, h.count, h.offset, h.bytes);
  }
  if (ok && r->naive && r->got == r->msg)  // every piece is here: now the copy
    ok = pull(r, source, r->pieces.data(), static_cast<int64_t>(r->pieces.size()), 0, r->msg);
  if (!ok) return finish(r, source, false, 0);
  if (r->got == r->msg) finish(r, source, true, std::min(r->msg, r->bytes));
}

void on_layout(int source, const CellHeader& h, const char* body, int64_t nbody) {
  ddt_type t = DDT_TYPE_NULL;
  if (ddt_type_deserialize(body, nbody, &t) != DDT_SUCCESS) return;
  const Hash key = key_of(h);
  if (key_of(t) != key) {
    ddt_type_free(&t);
    return;
  }
  rt.layouts.insert(source, key, t, true);
}

}  // namespace ddt::shm
