// Joining a job whose processes another launcher started (mpiexec): ddt_comm_init_bootstrap.
//
// The caller knows the processes of its node (rank, size) and gives a broadcast from node rank
// 0 (MPI_Bcast on the node's communicator, say: include/ddtkit_mpi_bootstrap.h); nothing here
// links MPI. Node rank 0 removes stale segments, creates the job's segment (job.hpp: 0600, O_EXCL,
// named by its uid and pid, so a crashed job's segment is removed at the next start) and
// broadcasts its path in a fixed-size message; every rank attaches to it and joins (runtime.hpp),
// where rank 0 unlinks the path once every rank holds the segment.
//
// Failure never hangs: a root that cannot create the segment broadcasts an error marker, so every
// rank fails with it; a root that fails after the broadcast marks itself dead in the segment, so
// the others' join fails at once (DDT_ERR_PEER); a rank that cannot attach leaves the others'
// join to its timeout.
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "ddtkit.h"
#include "shm/job.hpp"
#include "shm/runtime.hpp"

namespace {

using namespace ddt::shm;

// What node rank 0 broadcasts: a marker, whether the segment exists, and its path.
constexpr int kMessageBytes = 256;
constexpr char kMarker[8] = {'d', 'd', 't', 'b', 'o', 'o', 't', '1'};
struct Message {
  char marker[8];
  int32_t ok;   // 1: path names the segment; anything else: the root failed (errno in err)
  int32_t err;
  char path[kMessageBytes - 16];
};
static_assert(sizeof(Message) == kMessageBytes, "the broadcast has a fixed size");

bool initialised() {
  int size = 0;
  return ddt_comm_size(&size) == DDT_SUCCESS;
}

// Node rank 0: creates the segment, broadcasts its path (or the failure), attaches and joins.
int root(const ddt_bootstrap* b) {
  Message m{};
  std::memcpy(m.marker, kMarker, sizeof kMarker);
  JobHeader* created = nullptr;
  std::string path;
  if (!initialised()) {  // a second init fails below, after the broadcast its peers wait for
    remove_stale_jobs();
    path = create_job(b->size, &created);
    if (path.empty() || path.size() >= sizeof m.path) {
      m.err = path.empty() ? errno : ENAMETOOLONG;
      if (!path.empty()) {
        unlink(path.c_str());
        detach_job(created);
        path.clear();
        created = nullptr;
      }
    }
  }
  if (!path.empty()) {
    m.ok = 1;
    std::memcpy(m.path, path.c_str(), path.size() + 1);
  }
  const int rc = b->bcast(&m, kMessageBytes, b->ctx);
  // Gives the segment up: marked dead so that ranks already attached fail now, not at a timeout.
  auto abandon = [&](JobHeader* h) {
    if (!h) return;
    h->dead[0].store(1, std::memory_order_release);
    unlink(path.c_str());
    detach_job(h);
  };
  if (rc != 0) {
    abandon(created);
    return DDT_ERR_COMM;
  }
  if (!m.ok) return DDT_ERR_COMM;
  JobHeader* job = nullptr;
  if (int e = attach_job_at(path.c_str(), 0, b->size, &job)) {
    abandon(created);
    return e;
  }
  detach_job(created);  // the creator's own mapping; the rank's is job
  const int e = join(job, 0, b->size, path);
  if (e != DDT_SUCCESS) unlink(path.c_str());  // join unlinks only once every rank has attached
  return e;
}

// Any other node rank: the path from the broadcast, checked, then attach and join.
int other(const ddt_bootstrap* b) {
  Message m{};
  if (b->bcast(&m, kMessageBytes, b->ctx) != 0) return DDT_ERR_COMM;
  if (std::memcmp(m.marker, kMarker, sizeof kMarker) != 0 || m.ok != 1) return DDT_ERR_COMM;
  if (std::memchr(m.path, '\0', sizeof m.path) == nullptr || m.path[0] != '/') return DDT_ERR_COMM;
  if (initialised()) return DDT_ERR_COMM;  // once per process
  JobHeader* job = nullptr;
  if (int e = attach_job_at(m.path, b->rank, b->size, &job)) return e;
  return join(job, b->rank, b->size, m.path);
}

}  // namespace

extern "C" int ddt_comm_init_bootstrap(const ddt_bootstrap* b) {
  if (!b || !b->bcast || b->size < 1 || b->size > kMaxRanks || b->rank < 0 || b->rank >= b->size)
    return DDT_ERR_ARG;
  return b->rank == 0 ? root(b) : other(b);
}
