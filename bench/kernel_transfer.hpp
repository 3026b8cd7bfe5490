// A DDTBench kernel moved between ranks 0 and 1 through ddtkit's runtime (runtime_transport.hpp's
// Rt): FFT2D's transpose as an all-to-all of two ranks, and the byte check of one move against a
// local unpack. Shared by ddt_runtime_bench (under `ddtkit run`) and runtime_mpi_<mpi> (the
// runtime bootstrapped through MPI, timed beside the MPI in the same processes).
#pragma once
#include <cstdio>
#include <cstring>
#include <vector>

#include "ddtbench.hpp"
#include "ddtkit.h"
#include "harness.hpp"
#include "runtime_transport.hpp"

namespace rtbench {

inline uint64_t arrays_hash(const Kernel& k) {
  uint64_t h = 0;
  for (size_t a = 0; a < k.arrays.size(); ++a) h = h * 31 + fnv1a64(k.arrays[a].get(), k.array_bytes[a]);
  return h;
}

// One DDTBench round trip (spec §2.2) of count elements of type at buf between ranks 0 and 1:
// rank 0 sends, then receives; rank 1 mirrors. T: any of the benchmarks' transports (Rt, an MPI's).
template <class T>
void round_trip(T& t, void* buf, int64_t count, typename T::Type type, int tag) {
  const int peer = 1 - t.me;
  if (t.me == 0) t.send(buf, count, type, peer, tag), t.recv(buf, count, type, peer, tag);
  else t.recv(buf, count, type, peer, tag), t.send(buf, count, type, peer, tag);
}

// FFT2D's transpose is MPI_Alltoall with P = 2: element p of the array goes to rank p, into
// element p of the receive type (spec 3.5: transposed). Here the other rank's element travels
// through the runtime and this rank's own is copied locally. Both types' extents are 16 n.
inline void fft_alltoall(Rt& t, Kernel& k, char* outbuf) {
  int64_t lb, ext;
  t.ck(ddt_type_extent(k.type, &lb, &ext), "ddt_type_extent");
  const char* a = static_cast<const char*>(k.buf);
  const int peer = 1 - t.me;
  ddt_request r[2];
  t.irecv(outbuf + peer * ext, 1, k.recv_type, peer, 3, &r[0]);
  t.isend(a + peer * ext, 1, k.type, peer, 3, &r[1]);
  t.ck(ddt_copy(a + t.me * ext, 1, k.type, outbuf + t.me * ext, 1, k.recv_type), "ddt_copy");
  t.waitall(2, r);
}

// Kernel k moved once from rank 0 into rank 1's zeroed arrays (FFT2D: one transpose into a
// zeroed output); rank 1 compares with the outcome of its own local unpack of the same bytes.
inline void check_kernel(Rt& t, Kernel& k, char* fft_out, int64_t fft_bytes) {
  const bool fft = k.name == "FFT2D";
  std::vector<char> packed(k.bytes);
  int64_t got = 0;
  t.ck(ddt_pack(k.buf, k.count, k.type, 0, packed.data(), k.bytes, &got), "ddt_pack");
  uint64_t h_recv = 0, h_want = 0;
  if (fft) {
    std::memset(fft_out, 0, fft_bytes);
    fft_alltoall(t, k, fft_out);
    h_recv = fnv1a64(fft_out, fft_bytes);
    // Both ranks' arrays are equal, so each output element is this rank's element `me`.
    int64_t lb, ext;
    t.ck(ddt_type_extent(k.type, &lb, &ext), "ddt_type_extent");
    std::memset(fft_out, 0, fft_bytes);
    const char* a = static_cast<const char*>(k.buf);
    for (int p = 0; p < 2; ++p) t.ck(ddt_copy(a + t.me * ext, 1, k.type, fft_out + p * ext, 1, k.recv_type), "ddt_copy");
    h_want = fnv1a64(fft_out, fft_bytes);
  } else {
    std::vector<std::vector<char>> saved;
    for (size_t a = 0; a < k.arrays.size(); ++a) saved.emplace_back(k.arrays[a].get(), k.arrays[a].get() + k.array_bytes[a]);
    if (t.me == 1)
      for (size_t a = 0; a < k.arrays.size(); ++a) std::memset(k.arrays[a].get(), 0, k.array_bytes[a]);
    t.barrier();
    if (t.me == 0) t.send(k.buf, k.count, k.type, 1, 3);
    else t.recv(const_cast<void*>(k.buf), k.count, k.type, 0, 3);
    if (t.me == 1) {
      h_recv = arrays_hash(k);
      for (size_t a = 0; a < k.arrays.size(); ++a) std::memset(k.arrays[a].get(), 0, k.array_bytes[a]);
      t.ck(ddt_unpack(packed.data(), k.bytes, const_cast<void*>(k.buf), k.count, k.type, 0, &got), "ddt_unpack");
      h_want = arrays_hash(k);
      for (size_t a = 0; a < k.arrays.size(); ++a) std::memcpy(k.arrays[a].get(), saved[a].data(), k.array_bytes[a]);
    }
  }
  if (h_recv != h_want) {
    char why[160];
    std::snprintf(why, sizeof why, "DDTBench %s %s: received bytes differ from a local unpack (%016llx != %016llx)",
                  k.name.c_str(), k.params.c_str(), (unsigned long long)h_recv, (unsigned long long)h_want);
    t.fail(why);
  }
}

}  // namespace rtbench
