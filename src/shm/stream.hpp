// Whether an eager message is written into its cell with ordinary or non-temporal stores: the
// cores' distance decides, and the runtime learns it from its own sends.
//
// This machine's two vCPUs are sometimes near (one cache line crosses in 24-45 ns: they share an
// L3) and sometimes far (155-175 ns: different dies), and the host moves them between the two
// states between runs and within one. An ordinary store into a cell needs the line back from the
// receiver's cache (it read the cell last time) before it can be written, and the receiver then
// fetches it again from the sender's: two crossings a line. A non-temporal store writes the line
// to memory without asking for it and drops the receiver's copy; the receiver then reads it from
// memory. Far, memory is nearer than the other die's cache; near, the shared L3 is much nearer
// than memory. Raw ping-pongs of one buffer between two processes (no runtime; medians of 31
// samples of 100 round trips, TSC ticks), ordinary / non-temporal:
//   near (28 ns a line): 640 B 447-708 / 901-1403, 2560 B 1471-2336 / 3479-4349, 8192 B 4152 / 7894;
//   far (163-185 ns):    640 B 2425-2558 / 2530-2943, 2560 B 7030-7140 / 4414-4787,
//                        8192 B 17490-27896 / 8787-11009.
// A pack of 64 pieces of 40 B 2,640 B apart (NAS_LU_y N=64's face) into the shared buffer,
// unpacked on the other side, far: straight into the cell 15943-16305, with the lines asked for
// first (prefetchw, write_eager's claim_lines_first) 10824-12499, packed into a local buffer and
// streamed into the cell 8752-9215; near: 4663, 3288 and 7509. Through the runtime
// (ddt_runtime_bench, cores far, DDTKIT_STREAM_CELLS=0 / 1, two runs each): NAS_LU_y N=64 (2,560
// B) 4.12-4.49 / 2.29-2.30 us, N=102 (4,080 B) 7.66-7.83 / 2.96-3.00, NAS_LU_x N=162 (6,480 B
// contiguous) 7.07-7.61 / 3.32-3.54; N=33 (1,320 B) 1.84-2.06 / 1.88-1.91, level.
// The rendezvous' pipelined data cells (16 KiB each) gain the same way: ddt_runtime_bench, cores
// far, the cells forced (DDTKIT_MECH=pipe), ordinary / streamed: NAS_MG_x W (32 KiB of single
// doubles) 43.2 / 22.6 us, WRF_y_sa 8x8 (43 KB) 63.4 / 18.3, SPECFEM3D_cm c=3 (106 KB) 108.5 /
// 38.0, WRF_x_sa 4x4 (103 KB) 98.3 / 52.2; near they lose: 13.5 / 15.7-16.3, 26.2 / 35.7-37.3,
// 28.0 / 45.6-61.9.
//
// Which state holds is learned per peer, message size (a power of two) and kind of cell (eager
// or data) by a MechLearner whose second way is streaming: each way is tried in streaks, and
// judged by the period between two messages of that size to that peer, each timed as its last
// cell is written (in a ping-pong, the round trip; in a stream of sends, what each adds). The
// slower way is tried again every 2,048 or 8,192 messages, so that a move of the cores is seen.
//
// A measured distance was tried first: each eager cell carried the sender's TSC at publish, and
// a receiver that was already polling took the difference. Near pairs gave 15-85 ns once the
// stamp waited for the data's stores to drain (mfence), but far pairs gave 75-156 ns through the
// ordinary cells and 225-256 through the streamed ones: the two states overlap, and the samples
// depend on the state they are meant to choose. The period needs no clock shared between processes.
#pragma once
#include <cstdint>

#include "shm/learn.hpp"
#include "shm/memo.hpp"

namespace ddt::shm {

// Below, even far, streaming saves nothing (640 B and 1,320 B above: level).
constexpr int64_t kStreamMinBytes = 2048;

// The learner's streaks are longer than the receive learner's: a streak must cycle the ring of
// cells (kCells) before its periods say anything. A streamed cell is left in memory, not in
// either cache, so the first ordinary writes after a streamed streak fetch their lines from
// memory, and the ordinary way looked as slow as streaming (near, NAS_LU_x N=64: periods of 2,500-
// 3,000 ticks either way with streaks of 4, against round trips of 0.72 / 1.41 us): a near pair
// then kept streaming at 0.84-1.07 us a round trip. Of a streak only its last four periods count
// (learn.hpp keeps four). Rare refreshes keep the cost of the slower way's streaks near 1-2%.
// And the way holds between streaks: re-judged at every send (the receive learner's rule), the
// two ways took turns every 30-500 sends in ddt_runtime_bench's NAS_LU_y N=64 (far), each new
// turn's last periods longer than the last one's (the least of the ordinary way's from 9,300 to
// 12,100 ticks, of streaming's from 7,600 to 9,400), as each turn's start stayed unkept.
// (A margin of 2/3 instead of the learner's 4/5 was tried: far, ddt_runtime_bench's interleaved
// samples then kept the ordinary cells in half the runs, NAS_LU_y N=64 2.4-4.2 us against 2.3.)
constexpr MechLearner::Tuning kStreamTuning{36, 64, 2048, 8192, true, {4, 5}, true};

// The learner's key for a message of bytes (>= 1): its power of two, and whether its cells are
// an eager one or a rendezvous' data cells (learned apart: their periods differ).
constexpr int kEagerClass = 0, kDataClass = 1;
inline Hash stream_class(int64_t bytes, int kind) {
  Hash h;
  h.extent = 63 - __builtin_clzll(static_cast<unsigned long long>(bytes));
  h.bytes[0] = static_cast<uint8_t>(h.extent);
  h.bytes[1] = static_cast<uint8_t>(kind);
  return h;
}

}  // namespace ddt::shm
