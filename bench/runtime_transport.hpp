// The transport of the runtime's benchmarks over ddtkit's own runtime (transfer.hpp's Transport:
// what time_op, the sweeps and Usage call), shared by ddt_runtime_bench and ddt_coll_bench. Every
// call is checked, and a failure ends the process with a message (the launcher then marks the
// rank dead and the other ranks' operations fail with DDT_ERR_PEER).
#pragma once
#include <sched.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "ddtkit.h"

namespace rtbench {

struct Rt {
  using Type = ddt_type;
  using Req = ddt_request;
  int me = 0, np = 1;
  const char* program = "ddtkit benchmark";  // names the failing program in its message
  // Where another communication library shares these processes (runtime_mpi: the MPI), the
  // harness's own waits (barrier, bcast0) test their requests and call idle() between tests, so
  // that a process waiting there keeps the other library progressing (nullptr: the runtime's own
  // blocking calls). Why (runtime_mpi.cpp says more): a process whose MPI requests are complete
  // may still owe the MPI an internal message that only its next MPI call sends; waiting in
  // ddtkit's runtime instead, it left a peer in MPI_Waitall for ever. The timed operations' waits
  // stay ddtkit's own: every series of them starts after a barrier, when no MPI request is open
  // anywhere and nothing is owed.
  void (*idle)() = nullptr;

  [[noreturn]] void fail(const char* what) {
    std::fprintf(stderr, "%s: rank %d: %s\n", program, me, what);
    std::fflush(stderr);
    std::exit(1);  // the launcher marks this rank dead; the others' operations fail with DDT_ERR_PEER
  }
  void ck(int e, const char* what) {
    if (e == DDT_SUCCESS) return;
    char m[160];
    std::snprintf(m, sizeof m, "%s failed: %s", what, ddt_error_string(e));
    fail(m);
  }
  void send(const void* b, int64_t c, Type t, int p, int tag) { ck(ddt_comm_send(b, c, t, p, tag), "ddt_comm_send"); }
  void recv(void* b, int64_t c, Type t, int p, int tag) {
    ddt_status st;
    ck(ddt_comm_recv(b, c, t, p, tag, &st), "ddt_comm_recv");
    ck(st.error, "ddt_comm_recv (status)");
  }
  void isend(const void* b, int64_t c, Type t, int p, int tag, Req* r) {
    ck(ddt_comm_isend(b, c, t, p, tag, r), "ddt_comm_isend");
  }
  void irecv(void* b, int64_t c, Type t, int p, int tag, Req* r) { ck(ddt_comm_irecv(b, c, t, p, tag, r), "ddt_comm_irecv"); }
  void wait(Req* r) {
    ddt_status st;
    ck(ddt_comm_wait(r, &st), "ddt_comm_wait");
    ck(st.error, "ddt_comm_wait (status)");
  }
  void waitall(int n, Req* r) { ck(ddt_comm_waitall(n, r, nullptr), "ddt_comm_waitall"); }
  void barrier() {
    if (!idle) return ck(ddt_comm_barrier(), "ddt_comm_barrier");
    char x = 0;  // every rank tells rank 0 it is here, then rank 0 lets them all go
    if (me != 0) {
      sync_send(&x, 1, DDT_BYTE, 0, kTagBarrier);
      return sync_recv(&x, 1, DDT_BYTE, 0, kTagBarrier);
    }
    for (int p = 1; p < np; ++p) sync_recv(&x, 1, DDT_BYTE, p, kTagBarrier);
    for (int p = 1; p < np; ++p) sync_send(&x, 1, DDT_BYTE, p, kTagBarrier);
  }
  // The harness's messages: as send and recv, or, with idle set, waited for by testing.
  void sync_wait(Req* r) {
    ddt_status st{};
    for (int round = 1;; ++round) {
      int done = 0;
      ck(ddt_comm_test(r, &done, &st), "ddt_comm_test");
      if (done) break;
      idle();
      if (round % 16 == 0) sched_yield();  // more processes than cores: let the peer run
    }
    ck(st.error, "ddt_comm_test (status)");
  }
  void sync_send(const void* b, int64_t c, Type t, int p, int tag) {
    if (!idle) return send(b, c, t, p, tag);
    Req r;
    isend(b, c, t, p, tag, &r);
    sync_wait(&r);
  }
  void sync_recv(void* b, int64_t c, Type t, int p, int tag) {
    if (!idle) return recv(b, c, t, p, tag);
    Req r;
    irecv(b, c, t, p, tag, &r);
    sync_wait(&r);
  }
  // Before a protocol that balances by recent copy work (COOP-load, HYBRID): every rank idles
  // five of the runtime's decay constants (20 ms, protocol.cpp's kLoadDecayNs), so that what the
  // protocol timed before copied (all of it by the receivers, after static RGET or COOP-hca) no
  // longer weighs on its choices. Without it, the protocol sweep's HYBRID, run right after
  // COOP-hca, moved 512 KiB-1 MiB windows at 12.9-33 GB/s on the 16-core machine where COOP-p2p
  // moved 43-48, while a probe that ran HYBRID first split every message evenly: the likely
  // cause, not yet confirmed there (this pause has not run on that machine).
  void forget_history() {  // each rank idles from its own last copy; then all go on together
    usleep(100 * 1000);
    barrier();
  }
  Type bytes() { return DDT_BYTE; }
  int64_t bcast0(int64_t v) {
    if (me == 0)
      for (int p = 1; p < np; ++p) sync_send(&v, 1, DDT_INT64_T, p, kTagBcast);
    else
      sync_recv(&v, 1, DDT_INT64_T, 0, kTagBcast);
    return v;
  }
  void* alloc(int64_t n) {
    void* p = nullptr;
    ck(ddt_alloc(n, &p), "ddt_alloc");
    return p;
  }
  void release(void* p) { ck(ddt_free(p), "ddt_free"); }
  Type vector(int64_t count, int64_t block, int64_t stride) {
    ddt_type t;
    ck(ddt_type_vector(count, block, stride, DDT_BYTE, &t), "ddt_type_vector");
    ck(ddt_type_commit(t), "ddt_type_commit");
    return t;
  }
  Type subarray(const int64_t sizes[3], const int64_t sub[3], const int64_t start[3]) {
    ddt_type t;
    ck(ddt_type_subarray(3, sizes, sub, start, DDT_ORDER_C, DDT_DOUBLE, &t), "ddt_type_subarray");
    ck(ddt_type_commit(t), "ddt_type_commit");
    return t;
  }
  void free_type(Type& t) { ck(ddt_type_free(&t), "ddt_type_free"); }
  void configure(int mech, int exchange) {
    ck(ddt_comm_configure(mech, exchange, 0), "ddt_comm_configure");
    barrier();  // both ends of every transfer use the same design from here on
  }
  ddt_comm_times times() {
    ddt_comm_times x;
    ck(ddt_comm_get_times(&x), "ddt_comm_get_times");
    return x;
  }
  static constexpr int kTagBcast = 30000;
  static constexpr int kTagBarrier = 30004;
};

}  // namespace rtbench
