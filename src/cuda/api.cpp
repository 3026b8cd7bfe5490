// The GPU layer's entry points: ddt_cuda_* (ddtkit_cuda.h) and the hook through which ddt_pack,
// ddt_unpack and ddt_copy hand calls with GPU buffers to it (cpu/device.hpp).
//
// What runs where (the GPU half of the plan, by memory kinds; memory.hpp names them):
//   * no buffer in device or managed memory: the CPU executors (pinned host memory is host
//     memory: the CPU reaches it at full speed, a kernel only over the bus);
//   * every buffer reachable by a kernel of the device: one kernel, which reads and writes pinned
//     host memory directly where a side is pinned (HAND's host bypass: no staging copy);
//   * the typed side on the GPU, the other side pageable host memory: the kernel packs into (or
//     unpacks from) a stream-ordered device buffer, and one cudaMemcpy moves it across;
//   * the typed side pageable host memory, the packed side on the GPU: the CPU packs into (or
//     unpacks from) a host buffer, and one cudaMemcpy moves it across.
// A type-to-type copy with one side pageable is a pack on one side and an unpack on the other,
// each by the rule above. Between these and the DMA engine (cudaMemcpy2DAsync for rows) the
// cost model below chooses, with the numbers an H100 measured.
#include <cuda_runtime_api.h>

#include <atomic>
#include <map>
#include <mutex>
#include <vector>

#include "cpu/arguments.hpp"
#include "cpu/device.hpp"
#include "cuda/gpu.hpp"
#include "cuda/kernels.hpp"
#include "cuda/layouts.hpp"
#include "cuda/memory.hpp"
#include "ddtkit_cuda.h"
#include "plan/plan.hpp"
#include "util/guarded.hpp"
#include "util/host_ranges.hpp"

