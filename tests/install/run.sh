#!/usr/bin/env bash
# The installed copy, as a user meets it: installs a build into a temporary prefix and builds
# README's example (examples/column.c) against that copy only, four ways, running each:
#   1. CMake: find_package(ddtkit), ddtkit::ddtkit (shared) and ddtkit::ddtkit_static
#   2. pkg-config --cflags --libs ddtkit (shared, RUNPATH to the prefix)
#   3. pkg-config --static: a fully static program (Libs.private must name all that .a needs)
#   4. plain cc -I P/include -L P/lib -lddtkit, run with LD_LIBRARY_PATH
# and checks the installed files (headers, SONAME, exports, the command and its RUNPATH, the
# interposers this build has). Everything it makes lives under one temporary folder, removed
# on exit whether it passed or failed.
#
#   tests/install/run.sh [--make] [BUILD]   BUILD: the build folder (default build/);
#                                           --make: install with `make install PREFIX=...`
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
via_make=0
if [ "${1:-}" = --make ]; then via_make=1; shift; fi
build=$(cd "${1:-$root/build}" && pwd)
example=$root/examples/column.c
expected="packed 32 bytes: 2 12 22 32"

work=$(mktemp -d "${TMPDIR:-/tmp}/ddtkit-install-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT TERM  # exit runs the EXIT trap
prefix=$work/prefix

fail() { echo "test-install: FAIL: $*" >&2; exit 1; }
step() { echo "test-install: $*"; }

# Runs a built example, checks its output, and that it loads libddtkit from the prefix (shared)
# or not at all (static).
check_run() {  # name binary shared|static [env...]
  local name=$1 bin=$2 kind=$3; shift 3
  local out libs
  out=$(env "$@" "$bin") || fail "$name: exit status $?"
  [ "$out" = "$expected" ] || fail "$name: printed '$out', expected '$expected'"
  libs=$(env "$@" ldd "$bin" 2>&1 || true)
  if [ "$kind" = shared ]; then
    echo "$libs" | grep -q "libddtkit.so.0 => $prefix/lib/libddtkit.so.0" ||
      fail "$name: libddtkit.so.0 not loaded from the prefix:"$'\n'"$libs"
  elif echo "$libs" | grep -q libddtkit; then
    fail "$name: a static build loads libddtkit:"$'\n'"$libs"
  fi
  step "$name: ok ($kind)"
}

if [ $via_make = 1 ]; then
  step "make install PREFIX=$prefix"
  make -C "$root" --no-print-directory install PREFIX="$prefix" >"$work/install.log" 2>&1 ||
    { cat "$work/install.log"; fail "make install"; }
else
  step "cmake --install $build --prefix $prefix"
  cmake --install "$build" --prefix "$prefix" >"$work/install.log" 2>&1 ||
    { cat "$work/install.log"; fail "cmake --install"; }
fi

# The files, and what the shared library promises.
for h in "$root"/include/*.h; do
  [ -f "$prefix/include/$(basename "$h")" ] || fail "include/$(basename "$h") not installed"
done
for f in lib/libddtkit.a lib/libddtkit.so lib/libddtkit.so.0 lib/cmake/ddtkit/ddtkitConfig.cmake \
         lib/cmake/ddtkit/ddtkitConfigVersion.cmake lib/cmake/ddtkit/ddtkitTargets.cmake \
         lib/pkgconfig/ddtkit.pc bin/ddtkit; do
  [ -e "$prefix/$f" ] || fail "$f not installed"
done
readelf -d "$prefix/lib/libddtkit.so" | grep -q 'Library soname: \[libddtkit.so.0\]' || fail "SONAME is not libddtkit.so.0"
others=$(nm -D --defined-only "$prefix/lib/libddtkit.so" | awk '{print $3}' | grep -v '^ddt_' || true)
[ -z "$others" ] || fail "libddtkit.so exports more than ddt_*: $others"
readelf -d "$prefix/bin/ddtkit" | grep -q 'R.*PATH.*\[\$ORIGIN/../lib\]' || fail "bin/ddtkit has no RUNPATH \$ORIGIN/../lib"
"$prefix/bin/ddtkit" help | grep -q "usage: ddtkit" || fail "bin/ddtkit help"
if [ -f "$build/src/shm/preload/libddtkit-malloc.so" ]; then  # the allocator, beside the .so it links
  malloc_libs=$(ldd "$prefix/lib/libddtkit-malloc.so" 2>&1 || true)
  echo "$malloc_libs" | grep -q "libddtkit.so.0 => $prefix/lib/libddtkit.so.0" ||
    fail "lib/libddtkit-malloc.so does not find the prefix's libddtkit.so.0:"$'\n'"$malloc_libs"
  step "allocator: installed"
fi
for mpi in mpich ompi; do  # the interposers this build has, and only those
  if [ -f "$build/mpi/$mpi/libddtkit-mpi.so" ]; then
    [ -f "$prefix/lib/ddtkit/$mpi/libddtkit-mpi.so" ] || fail "lib/ddtkit/$mpi/libddtkit-mpi.so not installed"
    step "interposer $mpi: installed"
  fi
done
step "files, SONAME, exports, command: ok"

# The installed interposers have no RUNPATH: each shares the libmpi of the program it is preloaded
# into (cmake/install.cmake says why). A program that loads MPI itself, Python with mpi4py, then
# needs the MPI's lib folder on LD_LIBRARY_PATH: docs/guide.md's command finds it (the line is
# taken from the guide and run with this MPICH environment's python), and with it the interposer
# takes over a vector type that mpi4py sends between two ranks.
for mpi in mpich ompi; do
  lib=$prefix/lib/ddtkit/$mpi/libddtkit-mpi.so
  if [ -f "$lib" ] && readelf -d "$lib" | grep -q 'R.*PATH'; then
    fail "lib/ddtkit/$mpi/libddtkit-mpi.so has a RUNPATH: $(readelf -d "$lib" | grep 'R.*PATH')"
  fi
done
venv=$root/.venv-mpich
if [ -f "$prefix/lib/ddtkit/mpich/libddtkit-mpi.so" ] && "$venv/bin/python" -c "import mpi4py" 2>/dev/null; then
  line=$(grep '^MPI_LIB=\$(python -c ' "$root/docs/guide.md") || fail "docs/guide.md: no MPI_LIB=\$(python -c ...) line"
  args=${line#MPI_LIB=\$(python }
  mpi_lib=$(eval "\"\$venv/bin/python\" ${args%)}") || fail "docs/guide.md's MPI_LIB command failed"
  [ -f "$mpi_lib/libmpi.so.12" ] || fail "docs/guide.md's MPI_LIB command named '$mpi_lib', without libmpi.so.12"
  cat > "$work/vector.py" <<'PY'
import array
from mpi4py import MPI
comm = MPI.COMM_WORLD
t = MPI.DOUBLE.Create_vector(3, 1, 2).Commit()
if comm.rank == 0:
    comm.Send([array.array("d", range(6)), 1, t], dest=1)
else:
    buf = array.array("d", [-1.0] * 6)
    comm.Recv([buf, 1, t], source=0)
    assert list(buf) == [0, -1, 2, -1, 4, -1], buf
t.Free()
PY
  log=$(LD_LIBRARY_PATH=$mpi_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} "$venv/bin/mpiexec" -n 2 \
        -genv LD_PRELOAD "$prefix/lib/ddtkit/mpich/libddtkit-mpi.so" -genv DDTKIT_VERBOSE 1 \
        "$venv/bin/python" "$work/vector.py" 2>&1) || fail "mpi4py under the installed interposer:"$'\n'"$log"
  case $log in
    *"(vector): packed by ddtkit"*"notation: vector(3, 1, 2, double)"*) ;;
    *) fail "the installed interposer did not take mpi4py's vector:"$'\n'"$log" ;;
  esac
  step "interposer mpich: mpi4py under it, with LD_LIBRARY_PATH=$mpi_lib as docs/guide.md says"
else
  step "interposer mpich: no mpi4py in $venv or no interposer installed; the mpi4py check is left out"
fi

# 1. CMake
cmake -S "$root/tests/install/consumer" -B "$work/cmake" -DCMAKE_PREFIX_PATH="$prefix" \
      -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF -DEXAMPLE="$example" >"$work/cmake.log" 2>&1 &&
  cmake --build "$work/cmake" >>"$work/cmake.log" 2>&1 || { cat "$work/cmake.log"; fail "CMake consumer build"; }
grep -q "ddtkit_DIR:PATH=$prefix/lib/cmake/ddtkit" "$work/cmake/CMakeCache.txt" || fail "CMake found another ddtkit"
check_run "cmake ddtkit::ddtkit" "$work/cmake/example_shared" shared
check_run "cmake ddtkit::ddtkit_static" "$work/cmake/example_static" static
if [ -f "$prefix/lib/libddtkit_cuda.a" ]; then  # the GPU layer, where this build has one
  [ -x "$work/cmake/example_cuda" ] || fail "ddtkit::cuda: no consumer built against the installed GPU layer"
  "$work/cmake/example_cuda" | grep -q "ddt_cuda_init: answered" || fail "ddtkit::cuda consumer"
  step "cmake ddtkit::cuda: links and runs"
fi

# 2. and 3. pkg-config (only the prefix's ddtkit.pc is visible)
pc() { PKG_CONFIG_PATH= PKG_CONFIG_LIBDIR="$prefix/lib/pkgconfig" pkg-config "$@"; }
[ "$(pc --modversion ddtkit)" = "$(sed -n 's/^Version: //p' "$prefix/lib/pkgconfig/ddtkit.pc")" ] || fail "pkg-config --modversion"
# shellcheck disable=SC2046  # pkg-config's output is a list of flags
cc "$example" $(pc --cflags --libs ddtkit) -Wl,-rpath,"$prefix/lib" -o "$work/pc_shared" || fail "pkg-config build"
check_run "pkg-config" "$work/pc_shared" shared
# shellcheck disable=SC2046
cc -static "$example" $(pc --static --cflags --libs ddtkit) -o "$work/pc_static" || fail "pkg-config --static build"
check_run "pkg-config --static" "$work/pc_static" static

# 4. plain cc with the shared library, found at run time through LD_LIBRARY_PATH
cc -I "$prefix/include" "$example" -L "$prefix/lib" -lddtkit -o "$work/plain" || fail "cc -lddtkit build"
check_run "cc -lddtkit" "$work/plain" shared LD_LIBRARY_PATH="$prefix/lib"

step "passed (the prefix and the consumer builds are removed)"
