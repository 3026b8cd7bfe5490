// The receiver's choice between the heap's one copy and the pipelined cells, learned per layout
// where the cost model (rendezvous.cpp's heap_pays) cannot call it alone. The model counts the
// bytes in each sender line the heap copy touches; what a line costs depends on how far apart
// the two cores are, which the host changes while a job runs (this machine: 30-45 ns a line where
// the vCPUs share caches, 160-175 ns on different dies). The model is placed for the far case;
// near, sparse layouts lose 1.2-1.6x by it (NAS_MG_x W, single doubles 2 KiB apart, round trips
// in one run at 43 ns a line: 20.2 us through the cells, 13.2 us by the heap, Open MPI 17.1).
//
// So each (peer, sender layout and count, receive layout and count) keeps the last few times of
// each mechanism, tries each in streaks of Tuning::streak (4) receives (the model's first, then the other),
// compares the least of the last four times of each and takes the other only where it is at most
// Tuning::margin (4/5) of the model's, tries the slower again in one streak after `confirm` (16) more
// receives, and then every `refresh` (128) receives (`refresh_far`, 512, where it was more than
// twice as slow),
// so that a change of distance is seen. The least of four keeps a preempted or deferred receive
// from deciding.
//
// A time is the receive's own span: from its matched RTS to its completion, in TSC ticks of this
// process (Tuning::period off). The period between two receives of the entry (on) holds more: the
// sender's side and what the copy does to the lines both ranks touch next; in runtime_mpi's whole
// program, cores far, it kept NAS_MG_x W on the cells (39.7-41.7 us a round trip, against 38.3
// and 54.1 by the span). But it lost the stencil: in a 2x2x1 grid two faces of one layout come
// from the same neighbour each iteration, the periods alternate between the short gap of the two
// and the rest of the iteration, and the least of them judged the short gap alone
// (runtime_mpi_ompi --stencil-only, 4 ranks, ddtkit against Open MPI: 1.08-1.29x by the period,
// 1.35-1.54x by the span). So the receive learner keeps the span; the stream learner (stream.hpp),
// whose choice the span cannot see, takes the period.
//
// Why streaks and the first not kept: what a mechanism costs depends on what the peer's receives
// did to the same lines just before. In a ping-pong of one buffer per rank (DDTBench's), a heap
// copy leaves the lines it read shared with the reader, and the owner's next write of them pays
// their invalidation, so a receive through the cells right after the peer's heap copies ran 2-3x
// its steady time, while a heap copy whose peer still took the cells ran below its own (traces of
// every receive's ticks, both ranks, at 5228664). The cells' first receives after start-up (page
// faults, first use) took 3x their later time; the confirming streak repeats the trial once that
// is paid. Both ranks count their receives alike, so in a ping-pong their streaks fall together
// and a streak's later times see both ranks on one mechanism.
#pragma once
#include <algorithm>
#include <cstdint>

#include "shm/memo.hpp"

namespace ddt::shm {

class MechLearner {
 public:
  // A receive's part in the learning: its entry (slot and generation, so that a reused slot
  // takes no stale time), its mechanism, and whether its time is kept.
  struct Ticket {
    int slot = -1;
    uint32_t gen = 0;
    bool heap = false;
    bool keep = false;
    int64_t t0 = 0;  // when it was chosen (the span clock)
  };

  // Receives of a mechanism per try (the first not kept); receives until the confirming try;
  // receives between later tries, where the slower way was at most twice as slow and where more.
  // hold: the way is chosen only as a streak ends (else at every receive between streaks too);
  // margin: the other way is taken where its time is at most margin[0] / margin[1] of the model's.
  // period: a time is the period since the entry's previous receive (else the receive's own span,
  // from choose to record).
  struct Tuning {
    uint32_t streak = 4, confirm = 16, refresh = 128, refresh_far = 512;
    bool hold = false;
    int64_t margin[2] = {4, 5};
    bool period = false;
  };
  MechLearner() = default;
  explicit MechLearner(Tuning t) : t_(t) {}
  static constexpr int kEntries = 16, kKept = 4;

  // The mechanism for one receive (heap: true) whose cost model said model_heap.
  Ticket choose(int source, const Hash& remote, int64_t rcount, const Hash& local, int64_t count, bool model_heap,
                int64_t now = 0) {
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
        // The other only where it is clearly faster: the periods vary with what the application
        // does between receives, and the model's choice needs no trial to stay right.
        // (A mechanism with no time kept counts as the slowest: wider products, no overflow.)
        // With Tuning::hold, only as a streak ends: between streaks the way holds, whatever its
        // own later periods say (see stream.hpp for why).
        using Wide = __int128;
        if (!t_.hold || e.decide)
          e.trying = Wide{least(e, other)} * t_.margin[1] < Wide{least(e, model)} * t_.margin[0] ? other : model;
        e.decide = false;
        const int fast = e.trying, slow = 1 - fast;
        const uint32_t period =
            e.streaks == 2 ? t_.confirm : Wide{least(e, slow)} <= 2 * Wide{least(e, fast)} ? t_.refresh : t_.refresh_far;
        if (++e.since >= period) e.since = 0, start(e, slow);
      }
    }
    if (e.left > 0) --e.left;
    // Kept once the way has run for more than settle() receives in a row (a streak, or the steady
    // way again after one): the periods before still carry the other way's leftovers.
    e.run = e.last == e.trying ? e.run + 1 : 1;
    const bool keep = e.run > settle();
    e.last = e.trying;
    return Ticket{slot, e.gen, e.trying == 1, keep, now};
  }

  // Whether an entry of source has settled on the second way (its trial done, not in a streak).
  bool settled_second(int source) const {
    for (const Entry& e : e_)
      if (e.source == source && e.streaks >= 2 && e.left == 0 && e.trying == 1) return true;
    return false;
  }

  // A receive of the ticket completed at now: its period is kept where the receive before it
  // completed by the same mechanism.
  void record(const Ticket& t, int64_t now) {
    if (t.slot < 0 || t.slot >= kEntries || e_[t.slot].gen != t.gen) return;
    Entry& e = e_[t.slot];
    const int m = t.heap ? 1 : 0;
    if (!t_.period) {
      if (t.keep && now > t.t0) e.recent[m][e.kept[m]++ % kKept] = now - t.t0;
      return;
    }
    if (t.keep && e.done_mech == m && now > e.done) e.recent[m][e.kept[m]++ % kKept] = now - e.done;
    e.done = now, e.done_mech = m;
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
    uint32_t run = 0;      // receives in a row by it
    bool decide = false;   // a streak has ended: choose the way (Tuning::hold)
    uint32_t since = 0;    // receives since the last streak
    int64_t done = 0;      // when the entry's last timed receive completed, ticks
    int done_mech = -1;    // and by which mechanism
  };
  // Receives of a way in a row whose periods are not kept: the first only, or in a long streak
  // all but its last kKept.
  uint32_t settle() const { return t_.streak > kKept + 1 ? t_.streak - kKept : 1; }
  void start(Entry& e, int m) const {
    e.trying = m;
    e.left = t_.streak;
    e.decide = true;
    ++e.streaks;
  }
  static int64_t least(const Entry& e, int m) {
    const int n = static_cast<int>(std::min<uint32_t>(e.kept[m], kKept));
    return n == 0 ? INT64_MAX : *std::min_element(e.recent[m], e.recent[m] + n);
  }
  Tuning t_;
  Entry e_[kEntries];
  uint32_t next_ = 0, gen_ = 0;
};

}  // namespace ddt::shm
