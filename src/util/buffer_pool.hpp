// Reused byte buffers for staging: a pool of allocations in power-of-two size classes.
//
// A program that moves the same face every iteration would otherwise pay a fresh allocation
// each time (and, past malloc's mmap threshold, fresh page faults). Size classes are powers of
// two from 4 KiB; a class keeps at most keep_per_class free buffers and the pool at most
// max_held_bytes in all, so a burst of large messages does not pin memory. Every buffer is
// 64-byte aligned. Thread-safe: one mutex guards the free lists, and it is never held across
// an allocation or a free.
#pragma once
#include <cstdint>
#include <mutex>
#include <utility>
#include <vector>

namespace ddt {

class BufferPool {
 public:
  static constexpr int kMinShift = 12;  // the smallest class: 4 KiB
  static constexpr int kClasses = 40;   // the largest class: 2^51 bytes
  static constexpr int kKeepPerClass = 4;
  static constexpr int64_t kMaxHeldBytes = int64_t(256) << 20;

  explicit BufferPool(int keep_per_class = kKeepPerClass, int64_t max_held_bytes = kMaxHeldBytes)
      : keep_(keep_per_class), max_held_(max_held_bytes) {
    // give() runs in destructors: its push_back must not allocate.
    for (auto& list : free_) list.reserve(keep_ > 0 ? keep_ : 0);
  }
  // Frees the buffers it holds. Buffers still taken from it must not be returned afterwards.
  ~BufferPool();
  BufferPool(const BufferPool&) = delete;
  BufferPool& operator=(const BufferPool&) = delete;

  // The process-wide pool (the MPI interposer's staging, the runtime's). Never destroyed:
  // requests may complete, and give their buffers back, while the process exits.
  static BufferPool& shared();

  // The capacity a request of `bytes` gets: its size class (a request of 0 or fewer bytes
  // gets the smallest); 0 when no class holds it.
  static int64_t class_bytes(int64_t bytes);

  // A buffer of class_bytes(bytes) bytes, reused when one is free; null (and *cap = 0) when no
  // class holds it or the allocation fails.
  char* take(int64_t bytes, int64_t* cap);
  // Returns a buffer that take() gave with capacity cap: kept for reuse, or freed when its
  // class or the pool is full.
  void give(char* p, int64_t cap);

  // Bytes held free for reuse (for tests and reports).
  int64_t held_bytes() const;

 private:
  const int keep_;
  const int64_t max_held_;
  mutable std::mutex mu_;
  std::vector<char*> free_[kClasses];
  int64_t held_ = 0;
};

// A buffer taken from a pool and given back when it dies (move-only).
class PooledBuffer {
 public:
  PooledBuffer() = default;
  explicit PooledBuffer(int64_t bytes, BufferPool& pool = BufferPool::shared()) : pool_(&pool) {
    p_ = pool.take(bytes, &cap_);  // in the body: cap_'s own initializer would run after p_'s
  }
  PooledBuffer(PooledBuffer&& o) noexcept : pool_(o.pool_), p_(o.p_), cap_(o.cap_) { o.p_ = nullptr, o.cap_ = 0; }
  PooledBuffer& operator=(PooledBuffer&& o) noexcept {
    if (this != &o) {
      PooledBuffer gone(std::move(*this));
      pool_ = o.pool_, p_ = o.p_, cap_ = o.cap_;
      o.p_ = nullptr, o.cap_ = 0;
    }
    return *this;
  }
  ~PooledBuffer() {
    if (p_) pool_->give(p_, cap_);
  }
  char* data() const { return p_; }
  bool ok() const { return p_ != nullptr; }
  int64_t capacity() const { return cap_; }  // at least the bytes asked for, when ok()

 private:
  BufferPool* pool_ = nullptr;
  char* p_ = nullptr;
  int64_t cap_ = 0;
};

}  // namespace ddt
