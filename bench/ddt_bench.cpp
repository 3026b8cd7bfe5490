// ddtkit's benchmark program. Suites so far:
//   commit  create + commit + free of every DDTBench type (median of repetitions)
// Results go to stdout and, as Markdown, to bench/results/.
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "kernels.hpp"

namespace {

double now_us() {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

std::string machine() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown CPU";
}

void commit_suite(const std::string& outdir, int reps) {
  std::printf("[commit] create + commit + free of every DDTBench type, median of %d\n", reps);
  auto ks = ddtbench_kernels(false);
  std::string md = "# Commit cost of the DDTBench types\n\nMachine: " + machine() +
                   ". Median of " + std::to_string(reps) +
                   " repetitions of create + commit + free (the type only; arrays and index lists exist "
                   "before). Target (issue 3): under 5 us plus 20 ns per index-list entry.\n\n"
                   "| kernel | params | median us | index entries | budget us | within |\n|---|---|---|---|---|---|\n";
  for (auto& k : ks) {
    std::vector<double> t;
    for (int r = 0; r < reps; ++r) {
      double t0 = now_us();
      k->create_commit_free();
      t.push_back(now_us() - t0);
    }
    double m = median(t), budget = 5.0 + 0.020 * k->index_entries;
    char row[256];
    std::snprintf(row, sizeof row, "| %s | %s | %.2f | %lld | %.1f | %s |\n", k->name.c_str(), k->params.c_str(), m,
                  (long long)k->index_entries, budget, m <= budget ? "yes" : "NO");
    md += row;
    std::printf("  %-14s %-12s %8.2f us  (budget %.1f us)\n", k->name.c_str(), k->params.c_str(), m, budget);
  }
  std::ofstream(outdir + "/commit.md") << md;
}

}  // namespace

int main(int argc, char** argv) {
  std::string outdir = "bench/results", suite = "all";
  int reps = 201;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--out") && i + 1 < argc) outdir = argv[++i];
    else if (!std::strcmp(argv[i], "--suite") && i + 1 < argc) suite = argv[++i];
    else if (!std::strcmp(argv[i], "--smoke")) reps = 5;
  }
  mkdir(outdir.c_str(), 0755);
  if (suite == "all" || suite == "commit") commit_suite(outdir, reps);
  std::printf("results in %s/\n", outdir.c_str());
  return 0;
}
