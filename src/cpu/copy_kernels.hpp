// The copy kernels the pack and unpack operations are built from. Specialisation is by
// templates over the block width, chosen once per run of equal blocks (never per block):
//
//   widths 1..64 that occur in practice get a fixed-size loop, which the compiler turns into
//     straight loads and stores (no call, no length test per block);
//   other widths up to 64 B use two overlapping moves of the largest power of two below them;
//   wider blocks use memcpy, whose large-copy path is the best this machine has.
//
// Cost model. The choice is by width alone, because width decides the instruction sequence:
// fixed moves below 64 B (no call, no length test per block), overlapping moves to 256 B, memcpy
// above. What `make bench` measured with it at 3149834 (AMD EPYC, 2 cores; vector sweep, stride
// 2 x block, fraction of memcpy of the same payload, in L3): 8 B 0.55-0.63, 16-256 B 0.64-0.70,
// 512 B-8 KiB 0.70-0.88, 64 KiB 0.85-0.92 -- level with Open MPI from 16 B up (its best case), so
// the plateau is the memory system's, not the loop's: with a gap as wide as the block, the
// prefetchers also fetch the gap lines, and (payload + gap read + payload written) over
// (2 x payload) predicts ~0.67. The tiniest widths got SIMD kernels since: gather_shuffle (SSSE3,
// below) and, where the CPU has AVX-512, permute_avx512.hpp (both directions; measured in plan.cpp).
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "plan/plan.hpp"
#if defined(__x86_64__)
#include <immintrin.h>
#elif defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace ddt {

// A word of N bytes that lives in a register (N = 4, 8, 16): the moves below load into these,
// never into byte arrays, which GCC kept on the stack (a 32-byte overlapping move of WRF's 44 B
// rows stored both loads to the stack and read them back: twelve memory operations for four).
template <int N> struct Word;
template <> struct Word<4> { using type = uint32_t; };
template <> struct Word<8> { using type = uint64_t; };
template <> struct Word<16> { typedef char type __attribute__((vector_size(16))); };

// Copies N <= n <= 2N bytes as two moves of N that overlap in the middle; every load is made
// before any store.
template <int N>
inline void overlap_move(char* d, const char* s, int64_t n) {
  if constexpr (N == 32) {  // two 16-byte words a side: the baseline ISA has no 32-byte register
    typename Word<16>::type a0, a1, b0, b1;
    std::memcpy(&a0, s, 16);
    std::memcpy(&a1, s + 16, 16);
    std::memcpy(&b0, s + n - 32, 16);
    std::memcpy(&b1, s + n - 16, 16);
    std::memcpy(d, &a0, 16);
    std::memcpy(d + 16, &a1, 16);
    std::memcpy(d + n - 32, &b0, 16);
    std::memcpy(d + n - 16, &b1, 16);
  } else {
    typename Word<N>::type a, b;
    std::memcpy(&a, s, N);
    std::memcpy(&b, s + n - N, N);
    std::memcpy(d, &a, N);
    std::memcpy(d + n - N, &b, N);
  }
}

// Copies n <= 64 bytes with at most two overlapping moves of the largest power of two <= n.
inline void small_copy(char* d, const char* s, int64_t n) {
  if (n >= 32) {
    overlap_move<32>(d, s, n);
  } else if (n >= 16) {
    overlap_move<16>(d, s, n);
  } else if (n >= 8) {
    overlap_move<8>(d, s, n);
  } else if (n >= 4) {
    overlap_move<4>(d, s, n);
  } else if (n > 0) {
    char a = s[0], b = s[n - 1], c = s[n / 2];
    d[0] = a;
    d[n - 1] = b;
    d[n / 2] = c;
  }
}

// 65..256 bytes: 32-byte moves and one overlapping tail, inline (a libc call costs as much as
// the copy at these sizes: WRF's rows are 44..92 B).
inline void medium_copy(char* d, const char* s, int64_t n) {
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) std::memcpy(d + i, s + i, 32);
  if (i < n) small_copy(d + n - 32, s + n - 32, 32);
}

