// The rendezvous protocols' sweep (issue 15, seed 002's figures 7 and 13), shared by the runtime's
// benchmark (each protocol of ddtkit's runtime) and its MPI twin (each MPI as it is): point-to-
// point latency and bandwidth of messages of 32 KiB to 64 MiB, contiguous and a vector of 16 KiB
// blocks at twice the block's stride (the same type on both sides), buffers from the side's
// allocator (ddtkit: the mapped heap). Latency is half a round trip of blocking send and recv;
// bandwidth a window of 4 isends answered by an ack once all 4 irecvs have completed. One transfer
// per configuration is byte-checked first (blocks hold the sender's pattern, gaps stay zero), and
// a method may check more (ddtkit: that the protocol asked for moved it).
#pragma once
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "transfer.hpp"
#include "vector_sweep.hpp"

namespace rtbench {

struct ProtocolMethod {
  std::string name;
  std::function<void()> setup;          // before each configuration, on every rank
  std::function<void()> before, after;  // around the checked transfer, on every rank (may be null)
  // Timed in a series of its own after the others (whose samples take turns): its setup idles
  // (HYBRID forgets its load history), and a sample right after an idle pause runs on cold cores.
  bool alone = false;
};

template <class T>
void protocol_sweep(T& t, Jsonl* out, const Options& o, const std::vector<ProtocolMethod>& methods) {
  const std::vector<int64_t> sizes =
      o.smoke ? std::vector<int64_t>{int64_t{1} << 20}
              : std::vector<int64_t>{32 << 10, 128 << 10, 512 << 10, 1 << 20, 4 << 20, 16 << 20, 64 << 20};
  constexpr int64_t kBlock = 16 << 10;
  constexpr int W = 4;
  // Untimed calls before each interleaved sample: the first transfers after a change of protocol
  // run slower (16 MiB as a 1-block vector, 2 ranks here, medians of 9 round trips each right
  // after the other protocol's: COOP-p2p 1.9-2.1 ms after RGET's or RPUT's, 1.35-1.5 after its
  // own; with two settling calls 1.39), a state the switch leaves that a program keeping one
  // protocol does not meet. Interleaved without them, COOP-p2p / RGET read 1.47-1.55 at 16 MiB.
  constexpr int kSettle = 2;
  const Budget b = o.budget();
  const int peer = 1 - t.me;
  char ack[4] = {};
  uint64_t seed = 100;
  for (int64_t S : sizes) {
    const int64_t span = 2 * S;  // the vector's buffer (the contiguous message uses its first half)
    char* sbuf = static_cast<char*>(t.alloc(span));
    char* rbuf = static_cast<char*>(t.alloc(span));
    for (int shape = 0; shape < 2; ++shape) {
      const bool vec = shape == 1;
      const int64_t count = vec ? S / kBlock : 1, block = vec ? kBlock : S, stride = vec ? 2 * kBlock : S;
      typename T::Type type = t.vector(count, block, stride);
      typename T::Req r[W];
      std::vector<Method> timed;  // each protocol's latency, then each protocol's bandwidth
      for (size_t m = 0; m < methods.size(); ++m)
        timed.push_back(Method{methods[m].name, [&] {
          if (t.me == 0) t.send(sbuf, 1, type, peer, kTagData), t.recv(rbuf, 1, type, peer, kTagData);
          else t.recv(rbuf, 1, type, peer, kTagData), t.send(sbuf, 1, type, peer, kTagData);
        }});
      for (size_t m = 0; m < methods.size(); ++m)
        timed.push_back(Method{methods[m].name, [&] {
          if (t.me == 0) {
            for (int w = 0; w < W; ++w) t.isend(sbuf, 1, type, peer, kTagData, &r[w]);
            t.waitall(W, r);
            t.recv(ack, sizeof ack, t.bytes(), peer, kTagAck);
          } else {
            for (int w = 0; w < W; ++w) t.irecv(rbuf, 1, type, peer, kTagData, &r[w]);
            t.waitall(W, r);
            t.send(ack, sizeof ack, t.bytes(), peer, kTagAck);
          }
        }});
      for (size_t m = 0; m < methods.size(); ++m) {
        const ProtocolMethod& pm = methods[m];
        if (pm.setup) pm.setup();
        ++seed;
        if (t.me == 0)
          for (int64_t i = 0; i < span; ++i) sbuf[i] = vector_byte(seed, i);
        else
          std::memset(rbuf, 0, span);
        t.barrier();
        if (pm.before) pm.before();
        if (t.me == 0) t.send(sbuf, 1, type, 1, kTagData);
        else t.recv(rbuf, 1, type, 0, kTagData);
        if (pm.after) pm.after();
        if (t.me == 1)
          for (int64_t i = 0; i < span; ++i) {
            const bool in_block = i / stride < count && i % stride < block;
            if (rbuf[i] != (in_block ? vector_byte(seed, i) : 0)) {
              char why[160];
              std::snprintf(why, sizeof why, "protocol sweep %s, %lld B %s: wrong byte at offset %lld", pm.name.c_str(),
                            (long long)S, vec ? "vector" : "contiguous", (long long)i);
              t.fail(why);
            }
          }
      }
      // Timed sample by sample in turn (interleaved, kSettle untimed calls before each sample), so
      // that a ratio of two protocols is taken over the same phases of this shared machine (one
      // series after another, the 16 MiB COOP-p2p / RGET ratio ranged 1.55-1.69 over make bench
      // runs); HYBRID (`alone`) after them.
      const size_t M = methods.size();
      std::vector<Method> turns;
      std::vector<size_t> which;  // turns[k] is timed[which[k]]
      for (size_t k = 0; k < 2 * M; ++k)
        if (!methods[k % M].alone) turns.push_back(timed[k]), which.push_back(k);
      std::vector<double> ns(2 * M);
      const std::vector<double> in_turn = interleaved(t, turns, b, [&](size_t k) {
        if (methods[which[k] % M].setup) methods[which[k] % M].setup();
        for (int i = 0; i < kSettle; ++i) turns[k].run();
      });
      for (size_t k = 0; k < which.size(); ++k) ns[which[k]] = in_turn[k];
      for (size_t k = 0; k < 2 * M; ++k)
        if (methods[k % M].alone) {
          if (methods[k % M].setup) methods[k % M].setup();
          ns[k] = time_op(t, timed[k].run, b);
        }
      std::vector<double> lat(M), bw(M);
      for (size_t m = 0; m < M; ++m) lat[m] = ns[m] / 2, bw[m] = ns[M + m] / W;
      t.free_type(type);
      if (t.me != 0) continue;
      std::printf("[protocol %8s %-10s]", size_label(S).c_str(), vec ? "vector" : "contiguous");
      for (size_t m = 0; m < methods.size(); ++m) {
        char extra[64];
        if (out) {
          out->add("rt_protocol", vec ? "vector" : "contiguous", std::to_string(S), "latency", methods[m].name, S, lat[m]);
          std::snprintf(extra, sizeof extra, "\"gbs\": %.3f, \"window\": %d", S / bw[m], W);
          out->add("rt_protocol", vec ? "vector" : "contiguous", std::to_string(S), "bw", methods[m].name, S, bw[m], extra);
        }
        std::printf(" %s %.1f us %.2f GB/s |", methods[m].name.c_str(), lat[m] / 1e3, S / bw[m]);
      }
      std::printf("\n");
      std::fflush(stdout);
    }
    t.release(sbuf);
    t.release(rbuf);
  }
}

}  // namespace rtbench
