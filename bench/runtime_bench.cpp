// Issue 10's benchmarks of ddtkit's intra-node runtime (src/shm/), MPI-free:
//
//   ddtkit run -n 2 ddt_runtime_bench [--out DIR] [--smoke | --full]
//   ddtkit run -n P ddt_runtime_bench --stencil-only [--out DIR] ...   (P > 2: the stencil alone)
//   ddtkit run -n P ddt_runtime_bench --load-stencil-only [--out DIR] ...  (the mixed-load stencil alone)
//
// On 2 ranks, in this order:
//   1. the cost split of one transfer (FALCON-X figure 5): first transfer of a (type, count,
//      buffer, peer) against the steady state, for the descriptor and memoized exchanges;
//   2. the vector sweep (vector_sweep.hpp) for every mechanism and exchange design, switched in
//      this process with ddt_comm_configure, and the same copy by one core in one process; then
//      the rendezvous protocols (protocol_sweep.hpp: RGET, RPUT, COOP-p2p, COOP-chunked, COOP-hca, HYBRID)
//      for messages of 32 KiB to 64 MiB;
//   3. the DDTBench kernels as ping-pongs, arrays in the mapped heap: the default configuration,
//      and beside it the pipelined cells and the heap forced;
//   4. the stencil halo exchange (stencil.hpp);
//   5. the stencil with mixed load under each rendezvous protocol (load_stencil.hpp, issue 15,
//      seed 002's figure 17): copies, copy bytes and time per rank, static RPUT and RGET against
//      COOP-load and HYBRID.
// JSON lines to DIR/runtime.jsonl (the --stencil-only and --load-stencil-only runs append to it).
// Every transfer's bytes are checked once per configuration, and any error the runtime returns
// ends the job with a non-zero status: a benchmark that moved wrong bytes must not report a time.
// Its MPI twin, runtime_mpi.cpp, runs the same sweep and stencil through each MPI.
#include <sys/stat.h>

#include <cstdlib>
#include <cstring>

#include "ddtbench.hpp"
#include "ddtkit.h"
#include "harness.hpp"
#include "heap_arrays.hpp"
#include "kernel_transfer.hpp"
#include "load_stencil.hpp"
#include "runtime_transport.hpp"
#include "stencil.hpp"
#include "protocol_sweep.hpp"
#include "vector_sweep.hpp"

