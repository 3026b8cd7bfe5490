// The NIC's handlers (engine.hpp): set-up of each strategy's NIC memory, and the payload handlers
// that really move a packet's bytes and count what they did.
#include "spin/engine.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>

#include "cpu/copy_kernels.hpp"
#include "layout/codec.hpp"
#include "type/type.hpp"

namespace ddt::spin {
namespace {

uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  h *= 0xbf58476d1ce4e5b9ULL;
  return h ^ (h >> 31);
}

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Moves the bytes the cursor hands over between the packet and the buffer, one DMA request per
// contiguous piece, each checked against the buffer's range first.
template <bool G>
struct Mover {
  const Engine* e;
  char* pay;
  Counts* c;
  std::vector<int64_t>* dma;
  bool bad = false;
  void move(uintptr_t p, int64_t n) {
    if (bad || !e->inside(p, n)) {
      bad = true;
      return;
    }
    char* at = reinterpret_cast<char*>(p);
    G ? any_copy(pay, at, n) : any_copy(at, pay, n);
    pay += n;
    ++c->blocks;
    dma->push_back(n);
  }
  void piece(uintptr_t p, int64_t n) {
    ++c->runs;
    move(p, n);
  }
  void blocks(uintptr_t p, int64_t stride, int64_t w, int64_t count) {
    ++c->runs;
    for (int64_t i = 0; i < count && !bad; ++i) move(p + static_cast<uintptr_t>(i * stride), w);
  }
  int64_t table(uintptr_t base, const Entry* en, int64_t max, int64_t w, int64_t node) {
    ++c->runs;
    int64_t n = 0;
    for (; n < max && en[n].node == node; ++n) move(base + static_cast<uintptr_t>(en[n].disp), w);
    return n;
  }
};

// Walks blocks without moving data: the catch-up of an MPITypes segment, and the host's
// checkpoint creation.
struct Skipper {
  int64_t* n;
  void piece(uintptr_t, int64_t) { ++*n; }
  void blocks(uintptr_t, int64_t, int64_t, int64_t count) { *n += count; }
  int64_t table(uintptr_t, const Entry* en, int64_t max, int64_t, int64_t node) {
    int64_t k = 0;
    while (k < max && en[k].node == node) ++k;
    *n += k;
    return k;
  }
};

int64_t log2_steps(int64_t n) {  // comparisons of a binary search over n sorted values
  int64_t s = 0;
  while ((int64_t{1} << s) < n + 1) ++s;
  return s;
}

}  // namespace

uint64_t desc_check(const Desc& d) {
  uint64_t h = mix(d.magic, static_cast<uint64_t>(d.strategy));
  for (int64_t v : {int64_t(d.kind), d.total, d.es, d.ext, d.count, d.disp, d.n, d.stride, d.width, d.entries, d.interval})
    h = mix(h, static_cast<uint64_t>(v));
  return h;
}

uint64_t seg_check(const Seg& s) { return mix(mix(s.magic, static_cast<uint64_t>(s.slot)), static_cast<uint64_t>(s.pos)); }

int64_t seek_steps(const Layout& L, int64_t es, int64_t pos) {
  if (L.root < 0 || es <= 0) return 0;
  int64_t steps = 1;  // the element: one division
  int64_t r = pos % es, node = L.root;
  for (int depth = 0; depth <= kMaxDepth; ++depth) {
    const Node& n = L.nodes[node];
    if (n.kind == Kind::Block) break;
    if (n.kind == Kind::Vec) {
      const int64_t cs = L.nodes[n.child].size;
      r -= (r / cs) * cs;
      node = n.child;
      ++steps;
    } else {
      const int64_t* pre = L.prefix.data() + n.child;
      const int64_t i = std::upper_bound(pre, pre + n.count, r) - pre - 1;
      steps += log2_steps(n.count);
      r -= pre[i];
      node = L.entries[n.child + i].node;
    }
  }
  return steps;
}

bool Engine::inside(uintptr_t p, int64_t n) const { return n >= 0 && p >= lo_ && p <= hi_ && static_cast<uintptr_t>(n) <= hi_ - p; }

