// Seed 002's 3-D stencil with mixed intra-node load (its figure 17): who makes the copies of a
// halo exchange under each rendezvous protocol, per rank, and how far from an even share.
//
// The paper's processes each exchange 1 MB halos with six neighbours, some on the node and some
// not, so the copy work on the node differs from rank to rank; under a static protocol a rank
// copies whatever its messages bring it (RPUT: its sends, RGET: its receives), and COOP-load
// evens it out with the shared load counters. Here every peer is on the node, and the mix comes
// from the exchange itself:
//   - the processes form a non-periodic grid over the two slowest dimensions (P = 2: 2x1, 3: 3x1,
//     4: 2x2, 16: 4x4; the fastest dimension is never split, so every face is whole rows of nz
//     doubles: a dim-0 face is one contiguous block, a dim-1 face nx rows of nz): boundary ranks
//     have fewer neighbours than inner ones;
//   - rank r's subdomain carries F_r = 1 + r % 3 fields that it updates (a coupled model whose
//     fields live in some regions only), and it needs the halos of those fields from every
//     neighbour: one message per field and face, each face one layer (L = ny * nz * 8 bytes; nx =
//     ny, so every message has the same size). Every rank holds 3 fields and sends each neighbour
//     the faces of the neighbour's fields, so it sends and receives different numbers of messages
//     (P = 2: rank 0 sends 2 and receives 1).
// A static protocol then leaves the copies unbalanced: P = 2, RPUT copies {2, 1} messages, RGET
// {1, 2}; P = 3, RPUT {2, 4, 2}, RGET {1, 4, 3}; P = 4, RPUT {5, 2, 2, 5}, RGET {2, 4, 6, 2}.
//
// An iteration: irecv of every halo this rank needs, isend of every face its neighbours need,
// waitall; communication only. For each protocol (static RPUT, static RGET, COOP_LOAD, HYBRID;
// ddt_comm_set_protocol on every rank, the receiver's setting decides) one iteration's received
// bytes are checked first (every cell of every field: interior values unchanged, each halo
// received holds its neighbour's cell, every other halo cell still -1), then the exchange is timed
// (transfer.hpp's time_op); around the whole timed call each rank reads ddt_comm_get_times, and
// its copies (rendezvous copies it made itself, as receiver or sender), copy bytes, copy time and
// the receives each protocol moved are divided by the iterations it ran (the same on every rank).
// After the timed call every rank's load counter must be back at zero (ddt_comm_get_load).
// Rank 0 writes one row per (protocol, rank), suite rt_load_stencil: case = the process grid,
// params = "P=<P> L=<message bytes>", op "iteration", method = the protocol, bytes = L, ns = that
// rank's median time per iteration; beside them rank, np, cores, oversubscribed (P > cores),
// fields, neighbours, sends and recvs (messages per iteration), iterations, copies, copy_bytes,
// copy_ns, by_rget, by_rput, by_coop (per iteration). bench/report_protocols.py turns them into
// the imbalance table (max over ranks / mean) and the target: COOP-load within 5% of the ideal
// balance (every rank the mean) in copy counts, each copy counted by the share of its message it
// moved (copy_bytes / L: COOP-load may split a message "in proportion", and a whole count per side
// would count a 1% share as a copy).
#pragma once
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "ddtkit.h"
#include "runtime_transport.hpp"
#include "transfer.hpp"

