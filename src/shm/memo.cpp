// The layout cache and the sender's record of it (memo.hpp).
#include "shm/memo.hpp"

#include <cstring>

#include "shm/job.hpp"
#include "type/type.hpp"

namespace ddt::shm {

Hash key_of(ddt_type t) {
  Hash k;
  ddt::layout_hash(t, k.data());
  k.extent = t->extent();
  return k;
}

Hash key_of(const CellHeader& h) {
  Hash k;
  std::memcpy(k.data(), h.hash, 16);
  k.extent = h.extent;
  return k;
}

void put_key(CellHeader& h, const Hash& k) {
  std::memcpy(h.hash, k.data(), 16);
  h.extent = k.extent;
}

void LayoutCache::set_capacity(int64_t n) {
  capacity_ = n;
  evict();
}

// The most recent entry is answered without the index: a repeated transfer asks for the same
// layout every time, and the index's lines are cold by then (the copy between two transfers
// evicts them).
LayoutCache::Entry* LayoutCache::touch(int peer, const Hash& h) {
  if (!lru_.empty() && lru_.front().key == MemoKey{peer, h}) return &lru_.front();
  auto it = index_.find(MemoKey{peer, h});
  if (it == index_.end()) return nullptr;
  lru_.splice(lru_.begin(), lru_, it->second);
  return &*it->second;
}

ddt_type LayoutCache::find(int peer, const Hash& h) {
  Entry* e = touch(peer, h);
  return e ? e->type : DDT_TYPE_NULL;
}

void LayoutCache::insert(int peer, const Hash& h, ddt_type t, bool pin) {
  const MemoKey k{peer, h};
  auto it = index_.find(k);
  if (it != index_.end()) {
    pin = pin || it->second->pinned;
    ddt_type_free(&it->second->type);
    lru_.erase(it->second);
    index_.erase(it);
  }
  lru_.push_front(Entry{k, t, pin, {}});
  index_[k] = lru_.begin();
  evict();
}

void LayoutCache::unpin(int peer, const Hash& h) {
  auto it = index_.find(MemoKey{peer, h});
  if (it != index_.end()) it->second->pinned = false;
  evict();
}

void LayoutCache::evict() {
  // From the least recently used end, skipping pinned entries.
  int64_t unpinned = 0;
  for (const Entry& e : lru_) unpinned += e.pinned ? 0 : 1;
  for (auto it = lru_.end(); unpinned > capacity_ && it != lru_.begin();) {
    --it;
    if (it->pinned) continue;
    ddt_type_free(&it->type);
    index_.erase(it->key);
    it = lru_.erase(it);
    --unpinned;
  }
}

const char* LayoutCache::translation(int peer, const Hash& h, int64_t count, uint64_t addr, uint64_t seg) {
  Entry* e = touch(peer, h);  // find() has just touched it: the front entry
  if (!e) return nullptr;
  for (auto t = e->seen.rbegin(); t != e->seen.rend(); ++t)
    if (t->count == count && t->addr == addr && t->seg == seg) return t->local;
  return nullptr;
}

void LayoutCache::remember(int peer, const Hash& h, int64_t count, uint64_t addr, uint64_t seg, const char* local) {
  auto it = index_.find(MemoKey{peer, h});
  if (it == index_.end()) return;
  auto& seen = it->second->seen;
  if (seen.size() == kSeen) seen.erase(seen.begin());
  seen.push_back(Translation{count, addr, seg, local});
}

void LayoutCache::drop_segment(int peer, uint64_t seg) {
  for (Entry& e : lru_) {
    if (e.key.peer != peer) continue;
    for (auto t = e.seen.begin(); t != e.seen.end();) t = t->seg == seg ? e.seen.erase(t) : t + 1;
  }
}

void LayoutCache::clear() {
  for (Entry& e : lru_) ddt_type_free(&e.type);
  lru_.clear();
  index_.clear();
}

bool SentSet::has(int peer, const Hash& h) {
  if (!lru_.empty() && lru_.front() == MemoKey{peer, h}) return true;  // the last one asked (LayoutCache::touch)
  if (pinned_.count(h)) return true;
  auto it = index_.find(MemoKey{peer, h});
  if (it == index_.end()) return false;
  lru_.splice(lru_.begin(), lru_, it->second);
  return true;
}

void SentSet::add(int peer, const Hash& h) {
  if (has(peer, h)) return;
  lru_.push_front(MemoKey{peer, h});
  index_[lru_.front()] = lru_.begin();
  while (static_cast<int64_t>(lru_.size()) > capacity_ && !lru_.empty()) {
    index_.erase(lru_.back());
    lru_.pop_back();
  }
}

void SentSet::erase(int peer, const Hash& h) {
  auto it = index_.find(MemoKey{peer, h});
  if (it == index_.end()) return;
  lru_.erase(it->second);
  index_.erase(it);
}

}  // namespace ddt::shm
