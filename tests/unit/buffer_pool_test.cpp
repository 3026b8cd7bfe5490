// The staging buffer pool (src/util/buffer_pool.hpp): reuse, size classes, the limits on what it
// keeps, concurrent use, and the edges of the size range. Each test but the last uses a pool of
// its own, so what other tests left in a pool cannot change what it sees.
#include "util/buffer_pool.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <limits>
#include <thread>
#include <vector>

using ddt::BufferPool;
using ddt::PooledBuffer;

namespace {

constexpr int64_t KiB = 1024, MiB = 1024 * KiB;

bool aligned64(const void* p) { return reinterpret_cast<uintptr_t>(p) % 64 == 0; }

}  // namespace

TEST(BufferPool, ReturnedBufferIsReusedWithinItsClass) {
  BufferPool pool;
  char* first;
  {
    PooledBuffer b(5000, pool);
    ASSERT_TRUE(b.ok());
    first = b.data();
    std::memset(first, 1, 5000);
  }
  EXPECT_EQ(pool.held_bytes(), 8 * KiB);
  PooledBuffer again(8 * KiB, pool);  // same class as 5000 bytes
  EXPECT_EQ(again.data(), first);
  EXPECT_EQ(pool.held_bytes(), 0);
  PooledBuffer other(8 * KiB, pool);  // the class is empty now: a fresh allocation
  ASSERT_TRUE(other.ok());
  EXPECT_NE(other.data(), first);
}

TEST(BufferPool, SizeClassesArePowersOfTwoFrom4KiB) {
  EXPECT_EQ(BufferPool::class_bytes(1), 4 * KiB);
  EXPECT_EQ(BufferPool::class_bytes(4 * KiB), 4 * KiB);
  EXPECT_EQ(BufferPool::class_bytes(4 * KiB + 1), 8 * KiB);
  EXPECT_EQ(BufferPool::class_bytes(MiB - 1), MiB);
  EXPECT_EQ(BufferPool::class_bytes(MiB), MiB);
  EXPECT_EQ(BufferPool::class_bytes(MiB + 1), 2 * MiB);
  EXPECT_EQ(BufferPool::class_bytes(int64_t(1) << 51), int64_t(1) << 51);  // the largest class

  BufferPool pool;
  for (int64_t n : {int64_t(1), 4 * KiB, 4 * KiB + 1, 100 * KiB, 3 * MiB}) {
    PooledBuffer b(n, pool);
    ASSERT_TRUE(b.ok()) << n;
    EXPECT_EQ(b.capacity(), BufferPool::class_bytes(n)) << n;
    EXPECT_GE(b.capacity(), n);
    EXPECT_TRUE(aligned64(b.data()));
    std::memset(b.data(), 0x5a, static_cast<size_t>(b.capacity()));  // all of it is ours
  }

  // A buffer of one class is not handed out for another.
  char* small;
  {
    PooledBuffer b(4 * KiB, pool);
    small = b.data();
  }
  PooledBuffer larger(4 * KiB + 1, pool);
  EXPECT_NE(larger.data(), small);
  PooledBuffer same(100, pool);
  EXPECT_EQ(same.data(), small);
}

TEST(BufferPool, KeepsAtMostItsLimits) {
  {  // per class
    BufferPool pool(2, 256 * MiB);
    std::vector<PooledBuffer> out;
    for (int i = 0; i < 3; ++i) out.emplace_back(4 * KiB, pool);
    out.clear();
    EXPECT_EQ(pool.held_bytes(), 2 * 4 * KiB);
  }
  {  // in all
    BufferPool pool(4, 16 * KiB);
    std::vector<PooledBuffer> out;
    for (int i = 0; i < 3; ++i) out.emplace_back(8 * KiB, pool);
    out.clear();
    EXPECT_EQ(pool.held_bytes(), 16 * KiB);
  }
}

TEST(BufferPool, MovesHandOwnershipOver) {
  BufferPool pool;
  PooledBuffer a(10, pool);
  char* p = a.data();
  PooledBuffer b(std::move(a));
  EXPECT_FALSE(a.ok());
  EXPECT_EQ(b.data(), p);
  PooledBuffer c(20 * KiB, pool);
  c = std::move(b);  // c's own buffer goes back to the pool
  EXPECT_EQ(c.data(), p);
  EXPECT_EQ(c.capacity(), 4 * KiB);
  EXPECT_EQ(pool.held_bytes(), 32 * KiB);
  PooledBuffer empty;
  EXPECT_FALSE(empty.ok());
  EXPECT_EQ(empty.capacity(), 0);
}

