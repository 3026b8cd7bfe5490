// Suite 2: the vector sweep. vector(payload / block, block, 2 x block) of char, int and double,
// blocks of 1 B to 64 KiB, for 2 MiB of payload (in cache) and 64 MiB (out of cache). The
// hand-written loop is the element loop users write; the peer builds the same vector; `read`
// reads the blocks without copying them (the floor below). The default run times every block
// size in cache and a subset out of cache; --full times all of them.
#include <cstdlib>
#include <cstring>
#include <vector>

#include "context.hpp"

namespace {

template <class T>
void hand_pack(const char* in, char* out, int64_t count, int64_t bl, int64_t stride) {
  const T* s = reinterpret_cast<const T*>(in);
  T* d = reinterpret_cast<T*>(out);
  for (int64_t i = 0; i < count; ++i)
    for (int64_t j = 0; j < bl; ++j) *d++ = s[i * stride + j];
}

template <class T>
void hand_unpack(const char* in, char* out, int64_t count, int64_t bl, int64_t stride) {
  const T* s = reinterpret_cast<const T*>(in);
  T* d = reinterpret_cast<T*>(out);
  for (int64_t i = 0; i < count; ++i)
    for (int64_t j = 0; j < bl; ++j) d[i * stride + j] = *s++;
}

// The floor of a pack: bringing its blocks' lines into the core and nothing else (one 8-byte
// load per line that a block touches, folded into a word the compiler must keep). A copy of the
// blocks cannot take less time than that, so memcpy / read bounds what any pack reaches on the
// cell. Out of cache, with a gap as wide as the block, the memory system moves the gap's lines too:
// `ddtkit bench --suite sweep`, two runs, 64 MiB, memcpy / read: 64 B blocks 0.82-1.05, 512 B
// 0.93-0.98 (the same bytes contiguous read in about half a memcpy's time). Blocks of 64 B and more.
volatile uint64_t g_read_sink;
void read_blocks(const char* in, int64_t count, int64_t block, int64_t stride) {
  uint64_t first = 0, rest = 0, w;
  for (int64_t i = 0; i < count; ++i) {
    const char* b = in + i * stride;
    std::memcpy(&w, b, 8);  // the block's first line, from its first byte
    first ^= w;
    const uintptr_t end = reinterpret_cast<uintptr_t>(b) + static_cast<uintptr_t>(block);
    for (uintptr_t l = (reinterpret_cast<uintptr_t>(b) & ~uintptr_t{63}) + 64; l < end; l += 64) {
      std::memcpy(&w, reinterpret_cast<const char*>(l), 8);  // may read into the gap after the last line's start
      rest ^= w;
    }
  }
  g_read_sink = first ^ rest;
}

// Page-aligned bytes, as OMB's and STREAM's buffers are. The sweep's vectors then start on a
// cache line and a cell measures one layout, not the allocator's placement: with std::vector's
// storage a block started wherever glibc put the array (16 B past a page for a fresh mmap, any
// multiple of 16 from the heap once free() has raised the mmap threshold), and an unaligned 64 B
// block spans two lines, so the same cell moved twice the lines from one run to the next (ddtkit
// at 64 B in cache 0.68-0.74 of memcpy in make bench; /tmp probe, 2 MiB, memcpy / pack at a line
// 0.83-0.84, 16 B past it 0.57-0.59, a bare 64-byte load and store per block the same).
struct PageBytes {
  char* p = nullptr;
  explicit PageBytes(size_t n) {
    void* v = nullptr;
    if (posix_memalign(&v, 4096, n)) std::abort();
    p = static_cast<char*>(v);
  }
  ~PageBytes() { std::free(p); }
  PageBytes(const PageBytes&) = delete;
  PageBytes& operator=(const PageBytes&) = delete;
};

// The unaligned cells: the same vector 16 B past a line (a fresh large malloc's offset), for
// blocks of 64 B, 512 B and 4 KiB, with their own memcpy and read floor at that offset (report:
// the columns "+16 B"). Not a target: each block then touches one line more than its payload.
constexpr int64_t kOff = 16;
bool off_cell(int64_t block) { return block == 64 || block == 512 || block == 4096; }

struct Base {
  const char* name;
  ddt_type ddt;
  int64_t size;
  void (*pack)(const char*, char*, int64_t, int64_t, int64_t);
  void (*unpack)(const char*, char*, int64_t, int64_t, int64_t);
};

}  // namespace

