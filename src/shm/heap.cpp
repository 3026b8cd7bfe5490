// The mapped shared heap (heap.hpp): segments, the window allocator, ddt_alloc and ddt_free.
//
// A window's allocation is first-fit over a free list ordered by address, with neighbours
// coalesced on free; blocks are multiples of 64 bytes, so every allocation is 64-byte aligned, and
// those of kDedicated bytes or more are whole pages. The heap is
// guarded by one mutex: ddt_alloc and ddt_free may be called from any thread, unlike ddt_comm_*.
//
// Two additions serve the preloadable allocator (src/shm/preload/malloc.cpp), which sends every
// free() here first: a pointer outside [span_lo, span_hi), the widest range any segment ever
// had, is answered without the lock; and a child of fork() turns the segments it inherited into
// private memory (a MAP_SHARED mapping would otherwise be shared with its parent, unlike the
// malloc memory it stands in for) and never offers them to peers.
#include "shm/heap.hpp"
#include "util/host_ranges.hpp"

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <pthread.h>

#include <atomic>
#include <bitset>
#include <cstring>
#include <map>
#include <mutex>
#include <set>

#include "ddtkit.h"
#include "shm/job.hpp"
#include "util/guarded.hpp"

namespace ddt::shm {

std::atomic<uintptr_t> span_lo{UINTPTR_MAX}, span_hi{0};  // heap.hpp: maybe_ours

namespace {

constexpr int64_t kAlign = 64;

// A window's free blocks, by address (to merge a freed block with its neighbours) and by size
// (to take the smallest that fits). A first-fit walk along the addresses cost one step per hole
// before the fit, and under the interposer every large malloc of the program comes here.
struct FreeBlocks {
  std::map<uintptr_t, int64_t> by_addr;  // address -> bytes
  std::set<std::pair<int64_t, uintptr_t>> by_size;  // (bytes, address)
  void add(uintptr_t at, int64_t bytes) {
    by_addr[at] = bytes;
    by_size.emplace(bytes, at);
  }
  std::map<uintptr_t, int64_t>::iterator remove(std::map<uintptr_t, int64_t>::iterator it) {
    by_size.erase({it->second, it->first});
    return by_addr.erase(it);
  }
};

struct Segment {
  uint64_t id;
  int fd;
  int64_t size;
  bool window;                         // else a segment of its own: one allocation at its base
  FreeBlocks free;                     // window: free blocks
  std::map<uintptr_t, int64_t> used;   // window: allocations, address -> bytes
  std::bitset<kMaxRanks> sent;         // peers that hold this segment's descriptor
  bool shared = true;                  // false: inherited over fork, now private to this process
};

struct Heap {
  std::mutex m;
  uint64_t next_id = 1;
  std::map<uintptr_t, Segment> segments;  // by base address
  std::vector<Released> released;
  std::atomic<uint64_t> generation{0};  // heap_generation(): bumped under m
  // Whether released is non-empty, read without the lock: the runtime asks at every poll, and
  // the lock drew 5% of a 480 B ping-pong's perf samples.
  std::atomic<bool> any_released{false};
};
// The forking thread holds the heap's lock from before_fork to the after-fork handlers. The heap
// registers its handlers when the library is loaded (register_fork_handlers, below), before nearly
// every other library's, so that the others' prepare handlers run before it takes the lock and
// their parent and child handlers after the child has its copy. A library whose constructor ran
// earlier (one loaded after libddtkit, as tests/shm/fork_first.cpp arranges) has its handlers run
// inside that bracket, on the forking thread, and they may allocate or free through the preloaded
// malloc: on that thread the heap's entry points pass without locking again, where a second lock
// of the std::mutex would hang the fork; a fork from inside them nests (fork_depth); and while
// the bracket lasts the parent and the child still share every segment, so an allocation takes a
// segment of its own and a free leaves the window's pages alone (ddt_alloc, ddt_free): a punched
// hole or a reused block would change the other process's bytes. What remains unsafe there is
// a write to an inherited block, which reaches the other process, and a lock-order cycle with a
// library whose prepare handler takes a mutex that its own threads hold while they allocate.
// Every other thread waits for the lock.
__attribute__((tls_model("initial-exec"))) thread_local bool holds_for_fork = false;

// The heap's lock, unless this thread holds it for a fork.
class HeapLock {
 public:
  explicit HeapLock(std::mutex& m) : m_(m), taken_(!holds_for_fork) {
    if (taken_) m_.lock();
  }
  ~HeapLock() {
    if (taken_) m_.unlock();
  }
  HeapLock(const HeapLock&) = delete;
  HeapLock& operator=(const HeapLock&) = delete;

