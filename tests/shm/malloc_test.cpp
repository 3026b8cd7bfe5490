// The preloadable allocator (src/shm/preload/malloc.cpp), run under it:
//   LD_PRELOAD=libddtkit-malloc.so ddtkit run -n 2 malloc_test
// Rank 0 checks the allocator's contract (what lands in the heap, realloc across the threshold,
// calloc of reused memory, alignments, usable sizes, a forked child's writes staying its own);
// then each rank sends the other a 1 MiB vector from plain malloc memory and checks that the
// runtime moved it through the heap (ddt_comm_get_times) and that every byte arrived.
// Linked with the shared libddtkit.so: the allocator and the runtime must share one heap.
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "ddtkit.h"
#include "../support/check.hpp"

namespace {

int failures = 0;
constexpr const char* kTestName = "malloc_test";

bool in_heap(const void* p) {
  int64_t n = 0;
  return ddt_alloc_size(p, &n) == DDT_SUCCESS;
}

bool all(const unsigned char* p, size_t n, unsigned char v) {
  for (size_t i = 0; i < n; ++i)
    if (p[i] != v) return false;
  return true;
}

// The heap holds a descriptor per segment, and its buffers share one window segment (heap.hpp):
// under a limit of 256 descriptors, 300 live 1 MiB buffers all come from the heap, the heap holds
// at most a quarter of the limit, and the program can still open a file. (With a segment per
// large allocation, as before the window, this held 249 descriptors and open() failed, until the
// allocator learnt to stop at a quarter of the limit.)
void descriptors() {
  struct rlimit old;
  if (getrlimit(RLIMIT_NOFILE, &old) != 0 || old.rlim_max < 256) {
    CHECK(false, "cannot read or lower the descriptor limit (hard limit %llu)", (unsigned long long)old.rlim_max);
    return;
  }
  struct rlimit low = old;
  low.rlim_cur = 256;
  CHECK(setrlimit(RLIMIT_NOFILE, &low) == 0, "setrlimit(RLIMIT_NOFILE, 256) failed");
  void* many[300];
  int heap_n = 0;
  for (void*& p : many) {
    p = malloc(1 << 20);
    CHECK(p != nullptr, "a 1 MiB malloc failed under a limit of 256 descriptors");
    heap_n += in_heap(p);
  }
  int64_t held = -1;
  CHECK(ddt_alloc_descriptors(&held) == DDT_SUCCESS && held >= 1 && held <= 64,
        "the heap holds %lld descriptors for %d buffers (limit 256: at most 64)", (long long)held, heap_n);
  CHECK(ddt_alloc_descriptors(nullptr) == DDT_ERR_ARG, "ddt_alloc_descriptors(NULL) did not return DDT_ERR_ARG");
  const int fd = open("/dev/null", O_RDONLY);
  CHECK(fd >= 0, "with 300 live 1 MiB buffers the program cannot open a file: %s", strerror(errno));
  if (fd >= 0) close(fd);
  CHECK(heap_n == 300, "%d of 300 live 1 MiB buffers came from the heap (one window holds them all)", heap_n);
  for (void* p : many) free(p);
  setrlimit(RLIMIT_NOFILE, &old);
}

// A window's large allocations give their pages back when freed and come back zero-filled even
// where smaller allocations had written (ddt_alloc's contract, which the preloaded calloc skips
// its memset on).
void pages() {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE)), huge = 4 << 20;
  unsigned char* p = static_cast<unsigned char*>(malloc(huge));
  CHECK(p && in_heap(p) && reinterpret_cast<uintptr_t>(p) % page == 0, "a 4 MiB malloc is not page-aligned heap memory");
  memset(p, 0x5a, huge);
  __asm__ volatile("" : : "r"(p) : "memory");  // the stores are not dead: the free must find them
  uintptr_t was = reinterpret_cast<uintptr_t>(p);  // asked about after the free, never touched
  __asm__("" : "+r"(was));                         // (not a use of p to the compiler)
  free(p);
  std::vector<unsigned char> resident(huge / page);
  CHECK(mincore(reinterpret_cast<void*>(was), huge, resident.data()) == 0, "mincore failed: %s", strerror(errno));
  size_t kept = 0;
  for (unsigned char r : resident) kept += r & 1;
  CHECK(kept == 0, "%zu of %zu pages of a freed 4 MiB heap buffer are still resident", kept, resident.size());
  // Small allocations written over the same pages, freed, then one large calloc over them.
  std::vector<void*> small;
  for (int i = 0; i < 64; ++i) {
    small.push_back(malloc(256 << 10));
    memset(small.back(), 0xee, 256 << 10);
    __asm__ volatile("" : : "r"(small.back()) : "memory");
  }
  for (void* q : small) free(q);
  unsigned char* z = static_cast<unsigned char*>(calloc(1, 3 << 20));
  CHECK(z && in_heap(z) && all(z, 3 << 20, 0), "a 3 MiB calloc over freed, written heap memory is not zero");
  free(z);
}

