#include "cuda/layouts.hpp"

#include <cstring>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

namespace ddt::gpu {

namespace {

struct Key {
  int device;
  uint8_t hash[16];
  bool operator<(const Key& o) const {
    if (device != o.device) return device < o.device;
    return std::memcmp(hash, o.hash, 16) < 0;
  }
};

struct Cache {
  std::mutex mu;
  std::map<Key, Upload> entries;
  std::map<int, uint64_t> bytes;  // per device
};

Cache& cache() {
  static Cache* c = new Cache;  // never destroyed: kernels may run until the process ends
  return *c;
}

// The arrays in one allocation, each part 16-byte aligned.
struct Packing {
  std::vector<Divider> divs;
  std::vector<int64_t> list;
  size_t nodes, entries, prefix, vec_div, list_at, total;
  Packing(const Layout& L, const Plan& p) {
    vec_dividers(L, divs);
    if (p.shape == Shape::List && p.uniform_list()) list_displacements(p, list);
    auto up = [](size_t x) { return (x + 15) / 16 * 16; };
    nodes = 0;
    entries = up(L.nodes.size() * sizeof(Node));
    prefix = entries + up(L.entries.size() * sizeof(Entry));
    vec_div = prefix + up(L.prefix.size() * sizeof(int64_t));
    list_at = vec_div + up(divs.size() * sizeof(Divider));
    total = list_at + up(list.size() * sizeof(int64_t));
  }
  void stage(const Layout& L, std::vector<char>& host) const {
    host.assign(total, 0);
    auto put = [&](size_t at, const void* p, size_t n) {
      if (n) std::memcpy(host.data() + at, p, n);
    };
    put(nodes, L.nodes.data(), L.nodes.size() * sizeof(Node));
    put(entries, L.entries.data(), L.entries.size() * sizeof(Entry));
    put(prefix, L.prefix.data(), L.prefix.size() * sizeof(int64_t));
    put(vec_div, divs.data(), divs.size() * sizeof(Divider));
    put(list_at, list.data(), list.size() * sizeof(int64_t));
  }
  Upload at(const char* dev, uint64_t bits) const {
    Upload u;
    u.nodes = reinterpret_cast<const Node*>(dev + nodes);
    u.entries = reinterpret_cast<const Entry*>(dev + entries);
    u.prefix = reinterpret_cast<const int64_t*>(dev + prefix);
    u.vec_div = reinterpret_cast<const Divider*>(dev + vec_div);
    u.list = list.empty() ? nullptr : reinterpret_cast<const int64_t*>(dev + list_at);
    u.grain_bits = bits;
    return u;
  }
};

}  // namespace

cudaError_t upload(ddt_type t, int device, cudaStream_t stream, Upload* out) {
  Key key{device, {}};
  layout_hash(t, key.hash);
  Cache& c = cache();
  {
    std::lock_guard<std::mutex> lock(c.mu);
    auto it = c.entries.find(key);
    if (it != c.entries.end()) {
      *out = it->second;
      return cudaSuccess;
    }
  }
  const Layout& L = *t->layout;
  const Packing pk(L, plan_of(t));
  std::vector<char> host;
  pk.stage(L, host);
  const uint64_t bits = layout_bits(L);
  bool room;
  {
    std::lock_guard<std::mutex> lock(c.mu);
    room = c.bytes[device] + pk.total <= kCacheBytes;
  }
  if (!room) {  // for this call alone, in the stream's order
    void* dev = nullptr;
    if (cudaError_t e = cudaMallocAsync(&dev, pk.total, stream)) return e;
    if (cudaError_t e = cudaMemcpyAsync(dev, host.data(), pk.total, cudaMemcpyHostToDevice, stream)) {
      cudaFreeAsync(dev, stream);
      return e;
    }
    // The copy from pageable memory has read `host` when cudaMemcpyAsync returns.
    *out = pk.at(static_cast<const char*>(dev), bits);
    out->temporary = dev;
    return cudaSuccess;
  }
  void* dev = nullptr;
  if (cudaError_t e = cudaMalloc(&dev, pk.total)) return e;
  // A copy from pageable memory returns once the bytes are staged, maybe before they reach the
  // device; kernels on any stream may read the cached layout next, so wait for the copy itself.
  cudaError_t e = cudaMemcpy(dev, host.data(), pk.total, cudaMemcpyHostToDevice);
  if (e == cudaSuccess) e = cudaStreamSynchronize(cudaStreamLegacy);
  if (e != cudaSuccess) {
    cudaFree(dev);
    return e;
  }
  const Upload u = pk.at(static_cast<const char*>(dev), bits);
  std::lock_guard<std::mutex> lock(c.mu);
  auto [it, fresh] = c.entries.emplace(key, u);
  if (fresh)
    c.bytes[device] += pk.total;
  else
    cudaFree(dev);  // another thread uploaded the same layout first
  *out = it->second;
  return cudaSuccess;
}

}  // namespace ddt::gpu
