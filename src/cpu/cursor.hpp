// The resumable cursor: a position in the packed stream of (buf, count, layout) that is found
// once by a seek and then moves forward by any number of bytes, each step continuing from where
// the last one stopped. Pipelined transfers, parallel packing, GPU thread-block starts and the
// NIC model's packet handlers start from it, so that a range [a, b) followed by [b, c) costs one
// seek, not two.
//
// State: the element index, and one Level per layout level from the root down to the block that
// holds the position (node, index of the current child, address of this node's instance), plus
// the byte offset in that block. A few words per level; copyable and comparable (two cursors over
// the same operation are equal exactly when they stand at the same stream byte).
//
// Invariant between calls: pos_ < total_ implies levels_ describes the path to the block holding
// stream byte pos_, and off_ < that block's size. pos_ == total_ is the end: levels_ is empty.
//
// Seek: division at each VEC and at the element level, binary search over prefix sums at each
// SEQ: O(depth + log entries), as walk.hpp. Advance moves whole runs of equal blocks with one
// op.blocks (a VEC of blocks) or op.table (a SEQ's entries) call, so a cursor moving a large range
// runs the same kernels as a whole pack.
//
// The op contract is walk.hpp's, except that every call must move all it is given (pack, unpack,
// copy, NIC handlers); a stopping operation such as iov uses walk().
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include "cpu/copy_kernels.hpp"
#include "cpu/permute_avx512.hpp"
#include "layout/layout.hpp"

namespace ddt {

class Cursor {
 public:
  // A cursor over count elements of layout L with extent ext, element k at buf + k * ext,
  // standing at stream byte 0. L must outlive the cursor.
  Cursor(const Layout& L, int64_t ext, uintptr_t buf, int64_t count)
      : L_(&L), ext_(ext), base_(buf + static_cast<uintptr_t>(L.disp)), count_(count), es_(L.size()),
        total_(count * L.size()) {
    seek(0);
  }

  int64_t position() const { return pos_; }
  int64_t total() const { return total_; }
  bool done() const { return pos_ >= total_; }

  // Stands the cursor at stream byte pos (clamped to [0, total]).
  void seek(int64_t pos) {
    pos = std::max<int64_t>(0, std::min(pos, total_));
    pos_ = pos;
    levels_.clear();
    off_ = 0;
    if (pos >= total_) return;
    k_ = pos / es_;
    descend(L_->root, base_ + static_cast<uintptr_t>(k_ * ext_), pos - k_ * es_);
  }

  // Moves the next min(n, total - position) stream bytes through op; returns how many.
  template <class Op>
  int64_t advance(int64_t n, Op& op) {
    n = std::min(n, total_ - pos_);
    int64_t left = n;
    while (left > 0) {
      Level& leaf = levels_.back();
      const int64_t w = L_->nodes[leaf.node].size;
      if (off_ == 0 && left >= w && run(leaf, w, left, op)) continue;
      const int64_t take = std::min(w - off_, left);
      op.piece(leaf.at + static_cast<uintptr_t>(off_), take);
      off_ += take;
      left -= take;
      pos_ += take;
      if (off_ == w) next_block();
    }
    return n;
  }

  bool operator==(const Cursor& o) const {
    if (L_ != o.L_ || base_ != o.base_ || ext_ != o.ext_ || count_ != o.count_ || pos_ != o.pos_) return false;
    if (done()) return true;
    if (k_ != o.k_ || off_ != o.off_ || levels_.size() != o.levels_.size()) return false;
    for (size_t i = 0; i < levels_.size(); ++i)
      if (levels_[i].node != o.levels_[i].node || levels_[i].i != o.levels_[i].i || levels_[i].at != o.levels_[i].at)
        return false;
    return true;
  }
  bool operator!=(const Cursor& o) const { return !(*this == o); }

 private:
  struct Level {
    int64_t node;  // layout node of this level
    int64_t i;     // VEC: current copy; SEQ: current entry (relative to the node's first)
    uintptr_t at;  // address of this instance of the node
  };

  // Address of child i of level l.
  uintptr_t child_at(const Level& l, int64_t i) const {
    const Node& n = L_->nodes[l.node];
    if (n.kind == Kind::Vec) return l.at + static_cast<uintptr_t>(i * n.stride);
    return l.at + static_cast<uintptr_t>(L_->entries[n.child + i].disp);
  }
  int64_t child_node(const Node& n, int64_t i) const {
    return n.kind == Kind::Vec ? n.child : L_->entries[n.child + i].node;
  }

