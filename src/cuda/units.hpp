// The GPU executors' unit of work, compiled for the device (nvcc) and for the host (any C++
// compiler), so that the same code that runs in the kernels is tested without a GPU: the host
// emulation in tests/cuda/units_test.cpp runs every unit of a call on the CPU and compares the
// bytes with the CPU executors.
//
// A call moves stream bytes [lo, hi) of (buf, count, layout) between the typed buffer and a
// packed one. It is cut into units of G bytes, G the stream's grain: the largest power of two (at
// most 16) that divides every block's size, lo, hi and the packed address, so that no unit
// straddles two blocks. Each unit is one aligned load and one aligned store of G bytes on the
// packed side, and G / T words of T bytes on the typed side, T the largest power of two (at most
// G) that also divides every block's address (Bits, below). Unit u is found from nothing but its
// stream position lo + u * G: a seek, the canonical layout's O(depth + log n) promise
// (layout.hpp). Threads take units by index, so that consecutive threads touch consecutive packed
// bytes (coalesced on the packed side, and on the typed side within each block), and no thread
// depends on another: any range, any depth, any count, 64-bit positions.
//
// Three locators turn a stream position into a byte offset from the buffer:
//   NestLoc  a plan of Shape::Nest (plan.hpp: up to kMaxNest strided dimensions around one
//            block, the vectors, subarrays and DDTBench faces): one division per dimension (a
//            multiply: Divider), the dimensions held in the kernel's parameters, no memory read;
//   TreeLoc  any layout: the seek of cursor.hpp over the layout's own arrays (uploaded to the
//            device once per layout, src/cuda/layouts.cpp): a division at each VEC and at each
//            SEQ of equal entries, and at any other SEQ a search of the prefix sums that starts
//            where the entry's mean size predicts (HAND's table kernel: an indexed type is a
//            SEQ, and each unit finds its block in the table's prefix sums);
//   ListLoc  a uniform index list (indexed_block and its kin), or the flat list of an element's
//            blocks when they all have one width (flatten): a division and one load.
#pragma once
#include <sys/uio.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "layout/layout.hpp"
#include "plan/plan.hpp"

#if defined(__CUDACC__)
#define DDT_HD __host__ __device__ __forceinline__
#else
#define DDT_HD inline
#endif

