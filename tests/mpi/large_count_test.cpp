// Receives of more than INT_MAX elements (MPI 4's large-count forms, MPICH 5) of messages that
// ddtkit's runtime carries under the interposer (issue 11): an int-form send of a derived type to
// a process of the same node sends the MPI a 64-byte ticket, whatever count the receive names, so
// MPI_Recv_c, MPI_Irecv_c, MPI_Recv_init_c, the receive halves of MPI_Sendrecv_c and
// MPI_Isendrecv_c, and MPI_Mrecv_c / MPI_Imrecv_c after a matched probe must take the message from the runtime (and a receive after MPI_Probe from the stash) as their
// int forms do. Before they did, MPI_Recv_c received the ticket's 64 bytes as the data and the
// sender waited for ever.
//
// An ordinary MPI program on 2 ranks; rank 0 sends a 128 KiB vector of doubles (8 KiB blocks: the
// runtime takes it) once per case, rank 1 receives each as MPI_BYTE with a count of INT_MAX + 4096
// into a reservation of that many bytes (MAP_NORESERVE: only the pages written are ever backed),
// and checks the count, source, tag, the bytes, and that nothing past the message was written.
// Exit status 1 on any wrong answer; a hang ends in alarm() with status 2.
#include <mpi.h>
#include <sys/mman.h>
#include <unistd.h>

#include <climits>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <vector>

namespace {

constexpr int kBlocks = 16, kBlock = 1024, kStride = 2048;  // doubles
constexpr int kBytes = kBlocks * kBlock * 8;
constexpr int kCases = 8;
const char* const kName[kCases] = {"MPI_Recv_c", "MPI_Irecv_c", "MPI_Recv_init_c", "MPI_Probe + MPI_Recv_c",
                                   "MPI_Mprobe + MPI_Mrecv_c", "MPI_Improbe + MPI_Imrecv_c", "MPI_Sendrecv_c",
                                   "MPI_Isendrecv_c"};
constexpr int kReplyTag = 40;  // the send halves of cases 6 and 7: the case number back to rank 0

void hang(int) {
  static const char m[] = "large_count_test: still waiting after 60 s: hang\n";
  (void)!write(1, m, sizeof m - 1);
  _exit(2);
}

// Receives case k's message into r with count `big` of MPI_BYTE.
void receive(int k, char* r, MPI_Count big, MPI_Status* st) {
  const int tag = 20 + k;
  MPI_Request q = MPI_REQUEST_NULL;
  MPI_Message m = MPI_MESSAGE_NULL;
  int flag = 0;
  switch (k) {
    case 0: MPI_Recv_c(r, big, MPI_BYTE, 0, tag, MPI_COMM_WORLD, st); break;
    case 1: MPI_Irecv_c(r, big, MPI_BYTE, 0, tag, MPI_COMM_WORLD, &q); MPI_Wait(&q, st); break;
    case 2:
      MPI_Recv_init_c(r, big, MPI_BYTE, 0, tag, MPI_COMM_WORLD, &q);
      MPI_Start(&q);
      MPI_Wait(&q, st);
      MPI_Request_free(&q);
      break;
    case 3: MPI_Probe(0, tag, MPI_COMM_WORLD, st); MPI_Recv_c(r, big, MPI_BYTE, 0, tag, MPI_COMM_WORLD, st); break;
    case 4: MPI_Mprobe(0, tag, MPI_COMM_WORLD, &m, st); MPI_Mrecv_c(r, big, MPI_BYTE, &m, st); break;
    case 5:
      while (!flag) MPI_Improbe(0, tag, MPI_COMM_WORLD, &flag, &m, st);
      MPI_Imrecv_c(r, big, MPI_BYTE, &m, &q);
      MPI_Wait(&q, st);
      break;
    case 6: MPI_Sendrecv_c(&k, 1, MPI_INT, 0, kReplyTag, r, big, MPI_BYTE, 0, tag, MPI_COMM_WORLD, st); break;
    case 7:
      MPI_Isendrecv_c(&k, 1, MPI_INT, 0, kReplyTag, r, big, MPI_BYTE, 0, tag, MPI_COMM_WORLD, &q);
      MPI_Wait(&q, st);
      break;
  }
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int me = 0, np = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  if (np != 2) {
    if (me == 0) std::printf("large_count_test: needs 2 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  signal(SIGALRM, hang);
  alarm(60);
  MPI_Datatype t;
  MPI_Type_vector(kBlocks, kBlock, kStride, MPI_DOUBLE, &t);
  MPI_Type_commit(&t);
  int bad = 0;
  if (me == 0) {
    std::vector<double> a(kBlocks * kStride);
    for (int k = 0; k < kCases; ++k) {
      for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<double>(i) + k;
      MPI_Send(a.data(), 1, t, 1, 20 + k, MPI_COMM_WORLD);
    }
    for (int k = 6; k < kCases; ++k) {
      int reply = -1;
      MPI_Recv(&reply, 1, MPI_INT, 1, kReplyTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      if (reply != k) {
        ++bad;
        std::printf("large_count_test: %s sent %d (want %d)\n", kName[k], reply, k);
      }
    }
  } else {
    const MPI_Count big = MPI_Count{INT_MAX} + 4096;
    void* p = mmap(nullptr, static_cast<size_t>(big), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    if (p == MAP_FAILED) {
      std::printf("large_count_test: cannot reserve %lld bytes\n", static_cast<long long>(big));
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    char* r = static_cast<char*>(p);
    for (int k = 0; k < kCases; ++k) {
      std::memset(r, 0xEE, kBytes + 64);
      MPI_Status st;
      st.MPI_SOURCE = st.MPI_TAG = -5;  // what no receive reports: a status left unwritten shows
      receive(k, r, big, &st);
      MPI_Count c = -1;
      MPI_Get_count_c(&st, MPI_BYTE, &c);
      int wrong = 0;
      for (int j = 0; j < kBlocks; ++j)
        for (int i = 0; i < kBlock; ++i) {
          double v;
          std::memcpy(&v, r + (static_cast<size_t>(j) * kBlock + i) * 8, 8);
          wrong += v != static_cast<double>(j * kStride + i + k);
        }
      for (int i = 0; i < 64; ++i) wrong += static_cast<unsigned char>(r[kBytes + i]) != 0xEE;
      if (c != kBytes || st.MPI_SOURCE != 0 || st.MPI_TAG != 20 + k || wrong) {
        ++bad;
        std::printf("large_count_test: %s: count %lld (want %d), source %d, tag %d (want %d), %d wrong bytes\n",
                    kName[k], static_cast<long long>(c), kBytes, st.MPI_SOURCE, st.MPI_TAG, 20 + k, wrong);
      }
    }
    munmap(p, static_cast<size_t>(big));
  }
  MPI_Type_free(&t);
  int total = 0;
  MPI_Allreduce(&bad, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (me == 0 && total == 0) std::printf("large_count_test: ok, %d receives of INT_MAX + 4096 bytes\n", kCases);
  MPI_Finalize();
  return total ? 1 : 0;
}
