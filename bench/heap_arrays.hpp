// DDTBench's arrays in ddtkit's mapped heap, for the programs that move the kernels through
// ddtkit's runtime (runtime_bench.cpp, runtime_mpi.cpp). kernels/ allocates each kernel's arrays
// with new char[] and builds the types on their absolute addresses (DDTBench's MPI_BOTTOM), so
// the arrays cannot be moved after the fact: while g_heap_arrays is set (the kernels being built),
// array new is served by ddt_alloc (zero-copy sends need heap buffers), and array delete gives
// back to whichever allocator the pointer came from.
//
// It replaces the global operator new[] / delete[]: include it in exactly one source file of a
// program.
#pragma once
#include <cstdlib>
#include <new>
#include <unordered_set>

#include "ddtkit.h"

namespace rtbench {

inline bool g_heap_arrays = false;
inline std::unordered_set<void*>& heap_arrays() {
  static std::unordered_set<void*> s;  // allocates with scalar new, never with array new
  return s;
}

}  // namespace rtbench

void* operator new[](std::size_t n) {
  void* p = nullptr;
  if (rtbench::g_heap_arrays) {
    if (ddt_alloc(static_cast<int64_t>(n ? n : 1), &p) != DDT_SUCCESS) throw std::bad_alloc();
    rtbench::heap_arrays().insert(p);
    return p;
  }
  p = std::malloc(n ? n : 1);
  if (!p) throw std::bad_alloc();
  return p;
}
void operator delete[](void* p) noexcept {
  if (!p) return;
  auto& s = rtbench::heap_arrays();
  auto it = s.find(p);
  if (it == s.end()) return std::free(p);
  s.erase(it);
  ddt_free(p);
}
void operator delete[](void* p, std::size_t) noexcept { operator delete[](p); }
