// ddtkit's benchmark program against one MPI, compiled once per MPI (ddt_bench_mpich,
// ddt_bench_ompi): the MPI-free benchmark core (runner.hpp, the suites) with this MPI as the
// peer, so every case times ddtkit, that MPI, memcpy and the hand-written loop side by side in
// this process. Results go to DIR/mpich.jsonl or DIR/openmpi.jsonl, which bench/report.py reads.
// `ddtkit bench` runs the same core with no peer.
#include <mpi.h>

#include <cstdio>

#include "mpi_peer.hpp"
#include "runner.hpp"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  BenchOptions o;
  std::string error;
  if (!parse_bench_options(argc, argv, 1, o, &error)) {
    std::fprintf(stderr, "%s: %s\nusage: %s [options]\n%s", argv[0], error.c_str(), argv[0], bench_options_usage);
    MPI_Finalize();
    return 2;
  }
  int rc;
  {
    std::unique_ptr<Peer> peer = make_mpi_peer();  // its types are freed before MPI_Finalize
    rc = run_benchmarks(o, peer.get(), peer->key());
  }
  MPI_Finalize();
  return rc;
}