#if defined(__x86_64__)
// n >= 32 bytes with 32-byte moves, four per step, and one overlapping move for the tail. The
// stores are aligned to 32 bytes (one unaligned move first, which the aligned ones then overlap):
// a store that straddles two cache lines costs about two, and with stores at the source's
// misalignment this loop ran 16 KiB in cache at 53 GB/s wherever the destination lay 8, 16, 24,
// 40 or 200 bytes past the source modulo 64, against 150 GB/s at equal alignment and glibc's
// memcpy at 105 GB/s; aligned stores held 100-150 GB/s at every placement, at or above memcpy
// (4 KiB to 64 KiB, ten placements, best of 2,000; a load that straddles costs far less). make
// bench's DDTBench suite, two runs each way, alternated: ddtkit / memcpy over the 138 pack and
// unpack cases 0.963 of before (NAS_LU_x N=408, a 16 KB contiguous copy, 2.5 -> 1.25 of memcpy;
// N=162 2.1 -> 1.1; LAMMPS_atomic unpack 2.9 -> 2.1); the largest loss NAS_LU_y N=408 pack,
// 5.3 -> 6.0, whose 40-byte blocks never reach this loop (a noinline loop did not restore it and
// cost NAS_MG's 4 KiB rows 20%).
__attribute__((target("avx2"))) inline void avx2_copy(char* d, const char* s, int64_t n) {
  int64_t k = 0;
  if (n >= 64) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(d), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s)));
    k = 32 - static_cast<int64_t>(reinterpret_cast<uintptr_t>(d) & 31);
    for (; k + 128 <= n; k += 128) {
      const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + k));
      const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + k + 32));
      const __m256i c = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + k + 64));
      const __m256i e = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + k + 96));
      _mm256_store_si256(reinterpret_cast<__m256i*>(d + k), a);
      _mm256_store_si256(reinterpret_cast<__m256i*>(d + k + 32), b);
      _mm256_store_si256(reinterpret_cast<__m256i*>(d + k + 64), c);
      _mm256_store_si256(reinterpret_cast<__m256i*>(d + k + 96), e);
    }
    for (; k + 32 <= n; k += 32)
      _mm256_store_si256(reinterpret_cast<__m256i*>(d + k), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + k)));
  } else {
    for (; k + 32 <= n; k += 32)
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + k), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + k)));
  }
  if (k < n)  // the last 32 bytes again, overlapping what is already moved (n >= 32)
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + n - 32), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + n - 32)));
}
__attribute__((target("avx2"))) inline __m256i load32(const char* s) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s));
}
__attribute__((target("avx2"))) inline void store32(char* d, __m256i v) {
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(d), v);
}
// 128 <= n <= 256 bytes: every load before any store (the first and last 64 bytes, and for n
// above 128 the 64 bytes after the first and before the last, overlapping), unaligned stores:
// the shape of glibc's memcpy at these sizes, so that a block's loads never wait on its own
// stores to the same 4 KiB offsets (avx2_copy interleaves them). Gathers of 128-256 B blocks, in
// cache (2 MiB, stride 2 x block), at 05c8141+: ddtkit bench's sweep, three runs of each build
// alternated, ddtkit / a memcpy call per block (Open MPI's way) 0.82-1.17 -> 1.14-1.31 (fraction
// of memcpy 0.50-0.96 -> 0.72-1.20); a probe of ddt_pack at three placements, three runs: 128 B
// 0.62-0.79 -> 0.66-0.88, 256 B 0.69-0.81 -> 0.78-0.89, 192 B level.
__attribute__((target("avx2"))) inline void avx2_copy_loads_first(char* d, const char* s, int64_t n) {
  const __m256i a0 = load32(s), a1 = load32(s + 32), b0 = load32(s + n - 64), b1 = load32(s + n - 32);
  if (n > 128) {
    const __m256i c0 = load32(s + 64), c1 = load32(s + 96), e0 = load32(s + n - 128), e1 = load32(s + n - 96);
    store32(d + 64, c0), store32(d + 96, c1), store32(d + n - 128, e0), store32(d + n - 96, e1);
  }
  store32(d, a0), store32(d + 32, a1), store32(d + n - 64, b0), store32(d + n - 32, b1);
}
// n >= 128 bytes (from 256 the two ends do not overlap), for a block that starts cold: the first
// and last 128 bytes are loaded before anything is stored, the middle moves in 128-byte steps
// with stores aligned to 32 (as avx2_copy's), and the two ends are stored last
// (wide_blocks_avx2 has the measurements).
__attribute__((target("avx2"))) inline void avx2_copy_ends_first(char* d, const char* s, int64_t n) {
  const __m256i h0 = load32(s), h1 = load32(s + 32), h2 = load32(s + 64), h3 = load32(s + 96);
  const __m256i t0 = load32(s + n - 128), t1 = load32(s + n - 96), t2 = load32(s + n - 64), t3 = load32(s + n - 32);
  // From k in (96, 128], d + k aligned to 32; every step ends before n (k < n - 128).
  for (int64_t k = 128 - static_cast<int64_t>(reinterpret_cast<uintptr_t>(d) & 31); k < n - 128; k += 128) {
    const __m256i a = load32(s + k), b = load32(s + k + 32), c = load32(s + k + 64), e = load32(s + k + 96);
    _mm256_store_si256(reinterpret_cast<__m256i*>(d + k), a);
    _mm256_store_si256(reinterpret_cast<__m256i*>(d + k + 32), b);
    _mm256_store_si256(reinterpret_cast<__m256i*>(d + k + 64), c);
    _mm256_store_si256(reinterpret_cast<__m256i*>(d + k + 96), e);
  }
  store32(d, h0), store32(d + 32, h1), store32(d + 64, h2), store32(d + 96, h3);
  store32(d + n - 128, t0), store32(d + n - 96, t1), store32(d + n - 64, t2), store32(d + n - 32, t3);
}
inline bool have_avx2() {
  static const bool yes = __builtin_cpu_supports("avx2");
  return yes;
}
// Asks for the first and last lines of the w-byte block at p (a prefetch never faults): the
// loops over wide strided blocks ask for the block two ahead (wide_blocks_avx2, twin.hpp).
inline void prefetch_ends(uintptr_t p, int64_t w) {
  _mm_prefetch(reinterpret_cast<const char*>(p), _MM_HINT_T0);
  _mm_prefetch(reinterpret_cast<const char*>(p + static_cast<uintptr_t>(w - 1)), _MM_HINT_T0);
}
#endif

// Copies of [kRepMin, kRepMax) bytes avoid memcpy: glibc 2.36 copies them with `rep movsb`,
// which on this AMD EPYC runs at about 2 GB/s, 25 times below its usual 35-90 GB/s, whenever
// the destination lies 8 or 16 bytes past the source modulo 4 KiB (probe: 4 KiB, 16 KiB and 256
// KiB copies at seven relative placements, medians of 9; at 1 MiB glibc no longer uses it and
// every placement ran at 25-33 GB/s). avx2_copy ran every placement at 32-94 GB/s, at or above
// memcpy's good ones (and 100-150 GB/s since its stores are aligned: above). Such placements are
// ordinary (any two buffers of the application), so the choice is made for every copy of these
// sizes, not by testing the placement.
constexpr int64_t kRepMin = 4096, kRepMax = int64_t{1} << 20;

inline void any_copy(char* d, const char* s, int64_t n) {
  if (n <= 64)
    small_copy(d, s, n);
  else if (n <= 256)
    medium_copy(d, s, n);
#if defined(__x86_64__)
  else if (n >= kRepMin && n < kRepMax && have_avx2())
    avx2_copy(d, s, n);
#endif
  else
    std::memcpy(d, s, n);
}

// One contiguous copy that is a whole call's work (a contiguous type, or a count of them): from
// kOneMin bytes the AVX2 loop too, not only from kRepMin. Measured with NAS_LU_x's contiguous
// faces in L1 (ddt_pack of one element, eight output placements 0-56 bytes past a 64-byte
// boundary, medians of 1,500): 2,560 B 28-31 ns against 35-43 ns by memcpy (the application's
// loop 36-64); 1,320 B 18-23 against 20-23, level; 480 B 14.0-14.8 against 11.2-11.5 (make
// bench's DDTBench suite), a loss, hence the threshold. Runs of strided blocks keep any_copy's
// rule: there the next block's loads wait on this one's stores at some placements
// (strided_blocks' comment).
constexpr int64_t kOneMin = 2048;
inline void one_copy(char* d, const char* s, int64_t n) {
#if defined(__x86_64__)
  if (n >= kOneMin && n < kRepMax && have_avx2()) return avx2_copy(d, s, n);
#endif
  any_copy(d, s, n);
}

// Moves one block between the packed stream (seq) and the user's buffer (at): gather for pack,
// scatter for unpack; width W fixed at compile time, or the runtime width w when W == 0.
template <bool Gather, int64_t W>
inline void move_block(char* seq, char* at, int64_t w) {
  if (W) {
    if (Gather)
      std::memcpy(seq, at, W);
    else
      std::memcpy(at, seq, W);
  } else if (Gather) {
    any_copy(seq, at, w);
  } else {
    any_copy(at, seq, w);
  }
}

