// The argument checks of every entry point that moves data (execute.cpp, and the runtime when a
// message is posted, since its copy may run later): a usable (type, count, offset), and no
// hostile buffer. Every check happens before the first byte moves.
#pragma once
#include <algorithm>
#include <cstdint>

#include "type/type.hpp"
#include "util/checked.hpp"

namespace ddt {

// Validates (type, count, offset) for data movement and returns the stream length.
inline int stream(ddt_type type, int64_t count, int64_t offset, int64_t* total) {
  if (int e = check_type(type)) return e;
  if (!type->committed.load(std::memory_order_acquire)) return DDT_ERR_NOT_COMMITTED;
  if (count < 0) return DDT_ERR_COUNT;
  if (offset < 0) return DDT_ERR_ARG;
  Checked ck;
  *total = ck.mul(count, type->size);
  if (count > 0) ck.mul(count - 1, type->extent());  // every element's address is representable
  if (ck.overflow) return DDT_ERR_OVERFLOW;
  if (offset > *total) return DDT_ERR_TRUNCATE;
  return DDT_SUCCESS;
}

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
inline void typed_span(const void* buf, int64_t count, ddt_type type, uint64_t* lo, uint64_t* len, bool* wraps) {
  const int64_t span = (count - 1) * type->extent();
  *lo = reinterpret_cast<uintptr_t>(buf) + static_cast<uint64_t>(type->true_lb) +
        static_cast<uint64_t>(span < 0 ? span : 0);  // modulo 2^64
  *wraps = __builtin_add_overflow(static_cast<uint64_t>(type->true_ub - type->true_lb),
                                  span < 0 ? -static_cast<uint64_t>(span) : static_cast<uint64_t>(span), len);
}

// Do the bytes [lo, lo + len) reach into the lowest or the highest 64 KiB of the address space?
inline bool in_low_window(uint64_t lo, uint64_t len) {
  const uint64_t top = UINT64_MAX - static_cast<uint64_t>(kLowAddresses) + 1;  // the window below 2^64
  return lo < static_cast<uint64_t>(kLowAddresses) || lo >= top || len > top - lo;
}

inline bool hostile(const void* buf, int64_t count, ddt_type type) {
  if (count == 0 || type->size == 0) return false;
  uint64_t lo, len;
  bool wraps;
  typed_span(buf, count, type, &lo, &len, &wraps);
  return wraps || in_low_window(lo, len);
}

// hostile(buf, 1, type) for a type with data, with no span arithmetic (the entry points' plain
// call, execute.cpp, makes it on every small call).
inline bool hostile_element(const void* buf, ddt_type type) {
  return in_low_window(reinterpret_cast<uintptr_t>(buf) + static_cast<uint64_t>(type->true_lb),
                       static_cast<uint64_t>(type->true_ub - type->true_lb));
}

// A contiguous buffer of n bytes at p (the packed side): the same rule.
inline bool hostile(const void* p, int64_t n) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  return n > 0 && a < static_cast<uintptr_t>(kLowAddresses);
}

// The checks of ddt_pack (and of the GPU layer's pack): *n is the number of bytes to move.
inline int pack_args(const void* inbuf, int64_t incount, ddt_type type, int64_t offset, const void* outbuf,
                     int64_t outsize, const int64_t* packed, int64_t* n) {
  int64_t total;
  if (int e = stream(type, incount, offset, &total)) return e;
  if (!packed || outsize < 0 || (outsize > 0 && !outbuf)) return DDT_ERR_ARG;
  *n = std::min(outsize, total - offset);
  if (*n > 0 && (hostile(inbuf, incount, type) || hostile(outbuf, *n))) return DDT_ERR_ARG;
  return DDT_SUCCESS;
}

// The checks of ddt_unpack: insize bytes fit the stream from offset on.
inline int unpack_args(const void* inbuf, int64_t insize, const void* outbuf, int64_t outcount, ddt_type type,
                       int64_t offset, const int64_t* unpacked) {
  int64_t total;
  if (int e = stream(type, outcount, offset, &total)) return e;
  if (!unpacked || insize < 0 || (insize > 0 && !inbuf)) return DDT_ERR_ARG;
  if (insize > total - offset) return DDT_ERR_TRUNCATE;
  if (insize > 0 && (hostile(outbuf, outcount, type) || hostile(inbuf, insize))) return DDT_ERR_ARG;
  return DDT_SUCCESS;
}

// The checks of ddt_copy: *total is both sides' packed size.
inline int copy_args(const void* src, int64_t scount, ddt_type stype, const void* dst, int64_t dcount, ddt_type dtype,
                     int64_t* total) {
  int64_t dtotal;
  if (int e = stream(stype, scount, 0, total)) return e;
  if (int e = stream(dtype, dcount, 0, &dtotal)) return e;
  if (*total != dtotal) return DDT_ERR_SIZE_MISMATCH;
  if (*total > 0 && (hostile(src, scount, stype) || hostile(dst, dcount, dtype))) return DDT_ERR_ARG;
  return DDT_SUCCESS;
}

}  // namespace ddt