namespace ddt::gpu {

int status(cudaError_t e) {
  if (e == cudaSuccess) return DDT_SUCCESS;
  cudaGetLastError();  // a non-sticky error must not fail the caller's next CUDA call
  return e == cudaErrorMemoryAllocation ? DDT_ERR_NO_MEM : DDT_ERR_DEVICE;
}

namespace {

uint64_t addr(const void* p) { return reinterpret_cast<uintptr_t>(p); }

std::atomic<int> executor{DDT_CUDA_AUTO};  // ddt_cuda_set_executor's; the cost model below reads it

// The locator and grain bits of (count elements of) t on `device` (units.hpp's side_of); a
// layout that is not a nest (a tree or a list) is uploaded there (layouts.hpp).
struct Prepared {
  Side side;
  Bits bits;
  void* temporary = nullptr;
};

cudaError_t prepare(ddt_type t, int64_t count, int device, cudaStream_t stream, Prepared* p) {
  const bool general = executor.load(std::memory_order_relaxed) == DDT_CUDA_GENERAL;
  p->bits = side_of(t, count, &p->side, general);  // (uploaded layouts add their layout_bits below)
  if (p->side.kind == Loc::Nest) return cudaSuccess;
  Upload u;
  if (p->side.kind == Loc::Tree && !general) {  // an element of blocks of one width: a flat list
    if (cudaError_t e = upload(t, device, Part::Flat, stream, &u)) return e;
    if (u.flat_width > 0) {
      flat_side(t, u.list32, u.list, u.flat_width, &p->side);
      p->bits |= u.grain_bits;
      p->temporary = u.temporary;
      return cudaSuccess;
    }
    if (u.temporary) cudaFreeAsync(u.temporary, stream);
  }
  if (cudaError_t e = upload(t, device, p->side.kind == Loc::List ? Part::List : Part::Tree, stream, &u)) return e;
  p->side.t.nodes = u.nodes, p->side.t.entries = u.entries, p->side.t.prefix = u.prefix, p->side.t.vec_div = u.vec_div;
  p->side.l.list = u.list, p->side.l.list32 = u.list32;
  p->bits |= u.grain_bits;
  p->temporary = u.temporary;
  return cudaSuccess;
}

}  // namespace

// ---- the cost model: kernels or the DMA engine ------------------------------------------------
// Measured on an NVIDIA H100 80GB HBM3 (issue 12's runs of bench/gpu_bench.cpp; payload of 64 MiB,
// a vector at stride twice the block, fractions of a device-to-device copy of the payload, all in
// one process): the kernels 0.96-1.00 from 128 B blocks and 0.61-0.69 below 64 B, against
// cudaMemcpy2DAsync's 0.03 at 4 B, 0.62 at 128 B and 0.80-0.85 at 256 B-1 KiB (0.59 from 4 KiB):
// between device buffers the kernels win at every block size, by 1.16x at least. Into pageable host
// memory (ddt_pack, host wall time) the kernels through a device temporary and one copy across
// took 0.04-0.5 of the DMA engine's time below 32 B blocks and 0.87-1.09 of it from 64 B (2 MiB
// and 64 MiB): the DMA engine is at most 9% faster there, about the run-to-run spread of that
// host-timed column, so AUTO runs the kernels everywhere and the DMA engine stays an explicit
// choice (DDT_CUDA_DMA).
// The rows of a call when the DMA engine is to move it (DDT_CUDA_DMA and a layout of rows).
bool dma_rows(ddt_type t, int64_t count, int64_t lo, int64_t n, Box* b) {
  return executor.load(std::memory_order_relaxed) == DDT_CUDA_DMA && box_of(plan_of(t), count, lo, n, b);
}

cudaError_t dma_move(bool gather, const Box& b, const void* typed, const void* packed, cudaStream_t stream) {
  char* rows = const_cast<char*>(static_cast<const char*>(typed)) + b.offset;
  char* seq = const_cast<char*>(static_cast<const char*>(packed));
  const size_t w = static_cast<size_t>(b.width), pitch = static_cast<size_t>(b.pitch), h = static_cast<size_t>(b.height);
  return gather ? cudaMemcpy2DAsync(seq, w, rows, pitch, w, h, cudaMemcpyDefault, stream)
                : cudaMemcpy2DAsync(rows, pitch, seq, w, w, h, cudaMemcpyDefault, stream);
}

// Stream bytes [lo, lo + n) between the typed buffer and packed, on the current device.
int move_on(int device, bool gather, const void* typed, int64_t count, ddt_type t, int64_t lo, int64_t n,
            const void* packed, cudaStream_t stream) {
  Box b;
  if (dma_rows(t, count, lo, n, &b)) return status(dma_move(gather, b, typed, packed, stream));
  Prepared p;
  if (cudaError_t e = prepare(t, count, device, stream, &p)) return status(e);
  // Units of g bytes (the stream's grain), moved in typed words of tg bytes (units.hpp's Bits).
  const int64_t g = grain_of(p.bits.stream | addr(packed) | static_cast<uint64_t>(lo) | static_cast<uint64_t>(n));
  const int64_t tg = std::min(g, grain_of(p.bits.typed | addr(typed)));
  const cudaError_t e = launch_move(gather, p.side, const_cast<char*>(static_cast<const char*>(typed)),
                                    const_cast<char*>(static_cast<const char*>(packed)), lo, n, g, tg, stream);
  if (p.temporary) cudaFreeAsync(p.temporary, stream);
  return status(e);
}

int copy_on(int device, const void* src, int64_t scount, ddt_type st, void* dst, int64_t dcount, ddt_type dt,
            int64_t n, cudaStream_t stream) {
  Prepared ps, pd;
  if (cudaError_t e = prepare(st, scount, device, stream, &ps)) return status(e);
  cudaError_t e = prepare(dt, dcount, device, stream, &pd);
  if (e == cudaSuccess) {
    const int64_t g = grain_of(ps.bits.all() | pd.bits.all() | addr(src) | addr(dst) | static_cast<uint64_t>(n));
    e = launch_copy(ps.side, static_cast<const char*>(src), pd.side, static_cast<char*>(dst), n / g, g, stream);
  }
  if (ps.temporary) cudaFreeAsync(ps.temporary, stream);
  if (pd.temporary) cudaFreeAsync(pd.temporary, stream);
  return status(e);
}

namespace {

// The bytes count elements of t at buf touch (cpu/arguments.hpp's typed_span): none (any false)
// without a type, elements or bytes.
struct Span {
  bool any = false, wraps = false;
  uint64_t lo = 0, len = 0;
};
Span span_of(const void* buf, int64_t count, ddt_type t) {
  Span s;
  if (!t || count <= 0 || t->size == 0) return s;
  s.any = true;
  typed_span(buf, count, t, &s.lo, &s.len, &s.wraps);
  return s;
}

}  // namespace

// The bytes a call may touch lie inside the allocations the driver knows of.
bool typed_inside(const Where& w, const void* buf, int64_t count, ddt_type t) {
  const Span s = span_of(buf, count, t);
  return !s.any || (!s.wraps && inside(w, s.lo, s.len));
}

bool plain_host(uintptr_t lo, uint64_t len) { return in_heap(lo, len) || host_range_holds(lo, len); }

bool typed_plain_host(const void* buf, int64_t count, ddt_type t) {
  const Span s = span_of(buf, count, t);
  return s.any && !s.wraps && plain_host(s.lo, s.len);
}

bool where_typed(const void* buf, int64_t count, ddt_type t, Where* w) {
  const Span s = span_of(buf, count, t);
  return where(s.any ? reinterpret_cast<const void*>(static_cast<uintptr_t>(s.lo)) : buf, w);
}

namespace {

// The device a synchronous call runs on: that of its device buffer (DDT_ERR_ARG for two on
// different devices), else the current one.
int pick_device(const Where& a, const Where& b, int* device) {
  if (a.kind == Mem::Device && b.kind == Mem::Device && a.device != b.device) return DDT_ERR_ARG;
  if (a.kind == Mem::Device) return *device = a.device, DDT_SUCCESS;
  if (b.kind == Mem::Device) return *device = b.device, DDT_SUCCESS;
  return status(cudaGetDevice(device));
}

// Synchronous calls run on the legacy default stream: after the work the caller queued on its
// blocking streams, as a blocking MPI call would see the data.
const cudaStream_t kSync = cudaStreamLegacy;

int finish(int r) {
  if (r != DDT_SUCCESS) return r;
  return status(cudaStreamSynchronize(kSync));
}

// A stream-ordered device buffer of n bytes, freed on the stream when it goes.
// The layer's own stream-ordered pool on a device: the synchronous calls' temporaries are reused
// from one call to the next (the default pool's release threshold of 0 gives its memory back at
// every synchronisation, and a 64 MiB temporary would be mapped again per call), and the
// application's default pool keeps its own settings. Up to kPoolKeep bytes stay reserved.
constexpr uint64_t kPoolKeep = uint64_t{256} << 20;

cudaMemPool_t pool_of(int device) {
  static std::mutex mu;
  static std::map<int, cudaMemPool_t> pools;
  std::lock_guard<std::mutex> lock(mu);
  auto it = pools.find(device);
  if (it != pools.end()) return it->second;
  cudaMemPoolProps props{};
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = device;
  cudaMemPool_t pool = nullptr;
  if (cudaMemPoolCreate(&pool, &props) != cudaSuccess) {
    cudaGetLastError();
    pool = nullptr;  // the default pool then (cudaMallocAsync)
  } else {
    uint64_t keep = kPoolKeep;
    cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep);
  }
  pools[device] = pool;
  return pool;
}

struct DeviceTemp {
  void* p = nullptr;
  cudaError_t e;
  DeviceTemp(int64_t n, int device) {
    const cudaMemPool_t pool = pool_of(device);
    e = pool ? cudaMallocFromPoolAsync(&p, static_cast<size_t>(n), pool, kSync)
             : cudaMallocAsync(&p, static_cast<size_t>(n), kSync);
  }
  ~DeviceTemp() {
    if (p) cudaFreeAsync(p, kSync);
  }
};

// Moves n packed bytes between the typed buffer (a) and the packed one (b), synchronously, by the
// rules at the top of this file.
int move_sync(bool gather, const void* typed, int64_t count, ddt_type t, int64_t lo, int64_t n, void* packed) {
  if (typed_plain_host(typed, count, t) && plain_host(addr(packed), static_cast<uint64_t>(n))) return kNotMine;  // host memory
  Where a, b;
  if (!where_typed(typed, count, t, &a) || !where(packed, &b)) return kNotMine;
  if (!on_device(a) && !on_device(b)) return kNotMine;
  if (!typed_inside(a, typed, count, t) || !inside(b, addr(packed), static_cast<uint64_t>(n))) return DDT_ERR_ARG;
  int device;
  if (int e = pick_device(a, b, &device)) return e;
  return on(device, [&] {
    Box rows;
    if (dma_rows(t, count, lo, n, &rows))  // the DMA engine reaches every kind of memory itself
      return finish(status(dma_move(gather, rows, typed, packed, kSync)));
    if (reachable(a, device) && reachable(b, device))
      return finish(move_on(device, gather, typed, count, t, lo, n, packed, kSync));
    if (reachable(a, device)) {  // the packed side is pageable: through a device buffer
      DeviceTemp tmp(n, device);
      if (tmp.e) return status(tmp.e);
      if (!gather) {
        if (cudaError_t e = cudaMemcpyAsync(tmp.p, packed, n, cudaMemcpyHostToDevice, kSync)) return status(e);
      }
      if (int r = move_on(device, gather, typed, count, t, lo, n, tmp.p, kSync)) return r;
      if (gather) {
        if (cudaError_t e = cudaMemcpyAsync(packed, tmp.p, n, cudaMemcpyDeviceToHost, kSync)) return status(e);
      }
      return finish(DDT_SUCCESS);
    }
    // The typed side is pageable host memory: the CPU moves it, through a host buffer.
    std::vector<char> host(static_cast<size_t>(n));
    int64_t done = 0;
    if (gather) {
      if (int r = ddt_pack(typed, count, t, lo, host.data(), n, &done)) return r;
      // From pageable memory the copy returns once staged: the bytes are on the device after the
      // stream's work is.
      return finish(status(cudaMemcpy(packed, host.data(), n, cudaMemcpyHostToDevice)));
    }
    if (cudaError_t e = cudaMemcpy(host.data(), packed, n, cudaMemcpyDeviceToHost)) return status(e);
    return ddt_unpack(host.data(), n, const_cast<void*>(typed), count, t, lo, &done);
  });
}

int hook_pack(const void* in, int64_t incount, ddt_type t, int64_t offset, void* out, int64_t n) {
  return move_sync(true, in, incount, t, offset, n, out);
}
int hook_unpack(const void* in, int64_t n, void* out, int64_t outcount, ddt_type t, int64_t offset) {
  return move_sync(false, out, outcount, t, offset, n, const_cast<void*>(in));
}
int hook_copy(const void* src, int64_t scount, ddt_type st, void* dst, int64_t dcount, ddt_type dt, int64_t n) {
  if (typed_plain_host(src, scount, st) && typed_plain_host(dst, dcount, dt)) return kNotMine;  // host memory
  Where a, b;
  if (!where_typed(src, scount, st, &a) || !where_typed(dst, dcount, dt, &b)) return kNotMine;
  if (!on_device(a) && !on_device(b)) return kNotMine;
  if (!typed_inside(a, src, scount, st) || !typed_inside(b, dst, dcount, dt)) return DDT_ERR_ARG;
  int device;
  if (int e = pick_device(a, b, &device)) return e;
  return on(device, [&] {
    if (reachable(a, device) && reachable(b, device))
      return finish(copy_on(device, src, scount, st, dst, dcount, dt, n, kSync));
    // One side pageable: a pack into a device buffer and an unpack from it, each by move_sync's
    // rules (the pageable side's half runs on the CPU).
    DeviceTemp tmp(n, device);
    if (tmp.e) return status(tmp.e);
    if (int r = move_sync(true, src, scount, st, 0, n, tmp.p)) return r;
    return move_sync(false, dst, dcount, dt, 0, n, tmp.p);
  });
}

bool hook_on_device(const void* p, int64_t count, ddt_type t) {
  if (typed_plain_host(p, count, t)) return false;
  Where w;
  return where_typed(p, count, t, &w) && on_device(w);
}

const DeviceHook kHook{&hook_pack, &hook_unpack, &hook_copy, &hook_on_device, &hook_ipc_export, &hook_ipc_copy};

}  // namespace

