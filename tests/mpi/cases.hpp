// What the MPI test programs under tests/mpi share.
#pragma once
#include <dlfcn.h>

#include <cstdint>
#include <cstring>
#include <vector>

// Deterministic contents of rank r's buffer for test case i (xorshift from a seed of both): every
// rank can compute every other rank's bytes, so a receiver knows what must arrive.
inline std::vector<char> case_bytes(int64_t n, uint64_t i, int r) {
  std::vector<char> v(n);
  uint64_t s = i * 0x9e3779b97f4a7c15ULL + r * 0xbf58476d1ce4e5b9ULL + 1;
  for (auto& c : v) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    c = static_cast<char>(s);
  }
  return v;
}

// Whether MPI_Send resolves into libddtkit-mpi.so (so that a broken preload cannot pass as an
// interposed run).
inline bool interposer_loaded() {
  Dl_info info;
  void* f = dlsym(RTLD_DEFAULT, "MPI_Send");
  return f && dladdr(f, &info) && info.dli_fname && std::strstr(info.dli_fname, "ddtkit-mpi");
}
