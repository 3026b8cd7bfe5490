#!/usr/bin/env bash
# Installs what the build needs on a fresh machine of this project's kind (Debian): only what is
# missing, so it costs nothing where everything is there. Needs root for apt-get, as CI has.
set -euo pipefail
need=()
command -v cmake >/dev/null || need+=(cmake)
command -v g++ >/dev/null || need+=(g++)
command -v pkg-config >/dev/null || need+=(pkg-config)  # make test-install links through ddtkit.pc
command -v clang++ >/dev/null || need+=(clang)
[ -f /usr/include/gtest/gtest.h ] || need+=(libgtest-dev)
ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1 || need+=(libclang-rt-14-dev)
python3 -c 'import venv, ensurepip' 2>/dev/null || need+=(python3-venv)
if [ "${1:-}" = --yaksa ]; then  # make yaksa (tools/build-yaksa.sh): Yaksa's autotools build
  command -v autoreconf >/dev/null || need+=(autoconf)
  command -v automake >/dev/null || need+=(automake)
  command -v libtoolize >/dev/null || need+=(libtool)
fi
if [ ${#need[@]} -gt 0 ]; then
  echo "setup: installing ${need[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
