#!/bin/sh
# launch.sh MPIEXEC ARGS...: runs an MPI launcher, and runs it again (at most twice more) when
# the launcher itself failed to start, before any rank ran. Everything else, the exit status
# included, is the launcher's.
#
# Why: Open MPI 5's launcher (prterun) now and then fails at its own start with "The PMIx
# server's listener thread failed to start. We cannot continue." and exits non-zero within
# milliseconds: CI failed on it once (interposer_ompi_staged_runtime_np4, 0.02 s, on ecec03e),
# and other projects' CI meets it too (lfortran/lfortran#8610). No rank ran, so no test outcome
# exists to judge; a second start is the same test run once. Only the launcher's own messages
# below count: a rank's failure, whatever it prints, is never retried.
#
# The launcher's standard error is kept in a file and copied out after it exits (ordering
# against standard output is lost, which ctest's logs do not need).
err=$(mktemp "${TMPDIR:-/tmp}/launch.XXXXXX") || exit 1
trap 'rm -f "$err"' EXIT
try=1
while :; do
  "$@" 2>"$err"
  status=$?
  cat "$err" >&2
  if [ $status -ne 0 ] && [ $try -lt 3 ] &&
     grep -q "The PMIx server's listener thread failed to start" "$err"; then
    echo "launch.sh: the launcher failed at its own start (no rank ran); starting it again ($((try + 1)) of 3)" >&2
    try=$((try + 1))
    continue
  fi
  exit $status
done