bool Engine::check_seg(const Seg& s, int64_t slot) const {
  return s.magic == kSegMagic && s.slot == slot && s.check == seg_check(s) && s.pos >= 0 && s.pos <= desc.total &&
         s.cur.position() == s.pos;
}

int64_t Engine::vhpu_of(int64_t off) const {
  switch (strategy_) {
    case DDT_SPIN_HPU_LOCAL: return (off / k_) % hpus_;
    case DDT_SPIN_RW_CP: return desc.interval > 0 ? off / desc.interval : 0;
    case DDT_SPIN_IOVEC: return 0;
    default: return -1;
  }
}

int64_t Engine::vhpus() const {
  switch (strategy_) {
    case DDT_SPIN_HPU_LOCAL: return hpus_;
    case DDT_SPIN_RW_CP: return static_cast<int64_t>(segs.size());
    case DDT_SPIN_IOVEC: return 1;
    default: return 0;
  }
}

// The checkpoint interval of §3.2.4: the largest dr (a multiple of the packet size) whose
// scheduling overhead T_pkt + ceil(dr/k)(P-1) T_pkt stays within epsilon x ceil(n_pkt/P) x T_PH,
// with dr no larger than the packet buffer when the handlers are slower than the packets.
int64_t Engine::pick_interval(const ddt_spin_params& p, int s) {
  const int64_t k = p.packet_bytes, npkt = (desc.total + k - 1) / k;
  eps_interval_ = 0;
  if (p.checkpoint_interval > 0) {
    if (s == DDT_SPIN_RO_CP) return p.checkpoint_interval;
    return std::max<int64_t>(1, (p.checkpoint_interval + k - 1) / k) * k;
  }
  const double tpkt = static_cast<double>(k) * 8.0 / (p.line_gbit_s * 1e9);
  const double tph = (p.start_cycles + gamma * p.general_block_cycles) / (p.hpu_ghz * 1e9);
  const int64_t P = p.hpus;
  int64_t dp = npkt;
  if (P > 1) {
    const double budget = p.epsilon * static_cast<double>((npkt + P - 1) / P) * tph - tpkt;
    dp = budget <= 0 ? 1 : static_cast<int64_t>(std::floor(budget / (static_cast<double>(P - 1) * tpkt)));
  }
  if (tph * static_cast<double>(k) / tpkt > static_cast<double>(p.packet_buffer_bytes))
    dp = std::min<int64_t>(dp, p.packet_buffer_bytes / k);
  eps_interval_ = std::max<int64_t>(1, std::min(dp, npkt)) * k;
  // Not in the paper: at least P sequences, so that every HPU gets one. The model's T_C assumes
  // a new vHPU every dp packets keeps all P busy; with slow handlers (small blocks) epsilon alone
  // allows dp > n_pkt / P, leaving HPUs idle. Where the checkpoints this gives do not fit NIC
  // memory, setup() goes back towards eps_interval_ (the paper's bounds) before falling back.
  dp = std::min<int64_t>(dp, (npkt + P - 1) / P);
  dp = std::max<int64_t>(1, std::min(dp, npkt));
  return dp * k;
}

