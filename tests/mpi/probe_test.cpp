// Probes of messages that ddtkit's runtime carries under the interposer (issue 11): the MPI sees
// a 64-byte ticket, but MPI_Probe, MPI_Iprobe, MPI_Mprobe and MPI_Get_count must report the
// message as sent, and the receive after the probe must get it (MPI_Recv, MPI_Mrecv, the receive
// halves of MPI_Sendrecv, MPI_Sendrecv_replace and MPI_Isendrecv, a persistent receive), cancels
// of a pending receive, of MPI_Isendrecv and of a runtime send, and a receive that must be copied
// while its process blocks in another receive. Also a genuine 64-byte message
// from the same node (which a probe must read to tell it from a ticket) arrives intact. An
// ordinary MPI program on 2 ranks; under LD_PRELOAD=libddtkit-mpi.so with DDTKIT_EXPECT_RUNTIME=1
// the vector messages (8 KiB blocks: CMA pays, so even the MPI_Isend goes through the runtime)
// must have gone through the runtime. Exit status 1 on any wrong count, tag or byte.
#include <mpi.h>
#include <algorithm>
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
  // The same through MPI_Sendrecv_replace (its buffer's bytes go back to rank 0 first) and
  // MPI_Isendrecv.
  if (me == 0) {
    for (size_t i = 0; i < a.size(); ++i) a[i] = i + 0.75;
    MPI_Send(a.data(), 1, t, 1, 17, MPI_COMM_WORLD);
    std::vector<double> back(16 * 1024, 0.0);
    MPI_Recv(back.data(), 131072, MPI_BYTE, 1, 18, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (size_t i = 0; i < back.size(); ++i) if (back[i] != -2.0 - i) { ++bad; printf("sendrecv_replace sent %g\n", back[i]); break; }
    MPI_Send(a.data(), 1, t, 1, 22, MPI_COMM_WORLD);
    int reply = 0;
    MPI_Recv(&reply, 1, MPI_INT, 1, 23, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (reply != 43) { ++bad; printf("isendrecv reply %d\n", reply); }
  } else {
    MPI_Status st;
    MPI_Probe(0, 17, MPI_COMM_WORLD, &st);
    std::vector<double> b(16 * 1024);
    for (size_t i = 0; i < b.size(); ++i) b[i] = -2.0 - i;
    int c = -1;
    MPI_Sendrecv_replace(b.data(), 131072, MPI_BYTE, 0, 18, 0, 17, MPI_COMM_WORLD, &st);
    MPI_Get_count(&st, MPI_BYTE, &c);
    if (c != 131072 || st.MPI_TAG != 17) { ++bad; printf("sendrecv_replace count %d tag %d\n", c, st.MPI_TAG); }
    for (int j = 0; j < 16; ++j) for (int i = 0; i < 1024; ++i) if (b[j * 1024 + i] != j * 2048 + i + 0.75) ++bad;
    MPI_Probe(0, 22, MPI_COMM_WORLD, &st);
    std::fill(b.begin(), b.end(), -1.0);
    int reply = 43;
    MPI_Request r;
    MPI_Isendrecv(&reply, 1, MPI_INT, 0, 23, b.data(), 131072, MPI_BYTE, 0, 22, MPI_COMM_WORLD, &r);
    MPI_Wait(&r, &st);
    MPI_Get_count(&st, MPI_BYTE, &c);
    if (c != 131072 || st.MPI_TAG != 22) { ++bad; printf("isendrecv count %d tag %d\n", c, st.MPI_TAG); }
    for (int j = 0; j < 16; ++j) for (int i = 0; i < 1024; ++i) if (b[j * 1024 + i] != j * 2048 + i + 0.75) ++bad;
  }
  // A persistent receive started after a probe took its message: the start must find it in the
  // stash (waited for by MPI_Waitany, which must report it), and the next start the MPI's.
  if (me == 0) {
    for (size_t i = 0; i < a.size(); ++i) a[i] = i + 1.5;
    MPI_Send(a.data(), 1, t, 1, 30, MPI_COMM_WORLD);
    MPI_Recv(&me, 0, MPI_INT, 1, 31, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (size_t i = 0; i < a.size(); ++i) a[i] = i + 2.5;
    MPI_Send(a.data(), 1, t, 1, 30, MPI_COMM_WORLD);
  } else {
    std::vector<double> b(16 * 1024, -1.0);
    MPI_Request r;
    MPI_Status st;
    int idx = -1, c = -1;
    MPI_Recv_init(b.data(), 131072, MPI_BYTE, 0, 30, MPI_COMM_WORLD, &r);
    MPI_Probe(0, 30, MPI_COMM_WORLD, &st);
    MPI_Start(&r);
    // Cancelling it now fails (its message is matched: the probe took it), so it completes as
    // a receive; a cancellation that succeeded would leave the message to a receive below.
    if (MPI_Cancel(&r) != MPI_SUCCESS) { ++bad; printf("MPI_Cancel of a started persistent receive failed\n"); }
    MPI_Waitany(1, &r, &idx, &st);
    int cancelled = 0;
    MPI_Test_cancelled(&st, &cancelled);
    if (cancelled) {  // the MPI's choice where no probe took the message: receive it again
      MPI_Start(&r);
      MPI_Waitany(1, &r, &idx, &st);
    }
    MPI_Get_count(&st, MPI_BYTE, &c);
    if (idx != 0 || c != 131072 || st.MPI_SOURCE != 0 || st.MPI_TAG != 30) {
      ++bad;
      printf("persistent receive of a probed message: index %d count %d source %d tag %d\n", idx, c, st.MPI_SOURCE, st.MPI_TAG);
    }
    for (int j = 0; j < 16; ++j) for (int i = 0; i < 1024; ++i) if (b[j * 1024 + i] != j * 2048 + i + 1.5) ++bad;
    MPI_Send(&me, 0, MPI_INT, 0, 31, MPI_COMM_WORLD);
    MPI_Start(&r);
    MPI_Wait(&r, &st);
    MPI_Get_count(&st, MPI_BYTE, &c);
    if (c != 131072 || st.MPI_TAG != 30) { ++bad; printf("persistent receive, second start: count %d tag %d\n", c, st.MPI_TAG); }
    for (int j = 0; j < 16; ++j) for (int i = 0; i < 1024; ++i) if (b[j * 1024 + i] != j * 2048 + i + 2.5) ++bad;
    MPI_Request_free(&r);
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
  // ticket or a message), and so is MPI_Isendrecv's; a send through the runtime is not (the standard lets a cancel fail, and
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
    // MPI_Isendrecv's pending receive half (its send to MPI_PROC_NULL completes at once): the
    // request as a whole completes, cancelled.
    double x = 1.0;
    cancelled = 0;
    MPI_Isendrecv(&x, 1, MPI_DOUBLE, MPI_PROC_NULL, 98, b.data(), 1, t, 0, 98, MPI_COMM_WORLD, &r);
    MPI_Cancel(&r);
    MPI_Wait(&r, &st);
    MPI_Test_cancelled(&st, &cancelled);
    if (!cancelled) { ++bad; printf("a pending MPI_Isendrecv was not cancelled\n"); }
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
  // A real message of a ticket's size (64 bytes), probed then received: the probe takes it to
  // look, and must report and deliver it as the data it is.
  if (me == 0) {
    char m[64];
    for (int i = 0; i < 64; ++i) m[i] = static_cast<char>(i * 7 + 1);
    MPI_Send(m, 64, MPI_BYTE, 1, 11, MPI_COMM_WORLD);
  } else {
    MPI_Status st;
    int c = -1;
    MPI_Probe(0, 11, MPI_COMM_WORLD, &st);
    MPI_Get_count(&st, MPI_BYTE, &c);
    char m[96] = {0};
    MPI_Recv(m, 96, MPI_BYTE, 0, 11, MPI_COMM_WORLD, &st);
    int c2 = -1;
    MPI_Get_count(&st, MPI_BYTE, &c2);
    if (c != 64 || c2 != 64) { ++bad; printf("64-byte message: probe count %d, receive count %d\n", c, c2); }
    for (int i = 0; i < 64; ++i) if (m[i] != static_cast<char>(i * 7 + 1)) ++bad;
  }
  // A vector of 16-byte elements received as that many predefined elements: the ticket arrives
  // into MPI_C_DOUBLE_COMPLEX first, and must be a whole number of them (MPICH aborted on 40
  // bytes); the same with MPI_LONG_DOUBLE's slots and 32-byte complex long doubles.
  {
    const int n = 4096;
    const MPI_Datatype elems[3] = {MPI_C_DOUBLE_COMPLEX, MPI_LONG_DOUBLE, MPI_C_LONG_DOUBLE_COMPLEX};
    for (MPI_Datatype e : elems) {
      int size = 0;
      MPI_Type_size(e, &size);
      std::vector<char> a(static_cast<size_t>(2 * n * size), 0);
      MPI_Datatype v;
      MPI_Type_vector(n, 1, 2, e, &v);
      MPI_Type_commit(&v);
      if (me == 0) {
        for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<char>(i * 13 + 5);
        MPI_Send(a.data(), 1, v, 1, 12, MPI_COMM_WORLD);
      } else {
        MPI_Status st;
        MPI_Recv(a.data(), n, e, 0, 12, MPI_COMM_WORLD, &st);
        int c = -1;
        MPI_Get_count(&st, e, &c);
        if (c != n) ++bad, printf("%d-byte elements: count %d, not %d\n", size, c, n);
        // Element k is the sender's element 2k; long double slots compare their value bytes only.
        const int value = e == MPI_LONG_DOUBLE ? 10 : e == MPI_C_LONG_DOUBLE_COMPLEX ? -1 : size;
        for (int k = 0; k < n; ++k)
          for (int b = 0; b < size; ++b) {
            if (value > 0 && b >= value) continue;
            if (value < 0 && (b % 16) >= 10) continue;
            if (a[static_cast<size_t>(k * size + b)] != static_cast<char>((2 * k * size + b) * 13 + 5)) {
              ++bad;
              k = n;
              printf("%d-byte elements: wrong bytes\n", size);
              break;
            }
          }
      }
      MPI_Type_free(&v);
    }
  }
  // Two messages held by the interposer at once, received by non-blocking receives and one
  // MPI_Waitall: two matched probes then two MPI_Imrecv, and two probes then two MPI_Irecv. Each
  // such receive gets a request of its own (both MPIs gave one shared MPI_PROC_NULL handle, and
  // the Waitall hung delivering the second message twice).
  for (int k = 0; k < 2; ++k) {
    if (me == 0) {
      for (size_t i = 0; i < a.size(); ++i) a[i] = i + 0.125;
      MPI_Request r[2];
      MPI_Isend(a.data(), 1, t, 1, 16 + k, MPI_COMM_WORLD, &r[0]);
      MPI_Isend(a.data(), 1, t, 1, 16 + k, MPI_COMM_WORLD, &r[1]);
      MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
    } else {
      std::vector<double> b[2] = {std::vector<double>(16 * 2048, 0.0), std::vector<double>(16 * 2048, 0.0)};
      MPI_Request r[2];
      MPI_Status st[2];
      if (k == 0) {
        MPI_Message m[2];
        for (int i = 0; i < 2; ++i) MPI_Mprobe(0, 16, MPI_COMM_WORLD, &m[i], &st[i]);
        for (int i = 0; i < 2; ++i) MPI_Imrecv(b[i].data(), 1, t, &m[i], &r[i]);
      } else {
        MPI_Probe(0, 17, MPI_COMM_WORLD, &st[0]);
        for (int i = 0; i < 2; ++i) MPI_Irecv(b[i].data(), 1, t, 0, 17, MPI_COMM_WORLD, &r[i]);
      }
      MPI_Waitall(2, r, st);
      for (int i = 0; i < 2; ++i) {
        int c = -1;
        MPI_Get_count(&st[i], t, &c);
        if (c != 1 || st[i].MPI_TAG != 16 + k) ++bad, printf("two held messages (%d), receive %d: count %d tag %d\n", k, i, c, st[i].MPI_TAG);
        for (int j = 0; j < 16; ++j) for (int x = 0; x < 1024; ++x) if (b[i][j * 2048 + x] != j * 2048 + x + 0.125) ++bad;
      }
    }
  }
#if MPI_VERSION >= 4
  // MPI 4's large-count forms (mpi4py 4 calls them wherever the MPI has them): a 64-byte message
  // probed with MPI_Mprobe / MPI_Improbe and received with MPI_Mrecv_c / MPI_Imrecv_c (the handle
  // is the interposer's own: received by the MPI's _c call, the buffer kept its bytes), and the
  // runtime's vector sent with MPI_Send_c and received with MPI_Recv_c.
  for (int k = 0; k < 2; ++k) {
    if (me == 0) {
      double m[8];
      for (int i = 0; i < 8; ++i) m[i] = i + 0.5 + k;
      MPI_Send_c(m, 8, MPI_DOUBLE, 1, 13 + k, MPI_COMM_WORLD);
    } else {
      double m[8] = {0};
      MPI_Message msg;
      MPI_Status st;
      if (k == 0) {
        MPI_Mprobe(0, 13, MPI_COMM_WORLD, &msg, &st);
        MPI_Mrecv_c(m, 8, MPI_DOUBLE, &msg, &st);
      } else {
        int flag = 0;
        while (!flag) MPI_Improbe(0, 14, MPI_COMM_WORLD, &flag, &msg, &st);
        MPI_Request r;
        MPI_Imrecv_c(m, 8, MPI_DOUBLE, &msg, &r);
        MPI_Wait(&r, &st);
      }
      MPI_Count c = -1;
      MPI_Get_count_c(&st, MPI_DOUBLE, &c);
      if (c != 8) ++bad, printf("large-count matched receive %d: count %lld\n", k, static_cast<long long>(c));
      for (int i = 0; i < 8; ++i)
        if (m[i] != i + 0.5 + k) ++bad, printf("large-count matched receive %d: element %d is %g\n", k, i, m[i]), i = 8;
    }
  }
  if (me == 0) {
    for (size_t i = 0; i < a.size(); ++i) a[i] = i + 0.75;
    MPI_Send_c(a.data(), 1, t, 1, 15, MPI_COMM_WORLD);
  } else {
    std::vector<double> b(16 * 2048, 0.0);
    MPI_Status st;
    MPI_Recv_c(b.data(), 1, t, 0, 15, MPI_COMM_WORLD, &st);
    for (int j = 0; j < 16; ++j) for (int i = 0; i < 1024; ++i) if (b[j * 2048 + i] != j * 2048 + i + 0.75) ++bad;
  }
#endif
  if (me == 1) printf("probe_test: %d wrong counts, tags or elements\n", bad);
  MPI_Bcast(&bad, 1, MPI_INT, 1, MPI_COMM_WORLD);
  MPI_Finalize();
  return bad ? 1 : 0;
}
