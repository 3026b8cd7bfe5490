// The GPU layer on a GPU: the random campaign of the CPU engine (tests/random) with device
// buffers, every byte compared with the CPU executors; every memory-kind combination through
// ddt_pack / ddt_unpack / ddt_copy; the DDTBench kernels; bad input. Exits 77 (ctest: skipped)
// with the reason printed where no CUDA device is usable.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "cuda/memory.hpp"
#include "plan/plan.hpp"
#include "ddtbench.hpp"
#include "ddtkit_cuda.h"
#include "gen.hpp"

namespace {

int failures = 0;

#define CK(x)                                                                                        \
  do {                                                                                               \
    const cudaError_t e_ = (x);                                                                      \
    if (e_ != cudaSuccess) {                                                                         \
      std::fprintf(stderr, "CUDA error %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__); \
      std::exit(2);                                                                                  \
    }                                                                                                \
  } while (0)

bool check(bool ok, const char* what, const char* detail, uint64_t seed) {
  if (!ok && ++failures <= 20) std::fprintf(stderr, "FAIL %s (seed %llu): %s\n", what, (unsigned long long)seed, detail);
  return ok;
}

// Why a comparison failed: the call's result, how many bytes differ and the first of them, and the
// path the layer took (the plan's shape), so that a failure on a GPU explains itself in one run.
std::string why(int e, const std::vector<char>& got, const char* want, int64_t n, ddt_type t) {
  int64_t bad = 0, first = -1;
  for (int64_t i = 0; i < n && i < static_cast<int64_t>(got.size()); ++i)
    if (got[i] != want[i] && bad++ == 0) first = i;
  char b[256];
  std::snprintf(b, sizeof b, " [error %d; %lld of %lld bytes differ, first at %lld (got %d, want %d); plan shape %d]", e,
                (long long)bad, (long long)n, (long long)first, first >= 0 ? got[first] : 0, first >= 0 ? want[first] : 0,
                static_cast<int>(ddt::plan_of(t).shape));
  return b;
}

enum Kind { Pageable, Pinned, Device, Managed };
const char* kKindName[] = {"pageable", "pinned", "device", "managed"};

// n bytes of memory of one kind, filled from and read back into host images.
struct Mem {
  Kind kind;
  char* p = nullptr;
  int64_t n;
  std::vector<char> pageable;
  Mem(Kind k, int64_t bytes) : kind(k), n(std::max<int64_t>(bytes, 1)) {
    if (k == Pageable) pageable.resize(n), p = pageable.data();
    if (k == Pinned) CK(cudaMallocHost(&p, n));
    if (k == Device) CK(cudaMalloc(&p, n));
    if (k == Managed) CK(cudaMallocManaged(&p, n));
  }
  ~Mem() {
    if (kind == Pinned) cudaFreeHost(p);
    if (kind == Device || kind == Managed) cudaFree(p);
  }
  // A copy from pageable memory may return before it reaches the device: wait, since the work
  // that reads it runs on another (non-blocking) stream.
  void put(const char* host, int64_t bytes) {
    CK(cudaMemcpy(p, host, bytes, cudaMemcpyDefault));
    CK(cudaDeviceSynchronize());
  }
  std::vector<char> get(int64_t bytes) {
    std::vector<char> h(bytes);
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(h.data(), p, bytes, cudaMemcpyDefault));
    return h;
  }
};

// A host image of what count elements of a type touch, with margins; `origin` is the type's
// address in it.
struct Image {
  std::vector<char> mem;
  int64_t origin;
  Image(const RefType& r, int64_t count, std::mt19937_64* rng, int64_t shift) {
    int64_t lo, hi;
    ref_span(r, count, lo, hi);
    mem.resize(hi - lo + 160);
    origin = 64 - lo + shift;  // device allocations are 256-byte aligned: shift sets the alignment
    for (auto& c : mem) c = rng ? static_cast<char>((*rng)()) : char(0x5a);
  }
};

void campaign_type(std::mt19937_64& rng, uint64_t seed, cudaStream_t st, bool kinds) {
  GenOptions opt;
  RefType ref;
  TPtr t = random_type(rng, opt, ref);
  int err;
  ddt_type ty = build_ddt(*t, &err);
  if (!ty) return;
  ddt_type_commit(ty);
  const std::string what = describe(*t);
  const int64_t count = rng() % 4, total = count * ref.size;
  const int64_t shift = rng() % 3 == 0 ? rng() % 16 : 0;
  Image src(ref, count, &rng, shift);
  std::vector<char> want(total + 1);
  int64_t n = 0;
  ddt_pack(src.mem.data() + src.origin, count, ty, 0, want.data(), total, &n);
  Mem dsrc(Device, src.mem.size()), dpk(Device, total + 16);
  dsrc.put(src.mem.data(), src.mem.size());
  // Full pack, then random ranges at random byte offsets, on the stream.
  int e = ddt_cuda_pack_async(dsrc.p + src.origin, count, ty, 0, dpk.p, total, &n, st);
  {
    const auto got = dpk.get(total);
    const bool ok = e == DDT_SUCCESS && n == total && got == std::vector<char>(want.begin(), want.begin() + total);
    check(ok, "pack", ok ? "" : (what + why(e, got, want.data(), total, ty)).c_str(), seed);
  }
  for (int k = 0; k < 3 && total > 0; ++k) {
    const int64_t lo = rng() % total, hi = lo + 1 + rng() % (total - lo), at = rng() % 16;
    e = ddt_cuda_pack_async(dsrc.p + src.origin, count, ty, lo, dpk.p + at, hi - lo, &n, st);
    const auto got = dpk.get(at + hi - lo);
    const bool ok = e == DDT_SUCCESS && n == hi - lo && std::equal(got.begin() + at, got.end(), want.begin() + lo);
    const std::vector<char> part(got.begin() + at, got.end());
    check(ok, "partial pack", ok ? "" : (what + " [" + std::to_string(lo) + ", " + std::to_string(hi) + ") at +" + std::to_string(at) +
                                         why(e, part, want.data() + lo, hi - lo, ty)).c_str(), seed);
  }
  // The DMA engine forced (ddt_cuda_set_executor): where the layout is rows it moves them, with
  // cudaMemcpy2DAsync; device to device on the stream, and device to pageable host memory.
  if (total > 0 && seed % 10 == 0) {
    ddt_cuda_set_executor(DDT_CUDA_DMA);
    e = ddt_cuda_pack_async(dsrc.p + src.origin, count, ty, 0, dpk.p, total, &n, st);
    check(e == DDT_SUCCESS && dpk.get(total) == std::vector<char>(want.begin(), want.begin() + total), "dma pack", what.c_str(), seed);
    std::vector<char> host(total);
    e = ddt_pack(dsrc.p + src.origin, count, ty, 0, host.data(), total, &n);
    check(e == DDT_SUCCESS && std::equal(host.begin(), host.end(), want.begin()), "dma pack to pageable", what.c_str(), seed);
    ddt_cuda_set_executor(DDT_CUDA_AUTO);
  }
  // Unpack, full and partial, where the typemap does not overlap (a GPU moves units in no order).
  if (total > 0 && !ref_overlaps(ref, count)) {
    std::vector<char> stream(total);
    for (auto& c : stream) c = static_cast<char>(rng());
    Image dst(ref, count, nullptr, shift);
    std::vector<char> cpu = dst.mem;
    ddt_unpack(stream.data(), total, cpu.data() + dst.origin, count, ty, 0, &n);
    Mem ddst(Device, dst.mem.size()), din(Device, total);
    ddst.put(dst.mem.data(), dst.mem.size());
    din.put(stream.data(), total);
    e = ddt_cuda_unpack_async(din.p, total, ddst.p + dst.origin, count, ty, 0, &n, st);
    {
      const auto got = ddst.get(dst.mem.size());
      check(e == DDT_SUCCESS && got == cpu, "unpack", (what + why(e, got, cpu.data(), cpu.size(), ty)).c_str(), seed);
    }
    const int64_t lo = rng() % total, hi = lo + 1 + rng() % (total - lo);
    cpu = dst.mem;
    ddt_unpack(stream.data() + lo, hi - lo, cpu.data() + dst.origin, count, ty, lo, &n);
    ddst.put(dst.mem.data(), dst.mem.size());
    e = ddt_cuda_unpack_async(din.p + lo, hi - lo, ddst.p + dst.origin, count, ty, lo, &n, st);
    check(e == DDT_SUCCESS && ddst.get(dst.mem.size()) == cpu, "partial unpack", what.c_str(), seed);
  }
  // Copy into a second random type of the same packed size.
  if (total > 0) {
    RefType ref2;
    int64_t c2 = 0;
    TPtr t2 = random_type_packing(rng, opt, total, 6, true, ref2, &c2);
    if (c2) {
      ddt_type ty2 = build_ddt(*t2, &err);
      ddt_type_commit(ty2);
      Image dst(ref2, c2, nullptr, rng() % 16);
      std::vector<char> cpu = dst.mem;
      ddt_copy(src.mem.data() + src.origin, count, ty, cpu.data() + dst.origin, c2, ty2);
      Mem ddst(Device, dst.mem.size());
      ddst.put(dst.mem.data(), dst.mem.size());
      e = ddt_cuda_copy_async(dsrc.p + src.origin, count, ty, ddst.p + dst.origin, c2, ty2, st);
      {
        const auto got = ddst.get(dst.mem.size());
        check(e == DDT_SUCCESS && got == cpu, "copy",
              (what + " -> " + describe(*t2) + why(e, got, cpu.data(), cpu.size(), ty2)).c_str(), seed);
      }
      // Every memory kind on both sides, through the synchronous calls.
      for (int a = 0; kinds && a < 4; ++a)
        for (int b = 0; b < 4; ++b) {
          Mem ms(Kind(a), src.mem.size()), md(Kind(b), dst.mem.size());
          ms.put(src.mem.data(), src.mem.size());
          md.put(dst.mem.data(), dst.mem.size());
          e = ddt_copy(ms.p + src.origin, count, ty, md.p + dst.origin, c2, ty2);
          std::string where = std::string("ddt_copy ") + kKindName[a] + " -> " + kKindName[b] + ": " + what;
          check(e == DDT_SUCCESS && md.get(dst.mem.size()) == cpu, "memory kinds", where.c_str(), seed);
        }
      ddt_type_free(&ty2);
    }
  }
  // Pack and unpack with every memory kind on both sides, through ddt_pack / ddt_unpack.
  for (int a = 0; kinds && total > 0 && a < 4; ++a)
    for (int b = 0; b < 4; ++b) {
      Mem ms(Kind(a), src.mem.size()), mp(Kind(b), total);
      ms.put(src.mem.data(), src.mem.size());
      e = ddt_pack(ms.p + src.origin, count, ty, 0, mp.p, total, &n);
      std::string where = std::string("ddt_pack ") + kKindName[a] + " -> " + kKindName[b] + ": " + what;
      check(e == DDT_SUCCESS && mp.get(total) == std::vector<char>(want.begin(), want.begin() + total), "memory kinds", where.c_str(), seed);
      if (ref_overlaps(ref, count)) continue;
      Image dst(ref, count, nullptr, shift);
      std::vector<char> cpu = dst.mem;
      ddt_unpack(want.data(), total, cpu.data() + dst.origin, count, ty, 0, &n);
      Mem md(Kind(a), dst.mem.size());
      md.put(dst.mem.data(), dst.mem.size());
      e = ddt_unpack(mp.p, total, md.p + dst.origin, count, ty, 0, &n);
      where = std::string("ddt_unpack ") + kKindName[b] + " -> " + kKindName[a] + ": " + what;
      check(e == DDT_SUCCESS && md.get(dst.mem.size()) == cpu, "memory kinds", where.c_str(), seed);
    }
  ddt_type_free(&ty);
}

// The DDTBench kernels whose type addresses one array relative to its buffer: that array on the
// device, packed there and compared with the CPU's bytes (and unpacked back). Kernels with
// absolute addresses (MPI_BOTTOM over several host arrays) name host memory by construction.
void ddtbench(cudaStream_t st) {
  int ran = 0, skipped = 0;
  for (auto& k : ddtbench_kernels(false)) {
    if (!k->buf || k->arrays.size() != 1) {
      ++skipped;
      continue;
    }
    const int64_t bytes = k->array_bytes[0], off = static_cast<const char*>(k->buf) - k->arrays[0].get();
    std::vector<char> want(k->bytes);
    int64_t n;
    ddt_pack(k->buf, k->count, k->type, 0, want.data(), k->bytes, &n);
    Mem arr(Device, bytes), pk(Device, k->bytes);
    arr.put(k->arrays[0].get(), bytes);
    int e = ddt_cuda_pack_async(arr.p + off, k->count, k->type, 0, pk.p, k->bytes, &n, st);
    const std::string name = k->name + " " + k->params;
    check(e == DDT_SUCCESS && pk.get(k->bytes) == want, "ddtbench pack", name.c_str(), 0);
    CK(cudaMemset(arr.p, 0, bytes));
    CK(cudaDeviceSynchronize());  // cudaMemset of device memory may return before it is done
    std::vector<char> cpu(bytes, 0);
    ddt_unpack(want.data(), k->bytes, cpu.data() + off, k->count, k->type, 0, &n);
    e = ddt_cuda_unpack_async(pk.p, k->bytes, arr.p + off, k->count, k->type, 0, &n, st);
    check(e == DDT_SUCCESS && arr.get(bytes) == cpu, "ddtbench unpack", name.c_str(), 0);
    ++ran;
  }
  std::printf("gpu_test: %d DDTBench kernels on the device, %d left out (absolute addresses of host arrays)\n", ran, skipped);
}

// What the driver says of each kind of memory (src/cuda/memory.cpp's where(), on which every
// routing decision rests), printed, and checked against what each allocation is.
void memory_kinds() {
  using ddt::gpu::Mem;
  struct Case {
    const char* name;
    void* p;
    Mem want;
  };
  const size_t n = 1 << 20;
  std::vector<char> pageable(n);
  void *dev, *pinned, *managed, *pooled, *freed;
  std::vector<char> registered(n);
  CK(cudaMalloc(&dev, n));
  CK(cudaMallocHost(&pinned, n));
  CK(cudaMallocManaged(&managed, n));
  CK(cudaMallocAsync(&pooled, n, 0));
  CK(cudaStreamSynchronize(0));
  CK(cudaHostRegister(registered.data(), n, cudaHostRegisterDefault));
  CK(cudaMalloc(&freed, n));
  CK(cudaFree(freed));
  const Case cases[] = {{"malloc", pageable.data(), Mem::Host},      {"cudaMalloc", dev, Mem::Device},
                        {"cudaMallocHost", pinned, Mem::Pinned},     {"cudaHostRegister", registered.data(), Mem::Pinned},
                        {"cudaMallocManaged", managed, Mem::Managed}, {"cudaMallocAsync", pooled, Mem::Device},
                        {"freed cudaMalloc", freed, Mem::Host}};
  const char* names[] = {"host", "pinned", "device", "managed"};
  for (const Case& c : cases) {
    ddt::gpu::Where w;
    const bool asked = ddt::gpu::where(c.p, &w);
    std::printf("gpu_test: where(%s) = %s, device %d, range %s+%llu\n", c.name, names[static_cast<int>(w.kind)], w.device,
                w.base == reinterpret_cast<uintptr_t>(c.p) ? "base" : w.base ? "other" : "none", (unsigned long long)w.size);
    check(asked && w.kind == c.want, "memory kinds", c.name, 0);
  }
  CK(cudaHostUnregister(registered.data()));
  cudaFree(dev), cudaFreeHost(pinned), cudaFree(managed), cudaFreeAsync(pooled, 0);
  CK(cudaStreamSynchronize(0));
}

// Bad input: an error code, nothing written, and the context still usable afterwards.
void bad_input(cudaStream_t st) {
  ddt_type v;
  ddt_type_vector(64, 1, 2, DDT_INT, &v);
  ddt_type_commit(v);
  const int64_t bytes = 64 * 4, span = 127 * 4;
  Mem dev(Device, span), pk(Device, bytes);
  std::vector<char> host(span);
  int64_t n = -1;
  check(ddt_cuda_pack_async(host.data(), 1, v, 0, pk.p, bytes, &n, st) == DDT_ERR_ARG && n == -1, "bad input",
        "pageable typed buffer to the async pack", 0);
  check(ddt_cuda_pack_async(dev.p, 1, v, 0, host.data(), bytes, &n, st) == DDT_ERR_ARG, "bad input",
        "pageable packed buffer to the async pack", 0);
  check(ddt_cuda_pack_async(dev.p, 2, v, 0, pk.p, 2 * bytes, &n, st) == DDT_ERR_ARG, "bad input",
        "typed range beyond the device allocation", 0);
  check(ddt_cuda_pack_async(dev.p, 1, v, 0, pk.p + 8, bytes, &n, st) == DDT_ERR_ARG, "bad input",
        "packed range beyond the device allocation", 0);
  char* freed;
  CK(cudaMalloc(&freed, span));
  CK(cudaFree(freed));
  check(ddt_cuda_pack_async(freed, 1, v, 0, pk.p, bytes, &n, st) == DDT_ERR_ARG, "bad input", "freed device buffer", 0);
  check(ddt_cuda_unpack_async(pk.p, bytes, freed, 1, v, 0, &n, st) == DDT_ERR_ARG, "bad input", "freed device buffer (unpack)", 0);
  check(ddt_cuda_copy_async(dev.p, 1, v, freed, 1, v, st) == DDT_ERR_ARG, "bad input", "freed device buffer (copy)", 0);
  check(ddt_cuda_pack_async(dev.p, 1, v, 0, pk.p, bytes, nullptr, st) == DDT_ERR_ARG, "bad input", "null packed", 0);
  ddt_type u;
  ddt_type_contiguous(4, DDT_INT, &u);
  check(ddt_cuda_pack_async(dev.p, 1, u, 0, pk.p, 16, &n, st) == DDT_ERR_NOT_COMMITTED, "bad input", "uncommitted type", 0);
  ddt_type_free(&u);
  // The device still works.
  std::vector<char> want(bytes), src(span);
  for (int64_t i = 0; i < span; ++i) src[i] = char(i * 7);
  dev.put(src.data(), span);
  ddt_pack(src.data(), 1, v, 0, want.data(), bytes, &n);
  check(ddt_cuda_pack_async(dev.p, 1, v, 0, pk.p, bytes, &n, st) == DDT_SUCCESS && pk.get(bytes) == want, "bad input",
        "a good call after the bad ones", 0);
  ddt_type_free(&v);
}

}  // namespace

int main(int argc, char** argv) {
  int64_t types = 5000;
  uint64_t seed = 1;
  campaign_args(argc, argv, &types, &seed);
  if (ddt_cuda_init() != DDT_SUCCESS) {
    int ndev = 0;
    const cudaError_t e = cudaGetDeviceCount(&ndev);
    std::printf("SKIPPED gpu_test: no usable CUDA device here (cudaGetDeviceCount: %s, %d devices); run make test-gpu on a GPU machine\n",
                cudaGetErrorString(e), ndev);
    return 77;
  }
  cudaDeviceProp prop{};
  int dev = 0;
  CK(cudaGetDevice(&dev));
  CK(cudaGetDeviceProperties(&prop, dev));
  std::printf("gpu_test on %s (sm_%d%d)\n", prop.name, prop.major, prop.minor);
  cudaStream_t st;
  CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  memory_kinds();
  bad_input(st);
  ddtbench(st);
  for (int64_t i = 0; i < types; ++i) {
    std::mt19937_64 rng(seed * 1000003 + i);
    campaign_type(rng, seed * 1000003 + i, st, i % 25 == 0);
  }
  CK(cudaStreamDestroy(st));
  std::printf("gpu_test: %lld random types on the device, %d failures\n", (long long)types, failures);
  return failures ? 1 : 0;
}