void fragments();

// Fork handlers of "another library": each allocates and frees a 256 KiB heap block while on
// (prepare and parent in the parent, prepare and child in the child). They are registered after
// the heap's, as nearly every library's are: the heap registers its own when libddtkit is loaded.
// So the prepare handler runs before the heap takes its lock, and the others after it lets go
// (heap_fork_order_test arranges the other order).
bool handlers_on = false;
int handler_bytes = 0;
void handler_alloc() {
  if (!handlers_on) return;
  char* p = static_cast<char*>(malloc(256 << 10));
  if (p) p[0] = 1;  // written, as a library's would be
  if (p && in_heap(p)) ++handler_bytes;
  free(p);
}

void contract() {
  const size_t big = 256 << 10, huge = 3 << 20;
  void* small = malloc(100);
  if (small) memset(small, 0, 100);  // (in_heap takes a const pointer: GCC would call it a read of unset bytes)
  CHECK(small && !in_heap(small), "a 100-byte malloc came from the heap");
  unsigned char* b = static_cast<unsigned char*>(malloc(big));
  CHECK(b && in_heap(b), "a 256 KiB malloc did not come from the heap");
  CHECK(reinterpret_cast<uintptr_t>(b) % 64 == 0, "heap memory is not 64-byte aligned");
  CHECK(malloc_usable_size(b) >= big, "malloc_usable_size %zu < %zu", malloc_usable_size(b), big);
  memset(b, 0xab, big);
  // Grow within the heap, then across a segment of its own: the contents follow.
  b = static_cast<unsigned char*>(realloc(b, huge));
  CHECK(b && in_heap(b) && all(b, big, 0xab), "realloc to 3 MiB lost the contents or left the heap");
  // Shrink below the threshold: back to the C library, contents kept.
  b = static_cast<unsigned char*>(realloc(b, 1000));
  CHECK(b && !in_heap(b) && all(b, 1000, 0xab), "realloc to 1000 bytes lost the contents or stayed in the heap");
  // From the C library up into the heap.
  b = static_cast<unsigned char*>(realloc(b, big));
  CHECK(b && in_heap(b) && all(b, 1000, 0xab), "realloc from the C library into the heap lost the contents");
  free(b);
  // Arena memory is reused: calloc must clear it.
  unsigned char* d = static_cast<unsigned char*>(malloc(big));
  memset(d, 0xff, big);
  free(d);
  unsigned char* z = static_cast<unsigned char*>(calloc(big / 8, 8));
  CHECK(z && in_heap(z) && all(z, big, 0), "calloc of reused heap memory is not zero");
  free(z);
  void* a = nullptr;
  CHECK(posix_memalign(&a, 4096, huge) == 0 && a && reinterpret_cast<uintptr_t>(a) % 4096 == 0,
        "posix_memalign(4096, 3 MiB) failed or is misaligned");
  free(a);
  CHECK(posix_memalign(&a, 3, big) != 0, "posix_memalign accepted alignment 3");
  void* v = aligned_alloc(128, big);  // 128 > 64: from the C library, aligned
  CHECK(v && reinterpret_cast<uintptr_t>(v) % 128 == 0, "aligned_alloc(128) misaligned");
  free(v);
  CHECK(realloc(malloc(big), 0) == nullptr, "realloc(p, 0) did not free");
  free(small);
  // fork: the child's writes to inherited heap memory do not reach the parent.
  unsigned char* s = static_cast<unsigned char*>(malloc(big));
  memset(s, 1, big);
  const pid_t pid = fork();
  if (pid == 0) {
    memset(s, 2, big);
    void* more = malloc(big);  // the child's heap still works
    free(more);
    free(s);
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the forked child failed");
  CHECK(all(s, big, 1), "the forked child's writes reached the parent's heap memory");
  free(s);
  // A child's new allocation lands where the parent's next one does (the same fit over the same
  // free list): the window's free parts must be the child's own too.
  int go[2];
  CHECK(pipe(go) == 0, "pipe failed");
  const pid_t pid2 = fork();
  if (pid2 == 0) {
    char c;
    if (read(go[0], &c, 1) != 1) _exit(1);
    unsigned char* q = static_cast<unsigned char*>(malloc(big));
    memset(q, 4, big);
    _exit(0);
  }
  unsigned char* p = static_cast<unsigned char*>(malloc(big));
  memset(p, 3, big);
  CHECK(write(go[1], "x", 1) == 1, "write to the child failed");
  waitpid(pid2, &status, 0);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the second forked child failed");
  CHECK(all(p, big, 3), "a forked child's new heap allocation wrote into the parent's");
  close(go[0]);
  close(go[1]);
  free(p);
  // The child's copy is the memory at the fork: the parent's writes right after fork() returns do
  // not reach it (the parent waits until the child has copied, heap.cpp: parent_after_fork).
  const size_t snap = 64 << 20;
  unsigned char* m = static_cast<unsigned char*>(malloc(snap));
  CHECK(m && in_heap(m), "a 64 MiB malloc did not come from the heap");
  memset(m, 5, snap);
  const pid_t pid3 = fork();
  if (pid3 == 0) _exit(all(m, snap, 5) ? 0 : 1);
  memset(m, 6, snap);
  waitpid(pid3, &status, 0);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "a forked child saw its parent's writes made after the fork");
  free(m);
  // Fork handlers of other libraries that allocate and free heap memory (in the parent before and
  // after the fork, in the child after the heap's copy): the fork must finish and each must get
  // heap memory (an alarm ends the test if it hangs).
  handlers_on = true;
  alarm(60);
  const pid_t pid4 = fork();
  if (pid4 == 0) _exit(handler_bytes == 2 ? 0 : 1);  // prepare (before the fork) and child
  handlers_on = false;
  waitpid(pid4, &status, 0);
  alarm(0);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "fork handlers that allocate heap memory failed in the child");
  CHECK(handler_bytes == 2, "fork handlers that allocate heap memory ran %d times in the parent, not 2", handler_bytes);
  descriptors();
  pages();
  fragments();
}

