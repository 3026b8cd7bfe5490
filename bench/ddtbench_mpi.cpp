// The DDTBench kernels as an MPI application runs them (spec §2): each kernel's datatype built
// through the MPI's own constructors (the same calls the spec lists, replayed from the kernel's
// constructor tree), moved between ranks 0 and 1 with MPI_Send/MPI_Recv (FFT2D: MPI_Alltoall
// on all ranks). It calls MPI only; run it natively or with LD_PRELOAD=libddtkit-mpi.so.
//
//   --check FILE  byte check: every kernel moved once by each DDTBench method (mpi_ddt, manual,
//                 mpi_pack_ddt) into zeroed arrays; they must leave the same bytes, and
//                 FILE gets one hash per kernel so a native and an interposed run can be
//                 compared (they must be identical).
//   --time DIR    ping-pong (spec §2.2: a round trip as rank 0 sees it) of every kernel, the
//                 MPI's own path (PMPI_*, which the interposer does not intercept) and the
//                 intercepted path (MPI_*) interleaved in this one process, plus the
//                 application's hand-written pack loop; then an OSU-style latency sweep with a
//                 vector type (spec §6, -D vect:8:4 on MPI_CHAR), an MPI_BYTE ping-pong of 1 B
//                 and 1 MiB, small vectors natively typed, natively staged and interposed (the
//                 measurement behind Open MPI's small-message pass rule), and (first of all) each
//                 kernel's first round trip after its commit against its steady state. JSON
//                 lines to DIR/interposer_<mpi>.jsonl.
//   --smoke       tiny repetition counts (make test); --full: more repetitions, sizes to 4 MiB.
//   --kernels S   with --time: only the ping-pong of the kernels whose "name params" contains S;
//   --osu-only    with --time: only the OSU sweep; --predefined-only: only the MPI_BYTE ping-pongs
//                 and the MPI_DOUBLE collectives; --eager-grid: the small vectors behind Open MPI's
//                 small-message rule (pass.cpp) (each for tuning one path; they combine).
#include <mpi.h>
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "ddtbench.hpp"
#include "gen.hpp"
#include "harness.hpp"
#include "line_probe.hpp"
#include "mpi_build.hpp"