#if defined(__x86_64__)
// count blocks of a run-time width of at least 32 bytes at a stride, with 32-byte moves (four
// per step, an overlapping move for the tail), the whole run in one AVX2 function: a memcpy call
// per block pays its call and size dispatch every block. Used for widths in [kWideMin, kWideMax):
// in cache (2 MiB, stride 2 x block, fraction of memcpy, over seven relative placements of the
// output) this loop moved 1 KiB at 0.91-0.93 (memcpy per block 0.85-0.92), 2 KiB 0.93-0.97
// (0.91-0.93), 4 KiB 0.94-0.97 (0.88-0.94). At 512 B it fell to 0.75 for five of the seven
// placements (the next block's loads wait on the stores of the last one when their addresses
// agree modulo 4 KiB) where memcpy, which loads a block whole before storing it, held 0.91-0.97;
// from 8 KiB on the two are level.
// The same loop also moves widths in [kMidMin, kMidMax), where the alternatives are 32-byte
// moves compiled for the baseline (16-byte SSE) or a memcpy call per block: in cache (2 MiB,
// stride 2 x block, outputs 16-56 bytes past a line, three runs each, fraction of memcpy) it
// moved 128 B at 0.67-0.71 (baseline 0.59-0.62), 256 B 0.72-0.75 (0.59-0.68), 384 B 0.76-0.78
// (0.62-0.67), 500 B 0.66-0.70 (0.59-0.62); at 80-96 B it lost (0.45-0.62 against 0.51-0.72),
// at 112-192 B the two were level, and from 512 B to 1 KiB memcpy per block won by 0.03-0.08
// (the aliasing above).
// From 4 KiB on, glibc 2.36's memcpy copies with `rep movsb` (its threshold for AVX2 machines),
// and on this AMD EPYC that instruction is sometimes an order of magnitude slower for a whole
// process run: make bench at ecdfc66 packed 2 MiB of 8 KiB blocks at stride 16 KiB in 755 us by
// memcpy per block (ddtkit, and Open MPI's pack, which calls memcpy) against 81 us for the
// same bytes in one memcpy and 97 us by the application's loop, in both MPIs' processes, for every
// block from 4 KiB (memcpy) or 8 KiB (ddtkit) to 64 KiB; the MPI-free run and a probe of every
// (dst - src) mod 4 KiB saw 0.78-1.01 of memcpy. This loop never uses rep movsb and holds
// 0.88-0.96 from 4 KiB to 64 KiB in cache (probe, three placements), so it moves every width
// from kWideMin up: a few percent below memcpy's good runs, and never its bad ones.
// From 512 B (kWideMin was 1 KiB until 05c8141+): with the two changes below, which load a
// block's ends before storing it, the aliasing above is gone. ddtkit bench's sweep, 2 MiB in
// cache, malloc'd buffers, two runs of each build alternated, fraction of memcpy: 512 B pack
// 0.68-0.82 -> 0.84-1.13 (a memcpy call per block 0.66-0.88), unpack 0.80-1.00 -> 0.90-1.05; a
// probe of ddt_pack at three output placements, three runs: 512 B 0.81-0.96 -> 0.85-1.03, 768 B
// 0.80-0.95 -> 0.81-1.05.
constexpr int64_t kMidMin = 128, kMidMax = 512;
constexpr int64_t kWideMin = 512, kWideMax = INT64_MAX;
//
// Two changes for widths from kWideMin, for the strided side's cold start of every block
// (measured first with the loop's variants side by side in one process, 2 MiB in cache, stride
// 2 x block, outputs 0, 16 and 48 bytes past a line, fraction of memcpy, medians of 31):
// - a gather loads its block's first and last 128 bytes before storing anything
//   (avx2_copy_ends_first), so that the block's two ends are fetched at once rather than in store
//   order: 1 KiB 0.83-0.92 against 0.79-0.90, 2 KiB 0.80-0.89 against 0.75-0.83 (a memcpy call
//   per block, which does the same: 0.79-0.86), 512 B 0.88-0.91 against 0.75-0.77 (that width
//   takes a memcpy call per block: any_copy). A scatter's loads are from the contiguous side, and
//   there it changed nothing. Below 256 B the two ends overlap and are stored twice: in the
//   library it lost at 128 B (against a memcpy per block, same process, three runs: 1.17-1.23
//   -> 1.01-1.10), so the mid widths keep avx2_copy.
// - the strided side's first and last lines two blocks ahead are prefetched: with a stride of a
//   page or more the hardware prefetchers start over at every block. Gather 4 KiB 0.94-1.00
//   against 0.86-0.89, 8 KiB 0.99-1.03 against 0.94-0.97, 1-2 KiB level; scatter 1-8 KiB
//   0.03-0.10 better. At 128-256 B it cost 0.02-0.08.
// In the library (ddt_pack of the vector of char, 2 MiB in cache, malloc'd buffers, a program
// linked with each build, four runs of each alternated, fraction of memcpy, old loop -> this
// one): 1 KiB 0.91-0.92 -> 0.93-0.96, 2 KiB 0.86-0.87 -> 0.90-0.91 (a memcpy call per block in
// the same runs: 0.87-0.90), 4 KiB 0.89-0.95 -> 0.99-1.02, 8 KiB 0.95-1.01 -> 0.95-1.00.
template <bool Gather>
__attribute__((target("avx2"))) inline void wide_blocks_avx2(char* seq, uintptr_t p, int64_t stride, int64_t w,
                                                             int64_t count) {
  const bool ahead = w >= kWideMin;
  const uintptr_t two = 2 * static_cast<uintptr_t>(stride);  // (mod 2^64: negative strides too)
  for (int64_t i = 0; i < count; ++i, seq += w, p += static_cast<uintptr_t>(stride)) {
    if (ahead && i + 2 < count) prefetch_ends(p + two, w);
    if (Gather && ahead)
      avx2_copy_ends_first(seq, reinterpret_cast<const char*>(p), w);
    else if (Gather && w <= 256)
      avx2_copy_loads_first(seq, reinterpret_cast<const char*>(p), w);
    else if (Gather)
      avx2_copy(seq, reinterpret_cast<const char*>(p), w);
    else
      avx2_copy(reinterpret_cast<char*>(p), seq, w);
  }
}
#endif

#if defined(__SSE2__)
// Two 8-byte words from any addresses, side by side in one register: 8-byte loads with no
// alignment to promise (a double* that is not 8-byte aligned would be undefined behaviour, and
// UBSan says so).
inline __m128i two_words(const char* lo, const char* hi) {
  return _mm_unpacklo_epi64(_mm_loadu_si64(lo), _mm_loadu_si64(hi));
}

// A gather whose stride is a page or more gets no help from the hardware prefetchers, which do
// not cross 4 KiB pages: every block's first load waits for its line. A prefetch of the block
// kPageAhead blocks on hides that where the run spans kFarSpan or more (below, its lines are
// near and the prefetches cost more than they save). NAS_LU_y's 40 B blocks at a stride of
// 40 (N + 2) bytes, variants of this loop side by side in one process, medians of 11, ns, none /
// 8 ahead / the application's loop: N=64 (169 KB) 39 / 41-42 / 39.5, N=102 80-85 / 72-75 / 83,
// N=162 160-163 / 131-133 / 162-167, N=408 703-714 / 620-639 / 631-638, N=1020 2,407-2,424 /
// 2,246-2,253 / 2,261-2,274; 4 ahead gained less, 16 as much, a second prefetch for each block's
// last line lost. make bench's DDTBench suite: NAS_LU_y N=408 and N=1020 0.89 and 0.93 of the
// hand loop without, at or above 1.0 with (two runs each). Caveat from the same probes: one
// build of the same source ran the prefetching loop no faster than the plain one, so the gain
// depends on where the code lands; no build was slower.
constexpr int64_t kPageStride = 4096, kPageAhead = 8, kFarSpan = int64_t{256} << 10;
inline bool far_gather(int64_t stride, int64_t count) {
  int64_t span;
  return stride >= kPageStride && (__builtin_mul_overflow(stride, count, &span) || span >= kFarSpan);
}

