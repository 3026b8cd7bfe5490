// fork() under the preloadable allocator when another library's fork handlers were registered
// before the heap's (libfork_first.so, linked after libddtkit.so): its prepare handler runs while
// the heap holds its lock for the fork, and its parent and child handlers run before the heap's
// own (the parent's wait for the child's copy, the child's copy). Run under
//   LD_PRELOAD=libddtkit-malloc.so DDTKIT_MALLOC_MIN=1048576 heap_fork_order_test
// (a threshold above the C++ runtime's startup allocation, so that nothing reaches the heap before
// the libraries' constructors run). Checks, each fork under an alarm so that a hang fails:
//  1. the arrangement holds: a child handler's write to heap memory reaches the parent (the heap
//     has not made the child's copy yet), else the test's premise is lost and it says so;
//  2. a child handler that frees an inherited large block leaves the parent's bytes alone (a free
//     inside the fork punched the shared file's pages, zeroing the parent's block);
//  3. a parent handler that frees a large block and allocates another leaves the child's copy of
//     the freed one alone (the new block reused its pages and zeroed them in the shared file);
//  4. a fork from a prepare handler, inside the heap's, finishes (the heap took its lock twice);
//  5. handlers registered from main, before the heap's first use, run outside its bracket: the
//     heap registers its own when libddtkit is loaded (they ran inside it when it registered them
//     at its first allocation, and a child handler's write then reached the parent).
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>

#include "ddtkit.h"
#include "../support/check.hpp"

extern "C" {
extern void (*fork_first_prepare)();
extern void (*fork_first_parent)();
extern void (*fork_first_child)();
}

namespace {

int failures = 0;
constexpr const char* kTestName = "heap_fork_order_test";

constexpr size_t kBig = 4 << 20;

bool in_heap(const void* p) {
  int64_t n = 0;
  return p && ddt_alloc_size(p, &n) == DDT_SUCCESS;
}
bool all(const unsigned char* p, size_t n, unsigned char v) {
  for (size_t i = 0; i < n; ++i)
    if (p[i] != v) return false;
  return true;
}
unsigned char* filled(unsigned char v) {
  auto* p = static_cast<unsigned char*>(malloc(kBig));
  if (p) memset(p, v, kBig);
  return p;
}

// The fork's child exits with status; the parent's result is the child's exit status, or -1.
int fork_and_wait(int child_status) {
  alarm(60);
  const pid_t pid = fork();
  if (pid == 0) _exit(child_status);
  int st = 0;
  const pid_t w = waitpid(pid, &st, 0);
  alarm(0);
  return w == pid && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

unsigned char *marker, *doomed, *kept, *fresh;
int sync_pipe[2];

void child_writes_and_frees() {
  marker[0] = 7;  // shared until the heap's own child handler has copied
  free(doomed);
}
void parent_frees_and_allocates() {
  free(kept);  // the parent's; the child still holds its copy
  fresh = filled(9);
  if (write(sync_pipe[1], "x", 1) != 1) {
  }
}
void child_waits_for_parent() {
  char c;
  if (read(sync_pipe[0], &c, 1) != 1) {
  }
}
unsigned char* late_marker;
void late_child() {
  if (late_marker) late_marker[0] = 7;
}
void nested_fork() {
  fork_first_prepare = nullptr;  // once
  if (fork_and_wait(0) != 0) ++failures, fprintf(stderr, "heap_fork_order_test: FAILED: the nested fork's child\n");
}

}  // namespace

int main() {
  pthread_atfork(nullptr, nullptr, late_child);  // before anything reaches the heap
  void* probe = malloc(kBig);
  if (probe) memset(probe, 0, kBig);  // (GCC counts in_heap's const pointer as a read)
  if (!in_heap(probe)) {
    fprintf(stderr, "heap_fork_order_test: run it under LD_PRELOAD=libddtkit-malloc.so (a 4 MiB malloc is not in the heap)\n");
    return 1;
  }
  free(probe);
  // A small block from the heap makes a window, where the large blocks that follow are placed
  // (with no window, each would get a segment of its own, which fork's hazards here do not touch).
  void* window = nullptr;
  CHECK(ddt_alloc(64 << 10, &window) == DDT_SUCCESS, "ddt_alloc of 64 KiB");

  // 1 and 2.
  marker = filled(0);
  doomed = filled(1);
  fork_first_child = child_writes_and_frees;
  const int st1 = fork_and_wait(0);
  fork_first_child = nullptr;
  CHECK(st1 == 0, "the first child failed (%d)", st1);
  CHECK(marker[0] == 7, "a child fork handler of libfork_first.so ran after the heap's copy: the handlers' order "
        "this test needs (libfork_first.so registered first) was not made, so it tests nothing");
  CHECK(all(doomed, kBig, 1), "a child's fork handler that freed an inherited 4 MiB block zeroed the parent's");
  free(doomed);
  free(marker);

  // 3. The child's handler waits until the parent's has freed and allocated, then checks its copy.
  CHECK(pipe(sync_pipe) == 0, "pipe");
  kept = filled(2);
  unsigned char* const kept_at = kept;
  fork_first_parent = parent_frees_and_allocates;
  fork_first_child = child_waits_for_parent;
  alarm(60);
  const pid_t pid = fork();
  if (pid == 0) _exit(all(kept_at, kBig, 2) ? 0 : 3);
  fork_first_parent = nullptr;
  fork_first_child = nullptr;
  int st = 0;
  const bool waited = waitpid(pid, &st, 0) == pid;
  alarm(0);
  CHECK(waited && WIFEXITED(st) && WEXITSTATUS(st) == 0,
        "a parent's fork handler that freed a 4 MiB block and allocated another changed the child's copy (status %d)",
        WIFEXITED(st) ? WEXITSTATUS(st) : -1);
  CHECK(fresh && all(fresh, kBig, 9), "the parent handler's new block lost its bytes");
  free(fresh);
  close(sync_pipe[0]);
  close(sync_pipe[1]);

  // 4.
  fork_first_prepare = nested_fork;
  const int st4 = fork_and_wait(0);
  CHECK(st4 == 0, "a fork with a nested fork in a prepare handler failed (%d)", st4);

  // 5.
  late_marker = filled(0);
  const int st5 = fork_and_wait(0);
  CHECK(st5 == 0, "the fifth child failed (%d)", st5);
  CHECK(late_marker[0] == 0, "a child fork handler registered from main ran before the heap's copy (its write reached the parent)");
  free(late_marker);
  late_marker = nullptr;

  // The heap still works after all of it, and a plain fork still gives the child its own copy.
  unsigned char* after = filled(5);
  CHECK(in_heap(after), "after the forks, a 4 MiB malloc is not in the heap");
  free(after);
  ddt_free(window);
  printf("heap_fork_order_test: %s\n", failures ? "FAILED" : "passed");
  return failures ? 1 : 0;
}
