#!/bin/sh
# `ddtkit inspect --help` and `-h` (alone or after other arguments) print exactly what
# `ddtkit help inspect` prints, on stdout, and exit 0; `ddtkit CMD --help` does the same for every
# other command.
# usage: help.sh DDTKIT WORKDIR
ddtkit=$1
work=$2
mkdir -p "$work" || exit 1
failures=0
same() {  # COMMAND ARGS...: the output must be `ddtkit help COMMAND`'s
  cmd=$1
  "$ddtkit" help "$cmd" > "$work/expected" || { echo "FAIL: ddtkit help $cmd"; failures=$((failures + 1)); return; }
  "$ddtkit" "$@" > "$work/out" 2> "$work/err"
  rc=$?
  if [ $rc -ne 0 ] || ! cmp -s "$work/out" "$work/expected" || [ -s "$work/err" ]; then
    echo "FAIL (status $rc): ddtkit $*"
    cat "$work/out" "$work/err"
    failures=$((failures + 1))
  else
    echo "ok: ddtkit $*"
  fi
}
"$ddtkit" help inspect | grep -q -- "--kernel NAME" || { echo "FAIL: ddtkit help inspect lacks its options"; exit 1; }
same inspect --help
same inspect -h
same inspect 'vector(4, 1, 5, double)' --help
same inspect --kernel WRF_x_vec -h
for c in run bench spin; do
  same $c --help
  same $c -h
done
if [ $failures -ne 0 ]; then
  echo "$failures failure(s)"
  exit 1
fi
