// The receiver's choice between the heap's one copy and the pipelined cells, learned per layout
// where the cost model (rendezvous.cpp's heap_pays) cannot call it alone. The model counts the
// bytes in each sender line the heap copy touches; what a line costs depends on how far apart
// the two cores are, which the host changes while a job runs (this machine: 30-45 ns a line where
// the vCPUs share caches, 160-175 ns on different dies). The model is placed for the far case;
// near, sparse layouts lose 1.2-1.6x by it (NAS_MG_x W, single doubles 2 KiB apart, round trips
// in one run at 43 ns a line: 20.2 us through the cells, 13.2 us by the heap, Open MPI 17.1).
//
// So each (peer, sender layout and count, receive layout and count) keeps the last few
// receiver-observed times of each mechanism (from the matched RTS to the receive's completion,
// in TSC ticks of this process; each mechanism's first receive in the entry is not kept), follows
// the model for kTrial receives, tries the other for kTrial, then compares the least of the last
// four times of each and takes the other only where it is at most kMargin (4/5) of the model's,
// and tries the slower again every kRefresh receives (kRefreshFar where it was more than twice as
// slow), so that a change of distance is seen. The least of four keeps a preempted or deferred
// receive from deciding.
// Measured at acb9fb6+ (2 ranks, ddt_alloc buffers, round trips of one vector of char, medians of
// 15 samples, cores near at 30-40 ns a line; learned / the model alone, DDTKIT_LEARN=0), us, at
// 16 / 32 / 128 KiB of payload: 16 B blocks at 32 B 2.38-2.91 / 6.85-8.26, 3.00-3.54 / 9.62-10.67,
// 7.03-8.56 / 22.89-24.07; 8 B at 2064 B 4.31-4.41 / 9.40-11.54, 19.14-20.03 / 27.16-34.93,
// 85.42-112.98 / 102.12-121.61; DDTBench's NAS_MG_x through ddt_runtime_bench, W 18.98-19.09
// (cells 19.56-19.92, heap 21.58-21.77), A 93.85-111.98 (cells 118.70-127.08, heap 92.05-96.82).
#pragma once
#include <algorithm>
#include <cstdint>

#include "shm/memo.hpp"

namespace ddt::shm {

class MechLearner {
 public:
  // A receive's part in the learning: its entry (slot and generation, so that a reused slot
  // takes no stale time), its mechanism and its start.
  struct Ticket {
    int slot = -1;
    uint32_t gen = 0;
    bool heap = false;
    int64_t t0 = 0;
  };

  static constexpr uint32_t kRefresh = 64, kRefreshFar = 512;
  static constexpr int kEntries = 16, kKept = 4;
  static constexpr int64_t kMargin[2] = {4, 5};  // the other is taken at 4/5 of the model's time or less
  static constexpr uint32_t kTrial = 3;  // receives of a mechanism before it is judged (the first not kept)

  // The mechanism for one receive (heap: true) whose cost model said model_heap.
  Ticket choose(int source, const Hash& remote, int64_t rcount, const Hash& local, int64_t count, bool model_heap,
                int64_t now) {
    int slot = -1;
    for (int i = 0; i < kEntries; ++i)
      if (e_[i].source == source && e_[i].rcount == rcount && e_[i].count == count && e_[i].remote == remote &&
          e_[i].local == local) {
        slot = i;
        break;
      }
    if (slot < 0) {  // a new entry, in place of the oldest
      slot = static_cast<int>(next_++ % kEntries);
      e_[slot] = Entry{source, remote, local, rcount, count, ++gen_};
    }
    Entry& e = e_[slot];
    const int model = model_heap ? 1 : 0, other = 1 - model;
    int pick = model;
    if (e.samples[model] >= kTrial && e.samples[other] < kTrial) {
      pick = other;  // the first tries of the other
    } else if (e.samples[model] >= kTrial) {
      // The other only where it is clearly faster: the receiver's time leaves out what the sender
      // spends (its pack into the cells, its wait for the FIN), so where the two are close it
      // does not tell which round trip is shorter (NAS_MG_x W near: 8-10 us either way, round
      // trips 19.9 us through the cells, 21.9 by the heap).
      const int fast = least(e, other) * kMargin[1] < least(e, model) * kMargin[0] ? other : model, slow = 1 - fast;
      const uint32_t period = least(e, slow) <= 2 * least(e, fast) ? kRefresh : kRefreshFar;
      pick = fast;
      if (++e.since >= period) e.since = 0, pick = slow;
    }
    return Ticket{slot, e.gen, pick == 1, now};
  }

  // A receive of the ticket completed at now.
  void record(const Ticket& t, int64_t now) {
    if (t.slot < 0 || t.slot >= kEntries || e_[t.slot].gen != t.gen || now <= t.t0) return;
    Entry& e = e_[t.slot];
    const int m = t.heap ? 1 : 0;
    // A mechanism's first receive in an entry pays its first-use costs (the layout's exchange, the
    // segment's mapping, the address checks: 0.7 ms against 10 us for NAS_MG_x W's heap) and
    // is not kept.
    if (e.samples[m]++ == 0) return;
    e.recent[m][(e.samples[m] - 2) % kKept] = now - t.t0;
  }

 private:
  struct Entry {
    int source = -1;
    Hash remote, local;
    int64_t rcount = 0, count = 0;
    uint32_t gen = 0;
    int64_t recent[2][kKept] = {};  // [pipe, heap]: the last kKept times, ticks
    uint32_t samples[2] = {};
    uint32_t since = 0;  // receives since the slower was last tried
  };
  static int64_t least(const Entry& e, int m) {
    const int n = static_cast<int>(std::min<uint32_t>(e.samples[m] > 0 ? e.samples[m] - 1 : 0, kKept));
    return n == 0 ? INT64_MAX : *std::min_element(e.recent[m], e.recent[m] + n);
  }
  Entry e_[kEntries];
  uint32_t next_ = 0, gen_ = 0;
};

}  // namespace ddt::shm
