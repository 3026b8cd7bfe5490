// Building canonical layouts. Each constructor of src/type/ describes its typemap with three
// operations, and the builder applies the canonicalisation passes as it goes, so a layout is
// born canonical and never exists in an expanded form (commit cost grows with the description,
// not with count x blocks).
#pragma once
#include <memory>
#include <string>
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
  int64_t depth(int64_t n) const { return n < 0 ? 0 : depth_[n]; }
  std::vector<Node> nodes_;
  std::vector<Entry> entries_;
  std::vector<int> depth_;
  std::unordered_map<std::string, int64_t> interned_;
  int error_ = 0;
};

}  // namespace ddt
