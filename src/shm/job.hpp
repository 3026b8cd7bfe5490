// The job: the processes of one node that `ddtkit run` started, and the shared segment they
// communicate through. The launcher creates the segment (create_job), every rank maps it
// (attach_job), and the launcher marks ranks that die (mark_dead), so that survivors' operations
// fail instead of waiting for them.
//
// Segment layout: a JobHeader, then size x size channels, channel (from, to) carrying the cells
// that rank `from` writes and rank `to` reads. A channel is a single-producer single-consumer
// ring: `head` is written by the producer only, `tail` by the consumer only, and a cell is the
// producer's between head and tail + kCells and the consumer's between tail and head. That one
// writer per index is the whole synchronisation: no locks, no atomics read-modify-write. The
// consumer learns of a new cell from the cell's own `seq` (CellHeader), the producer of free
// cells from `tail`, read again only when the ring looks full: a message costs the consumer one
// cache-line miss for its header, not one for `head` and one for the header, and the producer
// none for `tail`.
//
// Safety: the file is created 0600 with O_EXCL in /dev/shm under a name that carries the user's
// id and the launcher's pid; attach checks owner, mode, magic, size and rank; rank 0 unlinks it
// once every rank holds it; the launcher removes stale segments of launchers that no longer run.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <sched.h>
#include <sys/types.h>

