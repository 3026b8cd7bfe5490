// The NIC model's timing side, checked against what each rule of the model implies: the seeded
// reordering (a permutation, each packet within its window), the line rate as a floor, the
// scheduling policies (blocked round-robin with one sequence runs one handler at a time), the
// strategies' own work (RW-CP: no catch-up in order, master-copy resets out of order; HPU-local:
// catch-up over the other HPUs' packets; seek: the same work in any order), the DMA queue depth
// as a bound, the iovec baseline's fetches, and the checkpoint interval brought within NIC memory.
// And the handler cost model (SpinCosts): every cost a parameter defaulting to costs.hpp's
// constant, each phase linear in its cost, invalid costs rejected before anything is written.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "ddtkit_spin.h"
#include "spin/costs.hpp"
#include "spin/model.hpp"

namespace {

ddt_spin_params quiet() {
  ddt_spin_params p;
  ddt_spin_defaults(&p);
  p.host_flush_bytes = 0;
  return p;
}

// A vector of bytes: blocks of b every 2b, m bytes in all, with its buffer.
struct Vec {
  ddt_type t = DDT_TYPE_NULL;
  int64_t size;
  std::vector<char> buf, packed, want;
  Vec(int64_t b, int64_t m) : size(m / b * b) {
    EXPECT_EQ(ddt_type_hvector(m / b, b, 2 * b, DDT_BYTE, &t), DDT_SUCCESS);
    EXPECT_EQ(ddt_type_commit(t), DDT_SUCCESS);
    buf.assign(static_cast<size_t>(2 * size), 0);
    packed.resize(static_cast<size_t>(size));
    for (int64_t i = 0; i < size; ++i) packed[i] = static_cast<char>(i * 29 + 3);
    want = buf;
    int64_t done;
    EXPECT_EQ(ddt_unpack(packed.data(), size, want.data(), 1, t, 0, &done), DDT_SUCCESS);
  }
  ~Vec() { ddt_type_free(&t); }
  // Receives through strategy s; the buffer must match ddt_unpack's.
  ddt_spin_report receive(int s, const ddt_spin_params& p) {
    std::fill(buf.begin(), buf.end(), 0);
    ddt_spin_report r;
    std::memset(&r, 0, sizeof r);
    EXPECT_EQ(ddt_spin_receive(packed.data(), size, buf.data(), 1, t, s, &p, &r), DDT_SUCCESS) << ddt_spin_strategy_name(s);
    EXPECT_TRUE(buf == want) << ddt_spin_strategy_name(s);
    return r;
  }
};

TEST(SpinModel, ArrivalOrder) {
  ddt_spin_params p = quiet();
  const int64_t n = 1000;
  std::vector<int64_t> id = ddt::spin::arrival_order(n, p);  // seed 0: in order
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(id[i], i);
  for (int w : {0, 1, 3, 17}) {
    p.reorder_seed = 42, p.reorder_window = w;
    const std::vector<int64_t> a = ddt::spin::arrival_order(n, p), b = ddt::spin::arrival_order(n, p);
    EXPECT_EQ(a, b) << "seeded: the same permutation every time";
    std::vector<int64_t> sorted = a;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(sorted, id) << "a permutation: no packet lost or repeated";
    int64_t moved = 0, far = 0;
    for (int64_t pos = 0; pos < n; ++pos) {
      moved += a[pos] != pos;
      far = std::max(far, std::abs(a[pos] - pos));
    }
    EXPECT_GT(moved, 0) << w;
    if (w > 0) {
      EXPECT_LE(far, w);
    }
    p.reorder_seed = 43;
    EXPECT_NE(ddt::spin::arrival_order(n, p), a) << "another seed, another order";
  }
}

TEST(SpinModel, LineRateIsAFloor) {
  Vec v(512, 1 << 20);
  ddt_spin_params p = quiet();
  const double wire = static_cast<double>(v.size) * 8 / (p.line_gbit_s * 1e9);
  for (int s = 0; s < DDT_SPIN_STRATEGIES; ++s) {
    const ddt_spin_report r = v.receive(s, p);
    EXPECT_GE(r.seconds, wire) << ddt_spin_strategy_name(s);
    EXPECT_LE(r.gbit_s, p.line_gbit_s * (1 + 1e-9)) << ddt_spin_strategy_name(s);
  }
  // And the send side: no packet leaves before its handler has gathered it.
  std::vector<char> out(static_cast<size_t>(v.size));
  ddt_spin_report r;
  ASSERT_EQ(ddt_spin_send(v.want.data(), 1, v.t, out.data(), v.size, DDT_SPIN_SEEK, &p, &r), DDT_SUCCESS);
  EXPECT_TRUE(out == v.packed);
  EXPECT_GE(r.seconds, wire);
}

TEST(SpinModel, SchedulingPolicies) {
  Vec v(16, 1 << 20);  // 128 blocks per packet: handlers slower than the packets
  ddt_spin_params p = quiet();
  const ddt_spin_report any = v.receive(DDT_SPIN_SEEK, p);  // default: any idle HPU
  const double work = any.handler_init_s + any.handler_setup_s + any.handler_block_s;
  EXPECT_LT(any.seconds, work / 4) << "16 HPUs run handlers in parallel";
  // Blocked round-robin with one sequence of every packet: one vHPU, one handler at a time.
  p.scheduler = DDT_SPIN_SCHED_BLOCKED_RR;
  p.blocked_dp = static_cast<int>(any.packets);
  const ddt_spin_report one = v.receive(DDT_SPIN_SEEK, p);
  EXPECT_GE(one.seconds, work);
  // Sequences of 8: 64 vHPUs over 16 HPUs, as fast as the default.
  p.blocked_dp = 8;
  const ddt_spin_report rr = v.receive(DDT_SPIN_SEEK, p);
  EXPECT_LT(rr.seconds, work / 4);
  // One HPU: every handler after the other, whatever the policy.
  p = quiet();
  p.hpus = 1;
  EXPECT_GE(v.receive(DDT_SPIN_SEEK, p).seconds, work);
}

TEST(SpinModel, StrategiesWork) {
  Vec v(64, 1 << 20);  // 32 blocks per packet
  ddt_spin_params p = quiet();
  // RW-CP in order: each vHPU owns its checkpoint and never catches up or resets.
  const ddt_spin_report rw = v.receive(DDT_SPIN_RW_CP, p);
  EXPECT_EQ(rw.catchup_blocks, 0);
  EXPECT_EQ(rw.resets, 0);
  EXPECT_GT(rw.checkpoint_interval, p.packet_bytes);
  EXPECT_EQ(rw.checkpoints, 2 * ((v.size + rw.checkpoint_interval - 1) / rw.checkpoint_interval));  // masters too
  // HPU-local in order: each handler catches up over the P - 1 packets the other HPUs took (the
  // first P handlers over the i packets before theirs).
  const ddt_spin_report hl = v.receive(DDT_SPIN_HPU_LOCAL, p);
  const int64_t gamma = p.packet_bytes / 64, P = p.hpus;
  EXPECT_EQ(hl.catchup_blocks, ((hl.packets - P) * (P - 1) + P * (P - 1) / 2) * gamma);
  EXPECT_GT(hl.handler_setup_s, hl.handler_block_s) << "dominated by the catch-up (Fig. 12)";
  // RO-CP copies a checkpoint in every handler.
  const ddt_spin_report ro = v.receive(DDT_SPIN_RO_CP, p);
  EXPECT_EQ(ro.checkpoint_copies, ro.handlers);
  // Seek: no catch-up, no copies.
  const ddt_spin_report sk = v.receive(DDT_SPIN_SEEK, p);
  EXPECT_EQ(sk.catchup_blocks, 0);
  EXPECT_EQ(sk.checkpoint_copies, 0);
  EXPECT_EQ(sk.nic_memory_used, sk.layout_bytes);

  // Out of order: RW-CP resets working checkpoints from their masters (bytes still right), and
  // its handlers do more work; the seek handlers do exactly the same work as in order.
  p.reorder_seed = 7;
  const ddt_spin_report rwp = v.receive(DDT_SPIN_RW_CP, p);
  EXPECT_GT(rwp.resets, 0);
  EXPECT_GT(rwp.catchup_blocks, 0);
  const ddt_spin_report skp = v.receive(DDT_SPIN_SEEK, p);
  EXPECT_EQ(skp.blocks, sk.blocks);
  EXPECT_EQ(skp.seek_steps, sk.seek_steps);
  EXPECT_EQ(skp.catchup_blocks, 0);
  EXPECT_DOUBLE_EQ(skp.handler_init_s + skp.handler_setup_s + skp.handler_block_s,
                   sk.handler_init_s + sk.handler_setup_s + sk.handler_block_s);
  // A window of one packet: neighbours swap, RW-CP still resets at most once per swap.
  p.reorder_window = 1;
  const ddt_spin_report rww = v.receive(DDT_SPIN_RW_CP, p);
  EXPECT_LE(rww.resets, rww.packets / 2 + 1);
}

TEST(SpinModel, DmaQueueDepthBounds) {
  Vec v(4, 1 << 18);  // 512 DMA writes of 4 B per packet
  ddt_spin_params p = quiet();
  p.pcie_gbyte_s = 0.5;  // a slow link: the queue fills
  p.dma_queue_depth = 8;
  const ddt_spin_report r = v.receive(DDT_SPIN_SPECIALIZED, p);
  EXPECT_EQ(r.dma_queue_max, 8);
  EXPECT_GT(r.dma_queue_mean, 4);
  // The link's bytes, headers included, are a floor.
  const double link = static_cast<double>(r.dma_requests) * (4 + p.pcie_request_overhead_bytes) / (p.pcie_gbyte_s * 1e9);
  EXPECT_GE(r.seconds, link);
  p.dma_queue_depth = 100000;
  EXPECT_GT(v.receive(DDT_SPIN_SPECIALIZED, p).dma_queue_max, 8);
}

TEST(SpinModel, IovecFetches) {
  Vec v(64, 1 << 18);
  ddt_spin_params p = quiet();
  p.iovec_entries = 1 << 20;  // the whole list on the NIC: no fetches
  const ddt_spin_report all = v.receive(DDT_SPIN_IOVEC, p);
  p.iovec_entries = 4;  // a PCIe read every 4 blocks
  const ddt_spin_report few = v.receive(DDT_SPIN_IOVEC, p);
  EXPECT_EQ(few.nic_memory_used, 4 * 16);
  EXPECT_NEAR(few.handler_setup_s - all.handler_setup_s, (v.size / 64 / 4 - 1) * p.pcie_read_latency_ns * 1e-9, 1e-9);
  EXPECT_GT(few.seconds, all.seconds);
}

TEST(SpinModel, CheckpointIntervalWithinNicMemory) {
  // 4 B blocks: the handlers are slow, epsilon allows long sequences and the P-sequence rule
  // shortens them to 16 (32 checkpoints with the masters). With room for 13 pairs only, dr grows
  // (still within epsilon) instead of falling back.
  Vec v(4, 4 << 20);
  ddt_spin_params p = quiet();
  const ddt_spin_report wide = v.receive(DDT_SPIN_RW_CP, p);
  ASSERT_EQ(wide.fell_back, 0);
  EXPECT_EQ(wide.checkpoints, 2 * p.hpus);
  p.nic_memory_bytes = 16384;
  const ddt_spin_report tight = v.receive(DDT_SPIN_RW_CP, p);
  EXPECT_EQ(tight.fell_back, 0);
  EXPECT_LE(tight.nic_memory_used, p.nic_memory_bytes);
  EXPECT_GT(tight.checkpoint_interval, wide.checkpoint_interval);
  EXPECT_EQ(tight.checkpoint_interval % p.packet_bytes, 0);
  // Where no interval within epsilon fits, the host unpacks, and says so.
  p.nic_memory_bytes = 2000;
  EXPECT_EQ(v.receive(DDT_SPIN_RW_CP, p).fell_back, 1);
  // A dr given by the caller is kept as it is: too many checkpoints fall back.
  p.nic_memory_bytes = 16384;
  p.checkpoint_interval = wide.checkpoint_interval;
  EXPECT_EQ(v.receive(DDT_SPIN_RW_CP, p).fell_back, 1);
}

// ---- The handler cost model: every cost a field of ddt_spin_params (defaults: costs.hpp) ----

// The cost fields, with the constant each defaults to.
struct CostField {
  const char* name;
  double ddt_spin_params::*field;
  double dflt;
};
const CostField kCosts[] = {
    {"start", &ddt_spin_params::start_cycles, ddt::spin::kStartCycles},
    {"block", &ddt_spin_params::block_cycles, ddt::spin::kBlockCycles},
    {"general_block", &ddt_spin_params::general_block_cycles, ddt::spin::kGeneralBlockCycles},
    {"catchup_block", &ddt_spin_params::catchup_block_cycles, ddt::spin::kCatchupBlockCycles},
    {"catchup_byte", &ddt_spin_params::catchup_byte_cycles, ddt::spin::kCatchupByteCycles},
    {"seek_step", &ddt_spin_params::seek_step_cycles, ddt::spin::kSeekStepCycles},
    {"run", &ddt_spin_params::run_cycles, ddt::spin::kRunCycles},
};

TEST(SpinCosts, DefaultsAreCostsHpp) {
  for (const char* preset : {"paper", "paper32", "pspin"}) {  // the presets keep the default costs
    ddt_spin_params p;
    ASSERT_EQ(ddt_spin_preset(preset, &p), DDT_SUCCESS);
    for (const CostField& c : kCosts) EXPECT_EQ(p.*c.field, c.dflt) << preset << " " << c.name;
  }
  EXPECT_EQ(ddt::spin::kCatchupByteCycles, 0.0) << "MPITypes catches up per block; the byte term is opt-in";
}

// Doubling the specialised block cost doubles the handlers' block time, touches no other phase,
// and moves the same bytes; where the handlers, not the link, set the pace, the message time
// follows the handler time.
TEST(SpinCosts, BlockCostScalesBlockTime) {
  Vec v(64, 1 << 20);  // 32 blocks per packet
  ddt_spin_params p = quiet();
  const double hz = p.hpu_ghz * 1e9;
  const ddt_spin_report a = v.receive(DDT_SPIN_SPECIALIZED, p);
  EXPECT_NEAR(a.handler_block_s, static_cast<double>(a.blocks) * p.block_cycles / hz, 1e-12);
  p.block_cycles *= 2;
  const ddt_spin_report b = v.receive(DDT_SPIN_SPECIALIZED, p);  // (receive checks every byte)
  EXPECT_EQ(b.blocks, a.blocks);
  EXPECT_NEAR(b.handler_block_s / a.handler_block_s, 2.0, 1e-12);
  EXPECT_DOUBLE_EQ(b.handler_init_s, a.handler_init_s);
  EXPECT_DOUBLE_EQ(b.handler_setup_s, a.handler_setup_s);
  EXPECT_GE(b.seconds, a.seconds);
  // The general handlers' block cost is a separate field: specialised does not see it, RW-CP's
  // block time doubles with it (its dr may change with it, its blocks do not).
  p = quiet();
  const ddt_spin_report rw = v.receive(DDT_SPIN_RW_CP, p);
  p.general_block_cycles *= 2;
  EXPECT_DOUBLE_EQ(v.receive(DDT_SPIN_SPECIALIZED, p).handler_block_s, a.handler_block_s);
  const ddt_spin_report rw2 = v.receive(DDT_SPIN_RW_CP, p);
  EXPECT_EQ(rw2.blocks, rw.blocks);
  EXPECT_NEAR(rw2.handler_block_s / rw.handler_block_s, 2.0, 1e-12);

  // 8 B blocks (256 per packet): handlers slower than the packets, so the message takes about
  // as much longer as each handler does.
  Vec s(8, 1 << 20);
  p = quiet();
  const ddt_spin_report c = s.receive(DDT_SPIN_SPECIALIZED, p);
  p.block_cycles *= 2;
  const ddt_spin_report d = s.receive(DDT_SPIN_SPECIALIZED, p);
  const double work = (d.handler_init_s + d.handler_setup_s + d.handler_block_s) /
                      (c.handler_init_s + c.handler_setup_s + c.handler_block_s);
  EXPECT_GT(work, 1.9);
  EXPECT_NEAR(d.seconds / c.seconds, work, 0.05 * work);
}

// Catch-up: per block (the paper's MPITypes segment) and per byte (off by default), each adding
// its count times its cost to the setup phase.
TEST(SpinCosts, CatchupCosts) {
  Vec v(64, 1 << 20);
  ddt_spin_params p = quiet();
  const double hz = p.hpu_ghz * 1e9;
  const ddt_spin_report a = v.receive(DDT_SPIN_HPU_LOCAL, p);
  // In order each handler catches up over the P - 1 packets the other HPUs took.
  const int64_t P = p.hpus, k = p.packet_bytes;
  EXPECT_EQ(a.catchup_bytes, ((a.packets - P) * (P - 1) + P * (P - 1) / 2) * k);
  EXPECT_EQ(a.catchup_bytes, a.catchup_blocks * 64);
  p.catchup_byte_cycles = 1;
  const ddt_spin_report b = v.receive(DDT_SPIN_HPU_LOCAL, p);
  EXPECT_NEAR(b.handler_setup_s - a.handler_setup_s, static_cast<double>(a.catchup_bytes) / hz, 1e-9 * b.handler_setup_s);
  EXPECT_DOUBLE_EQ(b.handler_block_s, a.handler_block_s);
  EXPECT_DOUBLE_EQ(b.handler_init_s, a.handler_init_s);
  EXPECT_GT(b.seconds, a.seconds);
  p = quiet();
  p.catchup_block_cycles *= 2;
  const ddt_spin_report c = v.receive(DDT_SPIN_HPU_LOCAL, p);
  EXPECT_NEAR(c.handler_setup_s - a.handler_setup_s, static_cast<double>(a.catchup_blocks) * ddt::spin::kCatchupBlockCycles / hz,
              1e-9 * c.handler_setup_s);
  // RO-CP catches up from its checkpoint, and pays per byte too; seek never catches up.
  p = quiet();
  const ddt_spin_report ro = v.receive(DDT_SPIN_RO_CP, p), sk = v.receive(DDT_SPIN_SEEK, p);
  p.catchup_byte_cycles = 1;
  EXPECT_GT(ro.catchup_bytes, 0);
  EXPECT_NEAR(v.receive(DDT_SPIN_RO_CP, p).handler_setup_s - ro.handler_setup_s, static_cast<double>(ro.catchup_bytes) / hz,
              1e-9 * ro.handler_setup_s);
  EXPECT_EQ(sk.catchup_bytes, 0);
  EXPECT_DOUBLE_EQ(v.receive(DDT_SPIN_SEEK, p).handler_setup_s, sk.handler_setup_s);
}

// Start, seek step and run costs: each phase is linear in its cost.
TEST(SpinCosts, StartSeekAndRunCosts) {
  Vec v(64, 1 << 20);
  ddt_spin_params p = quiet();
  const double hz = p.hpu_ghz * 1e9;
  const ddt_spin_report a = v.receive(DDT_SPIN_SEEK, p);
  p.start_cycles += 100;
  const ddt_spin_report b = v.receive(DDT_SPIN_SEEK, p);
  EXPECT_NEAR(b.handler_init_s - a.handler_init_s, static_cast<double>(a.handlers) * 100 / hz, 1e-12);
  EXPECT_GT(b.seconds, a.seconds) << "the completion handler starts too";
  p = quiet();
  p.seek_step_cycles = 0;
  EXPECT_EQ(v.receive(DDT_SPIN_SEEK, p).handler_setup_s, 0.0);
  p.seek_step_cycles = 12;
  EXPECT_NEAR(v.receive(DDT_SPIN_SEEK, p).handler_setup_s, static_cast<double>(a.seek_steps) * 12 / hz, 1e-12);

  // Runs: blocks of two widths, so that the seek handler's cursor leaves a run at every block.
  ddt_type ix;
  const int64_t n = 4096;
  std::vector<int64_t> len(n), disp(n);
  for (int64_t i = 0; i < n; ++i) len[i] = 8 + 8 * (i % 2), disp[i] = 32 * i;
  ASSERT_EQ(ddt_type_indexed(n, len.data(), disp.data(), DDT_BYTE, &ix), DDT_SUCCESS);
  ASSERT_EQ(ddt_type_commit(ix), DDT_SUCCESS);
  int64_t size;
  ddt_type_size(ix, &size);
  std::vector<char> packed(static_cast<size_t>(size), 5), buf(static_cast<size_t>(32 * n));
  auto block_s = [&](double run) {
    ddt_spin_params q = quiet();
    q.run_cycles = run;
    ddt_spin_report r;
    EXPECT_EQ(ddt_spin_receive(packed.data(), size, buf.data(), 1, ix, DDT_SPIN_SEEK, &q, &r), DDT_SUCCESS);
    return r.handler_block_s;
  };
  const double r0 = block_s(0), r1 = block_s(ddt::spin::kRunCycles), r2 = block_s(2 * ddt::spin::kRunCycles);
  EXPECT_GT(r1, r0);
  EXPECT_NEAR(r2 - r1, r1 - r0, 1e-9 * r2);
  ddt_type_free(&ix);
}

// A cost that is negative, NaN or infinite is an invalid parameter: DDT_ERR_ARG, nothing written.
// Zero is a cost (a free operation).
TEST(SpinCosts, InvalidCostsRejected) {
  Vec v(64, 1 << 16);
  const double bad[] = {-1, -1e-300, std::nan(""), HUGE_VAL, -HUGE_VAL};
  for (const CostField& c : kCosts) {
    for (double x : bad) {
      ddt_spin_params p = quiet();
      p.*c.field = x;
      std::fill(v.buf.begin(), v.buf.end(), 7);
      const std::vector<char> buf0 = v.buf, packed0 = v.packed;
      std::vector<char> out(static_cast<size_t>(v.size), 3);
      ddt_spin_report r;
      for (int s : {DDT_SPIN_HOST, DDT_SPIN_SPECIALIZED, DDT_SPIN_RW_CP, DDT_SPIN_SEEK}) {
        EXPECT_EQ(ddt_spin_receive(v.packed.data(), v.size, v.buf.data(), 1, v.t, s, &p, &r), DDT_ERR_ARG) << c.name << " " << x;
        EXPECT_EQ(ddt_spin_send(v.want.data(), 1, v.t, out.data(), v.size, s, &p, &r), DDT_ERR_ARG) << c.name << " " << x;
      }
      EXPECT_TRUE(v.buf == buf0) << c.name;
      EXPECT_TRUE(v.packed == packed0) << c.name;
      EXPECT_TRUE(std::all_of(out.begin(), out.end(), [](char b) { return b == 3; })) << c.name;
    }
    ddt_spin_params p = quiet();
    p.*c.field = 0;
    v.receive(DDT_SPIN_SEEK, p);  // succeeds, bytes right
  }
}

}  // namespace
