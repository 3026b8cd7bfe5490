#!/bin/sh
# `ddtkit inspect` on invalid input: every case must exit with status 2 (not 0, not 1, not a
# signal) and say what is wrong on stderr, prefixed "ddtkit inspect:".
# usage: bad_invocations.sh DDTKIT WORKDIR
ddtkit=$1
work=$2
mkdir -p "$work" || exit 1
printf 'vector(4, 1, 5, double)' > "$work/good.ddt"
printf 'DDTL\001garbage' > "$work/corrupt.layout"
head -c 3000 /dev/urandom > "$work/random.bin" 2>/dev/null || printf 'x' > "$work/random.bin"
failures=0
expect2() {
  "$ddtkit" inspect "$@" > "$work/out" 2> "$work/err"
  rc=$?
  if [ $rc -ne 2 ] || ! grep -q '^ddtkit inspect:' "$work/err"; then
    echo "FAIL (status $rc): ddtkit inspect $*"
    cat "$work/err"
    failures=$((failures + 1))
  else
    echo "ok: ddtkit inspect $* -> $(head -n 1 "$work/err")"
  fi
}
expect2
expect2 --no-such-option
expect2 'vector(4, 1, 5 double)'
expect2 'vector(-4, 1, 5, double)'
expect2 'doubel'
expect2 'contiguous(99999999999999999999, int)'
expect2 'contiguous(9223372036854775807, double)'
expect2 ''
expect2 -f "$work/no-such-file"
expect2 -f "$work/random.bin"
expect2 --kernel NO_SUCH_KERNEL
expect2 --kernel NAS_LU_y --params N=13
expect2 --params N=12 'int'
expect2 --layout "$work/no-such-file"
expect2 --layout "$work/corrupt.layout"
expect2 --layout "$work/random.bin"
expect2 --layout "$work/good.ddt"
expect2 'int' --count 0
expect2 'int' --count x
expect2 'int' --count
expect2 'int' --pieces -1
expect2 'int' --cell 0
expect2 'int' --px 0
expect2 'int' --px 65
expect2 'int' -f "$work/good.ddt"
expect2 'contiguous(0, byte)' --png "$work/empty.png"
expect2 'contiguous(1152921504606846976, byte)' --count 16
expect2 'int' --png "$work/x.png" --cell 1 --width 1 --count 100000
# A picture that cannot be written is a different failure: status 1.
"$ddtkit" inspect int --png "$work/no-such-dir/x.png" > /dev/null 2>&1
rc=$?
[ $rc -eq 1 ] || { echo "FAIL: unwritable --png gave status $rc, expected 1"; failures=$((failures + 1)); }
echo "$failures failures"
[ $failures -eq 0 ]
