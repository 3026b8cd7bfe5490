// Memory that ddtkit mapped itself: the runtime's channels, its heap segments and the peers'
// segments it attached. All of it is host memory, so the GPU layer's "is this device memory?"
// (a driver query, 121 ns on an H100 machine) need not be asked of it: the runtime packs into
// and out of its cells on every message, and a 480 B pack whose buffers are both asked about
// took 267 ns there against 40 ns without the queries (gpu_bench's host suite). The mapping code
// adds a range after mmap and removes it before munmap.
//
// A fixed table of kSlots ranges, lock-free: lookups scan the slots in use (up to the highest
// ever used), a few dozen in a job of tens of peers. A range the table has no room for is simply
// not known: its buffers are then asked about, as any other.
#pragma once
#include <cstdint>

namespace ddt {

void host_range_add(const void* p, uint64_t n);
void host_range_remove(const void* p);
// [lo, lo + len) lies inside one known range.
bool host_range_holds(uintptr_t lo, uint64_t len);

}  // namespace ddt
