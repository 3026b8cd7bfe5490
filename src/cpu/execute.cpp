// pack, unpack, iov and copy: argument checks, then the type's plan (src/plan/). Every check
// happens before the first byte is written, so a failed call leaves the caller's buffers as
// they were.
#include <cstring>
#include <vector>

#include "cpu/copy.hpp"
#include "cpu/copy_kernels.hpp"
#include "cpu/cursor.hpp"
#include "cpu/arguments.hpp"
#include "cpu/device.hpp"
#include "cpu/list.hpp"
#include "cpu/nest.hpp"
#include "cpu/parts.hpp"
#include "cpu/tile.hpp"
#include "cpu/twin.hpp"
#include "cpu/twin_tables.hpp"
#include "cpu/walk.hpp"
#include "type/type.hpp"
#include "util/guarded.hpp"

namespace {


struct PackOp {
  char* out;
  bool stream = false;  // output beyond the caches: non-temporal stores (copy_kernels.hpp)
  bool piece(uintptr_t p, int64_t n) {
    ddt::any_copy(out, reinterpret_cast<const char*>(p), n);
    out += n;
    return true;
  }
  bool blocks(uintptr_t p, int64_t stride, int64_t w, int64_t count) {
    if (stream && ddt::stream_width(w, true))
      ddt::stream_blocks<true>(out, p, stride, w, count);
    else
      ddt::run_blocks<true>(out, p, stride, w, count);
    out += w * count;
    return true;
  }
  int64_t table(uintptr_t base, const ddt::Entry* e, int64_t max, int64_t w, int64_t node) {
    int64_t n = ddt::run_table<true>(out, base, e, w, max, node);
    out += w * n;
    return n;
  }
};

struct UnpackOp {
  const char* in;
  bool stream = false;
  bool piece(uintptr_t p, int64_t n) {
    ddt::any_copy(reinterpret_cast<char*>(p), in, n);
    in += n;
    return true;
  }
  bool blocks(uintptr_t p, int64_t stride, int64_t w, int64_t count) {
    if (stream && ddt::stream_width(w, false))
      ddt::stream_blocks<false>(const_cast<char*>(in), p, stride, w, count);
    else
      ddt::run_blocks<false>(const_cast<char*>(in), p, stride, w, count);
    in += w * count;
    return true;
  }
  int64_t table(uintptr_t base, const ddt::Entry* e, int64_t max, int64_t w, int64_t node) {
    int64_t n = ddt::run_table<false>(const_cast<char*>(in), base, e, w, max, node);
    in += w * n;
    return n;
  }
};

// Operations that only need pieces see a run of blocks as its pieces.
template <class Self>
struct PieceByPiece {
  bool blocks(uintptr_t p, int64_t stride, int64_t w, int64_t count) {
    for (int64_t i = 0; i < count; ++i, p += static_cast<uintptr_t>(stride))
      if (!static_cast<Self*>(this)->piece(p, w)) return false;
    return true;
  }
  int64_t table(uintptr_t base, const ddt::Entry* e, int64_t max, int64_t w, int64_t node) {
    int64_t i = 0;
    for (; i < max && e[i].node == node; ++i)
      if (!static_cast<Self*>(this)->piece(base + static_cast<uintptr_t>(e[i].disp), w)) return -1;
    return i;
  }
};

// Collects merged pieces; stops when a piece that cannot be merged finds the array full.
struct IovOp : PieceByPiece<IovOp> {
  IovOp(struct iovec* v, int64_t m) : iov(v), max(m) {}
  struct iovec* iov;
  int64_t max, n = 0, bytes = 0;
  bool piece(uintptr_t p, int64_t len) {
    if (n > 0 && reinterpret_cast<uintptr_t>(iov[n - 1].iov_base) + iov[n - 1].iov_len == p) {
      iov[n - 1].iov_len += len;
    } else {
      if (n == max) return false;
      iov[n].iov_base = reinterpret_cast<void*>(p);
      iov[n].iov_len = len;
      ++n;
    }
    bytes += len;
    return true;
  }
};

// Lists every piece it is given (a copy's source side, one chunk at a time: see ddt_copy).
struct ListOp : PieceByPiece<ListOp> {
  std::vector<struct iovec>* out;
  bool piece(uintptr_t p, int64_t len) {
    if (!out->empty() && reinterpret_cast<uintptr_t>(out->back().iov_base) + out->back().iov_len == p)
      out->back().iov_len += len;
    else
      out->push_back({reinterpret_cast<void*>(p), static_cast<size_t>(len)});
    return true;
  }
};

// Writes the destination side of a copy from a list of source pieces.
struct CopyOp : PieceByPiece<CopyOp> {
  explicit CopyOp(const struct iovec* s) : src(s) {}
  const struct iovec* src;
  int64_t used = 0;  // bytes of src[0] already consumed
  bool piece(uintptr_t p, int64_t n) {
    while (n > 0) {
      int64_t take = std::min<int64_t>(n, src->iov_len - used);
      ddt::any_copy(reinterpret_cast<char*>(p), static_cast<const char*>(src->iov_base) + used, take);
      p += take;
      n -= take;
      used += take;
      if (used == static_cast<int64_t>(src->iov_len)) ++src, used = 0;
    }
    return true;
  }
};

// A Rows plan moves whole calls as one loop over every row (rows continue across elements when
// the extent is a whole number of rows); partial ranges and every other shape walk.
template <class Op>
void run(ddt_type type, const ddt::Plan& p, int64_t count, uintptr_t buf, int64_t lo, int64_t hi, Op& op) {
  if (p.shape == ddt::Shape::Rows && lo == 0 && hi == count * p.size) {
    const uintptr_t base = buf + static_cast<uintptr_t>(p.disp);
    if (count == 1 || p.extent == p.row_n * p.row_stride) {
      ddt::table_rows(p.rows, p.rdisp, p.rwidth, base, p.row_stride, count * p.row_n, op);
      return;
    }
    for (int64_t k = 0; k < count; ++k)
      ddt::table_rows(p.rows, p.rdisp, p.rwidth, base + static_cast<uintptr_t>(k * p.extent), p.row_stride, p.row_n, op);
    return;
  }
  ddt::walk(*type->layout, p, buf, lo, hi, op);
}

// A transposed grid (plan.hpp's Plan::tile) between the buffer and seq: whole tiles by tile.hpp,
// the pieces of tiles at a range's ends and the last columns by the nest.
template <bool Gather>
void tiled_move(const ddt::Plan& p, uintptr_t base, int64_t lo, int64_t hi, char* seq, int64_t out) {
  ddt::Grid g;
  ddt::grid_of(p, p.tile, g);
  const ddt::Grid packed{g.n0, p.tile, g.n1, g.n0 * p.tile};
  const uintptr_t at = reinterpret_cast<uintptr_t>(seq) - static_cast<uintptr_t>(lo);  // stream byte x at at + x
  const auto rest = [&](int64_t from, int64_t to) {
    const int64_t k = from / p.size;
    ddt::nest<Gather>(p, ddt::view_of(p), base + static_cast<uintptr_t>(k * p.extent), from - k * p.size,
                      to - k * p.size, reinterpret_cast<char*>(at + static_cast<uintptr_t>(from)), out);
  };
  if (Gather)
    ddt::tiled_range(p.tile, base, g, p.extent, at, packed, p.size, lo, hi, rest);
  else
    ddt::tiled_range(p.tile, at, packed, p.size, base, g, p.extent, lo, hi, rest);
}

// Stream bytes [lo, hi) of (buf, type) between the buffer and seq, as the plan says. out: the
// output bytes the store kind is chosen by (plan.hpp's stream_stores): the range's own length,
// or, for a range that is a share of a larger transfer into the same destination (copy_range's
// footprint), that transfer's length.
template <bool Gather>
void move(ddt_type type, int64_t count, uintptr_t buf, int64_t lo, int64_t hi, char* seq, int64_t out = 0) {
  out = std::max(out, hi - lo);
  const ddt::Plan& p = ddt::plan_of(type);
  if (p.shape == ddt::Shape::Nest) {
    const uintptr_t base = buf + static_cast<uintptr_t>(p.disp);
    if (p.tile) return tiled_move<Gather>(p, base, lo, hi, seq, out);
    if (p.dims == 0 && (count == 1 || p.extent == p.width) && out < ddt::kStreamBytes) {  // contiguous
      char* at = reinterpret_cast<char*>(base + static_cast<uintptr_t>(lo));
      return Gather ? ddt::one_copy(seq, at, hi - lo) : ddt::one_copy(at, seq, hi - lo);
    }
    if (count == 1 && lo == 0 && hi == p.size && out == hi && ddt::small_nest<Gather>(p, base, seq)) return;
    if (count == 1) return ddt::nest<Gather>(p, ddt::view_of(p), base, lo, hi, seq, out);
    const ddt::NestShape x(p, count);
    return ddt::nest<Gather>(p, x.view(), base, lo, hi, seq, out);
  }
  // A Parts plan chooses per entry, by the entry's share of the range (parts.hpp).
  if (p.shape == ddt::Shape::Parts) return ddt::parts<Gather>(p, buf + static_cast<uintptr_t>(p.disp), lo, hi, seq);
  const bool stream = out >= ddt::kStreamBytes;
  if (p.shape == ddt::Shape::List) {
    const ddt::Layout& L = *type->layout;
    auto walk_entry = [&](int64_t node, uintptr_t at, char* s) {
      const int64_t n = L.nodes[node].size;
      if (Gather) {
        PackOp op{s, stream};
        ddt::walk_node(L, node, at, 0, n, op);
      } else {
        UnpackOp op{s, stream};
        ddt::walk_node(L, node, at, 0, n, op);
      }
      return s + n;
    };
    if (ddt::list<Gather>(p, count, buf + static_cast<uintptr_t>(p.disp), lo, hi, seq, walk_entry)) return;
  }
  if (Gather) {
    PackOp op{seq, stream};
    run<PackOp>(type, p, count, buf, lo, hi, op);
  } else {
    UnpackOp op{seq, stream};
    run<UnpackOp>(type, p, count, buf, lo, hi, op);
  }
}

// One whole element (count 1, offset 0, every byte) of a plan that runs it as a plain loop nest
// (Plan::plain), between buf and the contiguous seq of seq_size bytes: the checks pack_args and
// unpack_args make, for that case only. Returns the plan, whose plain kernel the entry point
// then calls, with no stream arithmetic and no shape, range or width dispatch in between (a
// small DDTBench face's call is as short as its copy: NAS_LU_y N=12, 480 B, went from 0.72 to
// 0.88-0.90 of the hand loop with this path and the kernel table); nullptr, having moved
// nothing, for every other call, which then goes the general way and makes (and reports) every
// check itself.
template <bool Gather>
inline const ddt::Plan* plain_call(const void* buf, ddt_type type, const void* seq, int64_t seq_size) {
  if (ddt::check_type(type) || !type->committed.load(std::memory_order_acquire)) return nullptr;
  const int64_t n = type->size;
  if (n <= 0 || (Gather ? seq_size < n : seq_size != n)) return nullptr;
  const void* plan = type->plan.load(std::memory_order_acquire);
  if (!plan || ddt::device_hook.load(std::memory_order_relaxed)) return nullptr;
  const ddt::Plan* p = static_cast<const ddt::Plan*>(plan);
  // A NULL seq fails the second test.
  if (p->plain[Gather] < 0 || ddt::hostile_element(buf, type) || ddt::hostile(seq, n)) return nullptr;
  return p;
}

}  // namespace

