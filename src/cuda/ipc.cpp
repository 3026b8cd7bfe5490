// Zero copy between processes on the GPU (FALCON-X's GPU half, seed 000 section 5): the importer
// maps the exporter's allocation with CUDA IPC and one copy kernel (kernels.cu, the same as
// ddt_cuda_copy_async's) reads the exporter's non-contiguous buffer through it and writes the
// importer's own layout. The exporter's layout arrives as ddt_type_serialize bytes, so the
// importer's copy is the type-to-type copy of two layouts, neither packed.
//
// Opened allocations are cached by handle bytes: opening costs a driver round trip and a
// mapping, and a transfer loop sends from the same buffers again and again. A new allocation has
// a new handle, so a stale entry is never used for one; entries are closed when the exporter says
// it frees the memory (ddt_cuda_ipc_close), and the oldest is closed beyond kMaxOpen.
#include <cuda_runtime_api.h>

#include <cstring>
#include <list>
#include <mutex>

#include "cpu/arguments.hpp"
#include "cpu/device.hpp"
#include "cuda/gpu.hpp"
#include "cuda/memory.hpp"
#include "ddtkit_cuda.h"
#include "util/guarded.hpp"

static_assert(sizeof(cudaIpcMemHandle_t) == sizeof(ddt_cuda_ipc::handle), "an IPC handle is 64 bytes");
static_assert(sizeof(ddt_cuda_ipc) == ddt::kIpcDesc, "the runtime carries a description in kIpcDesc bytes");

