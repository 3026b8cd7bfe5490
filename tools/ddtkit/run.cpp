// `ddtkit run -n N prog [args]`: the launcher of the intra-node runtime (src/shm/). It creates the
// job's shared segment (0600, in /dev/shm, named for this user and this launcher), removes stale
// ones of launchers that no longer run, starts N copies of prog with DDTKIT_JOB, DDTKIT_RANK and
// DDTKIT_SIZE set, and waits for them. A rank that ends abnormally (a signal, or a non-zero
// status) is marked dead in the segment at once, so that the others' operations with it fail
// instead of waiting; the others get kGrace to finish, then SIGTERM, then SIGKILL. The job's
// status is the worst rank's (a signal S counts as 128 + S), and each abnormal end is named.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "commands.hpp"
#include "shm/job.hpp"

namespace {

constexpr auto kGrace = std::chrono::seconds(10);

volatile sig_atomic_t forwarded = 0;
void on_signal(int s) { forwarded = s; }

}  // namespace

const char* run_details() {
  return "  -n N   number of processes (1 to 256)\n"
         "  the ranks find the job through DDTKIT_JOB, DDTKIT_RANK, DDTKIT_SIZE;\n"
         "  DDTKIT_MECH=cma|pipe forces how large messages move\n";
}

int run_command(int argc, char** argv) {
  int n = 0, first = 1;
  if (argc > 2 && !std::strcmp(argv[1], "-n")) n = std::atoi(argv[2]), first = 3;
  if (first < argc && !std::strcmp(argv[first], "--")) ++first;
  if (n < 1 || n > ddt::shm::kMaxRanks || first >= argc) {
    std::fprintf(stderr, "ddtkit run: need -n N (1 to %d) and a program\n", ddt::shm::kMaxRanks);
    print_usage("run", true);
    return 2;
  }
  ddt::shm::remove_stale_jobs();
  ddt::shm::JobHeader* job = nullptr;
  const std::string path = ddt::shm::create_job(n, &job);
  if (path.empty()) {
    std::fprintf(stderr, "ddtkit run: cannot create the job segment: %s\n", std::strerror(errno));
    return 1;
  }
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  std::vector<pid_t> pids(n, -1);
  for (int r = 0; r < n; ++r) {
    const pid_t pid = fork();
    if (pid == 0) {
      setenv("DDTKIT_JOB", path.c_str(), 1);
      setenv("DDTKIT_RANK", std::to_string(r).c_str(), 1);
      setenv("DDTKIT_SIZE", std::to_string(n).c_str(), 1);
      execvp(argv[first], argv + first);
      std::fprintf(stderr, "ddtkit run: cannot start %s: %s\n", argv[first], std::strerror(errno));
      _exit(127);
    }
    if (pid < 0) {
      std::fprintf(stderr, "ddtkit run: fork: %s\n", std::strerror(errno));
      job->dead[r].store(1);
    }
    pids[r] = pid;
  }
  int worst = 0, left = 0;
  for (pid_t p : pids) left += p > 0;
  bool ending = false;  // a rank ended abnormally: the others are being stopped
  auto deadline = std::chrono::steady_clock::time_point::max();
  bool termed = false;
  while (left > 0) {
    int status = 0;
    const pid_t pid = waitpid(-1, &status, WNOHANG);
    if (pid > 0) {
      int r = 0;
      while (r < n && pids[r] != pid) ++r;
      if (r == n) continue;
      --left;
      const int code = WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
      if (code != 0) {
        job->dead[r].store(1, std::memory_order_release);
        if (WIFSIGNALED(status))
          std::fprintf(stderr, "ddtkit run: rank %d (pid %d) was killed by signal %d (%s)\n", r, pid, WTERMSIG(status),
                       strsignal(WTERMSIG(status)));
        else
          std::fprintf(stderr, "ddtkit run: rank %d (pid %d) exited with status %d\n", r, pid, code);
        if (!ending) ending = true, deadline = std::chrono::steady_clock::now() + kGrace;
      }
      worst = std::max(worst, code);
      continue;
    }
    if (forwarded && !termed) {  // the user interrupted the job: pass it on
      for (pid_t p : pids)
        if (p > 0) kill(p, forwarded);
      termed = true, ending = true, deadline = std::chrono::steady_clock::now() + kGrace;
    }
    if (ending && std::chrono::steady_clock::now() > deadline) {
      for (pid_t p : pids)
        if (p > 0) kill(p, termed ? SIGKILL : SIGTERM);
      termed = true;
      deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  unlink(path.c_str());  // rank 0 unlinks it once all have attached; this covers a failed start
  ddt::shm::detach_job(job);
  return worst;
}