namespace ddt {

std::atomic<const DeviceHook*> device_hook{nullptr};

bool copy_in_windows(ddt_type stype, int64_t scount, ddt_type dtype, int64_t dcount) {
  const Plan& ps = plan_of(stype);
  if (!ps.permute_blocks[0] || ps.tile || !twins(ps, scount, plan_of(dtype), dcount)) return false;
  const NestShape shape(ps, scount);
  return twin_windows(ps, shape.view()) != nullptr;
}

namespace {
bool contiguous_side(const Plan& p, int64_t count) {
  return p.shape == Shape::Nest && p.dims == 0 && (count == 1 || p.extent == p.width);
}
// The tile width and both sides' grids where a copy between them transposes by tiles.
bool tiled_pair(const Plan& ps, const Plan& pd, int64_t* e, Grid* a, Grid* b) {
  if (!ps.tile && !pd.tile) return false;
  *e = ps.tile ? ps.tile : pd.tile;
  return grid_of(ps, *e, *a) && grid_of(pd, *e, *b) && a->n0 == b->n0 && a->n1 == b->n1;
}
}  // namespace

bool copy_by_tiles(ddt_type stype, int64_t scount, ddt_type dtype, int64_t dcount) {
  const Plan& ps = plan_of(stype);
  const Plan& pd = plan_of(dtype);
  int64_t e = 0;
  Grid a, b;
  return !contiguous_side(pd, dcount) && !contiguous_side(ps, scount) && tiled_pair(ps, pd, &e, &a, &b);
}

// Records the address of every block a cursor passes (all blocks of one width w: a Nest plan's
// layout), so that two sides' blocks can be paired.
struct BlockAddrs {
  uintptr_t* at;
  int64_t w, n = 0;
  bool piece(uintptr_t p, int64_t len) {  // whole blocks only: the caller advances by k * w
    for (int64_t o = 0; o < len; o += w) at[n++] = p + static_cast<uintptr_t>(o);
    return true;
  }
  bool blocks(uintptr_t p, int64_t stride, int64_t, int64_t count) {
    for (int64_t i = 0; i < count; ++i, p += static_cast<uintptr_t>(stride)) at[n++] = p;
    return true;
  }
  int64_t table(uintptr_t base, const ddt::Entry* e, int64_t max, int64_t, int64_t node) {
    int64_t i = 0;
    for (; i < max && e[i].node == node; ++i) at[n++] = base + static_cast<uintptr_t>(e[i].disp);
    return i;
  }
};

template <int W>
void pair_copy(const uintptr_t* d, const uintptr_t* s, int64_t k) {
  for (int64_t i = 0; i < k; ++i) std::memcpy(reinterpret_cast<void*>(d[i]), reinterpret_cast<const void*>(s[i]), W);
}

// Copies the whole blocks of stream bytes [at, n) between two layouts made of blocks of one width
// w (at a multiple of w: a block boundary on both sides), block i of the source to block i of the
// destination, with a fixed-width move where w is one of the common widths: in batches of block
// addresses that stay in L1. Returns the end of what it copied (n rounded down to whole blocks).
int64_t pair_blocks(const ddt::Layout& sl, int64_t sext, uintptr_t s, int64_t scount, const ddt::Layout& dl,
                    int64_t dext, uintptr_t d, int64_t dcount, int64_t w, int64_t at, int64_t n) {
  constexpr int64_t kBatch = 256;
  uintptr_t sa[kBatch], da[kBatch];
  ddt::Cursor from(sl, sext, s, scount), to(dl, dext, d, dcount);
  if (at > 0) from.seek(at), to.seek(at);
  int64_t done = at;
  while (n - done >= w) {
    const int64_t k = std::min(kBatch, (n - done) / w);
    BlockAddrs sop{sa, w}, dop{da, w};
    from.advance(k * w, sop);
    to.advance(k * w, dop);
    switch (w) {
      case 4: pair_copy<4>(da, sa, k); break;
      case 8: pair_copy<8>(da, sa, k); break;
      case 16: pair_copy<16>(da, sa, k); break;
      case 32: pair_copy<32>(da, sa, k); break;
      case 64: pair_copy<64>(da, sa, k); break;
      case 128: pair_copy<128>(da, sa, k); break;
      case 256: pair_copy<256>(da, sa, k); break;
      default:
        for (int64_t i = 0; i < k; ++i) ddt::any_copy(reinterpret_cast<char*>(da[i]), reinterpret_cast<const char*>(sa[i]), w);
    }
    done += k * w;
  }
  return done;
}

// One pass over both layouts, choosing by the shapes (the cost model of a type-to-type copy):
//  - one side contiguous: that is a pack or an unpack, with the plan's kernels;
//  - one side the grid of a transpose and the other a grid of the same elements (tile.hpp):
//    tiles of whole lines on the transposed side;
//  - both sides nests of one shape (twin.hpp): one loop nest, each block to the same place in
//    the other layout; both sides tables of one shape, Parts of twin nests, Rows or Lists of blocks
//    (twin_tables.hpp): each side's own table, block j to block j;
//  - both sides blocks of one width (Nest plans), shorter than kZipPiece: block paired with
//    block (pair_blocks), one fixed-width move each, no staging;
//  - long pieces on both sides (at least kZipPiece bytes on average): the source cursor lists a
//    chunk's pieces and the destination cursor consumes them, one memcpy per piece;
//  - short pieces: chunks of kStage bytes are gathered into a buffer that stays in L1 and
//    scattered from it, each with the plan's kernels. The bytes cross memory once (the staging
//    is a cache-resident hop, not a second copy through memory), and the fixed-width kernels
//    beat a memcpy call per piece for blocks below a few hundred bytes.
// Each side is sought once per chunk at worst; a chunk of the zip path advances resumable cursors.
void copy_range(const void* src, int64_t scount, ddt_type stype, void* dst, int64_t dcount, ddt_type dtype, int64_t lo,
                int64_t n, int64_t footprint) {
  if (n <= lo) return;
  const int64_t out = std::max(footprint, n - lo);
  constexpr int64_t kZipPiece = 4096, kStage = 16384, kChunk = int64_t{64} << 10;
  const ddt::Plan& ps = ddt::plan_of(stype);
  const ddt::Plan& pd = ddt::plan_of(dtype);
  const uintptr_t s = reinterpret_cast<uintptr_t>(src), d = reinterpret_cast<uintptr_t>(dst);
  if (contiguous_side(pd, dcount)) {
    move<true>(stype, scount, s, lo, n, reinterpret_cast<char*>(d + static_cast<uintptr_t>(pd.disp + lo)), out);
    if (out >= ddt::kStreamBytes) ddt::stream_fence();
    return;
  }
  if (contiguous_side(ps, scount)) {
    move<false>(dtype, dcount, d, lo, n, reinterpret_cast<char*>(s + static_cast<uintptr_t>(ps.disp + lo)), out);
    if (out >= ddt::kStreamBytes) ddt::stream_fence();
    return;
  }
  const auto staged = [&](int64_t from, int64_t to) {
    alignas(64) char stage[kStage];
    for (int64_t at = from; at < to; at += kStage) {
      const int64_t hi = std::min(to, at + kStage);
      move<true>(stype, scount, s, at, hi, stage);
      move<false>(dtype, dcount, d, at, hi, stage);
    }
  };
  int64_t e = 0;  // a transposed grid against a grid of the same elements: tiles (tile.hpp)
  ddt::Grid a, b;
  if (tiled_pair(ps, pd, &e, &a, &b))
    return ddt::tiled_range(e, s + static_cast<uintptr_t>(ps.disp), a, ps.extent, d + static_cast<uintptr_t>(pd.disp), b,
                            pd.extent, lo, n, staged);
  if (ddt::twins(ps, scount, pd, dcount)) return ddt::twin_copy(ps, scount, s, pd, d, lo, n, out);
  if (ddt::parts_twins(ps, scount, pd, dcount)) return ddt::parts_twin_copy(ps, s, pd, d, lo, n, out);
  if (ddt::rows_twins(ps, scount, pd, dcount)) return ddt::rows_twin_copy(ps, s, pd, d, lo, n);
  if (ddt::list_twins(ps, scount, pd, dcount)) return ddt::list_twin_copy(ps, s, pd, d, lo, n);
  if (ps.shape == ddt::Shape::Nest && pd.shape == ddt::Shape::Nest && ps.width == pd.width && ps.width < kZipPiece) {
    // Blocks pair from the first block boundary on (stream offsets that are multiples of the
    // width, on both sides); a partial block at either end is staged.
    const int64_t first = std::min(n, (lo + ps.width - 1) / ps.width * ps.width);
    staged(lo, first);
    const int64_t whole = pair_blocks(*stype->layout, stype->extent(), s, scount, *dtype->layout, dtype->extent(), d,
                                      dcount, ps.width, first, n);
    staged(whole, n);
    return;
  }
  int64_t sp, dp;  // pieces of each side (blocks saturate; so does this)
  if (__builtin_mul_overflow(ps.blocks, scount, &sp)) sp = INT64_MAX;
  if (__builtin_mul_overflow(pd.blocks, dcount, &dp)) dp = INT64_MAX;
  int64_t stotal = 0;
  ddt::stream(stype, scount, 0, &stotal);
  if (stotal / std::max<int64_t>(1, std::max(sp, dp)) < kZipPiece) return staged(lo, n);
  ddt::Cursor from(*stype->layout, stype->extent(), s, scount);
  ddt::Cursor to(*dtype->layout, dtype->extent(), d, dcount);
  if (lo > 0) from.seek(lo), to.seek(lo);
  std::vector<struct iovec> list;
  for (int64_t done = lo; done < n;) {
    list.clear();
    ListOp op{{}, &list};
    const int64_t k = from.advance(std::min(kChunk, n - done), op);
    CopyOp put{list.data()};
    to.advance(k, put);
    done += k;
  }
}

}  // namespace ddt

