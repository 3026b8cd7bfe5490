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
  Part part;
  uint8_t hash[16];
  bool operator<(const Key& o) const {
    if (device != o.device) return device < o.device;
    if (part != o.part) return part < o.part;
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
  std::vector<int32_t> list32;
  std::vector<int64_t> list;
  size_t nodes, entries, prefix, vec_div, list32_at, list_at, total;
  bool tree;
  int64_t flat_width = 0;
  Packing(ddt_type t, const Layout& L, const Plan& p, Part part) : tree(part == Part::Tree) {
    if (tree) vec_dividers(L, divs);
    if (part == Part::List) list_displacements(p, list32, list);
    if (part == Part::Flat) flat_width = flatten(t, p, list32, list);
    auto up = [](size_t x) { return (x + 15) / 16 * 16; };
    nodes = 0;
    entries = up(tree ? L.nodes.size() * sizeof(Node) : 0);
    prefix = entries + up(tree ? L.entries.size() * sizeof(Entry) : 0);
    vec_div = prefix + up(tree ? L.prefix.size() * sizeof(int64_t) : 0);
    list32_at = vec_div + up(divs.size() * sizeof(Divider));
    list_at = list32_at + up(list32.size() * sizeof(int32_t));
    total = list_at + up(list.size() * sizeof(int64_t));
  }
  void stage(const Layout& L, std::vector<char>& host) const {
    host.assign(total, 0);
    auto put = [&](size_t at, const void* p, size_t n) {
      if (n) std::memcpy(host.data() + at, p, n);
    };
    if (tree) {
      put(nodes, L.nodes.data(), L.nodes.size() * sizeof(Node));
      put(entries, L.entries.data(), L.entries.size() * sizeof(Entry));
      put(prefix, L.prefix.data(), L.prefix.size() * sizeof(int64_t));
    }
    put(vec_div, divs.data(), divs.size() * sizeof(Divider));
    put(list32_at, list32.data(), list32.size() * sizeof(int32_t));
    put(list_at, list.data(), list.size() * sizeof(int64_t));
  }
  Upload at(const char* dev, Bits bits) const {
    Upload u;
    u.nodes = reinterpret_cast<const Node*>(dev + nodes);
    u.entries = reinterpret_cast<const Entry*>(dev + entries);
    u.prefix = reinterpret_cast<const int64_t*>(dev + prefix);
    u.vec_div = reinterpret_cast<const Divider*>(dev + vec_div);
    u.list32 = list32.empty() ? nullptr : reinterpret_cast<const int32_t*>(dev + list32_at);
    u.list = list.empty() ? nullptr : reinterpret_cast<const int64_t*>(dev + list_at);
    u.flat_width = flat_width;
    u.grain_bits = bits;
    return u;
  }
};

}  // namespace

cudaError_t upload(ddt_type t, int device, Part part, cudaStream_t stream, Upload* out) {
  Key key{device, part, {}};
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
  const Packing pk(t, L, plan_of(t), part);
  std::vector<char> host;
  pk.stage(L, host);
  const Bits bits = layout_bits(L);
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
  if (pk.total == 0) {  // nothing to upload (a layout with no flat list): remembered as such
    std::lock_guard<std::mutex> lock(c.mu);
    *out = c.entries.emplace(key, pk.at(nullptr, bits)).first->second;
    return cudaSuccess;
  }
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
