// The pass rule: when a message of a translated type goes to the MPI as it is, with the user's
// (buf, count, datatype), instead of as bytes that ddtkit packed.
//
// MPICH: large messages of types made of large pieces go to the MPI as they are. Staging costs a
// pack and an unpack pass over the data on top of the MPI's own copies, while MPICH moves large
// contiguous pieces with its single-copy path; measured on FFT2D (2 ranks, MPICH 5.0.2, pieces
// of 2-12 KiB, 0.5-19 MB per Alltoall; bench/ddtbench_mpi.cpp), staging ran at 0.6-1.1x of
// MPICH's own path and passing through at 0.95-1.05x. Only messages whose elements share no byte
// (see disjoint), of positive extent and without x87 long doubles (whose 6 padding bytes MPICH
// leaves unwritten) are passed: MPICH moves those exactly as the standard says.
// Open MPI: never. Handed every monotone type, Open MPI 5.0.11 delivered wrong bytes in 14 of
// 11,779 checks of the interposer test (3 ranks, seed 11), so every derived type it sees from
// the interposer is bytes.
#include <algorithm>
#include <cstdlib>

#include "mpi/shim.hpp"

namespace ddtmpi {

int64_t pass_block_bytes() {
#ifdef OMPI_MAJOR_VERSION
  return 0;
#else
  static const int64_t v = [] {
    const char* e = std::getenv("DDTKIT_PASS_BLOCK");
    return e && *e ? std::atoll(e) : 2048;
  }();
  return v;
#endif
}

bool large_pass_candidate(const TypeInfo& info) {
  return pass_block_bytes() > 0 && info.mode == TypeInfo::Pack && !info.x87 && info.extent > 0 &&
         info.mean_block >= pass_block_bytes();
}

namespace {

constexpr int64_t kPassBytes = int64_t(1) << 16;

// Whether count elements of a type touch no byte twice: true for monotone types; otherwise (the
// elements interleave, as FFT2D's transposed rows do) checked once per count on the pieces of all
// count elements, sorted, where there are at most kCheckPieces of them. Found disjoint for a count,
// disjoint for every smaller one.
constexpr int64_t kCheckPieces = 4096;
bool disjoint(const TypeInfo& info, int64_t count) {
  if (info.monotone) return true;
  if (count <= info.disjoint_upto.load(std::memory_order_relaxed)) return true;
  if (info.pieces <= 0 || count > kCheckPieces / info.pieces) return false;
  // Offsets from a NULL base, compared signed: a type may reach below its buffer address.
  std::vector<std::pair<int64_t, int64_t>> all;
  each_piece(info.t, count, count * info.size, [&](uintptr_t base, size_t len) {
    all.push_back({static_cast<int64_t>(base), static_cast<int64_t>(len)});
  });
  std::sort(all.begin(), all.end());
  for (size_t i = 1; i < all.size(); ++i)
    if (all[i].first < all[i - 1].first + all[i - 1].second) return false;
  int64_t seen = info.disjoint_upto.load(std::memory_order_relaxed);
  while (seen < count && !info.disjoint_upto.compare_exchange_weak(seen, count)) {
  }
  return true;
}

}  // namespace

// The cheap tests first: disjoint may walk every piece of the message.
bool pass_as_is(const TypeInfo& info, int64_t count) {
  return large_pass_candidate(info) && count * info.size >= kPassBytes && disjoint(info, count);
}

}  // namespace ddtmpi
