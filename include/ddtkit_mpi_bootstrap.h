/* ddtkit's intra-node runtime started from under mpiexec: header-only, so that libddtkit links
 * no MPI and each program (or the MPI interposer) compiles this against its own MPI.
 *
 *   MPI_Init(&argc, &argv);
 *   ddt_comm_init_mpi(MPI_COMM_WORLD);   collective over the communicator
 *   ... ddt_comm_send / ddt_comm_recv between the processes of this node ...
 *   ddt_comm_finalize();
 *   MPI_Finalize();
 *
 * The communicator is split by node (MPI_Comm_split_type, MPI_COMM_TYPE_SHARED, in the order of
 * the ranks in comm), and each node's processes start one runtime with ddt_comm_init_bootstrap
 * (ddtkit.h), its name broadcast from the node's first process: the runtime's ranks and size are
 * the node-local ones (a process's ddt_comm_rank is its rank in that node's communicator), and
 * every node has its own job. Returns what ddt_comm_init_bootstrap returns, or DDT_ERR_COMM when
 * an MPI call fails. Define DDT_MPI_BOOTSTRAP_PMPI before including it to call the PMPI_ entry
 * points instead (inside an interposer, whose own MPI_ functions must not be re-entered). */
#ifndef DDTKIT_MPI_BOOTSTRAP_H
#define DDTKIT_MPI_BOOTSTRAP_H

#include <mpi.h>

#include "ddtkit.h"

#ifdef DDT_MPI_BOOTSTRAP_PMPI
#define DDT_MPI_BOOTSTRAP_CALL_(f) PMPI_##f
#else
#define DDT_MPI_BOOTSTRAP_CALL_(f) MPI_##f
#endif

static inline int ddt_mpi_bootstrap_bcast_(void *buf, int bytes, void *ctx) {
  return DDT_MPI_BOOTSTRAP_CALL_(Bcast)(buf, bytes, MPI_BYTE, 0, *(MPI_Comm *)ctx) == MPI_SUCCESS ? 0 : 1;
}

/* Starts ddtkit's runtime among the processes of comm, one job per node, as this file's first
 * comment says; collective over comm. */
static inline int ddt_comm_init_mpi(MPI_Comm comm) {
  MPI_Comm node = MPI_COMM_NULL;
  int world_rank = 0, rank = 0, size = 0, rc;
  ddt_bootstrap b;
  if (DDT_MPI_BOOTSTRAP_CALL_(Comm_rank)(comm, &world_rank) != MPI_SUCCESS ||
      DDT_MPI_BOOTSTRAP_CALL_(Comm_split_type)(comm, MPI_COMM_TYPE_SHARED, world_rank, MPI_INFO_NULL, &node) != MPI_SUCCESS)
    return DDT_ERR_COMM;
  if (DDT_MPI_BOOTSTRAP_CALL_(Comm_rank)(node, &rank) != MPI_SUCCESS ||
      DDT_MPI_BOOTSTRAP_CALL_(Comm_size)(node, &size) != MPI_SUCCESS) {
    DDT_MPI_BOOTSTRAP_CALL_(Comm_free)(&node);
    return DDT_ERR_COMM;
  }
  b.rank = rank;
  b.size = size;
  b.ctx = &node;
  b.bcast = ddt_mpi_bootstrap_bcast_;
  rc = ddt_comm_init_bootstrap(&b);
  DDT_MPI_BOOTSTRAP_CALL_(Comm_free)(&node);
  return rc;
}

#endif