namespace {

// The general ways of ddt_pack and ddt_unpack, apart from their plain calls (plain_call), so
// that those pay no stack frame for them.
__attribute__((noinline)) int pack_general(const void* inbuf, int64_t incount, ddt_type type, int64_t offset,
                                           void* outbuf, int64_t outsize, int64_t* packed) {
  int64_t n;
  if (int e = ddt::pack_args(inbuf, incount, type, offset, outbuf, outsize, packed, &n)) return e;
  if (const ddt::DeviceHook* d = ddt::device_hook.load(std::memory_order_relaxed); d && n > 0) {
    const int e = d->pack(inbuf, incount, type, offset, outbuf, n);
    if (e != ddt::kNotMine) {
      if (e == DDT_SUCCESS) *packed = n;
      return e;
    }
  }
  return ddt::guarded([&] {
    move<true>(type, incount, reinterpret_cast<uintptr_t>(inbuf), offset, offset + n, static_cast<char*>(outbuf));
    if (n >= ddt::kStreamBytes) ddt::stream_fence();
    *packed = n;
    return static_cast<int>(DDT_SUCCESS);
  });
}

__attribute__((noinline)) int unpack_general(const void* inbuf, int64_t insize, void* outbuf, int64_t outcount,
                                             ddt_type type, int64_t offset, int64_t* unpacked) {
  if (int e = ddt::unpack_args(inbuf, insize, outbuf, outcount, type, offset, unpacked)) return e;
  if (const ddt::DeviceHook* d = ddt::device_hook.load(std::memory_order_relaxed); d && insize > 0) {
    const int e = d->unpack(inbuf, insize, outbuf, outcount, type, offset);
    if (e != ddt::kNotMine) {
      if (e == DDT_SUCCESS) *unpacked = insize;
      return e;
    }
  }
  return ddt::guarded([&] {
    move<false>(type, outcount, reinterpret_cast<uintptr_t>(outbuf), offset, offset + insize,
                const_cast<char*>(static_cast<const char*>(inbuf)));
    if (insize >= ddt::kStreamBytes) ddt::stream_fence();
    *unpacked = insize;
    return static_cast<int>(DDT_SUCCESS);
  });
}

}  // namespace