 private:
  std::mutex& m_;
  bool taken_;
};

void before_fork();
void parent_after_fork();
void privatize_after_fork();
Heap& heap() {
  static Heap* h = [] {
    pthread_atfork(before_fork, parent_after_fork, privatize_after_fork);
    return new Heap;  // never destroyed: ddt_free may run from other static destructors
  }();
  return *h;
}
// At load (or at the heap's first use, if that comes sooner: the C++ runtime's startup allocation
// can reach the preloaded malloc before this library's constructors run). Registered at first use
// only, another library's handlers registered earlier would run inside the heap's bracket.
__attribute__((constructor)) void register_fork_handlers() { heap(); }

// Segments whose descriptor is open, one per segment mapped (and shared) in this process, kept
// so that a peer can be sent it on first use: changed under the heap's lock, read without it
// (ddt_alloc_descriptors; the preloadable allocator stops at a quarter of the program's limit).
std::atomic<int64_t> open_fds{0};

void widen_span(uintptr_t lo, uintptr_t hi) {
  uintptr_t cur = span_lo.load();
  while (lo < cur && !span_lo.compare_exchange_weak(cur, lo)) {
  }
  cur = span_hi.load();
  while (hi > cur && !span_hi.compare_exchange_weak(cur, hi)) {
  }
}

// [at, at + n) of a segment mapped at base from descriptor fd becomes private anonymous memory
// holding the same bytes, read from the file (the shared mapping may already be gone). Where that
// memory cannot be had, the range becomes a private mapping of the file instead: the child's writes
// stay its own, but it reads the pages it has not written from the file, so it sees what the
// parent writes there later (and zeros where the parent frees a large block). Weaker than fork's
// copy, and still better than losing the bytes. Where even that is refused (a private writable
// mapping is charged to strict overcommit), the child may read the bytes and faults on a write.
void take_private(uintptr_t at, size_t n, int fd, uintptr_t base) {
  void* const p = reinterpret_cast<void*>(at);
  const off_t off = static_cast<off_t>(at - base);
  // Populated at once: 0.49-0.55 s per GiB against 0.63-0.67 faulting page by page (the copy
  // through a mapping of the file, made aside and moved in, took 0.66-0.70).
  if (mmap(p, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_POPULATE, -1, 0) != MAP_FAILED) {
    size_t done = 0;
    while (done < n) {
      const ssize_t r = pread(fd, static_cast<char*>(p) + done, n - done, off + static_cast<off_t>(done));
      if (r > 0) {
        done += static_cast<size_t>(r);
      } else if (r == 0 || errno != EINTR) {
        break;
      }
    }
    if (done == n) return;
  }
  if (mmap(p, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED, fd, off) != MAP_FAILED) return;
  mmap(p, n, PROT_READ, MAP_SHARED | MAP_FIXED, fd, off);  // strict overcommit: readable at least
}

// A window's pages that hold allocations, as page-aligned runs (the rest of the window is sparse:
// copying all of it would allocate every page).
std::map<uintptr_t, uintptr_t> used_pages(const Segment& s) {
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  std::map<uintptr_t, uintptr_t> runs;  // first page -> end
  for (const auto& [a, n] : s.used) {
    const uintptr_t lo = a / page * page, hi = (a + static_cast<uintptr_t>(n) + page - 1) / page * page;
    if (!runs.empty() && std::prev(runs.end())->second >= lo) {
      std::prev(runs.end())->second = std::max(std::prev(runs.end())->second, hi);
    } else {
      runs[lo] = hi;
    }
  }
  return runs;
}

// fork() with heap memory. The segments are shared mappings, which a child would share with its
// parent: the child's handler copies each inherited segment's bytes into a private anonymous
// mapping at the same address, so that neither one's writes reach the other; the descriptors
// close, and the segments are never offered to peers again. So that the forking thread's writes
// after fork() returns do not reach the copy, the parent waits in its own handler until the child
// has made it (a pipe: the child writes a byte, or dies, which ends the wait too). Other threads
// of the parent are not stopped: what they write before the child has copied can still reach it.
// The heap's lock is held across the fork, so that the child copies a consistent list of
// allocations; the child re-creates it.
//
// The pipe's ends are kept per nesting level (fork_depth, a fork from a fork handler inside the
// bracket), and a child closes every level's after writing its byte (the write first: with its
// own read end still open it cannot be killed by SIGPIPE if the parent has died).
//
// The cost is the copy: the parent's fork takes about 0.5 s per GiB of live heap memory (fork +
// child + wait with 1 GiB from libddtkit-malloc.so, this machine, against 0.2 ms from the C
// library's copy-on-write), and the child holds its own copy at once. posix_spawn, system() and
// popen() (glibc >= 2.29), and Python's subprocess where it uses vfork, run no fork handlers and pay
// nothing; a program that forks with gigabytes of heap memory under the interposer is better off
// with DDTKIT_MALLOC=0 (docs/guide.md).
// Between before_fork and the two after-fork handlers; changed only by the thread that holds the
// heap's lock for the fork. Deeper than kForkDepth, a fork does not wait for its child's copy.
constexpr int kForkDepth = 4;
int fork_depth = 0;
int fork_pipe[kForkDepth][2];

bool any_shared(const Heap& h) {
  for (const auto& [base, s] : h.segments)
    if (s.shared) return true;
  return false;
}

void before_fork() {
  Heap& h = heap();
  if (!holds_for_fork) {  // else a fork from a fork handler inside this thread's bracket
    h.m.lock();
    holds_for_fork = true;
  }
  const int d = fork_depth++;
  if (d >= kForkDepth) return;
  int* const fds = fork_pipe[d];
  fds[0] = fds[1] = -1;
  if (any_shared(h) && pipe2(fds, O_CLOEXEC) != 0) fds[0] = fds[1] = -1;
}

void parent_after_fork() {
  const int d = --fork_depth;
  if (d < kForkDepth && fork_pipe[d][1] >= 0) {
    close(fork_pipe[d][1]);
    char c;
    ssize_t r;
    do r = read(fork_pipe[d][0], &c, 1);  // 1: copied; 0: the child is gone (or the fork failed)
    while (r < 0 && errno == EINTR);
    close(fork_pipe[d][0]);
  }
  if (d > 0) return;  // the outer fork's bracket goes on
  holds_for_fork = false;
  heap().m.unlock();
}

void privatize_after_fork() {
  Heap& h = heap();
  new (&h.m) std::mutex;
  holds_for_fork = false;
  for (auto& [base, s] : h.segments) {
    if (!s.shared) continue;
    if (s.window) {
      // Copying the whole window would allocate every page of it, and replacing it with one
      // private writable mapping of kWindowBytes fails where overcommit is strict: the window
      // becomes inaccessible (PROT_NONE costs no commit charge), and its runs of used pages
      // private memory read back from the file (take_private). The window then
      // takes no new allocation (ddt_alloc skips windows that are not shared: its free parts are
      // gone), while its allocations can still be freed and asked about.
      const auto runs = used_pages(s);
      mmap(reinterpret_cast<void*>(base), static_cast<size_t>(s.size), PROT_NONE,
           MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);  // on failure the runs are still replaced
      for (const auto& [lo, hi] : runs) take_private(lo, hi - lo, s.fd, base);
    } else {
      take_private(base, static_cast<size_t>(s.size), s.fd, base);
    }
    if (s.fd >= 0) close(s.fd), open_fds.fetch_sub(1, std::memory_order_relaxed);
    s.fd = -1;
    s.shared = false;
    s.sent.reset();
  }
  h.released.clear();
  h.generation.fetch_add(1, std::memory_order_release);
  const int d = fork_depth - 1;  // this child's fork; the levels below are its ancestors' forks
  if (d < kForkDepth && fork_pipe[d][1] >= 0) {
    const char c = 1;
    if (write(fork_pipe[d][1], &c, 1) != 1) {
    }  // the parent's read ends either way: at this byte or at the close
  }
  for (int i = 0; i <= d && i < kForkDepth; ++i)
    for (int& fd : fork_pipe[i])
      if (fd >= 0) close(fd), fd = -1;
  fork_depth = 0;
}

// A new sealed segment of size bytes mapped here: its base, or 0 on failure. A window's pages
// are reserved by nothing (MAP_NORESERVE; a memfd charges a page only when it is touched).
uintptr_t new_segment(Heap& h, int64_t size, bool window) {
  const int fd = memfd_create("ddtkit-heap", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) return 0;
  if (ftruncate(fd, size) != 0 ||
      fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
    close(fd);
    return 0;
  }
  void* p = mmap(nullptr, static_cast<size_t>(size), PROT_READ | PROT_WRITE, MAP_SHARED | (window ? MAP_NORESERVE : 0), fd, 0);
  if (p == MAP_FAILED) {
    close(fd);
    return 0;
  }
  const uintptr_t base = reinterpret_cast<uintptr_t>(p);
  open_fds.fetch_add(1, std::memory_order_relaxed);
  host_range_add(p, static_cast<uint64_t>(size));  // (util/host_ranges.hpp)
  widen_span(base, base + static_cast<uintptr_t>(size));
  Segment& s = h.segments[base];
  s.id = h.next_id++, s.fd = fd, s.size = size, s.window = window;
  if (window) s.free.add(base, size);
  h.generation.fetch_add(1, std::memory_order_release);
  return base;
}

// The segment whose mapping contains address a, or end().
std::map<uintptr_t, Segment>::iterator containing(Heap& h, uintptr_t a) {
  auto it = h.segments.upper_bound(a);
  if (it == h.segments.begin()) return h.segments.end();
  --it;
  return a < it->first + static_cast<uintptr_t>(it->second.size) ? it : h.segments.end();
}

// A new window, as large as the address space allows: kWindowBytes, halved down to kArenaBytes
// where mapping it fails (RLIMIT_AS); its base, or 0.
uintptr_t new_window(Heap& h) {
  for (int64_t size = kWindowBytes; size >= kArenaBytes; size /= 2)
    if (const uintptr_t base = new_segment(h, size, true)) return base;
  return 0;
}

// [at, at + bytes) of a window, whole pages, emptied: its pages go back to the system and read as
// zero again. In a window's memfd that is a punched hole, which the kernel also removes from every
// peer's mapping; in a window made private after fork, MADV_DONTNEED does the same.
void drop_pages(const Segment& s, uintptr_t base, uintptr_t at, int64_t bytes) {
  if (s.fd >= 0) {
    fallocate(s.fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(at - base), bytes);
  } else {
    madvise(reinterpret_cast<void*>(at), static_cast<size_t>(bytes), MADV_DONTNEED);
  }
}

// The smallest free block that holds bytes at an address aligned to align (a power of two) in
// window s, the lowest of equal ones; null when none does. A block of bytes + align - 1 always
// holds them: after a few misaligned candidates the search jumps there.
void* window_take(Segment& s, int64_t bytes, int64_t align) {
  const uintptr_t a = static_cast<uintptr_t>(align);
  auto it = s.free.by_size.lower_bound({bytes, 0});
  for (int tries = 0; it != s.free.by_size.end(); ++it, ++tries) {
    if (tries == 8 && align > 1) it = s.free.by_size.lower_bound({bytes + align - 1, 0});
    if (it == s.free.by_size.end()) break;
    const uintptr_t start = it->second, end = start + static_cast<uintptr_t>(it->first);
    const uintptr_t at = (start + a - 1) & ~(a - 1);
    if (at > end || end - at < static_cast<uintptr_t>(bytes)) continue;
    s.free.remove(s.free.by_addr.find(start));
    if (at > start) s.free.add(start, static_cast<int64_t>(at - start));
    if (end > at + static_cast<uintptr_t>(bytes)) s.free.add(at + static_cast<uintptr_t>(bytes), static_cast<int64_t>(end - at - bytes));
    s.used[at] = bytes;
    return reinterpret_cast<void*>(at);
  }
  return nullptr;
}

void window_give(Segment& s, uintptr_t at, int64_t bytes) {
  auto next = s.free.by_addr.lower_bound(at);
  if (next != s.free.by_addr.end() && at + static_cast<uintptr_t>(bytes) == next->first) {
    bytes += next->second;
    next = s.free.remove(next);
  }
  if (next != s.free.by_addr.begin()) {
    auto prev = std::prev(next);
    if (prev->first + static_cast<uintptr_t>(prev->second) == at) {
      at = prev->first, bytes += prev->second;
      s.free.remove(prev);
    }
  }
  s.free.add(at, bytes);
}

}  // namespace

SegmentRef find_segment(uintptr_t lo, uintptr_t hi, int peer) {
  Heap& h = heap();
  HeapLock g(h.m);
  auto it = containing(h, lo);
  if (it == h.segments.end() || !it->second.shared || hi < lo || hi > it->first + static_cast<uintptr_t>(it->second.size))
    return {};
  const Segment& s = it->second;
  return SegmentRef{s.id, s.fd, it->first, s.size, peer >= 0 && peer < kMaxRanks && s.sent.test(peer)};
}

void set_sent(uint64_t id, int peer) {
  Heap& h = heap();
  HeapLock g(h.m);
  for (auto& [base, s] : h.segments)
    if (s.id == id) s.sent.set(peer);
  h.generation.fetch_add(1, std::memory_order_release);
}

uint64_t heap_generation() { return heap().generation.load(std::memory_order_acquire); }

std::vector<Released> take_released() {
  Heap& h = heap();
  std::vector<Released> r;
  if (!h.any_released.load(std::memory_order_acquire)) return r;
  HeapLock g(h.m);
  r.swap(h.released);
  h.any_released.store(false, std::memory_order_relaxed);
  return r;
}

}  // namespace ddt::shm