#if defined(__x86_64__)
// gather_pairs (below) for 40 B blocks with 32-byte moves: a pair is one 32-byte load and store from each
// block and one 16-byte word between them (three stores, not five). NAS_LU_y (5 doubles a point),
// ddt_pack of the whole face, medians of 11 in one process, ns, 16-byte pairs / 32-byte pairs /
// the application's loop: N=12 16.7 / 14.3 / 12.6, N=64 42.8 / 39.3-42.4 / 39.7, N=102 84 / 75 /
// 96, N=162 137 / 140 / 169.
__attribute__((target("avx2"))) inline void gather_pairs40_avx2(char* seq, uintptr_t p, int64_t stride,
                                                               int64_t count, bool far) {
  int64_t i = 0;
  for (; i + 2 <= count; i += 2, seq += 80, p += 2 * static_cast<uintptr_t>(stride)) {
    const char* a = reinterpret_cast<const char*>(p);
    const char* b = reinterpret_cast<const char*>(p + static_cast<uintptr_t>(stride));
    if (far && i + 1 + kPageAhead < count) {
      _mm_prefetch(a + kPageAhead * stride, _MM_HINT_T0);
      _mm_prefetch(b + kPageAhead * stride, _MM_HINT_T0);
    }
    const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a));
    const __m128i m = two_words(a + 32, b);
    const __m256i y = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 8));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(seq), x);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(seq + 32), m);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(seq + 48), y);
  }
  if (i < count) std::memcpy(seq, reinterpret_cast<const char*>(p), 40);
}
#endif

// Gather of blocks of W = 16q + 8 bytes (24, 40: NAS_LU's 5-double points), two at a time: the
// pair is 2q + 1 words of 16 bytes in the output, the middle one the first block's last 8 bytes
// beside the second's first 8, so every store lies at a multiple of 16 from the run's start.
// Block by block, every other block's 16-byte stores start 8 bytes past a multiple of 16, and
// one of them crosses a cache line every other pair: NAS_LU_y (40 B blocks) packed at 0.71-0.77
// of its hand loop, which the compiler had paired this way.
template <int64_t W>
inline void gather_pairs(char* seq, uintptr_t p, int64_t stride, int64_t count) {
  constexpr int64_t q = W / 16;
  const bool far = far_gather(stride, count);
#if defined(__x86_64__)
  if (W == 40 && have_avx2()) return gather_pairs40_avx2(seq, p, stride, count, far);
#endif
  int64_t i = 0;
  for (; i + 2 <= count; i += 2, seq += 2 * W, p += 2 * static_cast<uintptr_t>(stride)) {
    const char* a = reinterpret_cast<const char*>(p);
    const char* b = reinterpret_cast<const char*>(p + static_cast<uintptr_t>(stride));
    if (far && i + 1 + kPageAhead < count) {
      _mm_prefetch(a + kPageAhead * stride, _MM_HINT_T0);
      _mm_prefetch(b + kPageAhead * stride, _MM_HINT_T0);
    }
    __m128i x[2 * q + 1];
    for (int64_t j = 0; j < q; ++j) x[j] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(a + 16 * j));
    x[q] = two_words(a + 16 * q, b);
    for (int64_t j = 0; j < q; ++j) x[q + 1 + j] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + 8 + 16 * j));
    for (int64_t j = 0; j < 2 * q + 1; ++j) _mm_storeu_si128(reinterpret_cast<__m128i*>(seq + 16 * j), x[j]);
  }
  if (i < count) std::memcpy(seq, reinterpret_cast<const char*>(p), W);
}
#endif

#if defined(__x86_64__)
// Gather of 64 B blocks whose source lies at multiples of 32 bytes: two 32-byte loads and stores
// a block, and the block kNear64Ahead blocks on asked for. Where the source lies 16 bytes past a
// multiple of 32, every other 32-byte load would straddle two lines, and the baseline's 16-byte
// moves stay. Measured at a9a2e65+ (probe, ddt_pack of a vector of 64 B blocks at stride 128, 2
// MiB in cache, fraction of memcpy, three runs, medians of 11, 16-byte moves -> this loop):
// line-aligned source 0.72-0.78 -> 0.85-1.04 (outputs 0 and 48 bytes past a line); source 32
// bytes past a line 0.63-0.68 -> 0.64-0.67. (The 16-byte moves ran a source 16 bytes past a line
// at 0.63-0.75, this loop's shape there 0.60-0.67: each block spans two lines, and the pack reads
// every line of twice the payload.)
constexpr int64_t kNear64Ahead = 8;
__attribute__((target("avx2"))) inline void gather64_avx2(char* seq, uintptr_t p, int64_t stride, int64_t count) {
  const uintptr_t far = kNear64Ahead * static_cast<uintptr_t>(stride);
  for (int64_t i = 0; i < count; ++i, seq += 64, p += static_cast<uintptr_t>(stride)) {
    if (i + kNear64Ahead < count) _mm_prefetch(reinterpret_cast<const char*>(p + far), _MM_HINT_T0);
    const __m256i a = load32(reinterpret_cast<const char*>(p)), b = load32(reinterpret_cast<const char*>(p + 32));
    store32(seq, a), store32(seq + 32, b);
  }
}
#endif

// count blocks of one width at a stride; run-time widths in [kMidMin, kMidMax) and [kWideMin,
// kWideMax) take the AVX2 loop where the CPU has it.
template <bool Gather, int64_t W>
inline void strided_blocks(char* seq, uintptr_t p, int64_t stride, int64_t w, int64_t count) {
#if defined(__x86_64__)
  if (W == 0 && ((w >= kWideMin && w < kWideMax) || (w >= kMidMin && w < kMidMax)) && have_avx2())
    return wide_blocks_avx2<Gather>(seq, p, stride, w, count);
#endif
#if defined(__x86_64__)
  if constexpr (Gather && W == 64)
    if (((p | static_cast<uintptr_t>(stride)) & 31) == 0 && have_avx2()) return gather64_avx2(seq, p, stride, count);
#endif
#if defined(__SSE2__)
  if constexpr (Gather && W >= 24 && W % 16 == 8) {
    gather_pairs<W>(seq, p, stride, count);
    return;
  }
#endif
  const int64_t width = W ? W : w;
#pragma GCC unroll 4
  for (int64_t i = 0; i < count; ++i) {
    move_block<Gather, W>(seq, reinterpret_cast<char*>(p), width);
    seq += width;
    p += static_cast<uintptr_t>(stride);
  }
}

// Dispatches a run of equal blocks to its kernel: the fixed widths are the plan's list.
template <bool Gather>
inline void run_blocks(char* seq, uintptr_t p, int64_t stride, int64_t w, int64_t count) {
  switch (w) {
#define DDT_CASE_(W) \
  case W: return strided_blocks<Gather, W>(seq, p, stride, w, count);
    DDT_KERNEL_WIDTHS(DDT_CASE_)
#undef DDT_CASE_
    default:
      return strided_blocks<Gather, 0>(seq, p, stride, w, count);
  }
}