  // Pushes the levels from node (an instance at address at) down to the block holding its
  // stream byte r.
  void descend(int64_t node, uintptr_t at, int64_t r) {
    for (;;) {
      const Node& n = L_->nodes[node];
      if (n.kind == Kind::Block) {
        levels_.push_back({node, 0, at});
        off_ = r;
        return;
      }
      int64_t i;
      if (n.kind == Kind::Vec) {
        const int64_t cs = L_->nodes[n.child].size;
        i = r / cs;
        r -= i * cs;
      } else {
        const int64_t* pre = L_->prefix.data() + n.child;
        i = std::upper_bound(pre, pre + n.count, r) - pre - 1;
        r -= pre[i];
      }
      levels_.push_back({node, i, at});
      at = child_at(levels_.back(), i);
      node = child_node(n, i);
    }
  }

  // The block at the top of levels_ is finished: moves to the first byte of the next one.
  void next_block() {
    off_ = 0;
    levels_.pop_back();
    while (!levels_.empty()) {
      Level& l = levels_.back();
      const Node& n = L_->nodes[l.node];
      if (++l.i < n.count) {
        descend(child_node(n, l.i), child_at(l, l.i), 0);
        return;
      }
      levels_.pop_back();
    }
    if (++k_ < count_) descend(L_->root, base_ + static_cast<uintptr_t>(k_ * ext_), 0);
  }

  // At the start of block `leaf` of width w with at least w bytes to move: moves the whole
  // blocks of width w that follow in its parent (a VEC of blocks, or a SEQ's run of entries
  // that are this block) with one call, and leaves the cursor after them. The element level of
  // a layout that is one block counts as a VEC at the extent. False: nothing to run.
  template <class Op>
  bool run(Level& leaf, int64_t w, int64_t& left, Op& op) {
    const int64_t fit = left / w;
    int64_t moved;
    if (levels_.size() == 1) {  // the root is the block: elements at the extent
      moved = std::min(fit, count_ - k_);
      if (moved < 2) return false;
      // Elements that abut (DDT_BYTE x n) are one piece: as blocks of one byte each they were
      // copied byte by byte (a 16 KiB pipelined round trip of bytes: 17 us, of which 40% in
      // the one-byte kernels).
      if (ext_ == w)
        op.piece(leaf.at, moved * w);
      else
        op.blocks(leaf.at, ext_, w, moved);
      k_ += moved - 1;
      leaf.at += static_cast<uintptr_t>((moved - 1) * ext_);
    } else {
      Level& parent = levels_[levels_.size() - 2];
      const Node& pn = L_->nodes[parent.node];
      const int64_t max = std::min(fit, pn.count - parent.i);
      if (max < 2) return false;
      if (pn.kind == Kind::Vec) {
        moved = max;
        op.blocks(leaf.at, pn.stride, w, moved);
      } else {
        moved = op.table(parent.at, L_->entries.data() + pn.child + parent.i, max, w, leaf.node);
      }
      parent.i += moved - 1;
      leaf.at = child_at(parent, parent.i);
    }
    left -= moved * w;
    pos_ += moved * w;
    next_block();
    return true;
  }

  const Layout* L_;
  int64_t ext_;
  uintptr_t base_;
  int64_t count_, es_, total_;
  int64_t pos_ = 0, k_ = 0, off_ = 0;
  std::vector<Level> levels_;
};

// The cursor operations that pack into (Gather) or unpack from a contiguous buffer, with the
// engine's kernels: what a pipelined transfer runs, chunk after chunk, on one cursor.
template <bool Gather>
struct CursorCopy {
  char* seq;                   // the packed side; advances
  const Plan* perm = nullptr;  // the message's plan, where its permute kernel moves the runs at its stride
  void piece(uintptr_t p, int64_t n) {
    char* at = reinterpret_cast<char*>(p);
    Gather ? any_copy(seq, at, n) : any_copy(at, seq, n);
    seq += n;
  }
  void blocks(uintptr_t p, int64_t stride, int64_t w, int64_t count) {
#if defined(__x86_64__)
    if (perm && permute_run(*perm, Gather, stride, w, count))
      permute_blocks<Gather>(seq, p, stride, w, count, *perm);
    else
#endif
      run_blocks<Gather>(seq, p, stride, w, count);
    seq += w * count;
  }
  int64_t table(uintptr_t base, const Entry* e, int64_t max, int64_t w, int64_t node) {
    const int64_t n = run_table<Gather>(seq, base, e, w, max, node);
    seq += w * n;
    return n;
  }
};

}  // namespace ddt
