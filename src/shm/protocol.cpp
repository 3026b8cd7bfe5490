// The rendezvous protocol's choice (protocol.hpp).
#include "shm/protocol.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "ddtkit.h"

namespace ddt::shm {

// ---- thresholds (HYBRID) -------------------------------------------------------------------
// kCoopMinBytes: COOP's CTS round trip (the sender's share waits for it) and its second FIN cost
// a few microseconds; a second core's half of the copy saves n / 2 at one core's copy rate
// (about 12.5 GB/s here: 10 us per 128 KiB). The protocol sweep (bench/protocol_sweep.hpp,
// 2 ranks, heap buffers, window of 4) puts the crossing between 128 and 512 KiB. With the
// sender's share written by CMA (at 7282b30), RGET / COOP 7.90 / 5.75 GB/s at 32 KiB, 20.9 / 18.1
// at 128 KiB, 34.8 / 41.4 at 512 KiB, 25.7 / 48.6 at 1 MiB (contiguous). With the share written
// through the receive's heap segment (this machine on a noisy day, one run): 6.9 / 7.5 at
// 128 KiB, 15.7 / 16.3 at 512 KiB, 19.9 / 26.7 at 1 MiB, 23.5 / 48.3 at 4 MiB; half round trips
// 14.6 / 16.3 us at 32 KiB, 19.8 / 20.6 at 128 KiB, 40.5 / 36.4 at 512 KiB, 55.4 / 43.7 at 1 MiB.
// Measured again at 76b12dc, after the control messages and the shares' streaming got cheaper:
// COOP now wins from 32 KiB in the same sweep, RGET / COOP GB/s at 32 KiB 21.0-21.6 / 26.3-28.2,
// 128 KiB 31.8-32.7 / 46.7-48.4 (this machine, two runs), and on the 16-core machine of
// tools/cores-lease.sh 15.6-19.4 / 17.0-23.8 and 25.7-29.9 / 35.8-41.3 (three runs). HYBRID at
// 128 KiB with 128 KiB as the threshold / with 256 KiB: 46.9-47.9 / 32.1-33.1 GB/s (alternated,
// two runs each). Not lower: the stencil's isend/irecv faces of 32 KiB (both cores busy with
// their own copies) lost with COOP (above), and a threshold between 32 and 128 KiB was not
// measured. 128 KiB.
const int64_t kCoopMinBytes = int64_t{128} << 10;
// kCoopMinPipeBytes: the same where RGET would move the message in pipelined cells (pieces too
// short for a copy across processes: each side's share of a COOP then pulls every element's line
// from the other core, 2-2.5x slower than packing it locally). When kCoopMinBytes went to 128 KiB
// these messages followed it, and make bench's DDTBench ping-pong lost WRF_x 2x2 (170 KB, 4 B
// elements at row strides) 0.62-0.64x the faster MPI (was 1.01-1.06x; its pipelined time 92-96
// us against 175-185 us by COOP in the same run) and NAS_MG_x A (128 KiB) 0.78x: they keep the
// threshold they were measured with, 256 KiB. Then the cells' own limit (rendezvous.cpp's
// kSenderCached: from there the sender's pieces are taken to be out of its cache and the heap
// is chosen) rose to 512 KiB, and this one with it: every message RGET would move in cells is
// then below it. FFT2D N=256's transposes (256 KiB to each peer, 16 B pieces, isend/irecv) by
// COOP / in cells, round trips through ddt_runtime_bench --kernels FFT2D, cores near: 139-151 /
// 93-99 us.
const int64_t kCoopMinPipeBytes = int64_t{512} << 10;
// kCoopMinBlockingBytes: the same where both calls block and RGET would read through the heap
// or by CMA, once the runtime's control messages got cheap (1-byte round trip 0.45 us, from
// 1.1 us when kCoopMinBytes was measured): COOP's CTS and second FIN now cost less than the
// sender's half of the copy saves from the smallest rendezvous message on. DDTBench ping-pong
// beside both MPIs (runtime_mpi, 2 ranks, two runs each way, speedup over the faster MPI's
// datatype path, RGET below 256 KiB / COOP from 16 KiB): MILC_su3_zd 24 KiB 1.61-1.63 /
// 2.03-2.04, 48 KiB 1.43-1.48 / 2.03-2.08, 96 KiB 1.40-1.43 / 1.95-1.98, NAS_LU_x N=1020
// (40 KiB, contiguous) 1.18-1.24 / 1.65-1.72, NAS_MG_y and NAS_MG_z W (64 KiB) 1.31-1.35 /
// 1.90-2.06; geometric mean over the 66 kernels 1.86-1.88 / 1.91-1.94. Not for non-blocking
// exchanges, where the peer's core is busy with its own copies: the stencil's isend/irecv
// faces (32 KiB) ran 5.5-7.0 / 7.4-9.9 us per iteration at P = 2 and 36.6-38.9 / 45.4-54.5 at
// 2x2x1 with the lower threshold applied to them too.
const int64_t kCoopMinBlockingBytes = int64_t{16} << 10;
// kCmaWriteMinPiece: a process_vm_writev costs about 1-1.5 us per call and 0.35 us per piece
// (issue 10's measurement on this machine kind: 0.49-0.54 us per piece through the whole
// transfer at a846d81), while the receiver's heap read of the same piece costs a cache line or
// a few: a sender's share by CMA pays only where pieces are some KiB long. The same bound as the
// receiver's CMA read (rendezvous.cpp, kCmaMinPiece). A share written through the receive's heap
// segment (Ask::heap_write) costs what the receiver's heap read of it does, so no bound there:
// the 2 MiB vector of 128 B blocks, half round trip, HYBRID (COOP) / RGET: 88 / 196 us, 1 KiB
// blocks 73 / 142 us, 64 KiB 61 / 94 us (one run each, back to back).
const int64_t kCmaWriteMinPiece = 4096;
// COOP-chunked: a chunk costs one look at every peer's ring (tens of ns when nothing came) and,
// for CMA, one more system call; 1 MiB chunks (80 us at one core's copy rate) keep a control
// message from waiting longer than that behind a long copy. Seed 002's figure 10 found chunking
// costs throughput below 4 MB and helps above; the same sweep here: COOP / COOP in 1 MiB chunks
// 48.6 / 48.1 GB/s at 1 MiB, 22.9 / 28.4 at 4 MiB, 21.5 / 27.3 at 16 MiB (contiguous).
const int64_t kChunkMinBytes = int64_t{4} << 20;
const int64_t kChunkBytes = int64_t{1} << 20;

// COOP-load's loads (balance() below): each side's pending copy bytes (the counters of seed 002)
// and the bytes it copied lately, decayed with time constant kLoadDecayNs. Pending bytes alone
// are about equal whenever a receiver decides (every rank runs its copies as soon as it matches
// them), so they split nearly every message in half and each rank's copies follow the number of
// messages it takes part in; the recent work is what tells a busy rank from a quiet one.
// kLoadDecayNs: longer than a scheduler's time slice (a few ms: with more processes than cores
// a rank's copies come in bursts) and than several iterations of a halo exchange, short enough
// that a phase's skew is forgotten within the next phase. The mixed-load stencil
// (bench/load_stencil.hpp, 512 KiB messages, 2 cores, 3 and 4 ranks oversubscribed, 0.3-0.4 ms
// per iteration, 12-57 iterations per protocol; distance from the ideal in copy counts, COOP-load,
// 5 runs each, band 1/64): 2 ms 8-17% (N = 3, 4: the decayed sums follow the time slices),
// 5 ms 8-14% and 2-10%, 10 ms 3-24% and 2-8%, 20 ms 1.5-10% and 5-10%, 200 ms 14-52% and 18-96%
// (the static RGET phase run just before still weighs). 20 ms.
const int64_t kLoadDecayNs = int64_t{20} * 1000 * 1000;
// kLoadSplitBand: where processes share cores, loads less than n / 64 apart split the message
// in proportion (a lone exchange between two idle ranks, whose loads move together), farther
// apart the less loaded side copies it all (seed 002's rule: one copy per message, so the copy
// counts balance as the bytes do). A proportional split leaves both loads equal, so a band of
// n / 8 draws the stencil's pairs back into it: 12-38% (N = 3) and 5-24% (N = 4) from the ideal
// at 20 ms; n / 64: 0-11.5% and 0-6%; 0 (exact ties only): 3-5% and 2-6%, but the decay that
// runs between a copy's end and the next decision makes ties inexact. n / 64 (16 KiB at 1 MiB).
const int64_t kLoadSplitBandNum = 1, kLoadSplitBandDen = 64;

int64_t decayed(int64_t bytes, int64_t dt_ns) {
  if (bytes <= 0) return 0;
  if (dt_ns <= 0) return bytes;
  const double v = static_cast<double>(bytes) * std::exp(-static_cast<double>(dt_ns) / static_cast<double>(kLoadDecayNs));
  return v >= 9.2e18 ? INT64_MAX : static_cast<int64_t>(v);
}

namespace {

// COOP's split of n stream bytes at x (the receiver copies [0, x)), rounded down to a cache line
// so that in a contiguous receive the two cores never write the same line.
int64_t line(int64_t x) { return x & ~int64_t{63}; }

Choice of(int proto, int64_t n, int64_t x) {
  if (proto == DDT_PROTO_RGET) return Choice{DDT_PROTO_RGET, n, false, false};
  if (proto == DDT_PROTO_RPUT) return Choice{DDT_PROTO_RPUT, 0, false, false};
  return Choice{DDT_PROTO_COOP, line(x), false, false};
}

// COOP-load (seed 002, II-B2: "the less loaded side copies, or both in proportion"): each
// side's load is its pending bytes and its recent copy work (Ask). Where the job has more
// processes than cores, no core is idle for a second share: loads kLoadSplitBand apart or more,
// the less loaded side copies the whole message (RGET or RPUT). Otherwise, and within the band,
// both copy, the receiver x bytes so that both end equally loaded,
// load_self + x = load_peer + (n - x): all of it (RGET) or none (RPUT) when the other is that far
// behind. Where each process has a core the split keeps a lone exchange's two-core speedup: the
// protocol sweep's window of 4 (2 ranks, isend/irecv, contiguous; median GB/s of 60 windows, 3
// interleaved runs, one machine) before / after: COOP_LOAD 9.1-10.3 / 8.8-9.6 at 512 KiB, 11.5-12.1
// / 10.0-14.4 at 1 MiB, 14.1-15.1 / 13.0-14.9 at 4 MiB, as COOP-p2p in the same runs; the whole-
// copy rule there gave 10.3-10.5 at 1 MiB and 9.5-10.7 at 4 MiB (the sender's whole CMA writes).
// Counters are read without a lock: a stale reading only balances less well.
Choice balance(const Ask& a) {
  auto pos = [](int64_t v) { return static_cast<__int128>(std::max<int64_t>(0, v)); };
  const __int128 self = pos(a.load_self) + pos(a.hist_self), peer = pos(a.load_peer) + pos(a.hist_peer);
  const __int128 d = peer - self;  // > 0: the peer is the busier
  const __int128 band = static_cast<__int128>(a.n) * kLoadSplitBandNum / kLoadSplitBandDen;
  if (a.shared_cores && d > 0 && d >= band) return of(DDT_PROTO_RGET, a.n, a.n);
  if (a.shared_cores && d < 0 && -d >= band) return of(DDT_PROTO_RPUT, a.n, 0);
  const __int128 x2 = static_cast<__int128>(a.n) + d;
  const int64_t x = static_cast<int64_t>(std::clamp<__int128>(x2 / 2, 0, a.n));
  if (x >= a.n) return of(DDT_PROTO_RGET, a.n, a.n);
  if (line(x) <= 0) return of(DDT_PROTO_RPUT, a.n, 0);
  return of(DDT_PROTO_COOP, a.n, x);
}

}  // namespace

int table2(bool send_blocking, int send_mode, bool recv_blocking) {
  // Rows: the sender's call; columns: recv, irecv. The non-blocking synchronous and ready sends
  // are Isends for this table (the sender is free to compute), a buffered send is a Bsend
  // whichever form made it (its caller was released at once).
  if (send_mode == DDT_SEND_BUFFERED) return recv_blocking ? DDT_PROTO_RGET : DDT_PROTO_RPUT;
  if (!send_blocking) return recv_blocking ? DDT_PROTO_RGET : DDT_PROTO_COOP;
  return recv_blocking ? DDT_PROTO_COOP : DDT_PROTO_RPUT;  // send, ssend, rsend
}

bool may_share(int setting, int64_t n) {
  if (setting == DDT_PROTO_RGET) return false;
  const int64_t hybrid_min = std::min({kCoopMinBytes, kCoopMinPipeBytes, kCoopMinBlockingBytes});
  return !(setting == DDT_PROTO_HYBRID && n < hybrid_min);
}

Choice choose(const Ask& a) {
  const bool big = a.chunk_min >= 0 && a.n >= a.chunk_min;
  Choice c{};
  switch (a.setting) {
    case DDT_PROTO_RPUT:
    case DDT_PROTO_COOP:
    case DDT_PROTO_RGET:
      return of(a.setting, a.n, a.n / 2);
    case DDT_PROTO_COOP_COLL:
      return of(table2(a.send_blocking, a.send_mode, a.recv_blocking), a.n, a.n / 2);
    case DDT_PROTO_COOP_LOAD:
      return balance(a);
    case DDT_PROTO_COOP_CHUNKED:
      c = of(DDT_PROTO_COOP, a.n, a.n / 2);
      c.chunked = true;
      return c;
    case DDT_PROTO_COOP_HCA:
      c = of(DDT_PROTO_RGET, a.n, a.n);
      c.engine = true;
      return c;
    default: {  // HYBRID
      // Both calls blocking (a ping-pong's send and recv): neither side has anything else to do,
      // so the sender's idle core takes a share from kCoopMinBlockingBytes on, unless RGET
      // would move the message in cells (the sender gathers its cache-hot pieces there already).
      const bool both_wait = a.send_blocking && a.recv_blocking && a.send_mode != DDT_SEND_BUFFERED;
      const int64_t min = a.pipe ? kCoopMinPipeBytes : both_wait ? kCoopMinBlockingBytes : kCoopMinBytes;
      if (a.n < min || (!a.heap_write && a.avg_piece < kCmaWriteMinPiece)) c = of(DDT_PROTO_RGET, a.n, a.n);
      else if (a.send_blocking || a.recv_blocking || a.send_mode == DDT_SEND_BUFFERED)
        c = of(table2(a.send_blocking, a.send_mode, a.recv_blocking), a.n, a.n / 2);
      else c = balance(a);
      c.chunked = big;
      return c;
    }
  }
}

}  // namespace ddt::shm
