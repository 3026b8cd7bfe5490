// What every benchmark suite gets: options, the results file, and the MPI peer (this program is
// compiled once per MPI; MPI_Pack/MPI_Unpack of that MPI are the peer methods).
#pragma once
#include <mpi.h>

#include <cstdarg>
#include <cstdio>
#include <string>

#include "gen.hpp"
#include "harness.hpp"
#include "mpi_build.hpp"

struct Context {
  bool full = false, smoke = false;
  Results* results = nullptr;
  std::string mpi;  // the peer's library version, short
  // Repetitions: fewer in a smoke run, more with --full.
  int reps(int normal) const { return smoke ? 3 : full ? normal * 2 + 1 : normal; }
  void progress(const char* fmt, ...) const {
    va_list ap;
    va_start(ap, fmt);
    std::vprintf(fmt, ap);
    va_end(ap);
    std::printf("\n");
    std::fflush(stdout);
  }
};

// The same type built through the MPI from its constructor tree, committed.
inline MPI_Datatype mpi_of(ddt_type t) {
  TPtr n = tnode_from_ddt(t);
  if (!n) return MPI_DATATYPE_NULL;
  int rc;
  MPI_Datatype m = mpi_build(*n, &rc);
  if (m != MPI_DATATYPE_NULL && n->kind != TNode::Basic) MPI_Type_commit(&m);
  return m;
}

inline void mpi_free(MPI_Datatype& m, ddt_type t) {
  int64_t ni, na, nd;
  int comb;
  ddt_type_envelope(t, &ni, &na, &nd, &comb);
  if (m != MPI_DATATYPE_NULL && comb != DDT_COMBINER_NAMED) MPI_Type_free(&m);
}

void suite_ddtbench(const Context& c);
void suite_sweep(const Context& c);
void suite_partial(const Context& c);
void suite_portability(const Context& c);
void suite_commit(const Context& c);
