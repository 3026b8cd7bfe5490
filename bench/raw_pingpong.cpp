// The machine's own cost of a two-copy message between two cores, with no runtime and no MPI:
// the bound that issue 10's small-message figures are read against (report_runtime.py prints it
// beside the runtime's 1-byte floor). Two processes share an anonymous mapping; a message is a
// memcpy into a 64-byte-aligned slot of a ring and a release store of the slot's sequence word
// (the slot's first line, the data after it, as the runtime's cells), the peer polls that word,
// copies the bytes out, and answers the same way. One process per core where two cores exist.
//
//   raw_pingpong [--out DIR] [--smoke]     JSON lines to DIR/raw.jsonl (suite rt_raw), round
//                                          trips in ns, median of 7 runs of 20,000
#include <sched.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <new>
#include <string>
#include <vector>

namespace {

constexpr int kSlots = 32;
constexpr int64_t kMaxBytes = 16384;
struct alignas(64) Slot {
  std::atomic<uint32_t> seq;
  char data[kMaxBytes];
};

// Spins until the peer has published slot k; false when the peer has gone (checked every 2^20
// turns), so that a dead peer ends the run instead of hanging it.
bool await(const Slot& in, uint32_t k, pid_t child, pid_t parent) {
  for (uint64_t i = 1;; ++i) {
    if (in.seq.load(std::memory_order_acquire) == k + 1) return true;
    if (i % (uint64_t{1} << 20) == 0 && (child > 0 ? waitpid(child, nullptr, WNOHANG) != 0 : getppid() != parent))
      return false;
  }
}

void pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  sched_setaffinity(0, sizeof set, &set);  // a hint: one core only leaves both where they are
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir;
  bool smoke = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--out") && i + 1 < argc) dir = argv[++i];
    else if (!std::strcmp(argv[i], "--smoke")) smoke = true;
    else return std::fprintf(stderr, "usage: raw_pingpong [--out DIR] [--smoke]\n"), 2;
  }
  const size_t bytes = sizeof(Slot) * kSlots * 2;
  void* m = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) return std::perror("raw_pingpong: mmap"), 1;
  Slot* ring[2] = {static_cast<Slot*>(m), static_cast<Slot*>(m) + kSlots};  // ring[r]: written by rank r
  for (Slot* s = ring[0]; s < ring[0] + 2 * kSlots; ++s) new (s) Slot{};
  const pid_t parent = getpid(), child = fork();
  if (child < 0) return std::perror("raw_pingpong: fork"), 1;
  const int me = child == 0 ? 1 : 0;
  if (sysconf(_SC_NPROCESSORS_ONLN) >= 2) pin(me);
  std::vector<char> buf(kMaxBytes, static_cast<char>(me));
  const int iters = smoke ? 200 : 20000, runs = smoke ? 3 : 7;
  const std::vector<int64_t> sizes = {1, 64, 256, 480, 1024, 2048, 4096, 8192, 16384};
  std::vector<double> med;
  uint32_t k = 0;
  for (int64_t n : sizes) {
    std::vector<double> t;
    for (int run = 0; run < runs; ++run) {
      const auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < iters; ++i, ++k) {
        Slot& out = ring[me][k % kSlots];
        Slot& in = ring[1 - me][k % kSlots];
        if (me == 1 && !await(in, k, child, parent)) _exit(1);
        if (me == 1) std::memcpy(buf.data(), in.data, static_cast<size_t>(n));
        std::memcpy(out.data, buf.data(), static_cast<size_t>(n));
        out.seq.store(k + 1, std::memory_order_release);
        if (me == 0) {
          if (!await(in, k, child, parent)) return std::fprintf(stderr, "raw_pingpong: the second process died\n"), 1;
          std::memcpy(buf.data(), in.data, static_cast<size_t>(n));
        }
      }
      t.push_back(std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() / iters);
    }
    std::sort(t.begin(), t.end());
    med.push_back(t[t.size() / 2]);
  }
  if (me == 1) _exit(0);
  int status = 0;
  waitpid(child, &status, 0);
  FILE* f = dir.empty() ? nullptr : std::fopen((dir + "/raw.jsonl").c_str(), "w");
  for (size_t i = 0; i < sizes.size(); ++i) {
    std::printf("[raw two-copy ping-pong] %6lld B  %.2f us round trip\n", static_cast<long long>(sizes[i]), med[i] / 1e3);
    if (f)
      std::fprintf(f, "{\"suite\": \"rt_raw\", \"bytes\": %lld, \"ns\": %.1f}\n", static_cast<long long>(sizes[i]), med[i]);
  }
  if (f) std::fclose(f);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
