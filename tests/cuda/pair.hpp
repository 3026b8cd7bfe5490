// A round of the two-process GPU tests (ipc_test, comm_gpu_test): a send type of `count`
// elements, a receive type of c2 elements with the same packed size that does not overlap itself
// (a GPU moves bytes in no order), and host images for both, all drawn from one random stream so
// that both processes build the same round from its seed.
#pragma once
#include <random>
#include <vector>

#include "gen.hpp"

struct TypePair {
  RefType ref, ref2;
  TPtr t, t2;
  int64_t count = 0, c2 = 0, total = 0;
  std::vector<char> src, dst;  // host images; the types' addresses at src_at, dst_at
  int64_t src_at = 0, dst_at = 0;

  // With t, ref and count drawn: the receive type and both images, the receive's with room for
  // `extra` elements more. c2 stays 0 where no receive type fits.
  void complete(std::mt19937_64& rng, const GenOptions& opt, int64_t extra) {
    total = count * ref.size;
    if (total <= 0) return;
    t2 = random_type_packing(rng, opt, total, 6, true, ref2, &c2);
    if (c2 == 0) return;
    int64_t lo, hi;
    ref_span(ref, count, lo, hi);
    src.resize(hi - lo + 128);
    src_at = 64 - lo;
    for (auto& c : src) c = static_cast<char>(rng());
    ref_span(ref2, c2 + extra, lo, hi);
    dst.assign(hi - lo + 128, 0x33);
    dst_at = 64 - lo;
  }
};