namespace {

int me = 0, np = 1;

MPI_Datatype mpi_type(ddt_type t) {
  TPtr n = tnode_from_ddt(t);
  int rc;
  MPI_Datatype m = mpi_build(*n, &rc);
  MPI_Type_commit(&m);
  return m;
}
MPI_Datatype mpi_type(const Kernel& k) { return mpi_type(k.type); }

// line_probe.hpp's transport: the two ranks of MPI_COMM_WORLD.
struct World {
  int me = 0, np = 1;
  void barrier() { MPI_Barrier(MPI_COMM_WORLD); }
  int64_t bcast0(int64_t v) {
    long long x = v;
    MPI_Bcast(&x, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
    return x;
  }
  [[noreturn]] void fail(const char* what) {
    std::fprintf(stderr, "ddtbench_mpi: rank %d: %s\n", me, what);
    MPI_Abort(MPI_COMM_WORLD, 1);
    std::exit(1);
  }
};

// The cache-line distance between the ranks (line_probe.hpp), recorded as suite line_probe with
// the point of the run it was taken at: the report reads this launch's figures against it.
void probe_line(Results& res, const char* when) {
  World w{me, np};
  const double ns = rtbench::line_transfer_ns(w);
  if (me != 0) return;
  res.add("line_probe", "ranks 0 and 1", when, "one way", 64, {{"line", ns}});
  std::printf("[line probe] %s: a cache line between ranks 0 and 1 took %.0f ns one way\n", when, ns);
}

void* buf_of(const Kernel& k) { return k.buf ? const_cast<void*>(k.buf) : MPI_BOTTOM; }

void zero(Kernel& k) {
  for (size_t a = 0; a < k.arrays.size(); ++a) std::memset(k.arrays[a].get(), 0, k.array_bytes[a]);
}

uint64_t hash(const Kernel& k) {
  uint64_t h = 0;
  for (size_t a = 0; a < k.arrays.size(); ++a) h = h * 31 + fnv1a64(k.arrays[a].get(), k.array_bytes[a]);
  return h;
}

bool is_fft(const Kernel& k) { return k.name == "FFT2D"; }

// ---- byte check -----------------------------------------------------------------------------

// One move of kernel k by method m (0 mpi_ddt, 1 manual, 2 mpi_pack_ddt) from rank 0 to rank 1,
// whose arrays are zeroed first; returns rank 1's hash of its arrays (0 elsewhere).
uint64_t move_once(Kernel& k, MPI_Datatype t, MPI_Datatype rt, int m) {
  std::vector<char> tmp(k.bytes + 1), tmp2(k.bytes + 1);
  const int count = static_cast<int>(k.count), bytes = static_cast<int>(k.bytes);
  if (is_fft(k)) {  // every rank sends one element to each of 2 ranks and receives into zeroed arrays
    std::vector<char> saved(k.array_bytes[0]);
    std::memcpy(saved.data(), k.arrays[0].get(), saved.size());
    const int per = bytes / np;
    if (m == 0) {
      std::vector<char> out(saved.size(), 0);
      MPI_Alltoall(k.arrays[0].get(), 1, t, out.data(), 1, rt, MPI_COMM_WORLD);
      std::memcpy(k.arrays[0].get(), out.data(), out.size());
    } else if (m == 1) {
      k.manual_pack(tmp.data());
      MPI_Alltoall(tmp.data(), per, MPI_BYTE, tmp2.data(), per, MPI_BYTE, MPI_COMM_WORLD);
      zero(k);
      k.manual_unpack(tmp2.data());
    } else {
      int pos = 0;
      MPI_Pack(k.arrays[0].get(), count, t, tmp.data(), bytes, &pos, MPI_COMM_WORLD);
      MPI_Alltoall(tmp.data(), per, MPI_PACKED, tmp2.data(), per, MPI_PACKED, MPI_COMM_WORLD);
      zero(k);
      pos = 0;
      MPI_Unpack(tmp2.data(), bytes, &pos, k.arrays[0].get(), count, rt, MPI_COMM_WORLD);
    }
    uint64_t h = hash(k);
    std::memcpy(k.arrays[0].get(), saved.data(), saved.size());
    return me == 1 ? h : 0;
  }
  if (me == 0) {
    if (m == 0) MPI_Send(buf_of(k), count, t, 1, 0, MPI_COMM_WORLD);
    if (m == 1) k.manual_pack(tmp.data()), MPI_Send(tmp.data(), bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
    if (m == 2) {
      int pos = 0;
      MPI_Pack(buf_of(k), count, t, tmp.data(), bytes, &pos, MPI_COMM_WORLD);
      MPI_Send(tmp.data(), pos, MPI_PACKED, 1, 0, MPI_COMM_WORLD);
    }
    return 0;
  }
  if (me != 1) return 0;
  std::vector<char> saved;
  for (size_t a = 0; a < k.arrays.size(); ++a)
    saved.insert(saved.end(), k.arrays[a].get(), k.arrays[a].get() + k.array_bytes[a]);
  zero(k);
  if (m == 0) MPI_Recv(buf_of(k), count, t, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  if (m == 1) MPI_Recv(tmp.data(), bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE), k.manual_unpack(tmp.data());
  if (m == 2) {
    MPI_Recv(tmp.data(), bytes, MPI_PACKED, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    int pos = 0;
    MPI_Unpack(tmp.data(), bytes, &pos, buf_of(k), count, t, MPI_COMM_WORLD);
  }
  uint64_t h = hash(k);
  size_t off = 0;
  for (size_t a = 0; a < k.arrays.size(); ++a) {
    std::memcpy(k.arrays[a].get(), saved.data() + off, k.array_bytes[a]);
    off += k.array_bytes[a];
  }
  return h;
}

int check(const char* path, const std::vector<std::unique_ptr<Kernel>>& ks) {
  FILE* f = me == 1 ? std::fopen(path, "w") : nullptr;
  int bad = 0;
  for (auto& kp : ks) {
    Kernel& k = *kp;
    MPI_Datatype t = mpi_type(k), rt = is_fft(k) ? mpi_type(k.recv_type) : t;  // FFT2D receives transposed (spec 3.5)
    uint64_t h[3];
    for (int m = 0; m < 3; ++m) h[m] = move_once(k, t, rt, m);
    MPI_Type_free(&t);
    if (is_fft(k)) MPI_Type_free(&rt);
    if (me != 1) continue;
    // LAMMPS's hand loop moves the atoms in the application's own order (array of structs),
    // not the datatype's, so its arrays are compared only between the two datatype methods.
    bool same = (h[0] == h[1] || !k.manual_matches_type) && h[0] == h[2];
    if (!same) {
      ++bad;
      std::printf("FAILURE %s %s: mpi_ddt %016llx, manual %016llx, mpi_pack_ddt %016llx differ\n", k.name.c_str(),
                  k.params.c_str(), (unsigned long long)h[0], (unsigned long long)h[1], (unsigned long long)h[2]);
    }
    std::fprintf(f, "%s %s %016llx%s\n", k.name.c_str(), k.params.c_str(), (unsigned long long)h[0],
                 same ? "" : " METHODS DIFFER");
  }
  if (f) std::fclose(f);
  MPI_Bcast(&bad, 1, MPI_INT, 1, MPI_COMM_WORLD);
  if (me == 1) std::printf("%zu kernels moved by mpi_ddt, manual and mpi_pack_ddt: %d differ\n", ks.size(), bad);
  return bad;
}

// ---- timing ---------------------------------------------------------------------------------

// Interleaved round trips of each method, in an order rotated every repetition (the method that
// runs after another inherits its cache state: measured up to 25% on FFT2D); rank 0 chooses how many per sample (its own clock)
// and tells the others, so every rank runs the same sequence. Medians per round trip: of 15
// samples a method in make bench (31 with --full). With 7, kernels whose two ways are the same
// MPI path spread 0.85-1.2x native / interposed from run to run on this 2-core machine; the whole
// ping-pong part of a run takes seconds either way.
// Each method is warmed up first (osu_latency's skipped iterations: first-use costs, which
// first_transfer reports on their own, and a peer still arriving), and its sample length set
// from the fastest of three round trips: calibrated on two round trips that included a first
// use, a 4 KiB vect:8:4 got one round trip per sample and a median of the slow first ones.
std::vector<Timing> pingpong(const std::vector<Method>& ms, int reps) {
  std::vector<int> iters(ms.size(), 1);
  for (size_t m = 0; m < ms.size(); ++m) {
    for (int w = 0; w < 3; ++w) ms[m].run();
    double best = 1e18;
    for (int c = 0; c < 3; ++c) {
      const double t0 = now_ns();
      ms[m].run();
      best = std::min(best, now_ns() - t0);
    }
    iters[m] = std::max(1, static_cast<int>(4e5 / std::max(1.0, best)));
  }
  MPI_Bcast(iters.data(), static_cast<int>(iters.size()), MPI_INT, 0, MPI_COMM_WORLD);
  std::vector<std::vector<double>> samples(ms.size());
  for (int r = 0; r < reps; ++r)
    for (size_t j = 0; j < ms.size(); ++j) {
      const size_t m = (j + r) % ms.size();  // rotated, so no method always follows the same one
      double t0 = now_ns();
      for (int i = 0; i < iters[m]; ++i) ms[m].run();
      samples[m].push_back((now_ns() - t0) / iters[m]);
    }
  std::vector<Timing> out;
  for (size_t m = 0; m < ms.size(); ++m) out.push_back({ms[m].name, median_of(samples[m])});
  return out;
}

using SendFn = int (*)(const void*, int, MPI_Datatype, int, int, MPI_Comm);
using RecvFn = int (*)(void*, int, MPI_Datatype, int, int, MPI_Comm, MPI_Status*);

// One round trip (rank 0 sends then receives; rank 1 mirrors) through send/recv, sent from
// sbuf and received into rbuf (OSU's two buffers), or from and into one buffer (DDTBench's).
void round_trip(SendFn send, RecvFn recv, const void* sbuf, void* rbuf, int count, MPI_Datatype t) {
  if (me == 0) {
    send(sbuf, count, t, 1, 0, MPI_COMM_WORLD);
    recv(rbuf, count, t, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  } else if (me == 1) {
    recv(rbuf, count, t, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    send(sbuf, count, t, 0, 0, MPI_COMM_WORLD);
  }
}
void round_trip(SendFn send, RecvFn recv, void* buf, int count, MPI_Datatype t) { round_trip(send, recv, buf, buf, count, t); }

void time_kernels(Results& res, const std::vector<std::unique_ptr<Kernel>>& ks, int reps) {
  for (auto& kp : ks) {
    Kernel& k = *kp;
    MPI_Datatype t = mpi_type(k), rt = is_fft(k) ? mpi_type(k.recv_type) : t;  // FFT2D receives transposed (spec 3.5)
    const int count = static_cast<int>(k.count), bytes = static_cast<int>(k.bytes);
    std::vector<char> tmp(k.bytes + 1), out(is_fft(k) ? k.array_bytes[0] : 1), tmp2(k.bytes + 1);
    void* buf = buf_of(k);
    std::vector<Method> ms;
    if (is_fft(k)) {  // two transposes per iteration (spec §2.2)
      char* a = k.arrays[0].get();
      const int per = bytes / np;
      ms = {{"native", [&] { for (int i = 0; i < 2; ++i) PMPI_Alltoall(a, 1, t, out.data(), 1, rt, MPI_COMM_WORLD); }},
            {"interposed", [&] { for (int i = 0; i < 2; ++i) MPI_Alltoall(a, 1, t, out.data(), 1, rt, MPI_COMM_WORLD); }},
            {"manual", [&] {
               for (int i = 0; i < 2; ++i) {
                 k.manual_pack(tmp.data());
                 PMPI_Alltoall(tmp.data(), per, MPI_BYTE, tmp2.data(), per, MPI_BYTE, MPI_COMM_WORLD);
                 k.manual_unpack(tmp2.data());
               }
             }}};
    } else {
      ms = {{"native", [&] { round_trip(PMPI_Send, PMPI_Recv, buf, count, t); }},
            {"interposed", [&] { round_trip(MPI_Send, MPI_Recv, buf, count, t); }},
            {"manual", [&] {  // the hand-written loops around a byte ping-pong (rank 1 unpacks and re-packs)
               if (me == 0) {
                 k.manual_pack(tmp.data());
                 PMPI_Send(tmp.data(), bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
                 PMPI_Recv(tmp.data(), bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                 k.manual_unpack(tmp.data());
               } else if (me == 1) {
                 PMPI_Recv(tmp.data(), bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                 k.manual_unpack(tmp.data());
                 k.manual_pack(tmp.data());
                 PMPI_Send(tmp.data(), bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
               }
             }}};
    }
    auto ts = pingpong(ms, reps);
    MPI_Type_free(&t);
    if (is_fft(k)) MPI_Type_free(&rt);
    if (me != 0) continue;
    res.add("pingpong", k.name, k.params, "round trip", k.bytes, ts);
    std::printf("[pingpong] %-14s %-12s %9lld B  native %9.2f us  interposed %9.2f us (%.2fx)  manual %9.2f us\n",
                k.name.c_str(), k.params.c_str(), (long long)k.bytes, find(ts, "native") / 1e3,
                find(ts, "interposed") / 1e3, find(ts, "native") / find(ts, "interposed"), find(ts, "manual") / 1e3);
    std::fflush(stdout);
  }
}

// osu_latency -D vect:8:4 on MPI_CHAR: vector(size/8, 4, 8, char), count 1; latency = round
// trip / 2. As OMB 7.4's osu_latency: a send buffer and a receive buffer, each of the largest
// size, page-aligned, allocated once (osu_util_mpi.c's allocate_memory_pt2pt: posix_memalign of
// options.max_message_size), every size sent from the first and received into the second. (A
// buffer of each size, one for both directions, had its sizes under 1 MiB in the C library's
// memory under the interposer, which OSU's never are: its allocator serves page-aligned
// allocations from the heap from 1 MiB.)
void osu_vect(Results& res, int64_t max_size, int reps) {
  void *sbuf = nullptr, *rbuf = nullptr;
  if (posix_memalign(&sbuf, 4096, max_size) || posix_memalign(&rbuf, 4096, max_size)) MPI_Abort(MPI_COMM_WORLD, 1);
  std::memset(sbuf, 1, max_size);
  std::memset(rbuf, 0, max_size);
  for (int64_t size = 8; size <= max_size; size *= 2) {
    const int stride = 8, bl = 4, n = static_cast<int>(size / stride);
    MPI_Datatype v;
    MPI_Type_vector(n, bl, stride, MPI_CHAR, &v);
    MPI_Type_commit(&v);
    std::vector<Method> ms = {{"native", [&] { round_trip(PMPI_Send, PMPI_Recv, sbuf, rbuf, 1, v); }},
                              {"interposed", [&] { round_trip(MPI_Send, MPI_Recv, sbuf, rbuf, 1, v); }}};
    auto ts = pingpong(ms, reps);
    for (auto& t : ts) t.ns /= 2;
    MPI_Type_free(&v);
    if (me != 0) continue;
    res.add("osu_latency_vect", "vect:8:4 char", std::to_string(size), "latency", int64_t(n) * bl, ts);
    std::printf("[osu_latency -D vect:8:4] size %8lld  transmit %8lld B  native %8.2f us  interposed %8.2f us (%.2fx)\n",
                (long long)size, (long long)n * bl, find(ts, "native") / 1e3, find(ts, "interposed") / 1e3,
                find(ts, "native") / find(ts, "interposed"));
    std::fflush(stdout);
  }
  std::free(sbuf);
  std::free(rbuf);
}

// Messages of predefined types must not slow down (issue 11: within 3%): an MPI_BYTE ping-pong
// of 1 B and 1 MiB, native (PMPI) vs interposed (MPI), interleaved as above. Many more samples
// than the kernels get, since a 3% difference must stand out of this machine's noise.
void predefined(Results& res, int reps) {
  for (int size : {1, 1 << 20}) {
    std::vector<char> b(size, 1);
    std::vector<Method> ms = {{"native", [&] { round_trip(PMPI_Send, PMPI_Recv, b.data(), size, MPI_BYTE); }},
                              {"interposed", [&] { round_trip(MPI_Send, MPI_Recv, b.data(), size, MPI_BYTE); }}};
    auto ts = pingpong(ms, reps);
    if (me != 0) continue;
    res.add("predefined", "MPI_BYTE", std::to_string(size), "round trip", size, ts);
    std::printf("[MPI_BYTE ping-pong] %8d B  native %9.2f us  interposed %9.2f us (%.3fx)\n", size,
                find(ts, "native") / 1e3, find(ts, "interposed") / 1e3, find(ts, "native") / find(ts, "interposed"));
    std::fflush(stdout);
  }
}

// The measurement behind Open MPI's small-message rule (src/mpi/pass.cpp, ompi_slow_eager):
// vectors of stride twice the block, of char, short, int, float and double, blocks of 8-64 B,
// messages of 256 B to 16 KiB, each sent natively typed (PMPI), natively as bytes that
// PMPI_Pack / PMPI_Unpack staged on each side, and through the interposer (MPI_*), interleaved.
void eager_grid(Results& res, int reps) {
  static std::vector<char> buf(1 << 20, 1), packed(1 << 16);
  const std::pair<MPI_Datatype, const char*> bases[] = {
      {MPI_CHAR, "char"}, {MPI_SHORT, "short"}, {MPI_INT, "int"}, {MPI_FLOAT, "float"}, {MPI_DOUBLE, "double"}};
  for (int msg : {256, 1024, 3072, 4000, 8192, 16384})
    for (auto [base, name] : bases)
      for (int blk : {8, 16, 32, 64}) {
        int esz = 0;
        MPI_Type_size(base, &esz);
        MPI_Datatype t;
        MPI_Type_vector(msg / blk, blk / esz, 2 * blk / esz, base, &t);
        MPI_Type_commit(&t);
        auto staged = [&] {
          const int peer = 1 - me;
          auto send = [&] {
            int pos = 0;
            PMPI_Pack(buf.data(), 1, t, packed.data(), msg, &pos, MPI_COMM_WORLD);
            PMPI_Send(packed.data(), msg, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
          };
          auto recv = [&] {
            int pos = 0;
            PMPI_Recv(packed.data(), msg, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            PMPI_Unpack(packed.data(), msg, &pos, buf.data(), 1, t, MPI_COMM_WORLD);
          };
          if (me == 0) send(), recv();
          else if (me == 1) recv(), send();
        };
        std::vector<Method> ms = {{"native", [&] { round_trip(PMPI_Send, PMPI_Recv, buf.data(), 1, t); }},
                                  {"native staged", staged},
                                  {"interposed", [&] { round_trip(MPI_Send, MPI_Recv, buf.data(), 1, t); }}};
        auto ts = pingpong(ms, reps);
        MPI_Type_free(&t);
        if (me != 0) continue;
        const std::string params = std::to_string(msg) + " B, " + std::to_string(blk) + " B blocks";
        res.add("eager_grid", std::string("vector ") + name, params, "round trip", msg, ts);
        std::printf("[eager grid] %6d B %-6s blocks %2d B: native %7.2f us  staged %7.2f us  interposed %7.2f us  "
                    "native/staged %.2f  native/interposed %.2f\n",
                    msg, name, blk, find(ts, "native") / 1e3, find(ts, "native staged") / 1e3, find(ts, "interposed") / 1e3,
                    find(ts, "native") / find(ts, "native staged"), find(ts, "native") / find(ts, "interposed"));
        std::fflush(stdout);
      }
}

// Collectives of a predefined type (MPI_DOUBLE chunks of 32 KiB to 4 MiB), native vs interposed:
// from DDTKIT_RUNTIME_COLL_MIN on (MPI_Bcast: DDTKIT_RUNTIME_BCAST_MIN) they take ddtkit's runtime
// whatever the types (every rank must decide alike: src/mpi/local_coll.cpp), so this is where
// those thresholds are measured.
void predefined_collectives(Results& res, int reps, bool smoke) {
  for (int64_t bytes = int64_t(32) << 10; bytes <= (smoke ? int64_t(32) << 10 : int64_t(4) << 20); bytes *= 8) {
    const int n = static_cast<int>(bytes / 8);
    std::vector<double> sb(static_cast<size_t>(n) * np, 1.0), rb(static_cast<size_t>(n) * np);
    using Bcast = int (*)(void*, int, MPI_Datatype, int, MPI_Comm);
    using All = int (*)(const void*, int, MPI_Datatype, void*, int, MPI_Datatype, MPI_Comm);
    struct Op {
      const char* name;
      Bcast b;
      All a;
    };
    const Op ops[][2] = {{{"bcast", PMPI_Bcast, nullptr}, {"bcast", MPI_Bcast, nullptr}},
                         {{"allgather", nullptr, PMPI_Allgather}, {"allgather", nullptr, MPI_Allgather}},
                         {{"alltoall", nullptr, PMPI_Alltoall}, {"alltoall", nullptr, MPI_Alltoall}}};
    for (const auto& op : ops) {
      auto call = [&](const Op& o) {
        if (o.b) o.b(sb.data(), n, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        else o.a(sb.data(), n, MPI_DOUBLE, rb.data(), n, MPI_DOUBLE, MPI_COMM_WORLD);
      };
      std::vector<Method> ms = {{"native", [&] { call(op[0]); }}, {"interposed", [&] { call(op[1]); }}};
      auto ts = pingpong(ms, reps);
      if (me != 0) continue;
      res.add("coll_predefined", op[0].name, std::to_string(bytes), "call", bytes, ts);
      std::printf("[MPI_DOUBLE %-9s] %8lld B a chunk  native %9.2f us  interposed %9.2f us (%.2fx)\n", op[0].name,
                  (long long)bytes, find(ts, "native") / 1e3, find(ts, "interposed") / 1e3,
                  find(ts, "native") / find(ts, "interposed"));
      std::fflush(stdout);
    }
  }
}

// First transfer vs steady state of a repeated message (issue 11). Per kernel, a type built and
// committed afresh, the commit timed, then its first round trip timed alone and the median of
// the next `reps` round trips; once through the MPI's own path and once, with another fresh type
// of the same layout, through the interposer (which goes first alternates by kernel). The
// interposer's commit translates the type; its first runtime message also sends the layout to
// the peer, which later messages find memoized (src/shm). Runs before any other kernel timing, so
// no layout has been seen yet; FFT2D (a collective) is left out.
void first_transfer(Results& res, const std::vector<std::unique_ptr<Kernel>>& ks, int reps) {
  {  // The runtime's and the MPI's own first use (mapping and first touch of their shared memory:
     // about 4 round trips of 5x the steady time) is not any kernel's: a layout of no kernel first.
    MPI_Datatype v;
    MPI_Type_vector(4096, 1, 2, MPI_DOUBLE, &v);
    MPI_Type_commit(&v);
    std::vector<double> w(8192, 1.0);
    for (int r = 0; r < 10; ++r) {
      round_trip(MPI_Send, MPI_Recv, w.data(), 1, v);
      round_trip(PMPI_Send, PMPI_Recv, w.data(), 1, v);
    }
    MPI_Type_free(&v);
  }
  int n = 0;
  for (auto& kp : ks) {
    Kernel& k = *kp;
    if (is_fft(k)) continue;
    void* buf = buf_of(k);
    const int count = static_cast<int>(k.count);
    std::vector<Timing> ts;
    for (int pass = 0; pass < 2; ++pass) {
      const bool interposed = (pass + n) % 2 == 0;
      const std::string who = interposed ? "interposed" : "native";
      TPtr tree = tnode_from_ddt(k.type);
      int rc;
      MPI_Datatype t = mpi_build(*tree, &rc);
      MPI_Barrier(MPI_COMM_WORLD);
      double t0 = now_ns();
      interposed ? MPI_Type_commit(&t) : PMPI_Type_commit(&t);
      const double commit = now_ns() - t0;
      MPI_Barrier(MPI_COMM_WORLD);
      t0 = now_ns();
      interposed ? round_trip(MPI_Send, MPI_Recv, buf, count, t) : round_trip(PMPI_Send, PMPI_Recv, buf, count, t);
      const double first = now_ns() - t0;
      std::vector<double> later;
      for (int r = 0; r < reps; ++r) {
        t0 = now_ns();
        interposed ? round_trip(MPI_Send, MPI_Recv, buf, count, t) : round_trip(PMPI_Send, PMPI_Recv, buf, count, t);
        later.push_back(now_ns() - t0);
      }
      MPI_Type_free(&t);
      ts.push_back({who + "_commit", commit});
      ts.push_back({who + "_first", first});
      ts.push_back({who + "_steady", median_of(later)});
    }
    ++n;
    if (me != 0) continue;
    res.add("first_transfer", k.name, k.params, "round trip", k.bytes, ts);
    std::printf("[first transfer] %-14s %-12s %9lld B  native commit %7.2f first %9.2f steady %9.2f us   "
                "interposed commit %7.2f first %9.2f steady %9.2f us\n",
                k.name.c_str(), k.params.c_str(), (long long)k.bytes, find(ts, "native_commit") / 1e3,
                find(ts, "native_first") / 1e3, find(ts, "native_steady") / 1e3, find(ts, "interposed_commit") / 1e3,
                find(ts, "interposed_first") / 1e3, find(ts, "interposed_steady") / 1e3);
    std::fflush(stdout);
  }
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  const char* check_path = nullptr;
  const char* dir = nullptr;
  bool smoke = false, full = false, osu_only = false, predefined_only = false, eager_only = false;
  std::string only;  // --kernels S: the ping-pong of the kernels whose "name params" contains S
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--check") && i + 1 < argc) check_path = argv[++i];
    else if (!std::strcmp(argv[i], "--time") && i + 1 < argc) dir = argv[++i];
    else if (!std::strcmp(argv[i], "--smoke")) smoke = true;
    else if (!std::strcmp(argv[i], "--full")) full = true;
    else if (!std::strcmp(argv[i], "--kernels") && i + 1 < argc) only = argv[++i];
    else if (!std::strcmp(argv[i], "--osu-only")) osu_only = true;
    else if (!std::strcmp(argv[i], "--predefined-only")) predefined_only = true;
    else if (!std::strcmp(argv[i], "--eager-grid")) eager_only = true;
  }
  if (np != 2) {
    if (me == 0) std::printf("ddtbench_mpi runs on exactly 2 ranks (spec §2.1; FFT2D's kernel is built for P = 2)\n");
    MPI_Finalize();
    return 2;
  }
  // The kernels' arrays take a second to build: an OSU-only run skips them.
  std::vector<std::unique_ptr<Kernel>> ks;
  if (!(osu_only || predefined_only || eager_only) || !only.empty() || check_path) ks = ddtbench_kernels(false);
  int rc = 0;
  if (check_path) rc = check(check_path, ks);
  if (dir) {
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    MPI_Get_library_version(version, &len);
    std::string v(version, std::strcspn(version, "\n,"));
    const bool mpich = v.find("MPICH") != std::string::npos;
    while (v.find("  ") != std::string::npos) v.erase(v.find("  "), 1);
    std::string path = std::string(dir) + "/interposer_" + (mpich ? "mpich" : "openmpi") + ".jsonl";
    if (me == 0) mkdir(dir, 0755);
    Results res(me == 0 ? path : "/dev/null", v);
    if (!res.ok()) {
      std::fprintf(stderr, "cannot write %s\n", path.c_str());
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (me == 0) std::printf("== DDTBench ping-pong and OSU vector latency, %s, native (PMPI) vs interposed (MPI) -> %s\n", v.c_str(), path.c_str());
    probe_line(res, "start");
    if (!only.empty() || osu_only || predefined_only || eager_only) {  // focused runs, for tuning: nothing else is timed
      std::vector<std::unique_ptr<Kernel>> few;
      for (auto& k : ks)
        if (!only.empty() && (k->name + " " + k->params).find(only) != std::string::npos) few.push_back(std::move(k));
      time_kernels(res, few, full ? 31 : 15);
      if (osu_only) osu_vect(res, full ? 4 << 20 : 1 << 20, full ? 31 : 15);
      if (predefined_only) {
        predefined(res, full ? 201 : 61);
        predefined_collectives(res, full ? 31 : 15, false);
      }
      if (eager_only) eager_grid(res, full ? 31 : 15);
    } else if (smoke) {
      std::vector<std::unique_ptr<Kernel>> few;
      for (size_t i = 0; i < ks.size(); i += 9) few.push_back(std::move(ks[i]));
      first_transfer(res, few, 3);
      time_kernels(res, few, 1);
      osu_vect(res, 1 << 12, 1);
      predefined(res, 3);
      predefined_collectives(res, 3, true);
    } else {
      first_transfer(res, ks, 15);  // first: no layout seen yet
      time_kernels(res, ks, full ? 31 : 15);
      osu_vect(res, full ? 4 << 20 : 1 << 20, full ? 31 : 15);
      eager_grid(res, full ? 31 : 15);
      predefined(res, full ? 201 : 61);
      predefined_collectives(res, full ? 31 : 15, false);
    }
    probe_line(res, "end");
  }
  MPI_Finalize();
  return rc ? 1 : 0;
}