// Many live heap blocks of mixed sizes, every second one freed and the holes filled by other
// sizes: no two live blocks overlap and every block keeps its bytes (the free list's two indexes,
// heap.cpp, stay in step). Then everything is freed: the holes merge, and one allocation of all
// their bytes fits where the first block was, at the next page (apart, the holes would send it past them).
void fragments() {
  struct Block {
    unsigned char* p;
    size_t n;
    unsigned char v;
  };
  std::vector<Block> live;
  uint64_t x = 12345;
  const auto next = [&] { return x = x * 6364136223846793005ull + 1442695040888963407ull, x >> 33; };
  const auto make = [&](size_t n) {
    Block b{static_cast<unsigned char*>(malloc(n)), n, static_cast<unsigned char>(live.size() * 31 + 7)};
    CHECK(b.p && in_heap(b.p), "a %zu-byte malloc did not come from the heap", n);
    if (b.p) memset(b.p, b.v, n);
    return b;
  };
  for (int i = 0; i < 600; ++i) live.push_back(make((64 << 10) + (next() % 8) * (48 << 10) + next() % 4096));
  uintptr_t lowest = UINTPTR_MAX;
  for (const Block& b : live) lowest = std::min(lowest, reinterpret_cast<uintptr_t>(b.p));
  for (size_t i = 0; i < live.size(); i += 2) free(live[i].p), live[i].p = nullptr;
  for (size_t i = 0; i < live.size(); i += 2) live[i] = make((64 << 10) + (next() % 12) * (32 << 10));
  std::vector<std::pair<uintptr_t, size_t>> spans;
  bool kept = true;
  for (const Block& b : live)
    if (b.p) spans.push_back({reinterpret_cast<uintptr_t>(b.p), b.n}), kept = kept && all(b.p, b.n, b.v);
  CHECK(kept, "a live heap block lost its bytes while others were freed and allocated");
  std::sort(spans.begin(), spans.end());
  for (size_t i = 1; i < spans.size(); ++i)
    CHECK(spans[i - 1].first + spans[i - 1].second <= spans[i].first, "two live heap blocks overlap at %#lx",
          static_cast<unsigned long>(spans[i].first));
  size_t total = 0;
  for (Block& b : live) {
    lowest = std::min(lowest, reinterpret_cast<uintptr_t>(b.p));
    total += b.n;
    free(b.p);
  }
  void* one = malloc(total);  // of more than 1 MiB: page-aligned
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE)), want = (lowest + page - 1) & ~(page - 1);
  CHECK(reinterpret_cast<uintptr_t>(one) == want, "after every block was freed, %zu bytes landed at %#lx, not %#lx where the first was",
        total, static_cast<unsigned long>(reinterpret_cast<uintptr_t>(one)), static_cast<unsigned long>(want));
  free(one);
}

