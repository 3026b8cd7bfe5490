// Memoized layout exchange (FALCON-X section 4, Listing 1), keyed by content.
//
// The receiver keeps the layouts its peers have sent, by (peer, layout hash), each with the
// translations of the sender addresses it has seen under it: (count, address, segment) -> the
// local address of the same bytes in this process's mapping, checked once against the segment.
// The sender keeps which (peer, hash) it has sent. A repeated transfer then sends only the key
// (the hash) and the receiver finds both the layout and the address translation without work.
//
// Why no stale hit is possible: the key is the hash of the layout's content, not a handle or a
// counter, so a freed type whose handle is reused for another layout has another key, and a
// layout sent again maps to the same (correct) entry. A translation names the segment, whose id
// is never reused by its owner, and is dropped when the owner unmaps the segment; a buffer freed
// and reallocated in the same live segment is the same shared memory, so its translation holds.
//
// Both sides bound their tables by an LRU of `capacity` layouts (ddt_comm_configure). They need
// not agree: a receiver that has evicted a layout the sender believes it has asks for it again
// (a CTS with kNeedLayout), and the sender resends the RTS with the layout. Layouts pinned by
// ddt_type_commit_comm are never evicted.
#pragma once
#include <array>
#include <cstdint>
#include <list>
#include <set>
#include <unordered_map>
#include <vector>

#include "ddtkit.h"

namespace ddt::shm {

// A layout's key: its hash, which names one element's bytes, and the type's extent, which places
// the next element (two types with one layout and different extents move different bytes).
struct Hash {
  std::array<uint8_t, 16> bytes{};
  int64_t extent = 0;
  uint8_t* data() { return bytes.data(); }
  const uint8_t* data() const { return bytes.data(); }
  bool operator==(const Hash& o) const { return bytes == o.bytes && extent == o.extent; }
  bool operator!=(const Hash& o) const { return !(*this == o); }
  bool operator<(const Hash& o) const { return bytes != o.bytes ? bytes < o.bytes : extent < o.extent; }
};

Hash key_of(ddt_type t);                     // a usable type's key
Hash key_of(const struct CellHeader& h);     // the key an rts, layout or forget cell names
void put_key(struct CellHeader& h, const Hash& k);

// A layout placed in memory as far as the rendezvous' cost model sees it: its key, a count, and
// the buffer's offset in its cache line (the lines a layout touches move with that offset alone).
struct Placed {
  Hash key;
  int64_t count = 0;
  unsigned align = 0;  // address % 64
  bool operator==(const Placed& o) const { return count == o.count && align == o.align && key == o.key; }
};

// The last N answers of a function of K, kept by a caller per thread: a ring, the oldest answer
// replaced first. For answers a repeated transfer would otherwise derive again on every message.
template <class K, class V, int N>
class Recent {
 public:
  const V* find(const K& k) const {
    for (int i = 0; i < used_; ++i)
      if (slot_[i].key == k) return &slot_[i].value;
    return nullptr;
  }
  void put(const K& k, const V& v) {
    slot_[next_] = Slot{k, v};
    next_ = (next_ + 1) % N;
    if (used_ < N) ++used_;
  }

 private:
  struct Slot {
    K key;
    V value;
  };
  Slot slot_[N];
  int next_ = 0, used_ = 0;
};

struct MemoKey {
  int peer;
  Hash hash;
  bool operator==(const MemoKey& o) const { return peer == o.peer && hash == o.hash; }
};
struct MemoKeyHash {
  size_t operator()(const MemoKey& k) const {
    uint64_t h;
    __builtin_memcpy(&h, k.hash.data(), 8);  // the layout hash is already uniform
    return static_cast<size_t>(h ^ ((static_cast<uint64_t>(k.peer) + static_cast<uint64_t>(k.hash.extent)) * 0x9e3779b97f4a7c15ULL));
  }
};

class LayoutCache {
 public:
  ~LayoutCache() { clear(); }
  void set_capacity(int64_t n);
  // The peer's layout, or null. Counts as a use for the LRU.
  ddt_type find(int peer, const Hash& h);
  // Takes t (freed when evicted); replaces an entry of the same key.
  void insert(int peer, const Hash& h, ddt_type t, bool pin);
  void unpin(int peer, const Hash& h);
  // The remembered local address of (count, addr) in segment seg under (peer, h), or null.
  const char* translation(int peer, const Hash& h, int64_t count, uint64_t addr, uint64_t seg);
  void remember(int peer, const Hash& h, int64_t count, uint64_t addr, uint64_t seg, const char* local);
  void drop_segment(int peer, uint64_t seg);  // the owner has unmapped it
  void clear();

 private:
  struct Translation {
    int64_t count;
    uint64_t addr, seg;
    const char* local;
  };
  struct Entry {
    MemoKey key;
    ddt_type type;
    bool pinned;
    std::vector<Translation> seen;  // at most kSeen, newest last
  };
  static constexpr size_t kSeen = 8;
  Entry* touch(int peer, const Hash& h);
  void evict();
  int64_t capacity_ = 256;
  std::list<Entry> lru_;  // most recent first
  std::unordered_map<MemoKey, std::list<Entry>::iterator, MemoKeyHash> index_;
};

// The sender's side: which (peer, hash) it has sent, bounded the same way.
class SentSet {
 public:
  void set_capacity(int64_t n) { capacity_ = n; }
  bool has(int peer, const Hash& h);  // a use for the LRU; pinned layouts every peer has
  void add(int peer, const Hash& h);
  void erase(int peer, const Hash& h);
  void pin(const Hash& h) { pinned_.insert(h); }
  void unpin(const Hash& h) { pinned_.erase(h); }

 private:
  int64_t capacity_ = 256;
  std::set<Hash> pinned_;
  std::list<MemoKey> lru_;
  std::unordered_map<MemoKey, std::list<MemoKey>::iterator, MemoKeyHash> index_;
};

}  // namespace ddt::shm
