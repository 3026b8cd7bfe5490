// The canonical layout: the typemap of ONE element of a type as a small tree of regular parts.
//
// Nodes (no node knows where it sits; its parent places it):
//   BLOCK(len)            len contiguous bytes at offset 0.
//   VEC(count, stride, c) count copies of node c, copy i at i*stride (stride may be negative
//                         or zero: MPI allows overlapping and reversed typemaps).
//   SEQ(entries)          entries (disp_j, node_j) in stream order; prefix_j is the number of
//                         packed bytes before entry j, so a byte offset is found by binary
//                         search. entries[0].disp == 0: a SEQ is shift-free, its position is
//                         held by whoever refers to it.
// A Layout is a positioned root (disp, root) plus the node and entry arrays, numbered in
// canonical DFS post-order so that equal layouts are equal arrays (see builder.cpp).
//
// Invariants, kept by builder.cpp and checked by deserialize:
//   * every child index is smaller than its parent's (post-order), root is the last node;
//   * size > 0 for every node (empty parts are dropped, an empty type has root == -1);
//   * VEC count >= 2 and SEQ has >= 2 entries;
//   * [lo, hi) is the byte range one instance touches, relative to its position.
#pragma once
#include <cstdint>
#include <vector>

#include "layout/recycle.hpp"

namespace ddt {

enum class Kind : uint8_t { Block = 0, Vec = 1, Seq = 2 };

struct Node {
  Kind kind;
  int64_t size;    // packed bytes of one instance
  int64_t count;   // Vec: copies; Seq: number of entries; Block: 1
  int64_t stride;  // Vec: bytes between copies
  int64_t child;   // Vec: child node; Seq: index of the first entry
  int64_t lo, hi;  // true byte range of one instance, relative to its own position
};

// 16 bytes: a table walk reads these and nothing else per entry (the prefix sums, needed only
// to seek, live in their own array). The builder's list items have this shape too (a node placed
// at a displacement, node -1 when empty), so a finished list becomes a table in place.
struct Entry {
  int64_t disp = 0;  // bytes from the Seq's position
  int64_t node = -1;
};

// What the builder knows of a node besides its fields (builder.cpp): its structural hash, a
// function of the node's structure alone (not of node numbers, so it holds in any builder), its
// depth; for a table, whether it is settled (every entry a block, none touching the next, no
// three of one block evenly spaced: no canonical pass changes a list of its entries) and whether
// it is uniform (every entry names one node: an index list). Not part of the canonical form:
// neither encoded nor hashed nor compared.
struct Facts {
  uint64_t hash = 0;
  int32_t depth = 0;
  bool settled = false;
  bool uniform = false;
};

struct Layout {
  std::vector<Node> nodes;
  std::vector<Entry> entries;
  std::vector<int64_t> prefix;  // per entry: packed bytes of its Seq before it
  // Per node, from the builder that made the layout, so that a type built from this one imports
  // it without reading its tables (a table of 10^4 entries was hashed entry by entry on every
  // import); empty where the layout was read by deserialize, and then recomputed on import.
  std::vector<Facts> facts;
  Layout() = default;
  Layout(const Layout&) = default;
  Layout(Layout&&) = default;
  Layout& operator=(const Layout&) = default;
  Layout& operator=(Layout&&) = default;
  // The long arrays go back to recycle.hpp for the next layout built on this thread.
  ~Layout() {
    Recycled<Entry>::give(entries);
    Recycled<int64_t>::give(prefix);
  }
  int64_t root = -1;  // -1: no data
  int64_t disp = 0;   // position of the root relative to the buffer
  int64_t size() const { return root < 0 ? 0 : nodes[root].size; }
  bool contiguous() const { return root >= 0 && nodes[root].kind == Kind::Block; }
};

// A node seen as n copies of a child at a stride: a VEC, or the pair SEQ that the builder makes of
// two copies (vec-2 in builder.cpp). entry(i) reads the node's i-th table entry (the builder reads
// tables in place, a finished layout from its entry array). False for anything else.
template <class EntryAt>
bool as_run(const Node& x, EntryAt entry, int64_t& n, int64_t& stride, int64_t& child) {
  if (x.kind == Kind::Vec) {
    n = x.count, stride = x.stride, child = x.child;
    return true;
  }
  if (x.kind == Kind::Seq && x.count == 2) {
    const Entry a = entry(0), b = entry(1);
    if (a.node != b.node) return false;
    n = 2, stride = b.disp, child = a.node;
    return true;
  }
  return false;
}

// A short table of blocks (at most kShortTable entries, every one a block): its (displacement,
// width) pairs copied out, for the executors' row loops. False for anything else.
constexpr int64_t kShortTable = 16;
inline bool short_block_table(const Layout& L, const Node& s, int64_t disp[], int64_t width[]) {
  if (s.kind != Kind::Seq || s.count > kShortTable) return false;
  const Entry* e = L.entries.data() + s.child;
  for (int64_t j = 0; j < s.count; ++j) {
    const Node& b = L.nodes[e[j].node];
    if (b.kind != Kind::Block) return false;
    disp[j] = e[j].disp;
    width[j] = b.size;
  }
  return true;
}

// Largest depth a layout may have; deeper ones are rejected by the builder and by deserialize,
// which bounds the executors' recursion.
constexpr int kMaxDepth = 256;

}  // namespace ddt
