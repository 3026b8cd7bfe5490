// The GPU layer's host check without the driver (memory.cpp's in_heap), on every machine: it
// tells the main heap's memory from other memory, and reads the program break without calling
// sbrk (issue 12: under the interposer, which defines malloc, glibc's sbrk(0) made a brk system
// call each time, four per round trip: the whole cost of the device check on host buffers). This
// program defines sbrk itself, as the C library's wrapper, to count who calls it.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "cuda/memory.hpp"

namespace {
int sbrk_calls = 0;
}

extern "C" void* __sbrk(intptr_t);
extern "C" void* sbrk(intptr_t increment) {
  ++sbrk_calls;
  return __sbrk(increment);
}

int main() {
  int failures = 0;
  auto check = [&](bool ok, const char* what) {
    if (!ok) std::fprintf(stderr, "FAIL %s\n", what), ++failures;
  };
  using ddt::gpu::in_heap;
  std::vector<void*> small;
  for (int i = 0; i < 64; ++i) small.push_back(std::malloc(100 + i));  // the main arena's heap
  const int before = sbrk_calls;
  int inside = 0;
  for (int k = 0; k < 1000; ++k)
    for (void* p : small) inside += in_heap(reinterpret_cast<uintptr_t>(p), 100);
  check(inside == 64 * 1000, "a small malloc'ed block is not in the heap");
  check(sbrk_calls == before, "in_heap called sbrk (a brk system call per check where malloc is interposed)");
  int on_stack = 0;
  check(!in_heap(reinterpret_cast<uintptr_t>(&on_stack), sizeof on_stack), "a stack variable is in the heap");
  const uintptr_t brk = reinterpret_cast<uintptr_t>(__sbrk(0));
  check(!in_heap(brk - 8, 16), "a range across the break is in the heap");
  check(!in_heap(reinterpret_cast<uintptr_t>(small[0]), uint64_t{1} << 60), "a range past the break is in the heap");
  for (void* p : small) std::free(p);
  if (failures) return 1;
  std::printf("gpu_host_check: 64,000 checks of heap blocks, no sbrk call; stack and ranges past the break refused\n");
  return 0;
}