// Gather or scatter of table entries e[0..) that all are block `node` of width W, at most max of
// them; stops at the first entry of another node and returns how many it moved. Finding the run
// and moving it is one pass over the entries.
template <bool Gather, int64_t W, class E>
inline int64_t table_blocks(char* seq, uintptr_t base, const E* e, int64_t w, int64_t max, int64_t node) {
  const int64_t width = W ? W : w;
  const auto one = [&](int64_t i) {
    move_block<Gather, W>(seq, reinterpret_cast<char*>(base + static_cast<uintptr_t>(e[i].disp)), width);
    seq += width;
  };
  int64_t i = 0;
  // Four entries per step when all four are this block: one branch instead of four.
  for (; i + 4 <= max && ((e[i].node ^ node) | (e[i + 1].node ^ node) | (e[i + 2].node ^ node) | (e[i + 3].node ^ node)) == 0; i += 4) {
    one(i);
    one(i + 1);
    one(i + 2);
    one(i + 3);
  }
  for (; i < max && e[i].node == node; ++i) one(i);
  return i;
}

// Table runs: the plan's list of table widths.
template <bool Gather, class E>
inline int64_t run_table(char* seq, uintptr_t base, const E* e, int64_t w, int64_t max, int64_t node) {
  switch (w) {
#define DDT_CASE_(W) \
  case W: return table_blocks<Gather, W>(seq, base, e, w, max, node);
    DDT_TABLE_WIDTHS(DDT_CASE_)
#undef DDT_CASE_
    default:
      return table_blocks<Gather, 0>(seq, base, e, w, max, node);
  }
}

// Non-temporal stores, for outputs far larger than the caches: a regular store first reads the
// line it writes (read-for-ownership), which adds a third stream of memory traffic to a strided
// copy; streaming stores skip it, as memcpy does at these sizes. Only the aligned middle of each
// block streams; heads and tails use ordinary moves. Callers fence once (stream_fence).
//
// Why the 512 B - 4 KiB dip of out-of-cache packing (0.47-0.58 of memcpy at 2932fb6), measured
// with /tmp-style probes of the same loops (64 MiB payload, stride 2 x block, fraction of
// memcpy, AMD EPYC, medians of 5): the 16-byte SSE streaming loop moved 512 B blocks at 0.54 and
// 4 KiB at 0.56, a 32-byte AVX2 streaming loop at 0.75 and 0.74, and the AVX2 loop with the
// source of the block four (512 B) or one (4 KiB) blocks ahead prefetched at 0.84 and 1.00. Two
// causes, both fixed here: the narrow store loop (twice the store instructions per line, and
// the write-combining buffers drain in halves), and the hardware prefetcher, which trains per
// stream and loses each block's first lines to a cold start when blocks are a few lines long and
// the gap between them is as long again. Unpacking (a contiguous source) needs no prefetch.
constexpr int64_t kPrefetchBytes = 4096;  // how far ahead, in source bytes, a strided gather prefetches

inline void stream_copy_sse(char* d, const char* s, int64_t n) {
#if defined(__SSE2__)
  int64_t head = (64 - (reinterpret_cast<uintptr_t>(d) & 63)) & 63;  // whole lines stream, or none of a line
  if (head > n) head = n;
  if (head) small_copy(d, s, head);
  d += head, s += head, n -= head;
  for (; n >= 64; n -= 64, d += 64, s += 64) {
    __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s));
    __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 16));
    __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 32));
    __m128i e = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 48));
    _mm_stream_si128(reinterpret_cast<__m128i*>(d), a);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + 16), b);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + 32), c);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + 48), e);
  }
  if (n) small_copy(d, s, n);  // the last partial line: ordinary stores
#else
  any_copy(d, s, n);
#endif
}

#if defined(__x86_64__)
// The same with 32-byte moves, for machines with AVX2 (chosen at run time: the library is built
// for the baseline x86-64, and the target attribute confines AVX2 to this function).
__attribute__((target("avx2"))) inline void stream_copy_avx2(char* d, const char* s, int64_t n) {
  int64_t head = (64 - (reinterpret_cast<uintptr_t>(d) & 63)) & 63;  // whole lines stream, or none of a line
  if (head > n) head = n;
  if (head) small_copy(d, s, head);
  d += head, s += head, n -= head;
  for (; n >= 64; n -= 64, d += 64, s += 64) {
    __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s));
    __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + 32));
    _mm256_stream_si256(reinterpret_cast<__m256i*>(d), a);
    _mm256_stream_si256(reinterpret_cast<__m256i*>(d + 32), b);
  }
  if (n) small_copy(d, s, n);  // the last partial line: ordinary stores
}
#endif

inline void stream_fence() {
#if defined(__SSE2__)
  _mm_sfence();
#endif
}

// When to stream is the plan's choice: plan.hpp's stream_stores, with the measurements it rests on.
//
// The strided source of a gather is prefetched kPrefetchBytes ahead for blocks under
// kPrefetchMaxWidth: above that the hardware prefetcher has a whole block to train on, and the
// extra instructions cost (probe: 64 KiB blocks 1.06-1.20 of memcpy without, 0.82-0.94 with).
constexpr int64_t kPrefetchMaxWidth = int64_t{16} << 10;
// Only the block's first kPrefetchHead bytes are prefetched: the cold start is at the block's
// head, and once its first lines have been asked for, the hardware prefetcher follows the rest of
// the block. A prefetch of every line of the block ahead spends load slots on lines the hardware
// fetches anyway. Measured at 2977323 (a probe of ddt_pack against AVX2 streaming loops, 64 MiB
// payload, stride 2 x block, line-aligned output, fraction of memcpy, two runs, medians of 7):
// whole block 1 KiB 0.54-0.63, 2 KiB 0.72-0.74, 4 KiB 0.66-0.72, 8 KiB 0.72-0.75; no prefetch
// 0.65-0.70, 0.73-0.83, 0.73-0.82, 0.86-0.88; the first 4 lines of the next block 0.76-0.78,
// 0.86-0.93, 0.85-0.99, 0.96-0.99 (glibc's memcpy per block 0.44-0.47, 0.50-0.52, 0.80-0.91,
// 0.89). (On the machine of the measurement above, whole-block prefetch had been the gain over
// none; the head alone removes the same cold start.)
constexpr int64_t kPrefetchHead = 512;
inline void prefetch_head(const char* block, int64_t w) {
#if defined(__SSE2__)
  for (int64_t l = 0; l < std::min(w, kPrefetchHead); l += 64) _mm_prefetch(block + l, _MM_HINT_T0);
#else
  (void)block, (void)w;
#endif
}

// Wide: with 32-byte streaming stores (the caller checked have_avx2). The AVX2 copy stays a call
// per block or per staged buffer: GCC does not inline target-specific code into these templates.
// Measured at 64-byte blocks into an aligned output: 0.80 of memcpy, against 1.0 for the same
// loop with the copy inlined; the empty head and tail copies it skips cost another 0.07.
template <bool Wide>
inline void stream_line_copy(char* d, const char* s, int64_t n) {
#if defined(__x86_64__)
  if (Wide) return stream_copy_avx2(d, s, n);
#endif
  stream_copy_sse(d, s, n);
}

