// Errors as the MPI reports them: ddtkit's codes become MPI error classes, and an error is
// raised through the communicator's error handler, as the MPI raises its own.
#include "mpi/shim.hpp"

namespace ddtmpi {

// Every ddtkit failure maps to the class an MPI would report for the same mistake; a code the
// interposer does not expect (an overflow, a corrupt type) is its own fault: MPI_ERR_INTERN.
int mpi_error(int ddt_code) {
  switch (ddt_code) {
    case DDT_SUCCESS: return MPI_SUCCESS;
    case DDT_ERR_NO_MEM: return MPI_ERR_NO_MEM;
    case DDT_ERR_TRUNCATE: return MPI_ERR_TRUNCATE;
    case DDT_ERR_TYPE:
    case DDT_ERR_NOT_COMMITTED: return MPI_ERR_TYPE;
    case DDT_ERR_COUNT: return MPI_ERR_COUNT;
    case DDT_ERR_PEER: return MPI_ERR_OTHER;  // the runtime's peer process has died
    case DDT_ERR_DEVICE: return MPI_ERR_OTHER;  // a CUDA call of the GPU layer failed
    default: return MPI_ERR_INTERN;
  }
}

// Where the communicator is not known (MPI_COMM_NULL: a matched-message receive, MPI_Imrecv,
// names only its message) there is no handler to call, and the code is only returned.
int raise(MPI_Comm comm, int code) {
  if (code != MPI_SUCCESS && comm != MPI_COMM_NULL) PMPI_Comm_call_errhandler(comm, code);
  return code;
}

}  // namespace ddtmpi
