// The peer column of the benchmarks: another datatype engine (an MPI) measured beside ddtkit in
// the same process. The suites know only this interface, so the benchmark core links no MPI;
// each ddt_bench_<mpi> program plugs in its MPI (mpi_peer.cpp), the ddtkit command runs with
// none. A peer builds the same type through its own constructors, from the ddtkit type's
// constructor tree, so both engines pack one layout built by the same calls.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "ddtkit.h"

// One type as the peer built it, committed; the peer's handle is freed with this object.
// pack and unpack have MPI_Pack / MPI_Unpack semantics: *position is the byte offset in the
// packed buffer, advanced by the call. A null buffer means absolute addresses (MPI_BOTTOM).
class PeerType {
 public:
  virtual ~PeerType() = default;
  virtual bool pack(const void* in, int64_t count, void* out, int64_t outsize, int64_t* position) = 0;
  virtual bool unpack(const void* in, int64_t insize, int64_t* position, void* out, int64_t count) = 0;
};

class Peer {
 public:
  virtual ~Peer() = default;
  // The library and version, short ("MPICH 5.0.2"): the "mpi" field of every result line.
  virtual std::string name() const = 0;
  // The results file's name without .jsonl ("mpich", "openmpi"), which bench/report.py reads.
  virtual std::string key() const = 0;
  // t (committed) rebuilt through the peer's constructors; nullptr if the peer cannot build it.
  virtual std::unique_ptr<PeerType> type_of(ddt_type t) = 0;
  // Create + commit + free of t's rebuild through the peer, one call per run (the commit suite);
  // the constructor tree is read once, here. Empty if the peer cannot build it.
  virtual std::function<void()> create_commit_free(ddt_type t) = 0;
};
