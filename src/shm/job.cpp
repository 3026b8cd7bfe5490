// Creating, finding and attaching the job segment (job.hpp).
#include "shm/job.hpp"
#include "util/host_ranges.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <new>

#include "ddtkit.h"

namespace ddt::shm {

namespace {

constexpr const char* kDir = "/dev/shm";

// "ddtkit-<uid>-<launcher pid>-<n>": the uid keeps users apart, the pid finds stale ones.
std::string prefix() { return "ddtkit-" + std::to_string(getuid()) + "-"; }

}  // namespace

int64_t job_bytes(int size) {
  return static_cast<int64_t>((sizeof(JobHeader) + 4095) & ~size_t{4095}) +
         static_cast<int64_t>(size) * size * static_cast<int64_t>(sizeof(Channel));
}

std::string create_job(int size, JobHeader** header) {
  if (size < 1 || size > kMaxRanks) {
    errno = EINVAL;
    return {};
  }
  for (int n = 0; n < 100; ++n) {
    const std::string path = std::string(kDir) + "/" + prefix() + std::to_string(getpid()) + "-" + std::to_string(n);
    const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0 && errno == EEXIST) continue;
    if (fd < 0) return {};
    const int64_t bytes = job_bytes(size);
    void* m = MAP_FAILED;
    if (fchmod(fd, 0600) == 0 && ftruncate(fd, bytes) == 0)  // 0600 whatever the umask
      m = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    const int saved = errno;
    close(fd);
    if (m == MAP_FAILED) {
      unlink(path.c_str());
      errno = saved;
      return {};
    }
    JobHeader* h = new (m) JobHeader;  // the file is zero: every count starts at 0
    host_range_add(m, static_cast<uint64_t>(bytes));  // (util/host_ranges.hpp)
    h->size = size;
    h->magic = kJobMagic;
    *header = h;
    return path;
  }
  errno = EEXIST;
  return {};
}

void remove_stale_jobs() {
  DIR* d = opendir(kDir);
  if (!d) return;
  const std::string mine = prefix();
  while (dirent* e = readdir(d)) {
    if (std::strncmp(e->d_name, mine.c_str(), mine.size()) != 0) continue;
    const long pid = std::strtol(e->d_name + mine.size(), nullptr, 10);
    if (pid > 0 && kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH)
      unlink((std::string(kDir) + "/" + e->d_name).c_str());
  }
  closedir(d);
}

int attach_job(JobHeader** header, int* rank, int* size) {
  const char* path = std::getenv("DDTKIT_JOB");
  const char* r = std::getenv("DDTKIT_RANK");
  const char* s = std::getenv("DDTKIT_SIZE");
  if (!path || !r || !s) return DDT_ERR_COMM;
  const int my = std::atoi(r), n = std::atoi(s);
  if (int e = attach_job_at(path, my, n, header)) return e;
  *rank = my, *size = n;
  return DDT_SUCCESS;
}

int attach_job_at(const char* path, int my, int n, JobHeader** header) {
  if (n < 1 || n > kMaxRanks || my < 0 || my >= n) return DDT_ERR_COMM;
  const int fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return DDT_ERR_COMM;
  struct stat st;
  const int64_t bytes = job_bytes(n);
  // Only the user's own, private segment, of exactly the size the job needs.
  if (fstat(fd, &st) != 0 || st.st_uid != getuid() || (st.st_mode & 077) != 0 || st.st_size != bytes) {
    close(fd);
    return DDT_ERR_COMM;
  }
  void* m = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (m == MAP_FAILED) return DDT_ERR_COMM;
  JobHeader* h = static_cast<JobHeader*>(m);
  if (h->magic != kJobMagic || h->size != n) {
    munmap(m, bytes);
    return DDT_ERR_COMM;
  }
  host_range_add(m, static_cast<uint64_t>(bytes));
  h->pid[my].store(getpid(), std::memory_order_release);
  h->attached.fetch_add(1, std::memory_order_acq_rel);
  *header = h;
  return DDT_SUCCESS;
}

// The cells' pages are created by their first touch, on both sides of a channel, so each ring's
// first lap paid page faults: osu_latency -D vect:8:4 under the interposer (4 KiB messages,
// eager, 2 ranks) took 15-20 us a round trip for its first 32 (one per cell), against 5 us
// after, and a benchmark that calibrated its repetitions on those timed one round trip per
// sample. MADV_POPULATE_WRITE (Linux 5.14) makes the page-table entries without writing a byte,
// so it is safe while the peer already uses the channel. The runtime asks for it per channel and
// side on first use (comm.cpp), not for every channel at the start: a job of n ranks has n^2
// channels of 512 KiB, which 256 ranks would turn into 32 GiB of shared memory, while pairs that
// never talk touch none of theirs. On an older kernel it fails with EINVAL and the faults come
// as before.
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
void prefault_channel(JobHeader* h, int from, int to) {
  Channel* c = channel(h, from, to);
  // madvise wants a page-aligned start: the channel's page and the bytes up to its end.
  const uintptr_t lo = reinterpret_cast<uintptr_t>(c) & ~uintptr_t{4095};
  const uintptr_t hi = reinterpret_cast<uintptr_t>(c + 1);
  madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_POPULATE_WRITE);
}

void detach_job(JobHeader* h) {
  if (!h) return;
  host_range_remove(h);
  munmap(h, job_bytes(h->size));
}

}  // namespace ddt::shm
