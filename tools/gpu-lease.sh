#!/usr/bin/env bash
# One lease of a GPU machine, in one call (issue 12): the GPU tests, a compute-sanitizer pass
# over a short campaign, then the GPU benchmarks, each under its own time limit so that a hang in
# one still returns the others' logs. Writes into OUT (first argument, default gpu-lease-out):
#   tests.log  the GPU tests (make test-gpu's list), one section each, with exit codes
#   sanitizer.log  compute-sanitizer memcheck over a short campaign
#   bench.log, gpu.jsonl, gpu.md  the benchmarks (bench/gpu_bench.cpp) and their table
#   mpi.log  device memory through the interposer (tests/mpi/device_test.cpp) under the MPI
#            carried in build-lease/mpi, and the device check's cost on host buffers
# `tools/gpu-lease.sh --bundle [mpich|ompi]`, on the build machine, makes build-lease/: the GPU
# binaries of build-gpu/, Yaksa where `make yaksa` built it, and, where build/ and the MPI's
# environment are there, that MPI's runtime files (relocated), the interposer and its device test: the GPU machine has no package
# registry to install an MPI from. It is also packed as build-lease.tgz (the device tool carries
# 64 MiB: the GPU binaries and MPICH take 81 MB as files, 24 MB packed). Without build-lease the binaries of
# build-gpu/ are used where they run there, else build-gpu is built there (make build-gpu).
#   BENCH=0 skips the benchmarks; TYPES sets the campaign's size (default 5000), MPI_TYPES the
#   interposer test's (700).
set -u
if [ "${1:-}" = --bundle ]; then
  mpi=${2:-mpich}
  cd "$(dirname "$0")/.."
  rm -rf build-lease && mkdir -p build-lease/gpu/tests/cuda build-lease/gpu/bench build-lease/gpu/tools
  for t in gpu_units_test gpu_test gpu_nodevice_test gpu_ipc_test gpu_comm_test; do cp build-gpu/tests/cuda/$t build-lease/gpu/tests/cuda/; done
  cp build-gpu/bench/ddt_gpu_bench build-lease/gpu/bench/ && cp build-gpu/tools/ddtkit build-lease/gpu/tools/
  M=build-lease/mpi
  . tools/mpi-bundle.sh
  if [ "$mpi" = mpich ] && [ -x build/tests/device_test_mpich ]; then
    mpi_bundle mpich $M
    cp build/mpi/mpich/libddtkit-mpi.so $M/ && cp build/tests/device_test_mpich $M/device_test
    echo mpich >$M/kind
  elif [ "$mpi" = ompi ] && [ -x build/tests/device_test_ompi ]; then
    mpi_bundle ompi $M
    cp build/mpi/ompi/libddtkit-mpi.so $M/ && cp build/tests/device_test_ompi $M/device_test
    echo ompi >$M/kind
  fi
  if [ -f build-yaksa/lib/libyaksa.so ]; then  # gpu_bench's peer engine (make yaksa)
    mkdir -p build-lease/yaksa && cp -L build-yaksa/lib/libyaksa.so build-lease/yaksa/libyaksa.so
  fi
  strip --strip-unneeded build-lease/gpu/*/* build-lease/gpu/tests/cuda/* $M/device_test build-lease/yaksa/* 2>/dev/null
  # Compressed for the trip (each GPU binary holds the kernels' fatbinary and the static CUDA
  # runtime, about 10 MB; the whole 81 MB, 24 MB as a tarball): carry build-lease.tgz, which this
  # script unpacks there.
  tar czf build-lease.tgz build-lease
  du -sh build-lease build-lease.tgz
  exit 0
fi
OUT=${1:-gpu-lease-out}
mkdir -p "$OUT"
TYPES=${TYPES:-5000}
cd "$(dirname "$0")/.."
[ -f build-lease.tgz ] && [ ! -d build-lease ] && tar xzf build-lease.tgz
B=build-gpu
[ -d build-lease/gpu ] && B=build-lease/gpu
[ -f build-lease/yaksa/libyaksa.so ] && export DDTKIT_YAKSA=$PWD/build-lease/yaksa/libyaksa.so

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
if [ -f build-lease/mpi/kind ]; then  # device buffers through the interposer
  M=$PWD/build-lease/mpi
  kind=$(cat "$M/kind")
  export PATH=$M/bin:$PATH LD_LIBRARY_PATH=$M/lib
  if [ "$kind" = mpich ]; then
    with() { echo -genv "$1" "$2"; }  # how this mpiexec passes an environment variable
  else  # Open MPI, relocated, as root on the GPU machine
    export OPAL_PREFIX=$M OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 \
      PRTE_MCA_rmaps_default_mapping_policy=:oversubscribe
    with() { echo -x "$1=$2"; }
  fi
  {
    echo "== interposer_${kind}_device"
    t0=$SECONDS
    timeout -k 5 120 mpiexec -n 2 $(with LD_PRELOAD "$M/libddtkit-mpi.so") "$M/device_test" --types "${MPI_TYPES:-700}"
    rc=$?
    echo "== interposer_${kind}_device: exit $rc in $((SECONDS - t0)) s"
    [ $rc -eq 0 ] || echo "FAIL interposer_${kind}_device"
    # The device check's cost on host buffers: the same round trips with it on and off, alternated.
    for k in 1 2 3; do
      for c in 1 0; do
        timeout -k 5 60 mpiexec -n 2 $(with LD_PRELOAD "$M/libddtkit-mpi.so") $(with DDTKIT_CUDA $c) "$M/device_test" --time
      done
      timeout -k 5 60 mpiexec -n 2 "$M/device_test" --time | sed 's/$/ (native, no interposer)/'
    done
    # How many driver queries the host-buffer round trips made (the check's cost, counted).
    timeout -k 5 60 mpiexec -n 2 $(with LD_PRELOAD "$M/libddtkit-mpi.so") $(with DDTKIT_CUDA 1) $(with DDTKIT_VERBOSE 1) "$M/device_test" --time
  } >"$OUT/mpi.log" 2>&1
  grep -E "^==|device_test|FAIL" "$OUT/mpi.log"
  grep -q "^FAIL" "$OUT/mpi.log" && rc_all=1
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
