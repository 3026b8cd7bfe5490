// The runtime's mechanism learner (src/shm/learn.hpp), driven with a synthetic clock: which way
// it takes for a layout given what a period between two receives costs by each way. White-box:
// no processes, no runtime; each receive is choose() at one tick and record() at the next.
#include <gtest/gtest.h>

#include <functional>
#include <vector>

#include "shm/learn.hpp"

namespace {

using ddt::shm::Hash;
using ddt::shm::MechLearner;

Hash key(int v) {
  Hash h;
  h.bytes[0] = static_cast<uint8_t>(v);
  h.extent = v;
  return h;
}

// n receives of one entry: each completes period(heap, i) ticks after the one before; returns
// the ways taken (true: heap), in order.
std::vector<bool> drive(MechLearner& l, int n, bool model_heap, const std::function<int64_t(bool, int)>& period,
                        int64_t& now, int source = 1) {
  std::vector<bool> ways;
  for (int i = 0; i < n; ++i) {
    const MechLearner::Ticket t = l.choose(source, key(7), 1, key(9), 1, model_heap, now);
    now += period(t.heap, i);
    l.record(t, now);
    ways.push_back(t.heap);
  }
  return ways;
}

int count_heap(const std::vector<bool>& w, size_t from, size_t to) {
  int c = 0;
  for (size_t i = from; i < to && i < w.size(); ++i) c += w[i] ? 1 : 0;
  return c;
}

}  // namespace

// The trial: the model's way for a streak (4) receives, then the other's, whatever their times.
TEST(Learner, TrialsTheModelFirstThenTheOther) {
  MechLearner l;
  int64_t now = 1000;
  const auto w = drive(l, 8, true, [](bool, int) { return 100; }, now);
  EXPECT_EQ(count_heap(w, 0, 4), 4);
  EXPECT_EQ(count_heap(w, 4, 8), 0);
}

// (Receives 0-3 are the model's trial, 4-7 the other's; from 8 the faster, until the slower's
// confirming streak at 23-26, `confirm` (16) receives later.)

// The other way is taken where its periods are at most 4/5 of the model's, kept otherwise.
TEST(Learner, TakesTheOtherOnlyWhereClearlyShorter) {
  {
    MechLearner l;
    int64_t now = 1000;
    const auto w = drive(l, 40, true, [](bool heap, int) { return heap ? 200 : 100; }, now);
    EXPECT_EQ(count_heap(w, 8, 23), 0) << "cells' periods half the heap's: the cells from the ninth receive";
  }
  {
    MechLearner l;
    int64_t now = 1000;
    const auto w = drive(l, 40, true, [](bool heap, int) { return heap ? 110 : 100; }, now);
    EXPECT_EQ(count_heap(w, 8, 23), 15) << "within the margin: the model's way (the heap) stays";
  }
}

// The period, not the receive alone: what a way costs after its receive (the sender's side, the
// lines left shared) falls in the next period, and decides. Here each heap receive is short but
// the time to the next receive long (a receive's own span would have said heap).
TEST(Learner, JudgesByThePeriodBetweenReceives) {
  MechLearner::Tuning t;
  t.period = true;
  MechLearner l(t);
  int64_t now = 1000;
  std::vector<bool> ways;
  for (int i = 0; i < 40; ++i) {
    const MechLearner::Ticket t = l.choose(1, key(7), 1, key(9), 1, false);
    const int64_t receive = t.heap ? 20 : 60, after = t.heap ? 300 : 40;  // heap: period 320, cells 100
    now += receive;
    l.record(t, now);
    now += after;
    ways.push_back(t.heap);
  }
  EXPECT_EQ(count_heap(ways, 8, 23), 0);
  EXPECT_EQ(count_heap(ways, 27, 40), 0);
}

// The default clock (the receive learner's) is the receive's own span, from choose to record:
// the same receives as above take the heap there.
TEST(Learner, DefaultClockIsTheReceivesSpan) {
  MechLearner l;
  int64_t now = 1000;
  std::vector<bool> ways;
  for (int i = 0; i < 40; ++i) {
    const MechLearner::Ticket t = l.choose(1, key(7), 1, key(9), 1, false, now);
    now += t.heap ? 20 : 60;
    l.record(t, now);
    now += t.heap ? 300 : 40;
    ways.push_back(t.heap);
  }
  EXPECT_EQ(count_heap(ways, 8, 23), 15);
}