// Each rank sends the other every second 4 KiB block of a 2 MiB buffer from plain malloc.
void transfer(int rank, int size) {
  if (size < 2) return;
  const int64_t blocks = 256, block = 4096, total = 2 * blocks * block;
  ddt_type t = DDT_TYPE_NULL;
  ddt_type_vector(blocks, block, 2 * block, DDT_BYTE, &t);
  ddt_type_commit(t);
  unsigned char* out = static_cast<unsigned char*>(malloc(total));
  unsigned char* in = static_cast<unsigned char*>(malloc(total));
  CHECK(in_heap(out) && in_heap(in), "the 2 MiB buffers did not come from the heap");
  for (int64_t i = 0; i < total; ++i) out[i] = static_cast<unsigned char>(i * 7 + rank);
  memset(in, 0, total);
  const int peer = rank ^ 1;
  if (peer < size) {
    ddt_request r[2];
    ddt_comm_irecv(in, 1, t, peer, 5, &r[0]);
    ddt_comm_isend(out, 1, t, peer, 5, &r[1]);
    const int e = ddt_comm_waitall(2, r, nullptr);
    CHECK(e == DDT_SUCCESS, "waitall returned %d", e);
    bool ok = true;
    for (int64_t i = 0; i < total && ok; ++i) {
      const bool covered = (i / block) % 2 == 0;
      const unsigned char want = covered ? static_cast<unsigned char>(i * 7 + peer) : 0;
      ok = in[i] == want;
    }
    CHECK(ok, "the vector from rank %d arrived wrong", peer);
    ddt_comm_times tm;
    ddt_comm_get_times(&tm);
    CHECK(tm.by_heap >= 1, "the runtime did not move the malloc buffer through the heap (by_heap %lld)",
          static_cast<long long>(tm.by_heap));
  }
  free(out);
  free(in);
  ddt_type_free(&t);
}

}  // namespace

int main() {
  pthread_atfork(handler_alloc, handler_alloc, handler_alloc);
  void* probe = calloc(1, 1 << 20);
  if (!in_heap(probe)) {
    fprintf(stderr, "malloc_test: run it under LD_PRELOAD=libddtkit-malloc.so (a 1 MiB calloc is not in the heap)\n");
    return 1;
  }
  free(probe);
  if (int e = ddt_comm_init()) {
    fprintf(stderr, "malloc_test: ddt_comm_init returned %d\n", e);
    return 1;
  }
  int rank = 0, size = 0;
  ddt_comm_rank(&rank);
  ddt_comm_size(&size);
  if (rank == 0) contract();
  transfer(rank, size);
  ddt_comm_barrier();
  ddt_comm_finalize();
  printf("malloc_test: rank %d: %s\n", rank, failures ? "FAILED" : "passed");
  return failures ? 1 : 0;
}
