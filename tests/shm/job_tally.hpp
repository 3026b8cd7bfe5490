// The bookkeeping the runtime's multi-process tests share (comm_test, protocol_test, coll_test):
// every check counted per rank, the first 25 failures printed with the program, the rank and the
// test's own context, and the closing line "<program>: N passed, M failed" that rank 0 prints
// once it has every rank's counts, gathered over plain sends (not over what is under test).
#pragma once
#include <cstdarg>
#include <cstdint>
#include <cstdio>

#include "ddtkit.h"

namespace jobtest {

struct Tally {
  const char* program = "test";
  int rank = -1;
  int64_t passed = 0, failed = 0;
};
inline Tally tally;

inline const char* err_name(int e) { return ddt_error_string(e) ? ddt_error_string(e) : "?"; }

// Counts one check; a failure prints "<program>: rank R FAIL (<context>): <message>".
inline bool vrecord(bool ok, const char* context, const char* fmt, va_list ap) {
  if (ok) {
    ++tally.passed;
    return true;
  }
  if (++tally.failed <= 25) {
    char msg[1024];
    std::vsnprintf(msg, sizeof msg, fmt, ap);
    std::fprintf(stderr, "%s: rank %d FAIL (%s): %s\n", tally.program, tally.rank, context, msg);
    if (tally.failed == 25) std::fprintf(stderr, "%s: rank %d: further failures not printed\n", tally.program, tally.rank);
  }
  return false;
}

// Gathers the counts on rank 0, finalizes the runtime (a failure counts), prints the closing line
// on rank 0; the process's exit status: rank 0's judges the whole job, the others their own.
inline int close(int size) {
  int64_t counts[2] = {tally.passed, tally.failed};
  if (tally.rank != 0) {
    const int e = ddt_comm_send(counts, 2, DDT_INT64_T, 0, 32700);
    if (e != DDT_SUCCESS)
      std::fprintf(stderr, "%s: rank %d: sending the counts returned %s\n", tally.program, tally.rank, err_name(e));
  } else {
    for (int r = 1; r < size; ++r) {
      int64_t c[2] = {0, 1};
      const int e = ddt_comm_recv(c, 2, DDT_INT64_T, r, 32700, nullptr);
      if (e != DDT_SUCCESS) {
        std::fprintf(stderr, "%s: receiving rank %d's counts returned %s\n", tally.program, r, err_name(e));
        c[0] = 0, c[1] = 1;
      }
      counts[0] += c[0], counts[1] += c[1];
    }
  }
  const int e = ddt_comm_finalize();
  if (e != DDT_SUCCESS) {
    std::fprintf(stderr, "%s: rank %d: ddt_comm_finalize returned %s\n", tally.program, tally.rank, err_name(e));
    ++counts[1], ++tally.failed;
  }
  if (tally.rank == 0)
    std::printf("%s: %lld passed, %lld failed\n", tally.program, (long long)counts[0], (long long)counts[1]);
  return (tally.rank == 0 ? counts[1] : tally.failed) ? 1 : 0;
}

}  // namespace jobtest
