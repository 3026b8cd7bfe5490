#!/bin/sh
# Builds Yaksa (pmodels/yaksa, MPICH's datatype engine; tested at v0.4 = main ec8c25c), the peer
# engine of bench/gpu_bench.cpp (issue 12), with its CUDA backend for sm_90 only, as a shared
# libyaksa.so with the CUDA runtime linked statically (a GPU machine needs only the driver), which
# gpu_bench loads with dlopen (bench/gpu_yaksa.hpp). `make yaksa` runs it. About 8 to 11 minutes
# on 2 cores: autogen generates 279 kernels at Yaksa's default nesting of 2 (a 2-D subarray of
# bytes gets a kernel per element; nesting 1 builds about a fifth as many and moves subarray rows
# one cudaMemcpyAsync each), 43 MB (4.4 MB stripped and gzipped).
# usage: tools/build-yaksa.sh <yaksa-git-checkout> <install-prefix>
# env:   CUDA_HOME (default /usr/local/cuda), JOBS (default 2),
#        YAKSA_PUP_MAX_NESTING (default 2 = Yaksa's default; 1 builds ~5x fewer kernels),
#        YAKSA_CUDA_SM (default 90)
# needs: gcc, make, python3, autoconf, automake, libtool (Debian: apt-get install -y autoconf automake libtool)
set -eu
[ $# -eq 2 ] || { echo "usage: $0 <yaksa-checkout> <prefix>" >&2; exit 2; }
SRC=$(cd "$1" && pwd)
mkdir -p "$2"; PREFIX=$(cd "$2" && pwd)
CUDA=${CUDA_HOME:-/usr/local/cuda}
JOBS=${JOBS:-2}
NESTING=${YAKSA_PUP_MAX_NESTING:-2}
SM=${YAKSA_CUDA_SM:-90}
for t in autoreconf libtoolize python3 make gcc "$CUDA/bin/nvcc"; do
    command -v "$t" >/dev/null || { echo "missing: $t" >&2; exit 1; }
done
# static cudart instead of configure's -lcudart (ddtkit also links CUDA::cudart_static)
LIBS_STATIC="-l:libcudart_static.a -ldl -lrt -lpthread -lstdc++"

# build in a scratch copy of the tracked files: autogen writes ~750 generated sources into the tree
WORK=$(mktemp -d "${TMPDIR:-/tmp}/yaksa-build.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
git -C "$SRC" archive --format=tar HEAD | tar -x -C "$WORK"
cd "$WORK"
export PATH="$CUDA/bin:$PATH"

t0=$(date +%s)
./autogen.sh --pup-max-nesting="$NESTING" -skip-test-complex > autogen.log 2>&1 || { tail -30 autogen.log; exit 1; }
t1=$(date +%s)
# --with-cuda-sm is required: the default 'auto' needs a visible GPU, and its no-GPU fallback
# 'all-major' asks for sm_52/60/70, which nvcc 13 no longer accepts.
./configure --prefix="$PREFIX" --with-cuda="$CUDA" --with-cuda-sm="$SM" \
    --without-ze --without-hip --disable-static --enable-fast=O2,ndebug > configure.log 2>&1 \
    || { tail -30 configure.log; exit 1; }
grep -q "CUDA GENCODE: $SM" configure.log || { echo "CUDA backend not enabled" >&2; tail -20 configure.log; exit 1; }
t2=$(date +%s)
make -j"$JOBS" LIBS="$LIBS_STATIC" > make.log 2>&1 || { grep -B5 -A5 -i error make.log | tail -40; exit 1; }
t3=$(date +%s)
make install LIBS="$LIBS_STATIC" > install.log 2>&1 || { tail -30 install.log; exit 1; }
t4=$(date +%s)

if readelf -d "$PREFIX/lib/libyaksa.so" | grep -q 'NEEDED.*libcudart'; then
    echo "error: libyaksa.so still needs libcudart.so" >&2; exit 1
fi
echo "yaksa $(git -C "$SRC" describe --tags --always 2>/dev/null || echo '?') nesting=$NESTING sm_$SM -> $PREFIX/lib/libyaksa.so"
echo "wall s: autogen $((t1-t0)) configure $((t2-t1)) make $((t3-t2)) install $((t4-t3))"
