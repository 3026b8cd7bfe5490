// Which rendezvous protocol moves a message, and how (seed 002, sections II-A and II-B): the
// receiver's choice, made once it has matched the RTS and knows both layouts, and told to the
// sender in its CTS. Pure functions of what the receiver knows; the thresholds and the
// measurements that chose them are in protocol.cpp.
#pragma once
#include <cstdint>

namespace ddt::shm {

// What the receiver knows when it chooses.
struct Ask {
  int setting;          // the receiver's ddt_comm_set_protocol
  bool send_blocking;   // the sender's call blocks (send, ssend, rsend; the RTS says so)
  int send_mode;        // DDT_SEND_*
  bool recv_blocking;   // the receiver's call blocks (recv)
  int64_t n;            // stream bytes to move
  int64_t avg_piece;    // n over the pieces of the finer side: what each CMA write would move
  int64_t load_self, load_peer;  // the two processes' load counters (COOP-load): pending bytes
  int64_t chunk_min;    // ddt_comm_set_chunking's threshold (< 0: never)
  int64_t hist_self, hist_peer;  // the bytes each copied lately, decayed (decayed() below)
  bool shared_cores;    // the job has more processes than its ranks' cores (rt.oversubscribed)
  bool heap_write;      // the receive lies in this process's heap: the sender's share goes through
                        // its mapping (plain stores), not by CMA
  bool pipe;            // RGET would move it in data cells (rendezvous.cpp's select): the sender
                        // gathers its cache-hot pieces on its own core already
};

// The protocol chosen: DDT_PROTO_RGET, RPUT or COOP, the receiver's share [0, split) (n for
// RGET, 0 for RPUT), whether the copies run in chunks, and whether the receiver's copy is
// striped over the second engine.
struct Choice {
  int proto;
  int64_t split;
  bool chunked, engine;
};

Choice choose(const Ask& a);

// Whether choose() may give the sender a share (RPUT or COOP) of n bytes under the receiver's
// setting: false where it answers RGET whatever the loads, the recent work, the pieces and the
// receive's segment say (RGET itself; HYBRID below the smallest of its thresholds), so that the
// receiver need not read them (rendezvous.cpp: deliver_rts).
bool may_share(int setting, int64_t n);

// What `bytes` of copy work done dt_ns ago count for now in a rank's recent work: bytes x
// exp(-dt_ns / kLoadDecayNs) (dt_ns < 0 counts as 0; bytes < 0 as 0).
int64_t decayed(int64_t bytes, int64_t dt_ns);

// seed 002's Table II: the protocol for a sender's call and a receiver's.
int table2(bool send_blocking, int send_mode, bool recv_blocking);

// The smallest message for which the dynamic protocols let the sender copy (below it the CTS
// round trip costs more than a second core gains), and the shortest average piece a CMA write
// pays for.
extern const int64_t kCoopMinBytes;
extern const int64_t kCoopMinBlockingBytes;  // the same where both calls block (HYBRID)
extern const int64_t kCoopMinPipeBytes;      // the same where RGET would pipe it in cells (HYBRID)
extern const int64_t kCmaWriteMinPiece;
// COOP-chunked's defaults (ddt_comm_set_chunking): copies of messages from kChunkMinBytes on,
// kChunkBytes at a time.
extern const int64_t kChunkMinBytes;
extern const int64_t kChunkBytes;
// COOP-load: the time constant of a rank's recent copy work, and the band of load difference
// (kLoadSplitBandNum / kLoadSplitBandDen of the message) within which both sides copy in
// proportion; beyond it the less loaded side copies the whole message.
extern const int64_t kLoadDecayNs;
extern const int64_t kLoadSplitBandNum, kLoadSplitBandDen;

}  // namespace ddt::shm
