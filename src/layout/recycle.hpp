// Recycling of the large arrays that building a layout needs: a finished layout's entry and
// prefix arrays, and (for the type and plan layers) other long arrays of one element type, are
// given back here when they die and taken again by the next type built on the same thread,
// instead of being freed and allocated again.
//
// Why: a type built from an index list of 10^4 entries allocates about 60 bytes per entry (the
// list's table and prefix sums, the struct's table and prefix sums, the contents, the plan's
// list), several hundred KiB in all, and frees them together. glibc then finds that much free
// at the top of its heap and returns it to the system (its trim threshold follows the largest
// block it has unmapped, a few hundred KiB here), and the next type faults every page in again.
// Measured on the DDTBench commit loop (create + commit + free of SPECFEM3D_cm c=4, 14806
// entries, 2 cores shared): 79 page faults per iteration, and 570 us per iteration against 280
// us when the trim is turned off (GLIBC_TUNABLES=glibc.malloc.trim_threshold=...); a page fault
// costs several microseconds on this machine. Kept arrays are not returned, so nothing faults.
//
// Bounded: per thread and element type at most kKept arrays of kMinBytes or more and kMaxBytes
// in all (smaller arrays cost the allocator little; glibc itself keeps up to twice its mmap
// threshold, at most 64 MiB, free at the top of its heap). Arrays taken from here have the
// capacity asked for or more and are empty: the taker writes them. Nothing here changes what
// is built, only where its memory comes from.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace ddt {

template <class T>
class Recycled {
 public:
  static constexpr size_t kKept = 6;
  static constexpr size_t kMinBytes = size_t{32} << 10;
  // 4 MiB: a library should not sit on much memory after its types are freed; the largest
  // DDTBench types' arrays are 0.1-1 MiB each, so this still keeps a whole type's worth.
  static constexpr size_t kMaxBytes = size_t{4} << 20;

  // An empty array with room for n elements: a kept one where one is large enough (the
  // smallest such), else a new one.
  static std::vector<T> take(size_t n) {
    std::vector<T> out;
    if (n * sizeof(T) >= kMinBytes / 2 && !ended()) {
      Pool& p = pool();
      size_t best = kKept;
      for (size_t i = 0; i < p.n; ++i)
        if (p.kept[i].capacity() >= n && (best == kKept || p.kept[i].capacity() < p.kept[best].capacity())) best = i;
      if (best != kKept) {
        p.bytes -= p.kept[best].capacity() * sizeof(T);
        out.swap(p.kept[best]);
        p.kept[best].swap(p.kept[--p.n]);
        out.clear();
      }
    }
    out.reserve(n);
    return out;
  }

  // Keeps v's array if it is worth keeping, making room by dropping the smallest kept ones
  // while they are smaller than it; v is then left empty. Otherwise v is left as it is, for its
  // owner to free.
  static void give(std::vector<T>& v) {
    const size_t bytes = v.capacity() * sizeof(T);
    if (bytes < kMinBytes || bytes > kMaxBytes || ended()) return;
    Pool& p = pool();
    while (p.n == kKept || p.bytes + bytes > kMaxBytes) {
      size_t small = 0;
      for (size_t i = 1; i < p.n; ++i)
        if (p.kept[i].capacity() < p.kept[small].capacity()) small = i;
      if (p.kept[small].capacity() * sizeof(T) >= bytes) return;  // all larger: v is freed
      p.bytes -= p.kept[small].capacity() * sizeof(T);
      std::vector<T>().swap(p.kept[small]);
      p.kept[small].swap(p.kept[--p.n]);
    }
    p.bytes += bytes;
    p.kept[p.n++].swap(v);
    std::vector<T>().swap(v);
  }

 private:
  struct Pool {
    std::vector<T> kept[kKept];
    size_t n = 0, bytes = 0;  // kept arrays, and their capacity in bytes
    ~Pool() { ended() = true; }
  };
  static Pool& pool() {
    static thread_local Pool p;
    return p;
  }
  // Set when the thread's pool is destroyed (at thread or process exit, where layouts held by
  // static objects may still die): a plain flag, usable after the pool is gone.
  static bool& ended() {
    static thread_local bool e = false;
    return e;
  }
};

}  // namespace ddt
