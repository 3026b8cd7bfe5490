// The GPU layer's entry points on a machine without a usable CUDA device (CI's): every one
// answers with an error code (DDT_ERR_DEVICE, or the argument error it would give anyway), none
// crashes or hangs, and the CPU calls keep working. Where a device is usable, the GPU tests run
// instead, and this one says so and is skipped (exit 77).
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstring>
#include <vector>

#include "ddtkit_cuda.h"

int main() {
  if (ddt_cuda_init() == DDT_SUCCESS) {
    std::printf("SKIPPED gpu_nodevice: a CUDA device is usable here; the GPU tests cover it\n");
    return 77;
  }
  int failures = 0;
  auto expect = [&](int got, int want, const char* what) {
    if (got != want) std::fprintf(stderr, "FAIL %s: %s, expected %s\n", what, ddt_error_string(got), ddt_error_string(want)), ++failures;
  };
  ddt_type v;
  ddt_type_vector(8, 1, 2, DDT_INT, &v);
  ddt_type_commit(v);
  std::vector<int> src(16), dst(16, -1);
  for (int i = 0; i < 16; ++i) src[i] = i;
  std::vector<char> packed(32);
  int64_t n = -7;
  expect(ddt_cuda_init(), DDT_ERR_DEVICE, "ddt_cuda_init again");
  expect(ddt_cuda_pack_async(src.data(), 1, v, 0, packed.data(), 32, &n, nullptr), DDT_ERR_DEVICE, "pack_async");
  expect(ddt_cuda_unpack_async(packed.data(), 32, dst.data(), 1, v, 0, &n, nullptr), DDT_ERR_DEVICE, "unpack_async");
  expect(ddt_cuda_copy_async(src.data(), 1, v, dst.data(), 1, v, nullptr), DDT_ERR_DEVICE, "copy_async");
  ddt_cuda_ipc d;
  std::memset(&d, 0, sizeof d);
  expect(ddt_cuda_ipc_export(src.data(), &d), DDT_ERR_DEVICE, "ipc_export");
  expect(ddt_cuda_ipc_export_type(src.data(), 1, v, &d), DDT_ERR_DEVICE, "ipc_export_type");
  expect(ddt_cuda_ipc_export_type(src.data(), -1, v, &d), DDT_ERR_COUNT, "ipc_export_type, negative count");
  expect(ddt_cuda_ipc_export_type(src.data(), 1, DDT_TYPE_NULL, &d), DDT_ERR_TYPE, "ipc_export_type, null type");
  expect(ddt_cuda_ipc_copy_async(&d, 1, v, dst.data(), 1, v, nullptr), DDT_ERR_DEVICE, "ipc_copy_async");
  expect(ddt_cuda_ipc_close(&d), DDT_SUCCESS, "ipc_close of nothing open");
  // Argument errors come first, as on the CPU.
  expect(ddt_cuda_pack_async(src.data(), -1, v, 0, packed.data(), 32, &n, nullptr), DDT_ERR_COUNT, "negative count");
  expect(ddt_cuda_pack_async(src.data(), 1, v, 0, packed.data(), 32, nullptr, nullptr), DDT_ERR_ARG, "null packed");
  expect(ddt_cuda_set_executor(7), DDT_ERR_ARG, "set_executor(7)");
  expect(ddt_cuda_set_executor(DDT_CUDA_KERNELS), DDT_SUCCESS, "set_executor(KERNELS)");
  expect(ddt_cuda_set_executor(DDT_CUDA_GENERAL), DDT_SUCCESS, "set_executor(GENERAL)");
  expect(ddt_cuda_set_executor(DDT_CUDA_AUTO), DDT_SUCCESS, "set_executor(AUTO)");
  if (n != -7) std::fprintf(stderr, "FAIL a failed call wrote *packed\n"), ++failures;
  // The CPU path is untouched.
  expect(ddt_pack(src.data(), 1, v, 0, packed.data(), 32, &n), DDT_SUCCESS, "ddt_pack on the CPU");
  expect(ddt_unpack(packed.data(), 32, dst.data(), 1, v, 0, &n), DDT_SUCCESS, "ddt_unpack on the CPU");
  for (int i = 0; i < 16; ++i)
    if (dst[i] != (i % 2 == 0 ? i : -1)) std::fprintf(stderr, "FAIL CPU round trip at %d\n", i), ++failures;
  ddt_type_free(&v);
  std::printf("gpu_nodevice: every GPU entry point answered without a device, %d failures\n", failures);
  return failures ? 1 : 0;
}
