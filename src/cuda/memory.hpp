// Where a buffer lives, as the CUDA driver sees it: the memory kind of a pointer and the bounds
// of its allocation, so that a call decides between the CPU and the GPU, and so that a kernel
// never reads or writes outside what the caller owns (a kernel fault poisons the caller's whole
// CUDA context: every later CUDA call of the process fails, which is a crash in all but name).
#pragma once
#include <cstdint>

namespace ddt::gpu {

enum class Mem : uint8_t {
  Host,     // pageable host memory, or anything the driver does not know (a freed device buffer)
  Pinned,   // page-locked host memory (cudaHostAlloc, cudaHostRegister): kernels reach it over the bus
  Device,   // device memory of one device
  Managed,  // managed (unified) memory: kernels and the CPU reach it
};

struct Where {
  Mem kind = Mem::Host;
  int device = -1;     // Device: its ordinal
  uintptr_t base = 0;  // the allocation, where the driver says (size 0: bounds unknown)
  uint64_t size = 0;
};

// The driver's view of p: false when the driver could not be asked (no driver, no device).
bool where(const void* p, Where* w);
// The devices the driver has (0: no driver or no device), found without the CUDA runtime.
int driver_devices();

// [lo, lo + len) lies in the main arena's heap (between the start of the process's [heap]
// mapping and the current break): host memory (pageable, or pinned by cudaHostRegister), never
// device or managed memory, so a call that only asks "device or not" need not ask the driver.
// Why: one query (cuPointerGetAttributes) takes 121 ns on an H100 machine, and a host-memory
// ddt_pack of a 480 B vector with the GPU layer on took 267 ns when both buffers were asked
// about, 40 ns when both lay here (gpu_bench's host suite); most small buffers are malloc'ed
// from that heap.
bool in_heap(uintptr_t lo, uint64_t len);

// Device or managed: data that only the GPU path moves.
inline bool on_device(const Where& w) { return w.kind == Mem::Device || w.kind == Mem::Managed; }
// What a kernel on `device` may touch.
inline bool reachable(const Where& w, int device) {
  return w.kind == Mem::Pinned || w.kind == Mem::Managed || (w.kind == Mem::Device && w.device == device);
}
// [lo, lo + len) lies inside w's allocation (true where the bounds are unknown).
inline bool inside(const Where& w, uintptr_t lo, uint64_t len) {
  if (w.size == 0) return true;
  return lo >= w.base && lo - w.base <= w.size && len <= w.size - (lo - w.base);
}

}  // namespace ddt::gpu
