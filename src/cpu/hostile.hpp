// Hostile buffers: a base address whose touched bytes would fall near address 0. Every entry point
// that moves data checks it before the first byte moves (execute.cpp, and the runtime when a
// message is posted, since its copy may run later).
#pragma once
#include <cstdint>

#include "type/type.hpp"

namespace ddt {

// The first 64 KiB of the address space are never mapped (Linux's vm.mmap_min_addr, 4 KiB at
// least, 64 KiB by default): a range that reaches into them comes from a NULL or near-NULL base
// with relative displacements, and faulting on it inside the walk would be a crash, not an
// error. Absolute-address types used with a NULL buffer (MPI_BOTTOM) touch real addresses and
// pass.
inline constexpr int64_t kLowAddresses = int64_t{64} << 10;

// Do the bytes of count elements of type at buf (true bounds, every element) reach within
// 64 KiB of address 0 on either side (a NULL base with small positive or negative
// displacements), or wrap around? Addresses are computed modulo 2^64, as the walk computes them,
// so a base that is itself far from any real address but whose displacements bring it back to
// real ones (an absolute-address type from a shifted base) is fine. In 64-bit unsigned arithmetic
// (every call pays for this check); the caller has checked that (count - 1) * extent fits, and a
// length that overflows 64 bits is hostile anyway.
inline bool hostile(const void* buf, int64_t count, ddt_type type) {
  if (count == 0 || type->size == 0) return false;
  const int64_t span = (count - 1) * type->extent();
  const uint64_t lo = reinterpret_cast<uintptr_t>(buf) + static_cast<uint64_t>(type->true_lb) +
                      static_cast<uint64_t>(span < 0 ? span : 0);  // modulo 2^64
  uint64_t len;
  if (__builtin_add_overflow(static_cast<uint64_t>(type->true_ub - type->true_lb),
                             span < 0 ? -static_cast<uint64_t>(span) : static_cast<uint64_t>(span), &len))
    return true;
  const uint64_t top = UINT64_MAX - static_cast<uint64_t>(kLowAddresses) + 1;  // the window below 2^64
  return lo < static_cast<uint64_t>(kLowAddresses) || lo >= top || len > top - lo;
}

// A contiguous buffer of n bytes at p (the packed side): the same rule.
inline bool hostile(const void* p, int64_t n) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  return n > 0 && a < static_cast<uintptr_t>(kLowAddresses);
}

}  // namespace ddt
