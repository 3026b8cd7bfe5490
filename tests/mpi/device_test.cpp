// An unmodified MPI program that sends and receives GPU memory with derived datatypes (issue 12,
// "through the interposer"): under LD_PRELOAD=libddtkit-mpi.so, over an MPI that is not
// CUDA-aware (the PyPI MPICH and Open MPI), every derived-type buffer in device memory is packed on
// the GPU into host memory, moved as bytes and unpacked on the GPU (src/mpi/device.cpp). Random
// types (depth up to 4, negative strides, buffers whose address lies outside their allocation),
// counts 1-3, along each point-to-point path and two collectives; every byte that arrives is
// compared with the reference interpreter's prediction for this MPI's bounds. Natively such a
// program is not expected to work (the MPI would read device memory as host memory), so it
// refuses to run without the interposer (--expect-interposer is implied). Two ranks; exits 77,
// with the reason, where no CUDA device is usable. Also times round trips of a host-buffer vector
// (--time): the device check must cost host buffers nothing measurable, which a run with
// DDTKIT_CUDA=0 (the check off) beside one without (on, since this program loads the CUDA
// driver) shows.
#include <dlfcn.h>
#include <mpi.h>

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cases.hpp"
#include "gen.hpp"
#include "mpi_build.hpp"

namespace {

int me = 0, np = 1;
int64_t failures = 0, checks = 0;

void check(bool ok, const std::string& what) {
  ++checks;
  if (!ok && ++failures <= 20) std::printf("  FAILURE rank %d: %s\n", me, what.c_str());
}

std::vector<char> fill(int64_t n, uint64_t i, int r) { return case_bytes(n, i, r); }

// count elements of ref in device memory: the image of their span (from fill) at dev, the
// type's address dev - lo, which lies outside the allocation whenever lo > 0.
struct DevBuf {
  int64_t lo = 0, hi = 0;
  char* dev = nullptr;
  std::vector<char> image;
  DevBuf(const RefType& ref, int64_t count, uint64_t i, int r) {
    ref_span(ref, count, lo, hi);
    image = fill(std::max<int64_t>(hi - lo, 1), i, r);
    if (cudaMalloc(&dev, image.size()) != cudaSuccess) std::abort();
    cudaMemcpy(dev, image.data(), image.size(), cudaMemcpyHostToDevice);
    cudaDeviceSynchronize();
  }
  ~DevBuf() { cudaFree(dev); }
  char* base() { return dev - lo; }
  std::vector<char> get() {
    std::vector<char> h(image.size());
    cudaDeviceSynchronize();
    cudaMemcpy(h.data(), dev, h.size(), cudaMemcpyDeviceToHost);
    return h;
  }
};

// What rank r's buffer, which held case `initial`'s image, holds after receiving rank s's count
// elements of case i.
std::vector<char> expected(const RefType& ref, int64_t count, uint64_t i, int s, uint64_t initial, int r) {
  int64_t lo, hi;
  ref_span(ref, count, lo, hi);
  std::vector<char> src = fill(std::max<int64_t>(hi - lo, 1), i, s), dst = fill(std::max<int64_t>(hi - lo, 1), initial, r);
  std::vector<char> packed(ref.size * count);
  ref_pack(ref, src.data() - lo, count, packed.data());
  ref_unpack(ref, packed.data(), count, dst.data() - lo);
  return dst;
}

const char* kPaths[] = {"MPI_Send/MPI_Recv", "MPI_Isend/MPI_Irecv", "MPI_Ssend/MPI_Recv", "MPI_Send_init/MPI_Recv_init",
                        "MPI_Sendrecv", "MPI_Bcast", "MPI_Alltoall"};
constexpr int kPathCount = 7;

// Case i along path i % kPathCount: rank 0 sends to rank 1 (both ways for Sendrecv and the
// collectives), device memory on both sides.
void device_case(uint64_t i, MPI_Datatype mt, const RefType& ref, int64_t count, const std::string& what) {
  const int path = static_cast<int>(i % kPathCount), tag = static_cast<int>(i % 30000), peer = 1 - me;
  const int c = static_cast<int>(count);
  std::string label = std::string(kPaths[path]) + " case " + std::to_string(i) + ": " + what;
  if (path == 6) {  // MPI_Alltoall: block k (count elements) of each rank's s goes to rank k
    DevBuf s(ref, 2 * count, i, me), r(ref, 2 * count, i + 1, me);
    MPI_Alltoall(s.base(), c, mt, r.base(), c, mt, MPI_COMM_WORLD);
    // r's block k holds block `me` of rank k's s: build the packed stream r must hold, and
    // unpack it into r's initial image (bytes outside the typemap stay as they were).
    const int64_t block = ref.size * count;
    std::vector<char> want_packed(2 * block), packed(2 * block), want = fill(r.image.size(), i + 1, me);
    for (int k = 0; k < 2; ++k) {
      const std::vector<char> theirs = fill(s.image.size(), i, k);
      ref_pack(ref, theirs.data() - s.lo, 2 * count, packed.data());
      std::memcpy(want_packed.data() + k * block, packed.data() + me * block, block);
    }
    ref_unpack(ref, want_packed.data(), 2 * count, want.data() - r.lo);
    check(r.get() == want, label);
    return;
  }
  DevBuf b(ref, count, i, me);
  const std::vector<char> want = expected(ref, count, i, peer, i, me);
  MPI_Request q[2];
  MPI_Status st;
  switch (path) {
    case 0:
      if (me == 0) MPI_Send(b.base(), c, mt, 1, tag, MPI_COMM_WORLD);
      else MPI_Recv(b.base(), c, mt, 0, tag, MPI_COMM_WORLD, &st);
      break;
    case 1:
      if (me == 0) MPI_Isend(b.base(), c, mt, 1, tag, MPI_COMM_WORLD, q);
      else MPI_Irecv(b.base(), c, mt, 0, tag, MPI_COMM_WORLD, q);
      MPI_Wait(q, &st);
      break;
    case 2:
      if (me == 0) MPI_Ssend(b.base(), c, mt, 1, tag, MPI_COMM_WORLD);
      else MPI_Recv(b.base(), c, mt, 0, tag, MPI_COMM_WORLD, &st);
      break;
    case 3:
      if (me == 0) MPI_Send_init(b.base(), c, mt, 1, tag, MPI_COMM_WORLD, q);
      else MPI_Recv_init(b.base(), c, mt, 0, tag, MPI_COMM_WORLD, q);
      MPI_Start(q);
      MPI_Wait(q, &st);
      MPI_Request_free(q);
      break;
    case 4: {  // both ways at once, into a second device buffer that starts as case i + 1's image
      DevBuf r(ref, count, i + 1, me);
      MPI_Sendrecv(b.base(), c, mt, peer, tag, r.base(), c, mt, peer, tag, MPI_COMM_WORLD, &st);
      check(r.get() == expected(ref, count, i, peer, i + 1, me), label);
      check(b.get() == b.image, label + " (send buffer changed)");
      return;
    }
    case 5:
      MPI_Bcast(b.base(), c, mt, 0, MPI_COMM_WORLD);
      break;
  }
  const std::vector<char> got = b.get();
  check(me == 0 ? got == b.image : got == want, label);
}


// Median round trip (us) of a 480-byte vector in host memory: the device check's cost on host
// buffers (compare runs with and without DDTKIT_CUDA=0). bytes: 480 contiguous bytes, which the
// interposer hands to the MPI as they are: the MPI's own round trip, in the same run.
double host_round_trip(bool bytes = false) {
  MPI_Datatype v;
  if (bytes)
    MPI_Type_contiguous(480, MPI_BYTE, &v);
  else
    MPI_Type_vector(60, 1, 2, MPI_DOUBLE, &v);
  MPI_Type_commit(&v);
  std::vector<double> buf(120, 1.0);
  std::vector<double> t;
  for (int rep = 0; rep < 31; ++rep) {
    MPI_Barrier(MPI_COMM_WORLD);
    const auto a = std::chrono::steady_clock::now();
    for (int k = 0; k < 1000; ++k) {
      if (me == 0) {
        MPI_Send(buf.data(), 1, v, 1, 1, MPI_COMM_WORLD);
        MPI_Recv(buf.data(), 1, v, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else {
        MPI_Recv(buf.data(), 1, v, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(buf.data(), 1, v, 0, 1, MPI_COMM_WORLD);
      }
    }
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count() * 1e3);  // us per trip
  }
  MPI_Type_free(&v);
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int devices = 0;
  // Before MPI_Init, as a GPU program does: the driver is loaded (the interposer turns its
  // device check on) and the context exists, in every run that --time compares.
  const cudaError_t ce = cudaGetDeviceCount(&devices);
  if (ce == cudaSuccess && devices > 0) cudaFree(nullptr);
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  int64_t types = 300;
  uint64_t seed = 1;
  bool time_only = false;
  for (int k = 1; k < argc; ++k) {
    if (!std::strcmp(argv[k], "--types") && k + 1 < argc) types = std::atoll(argv[++k]);
    else if (!std::strcmp(argv[k], "--seed") && k + 1 < argc) seed = std::strtoull(argv[++k], nullptr, 10);
    else if (!std::strcmp(argv[k], "--time")) time_only = true;
  }
  int usable = ce == cudaSuccess && devices > 0, all = 0;
  MPI_Allreduce(&usable, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (np != 2 || !all) {
    if (me == 0)
      std::printf("SKIPPED device_test: %s\n", np != 2 ? "run it with 2 ranks" : "no usable CUDA device here (run it on a GPU machine)");
    MPI_Finalize();
    return 77;
  }
  if (time_only) {
    const double us = host_round_trip();
    const double bytes = host_round_trip(true);
    if (me == 0) std::printf("device_test --time: 480 B host round trip, vector %.3f us, contiguous %.3f us (DDTKIT_CUDA=%s)\n", us, bytes,
                             std::getenv("DDTKIT_CUDA") ? std::getenv("DDTKIT_CUDA") : "unset");
    MPI_Finalize();
    return 0;
  }
  if (!interposer_loaded()) {
    if (me == 0) std::printf("FAILURE: device_test needs LD_PRELOAD=libddtkit-mpi.so (MPI_Send is not the interposer's)\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  GenOptions opt;
  opt.allow_overlap = false;  // a receive into overlapping entries has no defined result
  int64_t ran[kPathCount] = {};
  for (int64_t i = 0; i < types; ++i) {
    std::mt19937_64 rng(seed * 1000003 + i);
    RefType ref;
    TPtr t = random_type(rng, opt, ref, 2000, 1 << 16);
    TPtr adj;
    MPI_Datatype mt = mpi_build_adjusted(*t, adj);
    // Predefined types go to the MPI as they are, device memory or not (src/mpi/device.cpp): over
    // an MPI that is not CUDA-aware such a send is the program's error, with or without ddtkit.
    if (t->kind == TNode::Basic) continue;
    if (mt == MPI_DATATYPE_NULL) continue;  // the MPI refuses a legal type (Open MPI: some darrays)
    MPI_Type_commit(&mt);
    RefType aref;
    ref_eval(*adj, aref, 1 << 22);
    const int64_t count = 1 + static_cast<int64_t>(i % 3);
    // Every path but MPI_Alltoall receives count elements; MPI_Alltoall twice that. A receive
    // into a typemap that writes a byte twice has no defined result (on a GPU its bytes land in
    // no particular order): left out.
    const int64_t received = i % kPathCount == 6 ? 2 * count : count;
    if (aref.size > 0 && !ref_overlaps(aref, received)) {
      device_case(static_cast<uint64_t>(i), mt, aref, count, describe(*t));
      ++ran[i % kPathCount];
    }
    if (t->kind != TNode::Basic) MPI_Type_free(&mt);
  }
  int64_t totals[2] = {failures, checks}, sums[2];
  MPI_Reduce(totals, sums, 2, MPI_INT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
  if (me == 0) {
    std::printf("device_test: %lld random types in device memory through the interposer, %lld checks, %lld failures; per path:",
                (long long)types, (long long)sums[1], (long long)sums[0]);
    for (int p = 0; p < kPathCount; ++p) std::printf(" %s %lld", kPaths[p], (long long)ran[p]);
    std::printf("\n");
  }
  MPI_Finalize();
  return me == 0 && sums[0] ? 1 : 0;
}