Setup Engine::setup(int s, const ddt_spin_params& p, ddt_type type, char* buf, int64_t count, bool gather) {
  const double t0 = now();
  strategy_ = s;
  gather_ = gather;
  hpus_ = p.hpus;
  k_ = p.packet_bytes;
  v_ = p.iovec_entries;
  const Layout& L = *type->layout;
  // The host installs the layout in NIC memory as its serialised bytes; the NIC's copy is what
  // the codec decodes (and validates) from them.
  serialized.clear();
  encode_layout(L, serialized);
  Reader rd(reinterpret_cast<const uint8_t*>(serialized.data()), static_cast<int64_t>(serialized.size()));
  nic_layout = Layout{};
  if (decode_layout(rd, nic_layout) != DDT_SUCCESS || nic_layout.root < 0 || count < 1) return Setup::NotApplicable;
  layout_bytes = static_cast<int64_t>(serialized.size());

  desc = Desc{};
  desc.strategy = s;
  desc.es = nic_layout.size();
  desc.ext = type->extent();
  desc.count = count;
  desc.total = count * desc.es;
  desc.disp = nic_layout.disp;
  buf_ = reinterpret_cast<uintptr_t>(buf);
  const __int128 last = static_cast<__int128>(count - 1) * desc.ext;
  const __int128 lo = std::min<__int128>(0, last) + type->true_lb, hi = std::max<__int128>(0, last) + type->true_ub;
  lo_ = buf_ + static_cast<uintptr_t>(static_cast<int64_t>(lo));
  hi_ = buf_ + static_cast<uintptr_t>(static_cast<int64_t>(hi));

  int64_t blocks = 0;
  int asc = 0;
  ddt_type_blocks(type, &blocks, &asc);
  const int64_t npkt = std::max<int64_t>(1, (desc.total + k_ - 1) / k_);
  gamma = static_cast<double>(blocks) * static_cast<double>(count) / static_cast<double>(npkt);
  general_blocks = s == DDT_SPIN_HPU_LOCAL || s == DDT_SPIN_RO_CP || s == DDT_SPIN_RW_CP;
  segs.clear();
  masters.clear();
  idx_disp.clear();
  idx_prefix.clear();
  iov.clear();
  iov_prefix.clear();
  checkpoints = 0;
  const Cursor start(nic_layout, desc.ext, buf_, count);
  const int64_t C = p.checkpoint_bytes;

  switch (s) {
    case DDT_SPIN_SPECIALIZED: {
      const Node& r = nic_layout.nodes[nic_layout.root];
      if (r.kind == Kind::Block) {
        desc.kind = 0, desc.n = 1, desc.width = r.size;
      } else if (r.kind == Kind::Vec && nic_layout.nodes[r.child].kind == Kind::Block) {
        desc.kind = 0, desc.n = r.count, desc.stride = r.stride, desc.width = nic_layout.nodes[r.child].size;
      } else if (r.kind == Kind::Seq) {
        const int64_t w0 = nic_layout.nodes[nic_layout.entries[r.child].node].size;
        bool uniform = true;
        for (int64_t j = 0; j < r.count; ++j) {
          const Entry& e = nic_layout.entries[r.child + j];
          if (nic_layout.nodes[e.node].kind != Kind::Block) return Setup::NotApplicable;
          uniform = uniform && nic_layout.nodes[e.node].size == w0;
          idx_disp.push_back(e.disp);
          idx_prefix.push_back(nic_layout.prefix[r.child + j]);
        }
        idx_prefix.push_back(r.size);
        desc.kind = uniform ? 1 : 2, desc.entries = r.count, desc.width = uniform ? w0 : 0;
      } else {
        return Setup::NotApplicable;
      }
      // vector: the spin_vec_t of Listing 1; index lists: displacements (and prefix sums when
      // the lengths vary), 8 bytes each.
      nic_bytes = 64 + desc.entries * (desc.kind == 2 ? 16 : 8);
      setup_bytes = nic_bytes;
      break;
    }
    case DDT_SPIN_HPU_LOCAL:
      nic_bytes = layout_bytes + hpus_ * C;
      if (nic_bytes > p.nic_memory_bytes) return Setup::NoFit;
      for (int i = 0; i < hpus_; ++i) segs.emplace_back(start), segs.back().slot = i;
      setup_bytes = nic_bytes;
      break;
    case DDT_SPIN_RO_CP:
    case DDT_SPIN_RW_CP: {
      desc.interval = pick_interval(p, s);
      int64_t n_cp = std::max<int64_t>(1, (desc.total + desc.interval - 1) / desc.interval);
      const int64_t copies = s == DDT_SPIN_RW_CP ? 2 : 1;  // RW_CP: working copies and masters
      // §3.2.4's memory bound (n_pkt k / dr) C <= M_NIC: where the interval chosen does not fit,
      // the smallest dr (whole packets) whose checkpoints fit, if the epsilon and packet-buffer
      // bounds still allow it; otherwise no dr meets all three and the host unpacks (§3.2.6).
      const int64_t room = p.nic_memory_bytes > layout_bytes ? (p.nic_memory_bytes - layout_bytes) / (copies * C) : 0;
      if (n_cp > room && room >= 1 && eps_interval_ > desc.interval) {
        const int64_t dr = ((desc.total + room - 1) / room + k_ - 1) / k_ * k_;
        if (dr <= eps_interval_) {
          desc.interval = dr;
          n_cp = std::max<int64_t>(1, (desc.total + dr - 1) / dr);
        }
      }
      if (n_cp > room) {
        nic_bytes = layout_bytes + copies * C * n_cp;
        return Setup::NoFit;
      }
      nic_bytes = layout_bytes + copies * C * n_cp;
      setup_bytes = layout_bytes + C * n_cp;
      checkpoints = copies * n_cp;
      // The host makes the checkpoints: one walk of the stream, a copy every dr bytes.
      Cursor walk = start;
      int64_t skipped = 0;
      Skipper sk{&skipped};
      for (int64_t j = 0; j < n_cp; ++j) {
        walk.advance(j * desc.interval - walk.position(), sk);
        segs.emplace_back(walk);
        segs.back().slot = j;
        segs.back().pos = walk.position();
      }
      if (s == DDT_SPIN_RW_CP) masters = segs;
      break;
    }
    case DDT_SPIN_SEEK:
      nic_bytes = layout_bytes;
      setup_bytes = layout_bytes;
      break;
    case DDT_SPIN_IOVEC: {
      // The host builds the whole iovec list (per receive buffer: it holds addresses).
      int64_t at = 0;
      std::vector<struct iovec> chunk(4096);
      while (at < desc.total) {
        int64_t n = 0, bytes = 0;
        if (ddt_iov(buf, count, type, at, chunk.data(), static_cast<int64_t>(chunk.size()), &n, &bytes) != DDT_SUCCESS || n == 0)
          return Setup::NotApplicable;
        for (int64_t i = 0; i < n; ++i) {
          iov_prefix.push_back(at);
          iov.push_back(chunk[i]);
          at += static_cast<int64_t>(chunk[i].iov_len);
        }
      }
      iov_prefix.push_back(at);
      nic_bytes = std::min<int64_t>(v_, static_cast<int64_t>(iov.size())) * 16;
      setup_bytes = static_cast<int64_t>(iov.size()) * 16;
      iov_state = Seg(start);
      iov_state.slot = 0;
      break;
    }
    default:
      return Setup::NotApplicable;
  }
  if (nic_bytes > p.nic_memory_bytes) return Setup::NoFit;
  for (Seg& g : segs) g.check = seg_check(g);
  for (Seg& g : masters) g.check = seg_check(g);
  iov_state.check = seg_check(iov_state);
  desc.check = desc_check(desc);
  host_setup_s = now() - t0;
  return Setup::Ok;
}