// One streaming copy, the width chosen at run time (for single pieces: runs choose once per run).
inline void stream_copy(char* d, const char* s, int64_t n) {
#if defined(__x86_64__)
  if (have_avx2()) return stream_line_copy<true>(d, s, n);
#endif
  stream_line_copy<false>(d, s, n);
}

// Scatter (unpack) with streaming stores: each destination block streams its whole lines.
template <bool Wide>
inline void stream_scatter_loop(const char* seq, uintptr_t p, int64_t stride, int64_t w, int64_t count) {
  for (int64_t i = 0; i < count; ++i, seq += w, p += static_cast<uintptr_t>(stride))
    stream_line_copy<Wide>(reinterpret_cast<char*>(p), seq, w);
}

// Gather (pack) with streaming stores, for blocks of at least kStreamGatherMinWidth (plan.hpp
// says why not below). The output is one contiguous run, but its lines straddle two blocks
// wherever the blocks do not fall on line boundaries of the output (a width that is not a
// multiple of 64, or an output that malloc placed 16 bytes past a page): streaming each block's
// aligned middle would leave every such line part plain, part streamed, which costs a
// read-for-ownership and a partial write-combining flush per line. So the output is only ever
// written in whole aligned lines (the run's first and last partial lines aside, with ordinary
// stores): where every block is whole lines of the output (a width that is a multiple of 64 into
// a line-aligned output, as a staging buffer of the runtime's pool is) each block streams as it
// is; otherwise each block streams its inside lines straight from the source, and only the one
// line per block that straddles two blocks is assembled in a 64-byte buffer (4 KiB blocks: 0.97
// of memcpy; staged through an L1 buffer, the extra pass cost them 0.61). The loop works for any
// width, but pays a few branches per block: below ~1 KiB that is more than the block's copy.

template <bool Wide>
inline void stream_gather_loop(char* seq, uintptr_t p, int64_t stride, int64_t w, int64_t count) {
  const int64_t ahead = w < kPrefetchMaxWidth ? (kPrefetchBytes > w ? kPrefetchBytes / w : 1) : 0;
  int64_t i = 0, off = 0;  // the next stream byte: byte off of block i
  const auto source = [&] {
    return reinterpret_cast<const char*>(p + static_cast<uintptr_t>(i * stride) + static_cast<uintptr_t>(off));
  };
  const auto step = [&](int64_t k) {  // k bytes of block i consumed; at a block start, prefetch ahead
    off += k;
    if (off < w) return;
    off = 0, ++i;
#if defined(__SSE2__)
    if (ahead && i + ahead < count) {  // the source block `ahead` blocks on, a touch per line
      prefetch_head(reinterpret_cast<const char*>(p + static_cast<uintptr_t>((i + ahead) * stride)), w);
    }
#endif
  };
  const auto take = [&](char* dst, int64_t n) {  // the next n stream bytes into dst, ordinary moves
    while (n > 0) {
      const int64_t k = std::min(w - off, n);
      any_copy(dst, source(), k);
      dst += k, n -= k;
      step(k);
    }
  };
  int64_t left = w * count;
  if (w % 64 == 0 && (reinterpret_cast<uintptr_t>(seq) & 63) == 0) {  // every block is whole output lines
    for (; i < count; ++i, seq += w, p += static_cast<uintptr_t>(stride)) {  // a plain loop: no lambda per block
#if defined(__SSE2__)
      if (ahead && i + ahead < count) {
        prefetch_head(reinterpret_cast<const char*>(p + static_cast<uintptr_t>(ahead * stride)), w);
      }
#endif
      stream_line_copy<Wide>(seq, reinterpret_cast<const char*>(p), w);
    }
    return;
  }
  const int64_t head = std::min<int64_t>(left, (64 - (reinterpret_cast<uintptr_t>(seq) & 63)) & 63);
  take(seq, head);
  seq += head, left -= head;
  alignas(64) char line[64];
  while (left >= 64) {
    const int64_t inside = std::min(w - off, left) & ~int64_t{63};  // whole lines within block i
    if (inside > 0) {
      stream_line_copy<Wide>(seq, source(), inside);
      step(inside);
      seq += inside, left -= inside;
      continue;
    }
    take(line, 64);  // the line across two blocks
    stream_line_copy<Wide>(seq, line, 64);
    seq += 64, left -= 64;
  }
  take(seq, left);
}

// count blocks of width w at a stride, streaming; the AVX2 or the baseline loops, chosen once
// per run (an AVX2 copy called per block from baseline code cannot be inlined).
#if defined(__x86_64__)
template <bool Gather>
__attribute__((target("avx2"))) inline void stream_blocks_avx2(char* seq, uintptr_t p, int64_t stride, int64_t w,
                                                               int64_t count) {
  if (Gather)
    stream_gather_loop<true>(seq, p, stride, w, count);
  else
    stream_scatter_loop<true>(seq, p, stride, w, count);
}
#endif

#if defined(__SSE2__)
// Gather of small blocks of W = 4, 8, 16 or 32 bytes with streaming stores: each 64-byte line of
// the output is assembled in four registers from 64 / W blocks and streamed whole, so the output is
// never read for ownership (a quarter of the memory traffic of a strided gather of small blocks
// out of cache: source span, output read, output written). Blocks are moved plainly until the
// output reaches a line boundary, and after its last whole line; an output that never reaches
// one at a block boundary (placed at an odd multiple of W / 2, say) is moved plainly throughout.
template <int64_t W>
inline __m128i gather_word(uintptr_t p, int64_t stride) {  // the 16 output bytes of 16 / W blocks at p
  if constexpr (W == 16) {
    return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  } else if constexpr (W == 8) {
    return two_words(reinterpret_cast<const char*>(p), reinterpret_cast<const char*>(p + static_cast<uintptr_t>(stride)));
  } else {
    static_assert(W == 4, "gather_word: 4, 8 or 16 bytes");
    int32_t b[4];
    for (int k = 0; k < 4; ++k) std::memcpy(&b[k], reinterpret_cast<const char*>(p + static_cast<uintptr_t>(k * stride)), 4);
    return _mm_set_epi32(b[3], b[2], b[1], b[0]);
  }
}

template <int64_t W>
inline void stream_gather_lines(char* seq, uintptr_t p, int64_t stride, int64_t count) {
  int64_t i = 0;
  for (; i < count && (reinterpret_cast<uintptr_t>(seq) & 63); ++i, seq += W, p += static_cast<uintptr_t>(stride))
    std::memcpy(seq, reinterpret_cast<const char*>(p), W);
  constexpr int64_t per = 64 / W;  // blocks per output line
  for (; i + per <= count; i += per, seq += 64, p += static_cast<uintptr_t>(per * stride)) {
    __m128i v[4];
    if constexpr (W == 32) {  // two words of each of two blocks
      for (int k = 0; k < 4; ++k)
        v[k] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + static_cast<uintptr_t>((k / 2) * stride + (k % 2) * 16)));
    } else {
      for (int k = 0; k < 4; ++k) v[k] = gather_word<W>(p + static_cast<uintptr_t>(k * (16 / W) * stride), stride);
    }
    for (int k = 0; k < 4; ++k) _mm_stream_si128(reinterpret_cast<__m128i*>(seq + 16 * k), v[k]);
  }
  for (; i < count; ++i, seq += W, p += static_cast<uintptr_t>(stride)) std::memcpy(seq, reinterpret_cast<const char*>(p), W);
}
#endif