namespace ddt::gpu {

namespace {

constexpr size_t kMaxOpen = 64;

struct Opened {
  unsigned char handle[64];
  int device;
  char* base;
};

struct Imports {
  std::mutex mu;
  std::list<Opened> open;  // most recently used first
};

Imports& imports() {
  static Imports* x = new Imports;  // never destroyed: kernels may read mappings until exit
  return *x;
}

void close_one(const Opened& o) {
  int old = -1;
  cudaGetDevice(&old);
  if (old != o.device) cudaSetDevice(o.device);
  cudaDeviceSynchronize();  // a queued kernel may still read the mapping
  cudaIpcCloseMemHandle(o.base);
  if (old != o.device) cudaSetDevice(old);
  cudaGetLastError();
}

// Closes the entry of (handle, device), if open. The caller has waited for the work that used it.
void close_entry(const ddt_cuda_ipc& d, int device) {
  Imports& x = imports();
  std::lock_guard<std::mutex> lock(x.mu);
  for (auto it = x.open.begin(); it != x.open.end(); ++it)
    if (it->device == device && std::memcmp(it->handle, d.handle, 64) == 0) {
      cudaIpcCloseMemHandle(it->base);
      cudaGetLastError();
      x.open.erase(it);
      return;
    }
}

// The importer's address of the exporter's allocation, opened on `device` if not yet.
int open_base(const ddt_cuda_ipc& d, int device, char** base) {
  Imports& x = imports();
  std::lock_guard<std::mutex> lock(x.mu);
  for (auto it = x.open.begin(); it != x.open.end(); ++it)
    if (it->device == device && std::memcmp(it->handle, d.handle, 64) == 0) {
      x.open.splice(x.open.begin(), x.open, it);
      *base = it->base;
      return DDT_SUCCESS;
    }
  cudaIpcMemHandle_t h;
  std::memcpy(&h, d.handle, 64);
  void* p = nullptr;
  if (cudaIpcOpenMemHandle(&p, h, cudaIpcMemLazyEnablePeerAccess) != cudaSuccess) {
    cudaGetLastError();
    return DDT_ERR_ARG;  // not a handle of a live allocation (or not one this device can open)
  }
  Opened o;
  std::memcpy(o.handle, d.handle, 64);
  o.device = device;
  o.base = static_cast<char*>(p);
  x.open.push_front(o);
  if (x.open.size() > kMaxOpen) {
    close_one(x.open.back());
    x.open.pop_back();
  }
  *base = o.base;
  return DDT_SUCCESS;
}

}  // namespace

// The exporter's buffer in this process: its allocation opened on `device` (cached), and the
// span scount elements of st read there checked against the mapping, since the offset came from
// another process. kIpcUnopened where the allocation does not open here or cannot be used (no
// bounds to check against, not reachable from `device`), DDT_ERR_DEVICE where the driver cannot
// be asked, DDT_ERR_ARG for a span outside the allocation.
int map_source(const ddt_cuda_ipc& d, int device, int64_t scount, ddt_type st, const char** src) {
  char* base = nullptr;
  if (open_base(d, device, &base) != DDT_SUCCESS) return kIpcUnopened;
  Where a;
  if (!where(base, &a)) return DDT_ERR_DEVICE;
  if (a.size == 0 || !reachable(a, device)) return kIpcUnopened;
  // The offset may be negative or past the allocation (the exporter's buf need not lie inside
  // it, as MPI allows), so it is added modulo 2^64; what counts is that every byte the type
  // touches from there lies inside the mapping.
  *src = reinterpret_cast<const char*>(reinterpret_cast<uintptr_t>(base) + static_cast<uint64_t>(d.offset));
  return typed_inside(a, *src, scount, st) ? DDT_SUCCESS : DDT_ERR_ARG;
}

// The copy of ddt_cuda_ipc_copy_async on `device` (current), its arguments checked but the
// exporter's bytes.
int ipc_copy(const ddt_cuda_ipc& d, int64_t scount, ddt_type stype, void* dst, int64_t dcount, ddt_type dtype,
             int64_t n, int device, cudaStream_t stream) {
  const char* s = nullptr;
  if (int e = map_source(d, device, scount, stype, &s)) return e == kIpcUnopened ? DDT_ERR_ARG : e;
  Where b;
  if (!where_typed(dst, dcount, dtype, &b)) return DDT_ERR_DEVICE;
  if (!reachable(b, device) || !typed_inside(b, dst, dcount, dtype)) return DDT_ERR_ARG;
  return copy_on(device, s, scount, stype, dst, dcount, dtype, n, stream);
}

int hook_ipc_export(const void* buf, int64_t count, ddt_type t, void* desc) {
  Where w;
  if (!where_typed(buf, count, t, &w) || w.kind != Mem::Device) return DDT_ERR_ARG;
  // The receiver's kernel reads the buffer at once: the work the sender queued before its send
  // (on its blocking streams, which the legacy stream follows) must be done, as a staged send's
  // pack on the legacy stream would have waited for it.
  if (int e = on(w.device, [&] { return status(cudaStreamSynchronize(cudaStreamLegacy)); })) return e;
  return export_typed(buf, count, t, desc);
}

int export_typed(const void* buf, int64_t count, ddt_type t, void* desc) {
  if (!buf || !desc) return DDT_ERR_ARG;
  if (int e = init()) return e;
  Where w;
  if (!where_typed(buf, count, t, &w)) return DDT_ERR_DEVICE;
  if (w.kind != Mem::Device || w.size == 0 || (t && !typed_inside(w, buf, count, t))) return DDT_ERR_ARG;
  cudaIpcMemHandle_t h;
  if (cudaIpcGetMemHandle(&h, reinterpret_cast<void*>(w.base)) != cudaSuccess) {
    cudaGetLastError();
    return DDT_ERR_ARG;  // device memory IPC cannot export (a stream-ordered pool's, for one)
  }
  ddt_cuda_ipc* out = static_cast<ddt_cuda_ipc*>(desc);
  std::memcpy(out->handle, &h, 64);
  out->offset = static_cast<int64_t>(reinterpret_cast<uintptr_t>(buf) - w.base);  // modulo 2^64
  return DDT_SUCCESS;
}

// The runtime's receive of a device send: n stream bytes straight into dst by one kernel where a
// kernel reaches it; else (pageable memory, equal sizes) through ddt_copy from the mapping, which
// the GPU layer stages. Whatever fails before a byte is written answers kIpcUnopened, and the
// bytes come in cells; a span outside the sender's allocation is an error (the description came
// from another process). The mapping is closed again after the copy: the sender frees its
// buffer whenever its send has completed, and an allocation freed while an importer still has it
// open is undefined behaviour in CUDA.
int hook_ipc_copy(const void* desc, int64_t scount, ddt_type st, void* dst, int64_t dcount, ddt_type dt, int64_t n) {
  ddt_cuda_ipc d;
  std::memcpy(&d, desc, sizeof d);
  int64_t sn = 0, dn = 0;
  if (ddt::stream(st, scount, 0, &sn) || ddt::stream(dt, dcount, 0, &dn) || n <= 0 || n > sn || n > dn) return DDT_ERR_ARG;
  Where b;
  if (!where_typed(dst, dcount, dt, &b)) return kIpcUnopened;
  int device = b.kind == Mem::Device ? b.device : -1;
  if (device < 0 && status(cudaGetDevice(&device))) return kIpcUnopened;
  return on(device, [&]() -> int {
    struct Close {  // exactly the entry of this description, once the copy is done
      const ddt_cuda_ipc& d;
      int device;
      ~Close() { close_entry(d, device); }
    } close{d, device};
    const char* s = nullptr;
    if (int e = map_source(d, device, scount, st, &s)) return e == DDT_ERR_DEVICE ? kIpcUnopened : e;
    if (reachable(b, device)) {
      if (!typed_inside(b, dst, dcount, dt)) return DDT_ERR_ARG;
      if (int e = copy_on(device, s, scount, st, dst, dcount, dt, n, cudaStreamLegacy)) return e;
      return status(cudaStreamSynchronize(cudaStreamLegacy));
    }
    if (n != dn || n != sn) return kIpcUnopened;  // ddt_copy moves whole messages only
    return ddt_copy(s, scount, st, dst, dcount, dt);
  });
}

}  // namespace ddt::gpu

