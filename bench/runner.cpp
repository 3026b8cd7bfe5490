#include "runner.hpp"

#include <sys/stat.h>

#include <cstdio>
#include <cstring>

#include "context.hpp"

namespace {

struct Suite {
  const char* name;
  void (*run)(const Context&);
};
const Suite suites[] = {{"ddtbench", suite_ddtbench}, {"sweep", suite_sweep}, {"partial", suite_partial},
                        {"portability", suite_portability}, {"commit", suite_commit}};

bool known_suite(const std::string& s) {
  if (s == "all") return true;
  for (const Suite& x : suites)
    if (s == x.name) return true;
  return false;
}

}  // namespace

const char* const bench_options_usage =
    "  --suite S   ddtbench | sweep | partial | portability | commit | all (default)\n"
    "  --full      the papers' sizes (slower)\n"
    "  --smoke     tiny sizes, every suite once (the tests run this)\n"
    "  --out DIR   where the JSON lines go (default bench/results)\n";

bool parse_bench_options(int argc, char** argv, int first, BenchOptions& o, std::string* error) {
  for (int i = first; i < argc; ++i) {
    const bool has_value = i + 1 < argc;
    if (!std::strcmp(argv[i], "--full")) o.full = true;
    else if (!std::strcmp(argv[i], "--smoke")) o.smoke = true;
    else if (!std::strcmp(argv[i], "--suite") && has_value) o.suite = argv[++i];
    else if (!std::strcmp(argv[i], "--out") && has_value) o.out = argv[++i];
    else {
      *error = std::string(argv[i]) + (!std::strcmp(argv[i], "--suite") || !std::strcmp(argv[i], "--out")
                                           ? " needs a value" : ": unknown option");
      return false;
    }
  }
  if (!known_suite(o.suite)) {
    *error = "unknown suite " + o.suite;
    return false;
  }
  return true;
}

int run_benchmarks(const BenchOptions& o, Peer* peer, const std::string& key) {
  Context c;
  c.full = o.full;
  c.smoke = o.smoke;
  c.peer = peer;
  c.peer_name = peer ? peer->name() : "none";
  mkdir(o.out.c_str(), 0755);
  const std::string file = o.out + "/" + key + ".jsonl";
  Results r(file, c.peer_name);
  if (!r.ok()) {
    std::fprintf(stderr, "cannot write %s\n", file.c_str());
    return 1;
  }
  c.results = &r;
  const char* size = c.full ? " (full)" : c.smoke ? " (smoke)" : "";
  if (peer) c.progress("== ddtkit benchmarks against %s%s -> %s", c.peer_name.c_str(), size, file.c_str());
  else c.progress("== ddtkit benchmarks against memcpy and the hand-written loop (no MPI peer)%s -> %s", size, file.c_str());
  for (const Suite& s : suites)
    if (o.suite == "all" || o.suite == s.name) {
      double t0 = now_ns();
      s.run(c);
      c.progress("   %s done in %.1f s", s.name, (now_ns() - t0) * 1e-9);
    }
  return 0;
}