namespace {

using namespace rtbench;

// ---- 1. the cost split ------------------------------------------------------------------------

// One transfer rank 0 -> rank 1 of one vector element, then a 4-byte ack (eager: it takes no part
// in the rendezvous the times describe). Each (design, block) gets new buffers and a new type, so
// its first transfer is a first for every cache (layouts, translated addresses, attachments); the
// buffers stay allocated until the end so that no address is reused within the run.
void cost_split(Rt& t, Jsonl* out, const Options& o) {
  const std::vector<int64_t> blocks = o.smoke ? std::vector<int64_t>{4096} : std::vector<int64_t>{128, 4096, 65536};
  const int steady = o.smoke ? 3 : o.full ? 200 : 50;
  std::vector<void*> held;
  struct Design {
    const char* name;
    int exchange;
  };
  for (Design d : {Design{"descriptor", DDT_EXCHANGE_DESCRIPTOR}, Design{"memoized", DDT_EXCHANGE_MEMOIZED}}) {
    t.configure(DDT_MECH_HEAP, d.exchange);
    for (int64_t block : blocks) {
      const VectorShape s = vector_shape(block);
      char* sbuf = static_cast<char*>(t.alloc(kVectorBuffer));
      char* rbuf = static_cast<char*>(t.alloc(kVectorBuffer));
      held.push_back(sbuf), held.push_back(rbuf);
      ddt_type type = t.vector(s.count, s.block, s.stride);
      const uint64_t seed = 7 + block;
      vector_fill(sbuf, seed);
      std::memset(rbuf, 0, kVectorBuffer);
      char ack[4] = {};
      auto one = [&] {
        if (t.me == 0) t.send(sbuf, 1, type, 1, kTagData), t.recv(ack, 4, DDT_BYTE, 1, kTagAck);
        else t.recv(rbuf, 1, type, 0, kTagData), t.send(ack, 4, DDT_BYTE, 0, kTagAck);
      };
      // Phases of this rank over n transfers: exchange, translate, attach, copy, hits; then wall.
      auto phases = [&](int n, double* wall) {
        t.barrier();
        const ddt_comm_times a = t.times();
        const double t0 = rtbench::now_ns();
        for (int i = 0; i < n; ++i) one();
        *wall = (rtbench::now_ns() - t0) / n;
        const ddt_comm_times b = t.times();
        return std::vector<int64_t>{b.exchange_ns - a.exchange_ns, b.translate_ns - a.translate_ns,
                                    b.attach_ns - a.attach_ns, b.copy_ns - a.copy_ns, b.cache_hits - a.cache_hits};
      };
      double wall_first, wall_steady;
      std::vector<int64_t> first = phases(1, &wall_first);
      int64_t bad = -1;
      if (t.me == 1 && !vector_check(s, rbuf, seed, &bad)) {
        char why[128];
        std::snprintf(why, sizeof why, "cost split %s block %lld: wrong byte at offset %lld", d.name, (long long)block,
                      (long long)bad);
        t.fail(why);
      }
      std::vector<int64_t> rep = phases(steady, &wall_steady);
      // Rank 0 (the sender) adds rank 1's (the receiver's) phases to its own.
      std::vector<int64_t> mine = first;
      mine.insert(mine.end(), rep.begin(), rep.end());
      std::vector<int64_t> theirs(mine.size());
      if (t.me == 1) t.send(mine.data(), static_cast<int64_t>(mine.size()), DDT_INT64_T, 0, 40);
      else t.recv(theirs.data(), static_cast<int64_t>(theirs.size()), DDT_INT64_T, 1, 40);
      t.free_type(type);
      if (t.me != 0 || !out) continue;
      const char* names[] = {"exchange", "translate", "attach", "copy"};
      const std::string p = std::to_string(block);
      for (int phase = 0; phase < 2; ++phase) {
        const int n = phase ? steady : 1;
        const int64_t* a = mine.data() + 5 * phase;
        const int64_t* b = theirs.data() + 5 * phase;
        char extra[96];
        std::snprintf(extra, sizeof extra, "\"cache_hits\": %.2f, \"transfers\": %d", double(a[4] + b[4]) / n, n);
        const char* op = phase ? "steady" : "first";
        for (int i = 0; i < 4; ++i) out->add("rt_cost", d.name, p, op, names[i], kVectorPayload, double(a[i] + b[i]) / n, extra);
        out->add("rt_cost", d.name, p, op, "wall", kVectorPayload, phase ? wall_steady : wall_first, extra);
        std::printf("[cost %-10s %8s %-6s] exchange %8.2f  translate %8.2f  attach %8.2f  copy %8.2f  wall %8.2f us  "
                    "hits %.2f\n", d.name, size_label(block).c_str(), op, (a[0] + b[0]) / 1e3 / n, (a[1] + b[1]) / 1e3 / n,
                    (a[2] + b[2]) / 1e3 / n, (a[3] + b[3]) / 1e3 / n, (phase ? wall_steady : wall_first) / 1e3,
                    double(a[4] + b[4]) / n);
      }
      std::fflush(stdout);
    }
  }
  for (void* p : held) t.release(p);
  t.configure(DDT_MECH_AUTO, DDT_EXCHANGE_MEMOIZED);
}

// ---- 2b. what one core can do ----------------------------------------------------------------
// The heap's one copy is made by one core: the receiver's. Its floor for the sweep's message is
// the same copy within one process (ddt_copy, the vector into the same layout), and below that a
// memcpy of the 2 MiB payload. Timed on rank 0 while rank 1 waits, beside the sweep, so that a
// latency target below these is seen to be bounded by the core, not by the runtime.
//
// Beside the bidirectional sweep, the same copy made on both cores at once: both directions'
// receivers copy at the same time (issue 10's 1.8x assumes twice one core's). It is a reference,
// not a ceiling: 90b6163's run moved 27.7 GB/s bidirectionally through RGET at 128 B blocks, 1.32x
// the 21.0 GB/s of this local copy on both cores (the transfer's copy is not ddt_copy's vector
// into the same layout at the same addresses). Measured sample by sample:
// rank 0 copies alone, then both ranks copy together, started by a barrier ("two cores" in the
// results: gbs, the bytes of both ranks over the slower one's time; one_gbs, rank 0's alone;
// ratio, their quotient; medians over the samples).
struct TwoCores {
  double one_gbs, two_gbs;
};
TwoCores two_cores(Rt& t, char* src, char* dst, ddt_type type, int iters) {
  auto copies = [&] {
    const double t0 = rtbench::now_ns();
    for (int i = 0; i < iters; ++i) t.ck(ddt_copy(src, 1, type, dst, 1, type), "ddt_copy");
    return rtbench::now_ns() - t0;
  };
  t.barrier();
  const double alone = t.me == 0 ? copies() : 0;
  t.barrier();
  double both[2] = {copies(), 0};
  if (t.me == 1) t.send(both, 1, DDT_DOUBLE, 0, 41);
  else t.recv(both + 1, 1, DDT_DOUBLE, 1, 41);
  if (t.me != 0) return {0, 0};
  const double bytes = static_cast<double>(iters) * kVectorPayload;
  return {bytes / alone, 2 * bytes / std::max(both[0], both[1])};
}

void copy_bounds(Rt& t, Jsonl* out, const Options& o) {
  char* src = static_cast<char*>(t.alloc(kVectorBuffer));
  char* dst = static_cast<char*>(t.alloc(kVectorBuffer));
  std::memset(src, 1, kVectorBuffer);
  std::memset(dst, 2, kVectorBuffer);
  for (int64_t block : vector_blocks(o)) {
    const VectorShape s = vector_shape(block);
    ddt_type type = t.vector(s.count, s.block, s.stride);
    if (t.me == 0) {
      const std::vector<Method> ms = {
          {"one-core ddt_copy", [&] { t.ck(ddt_copy(src, 1, type, dst, 1, type), "ddt_copy"); }},
          {"memcpy", [&] { std::memcpy(dst, src, kVectorPayload); }}};
      for (const Timing& x : measure(ms, o.budget().reps * 2 + 1, o.smoke ? 0 : 2e5))
        if (out) out->add("rt_vector", "bound", std::to_string(block), "copy", x.name, kVectorPayload, x.ns);
    }
    // Both ranks: iterations of about 2 ms (rank 0's one-core time decides, for both).
    double one = 0;
    if (t.me == 0) {
      const double t0 = rtbench::now_ns();
      t.ck(ddt_copy(src, 1, type, dst, 1, type), "ddt_copy");
      one = rtbench::now_ns() - t0;
    }
    const int iters = static_cast<int>(t.bcast0(o.smoke ? 1 : static_cast<int64_t>(std::min(200.0, std::max(1.0, 2e6 / std::max(one, 1.0))))));
    std::vector<double> one_gbs, two_gbs, ratio;
    for (int r = 0; r < (o.smoke ? 1 : 2 * o.budget().reps + 1); ++r) {
      const TwoCores x = two_cores(t, src, dst, type, iters);
      if (t.me == 0) one_gbs.push_back(x.one_gbs), two_gbs.push_back(x.two_gbs), ratio.push_back(x.two_gbs / x.one_gbs);
    }
    if (t.me == 0 && out) {
      char extra[96];
      std::snprintf(extra, sizeof extra, "\"gbs\": %.3f, \"one_gbs\": %.3f, \"ratio\": %.3f", median_of(two_gbs),
                    median_of(one_gbs), median_of(ratio));
      out->add("rt_vector", "bound", std::to_string(block), "copy", "two cores", kVectorPayload, 0, extra);
    }
    t.free_type(type);
  }
  t.barrier();
  t.release(src);
  t.release(dst);
}

// ---- 2c. the rendezvous protocols (issue 15): protocol_sweep.hpp, one method per protocol ------
// Each sets the protocol on both ranks (the receiver's decides) with the default mechanism and
// chunking, and asserts on the checked transfer that the protocol asked for moved it (HYBRID:
// whichever it chose, counted once).
void protocol_sweep(Rt& t, Jsonl* out, const Options& o) {
  struct P {
    const char* name;
    int id;
  };
  static ddt_comm_times before{};
  std::vector<ProtocolMethod> methods;
  for (P p : {P{"rget", DDT_PROTO_RGET}, P{"rput", DDT_PROTO_RPUT}, P{"coop", DDT_PROTO_COOP},
              P{"chunked", DDT_PROTO_COOP_CHUNKED}, P{"hca", DDT_PROTO_COOP_HCA}, P{"hybrid", DDT_PROTO_HYBRID}}) {
    const std::string name = p.name;
    const int id = p.id;
    methods.push_back(ProtocolMethod{
        name,
        [&t, id] {
          t.ck(ddt_comm_set_protocol(id), "ddt_comm_set_protocol");
          if (id == DDT_PROTO_HYBRID) t.forget_history();
        },
        [&t] { before = t.times(); },
        [&t, id, name] {
          if (t.me != 1) return;
          const ddt_comm_times a = t.times();
          // RGET's receiver may take the message through the pipelined cells instead of reading it
          // (by_cells): the learner (learn.hpp) tries them now and then for a layout the cost model
          // gives the heap, these checked transfers' included. COOP_HCA's one copy is never moved so.
          const int64_t g = a.by_rget - before.by_rget, r = a.by_rput - before.by_rput, c = a.by_coop - before.by_coop;
          const int64_t cells = id == DDT_PROTO_COOP_HCA ? 0 : a.by_cells - before.by_cells;
          const int64_t want = id == DDT_PROTO_RGET || id == DDT_PROTO_COOP_HCA ? g + cells
                               : id == DDT_PROTO_RPUT                         ? r
                               : id == DDT_PROTO_HYBRID                       ? g + cells + r + c
                                                                              : c;
          if (want != 1 || g + cells + r + c != 1) t.fail(("protocol sweep: the receive did not run " + name).c_str());
          // COOP_HCA is RGET striped over the receiver's core and its helper thread: the thread
          // must have moved its share (R / (1 + R) of the message, R = 1 by default).
          if (id == DDT_PROTO_COOP_HCA && a.engine_bytes == before.engine_bytes)
            t.fail("protocol sweep: COOP_HCA's second engine moved nothing");
        },
        id == DDT_PROTO_HYBRID});
  }
  rtbench::protocol_sweep(t, out, o, methods);
  t.ck(ddt_comm_set_protocol(DDT_PROTO_HYBRID), "ddt_comm_set_protocol");
}

// ---- 3. DDTBench ping-pong --------------------------------------------------------------------

// The default configuration is the one judged; the mechanisms it chooses between are timed beside
// it (pipelined cells: two copies overlapped on two cores; the heap: one copy by the receiver), so
// that a kernel where the choice was wrong shows by how much.
void ddtbench_pingpong(Rt& t, Jsonl* out, const Options& o) {
  struct Config {
    const char* name;
    int mech, proto;
  };
  // Beside the default: the two mechanisms it chooses between, and COOP-p2p forced (both sides
  // copy a share of every rendezvous, whatever its size: where HYBRID's size bound leaves gain).
  const Config configs[] = {{"ddtkit", DDT_MECH_AUTO, DDT_PROTO_HYBRID},
                            {"ddtkit-pipe", DDT_MECH_PIPE, DDT_PROTO_HYBRID},
                            {"ddtkit-heap", DDT_MECH_HEAP, DDT_PROTO_HYBRID},
                            {"ddtkit-coop", DDT_MECH_AUTO, DDT_PROTO_COOP}};
  constexpr int kConfigs = sizeof configs / sizeof configs[0];
  g_heap_arrays = true;
  auto ks = ddtbench_kernels(false);  // the set ddtbench_mpi times through each MPI
  g_heap_arrays = false;
  Budget b = o.budget();
  size_t i = 0;
  for (auto& kp : ks) {
    Kernel& k = *kp;
    if ((o.smoke && i++ % 9) || !kernel_wanted(o, k.name, k.params)) continue;  // the subset ddtbench_mpi --smoke times
    const bool fft = k.name == "FFT2D";
    int64_t fft_bytes = 0;
    char* fft_out = nullptr;
    if (fft) {
      fft_bytes = k.array_bytes[0];
      fft_out = static_cast<char*>(t.alloc(fft_bytes));
    }
    void* buf = const_cast<void*>(k.buf);
    double ns[kConfigs];
    for (int c = 0; c < kConfigs; ++c) {
      t.ck(ddt_comm_set_protocol(configs[c].proto), "ddt_comm_set_protocol");
      t.configure(configs[c].mech, DDT_EXCHANGE_MEMOIZED);  // and a barrier: both sides switched
      check_kernel(t, k, fft_out, fft_bytes);
      ns[c] = time_op(t, [&] {
        if (fft) {  // two transposes per iteration (spec §2.2), as ddtbench_mpi times them
          fft_alltoall(t, k, fft_out);
          fft_alltoall(t, k, fft_out);
        } else {
          round_trip(t, buf, k.count, k.type, 4);
        }
      }, b);
    }
    if (fft_out) t.release(fft_out);
    if (t.me != 0 || !out) continue;
    for (int c = 0; c < kConfigs; ++c) out->add("rt_pingpong", k.name, k.params, "round trip", configs[c].name, k.bytes, ns[c]);
    std::printf("[pingpong] %-14s %-12s %9lld B  ddtkit runtime %9.2f us   (pipe %9.2f us, heap %9.2f us, coop %9.2f us)\n",
                k.name.c_str(), k.params.c_str(), (long long)k.bytes, ns[0] / 1e3, ns[1] / 1e3, ns[2] / 1e3, ns[3] / 1e3);
    std::fflush(stdout);
  }
  t.ck(ddt_comm_set_protocol(DDT_PROTO_HYBRID), "ddt_comm_set_protocol");
  t.configure(DDT_MECH_AUTO, DDT_EXCHANGE_MEMOIZED);
}

}  // namespace