extern "C" {

int ddt_cuda_ipc_export(const void* buf, ddt_cuda_ipc* out) { return ddt::gpu::export_typed(buf, 0, DDT_TYPE_NULL, out); }

int ddt_cuda_ipc_export_type(const void* buf, int64_t count, ddt_type type, ddt_cuda_ipc* out) {
  if (int e = ddt::check_type(type)) return e;
  if (count < 0) return DDT_ERR_COUNT;
  return ddt::gpu::export_typed(buf, count, type, out);
}

int ddt_cuda_ipc_copy_async(const ddt_cuda_ipc* src, int64_t scount, ddt_type stype, void* dst, int64_t dcount,
                            ddt_type dtype, cudaStream_t stream) {
  if (!src) return DDT_ERR_ARG;
  // The exporter's buffer is checked below, against the mapped allocation.
  int64_t n, dtotal;
  if (int e = ddt::stream(stype, scount, 0, &n)) return e;
  if (int e = ddt::stream(dtype, dcount, 0, &dtotal)) return e;
  if (n != dtotal) return DDT_ERR_SIZE_MISMATCH;
  if (n > 0 && ddt::hostile(dst, dcount, dtype)) return DDT_ERR_ARG;
  if (int e = ddt::gpu::init()) return e;
  if (n == 0) return DDT_SUCCESS;
  int device;
  if (int e = ddt::gpu::stream_device(stream, &device)) return e;
  return ddt::gpu::on(device, [&] { return ddt::gpu::ipc_copy(*src, scount, stype, dst, dcount, dtype, n, device, stream); });
}

int ddt_cuda_ipc_close(const ddt_cuda_ipc* src) {
  if (!src) return DDT_ERR_ARG;
  ddt::gpu::Imports& x = ddt::gpu::imports();
  std::lock_guard<std::mutex> lock(x.mu);
  for (auto it = x.open.begin(); it != x.open.end(); ++it)
    if (std::memcmp(it->handle, src->handle, 64) == 0) {
      ddt::gpu::close_one(*it);
      x.open.erase(it);
      return DDT_SUCCESS;
    }
  return DDT_SUCCESS;
}

}  // extern "C"
