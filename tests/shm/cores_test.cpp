// Whether the runtime judges the job's cores from every rank's affinity mask (comm.cpp's
// judge_cores), not from its own alone. White-box: it reads rt.oversubscribed (shm/runtime.hpp).
//
//   ddtkit run -n P cores_test spread   each rank binds itself to a core of its own, as Open MPI's
//                                       mpiexec binds 2 ranks by default: not oversubscribed
//                                       (each rank's own one-core mask said it was)
//   ddtkit run -n P cores_test same     every rank binds itself to one core: oversubscribed
//   ddtkit run -n P cores_test free     the masks as the launcher left them: oversubscribed
//                                       exactly where the machine has fewer cores than ranks
// Then one message around the ring, so the judged runtime still moves bytes.
#include <sched.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "ddtkit.h"
#include "shm/runtime.hpp"

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  const int rank = std::atoi(std::getenv("DDTKIT_RANK") ? std::getenv("DDTKIT_RANK") : "0");
  const int size = std::atoi(std::getenv("DDTKIT_SIZE") ? std::getenv("DDTKIT_SIZE") : "1");
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return std::perror("sched_getaffinity"), 1;
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &allowed)) cpus.push_back(c);
  bool expect = false;
  if (!std::strcmp(mode, "spread") || !std::strcmp(mode, "same")) {
    const bool spread = mode[0] == 's' && mode[1] == 'p';
    if (spread && static_cast<int>(cpus.size()) < size) {  // said, not silently passed
      if (rank == 0) std::printf("cores_test: SKIP spread: %zu cores for %d ranks\n", cpus.size(), size);
      return 0;
    }
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpus[spread ? rank : 0], &one);
    if (sched_setaffinity(0, sizeof one, &one) != 0) return std::perror("sched_setaffinity"), 1;
    expect = !spread && size > 1;
  } else if (!std::strcmp(mode, "free")) {
    expect = static_cast<int>(cpus.size()) < size;  // every rank inherits the launcher's mask
  } else {
    std::fprintf(stderr, "usage: ddtkit run -n P cores_test spread|same|free\n");
    return 2;
  }
  if (int e = ddt_comm_init()) return std::fprintf(stderr, "ddt_comm_init: %s\n", ddt_error_string(e)), 1;
  int failures = 0;
  if (ddt::shm::rt.oversubscribed != expect) {
    ++failures;
    std::fprintf(stderr, "cores_test: FAIL: rank %d (%s): oversubscribed %d, expected %d\n", rank, mode,
                 ddt::shm::rt.oversubscribed, expect);
  }
  int64_t v = rank, got = -1;  // one message around the ring, so the runtime still moves bytes
  ddt_request r = DDT_REQUEST_NULL;
  if (ddt_comm_irecv(&got, 1, DDT_INT64_T, (rank + size - 1) % size, 5, &r) ||
      ddt_comm_send(&v, 1, DDT_INT64_T, (rank + 1) % size, 5) || ddt_comm_wait(&r, nullptr) ||
      got != (rank + size - 1) % size) {
    ++failures;
    std::fprintf(stderr, "cores_test: FAIL: rank %d (%s): ring message\n", rank, mode);
  }
  ddt_comm_finalize();
  if (rank == 0 && !failures) std::printf("cores_test %s: %d ranks, oversubscribed %d as expected\n", mode, size, expect);
  return failures ? 1 : 0;
}
