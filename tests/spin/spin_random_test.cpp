// The NIC model against the reference interpreter: random types of the engine's generator (depth
// up to 4) through every strategy, receive and send, in order and with seeded packet
// permutations (with and without a reordering window), at packet sizes that mostly do not divide
// the blocks. Every byte of the receive buffer (and the guard bytes around it) and of the packed
// stream is compared with ref_unpack / ref_pack. The scheduling policy, HPUs and (for one type in
// eight) a NIC memory too small for the strategy's state vary from type to type.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "ddtkit_spin.h"
#include "gen.hpp"

namespace {

int64_t types_per_run() {
  const char* s = std::getenv("DDT_SPIN_TYPES");
  return s ? std::atoll(s) : 2000;
}

struct Region {  // a buffer covering count elements' true range, with guards
  std::vector<char> mem;
  int64_t origin;
  Region(const RefType& r, int64_t count, std::mt19937_64& rng) {
    int64_t lo, hi;
    ref_span(r, count, lo, hi);
    mem.resize(static_cast<size_t>(hi - lo + 128));
    origin = 64 - lo;
    for (auto& c : mem) c = static_cast<char>(rng());
  }
  char* at() { return mem.data() + origin; }
};

const int64_t kPackets[] = {1, 3, 7, 16, 61, 128, 1000, 2048};

TEST(SpinRandom, EveryStrategyEveryByte) {
  std::mt19937_64 rng(14);
  GenOptions opt;
  opt.allow_overlap = false;  // a receive into overlapping entries is undefined (MPI) and order-dependent
  const int64_t n_types = types_per_run();
  int64_t sims = 0, fell = 0, unchecked = 0;
  for (int64_t t = 0; t < n_types; ++t) {
    RefType ref;
    TPtr node = random_type(rng, opt, ref, 300, 1 << 13);
    int err = 0;
    ddt_type ty = build_ddt(*node, &err);
    ASSERT_NE(ty, DDT_TYPE_NULL) << describe(*node);
    ASSERT_EQ(ddt_type_commit(ty), DDT_SUCCESS);
    const int64_t count = 1 + static_cast<int64_t>(rng() % 3);
    const int64_t size = ref.size * count;
    const bool overlap = ref_overlaps(ref, count);
    std::vector<char> packed(static_cast<size_t>(size));
    for (auto& c : packed) c = static_cast<char>(rng());
    Region init(ref, count, rng);
    Region expect = init;
    ref_unpack(ref, packed.data(), count, expect.at());
    std::vector<char> expect_packed(static_cast<size_t>(size));
    ref_pack(ref, init.at(), count, expect_packed.data());

    ddt_spin_params p;
    ddt_spin_defaults(&p);
    p.host_flush_bytes = 0;
    p.packet_bytes = kPackets[rng() % (sizeof kPackets / sizeof kPackets[0])];
    p.hpus = 1 + static_cast<int>(rng() % 8);
    p.scheduler = static_cast<int>(rng() % 3);  // auto, default, blocked round-robin
    p.blocked_dp = 1 + static_cast<int>(rng() % 4);
    // One type in eight gets a NIC memory too small for some strategies' state: they fall back.
    const bool small_nic = rng() % 8 == 0;
    if (small_nic) p.nic_memory_bytes = static_cast<int64_t>(rng() % 4096);
    for (int s = 0; s < DDT_SPIN_STRATEGIES; ++s) {
      for (int ordered = 0; ordered < 2; ++ordered) {
        p.reorder_seed = ordered ? 0 : rng() | 1;
        p.reorder_window = static_cast<int>(rng() % 4);  // 0: any permutation
        const std::string what = std::string(ddt_spin_strategy_name(s)) + (ordered ? " in order" : " permuted") +
                                 " k=" + std::to_string(p.packet_bytes) + " P=" + std::to_string(p.hpus) +
                                 " sched=" + std::to_string(p.scheduler) + " nic=" + std::to_string(p.nic_memory_bytes) + " count=" + std::to_string(count) + ": " +
                                 describe(*node);
        Region got = init;
        ddt_spin_report r;
        std::memset(&r, 0, sizeof r);
        ASSERT_EQ(ddt_spin_receive(packed.data(), size, got.at(), count, ty, s, &p, &r), DDT_SUCCESS) << what;
        // Overlapping entries receive in handler order, which the scheduler interleaves across
        // HPUs (MPI leaves such a receive undefined): checked where the host unpacked.
        if (!overlap || r.strategy_run == DDT_SPIN_HOST) {
          ASSERT_TRUE(got.mem == expect.mem) << "receive " << what;
        } else {
          ++unchecked;
        }
        if (size > 0) {
          ASSERT_GT(r.seconds, 0) << what;
          ASSERT_EQ(r.strategy_run, r.fell_back ? DDT_SPIN_HOST : s) << what;
          // Only the specialised handlers lack a handler for some layouts; the general ones fit.
          if (s != DDT_SPIN_SPECIALIZED && !small_nic) {
            ASSERT_EQ(r.fell_back, 0) << what;
          }
          if (s != DDT_SPIN_HOST && !r.fell_back) {
            ASSERT_EQ(r.packets, (size + p.packet_bytes - 1) / p.packet_bytes);
          }
        }
        fell += r.fell_back;

        std::vector<char> out(static_cast<size_t>(size), 0x5a);
        ASSERT_EQ(ddt_spin_send(init.at(), count, ty, out.data(), size, s, &p, &r), DDT_SUCCESS) << what;
        ASSERT_TRUE(out == expect_packed) << "send " << what;
        sims += 2;
      }
    }
    ddt_type_free(&ty);
  }
  std::printf("%lld simulated transfers over %lld random types, %lld fell back (no specialised handler, or too "
              "little NIC memory), %lld "
              "offloaded receives into overlapping typemaps not compared (order-dependent)\n",
              static_cast<long long>(sims), static_cast<long long>(n_types), static_cast<long long>(fell),
              static_cast<long long>(unchecked));
  EXPECT_LT(unchecked * 5, sims);  // the check covers nearly everything
}

}  // namespace
