// The pass rule: when a message of a translated type goes to the MPI as it is, with the user's
// (buf, count, datatype), instead of as bytes that ddtkit packed.
//
// MPICH: large messages of types made of large pieces go to the MPI as they are. Staging costs a
// pack and an unpack pass over the data on top of the MPI's own copies, while MPICH moves large
// contiguous pieces with its single-copy path; measured on FFT2D (2 ranks, MPICH 5.0.2, pieces
// of 2-12 KiB, 0.5-19 MB per Alltoall; bench/ddtbench_mpi.cpp), staging ran at 0.6-1.1x of
// MPICH's own path and passing through at 0.95-1.05x. Only messages whose elements share no byte
// (see disjoint), of positive extent and without x87 long doubles (whose 6 padding bytes MPICH
// leaves unwritten) are passed: MPICH moves those exactly as the standard says.
//
// Open MPI 5.0.11: messages of up to kOmpiPassBytes of monotone, naturally aligned types without
// x87 long doubles, at any size from one element on, except eager-sized messages of short pieces,
// which its eager path moves slowly (ompi_slow_eager below says which). Open MPI
// packs such layouts straight into its shared-memory fragments, where staging pays a pack, Open
// MPI's copies and an unpack.
// Evidence (tests/mpi/ompi_probe.cpp: random types sent natively typed -> typed, typed -> bytes
// and bytes -> typed, 2 and 3 ranks, messages of one element to 4.2 MB, plus MPI_Pack/Unpack,
// every receive buffer compared byte for byte with ddt_pack/ddt_unpack, gaps included): at
// bb93396, 2 ranks (seed 2, 150 types): 4103 checks, 866 of them of messages this rule hands to
// Open MPI, 0 wrong; 34 findings (wrong bytes) all on types the rule keeps; 3 ranks (seed 3):
// 7661 checks, 1639 passed, 0 wrong, 48 findings. ctest ompi_probe_np2/np3 fail on any wrong
// byte in a passed message.
// What Open MPI gets wrong, and the rule therefore excludes:
//   - a basic element at an address that is not a multiple of its size (hvector(3, 1, 50 B,
//     MPI_DOUBLE), hvector(5, 2, 90 B, MPI_C_DOUBLE_COMPLEX), hvector(4, 4, 39 B,
//     MPI_C_FLOAT_COMPLEX)): right up to the first fragment boundary (stream byte 4016, then
//     every ~32 KiB), then 8-16 wrong bytes at each boundary, on the sending side for some types
//     and the receiving side for others; MPI_Pack in one process is right;
//   - x87 long doubles: Open MPI leaves their 6 padding bytes unwritten;
//   - non-monotone layouts (elements interleave, or pieces descend or overlap): wrong bytes in
//     one process already (MPI_Pack), as issue 4 found.
#include <algorithm>
#include <cstdlib>

#include "mpi/shim.hpp"

