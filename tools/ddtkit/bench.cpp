// `ddtkit bench`: the benchmark core (bench/runner.hpp) with no MPI peer: every case times
// ddtkit, memcpy of the same bytes and the hand-written loop side by side in this process, and
// writes JSON lines to DIR/ddtkit.jsonl (the "mpi" field is "none"). The per-MPI programs
// ddt_bench_<mpi> run the same suites with an MPI beside them (make bench).
#include <cstdio>
#include <string>

#include "commands.hpp"
#include "runner.hpp"

const char* bench_details() { return bench_options_usage; }

int bench_command(int argc, char** argv) {
  BenchOptions o;
  std::string error;
  if (!parse_bench_options(argc, argv, 1, o, &error)) {
    std::fprintf(stderr, "ddtkit bench: %s\n", error.c_str());
    print_usage("bench", true);
    return 2;
  }
  return run_benchmarks(o, nullptr, "ddtkit");
}
