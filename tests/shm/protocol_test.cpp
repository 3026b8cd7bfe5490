// The rendezvous protocols' choices and the send modes (issue 15), under `ddtkit run -n N`:
//   table2   seed 002's Table II: every sender's call (send, isend, bsend, ibsend, ssend, issend,
//            rsend, irsend) against recv and irecv under COOP_COLL, and the same under HYBRID
//            (isend/irecv there goes by the load counters: COOP when both are idle; a message
//            too small, or of pieces too short for a CMA write, goes by RGET). The receiver's
//            protocol counters say which protocol moved it; every byte is checked.
//   modes    a synchronous send is not complete before its receive is posted (eager and
//            rendezvous); a buffered send is complete at once and its buffer free for reuse.
//   load     random isend/irecv exchanges between every pair under COOP_LOAD, truncated
//            receives among them: every load counter is zero after each round.
//   chunks   COOP_CHUNKED with 64 KiB chunks, two senders at once into one receiver: the chunk
//            counters, the bytes; COOP_HCA: the second engine moved part of each copy.
//   rule     COOP-load's choice as the pure function it is (src/shm/protocol.hpp's choose), on
//            rank 0: given both sides' pending bytes and recent copy work, and whether the job
//            shares cores, which side copies what; the recent work's decay. No timing involved.
// Every part ends with every rank's load counter at zero (ddt_comm_get_load). Rank 0 prints
// "protocol_test: N passed, M failed".
#include <sched.h>
#include <unistd.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "../../src/shm/protocol.hpp"  // the choice is a pure function: tested as one (part_rule)
#include "ddtkit.h"
#include "job_tally.hpp"