namespace ddtmpi {

namespace {

// Alignment of a type for naturally_aligned: `unit` is the largest basic unit inside (a basic
// type's own extent, at most 16: as strict as the C ABI or stricter, e.g. 16 for DOUBLE_INT),
// `ok` says every basic element lies at a multiple of its unit from the type's origin.
struct Alignment {
  int64_t unit = 1;
  bool ok = true;
};

Alignment alignment(ddt_type t, int depth) {
  Alignment out;
  int64_t ni = 0, na = 0, nd = 0, lb = 0, ext = 0;
  int comb = DDT_COMBINER_LAYOUT;
  if (depth > 64 || ddt_type_envelope(t, &ni, &na, &nd, &comb) != DDT_SUCCESS || comb == DDT_COMBINER_LAYOUT) {
    out.ok = false;  // no history to read: not shown aligned
    return out;
  }
  if (comb == DDT_COMBINER_NAMED) {
    ddt_type_extent(t, &lb, &ext);
    while (out.unit * 2 <= ext && out.unit < 16) out.unit *= 2;
    return out;
  }
  std::vector<int64_t> ints(ni), addrs(na);
  std::vector<ddt_type> kids(nd);
  if (ddt_type_contents(t, ni, na, nd, ints.data(), addrs.data(), kids.data()) != DDT_SUCCESS) {
    out.ok = false;
    return out;
  }
  for (int64_t k = 0; k < nd; ++k) {
    const Alignment a = alignment(kids[k], depth + 1);
    ddt_type_extent(kids[k], &lb, &ext);
    out.unit = std::max(out.unit, a.unit);
    out.ok = out.ok && a.ok;
    // Copies of a child sit at multiples of its extent (blocks, counts, element displacements,
    // subarray and darray indices), except under resized and dup, which place it once at 0.
    if (comb != DDT_COMBINER_RESIZED && comb != DDT_COMBINER_DUP) out.ok = out.ok && ext % a.unit == 0;
    // Byte displacements: hvector's stride, hindexed's and struct's displacements.
    const bool byte_displs = comb == DDT_COMBINER_HVECTOR || comb == DDT_COMBINER_HINDEXED ||
                             comb == DDT_COMBINER_HINDEXED_BLOCK || comb == DDT_COMBINER_STRUCT;
    if (byte_displs)
      for (int64_t j = 0; j < na; ++j)
        if (comb != DDT_COMBINER_STRUCT || j == k) out.ok = out.ok && addrs[j] % a.unit == 0;
    ddt_type_free(&kids[k]);  // a predefined handle refuses, harmlessly
  }
  return out;
}

}  // namespace

// A struct (seen through dup and resized) of at least two members whose types have several pieces:
// the faces of several arrays sent as one message, WRF's halo (ddtbench.md 3.1), LAMMPS's and
// SPECFEM3D_cm's particle lists. local.cpp's native_pipeline keeps such types from Open MPI.
bool struct_of_parts(ddt_type t) {
  int depth = 0;
  ddt_type cur = t;
  bool own = false;  // whether cur is a handle from ddt_type_contents, to free
  bool out = false;
  for (;;) {
    int64_t ni = 0, na = 0, nd = 0;
    int comb = DDT_COMBINER_LAYOUT;
    if (++depth > 64 || ddt_type_envelope(cur, &ni, &na, &nd, &comb) != DDT_SUCCESS) break;
    if (comb != DDT_COMBINER_STRUCT && comb != DDT_COMBINER_RESIZED && comb != DDT_COMBINER_DUP) break;
    std::vector<int64_t> ints(ni), addrs(na);
    std::vector<ddt_type> kids(nd);
    if (nd < 1 || ddt_type_contents(cur, ni, na, nd, ints.data(), addrs.data(), kids.data()) != DDT_SUCCESS) break;
    if (own) ddt_type_free(&cur);
    if (comb != DDT_COMBINER_STRUCT) {  // dup, resized: one child
      cur = kids[0], own = true;
      continue;
    }
    int parts = 0;
    for (int64_t k = 0; k < nd; ++k) {
      int64_t blocks = 0;
      int asc = 0;
      if (ints[1 + k] > 0 && ddt_type_blocks(kids[k], &blocks, &asc) == DDT_SUCCESS && blocks >= 2) ++parts;
      ddt_type_free(&kids[k]);  // a predefined handle refuses, harmlessly
    }
    own = false;
    out = parts >= 2;
    break;
  }
  if (own) ddt_type_free(&cur);
  return out;
}

bool naturally_aligned(ddt_type t, int64_t* unit) {
  const Alignment a = alignment(t, 0);
  int64_t lb = 0, ext = 0;
  ddt_type_extent(t, &lb, &ext);
  if (unit) *unit = a.unit;
  return a.ok && ext % a.unit == 0;
}

int64_t pass_block_bytes() {
#ifdef OMPI_MAJOR_VERSION
  return 0;  // Open MPI's rule is ompi_pass below
#else
  static const int64_t v = [] {
    const char* e = std::getenv("DDTKIT_PASS_BLOCK");
    return e && *e ? std::atoll(e) : 2048;
  }();
  return v;
#endif
}

// Tried and left out (MPICH): passing every message of at most 8 KiB as it is, since MPICH packs
// small messages straight into its cells and beat staging on some DDTBench kernels (make bench at
// 61414da: LAMMPS_atomic 5.5-7 KiB staged at 0.79-0.83x, SPECFEM3D_oc 3.5-7.6 KiB at 0.82-0.84x,
// where MPICH's own path beat even the application's hand-written loop). It lifted the worst
// kernel to 0.91x but left 13 kernels at 0.91-0.95x and cut osu_latency -D vect:8:4 at 1-8 KiB
// from 1.8-4.3x to 0.80-0.90x: which engine wins a small message depends on the layout (ddtkit's
// on regular strides, MPICH's on these short index lists), and no cheap property of the type
// told them apart.
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

}  // namespace

// The largest Open MPI message the probe has checked: larger ones are staged.
constexpr int64_t kOmpiPassBytes = int64_t(4) << 20;