extern "C" {

int ddt_pack(const void* inbuf, int64_t incount, ddt_type type, int64_t offset, void* outbuf,
             int64_t outsize, int64_t* packed) {
  if (incount == 1 && offset == 0 && packed)
    if (const ddt::Plan* p = plain_call<true>(inbuf, type, outbuf, outsize)) {
      *packed = type->size;  // before the move, so that the call below ends this one
      return ddt::plain_kernels<true>[p->plain[1]](*p, reinterpret_cast<uintptr_t>(inbuf) + static_cast<uintptr_t>(p->disp),
                                                   static_cast<char*>(outbuf));
    }
  return pack_general(inbuf, incount, type, offset, outbuf, outsize, packed);
}

int ddt_unpack(const void* inbuf, int64_t insize, void* outbuf, int64_t outcount, ddt_type type,
               int64_t offset, int64_t* unpacked) {
  if (outcount == 1 && offset == 0 && unpacked)
    if (const ddt::Plan* p = plain_call<false>(outbuf, type, inbuf, insize)) {
      *unpacked = insize;
      return ddt::plain_kernels<false>[p->plain[0]](*p, reinterpret_cast<uintptr_t>(outbuf) + static_cast<uintptr_t>(p->disp),
                                                    const_cast<char*>(static_cast<const char*>(inbuf)));
    }
  return unpack_general(inbuf, insize, outbuf, outcount, type, offset, unpacked);
}

int ddt_iov(const void* buf, int64_t count, ddt_type type, int64_t offset, struct iovec* iov,
            int64_t max_iov, int64_t* n_iov, int64_t* bytes) {
  int64_t total;
  if (int e = ddt::stream(type, count, offset, &total)) return e;
  if (!n_iov || !bytes || max_iov < 0 || (max_iov > 0 && !iov)) return DDT_ERR_ARG;
  // No hostile() check: listing touches no byte, and a NULL base is how a caller (the
  // interposer) lists a type's pieces as offsets.
  return ddt::guarded([&] {
    IovOp op{iov, max_iov};
    ddt::walk(*type->layout, ddt::plan_of(type), reinterpret_cast<uintptr_t>(buf), offset, total, op);
    *n_iov = op.n;
    *bytes = op.bytes;
    return static_cast<int>(DDT_SUCCESS);
  });
}

int ddt_copy(const void* src, int64_t scount, ddt_type stype, void* dst, int64_t dcount,
             ddt_type dtype) {
  int64_t stotal;
  if (int e = ddt::copy_args(src, scount, stype, dst, dcount, dtype, &stotal)) return e;
  if (const ddt::DeviceHook* d = ddt::device_hook.load(std::memory_order_relaxed); d && stotal > 0) {
    const int e = d->copy(src, scount, stype, dst, dcount, dtype, stotal);
    if (e != ddt::kNotMine) return e;
  }
  return ddt::guarded([&] {
    ddt::copy_range(src, scount, stype, dst, dcount, dtype, stotal);
    return static_cast<int>(DDT_SUCCESS);
  });
}

}  // extern "C"