#if defined(__SSE2__)
// Gather of blocks of whole lines (a multiple of 64 bytes below kStreamGatherMinWidth: plan.hpp's
// stream_whole_line_width) into a line-aligned output (a staging buffer of the runtime's pool is one),
// streaming: every block is whole lines of the output, so no line mixes streamed and ordinary
// stores, and, in one loop with no call per block (stream_gather_loop's per-block work made
// streaming lose below 1 KiB), the source is prefetched kWholeLinesAhead bytes ahead, whole lines of
// the block that far on (the hardware prefetcher restarts at every block of a few lines).
// Measured in a probe (64 MiB payload, stride 2 x block, fraction of memcpy, three runs): 64 B
// blocks 0.78-0.90 through ddt_pack, against 0.53-0.74 with plain stores; 512 B 0.97-1.27 against
// 0.52-0.77.
constexpr int64_t kWholeLinesAhead = 2048;
inline int64_t whole_lines_ahead(int64_t stride) {  // kWholeLinesAhead in blocks, at least one
  return std::max<int64_t>(1, kWholeLinesAhead / std::max<int64_t>(1, stride < 0 ? -stride : stride));
}
// Line-aligned blocks whose gaps are whole lines no wider than the block, at a stride of at most
// kTouchGapMaxStride: each block's gap lines are prefetched as the block is copied, so the source
// is read as one dense run, which the hardware prefetcher follows far ahead, instead of runs of 1-3
// lines, at each of which it restarts; the ahead-prefetch of the blocks is then no use. It reads up
// to twice the bytes and wins where the blocks are a few lines. Measured at 0a58793+ (probe of this
// loop against the ahead-prefetch loop, 64 MiB payload, line-aligned source and output, fraction of
// memcpy, medians of 9, two to four runs; ddt_pack then): 64 B blocks at 128 B 0.84-1.01 against
// 0.58-0.73, 128 at 256 0.93-1.06 / 0.75-0.84 (ddt_pack's), 192 at 384 0.89 / 0.65, 128 at 192 and
// 192 at 256 level (1.14 / 1.09, 1.25 / 1.22); wider strides lose or tie: 256 at 512 0.72-0.81 /
// 0.75-0.87, 512 at 1024 0.42-0.44 / 0.82, 128 at 384 (a gap wider than the block) 0.73 / 0.80.
constexpr int64_t kTouchGapMaxStride = 384;
inline bool touch_gaps(uintptr_t p, int64_t stride, int64_t w) {
  return (p & 63) == 0 && stride > w && stride <= kTouchGapMaxStride && stride % 64 == 0 && stride - w <= w;
}
inline void stream_gather_whole_lines(char* seq, uintptr_t p, int64_t stride, int64_t w, int64_t count) {
  if (touch_gaps(p, stride, w)) {
    for (int64_t i = 0; i < count; ++i) {
      char* d = seq + i * w;
      const char* s = reinterpret_cast<const char*>(p + static_cast<uintptr_t>(i * stride));
      for (int64_t l = w; l < stride; l += 64) _mm_prefetch(s + l, _MM_HINT_T0);  // past the last block too: a prefetch never faults
      for (int64_t j = 0; j < w; j += 16)
        _mm_stream_si128(reinterpret_cast<__m128i*>(d + j), _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + j)));
    }
    return;
  }
  const int64_t ahead = whole_lines_ahead(stride);
  for (int64_t i = 0; i < count; ++i) {
    char* d = seq + i * w;
    const char* s = reinterpret_cast<const char*>(p + static_cast<uintptr_t>(i * stride));
    if (i + ahead < count)
      for (int64_t l = 0; l < w; l += 64) _mm_prefetch(s + ahead * stride + l, _MM_HINT_T0);
    for (int64_t j = 0; j < w; j += 16)
      _mm_stream_si128(reinterpret_cast<__m128i*>(d + j), _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + j)));
  }
}

// Whether the blocks at p, every stride bytes, leave whole lines untouched between them (a
// stride that is not a multiple of a line, or negative, counts as yes).
inline bool skips_lines(uintptr_t p, int64_t stride, int64_t w) {
  if (stride <= 0 || stride % 64 != 0) return true;
  const int64_t a = static_cast<int64_t>(p & 63);
  return (a + stride) / 64 > (a + w - 1) / 64 + 1;
}

// The same gather into an output at a multiple of 16 bytes past a line (malloc's large blocks lie
// 16 bytes past one), where the source's blocks leave no line between them untouched: every 16
// bytes of the output are 16 bytes of one block, so each output line is assembled in four
// registers and streamed whole (the output's first and last partial lines are stored plainly).
// Measured at 2977323+ (probe, ddt_pack, 64 MiB payload, stride 2 x block, fraction of memcpy,
// two runs, medians of 9; the kernel before it, plain stores, in brackets): 64 B blocks, output
// and source 16 bytes past a line (each block's two lines meet the next block's) 0.86-0.87
// [0.61-0.70]. Where blocks skip lines the hardware prefetcher restarts at each one: without a
// prefetch this loop ran 64 B from a line-aligned source at 0.49-0.58 [0.72-0.75]. With the head
// of the block kWholeLinesAhead bytes on prefetched at each block's start (ahead, in blocks;
// stream_blocks passes it for widths below kChunkPrefetchMaxWidth), 128-384 B blocks, output 16
// bytes past a line, three runs, source 16 past / line-aligned: 128 B 0.64-0.82 [0.53-0.64] / 0.73-0.95 [0.66-0.80],
// 256 B 0.72-0.81 [0.57-0.80] / 0.57-0.63 [0.57-0.63], 384 B 0.67-0.69 [0.60-0.61] / 0.58-0.69
// [0.57-0.64]; make bench's sweep (--full, 64 MiB) 128 B 0.59-0.64 -> 0.72-0.89 and 256 B 0.62-0.67
// -> 0.70-0.81 (a memcpy per block 0.48-0.58); 64 B from a line-aligned source, outputs 16 and 48
// past a line, three runs (b92b6e1): 0.49-0.65 against 0.53-0.59 plain, level. At 512 B the same
// loop ran 0.29-0.35 against 0.50, so from 512 B such outputs keep plain stores. (Line by line
// across two blocks with a call per block, an earlier attempt, ran 64 B at 0.47-0.54.)
constexpr int64_t kChunkPrefetchMaxWidth = 512;
inline void stream_gather_chunks(char* seq, uintptr_t p, int64_t stride, int64_t w, int64_t count, int64_t ahead = 0) {
  int64_t off = 0;  // the next 16 source bytes: byte off of the block at b
  uintptr_t b = p;
  const uintptr_t far = static_cast<uintptr_t>(ahead * stride);
  const uintptr_t last = p + static_cast<uintptr_t>((count - 1) * stride);
  const auto next = [&]() __attribute__((always_inline)) {  // (not inlined, it halved the speed)
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + static_cast<uintptr_t>(off)));
    if ((off += 16) == w) {
      off = 0, b += static_cast<uintptr_t>(stride);
      if (ahead && b + far <= last) prefetch_head(reinterpret_cast<const char*>(b + far), w);
    }
    return v;
  };
  int64_t left = w * count;
  for (; left > 0 && (reinterpret_cast<uintptr_t>(seq) & 63); left -= 16, seq += 16)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(seq), next());
  for (; left >= 64; left -= 64, seq += 64) {
    const __m128i v0 = next(), v1 = next(), v2 = next(), v3 = next();
    _mm_stream_si128(reinterpret_cast<__m128i*>(seq), v0);
    _mm_stream_si128(reinterpret_cast<__m128i*>(seq + 16), v1);
    _mm_stream_si128(reinterpret_cast<__m128i*>(seq + 32), v2);
    _mm_stream_si128(reinterpret_cast<__m128i*>(seq + 48), v3);
  }
  for (; left > 0; left -= 16, seq += 16) _mm_storeu_si128(reinterpret_cast<__m128i*>(seq), next());
}
#endif

