// The kernels' launch functions (kernels.cu), callable from host C++: each moves a whole call's
// units (units.hpp) on a stream and returns the launch's error.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>

#include "cuda/units.hpp"

namespace ddt::gpu {

// Pack (gather) or unpack stream bytes [lo, lo + n) of the typed buffer buf to or from seq, in
// units of `grain` bytes whose typed bytes are `tgrain`-aligned (tgrain <= grain; units.hpp's
// Bits); an unpack in units of `tgrain` bytes.
cudaError_t launch_move(bool gather, const Side& side, char* buf, char* seq, int64_t lo, int64_t n, int64_t grain,
                        int64_t tgrain, cudaStream_t stream);
// Copy units * grain stream bytes from (src, sside) to (dst, dside).
cudaError_t launch_copy(const Side& sside, const char* src, const Side& dside, char* dst, int64_t units, int64_t grain,
                        cudaStream_t stream);

}  // namespace ddt::gpu