int Engine::handle(int64_t off, int64_t len, char* payload, Counts& c, std::vector<int64_t>& dma) {
  if (desc.magic != kDescMagic || desc.check != desc_check(desc) || desc.strategy != strategy_ || desc.es <= 0 ||
      desc.count < 0 || desc.total != desc.count * desc.es)
    return DDT_ERR_CORRUPT;
  if (off < 0 || len < 0 || off > desc.total || len > desc.total - off || !payload) return DDT_ERR_ARG;
  if (len == 0) return DDT_SUCCESS;
  switch (strategy_) {
    case DDT_SPIN_SPECIALIZED:
      if (desc.kind == 0) return gather_ ? vector_h<true>(off, len, payload, c, dma) : vector_h<false>(off, len, payload, c, dma);
      return gather_ ? indexed_h<true>(off, len, payload, c, dma) : indexed_h<false>(off, len, payload, c, dma);
    case DDT_SPIN_HPU_LOCAL:
    case DDT_SPIN_RO_CP:
    case DDT_SPIN_RW_CP:
      return gather_ ? segment_h<true>(off, len, payload, c, dma) : segment_h<false>(off, len, payload, c, dma);
    case DDT_SPIN_SEEK:
      return gather_ ? seek_h<true>(off, len, payload, c, dma) : seek_h<false>(off, len, payload, c, dma);
    case DDT_SPIN_IOVEC:
      return gather_ ? iovec_h<true>(off, len, payload, c, dma) : iovec_h<false>(off, len, payload, c, dma);
    default:
      return DDT_ERR_CORRUPT;
  }
}

