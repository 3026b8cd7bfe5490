// 64-bit arithmetic that reports overflow instead of wrapping: every size, extent and
// displacement in ddtkit goes through these, so an overflow becomes DDT_ERR_OVERFLOW.
#pragma once
#include <cstdint>

namespace ddt {

// Accumulates overflow in a flag so a long computation can be checked once at its end.
struct Checked {
  bool overflow = false;
  int64_t add(int64_t a, int64_t b) {
    int64_t r;
    overflow |= __builtin_add_overflow(a, b, &r);
    return r;
  }
  int64_t sub(int64_t a, int64_t b) {
    int64_t r;
    overflow |= __builtin_sub_overflow(a, b, &r);
    return r;
  }
  int64_t mul(int64_t a, int64_t b) {
    int64_t r;
    overflow |= __builtin_mul_overflow(a, b, &r);
    return r;
  }
};

}  // namespace ddt
