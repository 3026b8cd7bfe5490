// The rendezvous protocol's choice (protocol.hpp).
#include "shm/protocol.hpp"

#include <algorithm>

#include "ddtkit.h"

namespace ddt::shm {

// ---- thresholds (HYBRID) -------------------------------------------------------------------
// kCoopMinBytes: COOP's CTS round trip (the sender's share waits for it) and its second FIN cost
// a few microseconds; a second core's half of the copy saves n / 2 at one core's copy rate
// (about 12.5 GB/s here: 10 us per 128 KiB). The protocol sweep (bench/protocol_sweep.hpp,
// 2 ranks, heap buffers, window of 4; at 7282b30) puts the crossing between 128 and 512 KiB:
// RGET / COOP 7.90 / 5.75 GB/s at 32 KiB, 20.9 / 18.1 at 128 KiB, 34.8 / 41.4 at 512 KiB,
// 25.7 / 48.6 at 1 MiB (contiguous; the 16 KiB-block vector alike: 20.4 / 18.0, 36.2 / 37.3).
const int64_t kCoopMinBytes = int64_t{256} << 10;
// kCmaWriteMinPiece: a process_vm_writev costs about 1-1.5 us per call and 0.35 us per piece
// (issue 10's measurement on this machine kind: 0.49-0.54 us per piece through the whole
// transfer at a846d81), while the receiver's heap read of the same piece costs a cache line or
// a few: a sender's share pays only where pieces are some KiB long. The same bound as the
// receiver's CMA read (rendezvous.cpp, kCmaMinPiece).
const int64_t kCmaWriteMinPiece = 4096;
// COOP-chunked: a chunk costs one look at every peer's ring (tens of ns when nothing came) and,
// for CMA, one more system call; 1 MiB chunks (80 us at one core's copy rate) keep a control
// message from waiting longer than that behind a long copy. Seed 002's figure 10 found chunking
// costs throughput below 4 MB and helps above; the same sweep here: COOP / COOP in 1 MiB chunks
// 48.6 / 48.1 GB/s at 1 MiB, 22.9 / 28.4 at 4 MiB, 21.5 / 27.3 at 16 MiB (contiguous).
const int64_t kChunkMinBytes = int64_t{4} << 20;
const int64_t kChunkBytes = int64_t{1} << 20;

namespace {

// COOP's split of n stream bytes at x (the receiver copies [0, x)), rounded down to a cache line
// so that in a contiguous receive the two cores never write the same line.
int64_t line(int64_t x) { return x & ~int64_t{63}; }

Choice of(int proto, int64_t n, int64_t x) {
  if (proto == DDT_PROTO_RGET) return Choice{DDT_PROTO_RGET, n, false, false};
  if (proto == DDT_PROTO_RPUT) return Choice{DDT_PROTO_RPUT, 0, false, false};
  return Choice{DDT_PROTO_COOP, line(x), false, false};
}

// COOP-load: the receiver takes x bytes so that both end equally loaded,
// load_self + x = load_peer + (n - x); all of it (RGET) or none (RPUT) when the other is that
// far behind. Counters are read without a lock: a stale reading only balances less well.
Choice balance(const Ask& a) {
  const int64_t self = std::max<int64_t>(0, a.load_self), peer = std::max<int64_t>(0, a.load_peer);
  const __int128 x2 = static_cast<__int128>(a.n) + peer - self;
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
    default:  // HYBRID
      if (a.n < kCoopMinBytes || a.avg_piece < kCmaWriteMinPiece) c = of(DDT_PROTO_RGET, a.n, a.n);
      else if (a.send_blocking || a.recv_blocking || a.send_mode == DDT_SEND_BUFFERED)
        c = of(table2(a.send_blocking, a.send_mode, a.recv_blocking), a.n, a.n / 2);
      else c = balance(a);
      c.chunked = big;
      return c;
  }
}

}  // namespace ddt::shm
