#!/usr/bin/env bash
# The intra-node runtime's and the rendezvous protocols' benchmarks on a machine with more cores
# (issues 10 and 15: "where a machine with more cores is at hand, repeat the point-to-point,
# collective and stencil runs at up to 16 processes there"). This machine has 2 cores, so every
# run above 2 processes is oversubscribed here, and a second copy engine (COOP-hca's helper
# thread) can only take a core from the peer; the GPU machine of the device tool has 16.
#
#   tools/cores-lease.sh --bundle   here, after `make bench` built build/ and both MPIs'
#                                   environments: packs the benchmark binaries, the launcher and
#                                   MPICH 5 and Open MPI 5 (relocated: that machine has no package
#                                   registry) into build-cores.tgz (about 15 MB; carry it)
#   tools/cores-lease.sh OUT [MAXP] there: the same runs as `make bench`'s runtime part (ddtkit,
#                                   then each MPI natively on the same exchanges), the stencil,
#                                   the collectives and the mixed-load stencil at 2, 4, 8 ... MAXP
#                                   processes (default: the number of cores, at most 16). Writes
#                                   OUT/results/ (the JSON lines `bench/report.py OUT/results`
#                                   renders here, with OUT/results/machine.txt naming that machine)
#                                   and OUT/log. Then issue 11's interposer ping-pongs (ddtbench_mpi
#                                   --time, native and interposed in one process) under each MPI
#                                   launched as a user would: Open MPI with its default mapping,
#                                   which binds each rank to a core when there are enough of them
#                                   (make bench's oversubscribe policy does not bind).
# Every run has its own time limit, so a hang in one still returns the others' results.
set -u
cd "$(dirname "$0")/.."
if [ "${1:-}" = --bundle ]; then
  C=build-cores
  rm -rf $C && mkdir -p $C/bin
  cp build/tools/ddtkit build/bench/ddt_runtime_bench build/bench/ddt_coll_bench \
    build/bench/runtime_mpi_mpich build/bench/runtime_mpi_ompi \
    build/bench/ddtbench_mpi_mpich build/bench/ddtbench_mpi_ompi $C/bin/ || exit 1
  cp build/mpi/mpich/libddtkit-mpi.so $C/bin/libddtkit-mpi-mpich.so &&
    cp build/mpi/ompi/libddtkit-mpi.so $C/bin/libddtkit-mpi-ompi.so || exit 1
  . tools/mpi-bundle.sh
  mpi_bundle mpich $C/mpich && mpi_bundle ompi $C/ompi || exit 1
  strip --strip-unneeded $C/bin/* 2>/dev/null
  tar czf build-cores.tgz $C && du -sh $C build-cores.tgz
  exit 0
fi

OUT=${1:-cores-lease-out}
R=$OUT/results
mkdir -p "$R"
LOG=$OUT/log
[ -f build-cores.tgz ] && [ ! -d build-cores ] && tar xzf build-cores.tgz
C=$PWD/build-cores
cores=$(nproc)
MAXP=${2:-$((cores < 16 ? cores : 16))}
{
  grep -m1 "model name" /proc/cpuinfo | sed 's/.*: //' | tr -d '\n'
  echo -n ", $cores cores"
  for d in /sys/devices/system/cpu/cpu0/cache/index*; do
    echo -n ", L$(cat "$d/level") $(tr 'A-Z' 'a-z' <"$d/type") $(cat "$d/size")"
  done
  echo "; $(uname -sr); $(free -g | awk '/Mem:/ {print $2}') GiB memory (results of tools/cores-lease.sh)"
} >"$R/machine.txt"
cat "$R/machine.txt" | tee "$LOG"

rc_all=0
run() {  # run LIMIT COMMAND...: one step, its output in the log, its exit status checked
  local limit=$1
  shift
  echo "== $*" >>"$LOG"
  local t0=$SECONDS
  timeout -k 5 "$limit" "$@" >>"$LOG" 2>&1
  local rc=$?
  echo "== exit $rc in $((SECONDS - t0)) s: $*" | tee -a "$LOG" | sed "s|$C/||g"
  [ $rc -eq 0 ] || rc_all=1
}
# Each MPI's launcher, relocated: a script each, so that timeout can run it.
cat >"$C/mpich-run" <<EOF
#!/bin/sh
np=\$1; shift
PATH="$C/mpich/bin:\$PATH" LD_LIBRARY_PATH="$C/mpich/lib" exec mpiexec -n "\$np" "\$@"
EOF
cat >"$C/ompi-run" <<EOF
#!/bin/sh
np=\$1; shift
export PATH="$C/ompi/bin:\$PATH" LD_LIBRARY_PATH="$C/ompi/lib" OPAL_PREFIX="$C/ompi" OMPI_ALLOW_RUN_AS_ROOT=1 \\
  OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 PRTE_MCA_rmaps_default_mapping_policy=:oversubscribe
exec mpiexec -n "\$np" "\$@"
EOF
chmod +x "$C/mpich-run" "$C/ompi-run"
mpich=$C/mpich-run
ompi=$C/ompi-run
B=$C/bin
# 2 processes: everything make bench runs (cost split, vector sweep with bidirectional bandwidth,
# protocols with COOP-hca, DDTBench ping-pong, stencil, mixed-load stencil), then each MPI.
run 150 "$B/ddtkit" run -n 2 "$B/ddt_runtime_bench" --out "$R"
run 150 "$mpich" 2 "$B/runtime_mpi_mpich" --out "$R"
run 150 "$ompi" 2 "$B/runtime_mpi_ompi" --out "$R"
run 60 "$B/ddtkit" run -n 2 "$B/ddt_coll_bench" --out "$R"
np=4
while [ "$np" -le "$MAXP" ]; do
  run 60 "$B/ddtkit" run -n $np "$B/ddt_runtime_bench" --stencil-only --out "$R"
  run 60 "$mpich" $np "$B/runtime_mpi_mpich" --stencil-only --out "$R"
  run 60 "$ompi" $np "$B/runtime_mpi_ompi" --stencil-only --out "$R"
  run 60 "$B/ddtkit" run -n $np "$B/ddt_coll_bench" --append --out "$R"
  run 60 "$B/ddtkit" run -n $np "$B/ddt_runtime_bench" --load-stencil-only --out "$R"
  np=$((np * 2))
done
# Issue 11 at this machine's core count: the interposer against each MPI in one process.
PATH="$C/mpich/bin:$PATH" LD_LIBRARY_PATH="$C/mpich/lib" run 200 mpiexec -n 2 \
  -genv LD_PRELOAD "$B/libddtkit-mpi-mpich.so" "$B/ddtbench_mpi_mpich" --time "$R"
PATH="$C/ompi/bin:$PATH" LD_LIBRARY_PATH="$C/ompi/lib" OPAL_PREFIX="$C/ompi" OMPI_ALLOW_RUN_AS_ROOT=1 \
  OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 run 200 mpiexec -n 2 --report-bindings \
  -x LD_PRELOAD="$B/libddtkit-mpi-ompi.so" "$B/ddtbench_mpi_ompi" --time "$R"
grep -E "FAIL|rror|Abort|Segmentation" "$LOG" | head -20
exit $rc_all
