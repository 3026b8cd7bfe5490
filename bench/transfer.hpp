// The measuring protocol of issue 10's transfer benchmarks, written once over a Transport so that
// ddtkit's runtime (runtime_bench.cpp, under `ddtkit run`) and each MPI (runtime_mpi.cpp, under
// mpiexec) time exactly the same exchanges of exactly the same types and sizes
// (vector_sweep.hpp, stencil.hpp). It includes neither ddtkit.h nor mpi.h.
//
// A Transport T provides
//   using Type, Req;                          a datatype and a request handle
//   int me, np;                               this process's rank and the job's size
//   send / recv (buf, count, Type, peer, tag) blocking
//   isend / irecv (..., Req*); wait(Req*); waitall(n, Req*); barrier();
//   Type bytes();                             the byte type (contiguous messages)
//   int64_t bcast0(int64_t v);                rank 0's v, on every rank
//   void* alloc(int64_t); void release(void*); the memory every buffer of a benchmark comes from
//   [[noreturn]] fail(const char* what);      reports and ends the job with a non-zero status
// and checks every result it gets: a benchmark never times, nor reports, an operation that failed.
#pragma once
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "harness.hpp"
#include "line_probe.hpp"

namespace rtbench {

inline double now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e9 + ts.tv_nsec;
}

inline double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// How long and how often: a sample repeats the operation until it lasts min_sample_ns (so that a
// 2 us round trip is timed as fairly as a 2 ms one), and the figure is the median of reps samples.
struct Budget {
  int reps = 5;
  double min_sample_ns = 2e6;
};

// Median time of one call of op, op being collective over the ranks that take part. Rank 0
// calibrates the number of calls per sample from its own clock and shares it, so every rank runs
// the same sequence (a rank that ran one call more would wait for a partner forever). The first
// calls are the warm-up. Meaningful on rank 0; the other ranks return their own medians.
template <class T>
double time_op(T& t, const std::function<void()>& op, const Budget& b) {
  op();  // warm-up: first-use costs (mappings, caches) are the cost split's subject, not this one's
  double t0 = now_ns();
  op();
  const double one = std::max(1.0, now_ns() - t0);
  const int64_t iters = t.bcast0(std::max<int64_t>(1, static_cast<int64_t>(b.min_sample_ns / one)));
  std::vector<double> samples;
  for (int r = 0; r < b.reps; ++r) {
    t.barrier();
    t0 = now_ns();
    for (int64_t i = 0; i < iters; ++i) op();
    samples.push_back((now_ns() - t0) / iters);
  }
  return median(samples);
}

// Medians of one call of each method, the methods taking turns sample by sample (rotated, so that
// none always follows the same one); each sample lasts about min_sample_ns on rank 0's clock,
// which chooses the calls per sample and tells rank 1, so both run the same sequence. prepare
// (if given) runs on every rank before each of method m's samples and its calibration, untimed.
template <class T>
std::vector<double> interleaved(T& t, const std::vector<Method>& ms, const Budget& b,
                                const std::function<void(size_t)>& prepare = nullptr) {
  std::vector<int64_t> iters(ms.size(), 1);
  for (size_t m = 0; m < ms.size(); ++m) {
    if (prepare) prepare(m);
    ms[m].run();  // warm-up
    const double t0 = rtbench::now_ns();
    ms[m].run();
    iters[m] = t.bcast0(std::max<int64_t>(1, static_cast<int64_t>(b.min_sample_ns / std::max(1.0, rtbench::now_ns() - t0))));
    // Every rank done with method m before any starts the next: with methods of two libraries in
    // turn (runtime_mpi: the MPI's and ddtkit's), rank 0, free after its bcast, went on into
    // ddtkit's method while a peer was still in the MPI's, waiting for something only rank 0's
    // next MPI call would send (runtime_mpi.cpp, Rt::idle).
    t.barrier();
  }
  const int reps = std::max(5, b.reps);
  std::vector<std::vector<double>> samples(ms.size());
  for (int r = 0; r < reps; ++r)
    for (size_t j = 0; j < ms.size(); ++j) {
      const size_t m = (j + static_cast<size_t>(r)) % ms.size();
      if (prepare) prepare(m);
      t.barrier();
      const double t0 = rtbench::now_ns();
      for (int64_t i = 0; i < iters[m]; ++i) ms[m].run();
      samples[m].push_back((rtbench::now_ns() - t0) / static_cast<double>(iters[m]));
    }
  t.barrier();  // the same after the last sample (the caller's next step may be either library's)
  std::vector<double> med;
  for (auto& s : samples) med.push_back(median(s));
  return med;
}

// JSON lines for bench/report.py, one per measured figure, in the schema of the other benchmark
// files (suite, case, params, op, method, bytes, ns) plus `side`: "ddtkit", "MPICH" or "Open MPI".
class Jsonl {
 public:
  Jsonl(const std::string& path, bool append, std::string side, std::string impl)
      : f_(std::fopen(path.c_str(), append ? "a" : "w")), side_(std::move(side)), impl_(std::move(impl)) {}
  ~Jsonl() {
    if (f_) std::fclose(f_);
  }
  bool ok() const { return f_ != nullptr; }
  void add(const std::string& suite, const std::string& kase, const std::string& params, const std::string& op,
           const std::string& method, int64_t bytes, double ns, const std::string& extra = "") {
    std::fprintf(f_, "{\"side\": \"%s\", \"mpi\": \"%s\", \"suite\": \"%s\", \"case\": \"%s\", \"params\": \"%s\", "
                     "\"op\": \"%s\", \"method\": \"%s\", \"bytes\": %lld, \"ns\": %.1f%s%s}\n",
                 side_.c_str(), impl_.c_str(), suite.c_str(), kase.c_str(), params.c_str(), op.c_str(),
                 method.c_str(), (long long)bytes, ns, extra.empty() ? "" : ", ", extra.c_str());
    std::fflush(f_);
  }

