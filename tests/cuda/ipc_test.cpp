// GPU zero copy between two processes (ddt_cuda_ipc_*): an exporter and an importer, forked
// before either touches CUDA and joined by a socket. For each round both build the same random
// types and host images from one seed; the exporter puts its image in device memory and sends
// the buffer's ddt_cuda_ipc description and its type's serialized layout; the importer copies
// from it into its own device buffer and its own random layout (random types on both sides, the
// importer's not overlapping itself) with one kernel, and compares every byte with the CPU's
// ddt_copy of the same images. Then hostile descriptions: a handle that opens nothing, an offset
// and a type past a live allocation. Exits 77 (ctest: skipped) with the reason where no CUDA device is usable.
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

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

bool put_all(int fd, const void* p, size_t n) {
  const char* c = static_cast<const char*>(p);
  while (n > 0) {
    const ssize_t k = write(fd, c, n);
    if (k <= 0) return false;
    c += k, n -= static_cast<size_t>(k);
  }
  return true;
}
bool get_all(int fd, void* p, size_t n) {
  char* c = static_cast<char*>(p);
  while (n > 0) {
    const ssize_t k = read(fd, c, n);
    if (k <= 0) return false;
    c += k, n -= static_cast<size_t>(k);
  }
  return true;
}

// Round i's types and images, the same in both processes.
struct Round : TypePair {
  explicit Round(uint64_t seed) {
    std::mt19937_64 rng(seed);
    GenOptions opt;
    t = random_type(rng, opt, ref);
    count = 1 + rng() % 3;
    complete(rng, opt, 0);
  }
};

constexpr int kRounds = 500;

int exporter(int fd, uint64_t seed) {
  if (ddt_cuda_init() != DDT_SUCCESS) return 77;
  for (int i = 0; i < kRounds; ++i) {
    Round r(seed + i);
    if (r.c2 == 0) continue;
    int err;
    ddt_type t = build_ddt(*r.t, &err);
    ddt_type_commit(t);
    char* dev;
    if (cudaMalloc(&dev, r.src.size()) != cudaSuccess) return 2;
    cudaMemcpy(dev, r.src.data(), r.src.size(), cudaMemcpyHostToDevice);
    cudaDeviceSynchronize();  // the copy from pageable memory is on the device before the importer reads
    // The typed form: the type's address (dev + src_at) lies before the allocation whenever the
    // type's true lower bound is above 64 bytes, as MPI allows.
    ddt_cuda_ipc d;
    if (int e = ddt_cuda_ipc_export_type(dev + r.src_at, r.count, t, &d)) {
      cudaIpcMemHandle_t h;  // the driver's own answer, for the log
      const cudaError_t ce = cudaIpcGetMemHandle(&h, dev);
      std::fprintf(stderr, "FAIL ddt_cuda_ipc_export_type (round %d, offset %lld): %s (cudaIpcGetMemHandle: %s)\n", i,
                   (long long)r.src_at, ddt_error_string(e), cudaGetErrorString(ce));
      return 3;
    }
    int64_t need = 0;
    ddt_type_serialize(t, nullptr, 0, &need);
    std::vector<char> layout(need);
    ddt_type_serialize(t, layout.data(), need, &need);
    char ok = 0;
    if (!put_all(fd, &d, sizeof d) || !put_all(fd, &need, sizeof need) || !put_all(fd, layout.data(), need) ||
        !get_all(fd, &ok, 1))  // the importer has copied (or failed): the buffer may go
      return 4;
    cudaFree(dev);
    ddt_type_free(&t);
  }
  // Hostile uses of a live description: the importer probes this buffer, then says it is done.
  char* live;
  if (cudaMalloc(&live, 256) != cudaSuccess) return 2;
  ddt_cuda_ipc d;
  if (ddt_cuda_ipc_export(live, &d) != DDT_SUCCESS || !put_all(fd, &d, sizeof d)) return 5;
  // A typed export whose bytes reach past the allocation is refused before any handle is made.
  ddt_type big;
  ddt_type_contiguous(128, DDT_INT, &big);
  ddt_type_commit(big);
  ddt_cuda_ipc no;
  const bool refused = ddt_cuda_ipc_export_type(live, 1, big, &no) == DDT_ERR_ARG;
  ddt_type_free(&big);
  if (!refused) return 6;
  char done = 0;
  get_all(fd, &done, 1);
  cudaFree(live);
  return 0;
}

