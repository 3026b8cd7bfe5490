// MPI_THREAD_MULTIPLE under the interposer: on 2 ranks, several threads per rank each build,
// commit, use and free their own derived types while the others do the same, and move them with
// blocking, non-blocking and persistent calls on their own tags. Every received element is
// checked. An ordinary MPI program: run it with and without LD_PRELOAD=libddtkit-mpi.so.
#include <mpi.h>

#include <atomic>
#include <cstdio>
#include <thread>
#include <vector>

namespace {

std::atomic<long> bad{0};

// Thread t's type in round r: a column of n doubles out of an n x (n + t + r % 3) matrix.
void worker(int me, int t, int rounds) {
  for (int r = 0; r < rounds; ++r) {
    const int n = 8 + (t * 5 + r) % 23, ld = n + t + r % 3;
    MPI_Datatype col;
    MPI_Type_vector(n, 1, ld, MPI_DOUBLE, &col);
    MPI_Type_commit(&col);
    std::vector<double> a(static_cast<size_t>(n) * ld);
    const int tag = t * 100000 + r;
    if (me == 0) {
      for (size_t i = 0; i < a.size(); ++i) a[i] = t * 1e6 + r * 1e3 + static_cast<double>(i);
      MPI_Request q[2];
      MPI_Isend(a.data(), 1, col, 1, tag, MPI_COMM_WORLD, &q[0]);
      MPI_Send_init(a.data() + 1, 1, col, 1, tag, MPI_COMM_WORLD, &q[1]);
      MPI_Start(&q[1]);
      MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
      MPI_Request_free(&q[1]);
      // A blocking send too: with DDTKIT_RUNTIME_MIN low, it goes through ddtkit's runtime.
      MPI_Send(a.data() + 2, 1, col, 1, tag, MPI_COMM_WORLD);
    } else {
      MPI_Request q;
      MPI_Irecv(a.data(), 1, col, 0, tag, MPI_COMM_WORLD, &q);
      MPI_Wait(&q, MPI_STATUS_IGNORE);
      MPI_Recv(a.data() + 1, 1, col, 0, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Recv(a.data() + 2, 1, col, 0, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      for (int i = 0; i < n; ++i)
        for (int c = 0; c < 3; ++c) {
          const size_t k = static_cast<size_t>(i) * ld + c;
          if (a[k] != t * 1e6 + r * 1e3 + static_cast<double>(k)) ++bad;
        }
    }
    MPI_Type_free(&col);
  }
}

}  // namespace

int main(int argc, char** argv) {
  int provided;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int me, np;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  if (provided < MPI_THREAD_MULTIPLE || np != 2) {
    if (me == 0) std::printf("FAILURE: needs 2 ranks and MPI_THREAD_MULTIPLE (provided %d)\n", provided);
    MPI_Finalize();
    return 1;
  }
  const int threads = 4, rounds = 300;
  std::vector<std::thread> ts;
  for (int t = 0; t < threads; ++t) ts.emplace_back(worker, me, t, rounds);
  for (auto& th : ts) th.join();
  long mine = bad.load(), all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (me == 0)
    std::printf("%d threads x %d rounds per rank: %ld wrong elements\n", threads, rounds, all);
  MPI_Finalize();
  return all ? 1 : 0;
}
