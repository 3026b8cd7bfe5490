// pack, unpack, iov and copy: argument checks, then one walk each. Every check happens before
// the first byte is written, so a failed call leaves the caller's buffers as they were.
#include <cstring>

#include "cpu/copy_kernels.hpp"
#include "cpu/walk.hpp"
#include "type/type.hpp"
#include "util/checked.hpp"

namespace {

// Validates (type, count, offset) for data movement and returns the stream length.
int stream(ddt_type type, int64_t count, int64_t offset, int64_t* total) {
  if (int e = ddt::check_type(type)) return e;
  if (!type->committed.load(std::memory_order_acquire)) return DDT_ERR_NOT_COMMITTED;
  if (count < 0) return DDT_ERR_COUNT;
  if (offset < 0) return DDT_ERR_ARG;
  ddt::Checked ck;
  *total = ck.mul(count, type->size);
  if (count > 0) ck.mul(count - 1, type->extent());  // every element's address is representable
  if (ck.overflow) return DDT_ERR_OVERFLOW;
  if (offset > *total) return DDT_ERR_TRUNCATE;
  return DDT_SUCCESS;
}

struct PackOp {
  char* out;
  bool stream = false;  // output beyond the caches: non-temporal stores (copy_kernels.hpp)
  bool piece(uintptr_t p, int64_t n) {
    ddt::any_copy(out, reinterpret_cast<const char*>(p), n);
    out += n;
    return true;
  }
  bool blocks(uintptr_t p, int64_t stride, int64_t w, int64_t count) {
    if (stream && w >= ddt::kStreamMinWidth)
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
    if (stream && w >= ddt::kStreamMinWidth)
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

}  // namespace

extern "C" {

int ddt_pack(const void* inbuf, int64_t incount, ddt_type type, int64_t offset, void* outbuf,
             int64_t outsize, int64_t* packed) {
  int64_t total;
  if (int e = stream(type, incount, offset, &total)) return e;
  if (!packed || outsize < 0 || (outsize > 0 && !outbuf)) return DDT_ERR_ARG;
  int64_t n = std::min(outsize, total - offset);
  PackOp op{static_cast<char*>(outbuf), n >= ddt::kStreamBytes};
  ddt::walk(*type->layout, type->extent(), reinterpret_cast<uintptr_t>(inbuf), offset, offset + n, op);
  if (op.stream) ddt::stream_fence();
  *packed = n;
  return DDT_SUCCESS;
}

int ddt_unpack(const void* inbuf, int64_t insize, void* outbuf, int64_t outcount, ddt_type type,
               int64_t offset, int64_t* unpacked) {
  int64_t total;
  if (int e = stream(type, outcount, offset, &total)) return e;
  if (!unpacked || insize < 0 || (insize > 0 && !inbuf)) return DDT_ERR_ARG;
  if (insize > total - offset) return DDT_ERR_TRUNCATE;
  UnpackOp op{static_cast<const char*>(inbuf), insize >= ddt::kStreamBytes};
  ddt::walk(*type->layout, type->extent(), reinterpret_cast<uintptr_t>(outbuf), offset, offset + insize, op);
  if (op.stream) ddt::stream_fence();
  *unpacked = insize;
  return DDT_SUCCESS;
}

int ddt_iov(const void* buf, int64_t count, ddt_type type, int64_t offset, struct iovec* iov,
            int64_t max_iov, int64_t* n_iov, int64_t* bytes) {
  int64_t total;
  if (int e = stream(type, count, offset, &total)) return e;
  if (!n_iov || !bytes || max_iov < 0 || (max_iov > 0 && !iov)) return DDT_ERR_ARG;
  IovOp op{iov, max_iov};
  ddt::walk(*type->layout, type->extent(), reinterpret_cast<uintptr_t>(buf), offset, total, op);
  *n_iov = op.n;
  *bytes = op.bytes;
  return DDT_SUCCESS;
}

int ddt_copy(const void* src, int64_t scount, ddt_type stype, void* dst, int64_t dcount,
             ddt_type dtype) {
  int64_t stotal, dtotal;
  if (int e = stream(stype, scount, 0, &stotal)) return e;
  if (int e = stream(dtype, dcount, 0, &dtotal)) return e;
  if (stotal != dtotal) return DDT_ERR_SIZE_MISMATCH;
  // No staging of data: the source is listed in batches of pieces, and the destination walk
  // over the same stream range consumes them. Each batch starts with a seek, not a replay.
  constexpr int64_t kBatch = 256;
  struct iovec pieces[kBatch];
  const uintptr_t s = reinterpret_cast<uintptr_t>(src), d = reinterpret_cast<uintptr_t>(dst);
  for (int64_t pos = 0; pos < stotal;) {
    IovOp list{pieces, kBatch};
    ddt::walk(*stype->layout, stype->extent(), s, pos, stotal, list);
    CopyOp put{pieces};
    ddt::walk(*dtype->layout, dtype->extent(), d, pos, pos + list.bytes, put);
    pos += list.bytes;
  }
  return DDT_SUCCESS;
}

}  // extern "C"
