#include "util/buffer_pool.hpp"

#include <cstdlib>

namespace ddt {

namespace {

// The class of a request: the smallest c with 2^(c + kMinShift) >= bytes, or kClasses when
// none holds it. The loop stops at the last class, so no shift reaches the sign bit.
int size_class(int64_t bytes) {
  int c = 0;
  while (c < BufferPool::kClasses && (int64_t(1) << (c + BufferPool::kMinShift)) < bytes) ++c;
  return c;
}

}  // namespace

BufferPool::~BufferPool() {
  for (auto& list : free_)
    for (char* p : list) std::free(p);
}

BufferPool& BufferPool::shared() {
  static BufferPool* p = new BufferPool;
  return *p;
}

int64_t BufferPool::class_bytes(int64_t bytes) {
  const int c = size_class(bytes < 1 ? 1 : bytes);
  return c < kClasses ? int64_t(1) << (c + kMinShift) : 0;
}

char* BufferPool::take(int64_t bytes, int64_t* cap) {
  *cap = class_bytes(bytes);
  if (*cap == 0) return nullptr;
  const int c = size_class(*cap);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!free_[c].empty()) {
      char* p = free_[c].back();
      free_[c].pop_back();
      held_ -= *cap;
      return p;
    }
  }
  // The capacity is a multiple of 4 KiB, hence of the alignment, as aligned_alloc requires.
  char* p = static_cast<char*>(std::aligned_alloc(64, static_cast<size_t>(*cap)));
  if (!p) *cap = 0;
  return p;
}

void BufferPool::give(char* p, int64_t cap) {
  if (!p) return;
  const int c = size_class(cap);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (static_cast<int>(free_[c].size()) < keep_ && held_ + cap <= max_held_) {
      free_[c].push_back(p);
      held_ += cap;
      return;
    }
  }
  std::free(p);
}

int64_t BufferPool::held_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return held_;
}

}  // namespace ddt
