// FALCON-X's vector benchmark (its figures 6 and 8) as issue 10 defines it: one element of a
// vector type of 2 MiB payload, blocks of 128 B to 2 MiB, stride twice the block (a 4 MiB
// buffer), between ranks 0 and 1. Three figures per block size and method:
//   latency  half a round trip (rank 0 sends, rank 1 answers with the same type);
//   bw       a window of isends answered by a small ack once all have arrived (osu_bw);
//   bibw     both ranks send a window to each other at once (osu_bibw).
// The methods are the transport's own datatype path (with whatever set-up selects a mechanism)
// and the application's hand-written loops around contiguous messages.
#pragma once
#include <cstring>
#include <memory>

#include "transfer.hpp"

namespace rtbench {

constexpr int64_t kVectorPayload = int64_t{2} << 20;
constexpr int64_t kVectorBuffer = 2 * kVectorPayload;
constexpr int kWindow = 16;
constexpr int kTagData = 1, kTagAck = 2;

struct VectorShape {
  int64_t block, count, stride;
};
inline VectorShape vector_shape(int64_t block) { return {block, kVectorPayload / block, 2 * block}; }

inline std::vector<int64_t> vector_blocks(const Options& o) {
  if (o.smoke) return {128, 64 << 10, kVectorPayload};
  std::vector<int64_t> v;
  for (int64_t b = 128; b <= kVectorPayload; b *= 2) v.push_back(b);
  return v;
}
inline int vector_window(const Options& o) { return o.smoke ? 2 : kWindow; }

// The hand-written loops an application writes around a contiguous send.
inline void vector_pack(const VectorShape& s, const char* src, char* dst) {
  for (int64_t i = 0; i < s.count; ++i) std::memcpy(dst + i * s.block, src + i * s.stride, s.block);
}
inline void vector_unpack(const VectorShape& s, const char* src, char* dst) {
  for (int64_t i = 0; i < s.count; ++i) std::memcpy(dst + i * s.stride, src + i * s.block, s.block);
}

// Byte check: the sender's whole buffer (gaps too, so that a copied gap is caught) holds a
// pattern of (seed, offset); the receiver's buffer was zeroed, so its blocks must hold the
// pattern and its gaps must still be zero.
inline char vector_byte(uint64_t seed, int64_t off) {
  return static_cast<char>((off * 131 + (off >> 11) * 7 + seed * 29) & 0xff);
}
inline void vector_fill(char* buf, uint64_t seed) {
  for (int64_t i = 0; i < kVectorBuffer; ++i) buf[i] = vector_byte(seed, i);
}
inline bool vector_check(const VectorShape& s, const char* buf, uint64_t seed, int64_t* bad_offset) {
  for (int64_t i = 0; i < kVectorBuffer; ++i) {
    const bool in_block = i / s.stride < s.count && i % s.stride < s.block;
    if (buf[i] != (in_block ? vector_byte(seed, i) : 0)) {
      *bad_offset = i;
      return false;
    }
  }
  return true;
}

// One way of moving the sweep's message. Slot w of a window has its own staging buffers: the
// buffer of a pending send must not be written, nor that of a pending receive read.
template <class T>
struct VectorMsg {
  using Req = typename T::Req;
  virtual ~VectorMsg() = default;
  virtual void send(T& t, int peer) = 0;
  virtual void recv(T& t, int peer) = 0;
  virtual void isend(T& t, int w, int peer, Req* r) = 0;
  virtual void irecv(T& t, int w, int peer, Req* r) = 0;
  virtual void received(int) {}
};

// The datatype path: one element of the vector type, every slot from the same buffer (as osu_bw).
template <class T>
struct TypedVectorMsg : VectorMsg<T> {
  using Req = typename T::Req;
  typename T::Type type;
  char *sbuf, *rbuf;
  TypedVectorMsg(typename T::Type ty, char* s, char* r) : type(ty), sbuf(s), rbuf(r) {}
  void send(T& t, int peer) override { t.send(sbuf, 1, type, peer, kTagData); }
  void recv(T& t, int peer) override { t.recv(rbuf, 1, type, peer, kTagData); }
  void isend(T& t, int, int peer, Req* r) override { t.isend(sbuf, 1, type, peer, kTagData, r); }
  void irecv(T& t, int, int peer, Req* r) override { t.irecv(rbuf, 1, type, peer, kTagData, r); }
};

// The hand-written loops: pack into a contiguous staging buffer, send its bytes, unpack on arrival.
template <class T>
struct HandVectorMsg : VectorMsg<T> {
  using Req = typename T::Req;
  VectorShape s;
  char *sbuf, *rbuf;
  const std::vector<char*>&sstage, &rstage;
  HandVectorMsg(VectorShape sh, char* sb, char* rb, const std::vector<char*>& ss, const std::vector<char*>& rs)
      : s(sh), sbuf(sb), rbuf(rb), sstage(ss), rstage(rs) {}
  void send(T& t, int peer) override {
    vector_pack(s, sbuf, sstage[0]);
    t.send(sstage[0], kVectorPayload, t.bytes(), peer, kTagData);
  }
  void recv(T& t, int peer) override {
    t.recv(rstage[0], kVectorPayload, t.bytes(), peer, kTagData);
    vector_unpack(s, rstage[0], rbuf);
  }
  void isend(T& t, int w, int peer, Req* r) override {
    vector_pack(s, sbuf, sstage[w]);
    t.isend(sstage[w], kVectorPayload, t.bytes(), peer, kTagData, r);
  }
  void irecv(T& t, int w, int peer, Req* r) override { t.irecv(rstage[w], kVectorPayload, t.bytes(), peer, kTagData, r); }
  void received(int w) override { vector_unpack(s, rstage[w], rbuf); }
};

// A method of the sweep: its name in the results, the set-up that selects it (run on every rank,
// then a barrier, before its first message of each block size), and whether it is hand-packed.
struct SweepMethod {
  std::string name;
  std::function<void()> setup;
  bool hand = false;
};

// The sweep on a job of exactly two ranks; rank 0 writes out (which may be null elsewhere). only:
// these block sizes instead of vector_blocks(o) (a caller that interleaves two transports).
template <class T>
void vector_sweep(T& t, Jsonl* out, const Options& o, const std::vector<SweepMethod>& methods,
                  const std::vector<int64_t>& only = {}) {
  using Req = typename T::Req;
  const int me = t.me, peer = 1 - t.me, W = vector_window(o);
  const Budget b = o.budget();
  char* sbuf = static_cast<char*>(t.alloc(kVectorBuffer));
  char* rbuf = static_cast<char*>(t.alloc(kVectorBuffer));
  std::vector<char*> sstage, rstage;
  bool any_hand = false;
  for (const auto& m : methods) any_hand |= m.hand;
  for (int w = 0; any_hand && w < W; ++w) {
    sstage.push_back(static_cast<char*>(t.alloc(kVectorPayload)));
    rstage.push_back(static_cast<char*>(t.alloc(kVectorPayload)));
  }
  std::vector<Req> sreq(W), rreq(W);
  char ack[4] = {0, 0, 0, 0};
  uint64_t seed = 1;
  for (int64_t block : only.empty() ? vector_blocks(o) : only) {
    const VectorShape s = vector_shape(block);
    typename T::Type type = t.vector(s.count, s.block, s.stride);
    for (const SweepMethod& m : methods) {
      std::unique_ptr<VectorMsg<T>> msg;
      if (m.hand) msg.reset(new HandVectorMsg<T>(s, sbuf, rbuf, sstage, rstage));
      else msg.reset(new TypedVectorMsg<T>(type, sbuf, rbuf));
      if (m.setup) m.setup();
      t.barrier();

      // Rank 0 -> rank 1 once, every byte of rank 1's buffer checked.
      ++seed;
      if (me == 0) vector_fill(sbuf, seed);
      else std::memset(rbuf, 0, kVectorBuffer);
      t.barrier();
      if (me == 0) msg->send(t, peer);
      else msg->recv(t, peer);
      int64_t bad = -1;
      if (me == 1 && !vector_check(s, rbuf, seed, &bad)) {
        char why[160];
        std::snprintf(why, sizeof why, "vector sweep %s, block %lld: wrong byte at offset %lld of the receive buffer",
                      m.name.c_str(), (long long)block, (long long)bad);
        t.fail(why);
      }
      vector_fill(sbuf, seed + 1000);  // rank 1 sends too (the pong, bibw)

      const double lat = time_op(t, [&] {
        if (me == 0) msg->send(t, peer), msg->recv(t, peer);
        else msg->recv(t, peer), msg->send(t, peer);
      }, b) / 2;
      const double bw = time_op(t, [&] {
        if (me == 0) {
          for (int w = 0; w < W; ++w) msg->isend(t, w, peer, &sreq[w]);
          t.waitall(W, sreq.data());
          t.recv(ack, sizeof ack, t.bytes(), peer, kTagAck);
        } else {
          for (int w = 0; w < W; ++w) msg->irecv(t, w, peer, &rreq[w]);
          for (int w = 0; w < W; ++w) t.wait(&rreq[w]), msg->received(w);
          t.send(ack, sizeof ack, t.bytes(), peer, kTagAck);
        }
      }, b);
      const double bibw = time_op(t, [&] {
        for (int w = 0; w < W; ++w) msg->irecv(t, w, peer, &rreq[w]);
        for (int w = 0; w < W; ++w) msg->isend(t, w, peer, &sreq[w]);
        for (int w = 0; w < W; ++w) t.wait(&rreq[w]), msg->received(w);
        t.waitall(W, sreq.data());
      }, b);
      if (me == 0 && out) {
        const double gbs = W * kVectorPayload / bw, bigbs = 2.0 * W * kVectorPayload / bibw;
        const std::string p = std::to_string(block);
        char extra[64];
        out->add("rt_vector", "latency", p, "latency", m.name, kVectorPayload, lat);
        std::snprintf(extra, sizeof extra, "\"gbs\": %.3f, \"window\": %d", gbs, W);
        out->add("rt_vector", "bw", p, "bw", m.name, kVectorPayload, bw / W, extra);
        std::snprintf(extra, sizeof extra, "\"gbs\": %.3f, \"window\": %d", bigbs, W);
        out->add("rt_vector", "bibw", p, "bibw", m.name, kVectorPayload, bibw / W, extra);
        std::printf("[vector %8s] %-16s latency %9.2f us   bw %6.2f GB/s   bibw %6.2f GB/s\n", size_label(block).c_str(),
                    m.name.c_str(), lat / 1e3, gbs, bigbs);
        std::fflush(stdout);
      }
    }
    t.free_type(type);
  }
  for (char* p : sstage) t.release(p);
  for (char* p : rstage) t.release(p);
  t.release(sbuf);
  t.release(rbuf);
}

}  // namespace rtbench
