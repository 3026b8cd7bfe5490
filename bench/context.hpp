// What every benchmark suite gets: options, the results file, and the peer (nullptr when the
// run has none: then each case times ddtkit, memcpy and the hand-written loop only). The suites
// include no MPI header; the peer is an interface (peer.hpp).
#pragma once
#include <cstdarg>
#include <cstdio>
#include <string>

#include "harness.hpp"
#include "peer.hpp"

struct Context {
  bool full = false, smoke = false;
  Results* results = nullptr;
  Peer* peer = nullptr;
  std::string peer_name;  // peer->name(), or "none"
  // Repetitions: fewer in a smoke run, more with --full.
  int reps(int normal) const { return smoke ? 3 : full ? normal * 2 + 1 : normal; }
  // The peer's build of t, or nullptr where there is no peer or it cannot build t.
  std::unique_ptr<PeerType> peer_type(ddt_type t) const { return peer ? peer->type_of(t) : nullptr; }
  void progress(const char* fmt, ...) const {
    va_list ap;
    va_start(ap, fmt);
    std::vprintf(fmt, ap);
    va_end(ap);
    std::printf("\n");
    std::fflush(stdout);
  }
};

void suite_ddtbench(const Context& c);
void suite_sweep(const Context& c);
void suite_partial(const Context& c);
void suite_portability(const Context& c);
void suite_commit(const Context& c);