// A streak's first period spans the change of way and is not kept: a first receive through the
// cells that costs ten times its later ones does not keep the learner from them.
TEST(Learner, FirstPeriodOfAStreakIsNotKept) {
  MechLearner::Tuning t;
  t.period = true;
  MechLearner l(t);
  int64_t now = 1000;
  bool prev = true;
  const auto w = drive(l, 40, true,
                       [&prev](bool heap, int) {
                         const bool change = heap != prev;
                         prev = heap;
                         return heap ? int64_t{200} : change ? int64_t{2000} : int64_t{100};
                       },
                       now);
  EXPECT_EQ(count_heap(w, 8, 23), 0);
}

// The slower way is tried again (after `confirm`, then every `refresh` receives), so a change of the
// cores' distance is seen: here the heap becomes the faster after 64 receives.
TEST(Learner, RefreshesAndFollowsAChange) {
  MechLearner l;
  int64_t now = 1000;
  const auto w = drive(l, 600, false, [](bool heap, int i) { return i < 64 ? (heap ? 200 : 100) : (heap ? 50 : 100); }, now);
  EXPECT_EQ(count_heap(w, 8, 23), 0);
  EXPECT_EQ(count_heap(w, 23, 27), 4) << "one confirming streak of the heap, `confirm` receives after the trial";
  EXPECT_GE(count_heap(w, 400, 600), 190) << "the heap after a refresh saw it faster";
}

// Entries are per peer: another source's receives neither take nor give times.
TEST(Learner, EntriesArePerPeer) {
  MechLearner l;
  int64_t now = 1000;
  const auto a = drive(l, 40, true, [](bool heap, int) { return heap ? 200 : 100; }, now, 1);
  const auto b = drive(l, 8, true, [](bool, int) { return 100; }, now, 2);
  EXPECT_EQ(count_heap(a, 8, 23), 0);
  EXPECT_EQ(count_heap(b, 0, 4), 4) << "a new peer's trial starts with the model's way";
}

// settled_second (the stream learner's question for a peer, stream.hpp): only once an entry of
// that peer has finished its trial on the second way and is not in a streak of the first.
TEST(Learner, SettledSecondOnlyAfterTheTrial) {
  MechLearner l;
  int64_t now = 1000;
  EXPECT_FALSE(l.settled_second(1));
  drive(l, 6, false, [](bool heap, int) { return heap ? 50 : 100; }, now);
  EXPECT_FALSE(l.settled_second(1)) << "in the trial";
  drive(l, 4, false, [](bool heap, int) { return heap ? 50 : 100; }, now);
  EXPECT_TRUE(l.settled_second(1));
  EXPECT_FALSE(l.settled_second(2)) << "another peer";
}

// Another tuning (the stream learner's: long streaks, rare refreshes): only the last four periods
// of a streak count, so the way's start-up (a ring of cells still cold from the other way) is left out.
TEST(Learner, LongStreaksKeepTheirLastPeriods) {
  MechLearner l(MechLearner::Tuning{36, 64, 2048, 8192, true, {4, 5}, true});
  int64_t now = 1000;
  int in_streak = 0;
  bool prev = false;
  const auto w = drive(l, 200, false,
                       [&](bool heap, int) {
                         in_streak = heap == prev ? in_streak + 1 : 0;
                         prev = heap;
                         // the first 32 of a streak pay the other way's leftovers
                         return in_streak < 32 ? int64_t{400} : heap ? int64_t{200} : int64_t{100};
                       },
                       now);
  EXPECT_EQ(count_heap(w, 0, 36), 0);
  EXPECT_EQ(count_heap(w, 36, 72), 36);
  EXPECT_EQ(count_heap(w, 72, 135), 0) << "the ordinary way, by its last periods, and not undone by its first ones again";
  EXPECT_EQ(count_heap(w, 135, 171), 36) << "the confirming streak, `confirm` receives later";
  EXPECT_EQ(count_heap(w, 171, 200), 0);
}
