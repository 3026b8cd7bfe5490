// What the GPU layer's entry points share (api.cpp defines them; ipc.cpp uses them too).
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>

#include "cuda/memory.hpp"
#include "ddtkit.h"
#include "util/guarded.hpp"

namespace ddt::gpu {

// Finds the devices once and installs the hook of cpu/device.hpp: DDT_SUCCESS or DDT_ERR_DEVICE.
int init();
// A CUDA result as a ddtkit error code (clearing a non-sticky error).
int status(cudaError_t e);
// Stream bytes [lo, lo + n) between the typed buffer and the packed one, enqueued on stream
// (every buffer reachable by a kernel of `device`, the current device).
int move_on(int device, bool gather, const void* typed, int64_t count, ddt_type t, int64_t lo, int64_t n,
            const void* packed, cudaStream_t stream);
// The type-to-type copy of n stream bytes, enqueued on stream.
int copy_on(int device, const void* src, int64_t scount, ddt_type st, void* dst, int64_t dcount, ddt_type dt,
            int64_t n, cudaStream_t stream);
// The bytes count elements of t at buf touch lie inside w's allocation.
bool typed_inside(const Where& w, const void* buf, int64_t count, ddt_type t);
// The driver's view of the memory that count elements of t at buf touch, asked at the first
// byte they touch (memory.hpp's where() otherwise): MPI lets buf itself lie outside the
// allocation (a type whose true lower bound is above 0, a negative lower bound), and asking at
// buf would then call device memory pageable. With no byte touched (count 0, an empty type),
// at buf.
bool where_typed(const void* buf, int64_t count, ddt_type t, Where* w);
// Host memory that needs no driver query: the main arena's heap (memory.hpp's in_heap) and the
// memory ddtkit mapped itself (util/host_ranges.hpp); for a typed buffer, the bytes it touches.
bool plain_host(uintptr_t lo, uint64_t len);
bool typed_plain_host(const void* buf, int64_t count, ddt_type t);
// Exports count elements of t at buf (ddtkit_cuda.h's ddt_cuda_ipc_export_type).
int export_typed(const void* buf, int64_t count, ddt_type t, void* desc);
// The runtime's CUDA IPC (cpu/device.hpp's DeviceHook::ipc_export and ipc_copy; ipc.cpp).
int hook_ipc_export(const void* buf, int64_t count, ddt_type t, void* desc);
int hook_ipc_copy(const void* desc, int64_t scount, ddt_type st, void* dst, int64_t dcount, ddt_type dt, int64_t n);
// The device whose kernels a stream runs: a created stream's own, else the current device.
int stream_device(cudaStream_t stream, int* device);

// Runs f (returning a ddtkit code) with `device` current, then makes the caller's current device
// current again; an exception (allocation failure) becomes DDT_ERR_NO_MEM.
template <class F>
int on(int device, F f) {
  int old = -1;
  if (cudaError_t e = cudaGetDevice(&old)) return status(e);
  if (old != device)
    if (cudaError_t e = cudaSetDevice(device)) return status(e);
  const int r = guarded(f);
  if (old != device) cudaSetDevice(old);
  return r;
}

}  // namespace ddt::gpu
