// The mapped shared heap (ddt_alloc / ddt_free): memory that the other processes of the job can
// map and read with plain loads, XPMEM-style but without a kernel module.
//
// Every allocation lies in a segment: a memfd, sized once and sealed against shrinking and
// growing (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL), so a peer that has mapped it can never be
// made to fault by its owner truncating it. Allocations are carved first-fit from a window: one
// segment of kWindowBytes of address space, sparse (ftruncate allocates no memory; a page is
// allocated when it is first touched), that lives until the process ends. So all of a program's
// heap buffers lie in one segment that a peer maps once, and a layout over several separately
// allocated arrays (a struct of arrays, MPI_BOTTOM-style absolute addresses) is read through that
// one mapping. With 16 MiB arenas instead, WRF_y_sa 8x8's arrays spanned two segments and its
// transfers fell back to the pipe (24.5 against 18.4 us a round trip for the same bytes as
// WRF_y_vec) and COOP to CMA (352 us). Allocations of kDedicated bytes or more are page-aligned
// and zero-filled, and their pages go back to the system when freed (FALLOC_FL_PUNCH_HOLE, which
// also drops them from the peers' mappings), as munmap did when each had a segment of its own.
// Where the address space for a window cannot be had (RLIMIT_AS), the window is halved down to
// kArenaBytes; an allocation that no window can hold gets a segment of its own (unmapped when
// freed) if it is of kDedicated bytes or more, else a new window. A segment's id is a per-process
// counter that is never reused, so a peer's attachment to (owner, id) can never name other memory.
// Seen, and not the window's: in 5 of 17 ddt_runtime_bench runs with the window (make bench's
// among them) the vector sweep's first rows (2 MiB in 128-256 B blocks from the heap, the first
// timed after the cost split) ran slow, RGET's 128 B latency 160-667 us and bidirectional
// 17.6-35.7 GB/s against 80-150 us and 42-53 GB/s in the other runs; the build with 16 MiB
// arenas did the same in 2 of 11 (202 us and 27.2 GB/s; 16.4 GB/s one way), and a build that
// punched no hole in 2 of 3. This machine's, as far as these runs tell. Rows from 512 B on were
// level.
//
// The heap knows nothing of peers beyond a bit per peer of "this segment's descriptor was sent
// there" (set by the runtime); when a segment is unmapped, the runtime collects those peers with
// take_released() and tells them to drop their mappings.
#pragma once
#include <atomic>
#include <cstdint>
#include <vector>

namespace ddt::shm {

constexpr int64_t kDedicated = int64_t{1} << 20;
constexpr int64_t kArenaBytes = int64_t{16} << 20;  // the smallest window
// 64 GiB: a peer maps every other rank's window, so a job of 256 ranks holds 16 TiB of mappings
// in each process, an eighth of x86-64's 128 TiB of user address space; only touched pages cost.
constexpr int64_t kWindowBytes = int64_t{64} << 30;

struct SegmentRef {
  uint64_t id = 0;      // 0: not in the heap
  int fd = -1;
  uintptr_t base = 0;   // the owner's address of the segment's first byte
  int64_t size = 0;
  bool sent = false;    // its descriptor has gone to the peer asked about
};

// Every address of every segment this process ever mapped lies in [span_lo, span_hi): widened
// as segments are mapped, never narrowed. An address outside is no heap allocation's, told in two
// loads without the heap's lock: ddt_free and ddt_alloc_size ask it first, and so does the
// preloadable allocator's free() before it calls into the heap (the interposer's copy of it sees
// every free() of the MPI library: callgrind, a 512 B vector ping-pong under Open MPI, 1.4 frees a
// round trip at 55 instructions each, of which the heap call was 24).
extern std::atomic<uintptr_t> span_lo, span_hi;
inline bool maybe_ours(uintptr_t a) {
  return a >= span_lo.load(std::memory_order_relaxed) && a < span_hi.load(std::memory_order_relaxed);
}

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