namespace ddt::shm {

constexpr uint64_t kJobMagic = 0x316d6d6f63746464ULL;  // "ddtcomm1"
constexpr int kMaxRanks = 256;
constexpr int kCells = 32;               // per channel
constexpr int64_t kCellBytes = 16384;    // a cell with its header

// What a cell carries (kind) and its words. id names a request of the side that will read the
// answer (an RTS names the sender's request, a CTS, DATA or IOV the receiver's); it is only ever
// used as a key into the reader's own table of live requests, never dereferenced.
//   eager   tag, bytes, id (the send), flags (kSync: answer FIN(id) on the match); the packed
//           message in data
//   rts     tag, bytes, id, addr and count of the send, seg (its heap segment or 0), flags
//           (kHasHash: hash names the layout; kIovExchange*: the layout comes as piece lists;
//           kResent: the layout again, for the receive id2 that asked), desc = bytes of the
//           serialized layout that follow in data and in kMore cells
//   cts     id (the send), id2 (the receive), flags (kNeedLayout, kSendIov, or neither: data);
//           with kPut or kCoop (rendezvous.cpp's RPUT and COOP) also addr and count of the
//           receive, offset = the receiver's share [0, offset) (coop), bytes = what the receiver
//           added to the sender's load counter for its share, kChunk (copy it in chunks),
//           kHasHash and hash naming the receive's layout, desc = bytes of its serialized layout
//           that follow (as rts)
//   data    id, offset, bytes: stream bytes [offset, offset + bytes) in data
//   iov     id, offset, bytes, count: `count` iovecs in data, the sender's pieces of stream
//           bytes [offset, offset + bytes)
//   fin     id, bytes delivered; flags kFinRecv: id names a receive (the sender's FIN of RPUT or
//           COOP), kRefused: the sender's CMA was refused (the receiver asks for data cells),
//           kFailed: the sender's share failed
//   again   id (the receive): the sender has no layout for the key its kPut/kCoop CTS named
//   more    the next part of the previous rts or layout of this channel
//   layout  hash, desc (as rts), flags kPin: ddt_type_commit_comm; forget: hash, unpin it
//   unmap   seg: the sender has freed that heap segment
enum CellKind : uint32_t {
  kEager = 1, kRts = 2, kCts = 3, kData = 4, kFin = 5, kIov = 6, kMore = 7, kLayout = 8, kForget = 9, kUnmap = 10,
  kAgain = 11
};
enum CellFlags : uint32_t {
  kHasHash = 1, kIovNaive = 2, kIovPipelined = 4, kResent = 8,  // rts (kHasHash: cts too)
  kNeedLayout = 16, kSendIov = 32, kPut = 64, kCoop = 128,       // cts
  kFinRecv = 256, kRefused = 512, kFailed = 1024,                // fin
  // rts and eager: the sender's call (seed 002's Table II): blocking, and its mode (kSync on an
  // eager cell also asks for a FIN once it has matched)
  kBlocking = 2048, kSync = 4096, kBuffered = 8192, kReady = 16384,
  kChunk = 32768,                                                // cts: the sender's share in chunks
  kIpc = 65536,  // rts: a device send; its body is the layout and a CUDA IPC description (comm.cpp)
};
// A cell's header as the runtime reads and writes it (get_header, put_header). In the cell it
// lies in two parts: the hot words at the cell's start, followed by the data, and the cold words
// in the cell's last line. The hot words are all that an eager message, a data cell, a FIN, an
// again and a more cell need (hot_only below), so the consumer, having polled `seq`, finds a
// short message's header and first 24 bytes in the line that poll brought, and never asks for
// the cold line; and the line after it, the data's next 64 bytes, is the other half of the
// 128-byte pair that the cache fetches together (seq in the second line of a pair brought the
// useless first instead). Measured here (2 cores), round trips: 1 B 0.58 us with seq in one line
// and kind, tag, bytes and id in another, 0.45 us with the hot words in the second line of the
// pair; and with them first, 64 B 0.78-0.80 -> 0.59 us, 256 B 0.92 -> 0.74-0.75, 480 B
// 0.98-1.04 -> 1.03-1.04, 1 KiB 1.38 -> 1.20-1.23, 2 KiB 1.74-1.75 -> 1.56-1.61, 3 KiB 2.31-2.33
// -> 1.97-2.02 (a raw two-copy ping-pong, no runtime: 0.33, 0.55, 0.76, 0.93, 1.22). The cost:
// a rendezvous cell (rts, cts) reads its cold line apart from the hot one, no longer its pair:
// 32 KiB heap round trips 8.43-8.52 -> 8.67-8.74 us (20 KiB, 64 KiB, 128 KiB: within noise).
struct HotWords {
  int64_t offset, bytes;
  uint64_t id;
  uint32_t kind;
  int32_t tag;
  uint32_t flags;
  // The cell's sequence number: its position in the ring + 1, mod 2^32. The producer stores it
  // last (atomically, with release: publish in comm.cpp) and never clears it; the consumer polls
  // the next cell's seq, not `head`, so that one cache-line transfer brings it both the news and
  // the header (and a short message's bytes): 1 B round trips took 0.95 us polling head, 0.77 us so.
  uint32_t seq;
};
// rts, cts, layout, forget, unmap, iov
struct ColdWords {
  uint64_t id2, addr;
  int64_t count, desc;
  uint64_t seg;
  uint8_t hash[16];  // with extent: a layout's key (the hash names one element's bytes; the
  int64_t extent;    // extent places the next, so two types differing in it must not share a key)
};
struct CellHeader : HotWords, ColdWords {};
constexpr int64_t kCellPayload = kCellBytes - static_cast<int64_t>(sizeof(HotWords) + sizeof(ColdWords));
struct Cell {
  HotWords hot;
  char data[kCellPayload];
  ColdWords cold;
};
static_assert(sizeof(HotWords) == 40 && sizeof(ColdWords) == 64 && sizeof(Cell) == kCellBytes &&
                  offsetof(Cell, cold) % 64 == 0 && offsetof(Cell, data) % 8 == 0,
              "a cell is its hot words, its data and its cold line");
// The kinds whose every word is hot: the consumer reads and the producer writes only those.
inline bool hot_only(uint32_t kind) { return kind == kEager || kind == kData || kind == kFin || kind == kMore || kind == kAgain; }
// Writes h into cell c, but for seq (the producer's publish stores it last), the cold words only
// where h's kind reads them.
inline void put_header(Cell& c, const CellHeader& h) {
  c.hot.offset = h.offset, c.hot.bytes = h.bytes, c.hot.id = h.id, c.hot.kind = h.kind, c.hot.tag = h.tag;
  c.hot.flags = h.flags;
  if (!hot_only(h.kind)) c.cold = h;
}
// A copy of cell c's header (the peer cannot change what is checked after it): the hot words,
// and the cold ones only where the kind reads them (zeros otherwise).
inline CellHeader get_header(const Cell& c) {
  CellHeader h{};
  static_cast<HotWords&>(h) = c.hot;
  if (!hot_only(h.kind)) static_cast<ColdWords&>(h) = c.cold;
  return h;
}

struct alignas(64) Channel {
  alignas(64) std::atomic<uint64_t> head;
  alignas(64) std::atomic<uint64_t> tail;
  alignas(64) Cell cells[kCells];
};

struct alignas(64) JobHeader {
  uint64_t magic;
  int32_t size;
  int32_t pad;
  std::atomic<int32_t> attached;
  std::atomic<int32_t> listening;         // ranks whose segment socket is bound (attach.hpp)
  std::atomic<int64_t> pid[kMaxRanks];    // set by each rank at attach
  std::atomic<int32_t> dead[kMaxRanks];   // set by the launcher when a rank has ended abnormally
  alignas(64) std::atomic<uint64_t> barrier_arrived;
  alignas(64) std::atomic<uint64_t> barrier_generation;
  // COOP-load (seed 002, II-B2): each rank's stream bytes yet to copy, one cache line each (a
  // rank adds to a peer's when it gives the peer a share; the peer subtracts as it copies).
  // With them, the copy work each rank has done lately (rendezvous.cpp's record_copied and
  // recent_copied): `recent` stream bytes it copied, as they stood at `stamp` (steady clock, ns)
  // and decaying from then on with protocol.cpp's kLoadDecayNs. The rank is their only writer, a
  // seqlock (`seq` odd while it writes) lets peers read the pair without a lock, and a reader
  // that finds it torn a few times takes what it read: a writer that died mid-write stalls no
  // one, and a stale or torn reading only balances less well.
  struct alignas(64) Load {
    std::atomic<int64_t> bytes;
    std::atomic<uint64_t> seq;
    std::atomic<int64_t> recent;
    std::atomic<int64_t> stamp;
  };
  Load load[kMaxRanks];
  // The cores each rank may run on (its affinity mask at init), so that every rank judges the
  // whole job's cores, not its own mask alone: a launcher that binds each rank to one core (Open
  // MPI's default for 2 ranks) gives every rank a one-core mask, which is no oversubscription
  // when the masks differ. Read only for rt.oversubscribed and the engine's spinning (comm.cpp):
  // a forged mask can only make this job wait or balance less well, never read or write memory.
  cpu_set_t cpus[kMaxRanks];
};

int64_t job_bytes(int size);
inline Channel* channel(JobHeader* h, int from, int to) {
  char* base = reinterpret_cast<char*>(h) + ((sizeof(JobHeader) + 4095) & ~size_t{4095});
  return reinterpret_cast<Channel*>(base) + (static_cast<int64_t>(from) * h->size + to);
}

// Launcher side. create_job makes the segment for size ranks and returns its path (empty on
// failure, with errno set); the header is mapped at *header for mark_dead.
std::string create_job(int size, JobHeader** header);
void remove_stale_jobs();  // segments of this user whose launcher no longer runs

// Rank side: maps the segment named by DDTKIT_JOB as DDTKIT_RANK of DDTKIT_SIZE; a ddtkit error
// code on failure.
int attach_job(JobHeader** header, int* rank, int* size);
// The same for a segment named by other means (a bootstrap through MPI): path, rank, size.
int attach_job_at(const char* path, int rank, int size, JobHeader** header);
void detach_job(JobHeader* header);
// Maps in, writable, every page of channel (from, to), so that no message pays a page fault on a
// cell's first use (see job.cpp); a hint: failure changes nothing.
void prefault_channel(JobHeader* header, int from, int to);

}  // namespace ddt::shm