int init() {
  static const int r = [] {
    // The driver alone (memory.cpp): the CUDA runtime starts with the first device buffer moved.
    if (driver_devices() <= 0) return static_cast<int>(DDT_ERR_DEVICE);
    int n = 0;
    Where w;
    if (!where(&n, &w)) return static_cast<int>(DDT_ERR_DEVICE);
    device_hook.store(&kHook, std::memory_order_release);
    return static_cast<int>(DDT_SUCCESS);
  }();
  return r;
}

int stream_device(cudaStream_t stream, int* device) {
  // The special streams (legacy, per-thread) belong to the current device; a created stream
  // names its own (cudaStreamGetDevice), where the work must be launched.
#if CUDART_VERSION >= 12080  // cudaStreamGetDevice arrived in CUDA 12.8
  if (stream != nullptr && stream != cudaStreamLegacy && stream != cudaStreamPerThread &&
      cudaStreamGetDevice(stream, device) == cudaSuccess)
    return DDT_SUCCESS;
#endif
  cudaGetLastError();
  return status(cudaGetDevice(device));
}

namespace {

// The async forms' memory rule: every buffer reachable by a kernel of the stream's device, and
// every range inside its allocation.
int async_device(const void* typed, int64_t count, ddt_type t, const void* packed, int64_t n, cudaStream_t stream,
                 int* device) {
  if (int e = init()) return e;
  if (int e = stream_device(stream, device)) return e;
  Where a, b;
  if (!where_typed(typed, count, t, &a) || !where(packed, &b)) return DDT_ERR_DEVICE;
  if (!reachable(a, *device) || !reachable(b, *device)) return DDT_ERR_ARG;
  if (!typed_inside(a, typed, count, t) || !inside(b, addr(packed), static_cast<uint64_t>(n))) return DDT_ERR_ARG;
  return DDT_SUCCESS;
}

}  // namespace

}  // namespace ddt::gpu

