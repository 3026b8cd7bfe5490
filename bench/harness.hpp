// Measuring side by side: the methods of one case run interleaved, repetition after
// repetition, in one process, and each reports the median time per call. A sample repeats a
// call until it lasts long enough for the clock, so tiny operations are timed fairly too.
#pragma once
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

struct Method {
  std::string name;
  std::function<void()> run;
};

struct Timing {
  std::string name;
  double ns;  // median per call
};

inline double now_ns() {
  return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

inline double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// reps samples of each method, interleaved; each sample lasts at least min_sample_ns.
// settle: run the method once, untimed, before each sample. For operations larger than the
// caches a sample is one call, and without it each call would start with the previous method's
// dirty lines in the cache and pay for their write-back: a method that streams its output past
// the cache then makes the next one look slow, and one that writes through the cache makes it
// look slow in turn (64 MiB sweep, 64 KiB blocks: the hand loop's ratio to memcpy moved by 0.1-0.2
// with ddtkit's store kind). Settled, every timed call follows a call of its own method, which is
// the state a program that repeats the operation runs in.
inline std::vector<Timing> measure(const std::vector<Method>& ms, int reps, double min_sample_ns = 2e5,
                                   bool settle = false) {
  std::vector<int64_t> iters(ms.size(), 1);
  for (size_t m = 0; m < ms.size(); ++m) {  // warm up and calibrate
    double t0 = now_ns();
    ms[m].run();
    double one = std::max(1.0, now_ns() - t0);
    iters[m] = std::max<int64_t>(1, static_cast<int64_t>(min_sample_ns / one));
  }
  std::vector<std::vector<double>> samples(ms.size());
  for (int r = 0; r < reps; ++r)
    for (size_t m = 0; m < ms.size(); ++m) {
      if (settle) ms[m].run();
      double t0 = now_ns();
      for (int64_t i = 0; i < iters[m]; ++i) ms[m].run();
      samples[m].push_back((now_ns() - t0) / iters[m]);
    }
  std::vector<Timing> out;
  for (size_t m = 0; m < ms.size(); ++m) out.push_back({ms[m].name, median_of(samples[m])});
  return out;
}

// Results as JSON lines, one per (case, method), for bench/report.py.
class Results {
 public:
  explicit Results(const std::string& path, std::string mpi) : f_(std::fopen(path.c_str(), "w")), mpi_(std::move(mpi)) {}
  ~Results() {
    if (f_) std::fclose(f_);
  }
  void add(const std::string& suite, const std::string& kase, const std::string& params, const std::string& op,
           int64_t bytes, const std::vector<Timing>& ts, const std::string& extra = "") {
    for (const Timing& t : ts)
      std::fprintf(f_, "{\"mpi\": \"%s\", \"suite\": \"%s\", \"case\": \"%s\", \"params\": \"%s\", \"op\": \"%s\", "
                       "\"method\": \"%s\", \"bytes\": %lld, \"ns\": %.1f%s%s}\n",
                   mpi_.c_str(), suite.c_str(), kase.c_str(), params.c_str(), op.c_str(), t.name.c_str(),
                   (long long)bytes, t.ns, extra.empty() ? "" : ", ", extra.c_str());
    std::fflush(f_);
  }
  bool ok() const { return f_ != nullptr; }

 private:
  FILE* f_;
  std::string mpi_;
};

inline double find(const std::vector<Timing>& ts, const std::string& name) {
  for (const Timing& t : ts)
    if (t.name == name) return t.ns;
  return 0;
}
