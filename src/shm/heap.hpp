// The mapped shared heap (ddt_alloc / ddt_free): memory that the other processes of the job can
// map and read with plain loads, XPMEM-style but without a kernel module.
//
// Every allocation lies in a segment: a memfd, sized once and sealed against shrinking and
// growing (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL), so a peer that has mapped it can never be
// made to fault by its owner truncating it. Allocations of at least kDedicated bytes get a segment
// of their own, unmapped when freed; smaller ones are carved first-fit from arena segments of
// kArenaBytes, which live until the process ends. A segment's id is a per-process counter that is
// never reused, so a peer's attachment to (owner, id) can never name other memory.
//
// The heap knows nothing of peers beyond a bit per peer of "this segment's descriptor was sent
// there" (set by the runtime); when a segment is unmapped, the runtime collects those peers with
// take_released() and tells them to drop their mappings.
#pragma once
#include <cstdint>
#include <vector>

namespace ddt::shm {

constexpr int64_t kDedicated = int64_t{1} << 20;
constexpr int64_t kArenaBytes = int64_t{16} << 20;

struct SegmentRef {
  uint64_t id = 0;      // 0: not in the heap
  int fd = -1;
  uintptr_t base = 0;   // the owner's address of the segment's first byte
  int64_t size = 0;
  bool sent = false;    // its descriptor has gone to the peer asked about
};

// The segment holding all of [lo, hi) in this process, or id 0; sent says whether peer holds it.
SegmentRef find_segment(uintptr_t lo, uintptr_t hi, int peer);

// Marks that segment id's descriptor has gone to peer.
void set_sent(uint64_t id, int peer);

// Changes, under the heap's lock, whenever a segment is mapped or unmapped, turns private after
// fork, or is marked sent: every find_segment answer stays true while it does not change. A
// caller that keeps an answer reads this before the lookup and reuses the answer only while the
// value is the same (rendezvous.cpp's heap_segment: the lookup's lock and map walk were half of
// a repeated send's layout exchange, the map's lines evicted by the copy between sends).
uint64_t heap_generation();

// Segments unmapped since the last call, with the peers that had been sent each.
struct Released {
  uint64_t id;
  std::vector<int> peers;
};
std::vector<Released> take_released();

}  // namespace ddt::shm
