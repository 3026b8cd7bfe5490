#include "util/host_ranges.hpp"

#include <atomic>

namespace ddt {

namespace {

constexpr int kSlots = 256;

struct Slot {
  std::atomic<uintptr_t> lo{0};  // 0: free
  std::atomic<uint64_t> len{0};
};

Slot slots[kSlots];
std::atomic<int> used{0};  // slots [0, used) may hold a range

}  // namespace

void host_range_add(const void* p, uint64_t n) {
  const uintptr_t lo = reinterpret_cast<uintptr_t>(p);
  if (lo == 0 || n == 0) return;
  for (int i = 0; i < kSlots; ++i) {
    uintptr_t expect = 0;
    if (slots[i].lo.load(std::memory_order_relaxed) == 0 &&
        slots[i].lo.compare_exchange_strong(expect, lo, std::memory_order_acq_rel)) {
      slots[i].len.store(n, std::memory_order_release);
      int u = used.load(std::memory_order_relaxed);
      while (u < i + 1 && !used.compare_exchange_weak(u, i + 1, std::memory_order_acq_rel)) {
      }
      return;
    }
  }
}

void host_range_remove(const void* p) {
  const uintptr_t lo = reinterpret_cast<uintptr_t>(p);
  const int u = used.load(std::memory_order_acquire);
  for (int i = 0; i < u; ++i)
    if (slots[i].lo.load(std::memory_order_acquire) == lo) {
      slots[i].len.store(0, std::memory_order_release);  // no longer holds anything, then free
      slots[i].lo.store(0, std::memory_order_release);
      return;
    }
}

bool host_range_holds(uintptr_t lo, uint64_t len) {
  const int u = used.load(std::memory_order_acquire);
  for (int i = 0; i < u; ++i) {
    const uintptr_t a = slots[i].lo.load(std::memory_order_acquire);
    if (a == 0 || lo < a) continue;
    const uint64_t n = slots[i].len.load(std::memory_order_acquire);
    // The slot still holds the range whose start was read: a removal and an add between the two
    // loads would pair this start with another range's length.
    if (slots[i].lo.load(std::memory_order_acquire) != a) continue;
    if (lo - a <= n && len <= n - (lo - a)) return true;
  }
  return false;
}

}  // namespace ddt
