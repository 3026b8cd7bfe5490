// Device memory in ddt_pack, ddt_unpack and ddt_copy. The CPU executors know no CUDA (DESIGN.md's
// layers): the GPU layer (src/cuda/), when it is linked and initialised (ddt_cuda_init, or any
// ddt_cuda_* call), installs a DeviceHook, and execute.cpp offers each call to it after the
// argument checks and before the CPU path. Without it a call pays one relaxed load of a null
// pointer; with it, host-buffer calls pay the hook's pointer query.
#pragma once
#include <atomic>
#include <cstdint>

#include "ddtkit.h"

namespace ddt {

// Each returns kNotMine when no buffer of the call is GPU memory (the CPU path runs), else the
// call's result, the work done and synchronised. The arguments are checked; n > 0.
constexpr int kNotMine = -1;
struct DeviceHook {
  int (*pack)(const void* in, int64_t incount, ddt_type t, int64_t offset, void* out, int64_t n);
  int (*unpack)(const void* in, int64_t n, void* out, int64_t outcount, ddt_type t, int64_t offset);
  int (*copy)(const void* src, int64_t scount, ddt_type st, void* dst, int64_t dcount, ddt_type dt, int64_t n);
  // Whether the bytes count elements of t at buf touch are device or managed memory (the runtime
  // stages such buffers: src/shm/comm.cpp). Asked where they begin, not at buf, which MPI lets
  // lie outside the allocation; t null (or nothing touched): at buf.
  bool (*on_device)(const void* buf, int64_t count, ddt_type t);
  // CUDA IPC for the runtime's device sends (FALCON-X's GPU zero copy): ipc_export writes the
  // kIpcDesc-byte description of count elements of t at buf (ddtkit_cuda.h's ddt_cuda_ipc), once the work
  // queued before it on the legacy stream is done; ipc_copy copies, synchronously, the packed
  // stream of (the described buffer, scount, st), n bytes, into the first n stream bytes of (dst,
  // dcount, dt), dst of any memory kind, and returns kIpcUnopened where it cannot before writing
  // a byte (a description that does not open here, a mapping it cannot reach or bound): the bytes
  // then come another way.
  int (*ipc_export)(const void* buf, int64_t count, ddt_type t, void* desc);
  int (*ipc_copy)(const void* desc, int64_t scount, ddt_type st, void* dst, int64_t dcount, ddt_type dt, int64_t n);
};
constexpr int64_t kIpcDesc = 72;
constexpr int kIpcUnopened = -2;

extern std::atomic<const DeviceHook*> device_hook;

}  // namespace ddt
