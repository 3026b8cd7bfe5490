// Plans: how a committed type moves, chosen once (at commit, or at first use of a type that
// never passed through commit, such as a deserialized one) and kept with the type. A call then
// checks its arguments and runs the plan, with no walk set-up in between.
//
// The plan is data, not code: src/cpu/ (and later the GPU executors and the NIC model) map it to
// their kernels. Every choice an executor makes is taken here, with its cost model beside it:
//
//   shape      what one element of the layout is, seen from the executor (see Shape below);
//   width      which fixed-width kernel moves a block (DDT_KERNEL_WIDTHS below);
//   streaming  whether outputs use non-temporal stores (stream_stores()).
//
// Cost model of the shape choice (measured with make bench's DDTBench suite at 2932fb6: small
// types of 0.5-13 KB lost 5-30 % to the hand loop, and the time went to the walk's set-up and
// to one recursive call and one width switch per row, not to copying):
//   * Nest: one loop nest per call, the width switch once per call. A nest is the common case
//     (vector, subarray, every DDTBench face) and the canonical form guarantees that adjacent
//     dimensions that could merge have merged, so the nest is as shallow as the layout allows.
//   * Rows: the element is a short table of blocks (a struct of a few members, the
//     Carpen-Amarie bucket/alternating units): a double loop over a copy of its (displacement,
//     width) pairs, kept in the plan so that a call does not re-read the table.
//   * List: a long root table (an index list: indexed_block, hindexed_block, indexed of one
//     block length; a struct of such lists) loops over a plain array of displacements, one
//     fixed-width loop per run of equal blocks (below).
//   * Parts: the element is a short table of nests (a struct of a few vectors or subarrays, as
//     the 4D edge of seed 004 built as one struct of both matrices' elements): one nest call per
//     entry, over the entry's own plan. The walk would visit every block with a recursive call
//     and a width switch per run; the same layout built as two vector types packed one after the
//     other ran as two Nest calls, and the struct was 1.14-1.16x slower (make bench at ba16ec2),
//     which broke the performance-portability promise (one layout, one speed).
//   * Walk: everything else goes to the seekable walk, whose table runs are width-specialised
//     per run (tables are long: the per-run switch is amortised over the run).
#pragma once
#include <cstdint>
#include <vector>

#include "layout/layout.hpp"
#include "type/type.hpp"

