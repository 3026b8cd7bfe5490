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

// Whether the plan's executors move any byte range of the type with a seek of a few divisions
// (a nest, a short table of nests, a list of blocks: execute.cpp's move), so that each piece can
// be one ranged pack or unpack, as ddt_pack with an offset is, instead of the cursor's walk. The
// cursor pays per run of blocks what the executors pay once per range: cells of 16 KiB (less
// their header) of the DDTBench kernels, one process, medians of 21, cursor / ranged calls, pack
// and unpack: WRF_y 1.17-1.64 and 1.03-1.22, LAMMPS_full 1.25-1.39 and 1.28-1.44, NAS_MG_x W
// 1.19 and 1.23, A 1.06 and 1.14, SPECFEM3D_cm 1.16-1.19 and 1.13-1.17, WRF_x 0.99-1.01; the
// cursor ahead only on dense nests (NAS_MG_y and _z A, 0.93-0.95). Walked layouts (long tables
// of nested types) keep the cursor: their ranged calls would seek from the start every time.
inline bool ranged_pieces(ddt_type type) {
  const Plan& p = plan_of(type);
  return p.shape == Shape::Nest || p.shape == Shape::Parts || (p.shape == Shape::List && p.blocks_only);
}

// What both directions hold: the message (count elements of the committed type at buf, from
// stream byte 0), its staged tile (0: the cursor or ranged calls), whether its pieces are ranged
// calls (ranged_pieces), and the cursor, made at the first piece where they are not.
class InOrder {
 protected:
  InOrder(ddt_type type, const void* buf, int64_t count)
      : type_(type), buf_(buf), count_(count), tile_(staged_tile(type)), size_(plan_of(type).size),
        ranged_(!tile_ && ranged_pieces(type)) {}
  // The plan, where its permute kernel moves this direction's runs (a pack: of a message under
  // plan.hpp's kPermuteGatherMaxBytes), else null: the cursor's run kernels. Round trips of one
  // vector of bytes through the pipelined cells (DDTKIT_MECH=pipe, 2 ranks, medians of 380;
  // without -> with): 1 B blocks at 2 B, 32 KiB 28.2 -> 9.8 us, 2 MiB 1,250 -> 255; 4 B at 8 B
  // 11.6 -> 9.3, 128 KiB 30.8 -> 22.4, 2 MiB 365 -> 250.
  const Plan* permuted(bool gather) const {
    const Plan& p = plan_of(type_);
    int64_t bytes = 0;
    if (!p.permute_blocks[gather]) return nullptr;
    if (gather && (__builtin_mul_overflow(p.size, count_, &bytes) || !permute_gather(p, bytes))) return nullptr;
    return &p;
  }
  Cursor& cursor() {
    if (!cursor_) cursor_.reset(new Cursor(*type_->layout, type_->extent(), reinterpret_cast<uintptr_t>(buf_), count_));
    return *cursor_;
  }

  ddt_type type_;
  const void* buf_;
  int64_t count_;
  int64_t tile_, size_;  // tile_: staged_tile; size_: stream bytes of an element (tiles start at each)
  bool ranged_;
  std::vector<char> stage_;
  int64_t at_ = 0;  // the stream byte of stage_[0]

 private:
  std::unique_ptr<Cursor> cursor_;
};

class InOrderUnpack : InOrder {
 public:
  InOrderUnpack(ddt_type type, void* buf, int64_t count) : InOrder(type, buf, count) {}

  // The next n stream bytes.
  void take(const char* data, int64_t n) {
    if (ranged_) {  // (at most the bytes left, as the cursor takes them)
      int64_t done = 0;
      n = std::min(n, size_ * count_ - at_);
      ddt_unpack(data, n, const_cast<void*>(buf_), count_, type_, at_, &done);  // checked when the receive was posted
      at_ += done;
      return;
    }
    if (!tile_) {
      CursorCopy<false> op{const_cast<char*>(data), permuted(false)};
      cursor().advance(n, op);
      return;
    }
    stage_.insert(stage_.end(), data, data + n);
    // Unpack up to the last tile boundary staged.
    const int64_t end = at_ + static_cast<int64_t>(stage_.size()), k = end / size_;
    const int64_t cut = k * size_ + (end - k * size_) / tile_ * tile_;
    if (cut - at_ >= tile_) flush(cut);
  }

  // Every byte has been taken: unpacks what is staged.
  void finish() {
    if (tile_) flush(at_ + static_cast<int64_t>(stage_.size()));
  }

 private:
  // Unpacks the staged stream bytes [at_, cut).
  void flush(int64_t cut) {
    const int64_t n = cut - at_;
    if (n <= 0) return;
    int64_t done = 0;
    ddt_unpack(stage_.data(), n, const_cast<void*>(buf_), count_, type_, at_, &done);  // checked when the receive was posted
    stage_.erase(stage_.begin(), stage_.begin() + n);
    at_ = cut;
  }
};

class InOrderPack : InOrder {
 public:
  InOrderPack(ddt_type type, const void* buf, int64_t count) : InOrder(type, buf, count) {}

  // Packs the next n stream bytes (at most those left) into out.
  void give(char* out, int64_t n) {
    if (ranged_) {
      int64_t done = 0;
      ddt_pack(buf_, count_, type_, at_, out, n, &done);  // checked when the send was posted
      at_ += done;
      return;
    }
    if (!tile_) {
      CursorCopy<true> op{out, permuted(true)};
      cursor().advance(n, op);
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
  // Packs the next tile (or the rest of its element) into the stage: the stage always ends at a
  // tile boundary, so the next one is a tile on, or the element's end. False at the stream's end.
  bool refill() {
    const int64_t from = at_ + static_cast<int64_t>(stage_.size());
    if (from >= size_ * count_) return false;
    const int64_t to = std::min(from + tile_, (from / size_ + 1) * size_);
    stage_.resize(static_cast<size_t>(to - from));
    int64_t done = 0;
    ddt_pack(buf_, count_, type_, from, stage_.data(), to - from, &done);  // checked when the send was posted
    at_ = from, used_ = 0;
    return true;
  }

  int64_t used_ = 0;  // stage_ bytes already given
};

}  // namespace ddt