 private:
  FILE* f_;
  std::string side_, impl_;
};

// How much of the machine other processes took while a part of a benchmark ran: the machine's
// busy time (/proc/stat) minus the CPU time of this job's ranks, as a share of wall time x cores.
// On a small machine a figure measured beside other work is not the implementation's; the report
// prints this share beside every part so that such a run is seen for what it is.
class Usage {
 public:
  template <class T>
  void start(T& t) {
    t.barrier();
    wall0_ = now_ns(), busy0_ = machine_busy_ns(), self0_ = self_cpu_ns();
  }
  // The share, on rank 0 (the others return 0): every rank sends rank 0 its CPU time.
  template <class T>
  double foreign_share(T& t) {
    int64_t self = self_cpu_ns() - self0_;
    t.barrier();
    const double wall = now_ns() - wall0_, busy = machine_busy_ns() - busy0_;
    if (t.me != 0) {
      t.send(&self, 8, t.bytes(), 0, kTagUsage);
      return 0;
    }
    for (int p = 1; p < t.np; ++p) {
      int64_t other = 0;
      t.recv(&other, 8, t.bytes(), p, kTagUsage);
      self += other;
    }
    const double cores = static_cast<double>(sysconf(_SC_NPROCESSORS_ONLN));
    return wall > 0 ? std::max(0.0, (busy - static_cast<double>(self)) / (wall * cores)) : 0;
  }

 private:
  static constexpr int kTagUsage = 30001;
  static double machine_busy_ns() {  // user + nice + system + irq + softirq + steal, all CPUs
    FILE* f = std::fopen("/proc/stat", "r");
    if (!f) return 0;
    unsigned long long v[8] = {};
    const int n = std::fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
                              &v[6], &v[7]);
    std::fclose(f);
    if (n < 8) return 0;
    return static_cast<double>(v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) * 1e9 / sysconf(_SC_CLK_TCK);
  }
  static int64_t self_cpu_ns() {
    timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
  }
  double wall0_ = 0, busy0_ = 0;
  int64_t self0_ = 0;
};

// Runs part (collective) between two readings of Usage and records the share other processes took,
// and the cache-line distance between ranks 0 and 1 just before and just after it (line_probe.hpp).
template <class T>
void with_usage(T& t, Jsonl* out, const std::string& part, const std::function<void()>& body) {
  const double line0 = line_transfer_ns(t);  // line_probe.hpp: how far apart the ranks' cores are
  Usage u;
  u.start(t);
  const double t0 = now_ns();
  body();
  const double share = u.foreign_share(t), wall = now_ns() - t0;
  const double line1 = line_transfer_ns(t);
  if (t.me == 0 && out) {
    char extra[128];
    std::snprintf(extra, sizeof extra, "\"foreign_share\": %.4f, \"np\": %d, \"line_ns\": [%.1f, %.1f]", share, t.np, line0,
                  line1);
    out->add("rt_meta", part, "P=" + std::to_string(t.np), "usage", "other processes", 0, wall, extra);
    std::printf("[%s] %.1f s; other processes took %.1f%% of the machine meanwhile%s; a cache line between ranks 0 and 1: "
                "%.0f ns before, %.0f ns after\n",
                part.c_str(), wall / 1e9, 100 * share, share > 0.1 ? " (figures disturbed)" : "", line0, line1);
    std::fflush(stdout);
  }
}

// Options shared by both programs: --smoke (tiny sizes and repetitions, every byte check kept),
// --full (the papers' sizes), --out DIR, --stencil-only (the runs with more than 2 processes),
// --kernels S (the DDTBench ping-pong alone, of the kernels whose "name params" contains S).
struct Options {
  bool smoke = false, full = false, stencil_only = false, protocols_only = false;
  std::string out = "bench/results";
  std::string kernels;  // empty: every part, every kernel
  Budget budget() const {
    Budget b;
    if (smoke) b.reps = 1, b.min_sample_ns = 0;
    if (full) b.reps = 11, b.min_sample_ns = 5e6;
    return b;
  }
};

inline bool parse_options(int argc, char** argv, Options& o) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--smoke") o.smoke = true;
    else if (a == "--full") o.full = true;
    else if (a == "--stencil-only") o.stencil_only = true;
    else if (a == "--protocols-only") o.protocols_only = true;  // the protocol sweep alone (2 ranks)
    else if (a == "--out" && i + 1 < argc) o.out = argv[++i];
    else if (a == "--kernels" && i + 1 < argc) o.kernels = argv[++i];
    else return false;
  }
  return true;
}

// Whether the DDTBench kernel (name, params) is one --kernels asked for.
inline bool kernel_wanted(const Options& o, const std::string& name, const std::string& params) {
  return o.kernels.empty() || (name + " " + params).find(o.kernels) != std::string::npos;
}

inline std::string size_label(int64_t b) {
  char s[32];
  if (b >= (1 << 20) && b % (1 << 20) == 0) std::snprintf(s, sizeof s, "%lld MiB", (long long)(b >> 20));
  else if (b >= 1024 && b % 1024 == 0) std::snprintf(s, sizeof s, "%lld KiB", (long long)(b >> 10));
  else std::snprintf(s, sizeof s, "%lld B", (long long)b);
  return s;
}

}  // namespace rtbench
