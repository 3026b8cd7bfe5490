// Cutting a byte range of the stream of count elements into each element's share: the executors
// whose element is a short table of pieces (parts.hpp's nests, list.hpp's segments of blocks)
// cut every element at its pieces' stream offsets the same way.
#pragma once
#include <algorithm>
#include <cstdint>

namespace ddt {

// For stream bytes [lo, hi) of elements of `size` stream bytes (lo < hi checked by the caller),
// calls share(k, off, end) with each element's index and its bytes [off, end) of the range, in
// stream order.
template <class Share>
inline void element_indices(int64_t size, int64_t lo, int64_t hi, Share&& share) {
  int64_t k = lo / size, off = lo - k * size;  // element k, from its stream byte off
  while (lo < hi) {
    const int64_t end = std::min(size, off + (hi - lo));
    share(k, off, end);
    lo += end - off;
    off = 0;
    ++k;
  }
}

// The same, with each element's address for elements placed `extent` apart from base:
// share(element, off, end).
template <class Share>
inline void element_shares(uintptr_t base, int64_t size, int64_t extent, int64_t lo, int64_t hi, Share&& share) {
  element_indices(size, lo, hi, [&](int64_t k, int64_t off, int64_t end) {
    share(base + static_cast<uintptr_t>(k * extent), off, end);
  });
}

}  // namespace ddt
