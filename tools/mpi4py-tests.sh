#!/bin/sh
# The datatype and point-to-point tests of mpi4py's own suite, under the interposer with MPICH:
#   tools/mpi4py-tests.sh VENV LIBDDTKIT_MPI
# VENV holds mpi4py (the wheel) and, in mpi4py-tests/, the test folder of the same version's
# source distribution (both put there by `make deps`). Exits non-zero if any test fails or if
# the interposer is not what MPI_Type_commit binds to.
set -eu
venv=$1
lib=$2
tests=$venv/mpi4py-tests/test
cd "$tests"
# The interposer must be the one answering: a committed vector must be logged by it.
log=$("$venv/bin/mpiexec" -n 1 -genv LD_PRELOAD "$lib" -genv DDTKIT_VERBOSE 1 "$venv/bin/python" -c \
  "from mpi4py import MPI; MPI.DOUBLE.Create_vector(3, 1, 2).Commit().Free()" 2>&1)
case "$log" in
  *"ddtkit-mpi: datatype"*"(vector): packed by ddtkit"*) ;;
  *) echo "the interposer did not see mpi4py's datatype: $log"; exit 1 ;;
esac
for t in test_datatype test_p2p_buf test_p2p_buf_matched test_pack test_util_dtlib test_msgspec; do
  echo "== mpi4py $t, 2 ranks, under $lib"
  "$venv/bin/mpiexec" -n 2 -genv LD_PRELOAD "$lib" "$venv/bin/python" main.py -q "$t"
done
