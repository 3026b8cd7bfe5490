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
#include "layout/recycle.hpp"

namespace ddt {

// A node placed at a byte displacement; node == -1 is the empty typemap. The same type as a
// table entry: the list a seq() ends with is turned into its table in place (table()).
using Placed = Entry;

class Builder {
 public:
  // local_passes = false makes every canonicalisation pass walk the whole list, and every scan
  // for dirty items test each item exactly (the reference behaviour that tests compare the
  // windowed passes, the rescans of what changed and the scan's filter against); the result is
  // the same. The arrays start with room for a few nodes and imports: a type of a few
  // constructors has a few, and growing them 1, 2, 4, 8 made allocation most of a small type's
  // commit (WRF_x_vec's create + commit + free: 50.5k instructions, 35k now, with finish()'s
  // scratch on the stack and imports memoised in a list).
  explicit Builder(bool local_passes = true) : local_passes_(local_passes) {
    nodes_.reserve(8);
    facts_.reserve(8);
    imported_.reserve(4);
    maps_.reserve(16);
  }
  // The layout of a child type in this builder (memoised per source). Its nodes are interned;
  // its tables are not copied but read in place from src (shared tables, see builder.cpp), so
  // src must outlive the builder.
  Placed import(const Layout& src);
  Placed block(int64_t len);
  // Room for this many table entries' prefix sums. The entries themselves need no reservation:
  // the largest table is usually the list a seq() ends with, which becomes the table in place.
  void reserve(size_t entries) {
    if (prefix_.empty() && prefix_.capacity() < entries) prefix_ = Recycled<int64_t>::take(entries);
    prefix_.reserve(entries);
  }
  Placed shift(Placed p, int64_t by) const { p.disp += by; return p; }
  // count copies of p, copy i displaced by i*stride.
  Placed vec(int64_t count, int64_t stride, Placed p);
  // The concatenation, in stream order, of the typemaps of items.
  Placed seq(std::vector<Placed> items);
  // Renumbers the reachable nodes in canonical post-order and returns the layout. The last call
  // on a builder: the root table's entries are moved into the layout, not copied.
  std::shared_ptr<const Layout> finish(Placed root);
  const Node& node(int64_t i) const { return nodes_[i]; }
  // Set by vec/seq when a displacement computation would overflow or the depth limit is hit.
  int error() const { return error_; }

 private:
  // Interns n, whose facts (structural hash, depth, settled) are f. A Seq's entries (and their
  // prefix sums) are the last n.count of entries_, appended by the caller, and dropped again when
  // an equal node exists already; or, when n.child < 0, a shared table (nothing to append or
  // drop). Settled is a property of the structure: an equal node found is settled if either is.
  int64_t intern(Node n, Facts f);
  bool same(int64_t idx, const Node& n) const;
  // Ranges [first, second) of items: the windows that the next pass must look at, or the ranges
  // that a pass rewrote (see builder.cpp).
  using Ranges = std::vector<std::pair<size_t, size_t>>;
  // The windows of items (see builder.cpp), into w; false when there are none: the items are
  // settled. With rewritten (sorted, from the pass that just ran), only the items whose dirt
  // that pass can have changed are looked at again; the windows are the same as a full scan's.
  bool find_windows(const std::vector<Placed>& items, const Ranges* rewritten, Ranges& w) const;
  // Adds the windows of the dirty items among items[from, to) to w.
  void scan(const std::vector<Placed>& items, size_t from, size_t to, Ranges& w) const;
  // The SEQ of canonical items (at least two), written, summed, bounded and hashed in one pass.
  // items may be taken over as the entry array (then left empty). settled: the passes found no
  // dirty item in them (see Facts).
  Placed table(std::vector<Placed>& items, bool settled = false);
  // Entry k of Seq node n, its node in this builder's numbering (n may be a shared table).
  Entry entry(const Node& n, int64_t k) const {
    if (n.child >= 0) return entries_[n.child + k];
    const Shared& s = shared_[~n.child];
    const Entry& e = s.entries[k];
    return {e.disp, maps_[s.map + e.node]};
  }
  // seq-period: items as repetitions of a short pattern, or an empty Placed.
  Placed period(const std::vector<Placed>& items);
  // node as n copies of child at a stride: a VEC, or a pair SEQ of one node (vec-2).
  bool as_run(int64_t node, int64_t& n, int64_t& stride, int64_t& child) const;
  // A table of an imported layout, read in place: a Seq node whose child is ~i refers to
  // shared_[i]. Its entries name nodes in the source's numbering: source node j is node
  // maps_[map + j] here.
  struct Shared {
    const Entry* entries;
    size_t map;
  };
  std::vector<Node> nodes_;
  std::vector<Shared> shared_;
  std::vector<int64_t> maps_;  // the imported layouts' node translations, one after another
  std::vector<Entry> entries_;
  std::vector<int64_t> prefix_;  // parallel to entries_
  std::vector<Facts> facts_;     // parallel to nodes_
  // Hash-consing: open addressing over node indices (-1 = empty), keyed by the structural hash
  // (facts_, which also grows the table without rehashing entries). Constructors intern a node
  // per table entry, so this must cost no allocation per lookup.
  std::vector<int64_t> slots_;
  // Imports, memoised per source: a short list searched in order (a type has a few children),
  // and past kImportList a hash map as well, so that a struct of many types stays linear.
  static constexpr size_t kImportList = 16;
  std::vector<std::pair<const Layout*, Placed>> imported_;
  std::unordered_map<const Layout*, Placed> imported_index_;
  int error_ = 0;
  bool local_passes_;
};

}  // namespace ddt
