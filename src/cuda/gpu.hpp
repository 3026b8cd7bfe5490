// What the GPU layer's entry points share (api.cpp defines them; ipc.cpp uses them too).
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>

#include "cuda/memory.hpp"
#include "ddtkit.h"

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

}  // namespace ddt::gpu