namespace ddt {

enum class Shape : uint8_t {
  Empty,  // no data
  Nest,   // up to kMaxNest strided dimensions around one block (a block alone is a nest of 0)
  Rows,   // a short table of blocks
  Parts,  // a short table of nests, one Nest plan per entry
  List,   // a long table, mostly of blocks: displacements and runs of one width
  Walk,   // the general walk
};

constexpr int kMaxNest = 4;      // element dimensions; the count of elements adds one per call
constexpr int kRowsMax = kShortTable;  // entries of a Rows table (layout.hpp's short tables)

struct Plan {
  Shape shape = Shape::Walk;
  int64_t disp = 0;   // of the layout's root, from the buffer
  int64_t size = 0;   // packed bytes of one element
  int64_t extent = 0;
  // Nest: dimension j (0 innermost) is n[j] copies at stride s[j] of dimension j-1, dimension
  // -1 being a block of `width` bytes.
  int dims = 0;
  int64_t width = 0;
  int64_t n[kMaxNest] = {}, s[kMaxNest] = {};
  int64_t level_size[kMaxNest + 1] = {};  // stream bytes of one instance of level j (0: a block)
  // Rows: an element is row_n rows at row_stride (1 row when the table is the root), a row is
  // `rows` entries, entry j a block of rwidth[j] bytes at rdisp[j]. However the short table was
  // built (a struct, a resized unit times a count, a contiguous of it, one long indexed list that
  // canonicalises to a VEC of it), whole calls run one loop over all rows.
  int rows = 0;
  int64_t row_n = 1, row_stride = 0;
  int64_t rdisp[kRowsMax] = {}, rwidth[kRowsMax] = {};
  // Parts: entry j of the root table is parts[j], a Nest plan whose disp is the entry's
  // displacement from the root and whose bytes start at stream offset part_offset[j] of the
  // element. (A vector of an incomplete type is allowed as a member since C++17.)
  std::vector<Plan> parts;
  std::vector<int64_t> part_offset;
  // The width the executor's fixed-width kernel is built for (0: the run-time width kernel).
  int64_t kernel_width = 0;
  // A whole element (count 1, every byte) of a Nest of at most two dimensions that needs neither
  // streaming stores nor the shuffle kernel runs as one plain loop nest (a contiguous block: one
  // copy), one of a Parts plan of such nests as their loop nests in turn (kPlainParts), and one of
  // a List plan of blocks as its runs in turn (kPlainList), straight from the entry point's
  // checks: plain[1] for pack (gather), plain[0] for unpack, is the executor's kernel for it
  // (plain_index below, kPlainParts, kPlainList), or -1. Decided here once,
  // because the call it serves is short: DDTBench's small faces of 0.5-13 KB, where the entry
  // point's work before the first byte moves (argument checks, plan lookup, shape and width
  // dispatch: 190 instructions for a 40-byte block, callgrind at 9b9e2af) was as long as the
  // copy.
  int8_t plain[2] = {-1, -1};
  // A Nest of two dimensions whose outer one is contiguous (s[1] == width) and whose inner one
  // strides at least a line, for widths that tile a line (4, 8, 16, 32 B) and at least a tile of
  // columns: the grid of a transpose, which runs in tiles (cpu/tile.hpp, with the measurements).
  // The width, else 0. Such a plan has no plain kernel (plain is -1).
  int64_t tile = 0;
  // List: an element is the root table's entries, entry i at list[i] (int32 where every
  // displacement fits, which is the index lists of applications; else list64), cut into
  // segments: runs of entries that are one block (width > 0), and single entries of any other
  // node (width 0: walked). One segment of blocks is a uniform list, which any byte range can
  // seek by division (`width` is then its block width). A table entry is 16 bytes
  // (displacement and node, layout.hpp): an index-list gather of 4-byte blocks read four times
  // the metadata of the application's own loop over an int array (SPECFEM3D_oc: 0.82 of the
  // hand loop at 2932fb6), and checked the node of every entry. The plan keeps the list as the
  // loop needs it.
  struct Segment {
    int64_t first, count, width, node;
  };
  std::vector<Segment> segments;
  std::vector<int32_t> list;
  std::vector<int64_t> list64;
  bool uniform_list() const { return segments.size() == 1 && segments[0].width > 0; }
  bool blocks_only = false;  // every segment a run of blocks (no walked entry): any range is listed
  // Packing tiny blocks that lie close together (width < stride <= 8): one 16-byte load, a byte
  // shuffle and one store move 16 / stride blocks (SSSE3, where the CPU has it). Chosen for the
  // innermost stride a call will see: the nest's, or for a nest of one block, the extent.
  // Measured: copy_kernels.hpp's gather_shuffle.
  int64_t shuffle_stride = 0;  // 0: no shuffle kernel
  int shuffle_blocks = 0;      // blocks per 16-byte load
  uint8_t shuffle_mask[16] = {};
  // Tiny blocks at a short stride on CPUs with AVX-512 VBMI (permute_avx512.hpp), for both
  // directions: a pack moves permute_blocks[1] blocks from a window of 128 source bytes into 64
  // packed bytes with one two-register byte permute (permute_index[1][j]: the window byte that
  // becomes packed byte j); an unpack moves permute_blocks[0] blocks from 64 packed bytes into a
  // window of 64 destination bytes with a one-register permute (permute_index[0][j]: the packed
  // byte that lands on window byte j) and a store under permute_mask (the window's block bytes),
  // which writes no gap byte; a copy into the same layout (twin.hpp) reads and writes windows
  // under that mask. Chosen for the innermost stride a call will see, as the shuffle is (width
  // <= 12, width < stride <= 64, at least 4 blocks a pack step); permute_blocks[0] is 0 where
  // unpacks and copies keep the plain moves (fewer than 4 blocks a step, 3 for blocks of more
  // than 8 bytes); permute_stride 0: not chosen. Measured beside the decision (plan.cpp).
  // Both kernels may be chosen: a pack of kPermuteGatherMaxBytes or more takes the shuffle
  // (permute_gather below).
  int64_t permute_stride = 0;
  int permute_blocks[2] = {};
  uint64_t permute_mask = 0;
  uint8_t permute_index[2][64] = {};
  // What callers may ask without walking (ddt_type_blocks): the contiguous blocks of one
  // element in the canonical layout (saturating at INT64_MAX), and whether they lie at
  // ascending addresses without overlap. The canonical form merges blocks that touch, so one
  // block means the element is contiguous.
  int64_t blocks = 0;
  bool ascending = true;
};

// The fixed block widths that get a kernel of their own (a straight-line move with no length
// test per block). These are the widths DDTBench and the sweep move (1..64 B); other widths up
// to 64 B use two overlapping moves and wider ones memcpy. The list is the executors': pack and
// unpack instantiate exactly these.
#define DDT_KERNEL_WIDTHS(X) X(1) X(2) X(3) X(4) X(6) X(8) X(12) X(16) X(20) X(24) X(32) X(40) X(48) X(64)
// Table runs (index lists) get their own shorter list: the element sizes of index lists, 1-32 B;
// a table run is found entry by entry, so a longer list buys nothing measurable.
#define DDT_TABLE_WIDTHS(X) X(1) X(2) X(4) X(8) X(12) X(16) X(24) X(32)
inline int64_t kernel_width(int64_t w) {
  switch (w) {
#define DDT_CASE_(W) case W: return W;
    DDT_KERNEL_WIDTHS(DDT_CASE_)
#undef DDT_CASE_
    default: return 0;
  }
}

// The plain whole-element kernels (Plan::plain), numbered: 0 one contiguous copy; then, for each
// width of DDT_KERNEL_WIDTHS in order and last the run-time width, a nest of one dimension and
// one of two. The executors keep a table in this order (cpu/nest.hpp's plain_kernels).
constexpr int kPlainWidths = 0
#define DDT_COUNT_(W) +1
    DDT_KERNEL_WIDTHS(DDT_COUNT_)
#undef DDT_COUNT_
    ;
constexpr int kPlainKernels = 1 + 2 * (kPlainWidths + 1);
// After them, one more: a Parts plan whose every part has a plain kernel runs its parts' kernels
// one after another (the 4D edge built as one struct of both matrices' elements packed 1.09-1.14x
// slower through the general entry than the same layout built as two vectors packed by two plain
// calls: 6 KB, N=10, one process, medians of 41).
constexpr int kPlainParts = kPlainKernels;
// And a List plan of runs of blocks only (every index list, a struct of lists of blocks): its
// runs' loops in turn, with no range cutting (SPECFEM3D_oc's 493 to 3,225 floats by an index
// list, LAMMPS's per-atom lists: 0.1-3 us calls, where the general entry's checks and dispatch
// were a tenth of the hand loop's time).
constexpr int kPlainList = kPlainKernels + 1;
// And a nest of one or two dimensions whose rows take the permute kernel (Plan::permute_stride):
// an entry of its own, chosen here once, so that the other plain kernels test nothing per call.
constexpr int kPlainPermute = kPlainKernels + 2;
// Runs of fewer blocks take the plain moves (a few moves, no permute index to load).
constexpr int64_t kPermuteMinBlocks = 4;
inline int plain_index(int64_t width, int dims) {
  if (dims == 0) return 0;
  int k = 0;
#define DDT_FIND_(W) \
  if (width == W) return 1 + 2 * k + dims - 1; \
  ++k;
  DDT_KERNEL_WIDTHS(DDT_FIND_)
#undef DDT_FIND_
  return 1 + 2 * k + dims - 1;
}

// Non-temporal stores pay off once the output no longer fits the last-level cache, for blocks
// of a whole line and more (below a line a streaming store writes a partial line, which the
// memory controller must merge), and, when packing, only for blocks of kStreamGatherMinWidth
// and more. Measured on e7feffe's kernels with the bench sweep (64 MiB payload, stride 2 x block,
// fraction of memcpy, every method run once untimed before each timed call, MPICH's and Open
// MPI's processes; and a probe of the same two kernels side by side, sources 0 and 16 bytes past
// a line):
//   pack, streamed / plain stores: 64 B 0.56-0.64 / 0.72-0.74 (bench; probe 0.66-1.00 /
//     0.69-0.93), 512 B 0.57-0.78 / 0.68-0.76 (probe 0.79-0.91 / 0.77-0.90), 1 KiB 0.90-0.97 /
//     0.79-0.84, 2 KiB 1.04-1.08 / 0.76-0.81, 4 KiB 0.99-1.40 / 0.82-0.94, 64 KiB 1.66-2.10 /
//     1.04-1.16. Below 1 KiB a streamed gather is no faster and often slower: its output must be
//     assembled in whole lines (copy_kernels.hpp), and the per-block work of doing so costs more
//     than the read-for-ownership it saves;
//   unpack (the strided side is the output): streamed 0.54-0.79 / plain 0.59-0.82 at 64 B, from
//     256 B on 1.19-2.08 / 0.60-1.12.
// Gathers of 4, 8 and 16 B blocks stream too, each output line assembled in registers from whole
// blocks (copy_kernels.hpp's stream_gather_lines), with none of the per-block work that made
// streaming lose below 1 KiB. Measured (vector of char, 64 MiB payload, stride 2 x block,
// fraction of memcpy, settled samples, medians of 5; plain stores, then streamed in three runs):
// 4 B 0.58 / 0.60-0.62, 8 B 0.61 / 0.71-0.75, 16 B 0.57 / 0.77-0.79; 32 B 0.69 / 0.64-0.75 and
// 64 B 0.70 / 0.64-0.66 (no gain then, not streamed). Blocks under 4 bytes go to the shuffle
// kernel. 32 B streams since 2977323+: measured again (probe, ddt_pack, three runs, medians of 7,
// outputs and sources 0 or 16 bytes past a line) plain stores ran 0.60-0.72 and a memcpy call per
// block 0.62-0.80, streamed 0.85-1.01 (an output 16 bytes past a multiple of 32 by
// stream_gather_chunks, which the whole-line widths below use too).
constexpr int64_t kStreamBytes = int64_t{16} << 20;
constexpr int64_t kStreamMinWidth = 64;
constexpr int64_t kStreamGatherMinWidth = 1024;
inline bool stream_line_width(int64_t w) { return w == 4 || w == 8 || w == 16 || w == 32; }
// Gathers of blocks of whole lines below 1 KiB stream too into a line-aligned output, and into
// one at a multiple of 16 bytes where the source's blocks skip no line or the blocks are under
// 512 B (copy_kernels.hpp's stream_gather_whole_lines and stream_gather_chunks, measurements
// there); otherwise they take plain stores.
inline bool stream_whole_line_width(int64_t w) { return w >= kStreamMinWidth && w < kStreamGatherMinWidth && w % 64 == 0; }
// Whether blocks of this width stream, once the output is past kStreamBytes (the walk asks per run).
inline bool stream_width(int64_t width, bool gather) {
  return width >= (gather ? kStreamGatherMinWidth : kStreamMinWidth) ||
         (gather && (stream_line_width(width) || stream_whole_line_width(width)));
}
// Whether a pack of output_bytes takes the plan's permute kernel: below kPermuteGatherMaxBytes.
// Out of cache its 64-byte loads, which straddle two lines where the source is not aligned to
// one, lost to the SSSE3 shuffle and the plain moves (measured in plan.cpp).
constexpr int64_t kPermuteGatherMaxBytes = kStreamBytes;
inline bool permute_gather(const Plan& p, int64_t output_bytes) {
  return p.permute_blocks[1] && output_bytes < kPermuteGatherMaxBytes;
}
// Whether a run of count blocks of w bytes at stride takes the plan's permute kernel in this
// direction (asked per run by the executors that were handed the plan: nest.hpp, cursor.hpp, and
// twin.hpp with the unpack direction's mask).
inline bool permute_run(const Plan& p, bool gather, int64_t stride, int64_t w, int64_t count) {
  return p.permute_blocks[gather] && stride == p.permute_stride && w == p.width && count >= kPermuteMinBlocks;
}
inline bool stream_stores(int64_t output_bytes, int64_t width, bool gather) {
  return output_bytes >= kStreamBytes && stream_width(width, gather);
}
// A copy between two layouts of one shape (cpu/twin.hpp: each block to the same place in the
// other) streams its destination blocks from kStreamTwinMinWidth. Measured between two processes
// (2 ranks, a vector of 16 MiB at stride 2 x block through the mapped heap, RGET: the receiver's
// one copy; round trips of one protocol in a row, two runs, GB/s plain / streamed): 64 B
// 3.0 / 2.7-3.5 (64 MiB: 3.0 / 2.8-2.9), 128 B 2.6 / 3.8, 256 B 2.7-3.0 / 3.9-4.9, 512 B
// 3.5-3.7 / 7.8-8.4, 4 KiB 9.2-11.7 / 14.6-14.7, 16 KiB 9.1-9.7 / 15.3-15.7; COOP-p2p (two
// shares, footprint 16 MiB) 512 B 12.0-13.8 / 22.7-24.2, 16 KiB 23.2-24.7 / 30.6-30.8.
constexpr int64_t kStreamTwinMinWidth = 128;
inline bool stream_twin(int64_t output_bytes, int64_t width) {
  return output_bytes >= kStreamBytes && width >= kStreamTwinMinWidth;
}

// Whether a Nest of two dimensions is the grid of a transpose (Plan::tile).
inline bool transposed_grid(int dims, int64_t width, const int64_t n[], const int64_t s[]) {
  const bool tiles_a_line = width == 4 || width == 8 || width == 16 || width == 32;
  return dims == 2 && tiles_a_line && s[1] == width && (s[0] >= 64 || s[0] <= -64) && n[1] >= 64 / width;
}

// Builds the plan of a layout with the given extent (pure; for tests and for plan_of).
Plan make_plan(const Layout& L, int64_t extent);

// The plan of a committed type: built once and kept with it (thread-safe: racing first uses
// build it twice and keep one). The common case, a plan that exists, is one load.
const Plan& build_plan(ddt_type_s* t);
inline const Plan& plan_of(ddt_type_s* t) {
  if (const void* p = t->plan.load(std::memory_order_acquire)) return *static_cast<const Plan*>(p);
  return build_plan(t);
}

}  // namespace ddt