int main(int argc, char** argv) {
  // --load-stencil-only is this program's own; the rest are transfer.hpp's options.
  bool load_only = false;
  std::vector<char*> args{argv[0]};
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--load-stencil-only") == 0) load_only = true;
    else args.push_back(argv[i]);
  Options o;
  if (!parse_options(static_cast<int>(args.size()), args.data(), o) ||
      (load_only && (o.stencil_only || o.protocols_only))) {
    std::fprintf(stderr, "usage: ddtkit run -n 2 ddt_runtime_bench [--out DIR] [--smoke|--full]\n"
                         "       ddtkit run -n P ddt_runtime_bench --stencil-only [--out DIR] [--smoke|--full]\n"
                         "       ddtkit run -n P ddt_runtime_bench --load-stencil-only [--out DIR] [--smoke|--full]\n");
    return 2;
  }
  Rt t;
  t.program = "ddt_runtime_bench";
  t.ck(ddt_comm_init(), "ddt_comm_init");
  t.ck(ddt_comm_rank(&t.me), "ddt_comm_rank");
  t.ck(ddt_comm_size(&t.np), "ddt_comm_size");
  if (!o.stencil_only && !load_only && t.np != 2) {
    if (t.me == 0)
      std::fprintf(stderr, "ddt_runtime_bench: runs on 2 ranks, or on any number with --stencil-only or "
                           "--load-stencil-only\n");
    ddt_comm_finalize();
    return 2;
  }
  std::unique_ptr<Jsonl> out;
  if (t.me == 0) {
    mkdir(o.out.c_str(), 0755);
    const std::string path = o.out + "/runtime.jsonl";
    out.reset(new Jsonl(path, o.stencil_only || load_only, "ddtkit", "ddtkit runtime"));
    if (!out->ok()) t.fail(("cannot write " + path).c_str());
    std::printf("== ddtkit runtime (issue 10), %d processes%s -> %s\n", t.np, o.smoke ? ", smoke" : o.full ? ", full" : "",
                path.c_str());
  }
  if (load_only) {
    with_usage(t, out.get(), "load stencil", [&] { load_stencil(t, out.get(), o); });
    t.ck(ddt_comm_finalize(), "ddt_comm_finalize");
    return 0;
  }
  // Each configuration sets the protocol too: HYBRID, the default, or RGET alone (the receiver
  // makes the one copy, FALCON-X's design), whose bidirectional bandwidth shows what a second
  // copying core gives where HYBRID's unidirectional transfers already use both (COOP-load).
  const auto configure = [&t](int mech, int exchange, int proto = DDT_PROTO_HYBRID) {
    return [&t, mech, exchange, proto] {
      t.ck(ddt_comm_set_protocol(proto), "ddt_comm_set_protocol");
      t.configure(mech, exchange);
    };
  };
  if (!o.kernels.empty()) {
    with_usage(t, out.get(), "DDTBench ping-pong", [&] { ddtbench_pingpong(t, out.get(), o); });
    t.ck(ddt_comm_finalize(), "ddt_comm_finalize");
    return 0;
  }
  if (o.protocols_only) {
    with_usage(t, out.get(), "protocols", [&] { protocol_sweep(t, out.get(), o); });
  } else if (!o.stencil_only) {
    with_usage(t, out.get(), "cost split", [&] { cost_split(t, out.get(), o); });
    with_usage(t, out.get(), "vector sweep", [&] {
      vector_sweep(t, out.get(), o,
                   {{"auto", configure(DDT_MECH_AUTO, DDT_EXCHANGE_MEMOIZED)},
                    {"pipe", configure(DDT_MECH_PIPE, DDT_EXCHANGE_MEMOIZED)},
                    {"cma", configure(DDT_MECH_CMA, DDT_EXCHANGE_MEMOIZED)},
                    {"heap-naive", configure(DDT_MECH_HEAP, DDT_EXCHANGE_NAIVE)},
                    {"heap-pipelined", configure(DDT_MECH_HEAP, DDT_EXCHANGE_PIPELINED)},
                    {"heap-descriptor", configure(DDT_MECH_HEAP, DDT_EXCHANGE_DESCRIPTOR)},
                    {"heap-memoized", configure(DDT_MECH_HEAP, DDT_EXCHANGE_MEMOIZED)},
                    {"heap-memoized-rget", configure(DDT_MECH_HEAP, DDT_EXCHANGE_MEMOIZED, DDT_PROTO_RGET)}});
      t.ck(ddt_comm_set_protocol(DDT_PROTO_HYBRID), "ddt_comm_set_protocol");
    });
    with_usage(t, out.get(), "one-core copy", [&] { copy_bounds(t, out.get(), o); });
    with_usage(t, out.get(), "protocols", [&] { protocol_sweep(t, out.get(), o); });
    with_usage(t, out.get(), "DDTBench ping-pong", [&] { ddtbench_pingpong(t, out.get(), o); });
  }
  with_usage(t, out.get(), "stencil", [&] {
    stencil(t, out.get(), o,
            {{"ddtkit", configure(DDT_MECH_AUTO, DDT_EXCHANGE_MEMOIZED)},
             {"ddtkit-hand", configure(DDT_MECH_AUTO, DDT_EXCHANGE_MEMOIZED), true}});
  });
  if (!o.stencil_only && !o.protocols_only)
    with_usage(t, out.get(), "load stencil", [&] { load_stencil(t, out.get(), o); });
  t.ck(ddt_comm_finalize(), "ddt_comm_finalize");
  return 0;
}
