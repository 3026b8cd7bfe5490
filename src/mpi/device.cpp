// Device buffers under the interposer (issue 12): an unmodified program can send and receive
// GPU memory with derived datatypes over an MPI that is not CUDA-aware (the PyPI builds of MPICH
// and Open MPI are configured without CUDA). A derived-type buffer in device or managed memory is
// always staged: packed on the GPU into host memory and given to the MPI as bytes, received as
// bytes and unpacked on the GPU (side.cpp); never handed to the MPI as it is (the pass rule is
// skipped for it). Through the runtime, the runtime stages it the same way (src/shm/comm.cpp).
// Predefined datatypes (and types the interposer cannot translate) go to the MPI untouched, with
// or without device memory, as they would without the interposer.
//
// The check costs one relaxed load per derived-type call where it is off, and a pointer query
// to the CUDA driver where it is on. It is on when the interposer was built with the GPU layer
// and, at MPI_Init, the program has loaded the CUDA driver (libcuda.so.1) or DDTKIT_CUDA=1 says
// so (a program that starts CUDA only after MPI_Init sets it); DDTKIT_CUDA=0 turns it off.
// DDTKIT_STAGE_ALL=1 (tests) sends every derived-type buffer the device buffers' way, so that it
// runs where no GPU is.
#include <dlfcn.h>

#include <atomic>
#include <cstdlib>
#include <cstring>

#include "cpu/device.hpp"
#include "mpi/shim.hpp"
#if DDT_WITH_CUDA
#include "ddtkit_cuda.h"
#endif

namespace ddtmpi {

// The mode lives in hot.device_mode (shim.hpp), where p2p.cpp's fast paths read it too: 0 off,
// 1 device buffers, 2 every buffer (DDTKIT_STAGE_ALL).

void device_init() {
  const char* all = std::getenv("DDTKIT_STAGE_ALL");
  if (all && std::strcmp(all, "1") == 0) {
    hot.device_mode.store(2, std::memory_order_relaxed);
    return;
  }
#if DDT_WITH_CUDA
  const char* e = std::getenv("DDTKIT_CUDA");
  const bool want = e ? std::strcmp(e, "0") != 0 : dlopen("libcuda.so.1", RTLD_NOLOAD | RTLD_LAZY) != nullptr;
  if (want && ddt_cuda_init() == DDT_SUCCESS) hot.device_mode.store(1, std::memory_order_relaxed);
#endif
}

bool device_buffer(const void* p, int64_t count, ddt_type t) {
  const int m = hot.device_mode.load(std::memory_order_relaxed);
  if (m == 0) return false;
  if (m == 2) return true;
  const ddt::DeviceHook* d = ddt::device_hook.load(std::memory_order_relaxed);
  return d && d->on_device(p, count, t);
}

}  // namespace ddtmpi