template <bool Gather>
inline void stream_blocks(char* seq, uintptr_t p, int64_t stride, int64_t w, int64_t count) {
#if defined(__SSE2__)
  if (Gather) switch (w) {  // plan.hpp's stream_line_width
      case 4: return stream_gather_lines<4>(seq, p, stride, count);
      case 8: return stream_gather_lines<8>(seq, p, stride, count);
      case 16: return stream_gather_lines<16>(seq, p, stride, count);
      case 32:  // an output 16 bytes past a multiple of 32 never reaches a line at a block's start
        if ((reinterpret_cast<uintptr_t>(seq) & 31) == 16 && !skips_lines(p, stride, w))
          return stream_gather_chunks(seq, p, stride, w, count);
        return stream_gather_lines<32>(seq, p, stride, count);
    }
  if (Gather && stream_whole_line_width(w)) {
    if ((reinterpret_cast<uintptr_t>(seq) & 63) == 0) return stream_gather_whole_lines(seq, p, stride, w, count);
    if ((reinterpret_cast<uintptr_t>(seq) & 15) == 0) {
      if (!skips_lines(p, stride, w)) return stream_gather_chunks(seq, p, stride, w, count);
      if (w < kChunkPrefetchMaxWidth && stride > 0)
        return stream_gather_chunks(seq, p, stride, w, count, whole_lines_ahead(stride));
    }
    return run_blocks<true>(seq, p, stride, w, count);  // the plain kernels' width dispatch
  }
#endif
#if defined(__x86_64__)
  if (have_avx2()) return stream_blocks_avx2<Gather>(seq, p, stride, w, count);
#endif
  if (Gather)
    stream_gather_loop<false>(seq, p, stride, w, count);
  else
    stream_scatter_loop<false>(seq, p, stride, w, count);
}

#if defined(__x86_64__)
// Gather of count tiny blocks of width w at a short stride s (w < s <= 8): each 16-byte load
// holds m = 16 / s blocks, a byte shuffle (the plan's mask) packs them to the front, and a
// 16-byte store writes them (the bytes past m * w are overwritten by the next store). The
// vector loop runs while its load stays inside the bytes of the run (first block to the end of
// the last: gap bytes of under 16 bytes lie on pages the blocks themselves use) and its store
// inside the output; plain moves finish. Unpacking has no such kernel: a 16-byte store into the
// strided side would write the gaps, which belong to the user. Measured (make bench, vector of
// char, 2 MiB in cache, stride 2 x block, fraction of memcpy, several runs): 1 B 0.07 ->
// 0.54-1.03, 2 B 0.15 -> 0.52-0.60, 4 B 0.30 -> 0.54-0.62.
__attribute__((target("ssse3"))) inline void gather_shuffle(char* seq, uintptr_t p, int64_t s, int64_t w, int64_t count,
                                                           const uint8_t* mask, int m) {
  const __m128i k = _mm_loadu_si128(reinterpret_cast<const __m128i*>(mask));
  // Block i's vector step is allowed while its loads end inside the run (i s + 16 <= a + 16, a
  // the run's span less 16) and its store inside the output (i w + 16 <= b + 16): the last such
  // i is counted once, and the loops step pointers with no test but their count. With the two
  // conditions tested at every step instead (two multiplications and compares), ddt_pack of a
  // vector of char, 2 MiB in cache, stride 2 x block, moved 1 / 2 / 4 B blocks at 0.28-0.55 /
  // 0.29-0.48 / 0.28-0.46 of memcpy against 0.42-0.66 / 0.34-0.61 / 0.43-0.67 with this shape
  // (the two builds run alternately, 7 times each, medians of 41 calls; a probe of the bare loops
  // agreed: 0.31-0.49 against 0.48-0.69 at 4 B).
  const int64_t a = (count - 1) * s + w - 16, b = count * w - 16;
  const char* src = reinterpret_cast<const char*>(p);
  char* dst = seq;
  int64_t i = 0;
  if (m * w == 8 && a >= m * s && b >= 0) {  // two loads fill one store: 2m blocks per step
    const int64_t steps = std::min(a / s - m, b / w) / (2 * m) + 1;
    for (int64_t j = 0; j < steps; ++j, src += 2 * m * s, dst += 16) {
      const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src));
      const __m128i y = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + m * s));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(dst), _mm_unpacklo_epi64(_mm_shuffle_epi8(x, k), _mm_shuffle_epi8(y, k)));
    }
    i = steps * 2 * m;
  }
  if (a >= 0 && b >= 0) {  // one load, m blocks, per step
    const int64_t last = std::min(a / s, b / w);
    if (last >= i) {
      const int64_t steps = (last - i) / m + 1;
      for (int64_t j = 0; j < steps; ++j, src += m * s, dst += m * w)
        _mm_storeu_si128(reinterpret_cast<__m128i*>(dst),
                         _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src)), k));
      i += steps * m;
    }
  }
  for (; i < count; ++i) small_copy(seq + i * w, reinterpret_cast<const char*>(p + static_cast<uintptr_t>(i * s)), w);
}
// Clears the upper halves of the AVX registers. Code outside ddtkit (Open MPI's own copies, in
// its process) may leave them dirty; legacy-encoded SSE instructions, as gather_shuffle's, then
// pay a transition on the way in (measured: vector of char with 1-4 B blocks packed at 0.26-0.33
// of memcpy in Open MPI's benchmark process against 0.54 in MPICH's, the same code).
__attribute__((target("avx"))) inline void clear_upper_state() { _mm256_zeroupper(); }
inline bool have_ssse3() {
  static const bool yes = __builtin_cpu_supports("ssse3");
  return yes;
}
#endif


}  // namespace ddt