// Listing 1 of the paper, for any offset and length: the first block by two divisions, then
// every block at the next stride (and the next element after n of them).
template <bool G>
int Engine::vector_h(int64_t off, int64_t len, char* payload, Counts& c, std::vector<int64_t>& dma) {
  const int64_t w = desc.width, n = desc.n;
  if (w <= 0 || n <= 0 || desc.es != n * w) return DDT_ERR_CORRUPT;
  int64_t k = off / desc.es, r = off - k * desc.es, j = r / w, o = r - j * w;
  c.seek_steps += 2;
  const uintptr_t base = buf_ + static_cast<uintptr_t>(desc.disp);
  Mover<G> m{this, payload, &c, &dma};
  for (int64_t left = len; left > 0;) {
    const int64_t take = std::min(w - o, left);
    m.move(base + static_cast<uintptr_t>(k * desc.ext) + static_cast<uintptr_t>(j * desc.stride) + static_cast<uintptr_t>(o), take);
    if (m.bad) return DDT_ERR_CORRUPT;
    left -= take;
    o = 0;
    if (++j == n) j = 0, ++k;
  }
  return DDT_SUCCESS;
}

// indexed_block (one width: the block by division) and indexed (a binary search over the
// blocks' prefix sums, §3.2.3), then the following blocks of the list in order.
template <bool G>
int Engine::indexed_h(int64_t off, int64_t len, char* payload, Counts& c, std::vector<int64_t>& dma) {
  const int64_t ne = desc.entries;
  if (ne < 1 || static_cast<int64_t>(idx_disp.size()) != ne || static_cast<int64_t>(idx_prefix.size()) != ne + 1 ||
      idx_prefix[0] != 0 || idx_prefix[ne] != desc.es || (desc.kind == 1 && desc.width * ne != desc.es))
    return DDT_ERR_CORRUPT;
  int64_t k = off / desc.es, r = off - k * desc.es, j;
  if (desc.kind == 1) {
    j = r / desc.width;
    c.seek_steps += 2;
  } else {
    j = std::upper_bound(idx_prefix.begin(), idx_prefix.end(), r) - idx_prefix.begin() - 1;
    c.seek_steps += 1 + log2_steps(ne);
  }
  const uintptr_t base = buf_ + static_cast<uintptr_t>(desc.disp);
  Mover<G> m{this, payload, &c, &dma};
  for (int64_t left = len; left > 0;) {
    const int64_t b0 = idx_prefix[j], b1 = idx_prefix[j + 1];
    // A corrupted list is not followed: the sums must rise through the entry found and its
    // neighbour below (the binary search relied on them) and stay within the element.
    if (b1 <= b0 || r < b0 || r >= b1 || b1 > desc.es || (j > 0 && idx_prefix[j - 1] >= b0)) return DDT_ERR_CORRUPT;
    const int64_t take = std::min(b1 - r, left);
    m.move(base + static_cast<uintptr_t>(k * desc.ext) + static_cast<uintptr_t>(idx_disp[j]) + static_cast<uintptr_t>(r - b0), take);
    if (m.bad) return DDT_ERR_CORRUPT;
    left -= take;
    r += take;
    if (++j == ne) j = 0, ++k, r = 0;
  }
  return DDT_SUCCESS;
}

