// The MPI this program is compiled against, as the benchmarks' peer (peer.hpp): types rebuilt
// from ddtkit's constructor tree with that MPI's constructors (tests/support/mpi_build.hpp),
// MPI_Pack / MPI_Unpack on MPI_COMM_SELF. Compiled once per MPI; MPI must be initialised.
#pragma once
#include <memory>

#include "peer.hpp"

std::unique_ptr<Peer> make_mpi_peer();