namespace rtbench {

constexpr int kLoadFieldsMax = 3;
constexpr int kTagLoadStats = 30002;  // the per-rank figures sent to rank 0
constexpr int kTagLoadBase = 400;     // + 8 * field + face direction (2 * dim + (dir > 0))

inline int load_fields(int rank) { return 1 + rank % kLoadFieldsMax; }

// The local box: nx x ny interior cells with a one-cell halo in dims 0 and 1, nz in dim 2 (never
// split, no halo), C order.
struct LoadGrid {
  int64_t nx = 0, ny = 0, nz = 0;
  int np = 1, me = 0;
  int dims[2] = {1, 1}, coord[2] = {0, 0};
  int64_t sizes[3] = {0, 0, 0};
  int64_t cells() const { return sizes[0] * sizes[1] * sizes[2]; }
  int64_t at(int64_t i, int64_t j, int64_t k) const { return (i * sizes[1] + j) * sizes[2] + k; }
  int rank_of(int c0, int c1) const { return c0 * dims[1] + c1; }
};

// P as dims[0] x dims[1], dims[1] the largest divisor of P not above sqrt(P).
inline LoadGrid make_load_grid(int64_t nx, int64_t nz, int np, int me) {
  LoadGrid g;
  g.nx = g.ny = nx, g.nz = nz, g.np = np, g.me = me;
  int a = 1;
  for (int d = 1; d * d <= np; ++d)
    if (np % d == 0) a = d;
  g.dims[0] = np / a, g.dims[1] = a;
  g.coord[0] = me / a, g.coord[1] = me % a;
  g.sizes[0] = nx + 2, g.sizes[1] = nx + 2, g.sizes[2] = nz;
  return g;
}

struct LoadFace {
  int dim, dir, peer, send_tag, recv_tag;  // tags for field 0; field f adds 8 f
  int64_t subsizes[3], send_start[3], recv_start[3];
  int64_t bytes;
};

// The faces toward existing neighbours (non-periodic).
inline std::vector<LoadFace> load_faces(const LoadGrid& g) {
  std::vector<LoadFace> fs;
  for (int d = 0; d < 2; ++d)
    for (int dir : {-1, +1}) {
      int c[2] = {g.coord[0], g.coord[1]};
      c[d] += dir;
      if (c[d] < 0 || c[d] >= g.dims[d]) continue;
      LoadFace f;
      f.dim = d, f.dir = dir, f.peer = g.rank_of(c[0], c[1]);
      f.send_tag = kTagLoadBase + 2 * d + (dir > 0);
      f.recv_tag = kTagLoadBase + 2 * d + (dir < 0);
      const int64_t n[2] = {g.nx, g.ny};
      for (int e = 0; e < 2; ++e) {
        f.subsizes[e] = e == d ? 1 : n[e];
        f.send_start[e] = e != d ? 1 : dir < 0 ? 1 : n[e];
        f.recv_start[e] = e != d ? 1 : dir < 0 ? 0 : n[e] + 1;
      }
      f.subsizes[2] = g.nz, f.send_start[2] = 0, f.recv_start[2] = 0;
      f.bytes = f.subsizes[0] * f.subsizes[1] * f.subsizes[2] * 8;
      fs.push_back(f);
    }
  return fs;
}

// Byte check: interior cell (i, j, k) of field f holds a function of (f, its global coordinates),
// exact in a double; every halo cell starts at -1. After one exchange a halo cell of a face with a
// neighbour holds the neighbour's cell there for the fields this rank receives (f < F_me); edges,
// corners, the grid's outer boundary and the other fields' halos stay -1.
inline double load_cell_value(int f, int64_t gi, int64_t gj, int64_t gk) {
  return static_cast<double>(((f * int64_t{4096} + gi) * 4096 + gj) * 8192 + gk);
}

inline double load_expected(const LoadGrid& g, int f, int64_t i, int64_t j, int64_t k, bool exchanged) {
  const int64_t l[2] = {i, j}, n[2] = {g.nx, g.ny};
  int halos = 0;
  int64_t glob[2];
  for (int e = 0; e < 2; ++e) {
    const bool halo = l[e] == 0 || l[e] == n[e] + 1;
    if (halo) {
      const int c = g.coord[e] + (l[e] == 0 ? -1 : +1);
      if (!exchanged || f >= load_fields(g.me) || c < 0 || c >= g.dims[e]) return -1;
      ++halos;
    }
    glob[e] = g.coord[e] * n[e] + l[e] - 1;
  }
  if (halos > 1) return -1;
  return load_cell_value(f, glob[0], glob[1], k);
}

inline void load_fill(const LoadGrid& g, int f, double* a) {
  for (int64_t i = 0; i < g.sizes[0]; ++i)
    for (int64_t j = 0; j < g.sizes[1]; ++j)
      for (int64_t k = 0; k < g.sizes[2]; ++k) a[g.at(i, j, k)] = load_expected(g, f, i, j, k, false);
}

inline bool load_check(const LoadGrid& g, int f, const double* a, int64_t* bad) {
  for (int64_t i = 0; i < g.sizes[0]; ++i)
    for (int64_t j = 0; j < g.sizes[1]; ++j)
      for (int64_t k = 0; k < g.sizes[2]; ++k)
        if (a[g.at(i, j, k)] != load_expected(g, f, i, j, k, true)) {
          *bad = g.at(i, j, k);
          return false;
        }
  return true;
}

// (nx = ny, nz): messages of nx * nz * 8 bytes. --smoke: 32 KiB (above the eager cell, so every
// message goes by rendezvous); default 512 KiB (above HYBRID's 128 KiB, where it balances
// isend/irecv by the counters); --full 1 MiB, the paper's size.
inline std::vector<std::pair<int64_t, int64_t>> load_stencil_sizes(const Options& o) {
  if (o.smoke) return {{4, 1024}};
  if (o.full) return {{32, 2048}, {32, 4096}};
  return {{32, 2048}};
}

struct LoadProtocol {
  const char* name;
  int id;
};

// The per-rank figures of one protocol, in the order rank 0 receives them.
enum LoadStat {
  kNs, kIters, kCopies, kCopyBytes, kCopyNs, kByRget, kByRput, kByCoop, kSends, kRecvs, kNeighbours, kNStats
};

inline void load_stencil(Rt& t, Jsonl* out, const Options& o) {
  const LoadProtocol protos[] = {{"rput", DDT_PROTO_RPUT},
                                 {"rget", DDT_PROTO_RGET},
                                 {"coop-load", DDT_PROTO_COOP_LOAD},
                                 {"hybrid", DDT_PROTO_HYBRID}};
  const Budget b = o.budget();
  const int cores = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  const bool over = t.np > cores;
  for (const auto& size : load_stencil_sizes(o)) {
    const int64_t nx = size.first, nz = size.second;
    const LoadGrid g = make_load_grid(nx, nz, t.np, t.me);
    const std::vector<LoadFace> fs = load_faces(g);
    const int mine = load_fields(t.me);
    std::vector<double*> field(kLoadFieldsMax);
    for (auto& a : field) a = static_cast<double*>(t.alloc(g.cells() * 8));
    std::vector<ddt_type> stype, rtype;
    for (const LoadFace& f : fs) {
      stype.push_back(t.subarray(g.sizes, f.subsizes, f.send_start));
      rtype.push_back(t.subarray(g.sizes, f.subsizes, f.recv_start));
    }
    int sends = 0, recvs = 0;
    for (const LoadFace& f : fs) sends += load_fields(f.peer), recvs += mine;
    std::vector<ddt_request> req(sends + recvs);
    const int64_t L = fs.empty() ? nx * nz * 8 : fs[0].bytes;
    char decomp[32], params[64];
    std::snprintf(decomp, sizeof decomp, "%dx%dx1", g.dims[0], g.dims[1]);
    std::snprintf(params, sizeof params, "P=%d L=%lld", t.np, (long long)L);
    int64_t iters = 0;
    auto iteration = [&] {
      int q = 0;
      for (size_t i = 0; i < fs.size(); ++i)
        for (int f = 0; f < mine; ++f) t.irecv(field[f], 1, rtype[i], fs[i].peer, fs[i].recv_tag + 8 * f, &req[q++]);
      for (size_t i = 0; i < fs.size(); ++i)
        for (int f = 0; f < load_fields(fs[i].peer); ++f)
          t.isend(field[f], 1, stype[i], fs[i].peer, fs[i].send_tag + 8 * f, &req[q++]);
      t.waitall(q, req.data());
      ++iters;
    };
    for (const LoadProtocol& p : protos) {
      t.ck(ddt_comm_set_protocol(p.id), "ddt_comm_set_protocol");
      t.forget_history();  // each protocol from no recent copies (static RGET runs just before COOP-load)
      for (int f = 0; f < kLoadFieldsMax; ++f) load_fill(g, f, field[f]);
      t.barrier();
      iteration();
      for (int f = 0; f < kLoadFieldsMax; ++f) {
        int64_t bad = -1;
        if (!load_check(g, f, field[f], &bad)) {
          char why[160];
          std::snprintf(why, sizeof why, "load stencil %s %s %s: field %d, wrong value at cell %lld", p.name, decomp,
                        params, f, (long long)bad);
          t.fail(why);
        }
      }
      // Steady state before anything is counted: COOP-load weighs each rank's recent copy work,
      // decayed with a time constant of 20 ms (src/shm/protocol.cpp, kLoadDecayNs), and
      // forget_history() above left every rank at none, so the first iterations are decided by
      // the pending counters alone and the history builds up over some time constants. Counted
      // from the start, a run of few iterations measured that transient: on the 16-core machine
      // (0.4-0.8 ms per iteration at P = 16, 7 iterations counted) COOP-load came out 11-42% from
      // the ideal balance at P = 4-16 in whole copies and 1-10% in bytes. So: untimed iterations
      // for kSettleNs (five time constants: one sample of time_op, its time unused) first, then
      // the counted ones for at least 5 samples of kCountSampleNs each (some time constants: every
      // rank's figures average over many decisions), every protocol alike.
      constexpr double kSettleNs = 100e6, kCountSampleNs = 10e6;
      time_op(t, iteration, Budget{1, kSettleNs});
      Budget counted = b;
      counted.min_sample_ns = std::max(b.min_sample_ns, kCountSampleNs);
      t.barrier();
      iters = 0;
      const ddt_comm_times a = t.times();
      const double ns = time_op(t, iteration, counted);
      const ddt_comm_times z = t.times();
      t.barrier();  // every transfer of every rank is over: each counter must be back at zero
      int64_t pending = -1;
      t.ck(ddt_comm_get_load(t.me, &pending), "ddt_comm_get_load");
      if (pending != 0) {
        char why[128];
        std::snprintf(why, sizeof why, "load stencil %s: load counter at %lld after the exchange, not 0", p.name,
                      (long long)pending);
        t.fail(why);
      }
      const double n = static_cast<double>(iters);
      std::vector<double> st(kNStats);
      st[kNs] = ns, st[kIters] = n;
      st[kCopies] = (z.copies - a.copies) / n, st[kCopyBytes] = (z.copy_bytes - a.copy_bytes) / n;
      st[kCopyNs] = (z.copy_ns - a.copy_ns) / n;
      st[kByRget] = (z.by_rget - a.by_rget) / n, st[kByRput] = (z.by_rput - a.by_rput) / n;
      st[kByCoop] = (z.by_coop - a.by_coop) / n;
      st[kSends] = sends, st[kRecvs] = recvs, st[kNeighbours] = static_cast<double>(fs.size());
      if (t.me != 0) {
        t.send(st.data(), kNStats, DDT_DOUBLE, 0, kTagLoadStats);
        continue;
      }
      std::vector<std::vector<double>> all(t.np, std::vector<double>(kNStats));
      all[0] = st;
      for (int r = 1; r < t.np; ++r) t.recv(all[r].data(), kNStats, DDT_DOUBLE, r, kTagLoadStats);
      // max over ranks / mean, and the largest |x_r - mean| / mean (the distance from the ideal)
      auto spread = [&](int s, double* dev) {
        double sum = 0, mx = 0;
        for (auto& v : all) sum += v[s], mx = std::max(mx, v[s]);
        const double mean = sum / t.np;
        *dev = 0;
        for (auto& v : all) *dev = std::max(*dev, mean > 0 ? std::fabs(v[s] - mean) / mean : 0);
        return mean > 0 ? mx / mean : 0;
      };
      double dev_c, dev_b, dev_t;
      const double imb_c = spread(kCopies, &dev_c), imb_b = spread(kCopyBytes, &dev_b), imb_t = spread(kCopyNs, &dev_t);
      std::printf("[load stencil %s %s%s] %-9s imbalance whole copies %.3f (%.1f%% from ideal), copy shares (bytes) %.3f (%.1f%%), "
                  "copy time %.3f\n", decomp, params, over ? " oversubscribed" : "", p.name, imb_c, 100 * dev_c, imb_b,
                  100 * dev_b, imb_t);
      for (int r = 0; r < t.np; ++r) {
        const std::vector<double>& v = all[r];
        char extra[512];
        std::snprintf(extra, sizeof extra,
                      "\"rank\": %d, \"np\": %d, \"cores\": %d, \"oversubscribed\": %s, \"fields\": %d, "
                      "\"neighbours\": %d, \"sends\": %d, \"recvs\": %d, \"iterations\": %lld, \"copies\": %.4f, "
                      "\"copy_bytes\": %.1f, \"copy_ns\": %.1f, \"by_rget\": %.4f, \"by_rput\": %.4f, \"by_coop\": %.4f",
                      r, t.np, cores, over ? "true" : "false", load_fields(r), static_cast<int>(v[kNeighbours]),
                      static_cast<int>(v[kSends]), static_cast<int>(v[kRecvs]), (long long)v[kIters], v[kCopies],
                      v[kCopyBytes], v[kCopyNs], v[kByRget], v[kByRput], v[kByCoop]);
        if (out) out->add("rt_load_stencil", decomp, params, "iteration", p.name, L, v[kNs], extra);
        std::printf("    rank %d: %d fields, %d neighbours, sends %d recvs %d: copies %.2f, %.2f MiB, copy %.1f us, "
                    "%.1f us per iteration (received by rget %.2f rput %.2f coop %.2f)\n", r, load_fields(r),
                    static_cast<int>(v[kNeighbours]), static_cast<int>(v[kSends]), static_cast<int>(v[kRecvs]),
                    v[kCopies], v[kCopyBytes] / (1 << 20), v[kCopyNs] / 1e3, v[kNs] / 1e3, v[kByRget], v[kByRput],
                    v[kByCoop]);
      }
      std::fflush(stdout);
    }
    t.ck(ddt_comm_set_protocol(DDT_PROTO_HYBRID), "ddt_comm_set_protocol");
    for (auto& ty : stype) t.free_type(ty);
    for (auto& ty : rtype) t.free_type(ty);
    for (double* a : field) t.release(a);
  }
}

}  // namespace rtbench
