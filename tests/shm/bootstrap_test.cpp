// The intra-node runtime started from under mpiexec (issue 10): ddt_comm_init_mpi
// (include/ddtkit_mpi_bootstrap.h) over ddt_comm_init_bootstrap. Run as `mpiexec -n N
// bootstrap_test_<mpi>`; every rank checks, and any failure prints where and aborts the job.
//
//   1. ddt_comm_init_bootstrap's argument checks and failures, each process alone, before any
//      runtime exists: bad arguments; a broadcast that fails (root and non-root); a root that
//      cannot create the segment (its file size limit lowered) broadcasts an error marker, and a
//      rank given that marker fails at once; a rank given the name of a segment its root gave up
//      fails at once. None leaves a segment behind in /dev/shm.
//   2. ddt_comm_init_mpi(MPI_COMM_WORLD): the runtime's rank and size are the node-local ones;
//      a second init fails on every rank (collectively, nobody hangs).
//   3. A ring of messages, every byte checked: eager contiguous, eager vector, rendezvous vector
//      received into a contiguous type of equal size, heap buffers (ddt_alloc) moved by the
//      mapped heap (forced, and counted) and by the cost model's choice, a wildcard gather at
//      rank 0; a barrier; finalize.
#include <dirent.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "ddtkit_mpi_bootstrap.h"

