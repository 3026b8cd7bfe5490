#!/bin/sh
# A killed peer (issue 10): rank 1 of a 2-rank comm_test job dies abruptly (`kill`: SIGKILL,
# `exit`: _exit(3)) while rank 0 waits in ddt_comm_recv from it. Passes when rank 0 reported
# the failure (`comm_test: peer failure detected`, its receive returned DDT_ERR_PEER within
# seconds), the launcher's status is non-zero and its stderr names rank 1.
# With a protocol and a role (issue 15), rank 1 dies instead in the middle of a 128 MiB transfer
# of that rendezvous protocol (DDTKIT_PROTOCOL), as its receiver or its sender, and rank 0's send
# or receive must fail with DDT_ERR_PEER (comm_test's --kill-role).
#   killpeer.sh <ddtkit> <comm_test> <kill|exit> [<rget|rput|coop> <receiver|sender>]
ddtkit=$1 prog=$2 how=${3:-kill} protocol=$4 role=$5
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
if [ -n "$protocol" ]; then
  DDTKIT_PROTOCOL=$protocol "$ddtkit" run -n 2 "$prog" --mode killpeer --kill "$how" --kill-role "$role" >"$out" 2>"$err"
else
  "$ddtkit" run -n 2 "$prog" --mode killpeer --kill "$how" >"$out" 2>"$err"
fi
status=$?
cat "$out"
cat "$err" >&2
fail=0
if [ "$status" -eq 0 ]; then
  echo "killpeer.sh: the launcher exited with status 0 although rank 1 died" >&2
  fail=1
fi
if ! grep -Eq 'rank[^0-9]{0,3}1([^0-9]|$)' "$err"; then
  echo "killpeer.sh: the launcher's stderr does not name rank 1" >&2
  fail=1
fi
if ! grep -q 'comm_test: peer failure detected' "$out"; then
  echo "killpeer.sh: rank 0 did not report the peer failure" >&2
  fail=1
fi
if ! grep -q 'comm_test: [0-9]* passed, 0 failed' "$out"; then
  echo "killpeer.sh: rank 0's checks did not all pass" >&2
  fail=1
fi
[ "$fail" -eq 0 ] && echo "killpeer.sh: ok (launcher status $status)"
exit "$fail"
