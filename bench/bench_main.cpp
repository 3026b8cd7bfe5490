// ddtkit's benchmark program, compiled once per MPI (ddt_bench_mpich, ddt_bench_ompi): every
// case times ddtkit, that MPI, memcpy and the hand-written loop side by side in this process.
//   --suite S   ddtbench | sweep | partial | portability | commit | all (default)
//   --full      the papers' sizes (slower)
//   --smoke     tiny sizes, every suite once (make test runs this)
//   --out DIR   where the JSON lines go (default bench/results)
#include <sys/stat.h>

#include <cstring>

#include "context.hpp"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  Context c;
  std::string out = "bench/results", suite = "all";
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--full")) c.full = true;
    else if (!std::strcmp(argv[i], "--smoke")) c.smoke = true;
    else if (!std::strcmp(argv[i], "--suite") && i + 1 < argc) suite = argv[++i];
    else if (!std::strcmp(argv[i], "--out") && i + 1 < argc) out = argv[++i];
  }
  char version[MPI_MAX_LIBRARY_VERSION_STRING];
  int len;
  MPI_Get_library_version(version, &len);
  std::string v(version);
  v = v.substr(0, v.find_first_of(",\n"));
  while (v.find("  ") != std::string::npos) v.erase(v.find("  "), 1);
  v.erase(0, v.find_first_not_of(' '));
  c.mpi = v.rfind("MPICH", 0) == 0 ? "MPICH " + v.substr(v.find_last_of(' ') + 1) : v;
  mkdir(out.c_str(), 0755);
  std::string file = out + "/" + (c.mpi.rfind("MPICH", 0) == 0 ? "mpich" : "openmpi") + ".jsonl";
  Results r(file, c.mpi);
  if (!r.ok()) {
    std::fprintf(stderr, "cannot write %s\n", file.c_str());
    return 1;
  }
  c.results = &r;
  c.progress("== ddtkit benchmarks against %s%s -> %s", c.mpi.c_str(), c.full ? " (full)" : c.smoke ? " (smoke)" : "", file.c_str());
  struct { const char* name; void (*run)(const Context&); } suites[] = {
      {"ddtbench", suite_ddtbench}, {"sweep", suite_sweep}, {"partial", suite_partial},
      {"portability", suite_portability}, {"commit", suite_commit}};
  for (auto& s : suites)
    if (suite == "all" || suite == s.name) {
      double t0 = now_ns();
      s.run(c);
      c.progress("   %s done in %.1f s", s.name, (now_ns() - t0) * 1e-9);
    }
  MPI_Finalize();
  return 0;
}
