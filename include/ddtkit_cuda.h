/* ddtkit on NVIDIA GPUs: pack, unpack and copy of any layout with device buffers (issue 12).
 *
 * Link the GPU layer (CMake target ddtkit::cuda, library libddtkit_cuda), built when the CUDA
 * toolkit is found. Once it is initialised (ddt_cuda_init, or the first ddt_cuda_* call),
 * ddt_pack, ddt_unpack and ddt_copy of ddtkit.h also accept device and managed pointers, in any
 * combination with host memory (pageable or pinned): the work then runs on the GPU, on the legacy
 * default stream, and the call returns when it is done. Which device: that of the device buffer
 * (two device buffers must be on one device). A receive type whose typemap overlaps itself has no
 * defined result on the GPU, whose threads move bytes in no particular order.
 *
 * The _async forms below enqueue the work on `stream` and return at once (outputs such as
 * *packed are written at return: they are sizes, known before the data moves). Every buffer
 * they are given must be reachable by a kernel of the current device: device memory of that
 * device, managed memory, or pinned host memory (cudaHostAlloc / cudaHostRegister); pageable host
 * memory is DDT_ERR_ARG, as is a range outside the buffer's allocation. The layout of a type is
 * uploaded to a device once and kept for the rest of the process (for every type with the same
 * layout). Byte ranges (offset, size) are those of ddt_pack / ddt_unpack: any byte of the stream.
 *
 * Error codes are ddtkit.h's; DDT_ERR_DEVICE when no CUDA device is usable or a CUDA call fails.
 * Nothing has been written to the caller's buffers when an argument check fails. */
#ifndef DDTKIT_CUDA_H
#define DDTKIT_CUDA_H

#include <cuda_runtime_api.h>
#include <stdint.h>

#include "ddtkit.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Finds the CUDA devices and turns on device pointers in ddt_pack / ddt_unpack / ddt_copy.
 * DDT_SUCCESS, or DDT_ERR_DEVICE (no driver, no device): those calls then stay CPU-only. Cheap
 * after the first call; thread-safe. */
int ddt_cuda_init(void);

/* ddt_pack on a stream: bytes [offset, offset + outsize) of the packed stream of (inbuf,
 * incount, type) into outbuf; *packed = bytes it will write. */
int ddt_cuda_pack_async(const void *inbuf, int64_t incount, ddt_type type, int64_t offset, void *outbuf,
                        int64_t outsize, int64_t *packed, cudaStream_t stream);
/* ddt_unpack on a stream: insize bytes from inbuf into stream positions [offset, offset + insize)
 * of (outbuf, outcount, type); *unpacked = insize. A type whose typemap overlaps itself has no
 * defined result (the GPU moves bytes in no particular order). */
int ddt_cuda_unpack_async(const void *inbuf, int64_t insize, void *outbuf, int64_t outcount, ddt_type type,
                          int64_t offset, int64_t *unpacked, cudaStream_t stream);
/* ddt_copy on a stream: the packed stream of (src, scount, stype) into (dst, dcount, dtype); the
 * packed sizes must be equal. */
int ddt_cuda_copy_async(const void *src, int64_t scount, ddt_type stype, void *dst, int64_t dcount, ddt_type dtype,
                        cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif /* DDTKIT_CUDA_H */
