#!/bin/sh
# `ddtkit inspect --kernel NAME` shows the same type in every run, with small bounds: each kernel
# (its first parameter set; every set of the kernels built on absolute addresses) is inspected
# twice, in two processes whose arrays lie at different addresses, and the two outputs must
# agree on notation, size, bounds and hash, with every bound below 2^32. The kernels whose
# displacements are addresses (DDTBench's MPI_BOTTOM ones: WRF_*, LAMMPS_*, SPECFEM3D_cm) must
# say that they are shown rebased, and one's picture must show its data (at least 1% coloured
# pixels; drawn at their addresses it was one grey strip of terabytes).
# usage: kernels_stable.sh DDTKIT WORKDIR PYTHON CHECK_PNG
ddtkit=$1
work=$2
python=$3
check_png=$4
mkdir -p "$work" || exit 1
failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}
limit=4294967296  # 2^32: far below any heap or mmap address, far above any kernel's arrays

# The lines that must agree between runs: notation, size, bounds, hash.
stable() { grep -E '^(rebased|notation|size|lb, extent|true lb, extent|blocks|hash):' "$1"; }

check() {  # NAME PARAMS
  for run in 1 2; do
    if ! "$ddtkit" inspect --kernel "$1" --params "$2" --pieces 4 > "$work/out$run" 2> "$work/err"; then
      fail "ddtkit inspect --kernel $1 --params $2: status $?: $(cat "$work/err")"
      return
    fi
  done
  stable "$work/out1" > "$work/s1"
  stable "$work/out2" > "$work/s2"
  if ! grep -q '^hash: ' "$work/s1"; then
    fail "$1 $2: no hash line"
  elif ! cmp -s "$work/s1" "$work/s2"; then
    fail "$1 $2: two runs differ:"
    diff "$work/s1" "$work/s2" | cut -c1-200
  fi
  # lb, extent and true lb, true extent: both ends of both within (-2^32, 2^32).
  bounds=$(sed -n 's/^\(true \)\{0,1\}lb, extent: *\(-\{0,1\}[0-9]*\), \(-\{0,1\}[0-9]*\) B$/\2 \3/p' "$work/out1")
  [ "$(echo "$bounds" | wc -l)" -eq 2 ] || fail "$1 $2: bounds not found"
  echo "$bounds" | while read -r lb extent; do
    ub=$((lb + extent))
    for v in "$lb" "$ub"; do
      if [ "${v#-}" -ge $limit ]; then echo "bound $v"; fi
    done
  done > "$work/big"
  [ -s "$work/big" ] && fail "$1 $2: bounds are not small: $(tr '\n' ' ' < "$work/big")"
  case $1 in
    WRF_* | LAMMPS_* | SPECFEM3D_cm)
      grep -q '^rebased: .*absolute addresses' "$work/out1" || fail "$1 $2: not shown rebased" ;;
    *)
      grep -q '^rebased:' "$work/out1" && fail "$1 $2: rebased, but its displacements are relative" ;;
  esac
  echo "ok: $1 $2 $(grep '^hash:' "$work/out1" | tr -s ' ')"
}

"$ddtkit" inspect --kernel list > "$work/list" || { echo "FAIL: --kernel list"; exit 1; }
kernels=0
# Lines "  NAME: P1 P2 ...".
while IFS=: read -r name sets; do
  name=$(echo "$name" | tr -d ' ')
  case $name in WRF_* | LAMMPS_* | SPECFEM3D_cm) all=1 ;; *) all=0 ;; esac
  for p in $sets; do
    check "$name" "$p"
    [ $all = 1 ] || break
  done
  kernels=$((kernels + 1))
done <<EOF
$(tail -n +2 "$work/list")
EOF
[ $kernels -ge 16 ] || fail "only $kernels kernels listed"

# A rebased kernel's picture shows its data.
"$ddtkit" inspect --kernel WRF_y_vec --params 8x8 --pieces 0 --png "$work/wrf.png" > /dev/null &&
  "$python" "$check_png" "$work/wrf.png" --coloured-min 1 || fail "WRF_y_vec 8x8 --png"

if [ $failures -ne 0 ]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "all $kernels kernels: the same in two runs, small bounds"
