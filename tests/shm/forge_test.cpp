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
// all of it, real messages (tags 16, 17) that must arrive byte for byte. Then the other way
// round, rank 0 sending (tags 20, 21): rank 1 takes its RTS off the ring itself and answers with
// an RPUT CTS that names rank 1's real heap segment (its descriptor sent as the runtime would)
// but a receive whose span runs past the segment's end (20) or starts before it (21): rank 0's
// send must fail with DDT_ERR_CORRUPT and write nothing into the segment.
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
  put_header(cell, h);  // all but seq: not yet this cell's (the consumer polls it)
  if (n) std::memcpy(cell.data, data, n);
  __atomic_store_n(&cell.hot.seq, static_cast<uint32_t>(head + 1), __ATOMIC_RELEASE);
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

// Rank 0's next RTS of the given tag, taken off the ring from 0 to 1 before this process's
// runtime sees it (cells before it are skipped).
CellHeader take_rts(int tag) {
  Channel* c = channel(rt.job, 0, 1);
  for (;;) {
    const uint64_t tail = c->tail.load(std::memory_order_relaxed);
    if (c->head.load(std::memory_order_acquire) == tail) {
      usleep(100);
      continue;
    }
    const CellHeader h = get_header(c->cells[tail % kCells]);
    c->tail.store(tail + 1, std::memory_order_release);
    if (h.kind == kRts && h.tag == tag) return h;
  }
}

// A forged RPUT CTS to rank 0 for its send `sender`: the receive is `count` bytes at addr in
// segment seg (DDT_BYTE's layout in the body).
void forge_put_cts(const CellHeader& sender, uint64_t addr, int64_t count, uint64_t seg) {
  int64_t need = 0;
  ddt_type_serialize(DDT_BYTE, nullptr, 0, &need);
  std::vector<char> body(static_cast<size_t>(need));
  ddt_type_serialize(DDT_BYTE, body.data(), need, &need);
  CellHeader h{};
  h.kind = kCts, h.id = sender.id, h.id2 = 777, h.flags = kPut, h.seg = seg, h.addr = addr, h.count = count;
  h.desc = need;
  forge(h, body.data(), body.size());
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

  // 20, 21: forged RPUT CTSs for rank 0's sends, naming this process's real segment.
  std::memset(mem, 3, 4 * kBlock * kBlocks);
  // Sent again: rank 0 dropped its mapping at the forged UNMAP above. (A CTS naming a segment
  // that rank 0 does not hold would be written by CMA, which the kernel checks against this
  // process's own mappings: any receiver may have its own memory written where it says.)
  expect(rt.attacher.send(0, seg), "sending the segment's descriptor to rank 0");
  const int64_t n = kBlock * kBlocks;
  // Rank 0 sends only once told to, after this process's last runtime call: a runtime call here
  // would take rank 0's RTS off the ring itself.
  const char go = 1;
  expect(ddt_comm_send(&go, 1, DDT_BYTE, 0, 19) == DDT_SUCCESS, "the go-ahead (tag 19)");
  const CellHeader s20 = take_rts(20);
  forge_put_cts(s20, seg.base + static_cast<uint64_t>(seg.size) - 4096, n, seg.id);
  const CellHeader s21 = take_rts(21);
  forge_put_cts(s21, seg.base - 4096, n, seg.id);
  ddt_comm_barrier();
  bool intact = true;
  for (int64_t i = 0; i < 4 * kBlock * kBlocks; ++i) intact = intact && static_cast<char*>(mem)[i] == 3;
  expect(intact, "forged cts 20/21: the sender wrote into this process's segment");
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
  // 20, 21: this process sends; rank 1 answers each RTS with a forged RPUT CTS.
  std::vector<char> out(static_cast<size_t>(bytes), 1);
  char go = 0;
  expect(ddt_comm_recv(&go, 1, DDT_BYTE, 1, 19, nullptr) == DDT_SUCCESS, "the go-ahead (tag 19)");
  for (int tag : {20, 21}) {
    const int e = ddt_comm_send(out.data(), bytes, DDT_BYTE, 1, tag);
    char what[128];
    std::snprintf(what, sizeof what, "forged cts for the send of tag %d: error %d (%s), want DDT_ERR_CORRUPT", tag, e,
                  ddt_error_string(e));
    expect(e == DDT_ERR_CORRUPT, what);
  }
  // Rejected by the segment's bounds, not handed to CMA.
  ddt_comm_times tm{};
  expect(ddt_comm_get_times(&tm) == DDT_SUCCESS && tm.shares_cma == 0 && tm.shares_heap == 0,
         "forged cts 20/21: a share was written anyway");
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
