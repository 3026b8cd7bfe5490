// How far apart the cores of ranks 0 and 1 are, measured where and when a benchmark part runs: the
// one-way time of one cache line written by one rank and then read by the other (a ping-pong on a
// single shared word, no runtime and no MPI in between).
//
// Why the benchmarks need it: this machine is a 2-vCPU virtual machine on an AMD EPYC host, and
// the host places the two vCPUs where it likes and moves them while a job runs. Measured with this
// ping-pong between two threads pinned to CPUs 0 and 1 (2026-11-28): 26-34 ns for minutes, then
// within one run of 20 batches "33 30 31 61 161 157 156 ..." ns. About 30 ns is a line moving
// between cores that share their caches; about 160 ns is a line crossing between the host's dies.
// Every transfer between the ranks pays it per line it moves, so every inter-process figure moves
// with it: these are the "launch modes" earlier notes saw (NAS_MG_x A through the mapped heap:
// 79.5 us a round trip in one launch, 314.6 us in the next, the same binary). A one-copy design
// that reads the peer's freshly written lines one per element pays the crossing per element; a
// two-copy design streams contiguous cells across and keeps its strided accesses local, so the
// modes do not scale the designs alike, and a ratio between designs holds only within one mode.
// The report prints this probe beside each part, so that a figure is read with the distance it
// was measured across.
//
// T: a benchmark transport (transfer.hpp): me, np, barrier(), bcast0(), fail(). Collective. Only
// two-rank jobs are probed (with more ranks than cores the probe would time the scheduler);
// returns the median one-way nanoseconds on rank 0, 0 on the other ranks and in other jobs.
#pragma once
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <vector>

namespace rtbench {

template <class T>
double line_transfer_ns(T& t) {
  if (t.np != 2) return 0;
  static int seq = 0;  // one name per probe of this job: rank 0 unlinks each before the next
  const int64_t job = t.bcast0(static_cast<int64_t>(getpid()));
  char name[80];
  std::snprintf(name, sizeof name, "/ddtkit-bench-line-%lld-%d", static_cast<long long>(job), seq++);
  int fd = -1;
  if (t.me == 0) {  // private to this user (0600), created exclusively: never someone else's object
    fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
    if (fd < 0 || ftruncate(fd, 4096) != 0) t.fail("line probe: shm_open/ftruncate");
  }
  t.barrier();
  if (t.me == 1 && (fd = shm_open(name, O_RDWR, 0)) < 0) t.fail("line probe: shm_open");
  t.barrier();
  if (t.me == 0) shm_unlink(name);
  void* m = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (m == MAP_FAILED) t.fail("line probe: mmap");
  // The object starts zero-filled, which is the atomic's initial value on both sides.
  auto* word = static_cast<std::atomic<int64_t>*>(m);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  auto await = [&](int64_t v) {  // a peer gone for 10 s ends the job instead of hanging it
    for (uint64_t i = 1; word->load(std::memory_order_acquire) != v; ++i)
      if (i % 4096 == 0 && std::chrono::steady_clock::now() > deadline) t.fail("line probe: the peer stopped answering");
  };
  constexpr int kBatches = 7, kTrips = 2000;
  std::vector<double> ns;
  int64_t v = 0;
  for (int b = 0; b < kBatches; ++b) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < kTrips; ++i, v += 2) {
      if (t.me == 0) {
        word->store(v + 1, std::memory_order_release);
        await(v + 2);
      } else {
        await(v + 1);
        word->store(v + 2, std::memory_order_release);
      }
    }
    ns.push_back(std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() / (2.0 * kTrips));
  }
  t.barrier();
  munmap(m, 4096);
  std::sort(ns.begin(), ns.end());
  return t.me == 0 ? ns[ns.size() / 2] : 0;
}

}  // namespace rtbench
