// A process killed in the middle of a runtime-carried message (issue 11): under the interposer,
// the survivor's MPI_Send or MPI_Recv must return an error (MPI_ERRORS_RETURN), never hang.
// An ordinary MPI program on 2 ranks:
//   peer_death_test --victim receiver|sender --result FILE
// The two ranks exchange 64 MiB messages of a vector of doubles (8-byte blocks, so every one is
// taken by ddtkit's runtime and its copy lasts tens of milliseconds) back to back; the victim,
// rank 1, is killed by SIGKILL from a thread of its own 300 ms after the first message, which is
// almost always while a copy is in flight (the copy is most of each exchange). The survivor,
// rank 0, keeps sending (victim = receiver) or receiving (victim = sender) until a call fails,
// writes the error to FILE (the launcher, tearing the job down, may drop what the survivor
// prints last) and leaves with _exit(0) without MPI_Finalize (the MPI need not survive a dead
// process). Exit status 1 when every message succeeded or a received one was wrong; a hang is
// stopped by alarm() with status 2 (tests/mpi/peer_death.sh runs it and reads FILE).
#include <mpi.h>
#include <signal.h>
#include <unistd.h>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

namespace {

constexpr int kCount = 8 << 20;       // vector blocks: 64 MiB packed, 128 MiB of extent
constexpr int kMessages = 100000;     // far more than fit in the victim's life

void hang_guard(int) {
  static const char m[] = "peer_death_test: the survivor is still waiting 60 s after the start: hang\n";
  (void)!write(1, m, sizeof m - 1);
  _exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  const char* result = nullptr;
  bool victim_sends = false;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--victim") == 0) victim_sends = std::strcmp(argv[i + 1], "sender") == 0;
    if (std::strcmp(argv[i], "--result") == 0) result = argv[i + 1];
  }
  MPI_Init(&argc, &argv);
  int me, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2) {
    if (me == 0) std::printf("peer_death_test: needs 2 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Datatype t;
  MPI_Type_vector(kCount, 1, 2, MPI_DOUBLE, &t);
  MPI_Type_commit(&t);
  std::vector<double> buf(2 * static_cast<size_t>(kCount));
  for (size_t i = 0; i < buf.size(); ++i) buf[i] = static_cast<double>(i);
  const bool survivor_sends = !victim_sends;
  MPI_Barrier(MPI_COMM_WORLD);

  if (me == 1) {
    for (int k = 0; k < kMessages; ++k) {
      if (k == 1)  // the first message has gone through: the runtime is set up and streaming
        std::thread([] {
          std::this_thread::sleep_for(std::chrono::milliseconds(300));
          raise(SIGKILL);
        }).detach();
      if (victim_sends) MPI_Send(buf.data(), 1, t, 0, 5, MPI_COMM_WORLD);
      else MPI_Recv(buf.data(), 1, t, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    std::printf("peer_death_test: rank 1 outlived %d messages\n", kMessages);
    _exit(1);
  }

  // MPICH's launcher (hydra, with -disable-auto-cleanup) tells the survivors of a dead process
  // with SIGUSR1, which ends a process that has no handler (MPICH catches it only when built for
  // fault tolerance): ignored here, so the survivor lives to see what its own call returns.
  signal(SIGUSR1, SIG_IGN);
  signal(SIGALRM, hang_guard);
  alarm(60);
  for (int k = 0; k < kMessages; ++k) {
    std::vector<double> got;
    int rc;
    if (survivor_sends) {
      rc = MPI_Send(buf.data(), 1, t, 1, 5, MPI_COMM_WORLD);
    } else {
      got.assign(buf.size(), -1.0);
      rc = MPI_Recv(got.data(), 1, t, 1, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    if (rc != MPI_SUCCESS) {
      char s[MPI_MAX_ERROR_STRING];
      int n = 0, cls = 0;
      MPI_Error_string(rc, s, &n);
      MPI_Error_class(rc, &cls);
      char line[512];
      const int len = std::snprintf(line, sizeof line, "peer_death_test: peer failure detected: MPI_%s of message %d returned class %d (%s)\n",
                                    survivor_sends ? "Send" : "Recv", k, cls, s);
      if (FILE* f = result ? std::fopen(result, "w") : nullptr) {
        std::fwrite(line, 1, static_cast<size_t>(len), f);
        std::fclose(f);
      }
      std::fputs(line, stdout);
      std::fflush(stdout);
      _exit(0);
    }
    if (!survivor_sends)  // every element the vector selects, exactly; the gaps untouched
      for (size_t i = 0; i < got.size(); ++i)
        if (got[i] != (i % 2 == 0 ? static_cast<double>(i) : -1.0)) {
          std::printf("peer_death_test: message %d wrong at element %zu\n", k, i);
          _exit(1);
        }
  }
  std::printf("peer_death_test: all %d messages succeeded although rank 1 was killed\n", kMessages);
  _exit(1);
}
