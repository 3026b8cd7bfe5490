#!/bin/sh
# A rank killed mid-transfer under the interposer (issue 11): runs peer_death_test through the
# launcher command given and passes when the survivor wrote, to RESULT, that its MPI_Send or
# MPI_Recv returned an error. The launcher's own status is non-zero (a rank was killed) and is
# only printed. A hang is the test's timeout (ctest) or peer_death_test's own alarm.
#   peer_death.sh RESULT MPIEXEC ARGS... sh peer_death.sh --rank PROG --victim receiver|sender --result RESULT
# With --rank it is each rank's wrapper instead: MPICH's launcher (hydra, -disable-auto-cleanup)
# tells the survivors of a dead process with SIGUSR1, which ends a process without a handler, and
# in about one run of three it ended the survivor even though the test program ignores SIGUSR1
# from its first message on (a process that is the launcher's own child and dies of a signal
# seems to take its siblings with it); one shell between them, ignoring SIGUSR1 from the start,
# made 16 of 16 runs report.
if [ "$1" = "--rank" ]; then
  shift
  trap '' USR1
  "$@"
  exit $?
fi
result=$1
shift
rm -f "$result"
"$@"
status=$?
if grep -q 'peer_death_test: peer failure detected' "$result" 2>/dev/null; then
  echo "peer_death.sh: ok (launcher status $status): $(cat "$result")"
  exit 0
fi
echo "peer_death.sh: the survivor reported no failed call (launcher status $status)" >&2
exit 1
