#!/usr/bin/env bash
# One lease of a GPU machine, in one call (issue 12): the GPU tests, a compute-sanitizer pass
# over a short campaign, then the GPU benchmarks, each under its own time limit so that a hang in
# one still returns the others' logs. Writes into OUT (first argument, default gpu-lease-out):
#   tests.log  the GPU tests (make test-gpu's list), one section each, with exit codes
#   sanitizer.log  compute-sanitizer memcheck over a short campaign
#   bench.log, gpu.jsonl, gpu.md  the benchmarks (bench/gpu_bench.cpp) and their table
# Uses build-gpu/ where it holds binaries that run on this machine (built elsewhere and carried:
# a device lease counts its minutes), else builds it here (make build-gpu, every core).
#   BENCH=0 skips the benchmarks; TYPES sets the campaign's size (default 5000).
set -u
OUT=${1:-gpu-lease-out}
mkdir -p "$OUT"
TYPES=${TYPES:-5000}
B=build-gpu
cd "$(dirname "$0")/.."

nvidia-smi -L 2>&1 | tee "$OUT/tests.log"
if ! "$B/tests/cuda/gpu_units_test" --types 1 --seed 1 >/dev/null 2>&1 || [ ! -x "$B/bench/ddt_gpu_bench" ]; then
  echo "== building $B here" | tee -a "$OUT/tests.log"
  make build-gpu JOBS="$(nproc)" >>"$OUT/tests.log" 2>&1 || { echo "build failed"; tail -40 "$OUT/tests.log"; exit 1; }
fi

rc_all=0
run() {  # run LIMIT NAME COMMAND...: one section of tests.log
  local limit=$1 name=$2
  shift 2
  echo "== $name: $*" >>"$OUT/tests.log"
  local t0=$SECONDS
  timeout -k 5 "$limit" "$@" >>"$OUT/tests.log" 2>&1
  local rc=$?
  echo "== $name: exit $rc in $((SECONDS - t0)) s" | tee -a "$OUT/tests.log"
  [ $rc -eq 0 ] || rc_all=1
}
run 150 gpu_test "$B/tests/cuda/gpu_test" --types "$TYPES" --seed 1
run 60 gpu_ipc "$B/tests/cuda/gpu_ipc_test"
run 90 gpu_comm "$B/tools/ddtkit" run -n 2 "$B/tests/cuda/gpu_comm_test"
run 30 gpu_nodevice env CUDA_VISIBLE_DEVICES= "$B/tests/cuda/gpu_nodevice_test"
if command -v compute-sanitizer >/dev/null; then
  echo "== sanitizer" >"$OUT/sanitizer.log"
  t0=$SECONDS
  timeout -k 5 90 compute-sanitizer --tool memcheck --leak-check no --error-exitcode 3 \
    "$B/tests/cuda/gpu_test" --types 40 --seed 7 >>"$OUT/sanitizer.log" 2>&1
  echo "== sanitizer: exit $? in $((SECONDS - t0)) s" | tee -a "$OUT/sanitizer.log"
fi
grep -E "^FAIL|error|Error" "$OUT/tests.log" | head -30

if [ "${BENCH:-1}" != 0 ]; then
  t0=$SECONDS
  timeout -k 5 "${BENCH_LIMIT:-240}" "$B/bench/ddt_gpu_bench" --out "$OUT" >"$OUT/bench.log" 2>&1
  echo "== bench: exit $? in $((SECONDS - t0)) s" | tee -a "$OUT/bench.log"
  python3 -c "import sys; sys.path.insert(0, 'bench'); import report_gpu; md = []; report_gpu.section(md, [], '$OUT'); print(chr(10).join(md))" \
    >"$OUT/gpu.md" 2>&1
  cat "$OUT/gpu.md"
fi
exit $rc_all
