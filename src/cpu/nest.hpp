// The executor of a Nest plan: up to kMaxNest + 1 strided dimensions (the element's and the
// count's) around one block, any byte range [lo, hi) of the stream.
//
// A range is cut as the walk cuts it, but over fixed arrays and with the block width fixed at
// compile time: at each level a partial first child, the whole children as one loop nest, a
// partial last child. Whole nests run with no call per block and no width test per block; a
// 2-level nest (rows of blocks, the DDTBench faces) is an explicit double loop. A call for one
// whole element (the common one) uses the plan's arrays as they are.
#pragma once
#include <algorithm>
#include <cstdint>

#include "cpu/copy_kernels.hpp"
#include "cpu/list.hpp"
#include "cpu/permute_avx512.hpp"
#include "plan/plan.hpp"

namespace ddt {

// The dimensions an executor runs: level 0 is a block of size[0] bytes, level j + 1 is n[j]
// instances of level j at stride s[j]; size[j] is the stream bytes of one instance of level j.
struct NestView {
  int dims;
  const int64_t *n, *s, *size;
};

// A plan's nest with the count of elements added as the outermost dimension (merged into the
// element's outermost one when the elements continue it).
struct NestShape {
  int dims = 0;
  int64_t n[kMaxNest + 1], s[kMaxNest + 1], size[kMaxNest + 2];

  NestShape(const Plan& p, int64_t count) {
    dims = p.dims;
    for (int j = 0; j < dims; ++j) n[j] = p.n[j], s[j] = p.s[j];
    size[0] = p.width;
    if (count > 1) {
      // Elements continue the outermost dimension when they start where its next copy would
      // (for a block: where the next byte would, and the nest is one block).
      if (dims > 0 && p.extent == n[dims - 1] * s[dims - 1])
        n[dims - 1] *= count;
      else if (dims == 0 && p.extent == p.width)
        size[0] = p.width * count;
      else
        n[dims] = count, s[dims] = p.extent, ++dims;
    }
    for (int j = 0; j < dims; ++j) size[j + 1] = size[j] * n[j];
  }
  NestView view() const { return {dims, n, s, size}; }
};

inline NestView view_of(const Plan& p) { return {p.dims, p.n, p.s, p.level_size}; }

// Moves stream bytes [lo, hi) of one instance of level `level` of the nest x placed at p, as a
// partial first child, whole children as one loop nest, and a partial last child: r.block(p, w)
// moves w bytes at p of one block, r.whole(level, p, stride, count) count whole instances of a
// level. Shared by the pack and unpack executor (NestRun) and the copy between twins (twin.hpp).
template <class Run>
void cut_range(Run& r, NestView x, int level, uintptr_t p, int64_t lo, int64_t hi) {
  if (level == 0) return r.block(p + static_cast<uintptr_t>(lo), hi - lo);
  const int64_t cs = x.size[level - 1], st = x.s[level - 1];
  const int64_t i = lo / cs, off = lo - i * cs;
  p += static_cast<uintptr_t>(i * st);
  if (off) {
    const int64_t end = std::min(cs, off + (hi - lo));
    cut_range(r, x, level - 1, p, off, end);
    lo += end - off;
    p += static_cast<uintptr_t>(st);
  }
  const int64_t k = (hi - lo) / cs;
  if (k > 0) {
    r.whole(level - 1, p, st, k);
    lo += k * cs;
    p += static_cast<uintptr_t>(k * st);
  }
  if (lo < hi) cut_range(r, x, level - 1, p, 0, hi - lo);
}

template <bool Gather, int64_t W, bool Stream>
struct NestRun {
  NestView x;
  char* seq;                   // the packed side; advances as bytes move
  const Plan* shuf = nullptr;  // the plan, where its shuffle or permute kernel moves the innermost runs
  bool permute = false;        // the permute kernel (else the shuffle)