void suite_sweep(const Context& c) {
  const Base bases[] = {{"char", DDT_CHAR, 1, hand_pack<char>, hand_unpack<char>},
                        {"int", DDT_INT, 4, hand_pack<int>, hand_unpack<int>},
                        {"double", DDT_DOUBLE, 8, hand_pack<double>, hand_unpack<double>}};
  const int64_t payloads[] = {c.smoke ? 64 << 10 : 2 << 20, c.smoke ? 256 << 10 : 64 << 20};
  for (int64_t payload : payloads) {
    const bool in_cache = payload == payloads[0];
    PageBytes src_b(2 * payload + 64), out_b(payload + 64), contig_b(payload + 64);
    char *src = src_b.p, *out = out_b.p, *contig = contig_b.p;
    for (int64_t i = 0; i < 2 * payload + 64; ++i) src[i] = static_cast<char>(i * 7 + 3);
    std::memset(out, 0, payload + 64);
    std::memset(contig, 1, payload + 64);
    for (const Base& b : bases)
      for (int64_t block = 1; block <= (64 << 10); block *= 2) {
        if (block < b.size) continue;
        if (!in_cache && !c.full && block != 1 && block != 8 && block != 64 && block != 512 && block != 4096 &&
            block != (64 << 10))
          continue;
        const int64_t count = payload / block, bl = block / b.size;
        ddt_type t;
        ddt_type_vector(count, bl, 2 * bl, b.ddt, &t);
        ddt_type_commit(t);
        std::unique_ptr<PeerType> pt = c.peer_type(t);  // the peer's vector(count, bl, 2 bl) of the same base
        int64_t got;
        const int reps = in_cache ? c.reps(11) : c.reps(7);
        const double sample = in_cache ? 2e5 : 1;  // out of cache: one call per sample
        std::vector<Method> pack = {{"ddtkit", [&] { ddt_pack(src, 1, t, 0, out, payload, &got); }}};
        if (pt) pack.push_back({"mpi", [&] { int64_t p = 0; pt->pack(src, 1, out, payload, &p); }});
        pack.push_back({"memcpy", [&] { std::memcpy(out, contig, payload); }});
        pack.push_back({"manual", [&] { b.pack(src, out, count, bl, 2 * bl); }});
        // Issue 9's floor: a memcpy call per block, the loop a user writes when the element loop is
        // too slow (the same memory traffic as ddtkit's, moved by glibc's copy). Blocks of 8 B
        // and more: below, a call per block is no contender.
        if (block >= 8)
          pack.push_back({"blockcopy", [&] {
                            for (int64_t i = 0; i < count; ++i) std::memcpy(out + i * block, src + 2 * i * block, block);
                          }});
        if (block >= 64)
          pack.push_back({"read", [&] { read_blocks(src, count, block, 2 * block); }});
        if (off_cell(block)) {
          pack.push_back({"ddtkit+16", [&] { ddt_pack(src + kOff, 1, t, 0, out + kOff, payload, &got); }});
          pack.push_back({"memcpy+16", [&] { std::memcpy(out + kOff, contig + kOff, payload); }});
          pack.push_back({"read+16", [&] { read_blocks(src + kOff, count, block, 2 * block); }});
        }
        char params[96];
        std::snprintf(params, sizeof params, "%s block %lld B", in_cache ? "2 MiB" : "64 MiB", (long long)block);
        auto tp = measure(pack, reps, sample, !in_cache);
        c.results->add("sweep", std::string("vector ") + b.name, params, "pack", payload, tp);
        std::vector<Method> unpack = {{"ddtkit", [&] { ddt_unpack(out, payload, src, 1, t, 0, &got); }}};
        if (pt) unpack.push_back({"mpi", [&] { int64_t p = 0; pt->unpack(out, payload, &p, src, 1); }});
        unpack.push_back({"memcpy", [&] { std::memcpy(contig, out, payload); }});
        unpack.push_back({"manual", [&] { b.unpack(out, src, count, bl, 2 * bl); }});
        if (block >= 8)
          unpack.push_back({"blockcopy", [&] {
                              for (int64_t i = 0; i < count; ++i) std::memcpy(src + 2 * i * block, out + i * block, block);
                            }});
        auto tu = measure(unpack, reps, sample, !in_cache);
        c.results->add("sweep", std::string("vector ") + b.name, params, "unpack", payload, tu);
        char peer[96] = "";
        if (pt) std::snprintf(peer, sizeof peer, ", %s %.2f", c.peer_name.c_str(), find(tp, "memcpy") / find(tp, "mpi"));
        c.progress("[sweep] %-6s %-7s block %6lld B: pack ddtkit %.2f%s, manual %.2f of memcpy", b.name,
                   in_cache ? "2 MiB" : "64 MiB", (long long)block, find(tp, "memcpy") / find(tp, "ddtkit"), peer,
                   find(tp, "memcpy") / find(tp, "manual"));
        pt.reset();
        ddt_type_free(&t);
      }
  }
}