namespace {

int world_rank = -1;

[[noreturn]] void fail(const char* file, int line, const char* what) {
  std::fprintf(stderr, "bootstrap_test: FAILED at %s:%d (world rank %d): %s\n", file, line, world_rank, what);
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
  _exit(1);
}
#define CHECK(c)                              \
  do {                                        \
    if (!(c)) fail(__FILE__, __LINE__, #c);   \
  } while (0)
#define CHECK_RC(call, want)                                                                       \
  do {                                                                                             \
    const int rc_ = (call);                                                                        \
    if (rc_ != (want)) {                                                                           \
      char m_[512];                                                                                \
      std::snprintf(m_, sizeof m_, "%s returned %d (%s), expected %d", #call, rc_, ddt_error_string(rc_), want); \
      fail(__FILE__, __LINE__, m_);                                                                \
    }                                                                                              \
  } while (0)

// Segments in /dev/shm that this process created (their names carry the creator's uid and pid).
int my_segments() {
  const std::string mine = "ddtkit-" + std::to_string(getuid()) + "-" + std::to_string(getpid()) + "-";
  int n = 0;
  if (DIR* d = opendir("/dev/shm")) {
    while (dirent* e = readdir(d))
      if (std::strncmp(e->d_name, mine.c_str(), mine.size()) == 0) ++n;
    closedir(d);
  }
  return n;
}

// Broadcasts that stand in for a node's: one that fails, and one that records what the root
// sent (or replays it to a non-root).
struct Recorded {
  std::vector<char> bytes;
  int result = 0;
};
int failing_bcast(void*, int, void*) { return 1; }
int recording_bcast(void* buf, int bytes, void* ctx) {
  auto* r = static_cast<Recorded*>(ctx);
  r->bytes.assign(static_cast<char*>(buf), static_cast<char*>(buf) + bytes);
  return r->result;
}
int replaying_bcast(void* buf, int bytes, void* ctx) {
  auto* r = static_cast<Recorded*>(ctx);
  if (static_cast<int>(r->bytes.size()) != bytes) return 1;
  std::memcpy(buf, r->bytes.data(), bytes);
  return 0;
}

void negative_checks() {
  const int before = my_segments();
  CHECK(before == 0);
  ddt_bootstrap b{0, 2, nullptr, failing_bcast};
  CHECK_RC(ddt_comm_init_bootstrap(nullptr), DDT_ERR_ARG);
  for (auto [rank, size] : {std::pair{0, 0}, {0, -1}, {-1, 2}, {2, 2}, {5, 2}, {0, 257}, {300, 257}}) {
    b.rank = rank, b.size = size;
    CHECK_RC(ddt_comm_init_bootstrap(&b), DDT_ERR_ARG);
  }
  b = ddt_bootstrap{1, 2, nullptr, nullptr};
  CHECK_RC(ddt_comm_init_bootstrap(&b), DDT_ERR_ARG);

  // A broadcast that fails: a non-root learns nothing, a root gives up the segment it made.
  b = ddt_bootstrap{1, 2, nullptr, failing_bcast};
  CHECK_RC(ddt_comm_init_bootstrap(&b), DDT_ERR_COMM);
  Recorded rec;
  rec.result = 1;
  b = ddt_bootstrap{0, 2, &rec, recording_bcast};
  CHECK_RC(ddt_comm_init_bootstrap(&b), DDT_ERR_COMM);
  CHECK(rec.bytes.size() == 256);
  CHECK(my_segments() == 0);
  // ... and a rank handed that (unlinked) segment's name fails at once instead of waiting.
  b = ddt_bootstrap{1, 2, &rec, replaying_bcast};
  CHECK_RC(ddt_comm_init_bootstrap(&b), DDT_ERR_COMM);

  // A root that cannot create the segment (ftruncate beyond RLIMIT_FSIZE: EFBIG) broadcasts the
  // failure, and a rank that receives it fails too.
  struct rlimit old;
  CHECK(getrlimit(RLIMIT_FSIZE, &old) == 0);
  struct rlimit low = old;
  low.rlim_cur = 4096;
  void (*oldsig)(int) = signal(SIGXFSZ, SIG_IGN);
  CHECK(setrlimit(RLIMIT_FSIZE, &low) == 0);
  Recorded marker;
  b = ddt_bootstrap{0, 2, &marker, recording_bcast};
  const int rc = ddt_comm_init_bootstrap(&b);
  CHECK(setrlimit(RLIMIT_FSIZE, &old) == 0);
  signal(SIGXFSZ, oldsig);
  CHECK_RC(rc, DDT_ERR_COMM);
  CHECK(marker.bytes.size() == 256);
  CHECK(my_segments() == 0);
  b = ddt_bootstrap{1, 2, &marker, replaying_bcast};
  CHECK_RC(ddt_comm_init_bootstrap(&b), DDT_ERR_COMM);

  // A garbled message (no marker) is refused, not followed.
  Recorded junk;
  junk.bytes.assign(256, 'x');
  b = ddt_bootstrap{1, 2, &junk, replaying_bcast};
  CHECK_RC(ddt_comm_init_bootstrap(&b), DDT_ERR_COMM);

  int s = 0;
  CHECK_RC(ddt_comm_size(&s), DDT_ERR_COMM);  // no runtime was started by any of these
  CHECK(my_segments() == 0);
}

// The byte every sender puts at element i of its buffer, seeded by round and sender.
inline unsigned char pattern(int round, int sender, int64_t i) {
  return static_cast<unsigned char>((i * 131 + sender * 17 + round * 29 + (i >> 8)) & 0xff);
}

// Fails unless the rendezvous receives between the readings t0 and t1 went heap times by the heap
// and cells times by the cells (what: the rounds, for the message).
void expect_ways(const ddt_comm_times& t0, const ddt_comm_times& t1, int64_t heap, int64_t cells, const char* what,
                 int line) {
  const int64_t by_heap = t1.by_heap - t0.by_heap, by_cells = t1.by_cells - t0.by_cells;
  if (by_heap == heap && by_cells == cells) return;
  char m[200];
  std::snprintf(m, sizeof m, "%s: %lld receives by the heap and %lld by the cells, expected %lld and %lld", what,
                static_cast<long long>(by_heap), static_cast<long long>(by_cells), static_cast<long long>(heap),
                static_cast<long long>(cells));
  fail(__FILE__, line, m);
}

// One ring exchange: every rank sends count x stype from sbuf to rank + 1 and receives rcount x
// rtype into rbuf from rank - 1; then checks that the received packed stream is the sender's.
void ring(int round, int rank, int size, void* sbuf, int64_t scount, ddt_type stype, void* rbuf, int64_t rcount,
          ddt_type rtype, int64_t rbytes_of_buffer) {
  int64_t ssize = 0, rsize = 0;
  CHECK_RC(ddt_type_size(stype, &ssize), DDT_SUCCESS);
  CHECK_RC(ddt_type_size(rtype, &rsize), DDT_SUCCESS);
  const int64_t bytes = ssize * scount;
  CHECK(rsize * rcount >= bytes);
  const int to = (rank + 1) % size, from = (rank + size - 1) % size;
  // The sender's packed stream is pattern(round, rank, i): unpack it into sbuf.
  std::vector<unsigned char> stream(bytes);
  for (int64_t i = 0; i < bytes; ++i) stream[i] = pattern(round, rank, i);
  int64_t used = 0;
  CHECK_RC(ddt_unpack(stream.data(), bytes, sbuf, scount, stype, 0, &used), DDT_SUCCESS);
  std::memset(rbuf, 0xEE, rbytes_of_buffer);
  ddt_request reqs[2];
  ddt_status st[2];
  CHECK_RC(ddt_comm_irecv(rbuf, rcount, rtype, from, 100 + round, &reqs[0]), DDT_SUCCESS);
  CHECK_RC(ddt_comm_isend(sbuf, scount, stype, to, 100 + round, &reqs[1]), DDT_SUCCESS);
  CHECK_RC(ddt_comm_waitall(2, reqs, st), DDT_SUCCESS);
  CHECK(st[0].source == from && st[0].tag == 100 + round && st[0].error == DDT_SUCCESS && st[0].bytes == bytes);
  // Received bytes: the sender's stream, packed back out of rbuf with the receive type.
  std::vector<unsigned char> got(rsize * rcount);
  CHECK_RC(ddt_pack(rbuf, rcount, rtype, 0, got.data(), static_cast<int64_t>(got.size()), &used), DDT_SUCCESS);
  for (int64_t i = 0; i < bytes; ++i)
    if (got[i] != pattern(round, from, i)) {
      char m[160];
      std::snprintf(m, sizeof m, "round %d: byte %lld from rank %d is %d, expected %d", round, static_cast<long long>(i),
                    from, got[i], pattern(round, from, i));
      fail(__FILE__, __LINE__, m);
    }
  // And nothing outside the receive type's blocks was written: count the untouched bytes.
  int64_t untouched = 0;
  for (int64_t i = 0; i < rbytes_of_buffer; ++i) untouched += static_cast<unsigned char*>(rbuf)[i] == 0xEE;
  int64_t expect_untouched = rbytes_of_buffer - rsize * rcount;
  // Received bytes that happen to equal 0xEE are counted as untouched as well.
  for (int64_t i = 0; i < bytes; ++i) expect_untouched += got[i] == 0xEE;
  for (int64_t i = bytes; i < rsize * rcount; ++i) expect_untouched += got[i] == 0xEE;
  CHECK(untouched == expect_untouched);
}

void run(int node_rank, int node_size) {
  int rank = -1, size = -1;
  CHECK_RC(ddt_comm_rank(&rank), DDT_SUCCESS);
  CHECK_RC(ddt_comm_size(&size), DDT_SUCCESS);
  CHECK(rank == node_rank);
  CHECK(size == node_size);

  // Eager, contiguous.
  {
    std::vector<int> s(100), r(100);
    ring(1, rank, size, s.data(), 100, DDT_INT, r.data(), 100, DDT_INT, sizeof(int) * 100);
  }
  ddt_type small_vec = DDT_TYPE_NULL, big_vec = DDT_TYPE_NULL, big_contig = DDT_TYPE_NULL;
  CHECK_RC(ddt_type_vector(64, 3, 5, DDT_DOUBLE, &small_vec), DDT_SUCCESS);  // 1.5 KiB packed: eager
  CHECK_RC(ddt_type_commit(small_vec), DDT_SUCCESS);
  CHECK_RC(ddt_type_vector(4096, 16, 32, DDT_INT, &big_vec), DDT_SUCCESS);   // 256 KiB packed: rendezvous
  CHECK_RC(ddt_type_commit(big_vec), DDT_SUCCESS);
  CHECK_RC(ddt_type_contiguous(4096 * 16, DDT_INT, &big_contig), DDT_SUCCESS);
  CHECK_RC(ddt_type_commit(big_contig), DDT_SUCCESS);
  const int64_t small_span = (63 * 5 + 3) * 8, big_span = (4095 * 32 + 16) * 4;

  // Eager, a vector on both sides.
  {
    std::vector<char> s(small_span), r(small_span);
    ring(2, rank, size, s.data(), 1, small_vec, r.data(), 1, small_vec, small_span);
  }
  ddt_comm_times t0{}, t1{};
  CHECK_RC(ddt_comm_get_times(&t0), DDT_SUCCESS);
  // Rendezvous, vector to vector, and vector to a contiguous type of the same size (the types
  // differ, the signatures' bytes agree), from malloc'd memory.
  {
    std::vector<char> s(big_span), r(big_span);
    ring(3, rank, size, s.data(), 1, big_vec, r.data(), 1, big_vec, big_span);
    ring(4, rank, size, s.data(), 1, big_vec, r.data(), 1, big_contig, big_span);
    ring(5, rank, size, s.data(), 2, small_vec, r.data(), 1, big_contig, big_span);  // eager into a larger receive
  }
  CHECK_RC(ddt_comm_get_times(&t1), DDT_SUCCESS);
  CHECK(t1.receives - t0.receives >= 2);  // rounds 3 and 4 went by rendezvous

  // From the mapped heap: the heap mechanism forced on every rank (and counted), then the cost
  // model's choice; buffers reused across rounds.
  {
    void *s = nullptr, *r = nullptr;
    CHECK_RC(ddt_alloc(big_span, &s), DDT_SUCCESS);
    CHECK_RC(ddt_alloc(big_span, &r), DDT_SUCCESS);
    CHECK_RC(ddt_comm_configure(DDT_MECH_HEAP, DDT_EXCHANGE_MEMOIZED, 0), DDT_SUCCESS);
    CHECK_RC(ddt_comm_get_times(&t0), DDT_SUCCESS);
    for (int round = 6; round < 9; ++round) ring(round, rank, size, s, 1, big_vec, r, 1, big_vec, big_span);
    CHECK_RC(ddt_comm_get_times(&t1), DDT_SUCCESS);
    CHECK(t1.by_heap - t0.by_heap == 3);
    CHECK(t1.cache_hits - t0.cache_hits >= 2);  // memoized: repeats send only the key
    CHECK_RC(ddt_comm_configure(DDT_MECH_AUTO, DDT_EXCHANGE_MEMOIZED, 0), DDT_SUCCESS);
    ring(9, rank, size, s, 1, big_vec, r, 1, big_contig, big_span);
    ring(10, rank, size, s, 1, big_contig, r, 1, big_vec, big_span);
    CHECK_RC(ddt_free(s), DDT_SUCCESS);
    CHECK_RC(ddt_free(r), DDT_SUCCESS);
  }

  // The heap/pipe cost model (rendezvous.cpp's kHeapMinLineBytes): from the mapped heap, pieces
  // go through the heap where they fill the cache lines they touch and through the cells where
  // each has a line of its own, or where short pieces fill only part of their lines. `apart` is
  // as dense as `dense`, in two runs 4 MiB apart: its lines must be counted (56 B of payload
  // each), since an estimate from its span (as if every piece had lines of its own: 19.5 B) sends
  // it through the cells; LAMMPS_full's struct over arrays that lie apart is that case. With the
  // count off (kCountPieces 0) the `apart` round fails here.
  {
    const int64_t n = 2048, gap = int64_t{4} << 20;  // 28-56 KiB packed: rendezvous
    std::vector<int64_t> disp(n);
    for (int64_t i = 0; i < n; ++i) disp[i] = i < n / 2 ? 32 * i : gap + 32 * (i - n / 2);
    ddt_type dense = DDT_TYPE_NULL, sparse = DDT_TYPE_NULL, partly = DDT_TYPE_NULL, apart = DDT_TYPE_NULL;
    CHECK_RC(ddt_type_vector(n, 7, 8, DDT_INT, &dense), DDT_SUCCESS);    // 28 B pieces, 56 B a line
    CHECK_RC(ddt_type_vector(4 * n, 1, 32, DDT_INT, &sparse), DDT_SUCCESS);  // 4 B a line
    CHECK_RC(ddt_type_vector(4 * n, 3, 6, DDT_INT, &partly), DDT_SUCCESS);   // 12 B pieces, 32 B a line
    CHECK_RC(ddt_type_hindexed_block(n, 7, disp.data(), DDT_INT, &apart), DDT_SUCCESS);
    const int64_t span = gap + 32 * n;
    void *s = nullptr, *r = nullptr;
    CHECK_RC(ddt_alloc(span, &s), DDT_SUCCESS);
    CHECK_RC(ddt_alloc(span, &r), DDT_SUCCESS);
    // `partly`'s 12 B pieces at 24 B move in masked 64-byte windows where the CPU has AVX-512
    // (cpu/permute_avx512.hpp's copy, rendezvous.cpp's Pieces::windows), a fraction of a load and
    // store a piece: then the heap, whatever the lines.
    const char* avx512 = std::getenv("DDTKIT_AVX512");
    const bool windows = __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vbmi") &&
                         !(avx512 && std::strcmp(avx512, "0") == 0);
    int round = 11;
    for (auto [t, heap] : {std::pair{dense, true}, {sparse, false}, {partly, windows}, {apart, true}}) {
      CHECK_RC(ddt_type_commit(t), DDT_SUCCESS);
      CHECK_RC(ddt_comm_get_times(&t0), DDT_SUCCESS);
      ring(round, rank, size, s, 1, t, r, 1, t, span);
      CHECK_RC(ddt_comm_get_times(&t1), DDT_SUCCESS);
      const std::string what = "round " + std::to_string(round);
      expect_ways(t0, t1, heap ? 1 : 0, heap ? 0 : 1, what.c_str(), __LINE__);
      ++round;
    }
    CHECK_RC(ddt_free(s), DDT_SUCCESS);
    CHECK_RC(ddt_free(r), DDT_SUCCESS);
    for (ddt_type* t : {&dense, &sparse, &partly, &apart}) CHECK_RC(ddt_type_free(t), DDT_SUCCESS);
  }

  // Messages an eager cell would hold go by RTS past 6 KiB where they lie in the heap, the heap
  // pays for their layout and their pieces are under 128 B (rendezvous.cpp's rendezvous_from_heap,
  // layout_pays_heap): the receiver's one copy out of the sender's heap beats the cell's pack and
  // unpack of small pieces. 8 KiB of 40 B pieces at 560 B (NAS_LU_y's faces) from the heap: the
  // heap; 8 KiB contiguous (the cell's copies run at memory speed) and 4 KiB: eager (no rendezvous
  // receive); 8 KiB of 4 B pieces at 128 B (4 B a line), 8 KiB of 4 B pieces at 8 B (osu_latency's
  // vect:8:4, which the heap would copy in masked windows where the CPU has AVX-512) and the 40 B
  // pieces in the C library's memory: eager.
  {
    const int64_t big = 8192, small = 4096, span = 128 * 2048;
    ddt_type sparse = DDT_TYPE_NULL, faces = DDT_TYPE_NULL, tiny = DDT_TYPE_NULL;
    CHECK_RC(ddt_type_vector(2048, 1, 32, DDT_INT, &sparse), DDT_SUCCESS);
    CHECK_RC(ddt_type_commit(sparse), DDT_SUCCESS);
    CHECK_RC(ddt_type_vector(2048, 4, 8, DDT_BYTE, &tiny), DDT_SUCCESS);
    CHECK_RC(ddt_type_commit(tiny), DDT_SUCCESS);
    CHECK_RC(ddt_type_vector(205, 40, 560, DDT_BYTE, &faces), DDT_SUCCESS);
    CHECK_RC(ddt_type_commit(faces), DDT_SUCCESS);
    void *s = nullptr, *r = nullptr;
    CHECK_RC(ddt_alloc(span, &s), DDT_SUCCESS);
    CHECK_RC(ddt_alloc(span, &r), DDT_SUCCESS);
    std::vector<char> libc(span);
    struct Case {
      void* buf;
      int64_t count;
      ddt_type t;
      bool heap;
    } cases[] = {{s, 1, faces, true},
                 {s, big, DDT_BYTE, false},
                 {s, small, DDT_BYTE, false},
                 {s, 1, sparse, false},
                 {s, 1, tiny, false},
                 {libc.data(), 1, faces, false}};
    int round = 16;
    for (const Case& c : cases) {
      CHECK_RC(ddt_comm_get_times(&t0), DDT_SUCCESS);
      ring(round, rank, size, c.buf, c.count, c.t, r, c.count, c.t, span);
      CHECK_RC(ddt_comm_get_times(&t1), DDT_SUCCESS);
      const int64_t receives = t1.receives - t0.receives, by_heap = t1.by_heap - t0.by_heap;
      if (c.heap ? !(receives == 1 && by_heap == 1) : receives != 0) {
        char m[160];
        std::snprintf(m, sizeof m, "round %d: %lld rendezvous receives, %lld by the heap; expected %s", round,
                      static_cast<long long>(receives), static_cast<long long>(by_heap), c.heap ? "one by the heap" : "eager");
        fail(__FILE__, __LINE__, m);
      }
      ++round;
    }
    CHECK_RC(ddt_free(s), DDT_SUCCESS);
    CHECK_RC(ddt_free(r), DDT_SUCCESS);
    CHECK_RC(ddt_type_free(&sparse), DDT_SUCCESS);
    CHECK_RC(ddt_type_free(&faces), DDT_SUCCESS);
    CHECK_RC(ddt_type_free(&tiny), DDT_SUCCESS);
  }

  // A sparse layout the cost model sends through the cells (4 B pieces 96 B apart) is learned
  // (learn.hpp): the model's way for its first four receives, the heap's for the next four,
  // whatever their times; from the ninth on as their times say. DDTKIT_LEARN=0: the cells.
  {
    const int64_t n = 8192, span = 96 * n;
    ddt_type sparse = DDT_TYPE_NULL;
    CHECK_RC(ddt_type_vector(n, 1, 24, DDT_INT, &sparse), DDT_SUCCESS);
    CHECK_RC(ddt_type_commit(sparse), DDT_SUCCESS);
    void *s = nullptr, *r = nullptr;
    CHECK_RC(ddt_alloc(span, &s), DDT_SUCCESS);
    CHECK_RC(ddt_alloc(span, &r), DDT_SUCCESS);
    const char* learn = std::getenv("DDTKIT_LEARN");
    const bool learning = !(learn && std::strcmp(learn, "0") == 0);
    CHECK_RC(ddt_comm_get_times(&t0), DDT_SUCCESS);
    for (int round = 22; round < 30; ++round) ring(round, rank, size, s, 1, sparse, r, 1, sparse, span);
    CHECK_RC(ddt_comm_get_times(&t1), DDT_SUCCESS);
    expect_ways(t0, t1, learning ? 4 : 0, learning ? 4 : 8, "rounds 22-29", __LINE__);
    CHECK_RC(ddt_free(s), DDT_SUCCESS);
    CHECK_RC(ddt_free(r), DDT_SUCCESS);
    CHECK_RC(ddt_type_free(&sparse), DDT_SUCCESS);
  }

  // A transpose (FFT2D's send type into its receive type, spec 3.5: N = 128 over two ranks, a
  // 64 KiB block) goes through the cells: the heap's copy would transpose by tiles on the
  // receiver's core alone, about a pack and an unpack together (rendezvous.cpp, Pieces::tiled).
  // The sender's rows are dense, so by its lines alone the model says heap, and the learner is
  // not asked: six receives, six by the cells.
  {
    const int64_t N = 128, n = N / 2, span = 16 * N * n;
    ddt_type cx = DDT_TYPE_NULL, rows = DDT_TYPE_NULL, send = DDT_TYPE_NULL, col = DDT_TYPE_NULL, cell = DDT_TYPE_NULL,
             recv = DDT_TYPE_NULL;
    CHECK_RC(ddt_type_contiguous(2, DDT_DOUBLE, &cx), DDT_SUCCESS);
    CHECK_RC(ddt_type_vector(n, n, N, cx, &rows), DDT_SUCCESS);
    CHECK_RC(ddt_type_resized(rows, 0, 16 * n, &send), DDT_SUCCESS);
    CHECK_RC(ddt_type_vector(n, 1, N, cx, &col), DDT_SUCCESS);
    CHECK_RC(ddt_type_resized(col, 0, 16, &cell), DDT_SUCCESS);
    CHECK_RC(ddt_type_contiguous(n, cell, &recv), DDT_SUCCESS);
    CHECK_RC(ddt_type_commit(send), DDT_SUCCESS);
    CHECK_RC(ddt_type_commit(recv), DDT_SUCCESS);
    void *s = nullptr, *r = nullptr;
    CHECK_RC(ddt_alloc(span, &s), DDT_SUCCESS);
    CHECK_RC(ddt_alloc(span, &r), DDT_SUCCESS);
    CHECK_RC(ddt_comm_get_times(&t0), DDT_SUCCESS);
    for (int round = 30; round < 36; ++round) ring(round, rank, size, s, 1, send, r, 1, recv, span);
    CHECK_RC(ddt_comm_get_times(&t1), DDT_SUCCESS);
    expect_ways(t0, t1, 0, 6, "rounds 30-35", __LINE__);
    CHECK_RC(ddt_free(s), DDT_SUCCESS);
    CHECK_RC(ddt_free(r), DDT_SUCCESS);
    for (ddt_type* t : {&cx, &rows, &send, &col, &cell, &recv}) CHECK_RC(ddt_type_free(t), DDT_SUCCESS);
  }

  // A struct over two arrays allocated apart, 20 MiB of other live allocations between them: all
  // of a process's heap lies in one window segment (heap.hpp), so the receiver reads both through
  // one mapping. With 16 MiB arena segments the arrays lay in two segments and the transfer went
  // by CMA (this round failed so: "went 0 by the heap and 0 by the cells").
  {
    const int64_t block = 32 << 10;  // 64 KiB packed: rendezvous, dense (heap by the cost model)
    void *a = nullptr, *b = nullptr, *r = nullptr;
    std::vector<void*> between(40);
    CHECK_RC(ddt_alloc(block, &a), DDT_SUCCESS);
    for (void*& p : between) CHECK_RC(ddt_alloc(512 << 10, &p), DDT_SUCCESS);
    CHECK_RC(ddt_alloc(block, &b), DDT_SUCCESS);
    CHECK_RC(ddt_alloc(2 * block, &r), DDT_SUCCESS);
    const int64_t disp[2] = {0, static_cast<int64_t>(reinterpret_cast<uintptr_t>(b) - reinterpret_cast<uintptr_t>(a))};
    const int64_t lens[2] = {block, block};
    ddt_type arrays = DDT_TYPE_NULL, whole = DDT_TYPE_NULL;
    CHECK_RC(ddt_type_hindexed(2, lens, disp, DDT_BYTE, &arrays), DDT_SUCCESS);
    CHECK_RC(ddt_type_contiguous(2 * block, DDT_BYTE, &whole), DDT_SUCCESS);
    CHECK_RC(ddt_type_commit(arrays), DDT_SUCCESS);
    CHECK_RC(ddt_type_commit(whole), DDT_SUCCESS);
    CHECK_RC(ddt_comm_get_times(&t0), DDT_SUCCESS);
    ring(15, rank, size, a, 1, arrays, r, 1, whole, 2 * block);
    CHECK_RC(ddt_comm_get_times(&t1), DDT_SUCCESS);
    expect_ways(t0, t1, 1, 0, "round 15", __LINE__);
    for (void* p : {a, b, r}) CHECK_RC(ddt_free(p), DDT_SUCCESS);
    for (void* p : between) CHECK_RC(ddt_free(p), DDT_SUCCESS);
    for (ddt_type* t : {&arrays, &whole}) CHECK_RC(ddt_type_free(t), DDT_SUCCESS);
  }

  // A wildcard gather at rank 0: one message from every other rank, each source exactly once.
  if (rank == 0) {
    std::vector<int> seen(size, 0);
    for (int k = 1; k < size; ++k) {
      int v[2] = {-1, -1};
      ddt_status st{};
      CHECK_RC(ddt_comm_recv(v, 2, DDT_INT, DDT_ANY_SOURCE, DDT_ANY_TAG, &st), DDT_SUCCESS);
      CHECK(st.source >= 1 && st.source < size && st.tag == 7 && st.bytes == 8);
      CHECK(v[0] == st.source && v[1] == st.source * 1000);
      CHECK(seen[st.source]++ == 0);
    }
  } else {
    int v[2] = {rank, rank * 1000};
    CHECK_RC(ddt_comm_send(v, 2, DDT_INT, 0, 7), DDT_SUCCESS);
  }

  CHECK_RC(ddt_comm_barrier(), DDT_SUCCESS);
  CHECK_RC(ddt_type_free(&small_vec), DDT_SUCCESS);
  CHECK_RC(ddt_type_free(&big_vec), DDT_SUCCESS);
  CHECK_RC(ddt_type_free(&big_contig), DDT_SUCCESS);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);

  negative_checks();
  MPI_Barrier(MPI_COMM_WORLD);

  // The node's ranks as the runtime must see them.
  MPI_Comm node;
  int node_rank = -1, node_size = -1;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, world_rank, MPI_INFO_NULL, &node);
  MPI_Comm_rank(node, &node_rank);
  MPI_Comm_size(node, &node_size);
  MPI_Comm_free(&node);

  CHECK_RC(ddt_comm_init_mpi(MPI_COMM_WORLD), DDT_SUCCESS);
  CHECK(my_segments() == 0);                                 // the name is gone once all joined
  CHECK_RC(ddt_comm_init_mpi(MPI_COMM_WORLD), DDT_ERR_COMM);  // once per process, on every rank
  run(node_rank, node_size);
  CHECK_RC(ddt_comm_finalize(), DDT_SUCCESS);
  CHECK_RC(ddt_comm_finalize(), DDT_ERR_COMM);

  MPI_Barrier(MPI_COMM_WORLD);
  if (world_rank == 0) std::printf("bootstrap_test: ok, %d processes on the node\n", node_size);
  MPI_Finalize();
  return 0;
}
