// A message whose stream moves in order, a piece at a time (the runtime's pipelined data cells,
// src/shm/comm.cpp): packed on the sending side and unpacked on the receiving side through a
// resumable cursor, sought once at byte 0 and advanced piece by piece; except the grid of a
// transpose (plan.hpp's Plan::tile), which moves a whole number of tiles at a time through a
// staging buffer, by the tiled executor (tile.hpp). A cell holds less than a tile of FFT2D's
// receive type from N = 512 on (a tile is 64 n0 bytes: 32 KiB at N = 1024 against 16 KiB cells),
// so moved cell by cell the grid went in stream order, a line per element.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "cpu/cursor.hpp"
#include "ddtkit.h"
#include "plan/plan.hpp"
#include "type/type.hpp"

namespace ddt {

// Staging beyond this many bytes (a tile of a grid of more than 16,384 rows) is not worth its
// memory: such a message goes through the cursor.
constexpr int64_t kMaxStagedTile = int64_t{1} << 20;

// The bytes of a tile of the type's plan (64 / e grid rows of n0 elements of e bytes, tile.hpp's
// Grid: 64 n0 bytes), or 0 where the message goes through the cursor.
inline int64_t staged_tile(ddt_type type) {
  const Plan& p = plan_of(type);
  return p.tile && 64 * p.n[0] <= kMaxStagedTile ? 64 * p.n[0] : 0;
}

class InOrderUnpack {
 public:
  // count elements of the committed type at buf, from stream byte 0.
  InOrderUnpack(ddt_type type, void* buf, int64_t count)
      : type_(type), buf_(buf), count_(count), tile_(staged_tile(type)), size_(plan_of(type).size) {}

  // The next n stream bytes.
  void take(const char* data, int64_t n) {
    if (!tile_) {
      if (!cursor_) cursor_.reset(new Cursor(*type_->layout, type_->extent(), reinterpret_cast<uintptr_t>(buf_), count_));
      CursorCopy<false> op{const_cast<char*>(data)};
      cursor_->advance(n, op);
      return;
    }
    stage_.insert(stage_.end(), data, data + n);
    // Unpack up to the last tile boundary staged (tiles start at each element's start).
    const int64_t end = at_ + static_cast<int64_t>(stage_.size()), k = end / size_;
    const int64_t cut = k * size_ + (end - k * size_) / tile_ * tile_;
    if (cut - at_ >= tile_) flush(cut);
  }

  // Every byte has been taken: unpacks what is staged.
  void finish() {
    if (tile_) flush(at_ + static_cast<int64_t>(stage_.size()));
  }

 private:
  void flush(int64_t cut) {
    const int64_t n = cut - at_;
    if (n <= 0) return;
    int64_t done = 0;
    ddt_unpack(stage_.data(), n, buf_, count_, type_, at_, &done);  // checked when the receive was posted
    stage_.erase(stage_.begin(), stage_.begin() + n);
    at_ = cut;
  }

  ddt_type type_;
  void* buf_;
  int64_t count_;
  int64_t tile_, size_;  // tile_: staged_tile (0: the cursor); size_: stream bytes of an element
  std::unique_ptr<Cursor> cursor_;
  std::vector<char> stage_;  // stream bytes [at_, at_ + stage_.size()) not yet unpacked
  int64_t at_ = 0;
};

class InOrderPack {
 public:
  // count elements of the committed type at buf, from stream byte 0.
  InOrderPack(ddt_type type, const void* buf, int64_t count)
      : type_(type), buf_(buf), count_(count), tile_(staged_tile(type)), size_(plan_of(type).size) {}

  // Packs the next n stream bytes (at most those left) into out.
  void give(char* out, int64_t n) {
    if (!tile_) {
      if (!cursor_) cursor_.reset(new Cursor(*type_->layout, type_->extent(), reinterpret_cast<uintptr_t>(buf_), count_));
      CursorCopy<true> op{out};
      cursor_->advance(n, op);
      return;
    }
    while (n > 0) {
      if (used_ == static_cast<int64_t>(stage_.size()) && !refill()) return;
      const int64_t k = std::min(n, static_cast<int64_t>(stage_.size()) - used_);
      std::memcpy(out, stage_.data() + used_, static_cast<size_t>(k));
      out += k, n -= k, used_ += k;
    }
  }

 private:
  // Packs the stream bytes from the end of the stage to the next tile boundary (tiles start at
  // each element's start) into the stage; false at the end of the stream.
  bool refill() {
    const int64_t from = at_ + static_cast<int64_t>(stage_.size()), total = size_ * count_;
    if (from >= total) return false;
    const int64_t k = from / size_, off = from - k * size_;
    const int64_t to = k * size_ + std::min(size_, (off / tile_ + 1) * tile_);
    stage_.resize(static_cast<size_t>(to - from));
    int64_t done = 0;
    ddt_pack(buf_, count_, type_, from, stage_.data(), to - from, &done);  // checked when the send was posted
    at_ = from, used_ = 0;
    return true;
  }

  ddt_type type_;
  const void* buf_;
  int64_t count_;
  int64_t tile_, size_;
  std::unique_ptr<Cursor> cursor_;
  std::vector<char> stage_;  // stream bytes [at_, at_ + stage_.size()), given up to used_
  int64_t at_ = 0, used_ = 0;
};

}  // namespace ddt
