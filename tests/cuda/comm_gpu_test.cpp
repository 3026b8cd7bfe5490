// The runtime with device buffers (ddt_comm_send/recv, two ranks under `ddtkit run`, one GPU):
// random types on both sides, in device memory on both sides, on one side, and pageable on the
// other, some receives larger than their message; messages below the eager limit (staged through host memory) and above it (the
// sender's buffer offered by CUDA IPC, the receiver's kernel copying it straight into its own
// layout: counted by ddt_comm_times' by_ipc). Every byte is compared with the CPU's ddt_copy of
// the same host images. Exits 77 (skipped) with the reason where no CUDA device is usable.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "ddtkit_cuda.h"
#include "gen.hpp"
#include "pair.hpp"

namespace {

// Round i's types and images (the same in both ranks, from one seed), its message above 4 KiB
// (big) or not, the receive with room for one element more (some receives are larger).
struct Round : TypePair {
  Round(uint64_t seed, bool big) {
    std::mt19937_64 rng(seed);
    GenOptions opt;
    for (int tries = 0; tries < 20; ++tries) {
      t = random_type(rng, opt, ref);
      count = 1 + rng() % 3;
      total = count * ref.size;
      if (total > 0 && (total > 4096) == big) break;
    }
    complete(rng, opt, 1);
  }
};

enum Kind { Device, Pageable };

char* place(Kind k, const std::vector<char>& image) {
  char* p = nullptr;
  if (k == Device) {
    cudaMalloc(&p, image.size());
    cudaMemcpy(p, image.data(), image.size(), cudaMemcpyHostToDevice);
    cudaDeviceSynchronize();
  } else {
    p = new char[image.size()];
    std::memcpy(p, image.data(), image.size());
  }
  return p;
}
std::vector<char> take(Kind k, char* p, size_t n) {
  std::vector<char> h(n);
  if (k == Device) {
    cudaMemcpy(h.data(), p, n, cudaMemcpyDeviceToHost);
    cudaFree(p);
  } else {
    std::memcpy(h.data(), p, n);
    delete[] p;
  }
  return h;
}

}  // namespace

int main() {
  // The big rounds' messages (above 4 KiB) go above the eager limit, so that they are offered by
  // CUDA IPC: the default limit is a cell's payload (16 KiB), which few random types reach.
  setenv("DDTKIT_EAGER_MAX", "4096", 0);
  const int usable = ddt_cuda_init() == DDT_SUCCESS;
  if (ddt_comm_init() != DDT_SUCCESS) {
    std::fprintf(stderr, "comm_gpu_test: run it under `ddtkit run -n 2`\n");
    return 2;
  }
  int rank, size;
  ddt_comm_rank(&rank);
  ddt_comm_size(&size);
  // Both ranks must agree to run: one without a device skips both.
  int other = 0;
  const int peer = 1 - rank;
  ddt_comm_send(&usable, 1, DDT_INT, peer, 1);
  ddt_comm_recv(&other, 1, DDT_INT, peer, 1, nullptr);
  if (!usable || !other || size != 2) {
    if (rank == 0) std::printf("SKIPPED comm_gpu_test: no usable CUDA device here; run make test-gpu on a GPU machine\n");
    ddt_comm_finalize();
    return 77;
  }
  int failures = 0, rounds = 0;
  ddt_comm_times before{}, after{};
  ddt_comm_get_times(&before);
  const Kind kinds[3][2] = {{Device, Device}, {Device, Pageable}, {Pageable, Device}};
  for (int i = 0; i < 300; ++i) {
    const bool big = i % 2 == 0;
    Round r(777 + i, big);
    if (r.c2 == 0) continue;
    const Kind sk = kinds[i % 3][0], rk = kinds[i % 3][1];
    int err;
    if (rank == 0) {
      ddt_type t = build_ddt(*r.t, &err);
      ddt_type_commit(t);
      char* s = place(sk, r.src);
      if (ddt_comm_send(s + r.src_at, r.count, t, 1, 100 + i) != DDT_SUCCESS) ++failures;
      take(sk, s, r.src.size());
      ddt_type_free(&t);
    } else {
      ddt_type t = build_ddt(*r.t, &err), t2 = build_ddt(*r.t2, &err);
      ddt_type_commit(t);
      ddt_type_commit(t2);
      // Every fourth receive has room for one element more than the message fills.
      const int64_t rcount = r.c2 + (i % 4 == 1 ? 1 : 0);
      std::vector<char> want = r.dst, stream(r.total);
      int64_t k = 0;
      ddt_pack(r.src.data() + r.src_at, r.count, t, 0, stream.data(), r.total, &k);
      ddt_unpack(stream.data(), r.total, want.data() + r.dst_at, rcount, t2, 0, &k);
      char* d = place(rk, r.dst);
      ddt_status st{};
      const int e = ddt_comm_recv(d + r.dst_at, rcount, t2, 0, 100 + i, &st);
      const std::vector<char> got = take(rk, d, r.dst.size());
      if ((e != DDT_SUCCESS || st.bytes != r.total || got != want) && ++failures <= 10)
        std::fprintf(stderr, "FAIL round %d (%s -> %s, %lld B, error %d): %s -> %s\n", i, sk == Device ? "device" : "pageable",
                     rk == Device ? "device" : "pageable", (long long)r.total, e, describe(*r.t).c_str(), describe(*r.t2).c_str());
      ddt_type_free(&t);
      ddt_type_free(&t2);
    }
    ++rounds;
  }
  ddt_comm_get_times(&after);
  const int64_t ipc = after.by_ipc - before.by_ipc;
  if (rank == 1) {
    std::printf("comm_gpu_test: %d messages with device buffers, %lld received by CUDA IPC, %d failures\n", rounds,
                (long long)ipc, failures);
    if (ipc == 0) std::fprintf(stderr, "FAIL no message went by CUDA IPC\n"), ++failures;
  }
  ddt_comm_finalize();
  return failures ? 1 : 0;
}
