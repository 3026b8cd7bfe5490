// The GPU benchmarks of issue 12, written to OUT/gpu.jsonl for bench/report_gpu.py. Every ratio
// is measured in this one process, the methods of a row interleaved rep by rep, medians of the
// reps timed with CUDA events on one stream:
//   * vector sweep: blocks of 4 B to 64 KiB at a stride of twice the block, 2 MiB and 64 MiB of
//     payload, pack and unpack, device to device, beside cudaMemcpyAsync of the payload (the
//     memory bound), cudaMemcpy2DAsync of the same box, and one cudaMemcpyAsync per block (Open
//     MPI's way: timed over at most kPerBlockMax blocks, reported per block);
//   * device to pinned host: pack straight into pinned memory (the host bypass) beside a
//     device-to-host cudaMemcpyAsync of the payload; device to pageable host (ddt_pack, host wall
//     time): the kernels through a device temporary against the DMA engine's rows;
//   * an index list of 12 B blocks (hindexed_block at shuffled displacements), 64 MiB payload;
//   * beside each vector, subarray and index list: the hand-written kernels a user would write
//     instead (gpu_hand.cu: a thread per word, its block found by division), and Yaksa's CUDA
//     backend (MPICH's engine; gpu_yaksa.hpp) where it was built, its output checked against
//     ddtkit's once per row;
//   * the DDTBench kernels whose type addresses one array, on the device, beside the payload copy;
//   * zero copy between two processes (ddt_cuda_ipc_copy_async): a 64 MiB vector (256 B blocks)
//     in a second process's device memory copied into this process's own vector layout by one
//     kernel, beside what a transfer without it does on the same GPU: pack, copy the packed bytes,
//     unpack (the exporting process is forked before either touches CUDA);
//   * the launch floor: a 1-byte cudaMemsetAsync and a 1-byte pack (the smallest kernel the layer
//     launches), each plus synchronisation, beside a 2 MiB pack plus synchronisation (host wall
//     time: what a caller waits for).
// Where no CUDA device is usable the file holds one row {"absent": reason} and the program exits
// 0: make bench runs everywhere, and the report says why its GPU section is empty.
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "ddtbench.hpp"
#include "ddtkit_cuda.h"
#include "gpu_hand.hpp"
#include "gpu_yaksa.hpp"