extern "C" {

int ddt_cuda_init(void) { return ddt::gpu::init(); }

int ddt_cuda_set_executor(int which) {
  if (which != DDT_CUDA_AUTO && which != DDT_CUDA_KERNELS && which != DDT_CUDA_DMA && which != DDT_CUDA_GENERAL)
    return DDT_ERR_ARG;
  ddt::gpu::executor.store(which, std::memory_order_relaxed);
  return DDT_SUCCESS;
}

int ddt_cuda_pack_async(const void* inbuf, int64_t incount, ddt_type type, int64_t offset, void* outbuf,
                        int64_t outsize, int64_t* packed, cudaStream_t stream) {
  int64_t n;
  if (int e = ddt::pack_args(inbuf, incount, type, offset, outbuf, outsize, packed, &n)) return e;
  if (int e = ddt::gpu::init()) return e;
  if (n > 0) {
    int device;
    if (int e = ddt::gpu::async_device(inbuf, incount, type, outbuf, n, stream, &device)) return e;
    if (int e = ddt::gpu::on(device, [&] { return ddt::gpu::move_on(device, true, inbuf, incount, type, offset, n, outbuf, stream); }))
      return e;
  }
  *packed = n;
  return DDT_SUCCESS;
}

int ddt_cuda_unpack_async(const void* inbuf, int64_t insize, void* outbuf, int64_t outcount, ddt_type type,
                          int64_t offset, int64_t* unpacked, cudaStream_t stream) {
  if (int e = ddt::unpack_args(inbuf, insize, outbuf, outcount, type, offset, unpacked)) return e;
  if (int e = ddt::gpu::init()) return e;
  if (insize > 0) {
    int device;
    if (int e = ddt::gpu::async_device(outbuf, outcount, type, inbuf, insize, stream, &device)) return e;
    if (int e = ddt::gpu::on(device, [&] { return ddt::gpu::move_on(device, false, outbuf, outcount, type, offset, insize, inbuf, stream); }))
      return e;
  }
  *unpacked = insize;
  return DDT_SUCCESS;
}

int ddt_cuda_copy_async(const void* src, int64_t scount, ddt_type stype, void* dst, int64_t dcount, ddt_type dtype,
                        cudaStream_t stream) {
  int64_t n;
  if (int e = ddt::copy_args(src, scount, stype, dst, dcount, dtype, &n)) return e;
  if (int e = ddt::gpu::init()) return e;
  if (n == 0) return DDT_SUCCESS;
  int device;
  ddt::gpu::Where a, b;
  if (int e = ddt::gpu::stream_device(stream, &device)) return e;
  if (!ddt::gpu::where_typed(src, scount, stype, &a) || !ddt::gpu::where_typed(dst, dcount, dtype, &b)) return DDT_ERR_DEVICE;
  if (!ddt::gpu::reachable(a, device) || !ddt::gpu::reachable(b, device) ||
      !ddt::gpu::typed_inside(a, src, scount, stype) || !ddt::gpu::typed_inside(b, dst, dcount, dtype))
    return DDT_ERR_ARG;
  return ddt::gpu::on(device, [&] { return ddt::gpu::copy_on(device, src, scount, stype, dst, dcount, dtype, n, stream); });
}

}  // extern "C"
