// One side of a data movement (a send buffer or a receive buffer) as the interposer performs it:
// the user's bytes where the layout is contiguous, else staging from the shared buffer pool
// (src/util/buffer_pool.hpp), packed before a send and unpacked after a receive. Whether a
// message is staged at all is the pass rule's (pass.cpp), except for GPU memory, which is always
// staged (device.cpp): ddt_pack and ddt_unpack move it on the GPU.
#include <atomic>
#include <cstdint>
#include <cstdio>

#include "mpi/shim.hpp"

namespace ddtmpi {

// convert's test (below): where it holds, the side is the user's arguments as they are. The
// device query comes last, so that a side the pass rule would hand over asks it once more only
// when it is GPU memory.
bool stays_as_is(const TypeInfo& ti, const void* buf, int64_t count) {
  if (count < 0 || ti.mode == TypeInfo::Pass || (ti.size > 0 && count > INT_MAX / ti.size)) return true;
  return pass_as_is(ti, count) && !(count > 0 && device_buffer(buf, count, ti.t));
}

bool direct(const TypeInfo& ti, const void* buf, int count, MPI_Datatype dt, Direct* out) {
  // A Contig type's message is its bytes unless stays_as_is holds (a negative count, or more
  // than an int of bytes: the pass rules take Pack types only): decided here without asking them.
  if (ti.mode == TypeInfo::Contig && count >= 0 && !(ti.size > 0 && count > INT_MAX / ti.size)) {
    if (count > 0 && device_buffer(buf, count, ti.t)) return false;
    char* data = const_cast<char*>(static_cast<const char*>(buf)) + ti.offset;
    *out = Direct{data, static_cast<int>(count * ti.size), MPI_BYTE};
    return true;
  }
  if (stays_as_is(ti, buf, count)) {
    *out = Direct{const_cast<void*>(buf), count, dt};
    return true;
  }
  // Past stays_as_is, count >= 0 and count x size fits an int (convert, then straight, below).
  if (ti.mode != TypeInfo::Contig || (count > 0 && device_buffer(buf, count, ti.t))) return false;
  char* data = const_cast<char*>(static_cast<const char*>(buf)) + ti.offset;
  *out = Direct{data, static_cast<int>(count * ti.size), MPI_BYTE};
  return true;
}

namespace {

// count elements of the type, as bytes the MPI can be given with an int count; false when the
// call is better left to the MPI (the type is Pass, the bytes overflow an int, or the pass rule
// hands the message over as it is; past the int check, count * size cannot overflow).
bool convert(Side& s, const void* buf, int64_t count, MPI_Datatype dt, const TypeInfo* refused) {
  s.as_is(buf, count, dt);
  // Decided without a reference: most small messages stop here. Past direct()'s refusal the
  // message is not stays_as_is (direct asks that first).
  const TypeInfo& ti = refused ? *refused : peek(dt);
  if (!refused && stays_as_is(ti, buf, count)) return false;
  s.device = count > 0 && device_buffer(buf, count, ti.t);  // never handed to the MPI as it is
  s.info = lookup(dt);
  s.bytes = count * s.info->size;
  return true;
}

bool straight(const Side& s) {
  return s.info->mode == TypeInfo::Contig && !s.device;
}

// Converts a side and points it at the user's bytes (Contig) or at fresh staging (Pack).
int stage(Side& s, const void* buf, int64_t count, MPI_Datatype dt, const TypeInfo* refused) {
  if (!convert(s, buf, count, dt, refused)) return MPI_SUCCESS;
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

int prepare_send(Side& s, const void* buf, int64_t count, MPI_Datatype dt, bool pack_now, const TypeInfo* refused) {
  int rc = stage(s, buf, count, dt, refused);
  return rc == MPI_SUCCESS && pack_now ? repack(s) : rc;
}

int repack(Side& s) {
  if (!s.converted() || straight(s)) return MPI_SUCCESS;
  int64_t packed;
  return mpi_error(ddt_pack(s.user, s.count, s.info->t, 0, s.data, s.bytes, &packed));
}

int prepare_recv(Side& s, void* buf, int64_t count, MPI_Datatype dt, const TypeInfo* refused) {
  return stage(s, buf, count, dt, refused);
}

int finish_recv(const Side& s, int64_t bytes) {
  if (!s.converted() || straight(s) || bytes <= 0) return MPI_SUCCESS;
  int64_t n;
  if (bytes > s.bytes) bytes = s.bytes;
  return mpi_error(ddt_unpack(s.data, bytes, const_cast<void*>(s.user), s.count, s.info->t, 0, &n));
}

namespace {

int64_t received_by_pmpi(const MPI_Status& st) {
  int cancelled = 0;
  PMPI_Test_cancelled(&st, &cancelled);
  if (cancelled) return 0;
  MPI_Count n = 0;
  PMPI_Get_elements_x(&st, MPI_BYTE, &n);
  return n == MPI_UNDEFINED ? 0 : n;
}

// The same answer read from the status's own fields, which are each MPI's ABI: Open MPI keeps the
// bytes in _ucount and the cancel flag in _cancelled; MPICH keeps the low 32 bits of the bytes in
// count_lo and the rest in count_hi_and_cancelled, shifted past its cancel bit (bit 0). Why: the
// PMPI pair costs 11 ns under Open MPI 5.0.11 (10^7 calls in one process), and every receive that
// may hold a ticket asks twice, about a third of what the interposer added to a 480 B vector's
// round trip (1.78 us native, 1.91 interposed). status_init checks the reading against the PMPI
// answers and keeps the PMPI calls if they ever differ.
int64_t received_by_fields(const MPI_Status& st) {
#if defined(OMPI_MAJOR_VERSION)
  return st._cancelled ? 0 : static_cast<int64_t>(st._ucount);
#elif defined(MPICH)
  if (st.count_hi_and_cancelled & 1) return 0;
  const uint64_t hi = static_cast<uint32_t>(st.count_hi_and_cancelled) >> 1;
  return static_cast<int64_t>((hi << 32) | static_cast<uint32_t>(st.count_lo));
#else
  return received_by_pmpi(st);
#endif
}

std::atomic<bool> fields_agree{false};

}  // namespace

void status_init() {
  bool ok = true;
  for (MPI_Count n : {MPI_Count{0}, MPI_Count{40}, MPI_Count{4097}, (MPI_Count{1} << 31) + 5, (MPI_Count{1} << 33) + 7})
    for (int cancelled : {0, 1}) {
      MPI_Status st{};
      if (PMPI_Status_set_elements_x(&st, MPI_BYTE, n) != MPI_SUCCESS || PMPI_Status_set_cancelled(&st, cancelled) != MPI_SUCCESS) {
        ok = false;
        continue;
      }
      ok = ok && received_by_fields(st) == received_by_pmpi(st) && received_by_pmpi(st) == (cancelled ? 0 : n);
    }
  fields_agree.store(ok, std::memory_order_relaxed);
  if (verbose()) std::fprintf(stderr, "ddtkit-mpi: statuses read %s\n", ok ? "from their fields" : "through PMPI calls");
}

int64_t received_bytes(const MPI_Status& st) {
  return fields_agree.load(std::memory_order_relaxed) ? received_by_fields(st) : received_by_pmpi(st);
}

}  // namespace ddtmpi