extern "C" {

int ddt_alloc(int64_t bytes, void** ptr) {
  using namespace ddt::shm;
  if (!ptr) return DDT_ERR_ARG;
  *ptr = nullptr;
  if (bytes < 0) return DDT_ERR_ARG;
  if (bytes > (int64_t{1} << 46)) return DDT_ERR_NO_MEM;
  return ddt::guarded([&] {
    // Large allocations are whole pages, so that their pages can be given back on free, and
    // zero-filled, as a segment of their own was (the preloaded calloc relies on it).
    const int64_t page = sysconf(_SC_PAGESIZE);
    const bool large = bytes >= kDedicated;
    const int64_t align = large ? page : kAlign;
    const int64_t need = std::max<int64_t>(kAlign, (bytes + align - 1) / align * align);
    Heap& h = heap();
    HeapLock g(h.m);
    if (holds_for_fork) {  // inside a fork's handlers (see holds_for_fork): nothing shared is reused
      const uintptr_t base = new_segment(h, (need + page - 1) / page * page, false);
      if (!base) return static_cast<int>(DDT_ERR_NO_MEM);
      *ptr = reinterpret_cast<void*>(base);
      return static_cast<int>(DDT_SUCCESS);
    }
    const auto take = [&](uintptr_t base, Segment& s) {
      void* p = window_take(s, need, align);
      if (p && large) drop_pages(s, base, reinterpret_cast<uintptr_t>(p), need);
      *ptr = p;
      return p != nullptr;
    };
    for (auto& [base, s] : h.segments)
      if (s.window && s.shared && take(base, s)) return static_cast<int>(DDT_SUCCESS);
    if (large) {  // no window holds it: a segment of its own
      const uintptr_t base = new_segment(h, need, false);
      if (!base) return static_cast<int>(DDT_ERR_NO_MEM);
      *ptr = reinterpret_cast<void*>(base);
      return static_cast<int>(DDT_SUCCESS);
    }
    const uintptr_t base = new_window(h);
    if (!base || !take(base, h.segments[base])) return static_cast<int>(DDT_ERR_NO_MEM);
    return static_cast<int>(DDT_SUCCESS);
  });
}

int ddt_free(void* ptr) {
  using namespace ddt::shm;
  if (!ptr) return DDT_SUCCESS;
  if (!maybe_ours(reinterpret_cast<uintptr_t>(ptr))) return DDT_ERR_ARG;
  return ddt::guarded([&] {
    Heap& h = heap();
    HeapLock g(h.m);
    const uintptr_t a = reinterpret_cast<uintptr_t>(ptr);
    auto it = containing(h, a);
    if (it == h.segments.end()) return static_cast<int>(DDT_ERR_ARG);
    Segment& s = it->second;
    if (s.window) {
      auto u = s.used.find(a);
      if (u == s.used.end()) return static_cast<int>(DDT_ERR_ARG);  // not an allocation's start
      const int64_t page = sysconf(_SC_PAGESIZE);
      // Not inside a fork's handlers (see holds_for_fork): the other process may still use the
      // block. Its pages stay; a large block taken later is emptied then (ddt_alloc).
      if (u->second >= kDedicated && a % page == 0 && u->second % page == 0 && !holds_for_fork)
        drop_pages(s, it->first, a, u->second);
      window_give(s, a, u->second);
      s.used.erase(u);
      return static_cast<int>(DDT_SUCCESS);
    }
    if (a != it->first) return static_cast<int>(DDT_ERR_ARG);
    Released r{s.id, {}};
    for (int p = 0; p < kMaxRanks; ++p)
      if (s.sent.test(p)) r.peers.push_back(p);
    if (!r.peers.empty()) h.released.push_back(std::move(r)), h.any_released.store(true, std::memory_order_release);
    ddt::host_range_remove(ptr);
    munmap(ptr, static_cast<size_t>(s.size));
    if (s.fd >= 0) close(s.fd), open_fds.fetch_sub(1, std::memory_order_relaxed);
    h.segments.erase(it);
    h.generation.fetch_add(1, std::memory_order_release);
    return static_cast<int>(DDT_SUCCESS);
  });
}

int ddt_alloc_descriptors(int64_t* n) {
  if (!n) return DDT_ERR_ARG;
  *n = ddt::shm::open_fds.load(std::memory_order_relaxed);
  return DDT_SUCCESS;
}

int ddt_alloc_size(const void* ptr, int64_t* bytes) {
  using namespace ddt::shm;
  if (!ptr || !bytes) return DDT_ERR_ARG;
  const uintptr_t a = reinterpret_cast<uintptr_t>(ptr);
  if (!maybe_ours(a)) return DDT_ERR_ARG;
  return ddt::guarded([&] {
    Heap& h = heap();
    HeapLock g(h.m);
    auto it = containing(h, a);
    if (it == h.segments.end()) return static_cast<int>(DDT_ERR_ARG);
    const Segment& s = it->second;
    if (s.window) {
      auto u = s.used.find(a);
      if (u == s.used.end()) return static_cast<int>(DDT_ERR_ARG);
      *bytes = u->second;
    } else {
      if (a != it->first) return static_cast<int>(DDT_ERR_ARG);
      *bytes = s.size;
    }
    return static_cast<int>(DDT_SUCCESS);
  });
}

}  // extern "C"