  // count blocks at a stride: the permute or shuffle kernel where the plan chose it for this stride.
  void blocks(uintptr_t p, int64_t stride, int64_t w, int64_t count) {
#if defined(__x86_64__)
    if (permute && permute_run(*shuf, Gather, stride, w, count))
      return permute_blocks<Gather>(seq, p, stride, w, count, *shuf);
    if (Gather && shuf && stride == shuf->shuffle_stride && count > shuf->shuffle_blocks) {
      if (have_avx2()) clear_upper_state();  // its SSE code must not start on dirty AVX state
      return gather_shuffle(seq, p, stride, w, count, shuf->shuffle_mask, shuf->shuffle_blocks);
    }
#endif
    strided_blocks<Gather, W>(seq, p, stride, w, count);
  }

  void block(uintptr_t p, int64_t w) {
    char* at = reinterpret_cast<char*>(p);
    if (Stream)
      Gather ? stream_copy(seq, at, w) : stream_copy(at, seq, w);
    else
      Gather ? any_copy(seq, at, w) : any_copy(at, seq, w);
    seq += w;
  }

  // count whole instances of level `level` at the given stride.
  void whole(int level, uintptr_t p, int64_t stride, int64_t count) {
    const int64_t w = x.size[0];
    if (level == 0) {
      if (Stream)
        stream_blocks<Gather>(seq, p, stride, w, count);
      else
        blocks(p, stride, w, count);
      seq += w * count;
      return;
    }
    const int64_t in = x.n[level - 1], is = x.s[level - 1];
    if (level == 1 && !Stream) {  // rows of blocks
      const int64_t row = in * w;
      for (int64_t i = 0; i < count; ++i, p += static_cast<uintptr_t>(stride), seq += row) blocks(p, is, w, in);
      return;
    }
    for (int64_t i = 0; i < count; ++i, p += static_cast<uintptr_t>(stride)) whole(level - 1, p, is, in);
  }

