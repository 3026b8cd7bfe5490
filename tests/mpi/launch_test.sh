#!/bin/sh
# tools/launch.sh against fake launchers: one that fails at its own start twice, then runs (started
# three times, its status and output kept); one that always does (given up after three starts,
# its failing status kept); one whose rank fails with the same words on standard output and
# status 1 (started once: only the launcher's standard error counts); one that exits 3 (started once).
#   launch_test.sh LAUNCH_SH
set -u
launch=$1
work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT
fail() { echo "launch_test: $*" >&2; exit 1; }
cat > "$work/fake" <<'SH'
#!/bin/sh
# fake MODE COUNTER: counts its starts in COUNTER
n=$(( $(cat "$2" 2>/dev/null || echo 0) + 1 )); echo $n > "$2"
msg="The PMIx server's listener thread failed to start. We cannot"
case $1 in
  flaky) [ $n -le 2 ] && { echo "$msg" >&2; exit 1; }; echo "ran"; exit 0 ;;
  broken) echo "$msg" >&2; exit 1 ;;
  rank) echo "$msg"; exit 1 ;;
  status) exit 3 ;;
esac
SH
run() {  # run MODE: sets out, status, starts
  rm -f "$work/n"
  out=$(sh "$launch" sh "$work/fake" "$1" "$work/n" 2>"$work/err"); status=$?
  starts=$(cat "$work/n")
}
run flaky; [ "$status" -eq 0 ] && [ "$out" = ran ] && [ "$starts" -eq 3 ] || fail "flaky: status $status, '$out', $starts starts"
grep -q "starting it again (3 of 3)" "$work/err" || fail "flaky: no retry message"
run broken; [ "$status" -eq 1 ] && [ "$starts" -eq 3 ] || fail "broken: status $status, $starts starts"
run rank; [ "$status" -eq 1 ] && [ "$starts" -eq 1 ] || fail "rank: status $status, $starts starts"
run status; [ "$status" -eq 3 ] && [ "$starts" -eq 1 ] || fail "status: status $status, $starts starts"
echo "launch_test: ok"
