// Building canonical layouts. Each constructor of src/type/ describes its typemap with three
// operations, and the builder applies the canonicalisation passes as it goes, so a layout is
// born canonical and never exists in an expanded form (commit cost grows with the description,
// not with count x blocks).
#pragma once
#include <memory>
#include <unordered_map>
#include <utility>
#include <vector>

#include "layout/layout.hpp"

namespace ddt {

// A node placed at a byte displacement; node == -1 is the empty typemap.
struct Placed {
  int64_t disp = 0;
  int64_t node = -1;
};

class Builder {
 public:
  // Copies the layout of a child type into this builder (memoised per source).
  Placed import(const Layout& src);
  Placed block(int64_t len);
  Placed shift(Placed p, int64_t by) const { p.disp += by; return p; }
  // count copies of p, copy i displaced by i*stride.
  Placed vec(int64_t count, int64_t stride, Placed p);
  // The concatenation, in stream order, of the typemaps of items.
  Placed seq(std::vector<Placed> items);
  // Renumbers the reachable nodes in canonical post-order and returns the layout.
  std::shared_ptr<const Layout> finish(Placed root);
  const Node& node(int64_t i) const { return nodes_[i]; }
  // Set by vec/seq when a displacement computation would overflow or the depth limit is hit.
  int error() const { return error_; }

 private:
  int64_t intern(Node n, const std::vector<Entry>* entries);
  bool same(int64_t idx, const Node& n, const std::vector<Entry>* entries) const;
  // seq-period: items as repetitions of a short pattern, or an empty Placed.
  Placed period(const std::vector<Placed>& items);
  // node as n copies of child at a stride: a VEC, or a pair SEQ of one node (vec-2).
  bool as_run(int64_t node, int64_t& n, int64_t& stride, int64_t& child) const;
  std::vector<Node> nodes_;
  std::vector<Entry> entries_;
  std::vector<int64_t> prefix_;  // parallel to entries_
  std::vector<int> depth_;
  // Hash-consing: open addressing over node indices (-1 = empty), keyed by a structural hash.
  // Constructors intern a node per table entry, so this must cost no allocation per lookup.
  std::vector<int64_t> slots_;
  std::vector<uint64_t> hashes_;  // per node, to grow the table without rehashing entries
  std::unordered_map<const Layout*, Placed> imported_;
  int error_ = 0;
};

}  // namespace ddt