TEST(BufferPool, ZeroAndNegativeSizesGetTheSmallestClass) {
  // A staged message of 0 bytes still needs a valid pointer to hand the MPI.
  BufferPool pool;
  for (int64_t n : {int64_t(0), int64_t(-1), std::numeric_limits<int64_t>::min()}) {
    PooledBuffer b(n, pool);
    ASSERT_TRUE(b.ok()) << n;
    EXPECT_EQ(b.capacity(), 4 * KiB);
    EXPECT_TRUE(aligned64(b.data()));
  }
}

TEST(BufferPool, LargeSizes) {
  BufferPool pool;
  {
    // Larger than the pool keeps in all: usable, then freed rather than kept.
    PooledBuffer b(300 * MiB, pool);
    ASSERT_TRUE(b.ok());
    EXPECT_EQ(b.capacity(), 512 * MiB);
    b.data()[0] = 1;
    b.data()[300 * MiB - 1] = 2;
  }
  EXPECT_EQ(pool.held_bytes(), 0);
  {
    PooledBuffer b(64 * MiB, pool);
    ASSERT_TRUE(b.ok());
    b.data()[64 * MiB - 1] = 3;
  }
  EXPECT_EQ(pool.held_bytes(), 64 * MiB);
  // Beyond the largest class: no buffer, no allocation attempted.
  for (int64_t n : {(int64_t(1) << 51) + 1, std::numeric_limits<int64_t>::max()}) {
    EXPECT_EQ(BufferPool::class_bytes(n), 0) << n;
    PooledBuffer b(n, pool);
    EXPECT_FALSE(b.ok()) << n;
    EXPECT_EQ(b.capacity(), 0);
  }
}

// Threads take and return buffers of several classes at once, each holding a few at a time and
// filling them with its own byte: a buffer handed to two holders at once would show the other's
// byte when checked.
void churn(BufferPool& pool, int threads, int rounds) {
  std::atomic<int> bad{0};
  std::vector<std::thread> ts;
  for (int t = 0; t < threads; ++t) {
    ts.emplace_back([&pool, &bad, t, rounds] {
      const int64_t sizes[] = {0, 100, 4 * KiB, 5000, 20 * KiB, 70 * KiB, 300 * KiB};
      uint32_t x = 2463534242u + t;
      struct Held {
        PooledBuffer b;
        int64_t n;
        char mark;
      };
      std::vector<Held> held;
      for (int r = 0; r < rounds; ++r) {
        x ^= x << 13, x ^= x >> 17, x ^= x << 5;
        const int64_t n = sizes[x % 7] + 1;
        const char mark = static_cast<char>(t * 31 + r);
        PooledBuffer b(n, pool);
        if (!b.ok()) {
          ++bad;
          continue;
        }
        std::memset(b.data(), mark, static_cast<size_t>(n));
        held.push_back({std::move(b), n, mark});
        if (held.size() > 3 || (x >> 8) % 2) {
          // The oldest buffer still carries its mark (its first 4 KiB and its last byte).
          const Held& old = held.front();
          for (int64_t i = 0; i < old.n && i < 4 * KiB; ++i)
            if (old.b.data()[i] != old.mark) ++bad;
          if (old.b.data()[old.n - 1] != old.mark) ++bad;
          held.erase(held.begin());
        }
      }
    });
  }
  for (auto& th : ts) th.join();
  EXPECT_EQ(bad.load(), 0);
}

TEST(BufferPool, ManyThreadsTakeAndReturnConcurrently) {
  BufferPool pool;
  churn(pool, 8, 3000);
  EXPECT_LE(pool.held_bytes(), BufferPool::kMaxHeldBytes);
  // No buffer went back twice: draining a class past its depth gives distinct buffers.
  std::vector<PooledBuffer> drain;
  for (int i = 0; i < BufferPool::kKeepPerClass + 1; ++i) drain.emplace_back(8 * KiB, pool);
  for (size_t i = 0; i < drain.size(); ++i)
    for (size_t j = i + 1; j < drain.size(); ++j) EXPECT_NE(drain[i].data(), drain[j].data());
}

TEST(BufferPool, SharedPoolIsTheDefault) {
  BufferPool& shared = BufferPool::shared();
  EXPECT_EQ(&shared, &BufferPool::shared());
  churn(shared, 4, 500);
  PooledBuffer b(1000);  // from the shared pool
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b.capacity(), 4 * KiB);
}