// Open MPI 5.0.11's eager path (btl/sm's eager limit, 4 KiB with its header, the default) moves
// small pieces of 4-byte and larger basic elements slowly: a vector of single doubles, 2 KiB,
// took 6-14 us a round trip natively where its in-process MPI_Pack and MPI_Unpack took 0.6 us
// each and a contiguous 2 KiB message 1-3.5 us. Measured (ddtbench_mpi --eager-grid: vectors
// of stride twice the block, 2 ranks, round trip natively typed / MPI_Pack + MPI_BYTE +
// MPI_Unpack on each side, medians of 7 samples, this 2-core machine):
//   double, 8 / 16 / 32 / 64 B blocks: 1 KiB 2.18 / 1.58 / 1.22 / 1.00; 3 KiB 2.88 / 2.02 /
//     1.44 / 1.18; 4000 B 3.14 / 2.33 / 1.62 / 1.19; 256 B 1.57 / 1.20 / 1.09 / 0.89;
//   float: 3 KiB 3.44 / 2.18 / 1.38 / 0.83; int: 3 KiB 3.08 / 2.38 / 1.06 / 0.84;
//   but char: 0.83-0.89 at every block and size (Open MPI's path wins), short: 0.92-1.32;
//   and from 8 KiB (past the eager limit) the native path wins for every type: 0.34-0.49.
// Either side's choice counts alone (double, 8 B blocks, 3 KiB: 11.1 us typed on both sides,
// 7.6 with either side staged, 3.6 with both). So a side stages such a message itself, without
// asking its peer: fewer bytes than the eager limit, basic elements of 4 bytes or more, and
// pieces of 32 bytes or less on average (at 64 B the two ways are even). These staged messages
// are below the runtime's threshold (local.cpp: runtime_min_bytes); messages of at least 4 KiB
// keep the rule above, and a same-node one of a small_pieces type that fits the runtime's eager
// cells takes the runtime instead (local.cpp: native_pipeline).
// (kOmpiSlowPiece, the 32 bytes, is in shim.hpp, beside short_pieces.)
//
// Widened (on top of 32bc500), after make bench's grid (run N, 218fcd6) and two more runs of it found
// staging ahead where the rule above still passed, on either of the machine's modes (Open MPI's
// native round trips differ up to 3x between launches), native / staged, run N | two runs today:
//   char, 16 and 32 B blocks, 1-4 KiB: 1.04-1.42 | 1.98-2.96; char 8 B: 0.79-0.90 | 0.95-1.12
//     (Open MPI's path still wins or ties: kept); at 256 B: 0.92-1.05 | 1.08-1.42;
//   short, 8-32 B blocks, 1-4 KiB: 1.00-1.93 | 1.64-3.08; at 256 B 0.93-0.97 | 1.21-1.48;
//   double, 64 B blocks: 256 B-4 KiB 1.03-1.40 | 1.22-1.97; float and int, 64 B: 0.93-1.10 |
//     1.10-1.79; and NAS_LU_y's 40 B blocks of doubles (DDTBench, 480 B-2.5 KB), natively
//     0.61 / 1.02 / 1.68 us against the hand-packed bytes' 0.52 / 0.70 / 1.09 (run N; the
//     interposer passed them: 0.93-0.99x native).
// So from 1 KiB short and char pieces of up to 32 bytes are staged too (not char pieces of 8
// bytes or less), and pieces of 4-byte and larger elements up to 48 bytes at any size, up to 64
// from 3 KiB.
// The eager limit is on the fragment, header included: contiguous bytes go eagerly up to 4016
// (MPI_BYTE round trips, 2 ranks: 4000-4016 B 1.23-1.28 us, 4020-4200 B 6.0-7.3 us), so a
// staged message of 4017-4095 bytes went by rendezvous where the typed one did not:
// NAS_LU_y N=102 (4080 B of 40 B blocks) ran 0.42x native staged, 0.98x passed.
constexpr int64_t kOmpiEagerBytes = 4016;
bool ompi_slow_eager(const TypeInfo& info, int64_t bytes) {
  if (bytes > kOmpiEagerBytes) return false;
  if (info.unit >= 4) return info.mean_block <= (bytes >= 3072 ? 64 : 48);
  return bytes >= 1024 && info.mean_block <= kOmpiSlowPiece && (info.unit >= 2 || info.mean_block > 8);
}

bool ompi_pass_candidate(const TypeInfo& info) {
  return info.mode == TypeInfo::Pack && info.monotone && info.aligned && !info.x87 && info.extent > 0;
}

// The cheap tests first: disjoint may walk every piece of the message.
bool pass_as_is(const TypeInfo& info, int64_t count) {
#ifdef OMPI_MAJOR_VERSION
  return ompi_pass_candidate(info) && count * info.size <= kOmpiPassBytes && !ompi_slow_eager(info, count * info.size) &&
         disjoint(info, count);  // monotone: true
#else
  return large_pass_candidate(info) && count * info.size >= kPassBytes && disjoint(info, count);
#endif
}

}  // namespace ddtmpi
