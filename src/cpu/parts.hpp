// The executor of a Parts plan: an element is a short table of nests (plan.hpp's Shape::Parts),
// any byte range [lo, hi) of the stream of count elements.
//
// Each element is cut at its entries' stream offsets, and each entry's share of the range runs
// as one Nest call over the entry's own plan, so a struct of a few vectors moves at the speed of
// those vectors packed one after another (no recursive walk, no width switch per run).
#pragma once
#include <algorithm>
#include <cstdint>

#include "cpu/elements.hpp"
#include "cpu/nest.hpp"
#include "plan/plan.hpp"

namespace ddt {

template <bool Gather>
inline void parts(const Plan& p, uintptr_t base, int64_t lo, int64_t hi, char* seq) {  // [lo, hi): checked by the caller
  element_shares(base, p.size, p.extent, lo, hi, [&](uintptr_t element, int64_t off, int64_t end) {
    for (size_t j = 0; j < p.parts.size(); ++j) {
      const Plan& q = p.parts[j];
      const int64_t first = p.part_offset[j];
      const int64_t a = std::max(off, first) - first, b = std::min(end, first + q.size) - first;
      if (a >= b) continue;
      const uintptr_t at = element + static_cast<uintptr_t>(q.disp);
      if (a > 0 || b < q.size || !small_nest<Gather>(q, at, seq)) nest<Gather>(q, view_of(q), at, a, b, seq);
      seq += b - a;
    }
  });
}

}  // namespace ddt
