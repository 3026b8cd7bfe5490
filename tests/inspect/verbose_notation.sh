#!/bin/sh
# The interposer's DDTKIT_VERBOSE=1 log carries each translated datatype in the notation: a user
# copies it into `ddtkit inspect`. Runs an MPI test program under the interposer with the log on,
# then gives every logged notation to `ddtkit inspect` and checks that it parses to the size and
# extent the log states for that datatype (the MPI's own; where an MPI's bounds differ from the
# standard's, the notation carries them as resized(...)).
# usage: verbose_notation.sh DDTKIT WORKDIR MPIEXEC [mpiexec args: -n N, env passing, program, its args]
ddtkit=$1
work=$2
shift 2
mkdir -p "$work" || exit 1
DDTKIT_VERBOSE=1 "$@" > "$work/run.out" 2> "$work/log" || { echo "the MPI run failed"; tail -20 "$work/log"; exit 1; }
grep '^ddtkit-mpi: datatype .* notation: ' "$work/log" | grep -v '\.\.\.\[cut: ' | sort -u > "$work/lines"
n=$(wc -l < "$work/lines")
[ "$n" -ge 10 ] || { echo "only $n logged notations"; head -5 "$work/log"; exit 1; }
bad=0
while IFS= read -r line; do
  text=${line#* notation: }
  size=$(echo "$line" | sed -n 's/.*, size \(-\?[0-9]*\), extent \(-\?[0-9]*\).*/\1/p')
  extent=$(echo "$line" | sed -n 's/.*, size \(-\?[0-9]*\), extent \(-\?[0-9]*\).*/\2/p')
  out=$("$ddtkit" inspect "$text" --pieces 0) || { echo "does not parse: $text"; bad=$((bad + 1)); continue; }
  got_size=$(echo "$out" | sed -n 's/^size: *\(-\?[0-9]*\) B$/\1/p')
  got_extent=$(echo "$out" | sed -n 's/^lb, extent: *-\?[0-9]*, \(-\?[0-9]*\) B$/\1/p')
  if [ "$got_size" != "$size" ] || [ "$got_extent" != "$extent" ]; then
    echo "differs: log size $size extent $extent, inspect size $got_size extent $got_extent: $text"
    bad=$((bad + 1))
  fi
done < "$work/lines"
echo "$n logged notations, $bad wrong"
[ "$bad" -eq 0 ]