namespace {

FILE* out = nullptr;
cudaStream_t st;
constexpr int kReps = 9;
constexpr int64_t kPerBlockMax = 4096;

#define CK(x)                                                                                        \
  do {                                                                                               \
    const cudaError_t e_ = (x);                                                                      \
    if (e_ != cudaSuccess) {                                                                         \
      std::fprintf(stderr, "CUDA error %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__); \
      std::exit(2);                                                                                  \
    }                                                                                                \
  } while (0)

// Medians (seconds) of methods timed rep by rep, interleaved; each method is one enqueueing
// call on st (one warm-up run of each first). A rep times `inner` calls back to back and reports
// their mean: for payloads of kilobytes a single call is a launch, and the events around one
// launch would time the events.
int inner = 1;
template <class... F>
std::vector<double> medians(F... f) {
  std::vector<std::function<void()>> fs{f...};
  std::vector<std::vector<double>> t(fs.size());
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  for (auto& g : fs) g();
  CK(cudaStreamSynchronize(st));
  for (int r = 0; r < kReps; ++r)
    for (size_t i = 0; i < fs.size(); ++i) {
      CK(cudaEventRecord(a, st));
      for (int j = 0; j < inner; ++j) fs[i]();
      CK(cudaEventRecord(b, st));
      CK(cudaEventSynchronize(b));
      float ms = 0;
      CK(cudaEventElapsedTime(&ms, a, b));
      t[i].push_back(ms * 1e-3 / inner);
    }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  std::vector<double> m;
  for (auto& v : t) {
    std::sort(v.begin(), v.end());
    m.push_back(v[v.size() / 2]);
  }
  return m;
}

// The median host wall time of a synchronous call (5 reps after one warm-up; a call whose warm-up
// took over a quarter of a second is timed once more: the DMA engine's rows into pageable memory
// can take seconds at small blocks, and the sweep must fit a lease of minutes).
template <class F>
double wall_median(F f) {
  const auto w = std::chrono::steady_clock::now();
  f();
  const bool slow = std::chrono::duration<double>(std::chrono::steady_clock::now() - w).count() > 0.25;
  std::vector<double> t;
  for (int r = 0; r < (slow ? 1 : 5); ++r) {
    const auto a = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// s without the characters a JSON string would need escaped (a loader's message may hold any).
std::string json_safe(std::string s) {
  for (char& c : s)
    if (c == '"' || c == '\\' || static_cast<unsigned char>(c) < 0x20) c = ' ';
  return s;
}

void must(int e, const char* what) {
  if (e != DDT_SUCCESS) {
    std::fprintf(stderr, "gpu_bench: %s: %s\n", what, ddt_error_string(e));
    std::exit(2);
  }
}

// The same pack by the general kernel (DDT_CUDA_GENERAL: the tree seek whatever the layout).
void general_pack(const void* typed, ddt_type t, void* packed, int64_t n) {
  int64_t k;
  ddt_cuda_set_executor(DDT_CUDA_GENERAL);
  must(ddt_cuda_pack_async(typed, 1, t, 0, packed, n, &k, st), "general pack");
  ddt_cuda_set_executor(DDT_CUDA_AUTO);
}

// Yaksa's pack and unpack of one element of y.t. Checked once first: both must run and Yaksa's
// packed bytes equal ddtkit's (scratch holds `payload` bytes). Timed in a medians() of their own
// beside the payload's copy, after ddtkit's row: Yaksa moves blocks of 16 KiB and more with one
// cudaMemcpyAsync each (4,096 copies a call at 64 MiB), and timed among ddtkit's methods those
// tens of milliseconds of small copies left the next rep's first kernels slower (a 16 KiB-block
// pack 53 -> 64-78 us, the copy 51 -> 54-59 us).
struct YaksaRow {
  yk::Type t;
  bool ok = true;
};
bool same_on_device(const char* a, const char* b, int64_t n) {
  std::vector<char> x(n), y(n);
  CK(cudaMemcpy(x.data(), a, n, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(y.data(), b, n, cudaMemcpyDeviceToHost));
  return x == y;
}
void yaksa_check(YaksaRow& y, const char* typed, ddt_type t, char* packed, char* scratch, int64_t payload) {
  if (!yk::loaded()) return;
  int64_t k;
  must(ddt_cuda_pack_async(typed, 1, t, 0, packed, payload, &k, st), "pack");
  y.ok = y.t && yk::pack(typed, y.t, scratch, payload, st);
  CK(cudaStreamSynchronize(st));
  y.ok = y.ok && same_on_device(packed, scratch, payload);
}
// The row's Yaksa fields ("" where Yaksa is not loaded; times 0 where it refused or was wrong).
std::string yaksa_fields(YaksaRow& y, char* typed, char* packed, int64_t payload) {
  if (!yk::loaded()) return "";
  std::vector<double> m(3, 0.0);
  if (y.ok)
    m = medians([&] { CK(cudaMemcpyAsync(packed, typed, payload, cudaMemcpyDeviceToDevice, st)); },
                [&] { y.ok = y.ok && yk::pack(typed, y.t, packed, payload, st); },
                [&] { y.ok = y.ok && yk::unpack(packed, payload, typed, y.t, st); });
  char b[200];
  std::snprintf(b, sizeof b, ",\"yaksa_memcpy_s\":%.9g,\"yaksa_pack_s\":%.9g,\"yaksa_unpack_s\":%.9g,\"yaksa_ok\":%d",
                m[0], y.ok ? m[1] : 0.0, y.ok ? m[2] : 0.0, y.ok ? 1 : 0);
  return b;
}

void vector_sweep() {
  const int64_t payloads[] = {int64_t{2} << 20, int64_t{64} << 20};
  std::vector<int64_t> blocks = {4, 8, 16, 32, 64, 128, 256, 512, 1024, 4096, 16384, 65536};
  for (int64_t payload : payloads) {
    char *typed, *packed, *pinned;
    CK(cudaMalloc(&typed, 2 * payload));
    CK(cudaMalloc(&packed, payload));
    CK(cudaMallocHost(&pinned, payload));
    CK(cudaMemset(typed, 1, 2 * payload));
    char* scratch;
    CK(cudaMalloc(&scratch, payload));
    std::vector<char> pageable(payload);
    for (int64_t b : blocks) {
      const int64_t n = payload / b;
      ddt_type v;
      must(ddt_type_hvector(n, b, 2 * b, DDT_BYTE, &v), "hvector");
      must(ddt_type_commit(v), "commit");
      int64_t k;
      const int64_t per_block = std::min(n, kPerBlockMax);
      YaksaRow y{yk::hvector(n, b, 2 * b)};
      yaksa_check(y, typed, v, packed, scratch, payload);
      auto m = medians([&] { CK(cudaMemcpyAsync(packed, typed, payload, cudaMemcpyDeviceToDevice, st)); },
                       [&] { must(ddt_cuda_pack_async(typed, 1, v, 0, packed, payload, &k, st), "pack"); },
                       [&] { must(ddt_cuda_unpack_async(packed, payload, typed, 1, v, 0, &k, st), "unpack"); },
                       [&] { CK(cudaMemcpy2DAsync(packed, b, typed, 2 * b, b, n, cudaMemcpyDeviceToDevice, st)); },
                       [&] {
                         for (int64_t i = 0; i < per_block; ++i)
                           CK(cudaMemcpyAsync(packed + i * b, typed + 2 * i * b, b, cudaMemcpyDeviceToDevice, st));
                       },
                       [&] { CK(cudaMemcpyAsync(pinned, packed, payload, cudaMemcpyDeviceToHost, st)); },
                       [&] { must(ddt_cuda_pack_async(typed, 1, v, 0, pinned, payload, &k, st), "pack to pinned"); },
                       [&] { general_pack(typed, v, packed, payload); },
                       [&] { hand_vector(true, typed, packed, n, b, 2 * b, st); },
                       [&] { hand_vector(false, typed, packed, n, b, 2 * b, st); });
      // Into pageable host memory, synchronously (host wall time): the kernels through a device
      // temporary and one copy across, against the DMA engine's rows straight across (the cost
      // model's open question, src/cuda/api.cpp).
      const double pageable_kernel = wall_median([&] { must(ddt_pack(typed, 1, v, 0, pageable.data(), payload, &k), "pack"); });
      ddt_cuda_set_executor(DDT_CUDA_DMA);
      const double pageable_dma = wall_median([&] { must(ddt_pack(typed, 1, v, 0, pageable.data(), payload, &k), "pack"); });
      ddt_cuda_set_executor(DDT_CUDA_AUTO);
      std::fprintf(out,
                   "{\"suite\":\"vector\",\"block\":%lld,\"payload\":%lld,\"memcpy_s\":%.9g,\"pack_s\":%.9g,"
                   "\"unpack_s\":%.9g,\"memcpy2d_s\":%.9g,\"per_block_s\":%.9g,\"d2h_s\":%.9g,\"pack_pinned_s\":%.9g,"
                   "\"pageable_kernel_s\":%.9g,\"pageable_dma_s\":%.9g,\"general_s\":%.9g,\"hand_pack_s\":%.9g,"
                   "\"hand_unpack_s\":%.9g%s}\n",
                   (long long)b, (long long)payload, m[0], m[1], m[2], m[3], m[4] / per_block, m[5], m[6], pageable_kernel,
                   pageable_dma, m[7], m[8], m[9], yaksa_fields(y, typed, packed, payload).c_str());
      yk::free_type(y.t);
      std::fflush(out);
      ddt_type_free(&v);
    }
    cudaFree(typed);
    cudaFree(packed);
    cudaFree(scratch);
    cudaFreeHost(pinned);
  }
}

void index_list() {
  const int64_t w = 12, n = (int64_t{64} << 20) / w, payload = n * w;  // whole blocks: 64 MiB - 4 B
  std::vector<int64_t> displs(n);
  for (int64_t i = 0; i < n; ++i) displs[i] = 2 * w * i;
  std::shuffle(displs.begin(), displs.end(), std::mt19937_64(7));
  ddt_type t;
  must(ddt_type_hindexed_block(n, w, displs.data(), DDT_BYTE, &t), "hindexed_block");
  must(ddt_type_commit(t), "commit");
  char *typed, *packed;
  int64_t* d_displs;
  CK(cudaMalloc(&typed, 2 * payload));
  CK(cudaMalloc(&packed, payload));
  CK(cudaMalloc(&d_displs, n * sizeof(int64_t)));
  CK(cudaMemcpy(d_displs, displs.data(), n * sizeof(int64_t), cudaMemcpyHostToDevice));
  char* scratch;
  CK(cudaMalloc(&scratch, payload));
  YaksaRow y{yk::hindexed_block(n, w, displs.data())};
  yaksa_check(y, typed, t, packed, scratch, payload);
  int64_t k;
  auto m = medians([&] { CK(cudaMemcpyAsync(packed, typed, payload, cudaMemcpyDeviceToDevice, st)); },
                   [&] { must(ddt_cuda_pack_async(typed, 1, t, 0, packed, payload, &k, st), "pack"); },
                   [&] { must(ddt_cuda_unpack_async(packed, payload, typed, 1, t, 0, &k, st), "unpack"); },
                   [&] { hand_list(true, typed, packed, n, w, d_displs, 2 * w, st); },
                   [&] { hand_list(false, typed, packed, n, w, d_displs, 2 * w, st); });
  std::fprintf(out, "{\"suite\":\"index12\",\"payload\":%lld,\"memcpy_s\":%.9g,\"pack_s\":%.9g,\"unpack_s\":%.9g,"
                    "\"hand_pack_s\":%.9g,\"hand_unpack_s\":%.9g%s}\n",
               (long long)payload, m[0], m[1], m[2], m[3], m[4], yaksa_fields(y, typed, packed, payload).c_str());
  yk::free_type(y.t);
  cudaFree(scratch);
  cudaFree(typed);
  cudaFree(packed);
  cudaFree(d_displs);
  ddt_type_free(&t);
}

// The other regular layouts of the targets, at 64 MiB: indexed_block (the same blocks as the
// vector sweep's, at stride twice the block, in shuffled order: the list kernel, not a vector in
// disguise) and a 2-D subarray (rows of `block` bytes out of rows of twice that: canonically the
// vector, so the nest kernel). Pack, unpack and the general kernel's pack beside the copy.
void layouts_sweep() {
  const int64_t target = int64_t{64} << 20;
  char *typed, *packed;
  CK(cudaMalloc(&typed, 2 * target + (1 << 20)));
  CK(cudaMalloc(&packed, target));
  CK(cudaMemset(typed, 3, 2 * target + (1 << 20)));
  char* scratch;
  CK(cudaMalloc(&scratch, target));
  // indexed_block twice: in shuffled order, and in ascending order with a gap 8 B wider after
  // every 1,024th block (so that it is not a vector: its canonical form is a table of 1,024-block
  // vectors, which the GPU layer moves as a flat list of its blocks).
  for (const char* kind : {"indexed_block", "indexed_block_sorted", "subarray"}) {
    for (int64_t b : {8, 16, 64, 128, 512, 4096}) {
      const int64_t n = target / b, payload = n * b;
      ddt_type t;
      YaksaRow y{0};
      int64_t* d_displs = nullptr;  // the hand-written kernel's copy of an index list
      if (kind[0] == 'i') {
        std::vector<int64_t> displs(n);
        for (int64_t i = 0; i < n; ++i) displs[i] = 2 * b * i + (kind[13] == '_' ? 8 * (i / 1024) : 0);
        if (kind[13] != '_') std::shuffle(displs.begin(), displs.end(), std::mt19937_64(b));
        must(ddt_type_hindexed_block(n, b, displs.data(), DDT_BYTE, &t), "hindexed_block");
        y.t = yk::hindexed_block(n, b, displs.data());
        CK(cudaMalloc(&d_displs, n * sizeof(int64_t)));
        CK(cudaMemcpy(d_displs, displs.data(), n * sizeof(int64_t), cudaMemcpyHostToDevice));
      } else {
        const int64_t sizes[2] = {n, 2 * b}, subs[2] = {n, b}, starts[2] = {0, b};
        must(ddt_type_subarray(2, sizes, subs, starts, DDT_ORDER_C, DDT_BYTE, &t), "subarray");
        y.t = yk::subarray2(n, 2 * b, n, b, 0, b);
      }
      must(ddt_type_commit(t), "commit");
      yaksa_check(y, typed, t, packed, scratch, payload);
      int64_t k;
      auto m = medians([&] { CK(cudaMemcpyAsync(packed, typed, payload, cudaMemcpyDeviceToDevice, st)); },
                       [&] { must(ddt_cuda_pack_async(typed, 1, t, 0, packed, payload, &k, st), "pack"); },
                       [&] { must(ddt_cuda_unpack_async(packed, payload, typed, 1, t, 0, &k, st), "unpack"); },
                       [&] {  // (a list of millions of blocks: its tree, 28 B a block, exceeds the
                              // layout cache and would be uploaded per call; timed from 128 B)
                         if (kind[0] == 'i' && kind[13] != '_' && b < 128) return;
                         general_pack(typed, t, packed, payload);
                       },
                       [&] {
                         if (d_displs)
                           hand_list(true, typed, packed, n, b, d_displs, kind[13] == '_' ? 8 : b, st);
                         else
                           hand_vector(true, typed + b, packed, n, b, 2 * b, st);
                       },
                       [&] {
                         if (d_displs)
                           hand_list(false, typed, packed, n, b, d_displs, kind[13] == '_' ? 8 : b, st);
                         else
                           hand_vector(false, typed + b, packed, n, b, 2 * b, st);
                       });
      if (kind[0] == 'i' && kind[13] != '_' && b < 128) m[3] = 0;
      std::fprintf(out, "{\"suite\":\"layouts\",\"layout\":\"%s\",\"block\":%lld,\"payload\":%lld,\"memcpy_s\":%.9g,"
                        "\"pack_s\":%.9g,\"unpack_s\":%.9g,\"general_s\":%.9g,\"hand_pack_s\":%.9g,\"hand_unpack_s\":%.9g%s}\n",
                   kind, (long long)b, (long long)payload, m[0], m[1], m[2], m[3], m[4], m[5],
                   yaksa_fields(y, typed, packed, payload).c_str());
      ddt_type_free(&t);
      yk::free_type(y.t);
      if (d_displs) cudaFree(d_displs);
    }
  }
  cudaFree(typed);
  cudaFree(packed);
  cudaFree(scratch);
}

void ddtbench() {
  inner = 20;  // kilobytes to megabytes: launch-bound, so each rep times 20 calls
  for (auto& kp : ddtbench_kernels(false)) {
    Kernel& k = *kp;
    if (!k.buf || k.arrays.size() != 1) continue;  // absolute addresses of host arrays
    const int64_t bytes = k.array_bytes[0], off = static_cast<const char*>(k.buf) - k.arrays[0].get();
    char *arr, *packed;
    CK(cudaMalloc(&arr, bytes));
    CK(cudaMalloc(&packed, k.bytes));
    CK(cudaMemcpy(arr, k.arrays[0].get(), bytes, cudaMemcpyHostToDevice));
    int64_t n;
    const std::string pack = k.name + " " + k.params + " pack", unpack = k.name + " " + k.params + " unpack";
    auto m = medians([&] { CK(cudaMemcpyAsync(packed, arr, k.bytes, cudaMemcpyDeviceToDevice, st)); },
                     [&] { must(ddt_cuda_pack_async(arr + off, k.count, k.type, 0, packed, k.bytes, &n, st), pack.c_str()); },
                     [&] { must(ddt_cuda_unpack_async(packed, k.bytes, arr + off, k.count, k.type, 0, &n, st), unpack.c_str()); });
    std::fprintf(out, "{\"suite\":\"ddtbench\",\"kernel\":\"%s\",\"params\":\"%s\",\"bytes\":%lld,\"memcpy_s\":%.9g,"
                      "\"pack_s\":%.9g,\"unpack_s\":%.9g}\n",
                 k.name.c_str(), k.params.c_str(), (long long)k.bytes, m[0], m[1], m[2]);
    cudaFree(arr);
    cudaFree(packed);
  }
  inner = 1;
}

void launch_floor() {
  const int64_t payload = int64_t{2} << 20, b = 64;
  ddt_type v;
  must(ddt_type_hvector(payload / b, b, 2 * b, DDT_BYTE, &v), "hvector");
  must(ddt_type_commit(v), "commit");
  char *typed, *packed;
  CK(cudaMalloc(&typed, 2 * payload));
  CK(cudaMalloc(&packed, payload));
  // Host-side wall time of enqueue + synchronisation: what a caller waits for.
  auto wall = [&](auto f) {
    std::vector<double> t;
    for (int r = 0; r < 50; ++r) {
      const auto a = std::chrono::steady_clock::now();
      f();
      CK(cudaStreamSynchronize(st));
      t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count());
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
  };
  int64_t k;
  // The floor: a one-byte contiguous pack is the smallest kernel the layer launches; the empty
  // kernel itself is not reachable through the public API, so cudaMemsetAsync of one byte (one
  // launch on the copy engine's path) stands beside it.
  ddt_type one;
  must(ddt_type_contiguous(1, DDT_BYTE, &one), "contiguous");
  must(ddt_type_commit(one), "commit");
  const double floor_memset = wall([&] { CK(cudaMemsetAsync(packed, 0, 1, st)); });
  const double floor_pack = wall([&] { must(ddt_cuda_pack_async(typed, 1, one, 0, packed, 1, &k, st), "pack 1"); });
  const double pack = wall([&] { must(ddt_cuda_pack_async(typed, 1, v, 0, packed, payload, &k, st), "pack"); });
  std::fprintf(out, "{\"suite\":\"floor\",\"payload\":%lld,\"block\":%lld,\"memset1_s\":%.9g,\"pack1_s\":%.9g,\"pack_s\":%.9g}\n",
               (long long)payload, (long long)b, floor_memset, floor_pack, pack);
  ddt_type_free(&one);
  ddt_type_free(&v);
  cudaFree(typed);
  cudaFree(packed);
}

// What the GPU layer costs host-memory calls once it is on (its hook sees every ddt_pack): a 480 B
// vector packed between heap buffers (known host memory: no driver query), into a buffer on the
// stack (not known: the driver is asked about it), and one cudaPointerGetAttributes alone; host
// wall time per call, medians of 9 runs of 20,000 calls.
void host_overhead() {
  ddt_type v;
  must(ddt_type_vector(60, 1, 2, DDT_DOUBLE, &v), "vector");
  must(ddt_type_commit(v), "commit");
  std::vector<double> src(120, 1.0), heap(60);
  alignas(64) char stack[480];
  int64_t k;
  auto per_call = [&](auto f) {
    std::vector<double> t;
    for (int r = 0; r < 9; ++r) {
      const auto a = std::chrono::steady_clock::now();
      for (int i = 0; i < 20000; ++i) f();
      t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count() / 20000);
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
  };
  const double to_heap = per_call([&] { must(ddt_pack(src.data(), 1, v, 0, heap.data(), 480, &k), "pack"); });
  const double to_stack = per_call([&] { must(ddt_pack(src.data(), 1, v, 0, stack, 480, &k), "pack"); });
  cudaPointerAttributes attr;
  const double query = per_call([&] { CK(cudaPointerGetAttributes(&attr, heap.data())); });
  std::fprintf(out, "{\"suite\":\"host\",\"bytes\":480,\"pack_heap_s\":%.9g,\"pack_stack_s\":%.9g,\"query_s\":%.9g}\n",
               to_heap, to_stack, query);
  ddt_type_free(&v);
}

// The IPC benchmark's vector: 64 MiB of 256 B blocks at a stride of 512 B.
constexpr int64_t kIpcPayload = int64_t{64} << 20, kIpcBlock = 256;

ddt_type ipc_vector() {
  ddt_type v;
  must(ddt_type_hvector(kIpcPayload / kIpcBlock, kIpcBlock, 2 * kIpcBlock, DDT_BYTE, &v), "hvector");
  must(ddt_type_commit(v), "commit");
  return v;
}

// The exporting process: its vector in device memory, described to the parent, kept until the
// parent says it is done.
int ipc_exporter(int fd) {
  if (ddt_cuda_init() != DDT_SUCCESS) return 0;
  char* typed;
  if (cudaMalloc(&typed, 2 * kIpcPayload) != cudaSuccess) return 1;
  cudaMemset(typed, 7, 2 * kIpcPayload);
  cudaDeviceSynchronize();
  ddt_cuda_ipc d;
  if (ddt_cuda_ipc_export(typed, &d) != DDT_SUCCESS) return 1;
  if (write(fd, &d, sizeof d) != static_cast<ssize_t>(sizeof d)) return 1;
  char done;
  if (read(fd, &done, 1) < 0) return 1;
  cudaFree(typed);
  return 0;
}

void ipc(int fd) {
  ddt_cuda_ipc d;
  if (read(fd, &d, sizeof d) != static_cast<ssize_t>(sizeof d)) {
    std::fprintf(out, "{\"suite\":\"ipc\",\"absent\":\"the exporting process sent no description\"}\n");
    return;
  }
  ddt_type v = ipc_vector();
  char *mine, *packed, *packed2;
  CK(cudaMalloc(&mine, 2 * kIpcPayload));
  CK(cudaMalloc(&packed, kIpcPayload));
  CK(cudaMalloc(&packed2, kIpcPayload));
  // The exporter's vector as this process sees it (the first copy opens the mapping).
  must(ddt_cuda_ipc_copy_async(&d, 1, v, mine, 1, v, st), "ipc copy");
  CK(cudaStreamSynchronize(st));
  // The transfer without zero copy: the same vector packed, the packed bytes copied, unpacked. On
  // one GPU the exporter's memory and this process's are the same HBM, so the source is a local
  // vector of the same layout (opening the exporter's handle a second time in this process is
  // not allowed everywhere).
  char* local;
  CK(cudaMalloc(&local, 2 * kIpcPayload));
  CK(cudaMemset(local, 7, 2 * kIpcPayload));
  int64_t k;
  auto m = medians([&] { must(ddt_cuda_ipc_copy_async(&d, 1, v, mine, 1, v, st), "ipc copy"); },
                   [&] {
                     must(ddt_cuda_pack_async(local, 1, v, 0, packed, kIpcPayload, &k, st), "pack");
                     CK(cudaMemcpyAsync(packed2, packed, kIpcPayload, cudaMemcpyDeviceToDevice, st));
                     must(ddt_cuda_unpack_async(packed2, kIpcPayload, mine, 1, v, 0, &k, st), "unpack");
                   });
  std::fprintf(out, "{\"suite\":\"ipc\",\"payload\":%lld,\"block\":%lld,\"zero_copy_s\":%.9g,\"pack_copy_unpack_s\":%.9g}\n",
               (long long)kIpcPayload, (long long)kIpcBlock, m[0], m[1]);
  ddt_cuda_ipc_close(&d);
  cudaFree(local);
  cudaFree(mine);
  cudaFree(packed);
  cudaFree(packed2);
  ddt_type_free(&v);
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir = "bench/results";
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--out") && i + 1 < argc) dir = argv[++i];
  }
  // The IPC benchmark's exporter, forked before this process touches CUDA.
  int sv[2] = {-1, -1};
  pid_t child = -1;
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0) {
    child = fork();
    if (child == 0) {
      close(sv[0]);
      _exit(ipc_exporter(sv[1]));
    }
    close(sv[1]);
  }
  const std::string path = dir + "/gpu.jsonl";
  out = std::fopen(path.c_str(), "w");
  if (!out) {
    std::perror(path.c_str());
    return 1;
  }
  setvbuf(out, nullptr, _IOLBF, 0);  // each row lands whole, also when a time limit stops the run
  if (ddt_cuda_init() != DDT_SUCCESS) {
    int n = 0;
    const cudaError_t e = cudaGetDeviceCount(&n);
    std::fprintf(out, "{\"absent\":\"no usable CUDA device on this machine (cudaGetDeviceCount: %s)\"}\n", cudaGetErrorString(e));
    std::printf("gpu_bench: no usable CUDA device (%s); %s says so\n", cudaGetErrorString(e), path.c_str());
    std::fclose(out);
    if (sv[0] >= 0) close(sv[0]);
    if (child > 0) waitpid(child, nullptr, 0);
    return 0;
  }
  cudaDeviceProp prop{};
  int dev = 0;
  CK(cudaGetDevice(&dev));
  CK(cudaGetDeviceProperties(&prop, dev));
  std::fprintf(out, "{\"suite\":\"device\",\"name\":\"%s\",\"sm\":%d}\n", prop.name, prop.major * 10 + prop.minor);
  CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  {  // the peer engine, where it was built
    std::string why, where;
    if (yk::load(&why, &where))
      std::fprintf(out, "{\"suite\":\"yaksa\",\"path\":\"%s\"}\n", where.c_str());
    else
      std::fprintf(out, "{\"suite\":\"yaksa\",\"absent\":\"%s\"}\n", json_safe(why).c_str());
    std::printf("gpu_bench: Yaksa %s\n", yk::loaded() ? where.c_str() : why.c_str());
  }
  {  // a GPU that idled runs at a low clock for the first milliseconds: 20 ms of copies first
    char *a, *b;
    CK(cudaMalloc(&a, 64 << 20));
    CK(cudaMalloc(&b, 64 << 20));
    for (int i = 0; i < 400; ++i) CK(cudaMemcpyAsync(b, a, 64 << 20, cudaMemcpyDeviceToDevice, st));
    CK(cudaStreamSynchronize(st));
    cudaFree(a);
    cudaFree(b);
  }
  std::printf("gpu_bench on %s: vector sweep\n", prop.name);
  vector_sweep();
  std::printf("gpu_bench: indexed_block and subarray, index list, DDTBench kernels, launch floor\n");
  layouts_sweep();
  index_list();
  ddtbench();
  launch_floor();
  host_overhead();
  std::printf("gpu_bench: zero copy between two processes\n");
  if (child > 0) {
    ipc(sv[0]);
    const char done = 1;
    if (write(sv[0], &done, 1) < 0) std::perror("gpu_bench: ipc");
    close(sv[0]);
    waitpid(child, nullptr, 0);
  }
  std::fclose(out);
  std::printf("gpu_bench: %s\n", path.c_str());
  return 0;
}
