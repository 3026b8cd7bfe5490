// Probes of messages that ddtkit's runtime carries under the interposer (issue 11): the MPI sees
// a 40-byte ticket, but MPI_Probe, MPI_Iprobe, MPI_Mprobe and MPI_Get_count must report the
// message as sent, and the receive after the probe must get it (MPI_Recv, MPI_Mrecv, and the
// receive half of MPI_Sendrecv), cancels of a pending receive and of a runtime send, and a receive
// that must be copied while its process blocks in another receive. Also a genuine 40-byte message
// from the same node (which a probe must read to tell it from a ticket) arrives intact. An
// ordinary MPI program on 2 ranks; under LD_PRELOAD=libddtkit-mpi.so with DDTKIT_EXPECT_RUNTIME=1
// the vector messages (8 KiB blocks: CMA pays, so even the MPI_Isend goes through the runtime)
// must have gone through the runtime. Exit status 1 on any wrong count, tag or byte.
#include <mpi.h>
#include <cstdio>
#include <vector>
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int me; MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Datatype t; MPI_Type_vector(16, 1024, 2048, MPI_DOUBLE, &t); MPI_Type_commit(&t);  // 128 KiB, 8 KiB blocks
  std::vector<double> a(16 * 2048, 0.0);
  int bad = 0;
  for (int k = 0; k < 3; ++k) {
    if (me == 0) {
      for (size_t i = 0; i < a.size(); ++i) a[i] = i + k;
      MPI_Request r; MPI_Isend(a.data(), 1, t, 1, 7 + k, MPI_COMM_WORLD, &r);
      MPI_Send(a.data(), 1, t, 1, 9, MPI_COMM_WORLD);
      MPI_Wait(&r, MPI_STATUS_IGNORE);
    } else {
      MPI_Status st; int c = -1, flag = 0;
      if (k == 0) MPI_Probe(0, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
      else while (!flag) MPI_Iprobe(MPI_ANY_SOURCE, 7 + k, MPI_COMM_WORLD, &flag, &st);
      MPI_Get_count(&st, MPI_BYTE, &c);
      if (c != 131072 || st.MPI_TAG != 7 + k) { ++bad; printf("probe count %d tag %d\n", c, st.MPI_TAG); }
      std::vector<double> b(16 * 1024);
      MPI_Message m;
      if (k == 2) { MPI_Mprobe(0, 7 + k, MPI_COMM_WORLD, &m, &st); MPI_Mrecv(b.data(), 131072, MPI_BYTE, &m, &st); }
      else MPI_Recv(b.data(), 131072, MPI_BYTE, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
      MPI_Get_count(&st, MPI_BYTE, &c);
      if (c != 131072 || st.MPI_TAG != 7 + k) { ++bad; printf("recv count %d tag %d\n", c, st.MPI_TAG); }
      for (int j = 0; j < 16; ++j) for (int i = 0; i < 1024; ++i) if (b[j * 1024 + i] != j * 2048 + i + k) ++bad;
      MPI_Recv(a.data(), 1, t, 0, 9, MPI_COMM_WORLD, &st);
      MPI_Get_count(&st, t, &c);
      if (c != 1) { ++bad; printf("typed count %d\n", c); }
    }
  }
  // A probed message received by MPI_Sendrecv (whose receive half takes it from the stash).
  if (me == 0) {
    for (size_t i = 0; i < a.size(); ++i) a[i] = i + 0.5;
    MPI_Send(a.data(), 1, t, 1, 13, MPI_COMM_WORLD);
    int reply = 0;
    MPI_Recv(&reply, 1, MPI_INT, 1, 14, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (reply != 42) { ++bad; printf("sendrecv reply %d\n", reply); }
  } else {
    MPI_Status st;
    MPI_Probe(0, 13, MPI_COMM_WORLD, &st);
    std::vector<double> b(16 * 1024, -1.0);
    int reply = 42, c = -1;
    MPI_Sendrecv(&reply, 1, MPI_INT, 0, 14, b.data(), 131072, MPI_BYTE, 0, 13, MPI_COMM_WORLD, &st);
    MPI_Get_count(&st, MPI_BYTE, &c);
    if (c != 131072 || st.MPI_TAG != 13) { ++bad; printf("sendrecv count %d tag %d\n", c, st.MPI_TAG); }
    for (int j = 0; j < 16; ++j) for (int i = 0; i < 1024; ++i) if (b[j * 1024 + i] != j * 2048 + i + 0.5) ++bad;
  }
  // Progress: a receive posted, then the process blocks in another receive while its peer's
  // blocking send of that message waits for it (the MPI completes such a send: its receive is
  // posted). Through the runtime the receiver must copy in whichever call it sits.
  if (me == 0) {
    for (size_t i = 0; i < a.size(); ++i) a[i] = i + 3;
    MPI_Send(a.data(), 1, t, 1, 20, MPI_COMM_WORLD);
    MPI_Send(&me, 1, MPI_INT, 1, 21, MPI_COMM_WORLD);
  } else {
    std::vector<double> b(16 * 2048, -1.0);
    MPI_Request r;
    int x = -1;
    MPI_Irecv(b.data(), 1, t, 0, 20, MPI_COMM_WORLD, &r);
    MPI_Recv(&x, 1, MPI_INT, 0, 21, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    for (int j = 0; j < 16; ++j) for (int i = 0; i < 1024; ++i) if (b[j * 2048 + i] != j * 2048 + i + 3) ++bad;
  }
  // Cancel: a pending receive of a derived type is cancelled (the MPI holds it, waiting for a
  // ticket or a message); a send through the runtime is not (the standard lets a cancel fail, and
  // then the message must arrive whole).
  if (me == 1) {
    std::vector<double> b(16 * 2048);
    MPI_Request r;
    MPI_Status st;
    int cancelled = 0;
    MPI_Irecv(b.data(), 1, t, 0, 99, MPI_COMM_WORLD, &r);
    MPI_Cancel(&r);
    MPI_Wait(&r, &st);
    MPI_Test_cancelled(&st, &cancelled);
    if (!cancelled) { ++bad; printf("a pending receive was not cancelled\n"); }
  }
  // The receiver posts its receive first (a send whose cancel fails must be received), learns
  // whether the cancel succeeded, and then waits for the message or cancels its own receive.
  if (me == 0) {
    for (size_t i = 0; i < a.size(); ++i) a[i] = i + 0.25;
    MPI_Request r;
    MPI_Status st;
    int cancelled = 1;
    MPI_Isend(a.data(), 1, t, 1, 15, MPI_COMM_WORLD, &r);
    MPI_Cancel(&r);
    MPI_Wait(&r, &st);
    MPI_Test_cancelled(&st, &cancelled);
    MPI_Send(&cancelled, 1, MPI_INT, 1, 16, MPI_COMM_WORLD);
  } else {
    std::vector<double> b(16 * 2048, -1.0);
    MPI_Request r;
    MPI_Status st;
    int cancelled = 0, mine = 0;
    MPI_Irecv(b.data(), 1, t, 0, 15, MPI_COMM_WORLD, &r);
    MPI_Recv(&cancelled, 1, MPI_INT, 0, 16, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (cancelled) MPI_Cancel(&r);
    MPI_Wait(&r, &st);
    MPI_Test_cancelled(&st, &mine);
    if (cancelled && !mine) { ++bad; printf("the send was cancelled, yet its receive got a message\n"); }
    if (!cancelled)
      for (int j = 0; j < 16; ++j) for (int i = 0; i < 1024; ++i) if (b[j * 2048 + i] != j * 2048 + i + 0.25) ++bad;
  }
  // A real 40-byte message, probed then received.
  if (me == 0) {
    char m[40];
    for (int i = 0; i < 40; ++i) m[i] = static_cast<char>(i * 7 + 1);
    MPI_Send(m, 40, MPI_BYTE, 1, 11, MPI_COMM_WORLD);
  } else {
    MPI_Status st;
    int c = -1;
    MPI_Probe(0, 11, MPI_COMM_WORLD, &st);
    MPI_Get_count(&st, MPI_BYTE, &c);
    char m[64] = {0};
    MPI_Recv(m, 64, MPI_BYTE, 0, 11, MPI_COMM_WORLD, &st);
    int c2 = -1;
    MPI_Get_count(&st, MPI_BYTE, &c2);
    if (c != 40 || c2 != 40) { ++bad; printf("40-byte message: probe count %d, receive count %d\n", c, c2); }
    for (int i = 0; i < 40; ++i) if (m[i] != static_cast<char>(i * 7 + 1)) ++bad;
  }
  if (me == 1) printf("probe_test: %d wrong counts, tags or elements\n", bad);
  MPI_Bcast(&bad, 1, MPI_INT, 1, MPI_COMM_WORLD);
  MPI_Finalize();
  return bad ? 1 : 0;
}
