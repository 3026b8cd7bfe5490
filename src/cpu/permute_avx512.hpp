// Packing and unpacking tiny blocks at a short stride with AVX-512 byte permutes (VBMI): the
// plan's permute kernel (plan.hpp's Plan::permute_*, chosen in plan.cpp where the CPU has it).
//
//   pack    one step moves k = permute_blocks[1] blocks: two 64-byte loads take a window of 128
//           source bytes, vpermt2b picks the blocks' bytes out of it (permute_index[1]), and one
//           64-byte store writes them (bytes past k * w are written again by the next step);
//   unpack  one step moves k = permute_blocks[0] blocks: one 64-byte load of packed bytes,
//           vpermb (its zero-masking form, with every byte kept: the plain form draws a false "uninitialised" warning from GCC 12) spreads them over a window of 64 destination bytes (permute_index[0]), and a
//           store under the window's block mask writes the blocks' bytes and no gap byte (the
//           gaps are the user's: an unmasked store would race with a thread that writes them).
//
// A step reads and writes only inside the run: its loads end at or before the run's last block
// byte (a pack) or the packed bytes' end (an unpack), and its store inside the packed bytes or the
// run. The last steps, where a whole window would cross those ends, use masked loads and stores
// limited to the bytes of their blocks; AVX-512 masks suppress faults on the bytes they leave
// out, so nothing outside the run or the packed bytes is touched, even beside an unmapped page.
// Gap bytes inside the run are read (a pack), as the SSSE3 shuffle reads them: they lie between
// two bytes of the run, within 64 bytes of one, so on pages the blocks use.
#pragma once
#include <algorithm>
#include <cstdint>

#include "plan/plan.hpp"
#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace ddt {

#if defined(__x86_64__)
// The bytes [0, n) of a 64-byte window as a mask (n in [0, 64]).
inline uint64_t low_bytes(int64_t n) { return n >= 64 ? ~uint64_t{0} : (uint64_t{1} << n) - 1; }

// Gathers count blocks of w bytes placed stride apart from p into seq (plan q's pack step).
__attribute__((target("avx512f,avx512bw,avx512vbmi"))) inline void gather_permute(char* seq, uintptr_t p, int64_t stride,
                                                                               int64_t w, int64_t count, const Plan& q) {
  const int64_t k = q.permute_blocks[1], step_in = k * stride, step_out = k * w;
  const __m512i index = _mm512_loadu_si512(q.permute_index[1]);
  const char* src = reinterpret_cast<const char*>(p);
  // Whole steps j = 0 .. full - 1: loads [j step_in, j step_in + 128) end inside the run (its
  // span ends with the last block), the store [j step_out, + 64) inside the packed bytes.
  const int64_t span = (count - 1) * stride + w, out = count * w;
  int64_t full = 0;
  if (span >= 128 && out >= 64) full = std::min((span - 128) / step_in, (out - 64) / step_out) + 1;
  for (int64_t j = 0; j < full; ++j, src += step_in, seq += step_out) {
    const __m512i a = _mm512_loadu_si512(src), b = _mm512_loadu_si512(src + 64);
    _mm512_storeu_si512(seq, _mm512_permutex2var_epi8(a, index, b));
  }
  // The rest, at most k blocks a step, every load and store masked to the step's own blocks.
  for (int64_t i = full * k; i < count; i += k, src += step_in, seq += step_out) {
    const int64_t r = std::min(k, count - i), reach = (r - 1) * stride + w;  // reach <= 128
    const __m512i a = _mm512_maskz_loadu_epi8(low_bytes(reach), src);
    const __m512i b = _mm512_maskz_loadu_epi8(low_bytes(std::max<int64_t>(reach - 64, 0)), src + 64);
    _mm512_mask_storeu_epi8(seq, low_bytes(r * w), _mm512_permutex2var_epi8(a, index, b));
  }
}

// Scatters count blocks of w bytes from seq to stride apart from p (plan q's unpack step).
__attribute__((target("avx512f,avx512bw,avx512vbmi"))) inline void scatter_permute(const char* seq, uintptr_t p, int64_t stride,
                                                                                int64_t w, int64_t count, const Plan& q) {
  const int64_t k = q.permute_blocks[0], step_in = k * w, step_out = k * stride;
  const __m512i index = _mm512_loadu_si512(q.permute_index[0]);
  const uint64_t mask = q.permute_mask;
  char* dst = reinterpret_cast<char*>(p);
  // Whole steps: k blocks each, the load [j step_in, + 64) inside the packed bytes.
  const int64_t out = count * w;
  int64_t full = std::min(count / k, out >= 64 ? (out - 64) / step_in + 1 : 0);
  for (int64_t j = 0; j < full; ++j, seq += step_in, dst += step_out)
    _mm512_mask_storeu_epi8(dst, mask, _mm512_maskz_permutexvar_epi8(~uint64_t{0}, index, _mm512_loadu_si512(seq)));
  for (int64_t i = full * k; i < count; i += k, seq += step_in, dst += step_out) {
    const int64_t r = std::min(k, count - i);
    const __m512i x = _mm512_maskz_loadu_epi8(low_bytes(r * w), seq);
    _mm512_mask_storeu_epi8(dst, mask & low_bytes((r - 1) * stride + w), _mm512_maskz_permutexvar_epi8(~uint64_t{0}, index, x));
  }
}

// Copies count blocks of w bytes placed stride apart from p to the same places delta bytes on (a
// copy between two layouts of one shape, twin.hpp): k = permute_blocks[0] blocks a step, read and
// written under the window's block mask, so no gap byte is read or written on either side.
__attribute__((target("avx512f,avx512bw"))) inline void copy_masked(uintptr_t p, intptr_t delta, int64_t stride, int64_t w,
                                                                 int64_t count, const Plan& q) {
  const int64_t k = q.permute_blocks[0], step = k * stride;
  const uint64_t mask = q.permute_mask;
  const char* src = reinterpret_cast<const char*>(p);
  const int64_t full = count / k;
  for (int64_t j = 0; j < full; ++j, src += step)
    _mm512_mask_storeu_epi8(const_cast<char*>(src) + delta, mask, _mm512_maskz_loadu_epi8(mask, src));
  if (const int64_t r = count - full * k) {
    const uint64_t m = mask & low_bytes((r - 1) * stride + w);
    _mm512_mask_storeu_epi8(const_cast<char*>(src) + delta, m, _mm512_maskz_loadu_epi8(m, src));
  }
}

// count blocks at the plan's permute stride, in either direction.
template <bool Gather>
inline void permute_blocks(char* seq, uintptr_t p, int64_t stride, int64_t w, int64_t count, const Plan& q) {
  if (Gather)
    gather_permute(seq, p, stride, w, count, q);
  else
    scatter_permute(seq, p, stride, w, count, q);
}
#endif

}  // namespace ddt