  // Stream bytes [lo, hi) of one instance of level `level` placed at p.
  void range(int level, uintptr_t p, int64_t lo, int64_t hi) { cut_range(*this, x, level, p, lo, hi); }
};

// Moves stream bytes [lo, hi) of the nest placed at base between the buffer and seq.
template <bool Gather, int64_t W, bool Stream>
inline void run_nest(NestView x, uintptr_t base, int64_t lo, int64_t hi, char* seq, const Plan* shuf, bool permute) {
  NestRun<Gather, W, Stream> r{x, seq, shuf, permute};
  const int d = x.dims;
  if (lo == 0 && hi == x.size[d] && d > 0)
    r.whole(d - 1, base, x.s[d - 1], x.n[d - 1]);
  else
    r.range(d, base, lo, hi);
}

// One whole element of a nest of at most two dimensions, not streamed and with no shuffle
// kernel: the loops straight from the plan, with no view, no range cutting and no recursion.
// This is the call DDTBench's small faces make (0.5-13 KB, a dozen to a few hundred rows), where
// the fixed cost of a call is a large part of the whole. The kernels, in plan.hpp's numbering
// (plain_index), each move one whole element of their plan and return 0 (DDT_SUCCESS), so that
// an entry point can end in the call.
using PlainKernel = int (*)(const Plan&, uintptr_t base, char* seq);

template <bool Gather>
int plain_copy(const Plan& p, uintptr_t base, char* seq) {
  char* at = reinterpret_cast<char*>(base);
  Gather ? one_copy(seq, at, p.size) : one_copy(at, seq, p.size);
  return 0;
}

template <bool Gather, int64_t W, int Dims>
int plain_kernel(const Plan& p, uintptr_t base, char* seq) {
  if (Dims == 1) {
    strided_blocks<Gather, W>(seq, base, p.s[0], p.width, p.n[0]);
    return 0;
  }
  const int64_t row = p.n[0] * p.width;
  for (int64_t i = 0; i < p.n[1]; ++i, seq += row, base += static_cast<uintptr_t>(p.s[1]))
    strided_blocks<Gather, W>(seq, base, p.s[0], p.width, p.n[0]);
  return 0;
}

template <bool Gather>
int plain_parts(const Plan& p, uintptr_t base, char* seq);

// A nest of one or two dimensions whose rows take the permute kernel (plan.hpp's kPlainPermute:
// chosen by the plan only where the CPU has it, for this direction and size).
template <bool Gather>
int plain_permute(const Plan& p, uintptr_t base, char* seq) {
#if defined(__x86_64__)
  const int64_t row = p.n[0] * p.width, rows = p.dims == 1 ? 1 : p.n[1];
  for (int64_t i = 0; i < rows; ++i, seq += row, base += static_cast<uintptr_t>(p.s[1]))
    permute_blocks<Gather>(seq, base, p.s[0], p.width, p.n[0], p);
#else
  (void)p, (void)base, (void)seq;
#endif
  return 0;
}

// A List plan's whole element, every segment a run of blocks (plan.cpp gives the plan this
// kernel only then): list.hpp's executor, which walks no entry of such a plan.
template <bool Gather>
int plain_list(const Plan& p, uintptr_t base, char* seq) {
  auto walk_none = [](int64_t, uintptr_t, char* s) { return s; };
  list<Gather>(p, 1, base, 0, p.size, seq, walk_none);
  return 0;
}

template <bool Gather>
inline constexpr PlainKernel plain_kernels[kPlainKernels + 3] = {
    plain_copy<Gather>,
#define DDT_ENTRY_(W) plain_kernel<Gather, W, 1>, plain_kernel<Gather, W, 2>,
    DDT_KERNEL_WIDTHS(DDT_ENTRY_)
#undef DDT_ENTRY_
    plain_kernel<Gather, 0, 1>, plain_kernel<Gather, 0, 2>,
    plain_parts<Gather>, plain_list<Gather>, plain_permute<Gather>};

// A Parts plan's whole element: each part, at its displacement from the element, by its own
// plain kernel (plan.cpp gives the plan this kernel only where every part has one); the parts
// follow one another in the stream.
template <bool Gather>
int plain_parts(const Plan& p, uintptr_t base, char* seq) {
  for (const Plan& q : p.parts) {
    plain_kernels<Gather>[q.plain[Gather]](q, base + static_cast<uintptr_t>(q.disp), seq);
    seq += q.size;
  }
  return 0;
}

// A whole element, where the plan runs it plainly; false (nothing moved) where it does not.
template <bool Gather>
inline bool small_nest(const Plan& p, uintptr_t base, char* seq) {
  if (p.plain[Gather] < 0) return false;
  plain_kernels<Gather>[p.plain[Gather]](p, base, seq);
  return true;
}

// The width dispatch, once per call: the plan's kernel width, or streaming stores, chosen by the
// output bytes out (the range's, or the whole transfer's it is a share of: execute.cpp's move).
template <bool Gather>
inline void nest(const Plan& p, NestView x, uintptr_t base, int64_t lo, int64_t hi, char* seq, int64_t out = 0) {
  const int64_t bytes = std::max(out, hi - lo);
  if (stream_stores(bytes, p.width, Gather)) return run_nest<Gather, 0, true>(x, base, lo, hi, seq, nullptr, false);
  const Plan* shuf = nullptr;
  bool permute = false;
#if defined(__x86_64__)
  if (p.permute_blocks[Gather] && x.dims > 0 && x.size[0] == p.width && x.s[0] == p.permute_stride &&
      (!Gather || permute_gather(p, bytes)))
    shuf = &p, permute = true;
  else if (Gather && p.shuffle_stride && x.dims > 0 && x.s[0] == p.shuffle_stride && have_ssse3())
    shuf = &p;
#endif
  switch (p.kernel_width) {
#define DDT_CASE_(W) \
  case W: return run_nest<Gather, W, false>(x, base, lo, hi, seq, shuf, permute);
    DDT_KERNEL_WIDTHS(DDT_CASE_)
#undef DDT_CASE_
    default: return run_nest<Gather, 0, false>(x, base, lo, hi, seq, shuf, permute);
  }
}

}  // namespace ddt