namespace {

int g_rank = 0, g_size = 0;
int64_t& g_passed = jobtest::tally.passed;  // job_tally.hpp: counted, gathered and closed there
int64_t& g_failed = jobtest::tally.failed;
const char* g_part = "";

bool check(bool ok, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
bool check(bool ok, const char* fmt, ...) {
  const char* where = g_part;
  va_list ap;
  va_start(ap, fmt);
  const bool r = jobtest::vrecord(ok, where, fmt, ap);
  va_end(ap);
  return r;
}

using jobtest::err_name;

unsigned char pattern(uint64_t seed, int64_t i) {
  uint64_t x = seed * 0x9e3779b97f4a7c15ULL + static_cast<uint64_t>(i) * 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 29;
  return static_cast<unsigned char>(x * 0x94d049bb133111ebULL >> 56);
}

// A vector of count blocks of block bytes at stride bytes (one element), committed.
ddt_type vector(int64_t count, int64_t block, int64_t stride) {
  ddt_type t = DDT_TYPE_NULL;
  check(ddt_type_hvector(count, block, stride, DDT_BYTE, &t) == DDT_SUCCESS && ddt_type_commit(t) == DDT_SUCCESS,
        "building hvector(%lld, %lld, %lld)", (long long)count, (long long)block, (long long)stride);
  return t;
}

// Stream byte i of a vector element lies at (i / block) * stride + i % block.
int64_t at(int64_t i, int64_t block, int64_t stride) { return i / block * stride + i % block; }

void barrier() { check(ddt_comm_barrier() == DDT_SUCCESS, "barrier"); }

// Every rank's load counter is zero (after a barrier that follows every transfer's end).
void loads_zero(const char* when) {
  barrier();
  for (int r = 0; r < g_size; ++r) {
    int64_t l = -1;
    check(ddt_comm_get_load(r, &l) == DDT_SUCCESS && l == 0, "%s: rank %d's load counter is %lld", when, r, (long long)l);
  }
  barrier();
}

ddt_comm_times times() {
  ddt_comm_times t{};
  ddt_comm_get_times(&t);
  return t;
}

// ---- table2 -------------------------------------------------------------------------------

enum Call { kSend, kIsend, kBsend, kIbsend, kSsend, kIssend, kRsend, kIrsend };
const char* kCallName[] = {"send", "isend", "bsend", "ibsend", "ssend", "issend", "rsend", "irsend"};

// Seed 002's Table II, written out as the paper prints it.
int table2(Call c, bool recv_blocking) {
  switch (c) {
    case kSend: case kSsend: case kRsend: return recv_blocking ? DDT_PROTO_COOP : DDT_PROTO_RPUT;
    case kBsend: case kIbsend: return recv_blocking ? DDT_PROTO_RGET : DDT_PROTO_RPUT;
    default: return recv_blocking ? DDT_PROTO_RGET : DDT_PROTO_COOP;  // isend, issend, irsend
  }
}

int send_call(Call c, const void* buf, ddt_type t, int dest, int tag) {
  const int mode = (c == kBsend || c == kIbsend) ? DDT_SEND_BUFFERED : (c == kSsend || c == kIssend) ? DDT_SEND_SYNC
                 : (c == kRsend || c == kIrsend) ? DDT_SEND_READY : DDT_SEND_STANDARD;
  const bool blocking = c == kSend || c == kBsend || c == kSsend || c == kRsend;
  if (blocking) return ddt_comm_send_mode(buf, 1, t, dest, tag, mode);
  ddt_request r = DDT_REQUEST_NULL;
  if (int e = ddt_comm_isend_mode(buf, 1, t, dest, tag, mode, &r)) return e;
  return ddt_comm_wait(&r, nullptr);
}

// One message from rank 0 to rank 1 of n bytes, sent as a vector of `block` blocks at twice the
// block's stride and received contiguous; returns the protocol the receiver's counters name
// (-1 when none or several moved it).
int transfer(Call c, bool recv_blocking, int64_t n, int64_t block, uint64_t seed) {
  const int64_t stride = 2 * block;
  ddt_type st = vector(n / block, block, stride);
  std::vector<unsigned char> sbuf(static_cast<size_t>(n / block * stride)), rbuf(static_cast<size_t>(n));
  int proto = -1;
  if (g_rank == 0) {
    for (int64_t i = 0; i < n; ++i) sbuf[static_cast<size_t>(at(i, block, stride))] = pattern(seed, i);
    const int e = send_call(c, sbuf.data(), st, 1, 7);
    check(e == DDT_SUCCESS, "%s of %lld B returned %s", kCallName[c], (long long)n, err_name(e));
  } else if (g_rank == 1) {
    const ddt_comm_times before = times();
    int e;
    if (recv_blocking) {
      e = ddt_comm_recv(rbuf.data(), n, DDT_BYTE, 0, 7, nullptr);
    } else {
      ddt_request r = DDT_REQUEST_NULL;
      e = ddt_comm_irecv(rbuf.data(), n, DDT_BYTE, 0, 7, &r);
      if (!e) e = ddt_comm_wait(&r, nullptr);
    }
    const ddt_comm_times after = times();
    check(e == DDT_SUCCESS, "%s/%s of %lld B: the receive returned %s", kCallName[c], recv_blocking ? "recv" : "irecv",
          (long long)n, err_name(e));
    int64_t wrong = 0;
    for (int64_t i = 0; i < n; ++i) wrong += rbuf[static_cast<size_t>(i)] != pattern(seed, i);
    check(wrong == 0, "%s/%s of %lld B: %lld wrong bytes", kCallName[c], recv_blocking ? "recv" : "irecv", (long long)n,
          (long long)wrong);
    // RGET's receiver may take the message in data cells (short pieces outside the heap): RGET.
    const int64_t g = after.by_rget - before.by_rget + after.by_cells - before.by_cells;
    const int64_t p = after.by_rput - before.by_rput, o = after.by_coop - before.by_coop;
    proto = g + p + o != 1 ? -1 : g ? DDT_PROTO_RGET : p ? DDT_PROTO_RPUT : DDT_PROTO_COOP;
  }
  ddt_type_free(&st);
  barrier();
  return proto;
}

const char* proto_name(int p) {
  return p == DDT_PROTO_RGET ? "RGET" : p == DDT_PROTO_RPUT ? "RPUT" : p == DDT_PROTO_COOP ? "COOP" : "none or several";
}

void part_table2() {
  g_part = "table2";
  const int64_t n = int64_t{1} << 20, block = 16 << 10;
  uint64_t seed = 1;
  for (int setting : {DDT_PROTO_COOP_COLL, DDT_PROTO_HYBRID}) {
    check(ddt_comm_set_protocol(setting) == DDT_SUCCESS, "set_protocol(%d)", setting);
    for (int c = kSend; c <= kIrsend; ++c)
      for (bool rb : {true, false}) {
        // HYBRID: isend/irecv (and the other non-blocking pairs) by the loads, COOP when idle.
        const bool nonblocking_pair = !rb && (c == kIsend || c == kIssend || c == kIrsend);
        // Idle: COOP-load's loads count the copies of the last few tens of ms too (protocol.cpp's
        // kLoadDecayNs); ten time constants leave under 1/20000 of them, far inside the band.
        if (setting == DDT_PROTO_HYBRID && nonblocking_pair) {
          usleep(static_cast<useconds_t>(10 * ddt::shm::kLoadDecayNs / 1000));
          barrier();
        }
        const int got = transfer(static_cast<Call>(c), rb, n, block, ++seed);
        int want = table2(static_cast<Call>(c), rb);
        if (setting == DDT_PROTO_HYBRID && nonblocking_pair) want = DDT_PROTO_COOP;
        if (g_rank == 1)
          check(got == want, "%s, %s/%s: moved by %s, Table II says %s", setting == DDT_PROTO_HYBRID ? "HYBRID" : "COOP_COLL",
                kCallName[c], rb ? "recv" : "irecv", proto_name(got), proto_name(want));
      }
  }
  // HYBRID keeps messages of short pieces on RGET (the receiver's copy), and small ones unless
  // both calls block (protocol.cpp's kCoopMinBytes and kCoopMinBlockingBytes): a 64 KiB
  // send/recv is COOP's, a 64 KiB isend/irecv RGET's, and a 64 KiB send/recv of 64 B pieces,
  // which RGET moves in cells, RGET's.
  const int got_small = transfer(kSend, true, 64 << 10, 16 << 10, ++seed);
  usleep(static_cast<useconds_t>(10 * ddt::shm::kLoadDecayNs / 1000));
  barrier();
  const int got_small_nb = transfer(kIsend, false, 64 << 10, 16 << 10, ++seed);
  const int got_small_cells = transfer(kSend, true, 64 << 10, 64, ++seed);
  const int got_short = transfer(kSend, true, n, 64, ++seed);
  if (g_rank == 1) {
    check(got_small == DDT_PROTO_COOP, "HYBRID, 64 KiB send/recv: moved by %s, not COOP", proto_name(got_small));
    check(got_small_nb == DDT_PROTO_RGET, "HYBRID, 64 KiB isend/irecv: moved by %s, not RGET", proto_name(got_small_nb));
    check(got_small_cells == DDT_PROTO_RGET, "HYBRID, 64 KiB send/recv of 64 B pieces: moved by %s, not RGET",
          proto_name(got_small_cells));
    check(got_short == DDT_PROTO_RGET, "HYBRID, 1 MiB of 64 B pieces: moved by %s, not RGET", proto_name(got_short));
  }
  loads_zero("table2");
}

// ---- modes ------------------------------------------------------------------------------------

void part_modes() {
  g_part = "modes";
  for (int64_t n : {int64_t{100}, int64_t{1} << 20}) {
    std::vector<unsigned char> buf(static_cast<size_t>(n)), got(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) buf[static_cast<size_t>(i)] = pattern(n, i);
    char go = 1;
    // Synchronous: rank 1 posts nothing until rank 0's "go", which rank 0 sends only after it
    // has seen its issend incomplete many times over.
    if (g_rank == 0) {
      ddt_request r = DDT_REQUEST_NULL;
      check(ddt_comm_isend_mode(buf.data(), n, DDT_BYTE, 1, 3, DDT_SEND_SYNC, &r) == DDT_SUCCESS, "issend");
      int done = 0, early = 0;
      for (int i = 0; i < 2000; ++i) {
        ddt_request probe = r;
        check(ddt_comm_test(&probe, &done, nullptr) == DDT_SUCCESS, "test of an issend");
        if (done) {
          early = 1;
          r = DDT_REQUEST_NULL;
          break;
        }
        if (i % 64 == 0) sched_yield();
      }
      check(!early, "an issend of %lld B completed before its receive was posted", (long long)n);
      check(ddt_comm_send(&go, 1, DDT_BYTE, 1, 4) == DDT_SUCCESS, "go");
      if (r) check(ddt_comm_wait(&r, nullptr) == DDT_SUCCESS, "wait of an issend");
    } else if (g_rank == 1) {
      check(ddt_comm_recv(&go, 1, DDT_BYTE, 0, 4, nullptr) == DDT_SUCCESS, "go");
      check(ddt_comm_recv(got.data(), n, DDT_BYTE, 0, 3, nullptr) == DDT_SUCCESS && got == buf,
            "the synchronous message of %lld B", (long long)n);
    }
    barrier();
    // Buffered: complete at once (before rank 1 posts anything), the buffer reusable at once.
    if (g_rank == 0) {
      ddt_request r = DDT_REQUEST_NULL;
      check(ddt_comm_isend_mode(buf.data(), n, DDT_BYTE, 1, 5, DDT_SEND_BUFFERED, &r) == DDT_SUCCESS, "ibsend");
      int done = 0;
      check(ddt_comm_test(&r, &done, nullptr) == DDT_SUCCESS && done, "an ibsend of %lld B is not complete at once",
            (long long)n);
      std::vector<unsigned char> keep = buf;
      std::memset(buf.data(), 0xEE, static_cast<size_t>(n));  // the message must not change
      check(ddt_comm_send_mode(keep.data(), n, DDT_BYTE, 1, 6, DDT_SEND_BUFFERED) == DDT_SUCCESS, "bsend");
      std::memset(keep.data(), 0xDD, static_cast<size_t>(n));
      check(ddt_comm_send(&go, 1, DDT_BYTE, 1, 4) == DDT_SUCCESS, "go");
      for (int64_t i = 0; i < n; ++i) buf[static_cast<size_t>(i)] = pattern(n, i);
    } else if (g_rank == 1) {
      check(ddt_comm_recv(&go, 1, DDT_BYTE, 0, 4, nullptr) == DDT_SUCCESS, "go");
      check(ddt_comm_recv(got.data(), n, DDT_BYTE, 0, 5, nullptr) == DDT_SUCCESS && got == buf,
            "the ibsend's message of %lld B", (long long)n);
      check(ddt_comm_recv(got.data(), n, DDT_BYTE, 0, 6, nullptr) == DDT_SUCCESS && got == buf,
            "the bsend's message of %lld B", (long long)n);
    }
    barrier();
  }
  int64_t dummy = 0;
  check(ddt_comm_send_mode(&dummy, 1, DDT_INT64_T, (g_rank + 1) % g_size, 1, 9) == DDT_ERR_ARG, "an unknown mode");
  ddt_request r = DDT_REQUEST_NULL;
  check(ddt_comm_isend_mode(&dummy, 1, DDT_INT64_T, (g_rank + 1) % g_size, -5, DDT_SEND_SYNC, &r) == DDT_ERR_ARG,
        "a negative tag");
  loads_zero("modes");
}

// ---- load ------------------------------------------------------------------------------------

void part_load(uint64_t seed) {
  g_part = "load";
  check(ddt_comm_set_protocol(DDT_PROTO_COOP_LOAD) == DDT_SUCCESS, "set_protocol(COOP_LOAD)");
  std::mt19937_64 rng(seed);  // the same draws on every rank: sizes agree without messages
  for (int round = 0; round < 6; ++round) {
    // sizes[s][d]: what s sends d this round; every 5th receive is short by 4 KiB (truncation).
    std::vector<std::vector<int64_t>> sizes(g_size, std::vector<int64_t>(g_size));
    for (auto& row : sizes)
      for (auto& v : row) v = (int64_t{1} << 18) + static_cast<int64_t>(rng() % (int64_t{3} << 20));
    std::vector<std::vector<unsigned char>> out(g_size), in(g_size);
    std::vector<ddt_request> reqs;
    std::vector<int> want;
    for (int p = 0; p < g_size; ++p) {
      if (p == g_rank) continue;
      const int64_t n = sizes[p][g_rank];
      const bool shorter = (p + g_rank + round) % 5 == 0;
      in[p].assign(static_cast<size_t>(shorter ? n - 4096 : n), 0);
      ddt_request r = DDT_REQUEST_NULL;
      check(ddt_comm_irecv(in[p].data(), static_cast<int64_t>(in[p].size()), DDT_BYTE, p, 11, &r) == DDT_SUCCESS, "irecv");
      reqs.push_back(r), want.push_back(shorter ? DDT_ERR_TRUNCATE : DDT_SUCCESS);
    }
    for (int p = 0; p < g_size; ++p) {
      if (p == g_rank) continue;
      const int64_t n = sizes[g_rank][p];
      out[p].resize(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) out[p][static_cast<size_t>(i)] = pattern(seed + round * 1000 + g_rank * 10 + p, i);
      ddt_request r = DDT_REQUEST_NULL;
      check(ddt_comm_isend(out[p].data(), n, DDT_BYTE, p, 11, &r) == DDT_SUCCESS, "isend");
      reqs.push_back(r), want.push_back(DDT_SUCCESS);
    }
    for (size_t i = 0; i < reqs.size(); ++i) {
      const int e = ddt_comm_wait(&reqs[i], nullptr);
      check(e == want[i], "round %d: request %zu returned %s, expected %s", round, i, err_name(e), err_name(want[i]));
    }
    for (int p = 0; p < g_size; ++p) {
      if (p == g_rank) continue;
      int64_t wrong = 0;
      const uint64_t s = seed + round * 1000 + p * 10 + g_rank;
      for (size_t i = 0; i < in[p].size(); ++i) wrong += in[p][i] != pattern(s, static_cast<int64_t>(i));
      check(wrong == 0, "round %d: %lld wrong bytes from rank %d", round, (long long)wrong, p);
    }
    loads_zero("load");
  }
  const ddt_comm_times t = times();
  check(t.copies > 0 && t.copy_bytes > 0, "load: no copies counted (%lld)", (long long)t.copies);
}

// ---- rule: COOP-load's choice, as a pure function -----------------------------------------------

void part_rule() {
  g_part = "rule";
  using ddt::shm::Ask;
  using ddt::shm::Choice;
  namespace shm = ddt::shm;
  const int64_t n = int64_t{1} << 20;
  const int64_t band = n * shm::kLoadSplitBandNum / shm::kLoadSplitBandDen;
  auto ask = [&](int setting, bool shared, int64_t ls, int64_t lp, int64_t hs, int64_t hp) {
    Ask a{};
    a.setting = setting, a.n = n, a.avg_piece = n, a.chunk_min = -1;
    a.load_self = ls, a.load_peer = lp, a.hist_self = hs, a.hist_peer = hp, a.shared_cores = shared;
    return shm::choose(a);
  };
  auto expect = [&](const char* what, const Choice& c, int proto, int64_t split) {
    check(c.proto == proto && c.split == split, "%s: proto %d split %lld, expected proto %d split %lld", what, c.proto,
          (long long)c.split, proto, (long long)split);
  };
  for (int setting : {DDT_PROTO_COOP_LOAD, DDT_PROTO_HYBRID}) {  // HYBRID's isend/irecv: the same rule
    for (bool shared : {true, false}) {
      // Idle and even: both copy half.
      expect("even, idle", ask(setting, shared, 0, 0, 0, 0), DDT_PROTO_COOP, n / 2);
      expect("even, busy", ask(setting, shared, n, n, 5 * n, 5 * n), DDT_PROTO_COOP, n / 2);
      // More than a whole message apart: the less loaded side copies it all, whichever quantity
      // (pending or recent) makes the difference.
      expect("peer busier (pending)", ask(setting, shared, 0, 2 * n, 0, 0), DDT_PROTO_RGET, n);
      expect("peer busier (recent)", ask(setting, shared, 0, 0, n, 3 * n), DDT_PROTO_RGET, n);
      expect("self busier (recent)", ask(setting, shared, 0, 0, 4 * n, 2 * n), DDT_PROTO_RPUT, 0);
      expect("self busier (both)", ask(setting, shared, n / 2, 0, n, 0), DDT_PROTO_RPUT, 0);
      // Within the band: both, in proportion (the receiver x = (n + d) / 2, cut to a cache line).
      const int64_t d = band / 2;
      expect("within the band", ask(setting, shared, 0, 0, 7 * n, 7 * n + d), DDT_PROTO_COOP, ((n + d) / 2) & ~int64_t{63});
      // Negative readings (a torn or hostile counter) count as 0.
      expect("negative readings", ask(setting, shared, -n, 0, -n, 0), DDT_PROTO_COOP, n / 2);
    }
    // Between the band and a whole message: the whole copy where processes share cores (no idle
    // core for a second share: seed 002's rule, and the copy counts balance), in proportion
    // where each has a core (both copy at once).
    const int64_t d = n / 4;
    expect("n/4 apart, shared cores", ask(setting, true, 0, 0, 0, d), DDT_PROTO_RGET, n);
    expect("n/4 apart, shared cores, self busier", ask(setting, true, 0, 0, d, 0), DDT_PROTO_RPUT, 0);
    expect("n/4 apart, own cores", ask(setting, false, 0, 0, 0, d), DDT_PROTO_COOP, ((n + d) / 2) & ~int64_t{63});
    expect("n/4 apart, own cores, self busier", ask(setting, false, 0, d, d + d, 0), DDT_PROTO_COOP,
           ((n - 2 * d + d) / 2) & ~int64_t{63});
    expect("at the band, shared cores", ask(setting, true, 0, 0, 0, band), DDT_PROTO_RGET, n);
  }
  // HYBRID: a blocking side decides by Table II whatever the loads; a small message is RGET's.
  Ask a{};
  a.setting = DDT_PROTO_HYBRID, a.n = n, a.avg_piece = n, a.chunk_min = -1, a.recv_blocking = true;
  a.hist_self = 8 * n, a.shared_cores = true;
  expect("HYBRID isend/recv, self busier", shm::choose(a), DDT_PROTO_RGET, n);
  a.recv_blocking = false, a.n = shm::kCoopMinBytes / 2, a.avg_piece = a.n;
  expect("HYBRID small isend/irecv, self busier", shm::choose(a), DDT_PROTO_RGET, a.n);
  // Both calls blocking: COOP from kCoopMinBlockingBytes, unless RGET would move it in cells.
  a.send_blocking = a.recv_blocking = true, a.n = shm::kCoopMinBlockingBytes, a.avg_piece = a.n;
  expect("HYBRID send/recv at kCoopMinBlockingBytes", shm::choose(a), DDT_PROTO_COOP, (a.n / 2) & ~int64_t{63});
  a.pipe = true;
  expect("HYBRID send/recv at kCoopMinBlockingBytes, by cells", shm::choose(a), DDT_PROTO_RGET, a.n);
  a.pipe = false, a.n = shm::kCoopMinBlockingBytes - 1, a.avg_piece = a.n;
  expect("HYBRID send/recv below kCoopMinBlockingBytes", shm::choose(a), DDT_PROTO_RGET, a.n);
  // A message RGET would pipe in cells keeps RGET up to kCoopMinPipeBytes, whether the calls
  // block or not (COOP's shares would pull every short piece across cores), and takes Table II
  // from there; one whose pieces suit a copy takes the load rule from kCoopMinBytes on.
  for (bool blocking : {true, false}) {
    a.send_blocking = a.recv_blocking = blocking, a.pipe = true, a.heap_write = true;  // pieces no CMA rule refuses
    a.hist_self = a.hist_peer = 0, a.load_self = a.load_peer = 0;
    a.n = std::max(shm::kCoopMinBytes, shm::kCoopMinPipeBytes - 64), a.avg_piece = 64;
    expect(blocking ? "HYBRID send/recv by cells below kCoopMinPipeBytes" : "HYBRID isend/irecv by cells below kCoopMinPipeBytes",
           shm::choose(a), DDT_PROTO_RGET, a.n);
    a.n = shm::kCoopMinPipeBytes;
    expect(blocking ? "HYBRID send/recv by cells at kCoopMinPipeBytes" : "HYBRID isend/irecv by cells at kCoopMinPipeBytes",
           shm::choose(a), DDT_PROTO_COOP, (a.n / 2) & ~int64_t{63});
    a.pipe = false, a.n = shm::kCoopMinBytes, a.avg_piece = a.n;
    if (!blocking)
      expect("HYBRID isend/irecv at kCoopMinBytes, idle sides", shm::choose(a), DDT_PROTO_COOP, (a.n / 2) & ~int64_t{63});
  }
  // may_share: where it says no, choose() answers RGET of the whole message whatever the inputs
  // the receiver then leaves unread (the loads, the recent work, the pieces, the segment).
  uint64_t x = 0x9e3779b97f4a7c15u;
  auto next = [&] { return x ^= x << 13, x ^= x >> 7, x ^= x << 17, x; };
  for (int setting = DDT_PROTO_RGET; setting <= DDT_PROTO_HYBRID; ++setting)
    for (int64_t m : {int64_t{1}, int64_t{4096}, shm::kCoopMinBlockingBytes - 1, shm::kCoopMinBlockingBytes,
                      shm::kCoopMinBytes, shm::kCoopMinPipeBytes, int64_t{1} << 24}) {
      const bool no = !shm::may_share(setting, m);
      check(no == (setting == DDT_PROTO_RGET || (setting == DDT_PROTO_HYBRID && m < shm::kCoopMinBlockingBytes)),
            "may_share(%d, %lld) = %d", setting, (long long)m, !no);
      for (int k = 0; no && k < 200; ++k) {
        Ask b{};
        b.setting = setting, b.n = m, b.chunk_min = -1;
        b.send_blocking = next() & 1, b.recv_blocking = next() & 1, b.pipe = next() & 1, b.heap_write = next() & 1;
        b.shared_cores = next() & 1, b.send_mode = static_cast<int>(next() % 4);
        b.avg_piece = static_cast<int64_t>(next() % static_cast<uint64_t>(m + 1));
        b.load_self = static_cast<int64_t>(next() % (4 * static_cast<uint64_t>(m) + 1));
        b.load_peer = static_cast<int64_t>(next() % (4 * static_cast<uint64_t>(m) + 1));
        b.hist_self = static_cast<int64_t>(next() % (4 * static_cast<uint64_t>(m) + 1));
        b.hist_peer = static_cast<int64_t>(next() % (4 * static_cast<uint64_t>(m) + 1));
        expect("a message may_share rules out", shm::choose(b), DDT_PROTO_RGET, m);
      }
    }
  // The decay: none at dt <= 0, e^-1 at one time constant, monotone, never negative.
  check(shm::decayed(n, 0) == n && shm::decayed(n, -5) == n && shm::decayed(-n, 10) == 0 && shm::decayed(0, 10) == 0,
        "decayed at dt <= 0, or of bytes <= 0");
  const int64_t one = shm::decayed(n, shm::kLoadDecayNs);
  check(one >= n * 367 / 1000 && one <= n * 368 / 1000, "decayed over one time constant: %lld of %lld", (long long)one,
        (long long)n);
  check(shm::decayed(n, shm::kLoadDecayNs / 2) > one && shm::decayed(n, 2 * shm::kLoadDecayNs) < one &&
            shm::decayed(n, 100 * shm::kLoadDecayNs) == 0,
        "decayed is not decreasing in time");
  check(shm::decayed(INT64_MAX, 1) > 0 && shm::decayed(INT64_MAX, INT64_MAX) == 0, "decayed at the extremes");
}

// ---- chunks and the second engine --------------------------------------------------------------

void part_chunks() {
  g_part = "chunks";
  const int64_t n = int64_t{4} << 20, block = 16 << 10, chunk = 64 << 10;
  check(ddt_comm_set_chunking(0, chunk) == DDT_SUCCESS, "set_chunking");
  for (int setting : {DDT_PROTO_COOP_CHUNKED, DDT_PROTO_COOP_HCA}) {
    check(ddt_comm_set_protocol(setting) == DDT_SUCCESS, "set_protocol(%d)", setting);
    const ddt_comm_times before = times();
    // Ranks 1..min(2, size-1) send to rank 0 at once; rank 0 receives them all before waiting.
    const int senders = std::min(2, g_size - 1);
    ddt_type st = vector(n / block, block, 2 * block);
    if (g_rank == 0) {
      std::vector<std::vector<unsigned char>> in(senders + 1, std::vector<unsigned char>(static_cast<size_t>(n)));
      std::vector<ddt_request> r(senders + 1, DDT_REQUEST_NULL);
      for (int s = 1; s <= senders; ++s) check(ddt_comm_irecv(in[s].data(), n, DDT_BYTE, s, 12, &r[s]) == DDT_SUCCESS, "irecv");
      for (int s = 1; s <= senders; ++s) check(ddt_comm_wait(&r[s], nullptr) == DDT_SUCCESS, "wait");
      for (int s = 1; s <= senders; ++s) {
        int64_t wrong = 0;
        for (int64_t i = 0; i < n; ++i) wrong += in[s][static_cast<size_t>(i)] != pattern(s + setting * 7, i);
        check(wrong == 0, "protocol %d: %lld wrong bytes from rank %d", setting, (long long)wrong, s);
      }
    } else if (g_rank <= senders) {
      std::vector<unsigned char> sbuf(static_cast<size_t>(2 * n));
      for (int64_t i = 0; i < n; ++i) sbuf[static_cast<size_t>(at(i, block, 2 * block))] = pattern(g_rank + setting * 7, i);
      check(ddt_comm_send(sbuf.data(), 1, st, 0, 12) == DDT_SUCCESS, "send");
    }
    ddt_type_free(&st);
    const ddt_comm_times after = times();
    if (setting == DDT_PROTO_COOP_CHUNKED && g_rank <= senders) {
      // COOP splits each message in halves: each side's half is copied in half / chunk chunks.
      const int64_t per = (n / 2 + chunk - 1) / chunk * (g_rank == 0 ? senders : 1);
      check(after.chunks - before.chunks >= per, "chunked: %lld chunks, expected at least %lld",
            (long long)(after.chunks - before.chunks), (long long)per);
    }
    if (setting == DDT_PROTO_COOP_HCA && g_rank == 0)
      check(after.engine_bytes - before.engine_bytes >= senders * n / 4,
            "hca: the second engine moved %lld B of %lld", (long long)(after.engine_bytes - before.engine_bytes),
            (long long)(senders * n));
    loads_zero(setting == DDT_PROTO_COOP_CHUNKED ? "chunked" : "hca");
  }
  check(ddt_comm_set_engine_ratio(0) == DDT_ERR_ARG && ddt_comm_set_engine_ratio(-1) == DDT_ERR_ARG, "engine ratio <= 0");
  int64_t l = 0;
  check(ddt_comm_get_load(g_size, &l) == DDT_ERR_ARG && ddt_comm_get_load(0, nullptr) == DDT_ERR_ARG, "get_load arguments");
}

}  // namespace

int main(int argc, char** argv) {
  std::string only = argc > 1 ? argv[1] : "";
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  if (ddt_comm_init() != DDT_SUCCESS || ddt_comm_rank(&g_rank) || ddt_comm_size(&g_size) || g_size < 2) {
    std::fprintf(stderr, "protocol_test: run it as `ddtkit run -n N protocol_test` with N >= 2\n");
    return 2;
  }
  jobtest::tally.program = "protocol_test", jobtest::tally.rank = g_rank;
  loads_zero("start");
  if (only.empty() || only == "table2") part_table2();
  if (only.empty() || only == "modes") part_modes();
  if (only.empty() || only == "load") part_load(7);
  if (only.empty() || only == "chunks") part_chunks();
  if ((only.empty() || only == "rule") && g_rank == 0) part_rule();
  return jobtest::close(g_size);
}