// The paper's general handlers on a segment: HPU_LOCAL's own segment (reset when the packet lies
// behind it), a copy of RO_CP's checkpoint, RW_CP's working checkpoint (reset from its master).
// Each catches up to the packet's first byte, then moves the payload.
template <bool G>
int Engine::segment_h(int64_t off, int64_t len, char* payload, Counts& c, std::vector<int64_t>& dma) {
  const int64_t j = strategy_ == DDT_SPIN_HPU_LOCAL ? vhpu_of(off) : (desc.interval > 0 ? off / desc.interval : -1);
  if (j < 0 || j >= static_cast<int64_t>(segs.size())) return DDT_ERR_CORRUPT;
  if (strategy_ != DDT_SPIN_HPU_LOCAL) ++c.seek_steps;  // finding the checkpoint: one division
  Seg& s = segs[j];
  if (!check_seg(s, j)) return DDT_ERR_CORRUPT;
  Cursor local = s.cur;  // RO_CP: the handler's copy
  Cursor* cur = strategy_ == DDT_SPIN_RO_CP ? &local : &s.cur;
  if (strategy_ == DDT_SPIN_RO_CP) {
    ++c.copies;
  } else if (s.pos > off) {
    ++c.resets, ++c.copies;
    if (strategy_ == DDT_SPIN_RW_CP) {
      if (static_cast<int64_t>(masters.size()) <= j || !check_seg(masters[j], j)) return DDT_ERR_CORRUPT;
      s.cur = masters[j].cur;
    } else {
      s.cur.seek(0);
    }
  }
  if (cur->position() > off) return DDT_ERR_CORRUPT;  // a checkpoint past its own packets
  Skipper sk{&c.catchup};
  c.catchup_bytes += off - cur->position();
  cur->advance(off - cur->position(), sk);
  Mover<G> m{this, payload, &c, &dma};
  cur->advance(len, m);
  if (m.bad) return DDT_ERR_CORRUPT;
  if (strategy_ != DDT_SPIN_RO_CP) {
    s.pos = cur->position();
    s.check = seg_check(s);
  }
  return DDT_SUCCESS;
}

// ddtkit's handler: a cursor over the layout in NIC memory seeks the packet's first byte.
template <bool G>
int Engine::seek_h(int64_t off, int64_t len, char* payload, Counts& c, std::vector<int64_t>& dma) {
  if (nic_layout.size() != desc.es || nic_layout.disp != desc.disp) return DDT_ERR_CORRUPT;
  Cursor cur(nic_layout, desc.ext, buf_, desc.count);
  c.seek_steps += seek_steps(nic_layout, desc.es, off);
  cur.seek(off);
  Mover<G> m{this, payload, &c, &dma};
  cur.advance(len, m);
  return m.bad ? DDT_ERR_CORRUPT : DDT_SUCCESS;
}

// The Portals 4 baseline: the NIC walks the host's iovec list in stream order, holding v entries
// and fetching the next v from host memory when it runs out.
template <bool G>
int Engine::iovec_h(int64_t off, int64_t len, char* payload, Counts& c, std::vector<int64_t>& dma) {
  Seg& s = iov_state;
  const int64_t n = static_cast<int64_t>(iov.size());
  if (s.magic != kSegMagic || s.check != seg_check(s) || s.slot < 0 || s.slot > n || s.pos != off ||
      static_cast<int64_t>(iov_prefix.size()) != n + 1)
    return DDT_ERR_CORRUPT;
  Mover<G> m{this, payload, &c, &dma};
  int64_t i = s.slot, pos = off;
  for (int64_t left = len; left > 0;) {
    if (i >= n || pos < iov_prefix[i] || pos >= iov_prefix[i + 1]) return DDT_ERR_CORRUPT;
    const int64_t eo = pos - iov_prefix[i], take = std::min<int64_t>(static_cast<int64_t>(iov[i].iov_len) - eo, left);
    m.move(reinterpret_cast<uintptr_t>(iov[i].iov_base) + static_cast<uintptr_t>(eo), take);
    if (m.bad) return DDT_ERR_CORRUPT;
    left -= take;
    pos += take;
    if (pos == iov_prefix[i + 1] && ++i % v_ == 0 && i < n) ++c.fetches;
  }
  s.slot = i;
  s.pos = pos;
  s.check = seg_check(s);
  return DDT_SUCCESS;
}

}  // namespace ddt::spin
