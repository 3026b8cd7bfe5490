// The benchmark core's entry point, shared by the per-MPI programs (ddt_bench_<mpi>) and the
// ddtkit command (`ddtkit bench`): the options they accept, and one run of the chosen suites
// into DIR/<key>.jsonl.
#pragma once
#include <string>

#include "peer.hpp"

struct BenchOptions {
  bool full = false;   // the papers' sizes (slower)
  bool smoke = false;  // tiny sizes, every suite once (the tests run this)
  std::string suite = "all";
  std::string out = "bench/results";
};

// The options' usage lines, for a program's help text.
extern const char* const bench_options_usage;

// Reads argv[first..argc) into o. On an unknown or incomplete option, or an unknown suite,
// returns false with the reason in *error.
bool parse_bench_options(int argc, char** argv, int first, BenchOptions& o, std::string* error);

// Runs o's suites against peer (nullptr: ddtkit, memcpy and the hand loop only), writing JSON
// lines to o.out/<key>.jsonl and progress to stdout. Returns 0, or 1 if the file cannot be written.
int run_benchmarks(const BenchOptions& o, Peer* peer, const std::string& key);
