// A hostile peer (issue 10's safety rules): rank 1 writes forged cells straight into its channel
// to rank 0, bypassing its own runtime, and rank 0 must reject each with an error, never crash,
// never hang, and never write outside the receive it was given; messages that follow the forged
// ones still arrive intact. White-box by necessity: the forger uses the runtime's internal cell
// format (shm/job.hpp) and state (shm/runtime.hpp).
//
//   ddtkit run -n 2 forge_test
//
// Forged, in order (tag: what): 10 a layout whose span reaches past the heap segment it names;
// 11 a garbage layout; 12 a layout under another layout's key; 13 a negative count; 14 a count
// whose size overflows; 15 a segment never sent and an address that is not mapped (CMA: the
// kernel refuses); then cells that name no live request (CTS, DATA, IOV, FIN, MORE, unknown
// kinds), an RTS with an absurd body length (dropped), an UNMAP of the real segment; and after
// all of it, real messages (tags 16, 17) that must arrive byte for byte.
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <vector>

#include "ddtkit.h"
#include "shm/heap.hpp"
#include "shm/job.hpp"
#include "shm/memo.hpp"
#include "shm/runtime.hpp"

namespace {

using namespace ddt::shm;

int failures = 0;
void expect(bool ok, const char* what) {
  if (!ok) {
    ++failures;
    std::fprintf(stderr, "forge_test: FAIL: %s\n", what);
  }
}

// Writes one cell to rank 0 as the runtime would, waiting for room.
void forge(const CellHeader& h, const void* data, size_t n) {
  Channel* c = channel(rt.job, 1, 0);
  uint64_t head = c->head.load(std::memory_order_relaxed);
  while (head - c->tail.load(std::memory_order_acquire) >= static_cast<uint64_t>(kCells)) usleep(100);
  Cell& cell = c->cells[head % kCells];
  cell.h = h;
  if (n) std::memcpy(cell.data, data, n);
  c->head.store(head + 1, std::memory_order_release);
}

constexpr int64_t kBlock = 64 << 10, kBlocks = 8;  // a vector of 512 KiB: rendezvous, CMA-worthy blocks

ddt_type vector_type() {
  ddt_type t = DDT_TYPE_NULL;
  ddt_type_vector(kBlocks, kBlock, 2 * kBlock, DDT_BYTE, &t);
  ddt_type_commit(t);
  return t;
}

CellHeader rts(int tag, uint64_t id, uint64_t addr, int64_t count, uint64_t seg) {
  CellHeader h{};
  h.kind = kRts, h.tag = tag, h.bytes = kBlock * kBlocks, h.id = id, h.addr = addr, h.count = count, h.seg = seg;
  return h;
}

int forger() {
  ddt_type t = vector_type();
  void* mem = nullptr;
  expect(ddt_alloc(4 * kBlock * kBlocks, &mem) == DDT_SUCCESS, "ddt_alloc");
  std::memset(mem, 7, 4 * kBlock * kBlocks);
  // A real transfer first: rank 0 maps the segment.
  expect(ddt_comm_send(mem, 1, t, 0, 1) == DDT_SUCCESS, "the real first send");
  ddt_comm_barrier();
  const uintptr_t base = reinterpret_cast<uintptr_t>(mem);
  const SegmentRef seg = find_segment(base, base + 1, 0);
  const auto body = serialized(t);
  const Hash key = key_of(t);

  // 10: the layout is real, the segment is real, but the buffer sits so that the span runs past
  // the segment's end.
  CellHeader h = rts(10, 1001, base + static_cast<uint64_t>(seg.size) - kBlock, 1, seg.id);
  h.desc = static_cast<int64_t>(body->size());
  forge(h, body->data(), body->size());
  // 11: garbage for a layout.
  std::vector<char> junk(200);
  for (size_t i = 0; i < junk.size(); ++i) junk[i] = static_cast<char>(i * 37 + 11);
  h = rts(11, 1002, base, 1, seg.id);
  h.desc = static_cast<int64_t>(junk.size());
  forge(h, junk.data(), junk.size());
  // 12: the real layout under a key that is not its own.
  h = rts(12, 1003, base, 1, seg.id);
  Hash wrong = key;
  wrong.bytes[0] ^= 0xff;
  put_key(h, wrong);
  h.flags = kHasHash, h.desc = static_cast<int64_t>(body->size());
  forge(h, body->data(), body->size());
  // 13, 14: counts a caller could never pass.
  h = rts(13, 1004, base, -5, seg.id);
  h.desc = static_cast<int64_t>(body->size());
  forge(h, body->data(), body->size());
  h = rts(14, 1005, base, INT64_MAX / 3, seg.id);
  h.desc = static_cast<int64_t>(body->size());
  forge(h, body->data(), body->size());
  // 15: a segment id never sent, and an address with nothing mapped (CMA reads it: EFAULT).
  h = rts(15, 1006, 4096, 1, 999999);
  h.desc = static_cast<int64_t>(body->size());
  forge(h, body->data(), body->size());
  // Rank 0 has judged 10-15 before anything below reaches it: the UNMAP below would otherwise be
  // read in the same sweep as those RTSs, ahead of their deferred copies, and send tag 10 by CMA
  // (reading this process's own memory past the segment, which any sender may send) instead of
  // through the heap mapping whose bounds it tests.
  ddt_comm_barrier();
  // Cells that name nothing live, a continuation of nothing, unknown kinds, an absurd body.
  for (uint32_t kind : std::initializer_list<uint32_t>{kCts, kData, kIov, kFin, kMore, 77u, 0u}) {
    CellHeader x{};
    x.kind = kind, x.id = 123456789, x.id2 = 42, x.bytes = 100, x.offset = 0, x.count = 3;
    forge(x, junk.data(), 100);
  }
  h = rts(16, 1007, base, 1, seg.id);
  h.desc = int64_t{1} << 40;
  forge(h, junk.data(), 100);
  // An unmap of the real segment: rank 0 drops its mapping; the next send from it must still
  // arrive (by another mechanism, since the runtime here believes the segment is mapped there).
  CellHeader u{};
  u.kind = kUnmap, u.seg = seg.id;
  forge(u, nullptr, 0);

  // Real messages after the forged ones.
  std::memset(mem, 9, 4 * kBlock * kBlocks);
  expect(ddt_comm_send(mem, 1, t, 0, 16) == DDT_SUCCESS, "the real send after the forgeries (tag 16)");
  expect(ddt_comm_send(mem, 1, t, 0, 17) == DDT_SUCCESS, "the real send after the unmap (tag 17)");
  ddt_comm_barrier();
  ddt_free(mem);
  ddt_type_free(&t);
  return 0;
}

int victim() {
  ddt_type t = vector_type();
  const int64_t bytes = kBlock * kBlocks, margin = 4096;
  std::vector<char> buf(static_cast<size_t>(bytes + 2 * margin), 0x5a);
  char* at = buf.data() + margin;
  ddt_status st{};
  expect(ddt_comm_recv(at, bytes, DDT_BYTE, 1, 1, &st) == DDT_SUCCESS && st.bytes == bytes, "the real first receive");
  ddt_comm_barrier();
  for (int tag = 10; tag <= 15; ++tag) {
    std::memset(buf.data(), 0x5a, buf.size());
    const int e = ddt_comm_recv(at, bytes, DDT_BYTE, 1, tag, &st);
    char what[128];
    std::snprintf(what, sizeof what, "forged rts tag %d: error %d (%s), want DDT_ERR_CORRUPT", tag, e, ddt_error_string(e));
    expect(e == DDT_ERR_CORRUPT, what);
    bool margins = true, untouched = true;
    for (int64_t i = 0; i < margin; ++i) margins = margins && buf[i] == 0x5a && buf[buf.size() - 1 - i] == 0x5a;
    for (int64_t i = 0; i < bytes; ++i) untouched = untouched && at[i] == 0x5a;
    std::snprintf(what, sizeof what, "forged rts tag %d: bytes outside the receive written", tag);
    expect(margins, what);
    if (tag != 15) {  // 15 reads by CMA, which may deliver a prefix before the fault
      std::snprintf(what, sizeof what, "forged rts tag %d: the receive was written", tag);
      expect(untouched, what);
    }
  }
  ddt_comm_barrier();  // the forger's second batch follows
  for (int tag : {16, 17}) {
    std::memset(buf.data(), 0x5a, buf.size());
    const int e = ddt_comm_recv(at, bytes, DDT_BYTE, 1, tag, &st);
    bool ok = e == DDT_SUCCESS && st.bytes == bytes;
    for (int64_t i = 0; i < bytes; ++i) ok = ok && at[i] == 9;
    char what[96];
    std::snprintf(what, sizeof what, "the real message of tag %d after the forgeries (error %d)", tag, e);
    expect(ok, what);
  }
  ddt_comm_barrier();
  ddt_type_free(&t);
  return 0;
}

}  // namespace

int main() {
  if (ddt_comm_init() != DDT_SUCCESS) {
    std::fprintf(stderr, "forge_test: run it as `ddtkit run -n 2 forge_test`\n");
    return 2;
  }
  int me = -1, n = 0;
  ddt_comm_rank(&me);
  ddt_comm_size(&n);
  if (n != 2) {
    std::fprintf(stderr, "forge_test: needs exactly 2 ranks\n");
    return 2;
  }
  if (me == 1) forger();
  else victim();
  ddt_comm_finalize();
  if (me == 0) std::printf("forge_test: %s\n", failures ? "FAILED" : "every forgery rejected, later messages intact");
  return failures ? 1 : 0;
}
