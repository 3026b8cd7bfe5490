#!/bin/sh
# mpi4py's whole test suite (every test file, 2 ranks, numpy installed) natively and under the
# interposer, for one MPI; `make test-full` runs it for MPICH and for Open MPI:
#   tools/mpi4py-full.sh VENV LIBDDTKIT_MPI TESTDIR OUTDIR
# VENV holds that MPI, mpi4py and numpy; TESTDIR is the test folder of mpi4py's source
# distribution (make deps puts it in .venv-mpich/mpi4py-tests/test). Both runs' per-test outcomes
# (every "name ... ok / FAIL / ERROR / skipped" line of both ranks) must be the same: the
# interposer may not change what the suite finds about the MPI (natively, MPICH 5.0.2 fails 8
# Fortran-ABI queries of test_mpiabi; those must fail alike). Exits 1 on any difference, on a run
# that ends without the suite's summary (a crash) or past 20 minutes (a hang). Logs in OUTDIR.
set -eu
mkdir -p "$4"
venv=$(cd "$1" && pwd) lib=$2 tests=$(cd "$3" && pwd) out=$(cd "$4" && pwd)
case "$lib" in /*) ;; *) lib=$(pwd)/$lib ;; esac
# with_lib N ARGS...: N ranks under the interposer (DDTKIT_VERBOSE=$V in the ranks, default 0),
# stopped after 20 minutes. $launch goes before the launcher: tools/launch.sh for Open MPI's.
launch=""
if [ -x "$venv/bin/mpichversion" ]; then
  mpi=MPICH
  with_lib() { n=$1; shift; timeout 1200 "$venv/bin/mpiexec" -n "$n" -genv LD_PRELOAD "$lib" -genv DDTKIT_VERBOSE "${V:-0}" "$@"; }
else
  mpi="Open MPI"
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
  export PRTE_MCA_rmaps_default_mapping_policy=:oversubscribe
  # Open MPI's UCX one-sided component prints an error (with the process id) into the middle of
  # each RMA test's line where no UCX device exists; it is left out, natively and interposed alike.
  export OMPI_MCA_osc=^ucx
  launch="sh $(cd "$(dirname "$0")" && pwd)/launch.sh"
  with_lib() { n=$1; shift; timeout 1200 $launch "$venv/bin/mpiexec" -n "$n" -x LD_PRELOAD="$lib" -x DDTKIT_VERBOSE="${V:-0}" "$@"; }
fi
cd "$tests"
# mpi4py must load this MPI, and the interposer must be what MPI_Type_commit binds to.
probe=$(V=1 with_lib 1 "$venv/bin/python" -c \
  "from mpi4py import MPI; print(MPI.Get_library_version()); MPI.DOUBLE.Create_vector(3, 1, 2).Commit().Free()" 2>&1 || true)
case "$probe" in
  *"$mpi"*) ;;
  *) echo "mpi4py-full: mpi4py does not load $mpi: $probe"; exit 1 ;;
esac
case "$probe" in
  *"ddtkit-mpi: datatype"*"(vector): packed by ddtkit"*) ;;
  *) echo "mpi4py-full: the interposer did not see mpi4py's datatype: $probe"; exit 1 ;;
esac
# Each rank writes its own log: unittest writes "name ... " and the outcome separately, and two
# ranks on one stdout interleave within lines.
rank_log='exec "$0" main.py -v > "$1.rank${PMI_RANK:-$OMPI_COMM_WORLD_RANK}.log" 2>&1'
status=0
for mode in native interposed; do
  start=$(date +%s)
  rm -f "$out/$mode".rank*.log
  set +e
  if [ "$mode" = native ]; then
    timeout 1200 $launch "$venv/bin/mpiexec" -n 2 sh -c "$rank_log" "$venv/bin/python" "$out/$mode" > "$out/$mode.log" 2>&1
  else
    with_lib 2 sh -c "$rank_log" "$venv/bin/python" "$out/$mode" > "$out/$mode.log" 2>&1
  fi
  rc=$?
  set -e
  for r in 0 1; do
    log="$out/$mode.rank$r.log"
    summary=$(grep -E "^(OK|FAILED)" "$log" 2>/dev/null | head -1 || true)
    echo "mpi4py-full, $mpi, $mode, rank $r: $(grep -E '^Ran [0-9]+ tests' "$log" 2>/dev/null | head -1), ${summary:-no summary} (exit $rc, $(( $(date +%s) - start )) s)"
    if [ -z "$summary" ] || [ "$rc" -eq 124 ]; then
      echo "mpi4py-full: rank $r's $mode run crashed or hung; the end of $log and of $out/$mode.log:"
      tail -20 "$log" "$out/$mode.log" 2>/dev/null || true
      status=1
    fi
  done
  for r in 0 1; do grep -E ' \.\.\. ' "$out/$mode.rank$r.log" 2>/dev/null | sed "s/^ */$r: /" || true; done | sort > "$out/$mode.outcomes"
done
if ! diff "$out/native.outcomes" "$out/interposed.outcomes" > "$out/diff.txt"; then
  echo "mpi4py-full: per-test outcomes differ under the interposer ($mpi):"
  head -40 "$out/diff.txt"
  status=1
fi
[ "$status" -eq 0 ] && echo "mpi4py-full: $mpi: the same $(wc -l < "$out/native.outcomes") test outcomes natively and under the interposer"
exit "$status"