namespace ddt::gpu {

constexpr int64_t kMaxGrain = 16;

// The lowest set bit of x capped at kMaxGrain: the largest power of two <= 16 dividing x (in
// two's complement, so negative strides and displacements count by their magnitude).
DDT_HD int64_t grain_of(uint64_t x) {
  x |= static_cast<uint64_t>(kMaxGrain);
  return static_cast<int64_t>(x & (~x + 1));
}

// What limits the grain, in two parts. stream: the block sizes (and, per call, lo, n and the
// packed address), which a unit must divide so that it never straddles two blocks; typed: the
// blocks' addresses (displacements, strides, the extent, the typed buffer's address), which set
// the alignment of a unit's bytes in the typed buffer. A pack cuts its stream into units of
// G = grain_of(stream) bytes and loads each with typed loads of T = min(G, grain_of(typed))
// bytes (kernels.cu): a nest of 8-byte-aligned 4 KiB blocks moves 16 bytes a unit in two 8-byte
// halves instead of 8 bytes a unit. An unpack moves units of T (kernels.cu's launch_move says
// why). A copy has two typed sides and moves units of grain_of(all()).
struct Bits {
  uint64_t stream = 0, typed = 0;
  Bits& operator|=(const Bits& o) {
    stream |= o.stream, typed |= o.typed;
    return *this;
  }
  uint64_t all() const { return stream | typed; }
};

// The grain bits of a layout's blocks: sizes (stream), strides and displacements (typed); not
// its position, nor the extent: side_of adds those per call. O(nodes + entries): kept with a
// layout's upload (layouts.hpp), not computed per call.
inline Bits layout_bits(const Layout& L) {
  Bits bits;
  for (const Node& n : L.nodes) {
    if (n.kind == Kind::Block) bits.stream |= static_cast<uint64_t>(n.size);
    if (n.kind == Kind::Vec) bits.typed |= static_cast<uint64_t>(n.stride);
  }
  for (const Entry& e : L.entries) bits.typed |= static_cast<uint64_t>(e.disp);
  return bits;
}

// Division by a divisor fixed before the launch, as a multiply (Granlund and Montgomery, "Division
// by invariant integers using multiplication", PLDI 1994, the round-up method): a GPU has no
// integer divider, and a 64-bit division is a software routine of about a hundred instructions,
// one or more per unit and level, which would make a pack of small blocks compute-bound. With
// s = ceil(log2 d) and m = floor(2^64 (2^s - d) / d) + 1 (which fits 64 bits for d < 2^63),
// floor(n / d) = (mulhi(m, n) + n) >> s for every n < 2^63: the sum stays below 2^64 because
// mulhi(m, n) <= n. Stream positions are below 2^63 (64-bit sizes, checked at the API).
struct Divider {
  uint64_t d = 1, m = 1;
  uint32_t s = 0;
  DDT_HD int64_t div(int64_t n) const {
    const uint64_t x = static_cast<uint64_t>(n);
#if defined(__CUDA_ARCH__)
    const uint64_t t = __umul64hi(m, x);
#else
    const uint64_t t = static_cast<uint64_t>((static_cast<unsigned __int128>(m) * x) >> 64);
#endif
    return static_cast<int64_t>((t + x) >> s);
  }
};

// d < 1 (the element size of an empty type) gives the divider of 1: a call without bytes has no
// units, and divides nothing.
inline Divider divider(int64_t d) {
  Divider v;
  v.d = d < 1 ? 1 : static_cast<uint64_t>(d);
  while ((uint64_t{1} << v.s) < v.d) ++v.s;
  const unsigned __int128 num = (static_cast<unsigned __int128>(1) << 64) * ((uint64_t{1} << v.s) - v.d);
  v.m = static_cast<uint64_t>(num / v.d) + 1;
  return v;
}

// A Nest plan as kernel parameters: element k at disp + k * ext, es stream bytes each;
// dimension j (0 innermost) is copies at stride s[j] of child[j].d stream bytes.
struct NestLoc {
  int dims = 0;
  int64_t disp = 0, ext = 0;
  Divider es;
  int64_t s[kMaxNest] = {};
  Divider child[kMaxNest];
  DDT_HD int64_t operator()(int64_t pos) const {
    const int64_t k = es.div(pos);
    int64_t r = pos - k * static_cast<int64_t>(es.d), off = disp + k * ext;
    for (int j = dims - 1; j >= 0; --j) {
      const int64_t i = child[j].div(r);
      r -= i * static_cast<int64_t>(child[j].d);
      off += i * s[j];
    }
    return off + r;
  }
};

inline NestLoc nest_loc(const Plan& p) {
  NestLoc x;
  x.dims = p.dims, x.disp = p.disp, x.ext = p.extent, x.es = divider(p.size);
  for (int j = 0; j < p.dims; ++j) x.s[j] = p.s[j], x.child[j] = divider(p.level_size[j]);
  return x;
}

// Where entry r of a table of `count` entries and `size` bytes would be if its entries had one
// size: only a guess (the gallop corrects it), so on the device a single-precision approximate
// division. A double division there is a call to a software routine, and that call made the
// general kernels spill (the 16-byte-unit pack: 32 registers and 144 bytes of stack frame, 62
// registers and none without it: ptxas -v), which cost them up to 2x on every layout.
DDT_HD int64_t guess(int64_t r, int64_t size, int64_t count) {
#if defined(__CUDA_ARCH__)
  return static_cast<int64_t>(__fdividef(static_cast<float>(r), static_cast<float>(size)) * static_cast<float>(count));
#else
  return static_cast<int64_t>(static_cast<double>(r) / static_cast<double>(size) * static_cast<double>(count));
#endif
}

// A layout's arrays (in device memory for a kernel, in host memory for the emulation), with a
// divider per node (vec_div: a VEC's child size; unused for other nodes).
struct TreeLoc {
  const Node* nodes = nullptr;
  const Entry* entries = nullptr;
  const int64_t* prefix = nullptr;
  const Divider* vec_div = nullptr;
  int64_t node_count = 0;  // of nodes (and vec_div): the kernels copy few into shared memory
  int64_t root = 0, disp = 0, ext = 0;
  Divider es;
  DDT_HD int64_t operator()(int64_t pos) const {
    const int64_t k = es.div(pos);
    int64_t r = pos - k * static_cast<int64_t>(es.d), off = disp + k * ext, node = root;
    for (;;) {
      const Node& n = nodes[node];
      if (n.kind == Kind::Block) return off + r;
      if (n.kind == Kind::Vec) {
        const Divider& cs = vec_div[node];
        const int64_t i = cs.div(r);
        r -= i * static_cast<int64_t>(cs.d);
        off += i * n.stride;
        node = n.child;
        continue;
      }
      // SEQ: the last entry whose prefix is <= r (prefix[first] == 0 <= r always holds). A
      // table whose entries all have one size (an indexed_block, a struct of like members) finds
      // it by division (vec_div holds that size). Any other starts where the entry would be if
      // its entries had their mean size, gallops out to bracket the answer and binary-searches
      // the bracket: a table of nearly equal entries (an index list that the canonical form cut
      // into a few segments) takes two or three probes where a plain binary search took
      // log2(entries) dependent loads (17 for 131,070 entries: 2.07x the list kernel's time on
      // an H100), and any table at most twice the binary search's.
      int64_t a = n.child;
      const Divider& es = vec_div[node];
      if (es.d != 0) {
        a += es.div(r);
      } else {
        const int64_t first = n.child, last = n.child + n.count;
        int64_t g = first;
        if (n.size > 0) g += guess(r, n.size, n.count);
        if (g >= last) g = last - 1;
        if (g < first) g = first;
        int64_t lo = g, hi = g;  // prefix[lo] <= r < prefix[hi] (hi == last: past the table)
        if (prefix[g] <= r) {
          for (int64_t step = 1;; step *= 2) {
            hi = lo + step;
            if (hi >= last) { hi = last; break; }
            if (prefix[hi] > r) break;
            lo = hi;
          }
        } else {
          for (int64_t step = 1;; step *= 2) {
            lo = hi - step;
            if (lo <= first) { lo = first; break; }
            if (prefix[lo] <= r) break;
            hi = lo;
          }
        }
        while (hi - lo > 1) {
          const int64_t m = lo + (hi - lo) / 2;
          if (prefix[m] <= r) lo = m; else hi = m;
        }
        a = lo;
      }
      r -= prefix[a];
      off += entries[a].disp;
      node = entries[a].node;
    }
  }
};

// The per-node dividers of a layout (TreeLoc's vec_div): a VEC's child size; a SEQ's entry size
// where every entry has one (d == 0 where they differ: binary search). O(nodes + entries), once
// per upload.
inline void vec_dividers(const Layout& L, std::vector<Divider>& out) {
  out.assign(L.nodes.size(), Divider{});
  for (size_t i = 0; i < L.nodes.size(); ++i) {
    const Node& n = L.nodes[i];
    if (n.kind == Kind::Vec) out[i] = divider(L.nodes[n.child].size);
    if (n.kind != Kind::Seq || n.count < 1) continue;
    auto size_of = [&](int64_t e) { return L.entries[e].node < 0 ? -1 : L.nodes[L.entries[e].node].size; };
    const int64_t size = size_of(n.child);
    bool one = size > 0;
    for (int64_t e = n.child + 1; one && e < n.child + n.count; ++e) one = size_of(e) == size;
    if (one) {
      out[i] = divider(size);
    } else {
      out[i] = Divider{};
      out[i].d = 0;
    }
  }
}

// A uniform list (plan.hpp's Shape::List of one segment of blocks: indexed_block,
// hindexed_block, indexed of one block length, a struct of such): entry i is a block of width
// bytes at list[i] from the root's position. A division and one load per unit, where TreeLoc
// would binary-search the table's prefix sums (about log2(entries) dependent loads per unit).
// The displacements are uploaded (layouts.hpp; the host's copy in the emulation) as the plan keeps
// them: 32-bit where every one fits (an application's index list), else 64-bit. Half the bytes
// of metadata per block: a gather of 12-byte blocks reads 4 more bytes per block, not 8.
struct ListLoc {
  const int32_t* list32 = nullptr;  // non-null: the 32-bit displacements
  const int64_t* list = nullptr;    // else these
  int64_t disp = 0, ext = 0;
  Divider es, width;
  DDT_HD int64_t operator()(int64_t pos) const {
    const int64_t k = es.div(pos);
    const int64_t r = pos - k * static_cast<int64_t>(es.d);
    const int64_t i = width.div(r);
    const int64_t d = list32 ? static_cast<int64_t>(list32[i]) : list[i];
    return disp + k * ext + d + (r - i * static_cast<int64_t>(width.d));
  }
};

// A uniform list's displacements as ListLoc reads them: the plan's own, 32-bit or 64-bit.
inline void list_displacements(const Plan& p, std::vector<int32_t>& narrow, std::vector<int64_t>& wide) {
  narrow.assign(p.list.begin(), p.list.end());
  wide.assign(p.list64.begin(), p.list64.end());
}

// The most blocks an element may have for a flat list (layouts.hpp's Part::Flat): 16 MiB of
// 32-bit displacements on the device, and while it is made 64 MiB of iovecs and 32 MiB of 64-bit
// displacements on the host, once per layout. (The largest the benchmarks flatten: 4,194,302
// blocks, the shuffled 64 MiB list of 16 B blocks.)
constexpr int64_t kFlatMax = int64_t{1} << 22;

// An element's blocks as displacements from the buffer (32-bit where all fit), and their one
// width; 0 (lists empty) when they are more than kFlatMax or of more than one width. The blocks
// are ddt_iov's of one element at a base far from 0 (it reads no memory: any base whose range
// is not near address 0 does), which are the canonical layout's blocks in stream order.
inline int64_t flatten(ddt_type t, const Plan& p, std::vector<int32_t>& narrow, std::vector<int64_t>& wide) {
  if (p.blocks < 2 || p.blocks > kFlatMax) return 0;
  std::vector<iovec> iov(static_cast<size_t>(p.blocks));
  const uintptr_t base = uintptr_t{1} << 46;
  int64_t n = 0, bytes = 0;
  if (ddt_iov(reinterpret_cast<void*>(base), 1, t, 0, iov.data(), p.blocks, &n, &bytes) != DDT_SUCCESS || n != p.blocks)
    return 0;
  const int64_t w = static_cast<int64_t>(iov[0].iov_len);
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  wide.resize(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    if (static_cast<int64_t>(iov[i].iov_len) != w) {
      wide.clear();
      return 0;
    }
    wide[i] = static_cast<int64_t>(reinterpret_cast<uintptr_t>(iov[i].iov_base) - base);
    lo = std::min(lo, wide[i]), hi = std::max(hi, wide[i]);
  }
  if (lo >= INT32_MIN && hi <= INT32_MAX) {
    narrow.assign(wide.begin(), wide.end());
    wide.clear();
  }
  return w;
}

// One typed side of a call: which locator finds its bytes.
enum class Loc : uint8_t { Nest, Tree, List };
struct Side {
  Loc kind = Loc::Tree;
  NestLoc n;  // Nest: the plan's dimensions
  TreeLoc t;  // Tree: the layout's arrays
  ListLoc l;  // List: the displacements
};

// The locator of count elements of t, and the grain bits it implies. A nest is complete here;
// for a tree or a list the caller points the locator's arrays at a copy the kernel can read
// (layouts.hpp's upload; the host's own in the emulation) and ORs in the layout's layout_bits.
// general: the tree locator whatever the plan (the general kernel, for tests and benchmarks:
// ddtkit_cuda.h's DDT_CUDA_GENERAL).
inline Bits side_of(ddt_type t, int64_t count, Side* s, bool general = false) {
  const Plan& pl = plan_of(t);
  const Layout& L = *t->layout;
  Bits bits;
  bits.typed = static_cast<uint64_t>(pl.disp) | static_cast<uint64_t>(L.disp);  // the position each locator starts from
  if (count > 1) bits.typed |= static_cast<uint64_t>(t->extent());
  if (pl.shape == Shape::Nest && !general) {
    s->kind = Loc::Nest;
    s->n = nest_loc(pl);
    bits.stream |= static_cast<uint64_t>(pl.width);
    for (int j = 0; j < pl.dims; ++j) bits.typed |= static_cast<uint64_t>(pl.s[j]);
    return bits;
  }
  if (pl.shape == Shape::List && pl.uniform_list() && !general) {
    s->kind = Loc::List;
    s->l = ListLoc{};
    s->l.disp = pl.disp, s->l.ext = t->extent(), s->l.es = divider(pl.size), s->l.width = divider(pl.width);
    return bits;
  }
  s->kind = Loc::Tree;
  s->t = TreeLoc{};
  s->t.root = L.root, s->t.disp = L.disp, s->t.ext = t->extent(), s->t.es = divider(L.size());
  s->t.node_count = static_cast<int64_t>(L.nodes.size());
  return bits;
}

// A tree side made the list locator over an element's flat list (flatten's: displacements from
// the buffer, so the list itself sits at 0), for api.cpp's prepare (device arrays) and the
// emulation (host arrays) alike. The side's grain bits stand: the layout_bits of the tree cover
// every block's size and address.
inline void flat_side(ddt_type t, const int32_t* list32, const int64_t* list, int64_t width, Side* s) {
  s->kind = Loc::List;
  s->l = ListLoc{};
  s->l.list32 = list32, s->l.list = list;
  s->l.ext = t->extent(), s->l.es = divider(t->layout->size()), s->l.width = divider(width);
}

// f(std::integral_constant<int, G>) for the grain g (grain_of's values: 1, 2, 4, 8, 16), so that
// the kernels' launch and the emulation instantiate the same moves.
template <class F>
auto with_grain(int64_t g, F&& f) {
  switch (g) {
    case 16: return f(std::integral_constant<int, 16>{});
    case 8: return f(std::integral_constant<int, 8>{});
    case 4: return f(std::integral_constant<int, 4>{});
    case 2: return f(std::integral_constant<int, 2>{});
    default: return f(std::integral_constant<int, 1>{});
  }
}

// f(locator) with the side's locator (the kernels' launch and the emulation dispatch alike).
template <class F>
auto with_locator(const Side& s, F&& f) {
  switch (s.kind) {
    case Loc::Nest: return f(s.n);
    case Loc::List: return f(s.l);
    default: return f(s.t);
  }
}

// The DMA engine's view (HAND's "direct transfer"): a call whose typed side is rows of `width`
// bytes, row i at offset + i * pitch from the buffer, pitch >= width, is one cudaMemcpy2DAsync.
// A nest of one dimension is such rows (its blocks; elements continue them when the extent is
// the nest's span), as is a nest of none (one row per element); the range must start and end
// on rows. Deeper nests would be cudaMemcpy3D's, which is not used.
struct Box {
  int64_t offset = 0, width = 0, pitch = 0, height = 0;
};

inline bool box_of(const Plan& p, int64_t count, int64_t lo, int64_t n, Box* b) {
  if (p.shape != Shape::Nest || p.dims > 1 || p.width <= 0 || n <= 0) return false;
  int64_t pitch, rows;
  if (p.dims == 0) {
    pitch = p.extent, rows = count;
  } else {
    pitch = p.s[0], rows = p.n[0] * count;
    if (count > 1 && p.extent != p.n[0] * p.s[0]) return false;  // elements do not continue the rows
  }
  if (rows > 1 && pitch < p.width) return false;  // overlapping or reversed rows
  if (rows == 1) pitch = p.width;
  if (lo % p.width != 0 || n % p.width != 0) return false;
  b->width = p.width, b->pitch = pitch, b->height = n / p.width;
  b->offset = p.disp + (lo / p.width) * pitch;
  return true;
}

// One aligned move of G bytes. On the device a typed load and store (16 B: one vector
// load/store); on the host memcpy, which compiles to the same move without aliasing questions.
template <int G>
struct WordOf;
template <> struct WordOf<1> { using T = uint8_t; };
template <> struct WordOf<2> { using T = uint16_t; };
template <> struct WordOf<4> { using T = uint32_t; };
template <> struct WordOf<8> { using T = uint64_t; };
#if defined(__CUDACC__)
template <> struct WordOf<16> { using T = uint4; };
#else
struct alignas(16) Word16 { uint64_t a, b; };
template <> struct WordOf<16> { using T = Word16; };
#endif

template <int G>
DDT_HD void move_word(char* to, const char* from) {
#if defined(__CUDA_ARCH__)
  using T = typename WordOf<G>::T;
  *reinterpret_cast<T*>(to) = *reinterpret_cast<const T*>(from);
#else
  std::memcpy(to, from, G);
#endif
}

// Unit u of a pack (Gather) or unpack of stream bytes from lo: typed side buf, packed side seq
// (seq points at stream byte lo).
template <bool Gather, int G, class Loc>
DDT_HD void move_unit(const Loc& loc, char* buf, char* seq, int64_t lo, int64_t u) {
  char* typed = buf + loc(lo + u * G);
  char* packed = seq + u * G;
  if (Gather)
    move_word<G>(packed, typed);
  else
    move_word<G>(typed, packed);
}

// Unit u of a type-to-type copy: the same stream position in both layouts.
template <int G, class SrcLoc, class DstLoc>
DDT_HD void copy_unit(const SrcLoc& sl, const char* src, const DstLoc& dl, char* dst, int64_t u) {
  const int64_t pos = u * G;
  move_word<G>(dst + dl(pos), src + sl(pos));
}

}  // namespace ddt::gpu
