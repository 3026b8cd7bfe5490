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

/* Which executor moves device data (process-wide; for benchmarks and tests): DDT_CUDA_AUTO, the
 * plan's choice (today the kernels everywhere: see src/cuda/api.cpp's cost model);
 * DDT_CUDA_KERNELS; DDT_CUDA_DMA, the DMA engine (cudaMemcpy2DAsync) wherever the typed side is
 * rows of one width at one pitch (a vector, a 2-D subarray, a contiguous type at an extent), the
 * kernels elsewhere; DDT_CUDA_GENERAL, the general kernel (the seek over the layout's own tree)
 * for every layout, also those that have a targeted one (to measure one against the other).
 * DDT_ERR_ARG for another value. */
enum { DDT_CUDA_AUTO = 0, DDT_CUDA_KERNELS = 1, DDT_CUDA_DMA = 2, DDT_CUDA_GENERAL = 3 };
int ddt_cuda_set_executor(int which);

/* ---- zero copy between processes of one node (CUDA IPC; FALCON-X's GPU design) -------------
 * The exporter describes a device buffer in a ddt_cuda_ipc (plain bytes: send them any way,
 * with ddt_type_serialize's bytes of its type); the importer copies from it into its own buffer
 * and layout with one kernel that reads the exporter's memory: no pack, no staging buffer. */

/* A device buffer as another process of the node can open it: the CUDA IPC handle of the buffer's
 * allocation and the buffer's offset in it. */
typedef struct ddt_cuda_ipc {
  unsigned char handle[64];
  int64_t offset;
} ddt_cuda_ipc;

/* Describes buf (device memory from cudaMalloc, of any device) for ddt_cuda_ipc_copy_async in
 * another process. DDT_ERR_ARG for memory that is not device memory. buf must lie inside its
 * allocation: for a typed buffer, which MPI lets lie outside it (a type whose true lower bound
 * is above 0, or below 0), use ddt_cuda_ipc_export_type. */
int ddt_cuda_ipc_export(const void *buf, ddt_cuda_ipc *out);
/* Describes count elements of type at buf: the allocation is the one that holds the bytes they
 * touch, and every one of them must lie inside it (DDT_ERR_ARG otherwise); buf itself may lie
 * outside it (the description's offset is then negative or past its end). */
int ddt_cuda_ipc_export_type(const void *buf, int64_t count, ddt_type type, ddt_cuda_ipc *out);

/* The packed stream of (the exporter's buffer, scount, stype) into (dst, dcount, dtype) on a
 * stream of the current device: one kernel reads the exporter's memory and writes dst's layout.
 * stype is the exporter's type as this process knows it (ddt_type_deserialize). The exporter's
 * allocation is opened at first use and stays open for later copies (until ddt_cuda_ipc_close);
 * the bytes read must lie inside it (checked: DDT_ERR_ARG, as for a handle that does not open,
 * since the bytes came from another process). CUDA's rule holds: the exporter must not free the
 * buffer while an importer has it open, so importers close it (ddt_cuda_ipc_close) before the
 * exporter frees (the runtime's device sends do this after every message). dst must be reachable by a kernel of the current
 * device, as for ddt_cuda_copy_async. */
int ddt_cuda_ipc_copy_async(const ddt_cuda_ipc *src, int64_t scount, ddt_type stype, void *dst, int64_t dcount,
                            ddt_type dtype, cudaStream_t stream);

/* Closes this process's mapping of the exporter's allocation, once the exporter says that it
 * frees it; waits for the work queued on the current device first (a kernel may still read it).
 * DDT_SUCCESS also when it was not open. */
int ddt_cuda_ipc_close(const ddt_cuda_ipc *src);

#ifdef __cplusplus
}
#endif

#endif /* DDTKIT_CUDA_H */
