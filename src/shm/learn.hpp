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
// in TSC ticks of this process), tries each in streaks of kStreak receives (the model's first,
// then the other), compares the least of the last four times of each and takes the other only
// where it is at most kMargin (4/5) of the model's, tries the slower again in one streak after
// kConfirm more receives, and then every kRefresh receives (kRefreshFar where it was more than
// twice as slow), so that a change of distance is seen. The least of four keeps a preempted or
// deferred receive from deciding.
//
// A receive is kept only where the entry's previous receive took the same mechanism: the first
// of a streak is not. What a mechanism costs depends on what the peer's receives did to the same
// lines just before. In a ping-pong of one buffer per rank (DDTBench's), a heap copy leaves the
// lines it read shared with the reader, and the owner's next write of them pays their
// invalidation, so a receive through the cells right after the peer's heap copies ran 2-3x its
// steady time, while a heap copy whose peer still took the cells ran below its steady time.
// One receive at a time (the refresh was one receive, the trials three with the first not
// kept) the learner saw exactly those: in runtime_mpi_mpich --kernels "NAS_MG_x W" at 5228664
// (cores near, trace of every receive's ticks, both ranks), the cells' trial after start-up
// 247 / 385 and 315 / 205 ticks, the heap's 270 / 179 and 224 / 261, the cells' refreshes
// 260-440 while the peer copied by the heap; it took the heap (steady 200-280 ticks a receive,
// round trip 48.7 us), where the run that kept the cells (steady 130-170) made 31.3 us against
// MPICH's 32-34. In ddt_runtime_bench --kernels "SPECFEM3D_cm c=3" the cells' first receives
// (page faults, first use) took 1339 / 1467 ticks against their later 400, the heap won the
// trial at 400-500, the cells were then more than twice as slow and not tried again for 512
// receives: 44.7 us a round trip against the cells' 31.9 in the same run. Both ranks count
// their receives alike, so in a ping-pong their streaks fall together and a streak's later
// receives see both ranks on one mechanism; the confirming streak repeats the trial once the
// start-up costs are paid.
#pragma once
#include <algorithm>
#include <cstdint>

#include "shm/memo.hpp"

namespace ddt::shm {

class MechLearner {
 public:
  // A receive's part in the learning: its entry (slot and generation, so that a reused slot
  // takes no stale time), its mechanism, whether its time is kept, and its start.
  struct Ticket {
    int slot = -1;
    uint32_t gen = 0;
    bool heap = false;
    bool keep = false;
    int64_t t0 = 0;
  };

  static constexpr uint32_t kStreak = 4;  // receives of a mechanism per try (the first not kept)
  static constexpr uint32_t kConfirm = 16, kRefresh = 128, kRefreshFar = 512;
  static constexpr int kEntries = 16, kKept = 4;
  static constexpr int64_t kMargin[2] = {4, 5};  // the other is taken at 4/5 of the model's time or less

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
    if (e.left == 0) {
      if (e.streaks < 2) {
        start(e, e.streaks == 0 ? model : other);
      } else {
        // The other only where it is clearly faster: the receiver's time leaves out what the
        // sender spends (its pack into the cells, its wait for the FIN), so where the two are
        // close it does not tell which round trip is shorter (NAS_MG_x W near: 8-10 us either
        // way, round trips 19.9 us through the cells, 21.9 by the heap).
        // (A mechanism with no time kept counts as the slowest: wider products, no overflow.)
        using Wide = __int128;
        const int fast = Wide{least(e, other)} * kMargin[1] < Wide{least(e, model)} * kMargin[0] ? other : model;
        const int slow = 1 - fast;
        const uint32_t period =
            e.streaks == 2 ? kConfirm : Wide{least(e, slow)} <= 2 * Wide{least(e, fast)} ? kRefresh : kRefreshFar;
        e.trying = fast;
        if (++e.since >= period) e.since = 0, start(e, slow);
      }
    }
    if (e.left > 0) --e.left;
    const bool keep = e.last == e.trying;
    e.last = e.trying;
    return Ticket{slot, e.gen, e.trying == 1, keep, now};
  }

  // A receive of the ticket completed at now.
  void record(const Ticket& t, int64_t now) {
    if (!t.keep || t.slot < 0 || t.slot >= kEntries || e_[t.slot].gen != t.gen || now <= t.t0) return;
    Entry& e = e_[t.slot];
    const int m = t.heap ? 1 : 0;
    e.recent[m][e.kept[m]++ % kKept] = now - t.t0;
  }

 private:
  struct Entry {
    int source = -1;
    Hash remote, local;
    int64_t rcount = 0, count = 0;
    uint32_t gen = 0;
    int64_t recent[2][kKept] = {};  // [pipe, heap]: the last kKept times kept, ticks
    uint32_t kept[2] = {};
    uint32_t streaks = 0;  // streaks begun
    uint32_t left = 0;     // receives left in the streak under way
    int trying = 0;        // the mechanism of the streak under way, or of the steady receives
    int last = -1;         // the mechanism of the previous receive
    uint32_t since = 0;    // receives since the last streak
  };
  static void start(Entry& e, int m) {
    e.trying = m;
    e.left = kStreak;
    ++e.streaks;
  }
  static int64_t least(const Entry& e, int m) {
    const int n = static_cast<int>(std::min<uint32_t>(e.kept[m], kKept));
    return n == 0 ? INT64_MAX : *std::min_element(e.recent[m], e.recent[m] + n);
  }
  Entry e_[kEntries];
  uint32_t next_ = 0, gen_ = 0;
};

}  // namespace ddt::shm
