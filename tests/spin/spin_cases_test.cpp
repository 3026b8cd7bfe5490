// The NIC model's fixed cases: one-byte and one-packet messages, packets that cut blocks,
// strategies that do not apply or do not fit NIC memory (fall back, said so, bytes right),
// corrupted handler state and descriptors (rejected, nothing written outside the buffer), and
// argument errors (error codes, buffers untouched).
#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <vector>

#include "ddtkit_spin.h"
#include "spin/engine.hpp"

namespace {

ddt_spin_params quiet() {
  ddt_spin_params p;
  ddt_spin_defaults(&p);
  p.host_flush_bytes = 0;
  return p;
}

// vector(n, w ints, stride s ints), committed.
ddt_type vec(int64_t n, int64_t w, int64_t s) {
  ddt_type t;
  EXPECT_EQ(ddt_type_vector(n, w, s, DDT_INT, &t), DDT_SUCCESS);
  EXPECT_EQ(ddt_type_commit(t), DDT_SUCCESS);
  return t;
}

std::vector<char> stream(int64_t n) {
  std::vector<char> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<char>(i * 131 + 7);
  return v;
}

// Receives packed through strategy s and checks the buffer against ddt_unpack's.
void receive_matches(ddt_type t, int64_t count, int64_t span, int s, const ddt_spin_params& p, ddt_spin_report* out = nullptr) {
  int64_t size;
  ddt_type_size(t, &size);
  size *= count;
  const std::vector<char> packed = stream(size);
  std::vector<char> want(static_cast<size_t>(span), 1), got(static_cast<size_t>(span), 1);
  int64_t done;
  ASSERT_EQ(ddt_unpack(packed.data(), size, want.data(), count, t, 0, &done), DDT_SUCCESS);
  ddt_spin_report r;
  ASSERT_EQ(ddt_spin_receive(packed.data(), size, got.data(), count, t, s, &p, &r), DDT_SUCCESS) << ddt_spin_strategy_name(s);
  ASSERT_TRUE(got == want) << ddt_spin_strategy_name(s);
  std::vector<char> sent(static_cast<size_t>(size), 0);
  ASSERT_EQ(ddt_spin_send(want.data(), count, t, sent.data(), size, s, &p, &r), DDT_SUCCESS) << ddt_spin_strategy_name(s);
  ASSERT_TRUE(sent == packed) << ddt_spin_strategy_name(s);
  if (out) *out = r;
}

TEST(SpinCases, OneByteAndOnePacket) {
  ddt_spin_params p = quiet();
  ddt_type b = DDT_BYTE;
  for (int s = 0; s < DDT_SPIN_STRATEGIES; ++s) {
    ddt_spin_report r;
    receive_matches(b, 1, 1, s, p, &r);
    EXPECT_EQ(r.packets, 1);
  }
  ddt_type v = vec(10, 3, 5);  // 120 bytes: one packet
  for (int s = 0; s < DDT_SPIN_STRATEGIES; ++s) {
    ddt_spin_report r;
    receive_matches(v, 1, 200, s, p, &r);
    EXPECT_EQ(r.packets, 1);
    if (s != DDT_SPIN_HOST) {
      EXPECT_EQ(r.fell_back, 0) << s;
    }
  }
  ddt_type_free(&v);
}

TEST(SpinCases, PacketsCutBlocks) {
  ddt_spin_params p = quiet();
  ddt_type v = vec(1000, 3, 5);  // 12-byte blocks
  for (int64_t k : {1, 5, 7, 13, 100, 4095}) {
    p.packet_bytes = k;
    for (int s = 0; s < DDT_SPIN_STRATEGIES; ++s) receive_matches(v, 2, 2 * 1000 * 5 * 4, s, p);
  }
  ddt_type_free(&v);
  // indexed with varying lengths (binary search) and indexed_block (division).
  const int64_t lens[] = {1, 5, 2, 7, 3}, disps[] = {0, 3, 11, 15, 30};
  ddt_type ix, ib;
  ASSERT_EQ(ddt_type_indexed(5, lens, disps, DDT_INT, &ix), DDT_SUCCESS);
  ASSERT_EQ(ddt_type_commit(ix), DDT_SUCCESS);
  ASSERT_EQ(ddt_type_indexed_block(5, 2, disps, DDT_DOUBLE, &ib), DDT_SUCCESS);
  ASSERT_EQ(ddt_type_commit(ib), DDT_SUCCESS);
  for (int64_t k : {1, 3, 9, 64}) {
    p.packet_bytes = k;
    for (int s = 0; s < DDT_SPIN_STRATEGIES; ++s) {
      ddt_spin_report r;
      receive_matches(ix, 3, 3 * 33 * 4, s, p, &r);
      if (s == DDT_SPIN_SPECIALIZED) {
        EXPECT_EQ(r.fell_back, 0);
      }
      receive_matches(ib, 2, 2 * 32 * 8, s, p, &r);
      if (s == DDT_SPIN_SPECIALIZED) {
        EXPECT_EQ(r.fell_back, 0);
      }
    }
  }
  ddt_type_free(&ix);
  ddt_type_free(&ib);
}

TEST(SpinCases, FallBackSaysSo) {
  ddt_spin_params p = quiet();
  p.packet_bytes = 64;
  // A struct has no specialised handler (§3.2.6): the host unpacks.
  const int64_t bl[] = {1, 2}, dp[] = {0, 8};
  const ddt_type ts[] = {DDT_INT, DDT_DOUBLE};
  ddt_type st, two;
  ASSERT_EQ(ddt_type_struct(2, bl, dp, ts, &st), DDT_SUCCESS);
  ASSERT_EQ(ddt_type_vector(4, 1, 3, st, &two), DDT_SUCCESS);
  ASSERT_EQ(ddt_type_commit(two), DDT_SUCCESS);
  ddt_spin_report r;
  receive_matches(two, 5, 5 * 4 * 3 * 24, DDT_SPIN_SPECIALIZED, p, &r);
  EXPECT_EQ(r.fell_back, 1);
  EXPECT_EQ(r.strategy_run, DDT_SPIN_HOST);
  // Checkpoints that do not fit NIC memory: RW_CP and RO_CP fall back; so does any strategy
  // whose layout or segments do not fit.
  ddt_type v = vec(4096, 1, 2);
  p.nic_memory_bytes = 2000;
  p.checkpoint_interval = 64;  // 256 checkpoints of 612 B
  for (int s : {DDT_SPIN_RO_CP, DDT_SPIN_RW_CP}) {
    receive_matches(v, 1, 4096 * 8, s, p, &r);
    EXPECT_EQ(r.fell_back, 1) << s;
    EXPECT_GT(r.seconds, 0);
  }
  p.nic_memory_bytes = 1;
  for (int s : {DDT_SPIN_SPECIALIZED, DDT_SPIN_HPU_LOCAL, DDT_SPIN_SEEK}) {
    receive_matches(v, 1, 4096 * 8, s, p, &r);
    EXPECT_EQ(r.fell_back, 1) << s;
  }
  // With room, the model's own interval is used and the checkpoints are counted.
  p = quiet();
  receive_matches(v, 1, 4096 * 8, DDT_SPIN_RW_CP, p, &r);
  EXPECT_EQ(r.fell_back, 0);
  EXPECT_GT(r.checkpoint_interval, 0);
  EXPECT_EQ(r.checkpoint_interval % p.packet_bytes, 0);
  EXPECT_EQ(r.nic_memory_used, r.layout_bytes + r.checkpoints * p.checkpoint_bytes);
  receive_matches(v, 1, 4096 * 8, DDT_SPIN_SEEK, p, &r);
  EXPECT_EQ(r.nic_memory_used, r.layout_bytes);
  ddt_type_free(&v);
  ddt_type_free(&two);
  ddt_type_free(&st);
}

// A handler given a corrupted state or descriptor returns DDT_ERR_CORRUPT and writes nothing
// outside the buffer.
struct Fixture {
  ddt_type t;
  std::vector<char> mem;  // guard, buffer, guard
  char* buf;
  std::vector<char> packet;
  ddt::spin::Engine e;
  Fixture(ddt_type type, int64_t span, int strategy, int64_t k = 64) : t(type), mem(static_cast<size_t>(span + 2 * 4096), 3) {
    buf = mem.data() + 4096;
    ddt_spin_params p = quiet();
    p.packet_bytes = k;
    p.checkpoint_interval = 2 * k;
    EXPECT_EQ(e.setup(strategy, p, t, buf, 1, false), ddt::spin::Setup::Ok);
    packet = stream(k);
  }
  int run(int64_t off, int64_t len) {
    ddt::spin::Counts c;
    std::vector<int64_t> dma;
    return e.handle(off, len, packet.data(), c, dma);
  }
  bool untouched() const {
    for (char c : mem)
      if (c != 3) return false;
    return true;
  }
  bool guards_intact(int64_t span) const {
    for (int64_t i = 0; i < 4096; ++i)
      if (mem[i] != 3 || mem[4096 + span + i] != 3) return false;
    return true;
  }
};

TEST(SpinCases, CorruptedStateRejected) {
  ddt_type v = vec(256, 2, 4);  // 2 KiB, 8-byte blocks at 16-byte stride
  const int64_t span = 256 * 16;
  {
    Fixture f(v, span, DDT_SPIN_SPECIALIZED);
    f.e.desc.stride = 1 << 30;  // the checksum no longer matches
    EXPECT_EQ(f.run(0, 64), DDT_ERR_CORRUPT);
    EXPECT_TRUE(f.untouched());
    f.e.desc.check = ddt::spin::desc_check(f.e.desc);  // even re-sealed, the DMA check refuses it
    EXPECT_EQ(f.run(64, 64), DDT_ERR_CORRUPT);
    EXPECT_TRUE(f.guards_intact(span));
  }
  {
    Fixture f(v, span, DDT_SPIN_RW_CP);
    f.e.segs[1].pos += 8;  // a working checkpoint moved behind the handler's back
    EXPECT_EQ(f.run(128, 64), DDT_ERR_CORRUPT);
    EXPECT_TRUE(f.untouched());
    EXPECT_EQ(f.run(0, 64), DDT_SUCCESS);  // the others still work
  }
  {
    Fixture f(v, span, DDT_SPIN_RW_CP);
    EXPECT_EQ(f.run(64, 64), DDT_SUCCESS);  // the working copy of checkpoint 0 is now past byte 0
    f.e.masters[0].magic ^= 1;              // and its master, needed for the reset, is corrupt
    EXPECT_EQ(f.run(0, 64), DDT_ERR_CORRUPT);
  }
  {
    Fixture f(v, span, DDT_SPIN_RO_CP);
    f.e.segs[0].check ^= 0x100;
    EXPECT_EQ(f.run(0, 64), DDT_ERR_CORRUPT);
    EXPECT_TRUE(f.untouched());
  }
  {
    Fixture f(v, span, DDT_SPIN_HPU_LOCAL);
    f.e.segs[0].slot = 5;
    EXPECT_EQ(f.run(0, 64), DDT_ERR_CORRUPT);
    EXPECT_TRUE(f.untouched());
  }
  {
    Fixture f(v, span, DDT_SPIN_SEEK);
    f.e.desc.ext = -f.e.desc.ext;
    EXPECT_EQ(f.run(0, 64), DDT_ERR_CORRUPT);
    EXPECT_TRUE(f.untouched());
    f.e.desc.check = ddt::spin::desc_check(f.e.desc);
    f.e.desc.count = 2;  // re-sealed but inconsistent with the total
    f.e.desc.check = ddt::spin::desc_check(f.e.desc);
    EXPECT_EQ(f.run(0, 64), DDT_ERR_CORRUPT);
    EXPECT_TRUE(f.untouched());
  }
  {
    Fixture f(v, span, DDT_SPIN_IOVEC);
    f.e.iov[0].iov_base = f.mem.data();  // an entry pointing at the guard
    EXPECT_EQ(f.run(0, 64), DDT_ERR_CORRUPT);
    EXPECT_TRUE(f.guards_intact(span));
    Fixture g(v, span, DDT_SPIN_IOVEC);
    g.e.iov_state.pos = 64;
    EXPECT_EQ(g.run(0, 64), DDT_ERR_CORRUPT);
    EXPECT_TRUE(g.untouched());
  }
  ddt_type_free(&v);
  // Index lists: a displacement out of range, and prefix sums that no longer add up.
  const int64_t lens[] = {1, 5, 2, 7, 3}, disps[] = {0, 3, 11, 15, 30};
  ddt_type ix;
  ASSERT_EQ(ddt_type_indexed(5, lens, disps, DDT_INT, &ix), DDT_SUCCESS);
  ASSERT_EQ(ddt_type_commit(ix), DDT_SUCCESS);
  {
    Fixture f(ix, 33 * 4, DDT_SPIN_SPECIALIZED, 8);
    f.e.idx_disp[0] = -100000;
    EXPECT_EQ(f.run(0, 8), DDT_ERR_CORRUPT);
    EXPECT_TRUE(f.guards_intact(33 * 4));
    Fixture g(ix, 33 * 4, DDT_SPIN_SPECIALIZED, 8);
    g.e.idx_prefix[2] = 1;
    EXPECT_EQ(g.run(16, 8), DDT_ERR_CORRUPT);
    EXPECT_TRUE(g.guards_intact(33 * 4));
  }
  ddt_type_free(&ix);
}

TEST(SpinCases, BadArguments) {
  ddt_spin_params p = quiet();
  ddt_spin_report r;
  ddt_type v = vec(8, 1, 2);
  std::vector<char> packed = stream(32), buf(64, 9);
  const std::vector<char> before = buf;
  EXPECT_EQ(ddt_spin_defaults(nullptr), DDT_ERR_ARG);
  EXPECT_EQ(ddt_spin_preset("nope", &p), DDT_ERR_ARG);
  EXPECT_EQ(ddt_spin_preset(nullptr, &p), DDT_ERR_ARG);
  EXPECT_EQ(ddt_spin_preset("pspin", nullptr), DDT_ERR_ARG);
  EXPECT_EQ(ddt_spin_strategy_name(-1), nullptr);
  EXPECT_EQ(ddt_spin_strategy_name(DDT_SPIN_STRATEGIES), nullptr);
  EXPECT_EQ(ddt_spin_receive(packed.data(), 32, buf.data(), 1, v, DDT_SPIN_SEEK, nullptr, &r), DDT_ERR_ARG);
  EXPECT_EQ(ddt_spin_receive(packed.data(), 32, buf.data(), 1, v, DDT_SPIN_SEEK, &p, nullptr), DDT_ERR_ARG);
  EXPECT_EQ(ddt_spin_receive(packed.data(), 32, buf.data(), 1, v, -1, &p, &r), DDT_ERR_ARG);
  EXPECT_EQ(ddt_spin_receive(packed.data(), 32, buf.data(), 1, v, DDT_SPIN_STRATEGIES, &p, &r), DDT_ERR_ARG);
  EXPECT_EQ(ddt_spin_receive(nullptr, 32, buf.data(), 1, v, DDT_SPIN_SEEK, &p, &r), DDT_ERR_ARG);
  EXPECT_EQ(ddt_spin_receive(packed.data(), 31, buf.data(), 1, v, DDT_SPIN_SEEK, &p, &r), DDT_ERR_TRUNCATE);
  EXPECT_EQ(ddt_spin_receive(packed.data(), 32, buf.data(), -1, v, DDT_SPIN_SEEK, &p, &r), DDT_ERR_COUNT);
  EXPECT_EQ(ddt_spin_receive(packed.data(), 32, buf.data(), 1, DDT_TYPE_NULL, DDT_SPIN_SEEK, &p, &r), DDT_ERR_TYPE);
  EXPECT_EQ(ddt_spin_receive(packed.data(), 32, nullptr, 1, v, DDT_SPIN_SEEK, &p, &r), DDT_ERR_ARG);
  ddt_type raw;
  ASSERT_EQ(ddt_type_vector(8, 1, 2, DDT_INT, &raw), DDT_SUCCESS);
  EXPECT_EQ(ddt_spin_receive(packed.data(), 32, buf.data(), 1, raw, DDT_SPIN_SEEK, &p, &r), DDT_ERR_NOT_COMMITTED);
  ddt_type_free(&raw);
  ddt_spin_params bad = p;
  bad.packet_bytes = 0;
  EXPECT_EQ(ddt_spin_receive(packed.data(), 32, buf.data(), 1, v, DDT_SPIN_SEEK, &bad, &r), DDT_ERR_ARG);
  bad = p, bad.hpus = 0;
  EXPECT_EQ(ddt_spin_send(buf.data(), 1, v, packed.data(), 32, DDT_SPIN_SEEK, &bad, &r), DDT_ERR_ARG);
  bad = p, bad.dma_trace_cap = 10;  // a trace without its arrays
  EXPECT_EQ(ddt_spin_receive(packed.data(), 32, buf.data(), 1, v, DDT_SPIN_SEEK, &bad, &r), DDT_ERR_ARG);
  bad = p, bad.epsilon = 0;
  EXPECT_EQ(ddt_spin_receive(packed.data(), 32, buf.data(), 1, v, DDT_SPIN_RW_CP, &bad, &r), DDT_ERR_ARG);
  EXPECT_TRUE(buf == before);
  EXPECT_TRUE(packed == stream(32));
  ddt_type_free(&v);
}

TEST(SpinCases, PresetsAndTrace) {
  ddt_spin_params p;
  ASSERT_EQ(ddt_spin_preset("pspin", &p), DDT_SUCCESS);
  EXPECT_EQ(p.hpus, 32);
  EXPECT_EQ(p.packet_bytes, 1024);
  EXPECT_DOUBLE_EQ(p.line_gbit_s, 400);
  EXPECT_DOUBLE_EQ(p.hpu_ghz, 1.0);
  ASSERT_EQ(ddt_spin_preset("paper", &p), DDT_SUCCESS);
  EXPECT_EQ(p.hpus, 16);
  EXPECT_EQ(p.packet_bytes, 2048);
  EXPECT_DOUBLE_EQ(p.epsilon, 0.2);
  p.host_flush_bytes = 0;
  std::vector<double> tt(100);
  std::vector<int32_t> tq(100);
  p.dma_trace_t = tt.data(), p.dma_trace_q = tq.data(), p.dma_trace_cap = 100;
  ddt_type v = vec(4096, 4, 8);
  ddt_spin_report r;
  receive_matches(v, 1, 4096 * 32, DDT_SPIN_SEEK, p, &r);
  ASSERT_GT(r.dma_trace_n, 0);
  ASSERT_LE(r.dma_trace_n, 100);
  int mx = 0;
  for (int64_t i = 0; i < r.dma_trace_n; ++i) mx = std::max(mx, tq[i]);
  EXPECT_LE(mx, r.dma_queue_max);
  EXPECT_LE(r.dma_queue_max, p.dma_queue_depth + 1);
  ddt_type_free(&v);
}

}  // namespace
