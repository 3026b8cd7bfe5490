// One side of a data movement (a send buffer or a receive buffer) as the interposer performs it,
// and the pool of staging buffers behind it.
#include <algorithm>
#include <cstdlib>
#include <mutex>

#include "mpi/shim.hpp"

namespace ddtmpi {

namespace {

// Staging buffers are reused: an application that sends the same face every iteration would
// otherwise pay a fresh allocation (and, past the mmap threshold, fresh page faults) each time.
// Size classes are powers of two from 4 KiB; a class keeps at most kKeep free buffers and the
// pool keeps at most kPoolBytes in all, so a burst of large messages does not pin memory.
constexpr int kMinShift = 12, kClasses = 40, kKeep = 4;
constexpr int64_t kPoolBytes = int64_t(256) << 20;

struct Pool {
  std::mutex mu;
  std::vector<char*> free[kClasses];
  int64_t held = 0;
};
Pool& pool() {
  static Pool* p = new Pool;  // never destroyed: requests may finish during exit
  return *p;
}

int size_class(int64_t bytes) {
  int c = 0;
  while ((int64_t(1) << (c + kMinShift)) < bytes) ++c;
  return c;
}

}  // namespace

Buffer::Buffer(int64_t bytes) {
  const int c = size_class(bytes < 1 ? 1 : bytes);
  if (c >= kClasses) return;
  cap_ = int64_t(1) << (c + kMinShift);
  Pool& pl = pool();
  {
    std::lock_guard<std::mutex> lock(pl.mu);
    if (!pl.free[c].empty()) {
      p_ = pl.free[c].back();
      pl.free[c].pop_back();
      pl.held -= cap_;
      return;
    }
  }
  p_ = static_cast<char*>(std::aligned_alloc(64, static_cast<size_t>(cap_)));
  if (!p_) cap_ = 0;
}

Buffer& Buffer::operator=(Buffer&& o) noexcept {
  if (this != &o) {
    Buffer gone(std::move(*this));
    p_ = o.p_, cap_ = o.cap_;
    o.p_ = nullptr, o.cap_ = 0;
  }
  return *this;
}

Buffer::~Buffer() {
  if (!p_) return;
  Pool& pl = pool();
  const int c = size_class(cap_);
  {
    std::lock_guard<std::mutex> lock(pl.mu);
    if (static_cast<int>(pl.free[c].size()) < kKeep && pl.held + cap_ <= kPoolBytes) {
      pl.free[c].push_back(p_);
      pl.held += cap_;
      return;
    }
  }
  std::free(p_);
}

int mpi_error(int ddt_code) {
  switch (ddt_code) {
    case DDT_SUCCESS: return MPI_SUCCESS;
    case DDT_ERR_NO_MEM: return MPI_ERR_NO_MEM;
    case DDT_ERR_TRUNCATE: return MPI_ERR_TRUNCATE;
    case DDT_ERR_TYPE:
    case DDT_ERR_NOT_COMMITTED: return MPI_ERR_TYPE;
    case DDT_ERR_COUNT: return MPI_ERR_COUNT;
    default: return MPI_ERR_INTERN;
  }
}

int raise(MPI_Comm comm, int code) {
  if (code != MPI_SUCCESS && comm != MPI_COMM_NULL) PMPI_Comm_call_errhandler(comm, code);
  return code;
}

// MPICH: large messages of types made of large pieces go to the MPI as they are. Staging costs a
// pack and an unpack pass over the data on top of the MPI's own copies, while MPICH moves large
// contiguous pieces with its single-copy path; measured on FFT2D (2 ranks, MPICH 5.0.2, pieces
// of 2-12 KiB, 0.5-19 MB per Alltoall; bench/ddtbench_mpi.cpp), staging ran at 0.6-1.1x of
// MPICH's own path and passing through at 0.95-1.05x. Only messages whose elements share no byte
// (see disjoint), of positive extent and without x87 long doubles (whose 6 padding bytes MPICH
// leaves unwritten) are passed: MPICH moves those exactly as the standard says.
// Open MPI: never. Handed every monotone type, Open MPI 5.0.11 delivered wrong bytes in 14 of
// 11,779 checks of the interposer test (3 ranks, seed 11), so every derived type it sees from
// the interposer is bytes.
int64_t pass_block_bytes() {
#ifdef OMPI_MAJOR_VERSION
  return 0;
#else
  static const int64_t v = [] {
    const char* e = std::getenv("DDTKIT_PASS_BLOCK");
    return e && *e ? std::atoll(e) : 2048;
  }();
  return v;
#endif
}
bool large_pass_candidate(const TypeInfo& info) {
  return pass_block_bytes() > 0 && info.mode == TypeInfo::Pack && !info.x87 && info.extent > 0 &&
         info.mean_block >= pass_block_bytes();
}

namespace {

constexpr int64_t kPassBytes = int64_t(1) << 16;

// Whether count elements of a type touch no byte twice: true for monotone types; otherwise (the
// elements interleave, as FFT2D's transposed rows do) checked once per count on the pieces of all
// count elements, sorted, where there are at most kCheckPieces of them. Found disjoint for a count,
// disjoint for every smaller one.
constexpr int64_t kCheckPieces = 4096;
bool disjoint(const TypeInfo& info, int64_t count) {
  if (info.monotone) return true;
  if (count <= info.disjoint_upto.load(std::memory_order_relaxed)) return true;
  if (info.pieces <= 0 || count > kCheckPieces / info.pieces) return false;
  // Offsets from a NULL base, compared signed: a type may reach below its buffer address.
  std::vector<std::pair<int64_t, int64_t>> all;
  each_piece(info.t, count, count * info.size, [&](uintptr_t base, size_t len) {
    all.push_back({static_cast<int64_t>(base), static_cast<int64_t>(len)});
  });
  std::sort(all.begin(), all.end());
  for (size_t i = 1; i < all.size(); ++i)
    if (all[i].first < all[i - 1].first + all[i - 1].second) return false;
  int64_t seen = info.disjoint_upto.load(std::memory_order_relaxed);
  while (seen < count && !info.disjoint_upto.compare_exchange_weak(seen, count)) {
  }
  return true;
}

// count elements of the type, as bytes the MPI can be given with an int count; false when the
// call is better left to the MPI (the type is Pass, or the bytes overflow an int).
bool convert(Side& s, const void* buf, int64_t count, MPI_Datatype dt) {
  s.as_is(buf, count, dt);
  TypeRef info = lookup(dt);
  if (info->mode == TypeInfo::Pass || count < 0) return false;
  if (info->size > 0 && count > INT_MAX / info->size) return false;
  if (large_pass_candidate(*info) && count * info->size >= kPassBytes && disjoint(*info, count)) return false;
  s.info = std::move(info);
  s.bytes = count * s.info->size;
  return true;
}

bool straight(const Side& s) {
  return s.info->mode == TypeInfo::Contig;
}

}  // namespace

namespace {

// Converts a side and points it at the user's bytes (Contig) or at fresh staging (Pack).
int stage(Side& s, const void* buf, int64_t count, MPI_Datatype dt) {
  if (!convert(s, buf, count, dt)) return MPI_SUCCESS;
  if (straight(s)) {
    s.data = const_cast<char*>(static_cast<const char*>(buf)) + s.info->offset;
    return MPI_SUCCESS;
  }
  s.staging = Buffer(s.bytes);
  if (!s.staging.ok()) return MPI_ERR_NO_MEM;
  s.data = s.staging.data();
  return MPI_SUCCESS;
}

}  // namespace

int prepare_send(Side& s, const void* buf, int64_t count, MPI_Datatype dt, bool pack_now) {
  int rc = stage(s, buf, count, dt);
  return rc == MPI_SUCCESS && pack_now ? repack(s) : rc;
}

int repack(Side& s) {
  if (!s.converted() || straight(s)) return MPI_SUCCESS;
  int64_t packed;
  return mpi_error(ddt_pack(s.user, s.count, s.info->t, 0, s.data, s.bytes, &packed));
}

int prepare_recv(Side& s, void* buf, int64_t count, MPI_Datatype dt) { return stage(s, buf, count, dt); }

int finish_recv(const Side& s, int64_t bytes) {
  if (!s.converted() || straight(s) || bytes <= 0) return MPI_SUCCESS;
  int64_t n;
  if (bytes > s.bytes) bytes = s.bytes;
  return mpi_error(ddt_unpack(s.data, bytes, const_cast<void*>(s.user), s.count, s.info->t, 0, &n));
}

int64_t received_bytes(const MPI_Status& st) {
  int cancelled = 0;
  PMPI_Test_cancelled(&st, &cancelled);
  if (cancelled) return 0;
  MPI_Count n = 0;
  PMPI_Get_elements_x(&st, MPI_BYTE, &n);
  return n == MPI_UNDEFINED ? 0 : n;
}

}  // namespace ddtmpi