int importer(int fd, uint64_t seed) {
  if (ddt_cuda_init() != DDT_SUCCESS) {
    int n = 0;
    const cudaError_t e = cudaGetDeviceCount(&n);
    std::printf("SKIPPED ipc_test: no usable CUDA device here (cudaGetDeviceCount: %s); run make test-gpu on a GPU machine\n",
                cudaGetErrorString(e));
    return 77;
  }
  cudaStream_t st;
  cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking);
  int failures = 0, rounds = 0;
  for (int i = 0; i < kRounds; ++i) {
    Round r(seed + i);
    if (r.c2 == 0) continue;
    ddt_cuda_ipc d;
    int64_t need;
    if (!get_all(fd, &d, sizeof d) || !get_all(fd, &need, sizeof need)) return 4;
    std::vector<char> layout(need);
    if (!get_all(fd, layout.data(), need)) return 4;
    ddt_type stype;
    int err;
    ddt_type_deserialize(layout.data(), need, &stype);
    ddt_type_commit(stype);
    ddt_type dtype = build_ddt(*r.t2, &err);
    ddt_type_commit(dtype);
    std::vector<char> want = r.dst;
    ddt_copy(r.src.data() + r.src_at, r.count, stype, want.data() + r.dst_at, r.c2, dtype);
    char* dev;
    cudaMalloc(&dev, r.dst.size());
    // Twice: the first copy opens the exporter's allocation, the second finds it in the cache.
    for (int pass = 0; pass < 2; ++pass) {
      cudaMemcpy(dev, r.dst.data(), r.dst.size(), cudaMemcpyHostToDevice);
      cudaDeviceSynchronize();
      const int e = ddt_cuda_ipc_copy_async(&d, r.count, stype, dev + r.dst_at, r.c2, dtype, st);
      cudaStreamSynchronize(st);
      std::vector<char> got(r.dst.size());
      cudaMemcpy(got.data(), dev, got.size(), cudaMemcpyDeviceToHost);
      if ((e != DDT_SUCCESS || got != want) && ++failures <= 10)
        std::fprintf(stderr, "FAIL ipc copy (round %d, pass %d, error %d): %s -> %s\n", i, pass, e,
                     describe(*r.t).c_str(), describe(*r.t2).c_str());
    }
    // The exporter frees its buffer after this round, and an exported allocation freed before its
    // importers close it is undefined behaviour (cudaIpcOpenMemHandle's documentation): close.
    ddt_cuda_ipc_close(&d);
    cudaFree(dev);
    ddt_type_free(&stype);
    ddt_type_free(&dtype);
    ++rounds;
    const char ok = 1;
    if (!put_all(fd, &ok, 1)) return 4;
  }
  // Hostile descriptions: a handle of nothing; a live one (256 bytes) read at an offset far past
  // it, and with a type that reaches past its end. Each an error, never a fault.
  ddt_cuda_ipc live;
  if (!get_all(fd, &live, sizeof live)) return 4;
  ddt_type v, big;
  ddt_type_contiguous(16, DDT_INT, &v);
  ddt_type_commit(v);
  ddt_type_contiguous(128, DDT_INT, &big);
  ddt_type_commit(big);
  char* dev;
  cudaMalloc(&dev, 512);
  ddt_cuda_ipc junk;
  std::memset(&junk, 0xab, sizeof junk);
  int e = ddt_cuda_ipc_copy_async(&junk, 1, v, dev, 1, v, st);
  if (e != DDT_ERR_ARG && ++failures) std::fprintf(stderr, "FAIL a junk handle gave %d, not DDT_ERR_ARG\n", e);
  ddt_cuda_ipc far = live;
  far.offset = int64_t{1} << 50;
  e = ddt_cuda_ipc_copy_async(&far, 1, v, dev, 1, v, st);
  if (e != DDT_ERR_ARG && ++failures) std::fprintf(stderr, "FAIL an offset past the allocation gave %d\n", e);
  e = ddt_cuda_ipc_copy_async(&live, 1, big, dev, 1, big, st);
  if (e != DDT_ERR_ARG && ++failures) std::fprintf(stderr, "FAIL a type past the allocation gave %d\n", e);
  e = ddt_cuda_ipc_copy_async(&live, 1, v, dev, 1, v, st);  // and a good one still works
  cudaStreamSynchronize(st);
  if (e != DDT_SUCCESS && ++failures) std::fprintf(stderr, "FAIL a good copy after the bad ones gave %d\n", e);
  ddt_cuda_ipc_close(&live);
  cudaFree(dev);
  ddt_type_free(&v);
  ddt_type_free(&big);
  const char done = 1;
  put_all(fd, &done, 1);
  std::printf("ipc_test: %d random type pairs copied between two processes by one kernel, %d failures\n", rounds, failures);
  return failures ? 1 : 0;
}

}  // namespace

int main() {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) return 2;
  const uint64_t seed = 4242;
  const pid_t child = fork();  // before any CUDA call: a CUDA context does not survive fork
  if (child < 0) return 2;
  if (child == 0) {
    close(sv[0]);
    _exit(exporter(sv[1], seed));
  }
  close(sv[1]);
  const int rc = importer(sv[0], seed);
  close(sv[0]);  // an exporter still waiting sees the end and stops
  int status = 0;
  waitpid(child, &status, 0);
  const int child_rc = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
  if (rc == 77) return 77;
  if (child_rc != 0) std::fprintf(stderr, "FAIL the exporting process ended with %d\n", child_rc);
  return rc != 0 ? rc : child_rc != 0 ? 1 : 0;
}
