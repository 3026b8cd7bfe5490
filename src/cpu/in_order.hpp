// A receive whose stream arrives in order, a piece at a time (the runtime's pipelined data
// cells, src/shm/comm.cpp): unpacked through a resumable cursor, sought once at byte 0 and
// advanced piece by piece; except into the grid of a transpose (plan.hpp's Plan::tile), whose
// pieces are staged until they make whole tiles, which then go through the tiled executor
// (tile.hpp). A cell holds less than a tile of FFT2D's receive type from N = 512 on (a tile is
// 64 n0 bytes: 32 KiB at N = 1024 against 16 KiB cells), so unpacked cell by cell the grid was
// written in stream order, a line per element.
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

class InOrderUnpack {
 public:
  // Staging beyond this many bytes (a tile of a grid of more than 16,384 rows) is not worth its
  // memory: such a receive goes through the cursor.
  static constexpr int64_t kMaxTile = int64_t{1} << 20;

  // count elements of the committed type at buf, from stream byte 0.
  InOrderUnpack(ddt_type type, void* buf, int64_t count) : type_(type), buf_(buf), count_(count) {
    const Plan& p = plan_of(type);
    // A tile is 64 / e grid rows of n0 elements of e bytes (tile.hpp's Grid): 64 n0 bytes.
    if (p.tile && 64 * p.n[0] <= kMaxTile) tile_ = 64 * p.n[0], size_ = p.size;
  }

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
  int64_t tile_ = 0, size_ = 0;  // tile_: bytes of a tile of rows (0: the cursor); size_: of an element
  std::unique_ptr<Cursor> cursor_;
  std::vector<char> stage_;  // stream bytes [at_, at_ + stage_.size()) not yet unpacked
  int64_t at_ = 0;
};

}  // namespace ddt
