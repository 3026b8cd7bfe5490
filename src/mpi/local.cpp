// The runtime under the interposer: started at MPI_Init, the map from communicator ranks to
// runtime ranks, tickets, and the lock (local.hpp says what the protocol is).
#include "mpi/local.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <shared_mutex>
#include <unordered_map>
#include <vector>

#include "mpi/shim.hpp"
#include "shm/runtime.hpp"

namespace ddtmpi {

namespace {

struct State {  // the runtime's on flag is hot.local_on (shim.hpp), read inline by local_on()
  int world_rank = 0, world_size = 0;
  uint64_t magic[2] = {0, 0};
  std::vector<int> local;  // world rank -> runtime rank, -1 when not on this node (or self)
  MPI_Group world_group = MPI_GROUP_NULL;
  MPI_Comm poke = MPI_COMM_NULL;  // a private communicator, probed to drive the MPI's progress
  std::vector<uint32_t> next_seq;  // per runtime peer
  std::atomic<int64_t> sends{0}, receives{0};
  // Per communicator: each rank's world rank (-1 outside MPI_COMM_WORLD's group).
  std::shared_mutex comms_mu;
  std::unordered_map<uint64_t, std::vector<int>> comms;
  std::unordered_map<uint64_t, uint32_t> coll_seq;  // under comms_mu: next_coll_seq's counters
};
State& st() {
  static State* s = new State;  // never destroyed: atexit order must not matter
  return *s;
}

std::mutex& rt_mutex() {
  static std::mutex* m = new std::mutex;
  return *m;
}

int bcast(void* buf, int bytes, void* ctx) {
  return PMPI_Bcast(buf, bytes, MPI_BYTE, 0, *static_cast<MPI_Comm*>(ctx)) == MPI_SUCCESS ? 0 : 1;
}

int env_int(const char* name, int otherwise) {
  const char* e = std::getenv(name);
  return e && *e ? std::atoi(e) : otherwise;
}

// The world ranks of comm's ranks (its remote group's, for an intercommunicator).
const std::vector<int>& world_ranks(MPI_Comm comm) {
  State& s = st();
  const uint64_t k = handle_key(comm);
  {
    std::shared_lock<std::shared_mutex> lock(s.comms_mu);
    auto it = s.comms.find(k);
    if (it != s.comms.end()) return it->second;
  }
  int inter = 0, n = 0;
  MPI_Group g = MPI_GROUP_NULL;
  std::vector<int> ranks;
  if (PMPI_Comm_test_inter(comm, &inter) == MPI_SUCCESS &&
      (inter ? PMPI_Comm_remote_group(comm, &g) : PMPI_Comm_group(comm, &g)) == MPI_SUCCESS) {
    PMPI_Group_size(g, &n);
    std::vector<int> in(n);
    for (int i = 0; i < n; ++i) in[i] = i;
    ranks.assign(n, MPI_UNDEFINED);
    PMPI_Group_translate_ranks(g, n, in.data(), s.world_group, ranks.data());
    PMPI_Group_free(&g);
  }
  for (int& r : ranks)
    if (r == MPI_UNDEFINED) r = -1;
  std::unique_lock<std::shared_mutex> lock(s.comms_mu);
  return s.comms.insert_or_assign(k, std::move(ranks)).first->second;
}

int world_of(MPI_Comm comm, int rank) {
  if (rank < 0) return -1;
  if (comm == MPI_COMM_WORLD) return rank;
  const std::vector<int>& w = world_ranks(comm);
  return rank < static_cast<int>(w.size()) ? w[rank] : -1;
}

}  // namespace

std::unique_lock<std::mutex> runtime_lock() { return std::unique_lock<std::mutex>(rt_mutex()); }

namespace {

// A threshold in bytes from the environment variable `name` (at least 64: a ticket's size), else
// the default.
int64_t env_bytes(const char* name, int64_t dflt) {
  const char* e = std::getenv(name);
  const int64_t x = e && *e ? std::atoll(e) : dflt;
  return x < 64 ? int64_t{64} : x;
}

// The value for the MPI this interposer is built for.
constexpr int64_t per_mpi(int64_t open_mpi, int64_t mpich) {
#ifdef OMPI_MAJOR_VERSION
  (void)mpich;
  return open_mpi;
#else
  (void)open_mpi;
  return mpich;
#endif
}

}  // namespace

int64_t runtime_min_bytes() {
  // Below the runtime's rendezvous size (16 KiB) a message goes eagerly through its cells: two
  // copies, as the staged way's pack and unpack, plus the ticket's MPI message, against the
  // staged way's pack, the MPI's eager copies and unpack. Which wins depends on the MPI's eager
  // path. DDTBench ping-pong under the interposer (make bench's ddtbench_mpi, 2 ranks, at
  // 82f3f6f), ratio native / interposed with a threshold of 16 KiB and of 1 KiB:
  //   MPICH 5.0.2: NAS_MG_x S (2 KiB) 0.94 / 0.68, NAS_MG_y S (4 KiB) 0.91 / 0.72, LAMMPS_atomic
  //     5.5 KiB 0.79 / 0.68, SPECFEM3D_oc 3.5 KiB 0.85 / 0.70: MPICH's eager path is cheaper
  //     than the cells. But it ends at 8 KiB (runtime_contig_min_bytes below), and from there a
  //     staged message pays MPICH's single-copy handshake: threshold 16 KiB / 8 KiB (6 launches
  //     each, alternated, at c699896, medians): LAMMPS_atomic 11.4 KiB 1.59 / 2.63, MILC_su3_zd
  //     12 KiB 1.98 / 3.16, SPECFEM3D_oc c=4 12.6 KiB 6.62 / 10.38, osu_latency -D vect:8:4 of
  //     size 16384 (8 KiB sent) 9.24 / 15.25; every other kernel level. And 6 KiB against 8 KiB
  //     (3 launches each): LAMMPS_atomic 6.8 KiB 0.96-1.07 / 1.09-1.13, NAS_LU_y N=162 6.3 KiB
  //     0.97-1.17 / 1.35-1.49, SPECFEM3D_oc c=3 7.4 KiB 0.86-0.92 / 0.96-0.97: 8 KiB.
  //   Open MPI 5.0.11: NAS_MG_y S (4 KiB) 1.00 / 1.43, LAMMPS_atomic 5.5 KiB 1.34 / 1.74,
  //     vect:8:4 4 KiB 0.98 / 1.13, but 1-2 KiB messages lose (vect:8:4 1 KiB 0.94 / 0.59,
  //     NAS_LU_y 1.3 KiB 0.90 / 0.62): from 4 KiB on.
  static const int64_t v = env_bytes("DDTKIT_RUNTIME_MIN", per_mpi(int64_t{4} << 10, int64_t{8} << 10));
  return v;
}

int64_t runtime_contig_min_bytes() {
  // Messages of predefined types, and of derived types whose data is one piece (MPI_Type_contiguous
  // of doubles, NAS_LU_x's face), go to the MPI as they are: the MPI's contiguous path against
  // the runtime's (eager cells, else the rendezvous: one copy by CMA from 32 KiB outside the heap,
  // pipelined cells below) plus the ticket. Ping-pong of contiguous(n / 8, MPI_DOUBLE), 2 ranks,
  // native / interposed with the runtime taken from 4 KiB (medians of 41 alternated samples, at
  // 8865fd3 with rendezvous.cpp's kCmaMinBytes):
  //   MPICH 5.0.2: 4 KiB 0.73, 5 KiB 0.73, 6 KiB 0.78, 7 KiB 0.79, 8 KiB 1.30-1.32, 12 KiB 1.26,
  //     16 KiB 1.00-1.04, 20 KiB 1.01, 24 KiB 1.04-1.05, 28 KiB 1.05, 32 KiB 1.16-1.17; from 64 KiB
  //     1.26-1.70 (at 502677a). MPICH's own eager path ends at 8 KiB: from 8 KiB.
  //   Open MPI 5.0.11: 1 KiB 0.72-0.73, 2 KiB 0.87-0.88, 2.5 KiB 0.93-0.95, 3 KiB 0.94-0.96,
  //     3.5 KiB 1.01-1.04, 4,080 B 1.37 (NAS_LU_x N=102's face: past Open MPI's own eager limit,
  //     4 KiB with its header), 4 KiB 1.50, 5-8 KiB 1.33-1.43, 12 KiB 1.24, 16 KiB 0.94-0.97,
  //     20 KiB 0.97, 24 KiB 1.00-1.04, 28 KiB 1.04, 32 KiB 1.16-1.19, 64 KiB 1.36, 1 MiB 1.78 (the
  //     sizes under 4 KiB at 98a7b97): from 3.5 KiB, but not in runtime_contig_gap (messages just
  //     past the runtime's eager size).
  static const int64_t v = env_bytes("DDTKIT_RUNTIME_CONTIG_MIN", per_mpi(3584, int64_t{8} << 10));
  return v;
}

bool runtime_contig_gap(int64_t bytes) {
#ifdef OMPI_MAJOR_VERSION
  // Past one cell the runtime's rendezvous costs its handshake, which Open MPI's own path for
  // 16-20 KiB does not (0.94-0.97 above); from 24 KiB the runtime wins again. Not where a test
  // asked for every message (DDTKIT_RUNTIME_CONTIG_MIN set).
  static const bool asked = std::getenv("DDTKIT_RUNTIME_CONTIG_MIN") != nullptr;
  return !asked && bytes > ddt::shm::rt.eager_max && bytes < (int64_t{24} << 10);
#else
  (void)bytes;
  return false;
#endif
}

#ifdef OMPI_MAJOR_VERSION
namespace {
// Whether a test set DDTKIT_RUNTIME_MIN to route every message it can through the runtime.
bool runtime_min_asked() {
  static const bool asked = std::getenv("DDTKIT_RUNTIME_MIN") != nullptr;
  return asked;
}
}  // namespace
#endif

bool native_pipeline(const TypeInfo& info, int64_t count) {
#ifdef OMPI_MAJOR_VERSION
  // Open MPI packs the layouts its pass rule is given (monotone, naturally aligned) straight into
  // its shared-memory fragments and unpacks them on the other side, pipelined: two copies. The
  // runtime's eager cells and pipelined cells are two copies as well, plus the ticket's MPI
  // message and the runtime's own, so they win only where ddtkit's engine beats Open MPI's on
  // the layout by more than that; its one-copy mechanisms (CMA of large pieces, the mapped heap)
  // are another matter and keep the runtime. make bench's ddtbench_mpi under Open MPI 5.0.11, 2
  // ranks, native / interposed, at 7137ce5, on a machine where Open MPI's own shared-memory path
  // ran 1.6-2 times as fast as where runtime_min_bytes was measured (vect:8:4 of 8 KiB: 1.20-1.58
  // us native, against 2.48 there), through the runtime / as it is (DDTKIT_RUNTIME_MIN=1 TiB),
  // one run after the other:
  //   MILC_su3_zd (3 KiB blocks, 12-98 KB) 0.75 / 0.99, 0.71 / 0.98, 0.90 / 0.94, 0.97 / 1.00;
  //   NAS_MG_y / NAS_MG_z S (256 B blocks, 4 KiB) 0.75 / 0.98, 0.74 / 0.90; their W and A classes
  //   and NAS_MG_x 0.91-1.08 / 0.91-1.02; NAS_LU_y 16-40 KB 0.85-0.93 / 0.94-0.97;
  //   osu_latency -D vect:8:4 (4 B blocks) from 8 KiB: 0.55-0.93 / 0.93-1.06;
  //   but SPECFEM3D_mt (12 B blocks, 67-91 KB) 1.44-1.53 / 0.99-1.00, where Open MPI's own
  //   unpack of its 12-byte blocks is slow (12.0 us against ddtkit's 7.2 for 91 KB).
  // No property of the type told SPECFEM3D_mt's layout from vect:8:4's (Open MPI packs 4-byte
  // blocks of a vector of char at 0.63-0.78 of memcpy, ddtkit at 0.58-0.59), and a slower
  // program is what the interposer promises never to make: such messages go to Open MPI, and
  // SPECFEM3D_mt's gain is given up. Types Open MPI would get wrong keep the runtime, whose
  // alternative is staging (a pack, Open MPI's two copies and an unpack). With this rule / without
  // it (DDTKIT_RUNTIME_MIN=4096, the default, set), two runs each, alternated: vect:8:4 from 8 KiB
  // 0.80-1.08 / 0.58-0.87; MILC 0.87-1.06 / 0.72-1.28; NAS_MG_y,z S 0.84-0.93 / 0.68-0.91;
  // SPECFEM3D_mt 0.94-1.02 / 1.06-1.34; geometric mean over the 66 kernels 1.43 / 1.44-1.45.
  //
  // Except, where the runtime's eager cells hold the message, small_pieces types (pass.cpp), which
  // Open MPI moves slowly up to some KiB (below its own eager limit the pass rule stages them).
  // ddtbench_mpi --eager-grid, 2 ranks, native / interposed, the runtime's cells against the
  // messages as they are (DDTKIT_RUNTIME_MIN unset; two runs each, at 25a333f): int, float and
  // double vectors of 8 / 16 / 32 B blocks, 8 KiB: 1.16-1.55x through the cells, 0.93-1.05 as they
  // are; 64 B blocks 0.95-1.05 either way. Past the cells (16 KiB, and NAS_MG_x W and A, single
  // doubles of 32 and 128 KiB) the runtime's pipeline and Open MPI's were even (0.84-1.15), though
  // SPECFEM3D_mt (12 B pieces of floats, 67-91 KB) gained 1.12-1.38x through the runtime: left to
  // Open MPI, as above.
  //
  // Tried again at c699896, and kept: giving the runtime every such type but those of 1- and
  // 2-byte elements or of one element a piece. Its value turned on this machine's launch modes
  // (every Open MPI latency 2x apart between launches; bench/results' NAS_LU_x N=12 row tells
  // them apart): as they are (4 launches, 3 slow) / through the runtime (4 launches, all slow),
  // medians: MILC_su3_zd 12 KiB 0.99 / 1.16, NAS_LU_y N=1020 0.96 / 1.32, NAS_MG_z W 0.94 / 1.11,
  // SPECFEM3D_mt 0.96-0.99 / 1.11-1.22; then 3 launches in the fast mode through the runtime:
  // NAS_MG_y,z S (4 KiB) 0.53-0.65, MILC_su3_zd 12-48 KiB 0.65-0.96, NAS_LU_y N=162 and N=408
  // 0.73-0.84, against 0.95-1.0 as they are. Only SPECFEM3D_mt gained in both modes (1.12-1.50), and WRF_x, of the same 12-byte pieces
  // of floats, did not (0.94-1.20 against 1.12-1.19): no property of the type tells them apart.
  //
  // Except, too, structs over the faces of several arrays (info.parts, pass.cpp: struct_of_parts).
  // WRF's halo is one: 9 subarrays or vectors at the arrays' absolute addresses. Which way it went
  // turned on the order of the arrays in memory, not on its layout: from the C library they lie out
  // of address order (the larger ones mmap'ed downwards), the type is not monotone, the pass rule
  // refuses it and the runtime moves it; from ddtkit's heap (DDTKIT_MALLOC=1) they ascend, and it
  // went to Open MPI. ddtbench_mpi under Open MPI, 2 ranks, native / interposed, one launch each
  // way at the same core distance (159 ns a line), before this clause: every WRF kernel, the same
  // layouts but for the members' order, 1.19-2.62 through the runtime (DDTKIT_MALLOC=0) against
  // 0.95-1.01 handed to Open MPI (DDTKIT_MALLOC=1).
  return !runtime_min_asked() && !info.parts && pass_as_is(info, count) &&
         !(small_pieces(info) && count * info.size <= ddt::shm::rt.eager_max);
#else
  (void)info, (void)count;
  return false;  // MPICH's own engine is the slow part (pass.cpp keeps small pieces from it)
#endif
}

int64_t native_pipeline_upto() {
#ifdef OMPI_MAJOR_VERSION
  return runtime_min_asked() ? 0 : ddt::shm::rt.eager_max;
#else
  return 0;
#endif
}

int64_t runtime_coll_min_bytes() {
  // A collective takes the runtime for every type alike (local_coll.cpp), so contiguous data too,
  // where the MPI's own collectives are fast: MPI_DOUBLE chunks, 2 ranks, native / interposed
  // with the runtime taken from 64 B (Bcast / Allgather / Alltoall, medians of 41 interleaved
  // samples; make bench's ddtbench_mpi measures the same as coll_predefined):
  //   32 KiB: MPICH 0.65 / 0.98 / 0.89, Open MPI 0.37 / 0.41 / 0.42;
  //   256 KiB: MPICH 2.68 / 1.33 / 0.59, Open MPI 0.80 / 0.60 / 0.57;
  //   1 MiB: MPICH 4.92 / 1.29 / 1.01, Open MPI 1.32 / 1.02 / 0.92;
  //   4 MiB: MPICH 4.81 / 1.16 / 1.13, Open MPI 2.02 / 1.07 / 1.10.
  // From 1 MiB a chunk, then, where the MPI_Allreduce by which Alltoall, Allgather, Gather and
  // Scatter agree whether any rank's data is scattered (contiguous data stays with the MPI:
  // local_coll.cpp) costs 1-2% of a call; derived types below it keep the staged way (FFT2D
  // N=256 under Open MPI, 256 KiB chunks: 0.64x staged, 1.07x through the runtime).
  static const int64_t v = env_bytes("DDTKIT_RUNTIME_COLL_MIN", int64_t{1} << 20);
  return v;
}

int64_t runtime_bcast_min_bytes() {
  // MPI_Bcast needs no agreement (the runtime's wins on contiguous data too), so it has a
  // threshold of its own: 256 KiB, or DDTKIT_RUNTIME_COLL_MIN where that is lower (tests lower
  // it to route every collective), or DDTKIT_RUNTIME_BCAST_MIN. MPI_DOUBLE, 2 ranks, native /
  // interposed (ddtbench_mpi's coll_predefined, two runs each, after the runtime's
  // small-message work at 4c93597):
  //   32 KiB: MPICH 1.11-1.12, Open MPI 0.76-0.77 (below Open MPI's own: not taken);
  //   256 KiB: MPICH 3.42-3.62, Open MPI 1.42-1.43 (1.00 with the 1 MiB threshold);
  //   2 MiB: MPICH 3.28-3.51, Open MPI 2.41-2.59.
  static const int64_t v = env_bytes("DDTKIT_RUNTIME_BCAST_MIN", std::min<int64_t>(int64_t{256} << 10, runtime_coll_min_bytes()));
  return v;
}

void local_init() {
  State& s = st();
  if (disabled() || env_int("DDTKIT_RUNTIME", 1) == 0) return;
  PMPI_Comm_rank(MPI_COMM_WORLD, &s.world_rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &s.world_size);
  MPI_Comm node = MPI_COMM_NULL;
  if (PMPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, s.world_rank, MPI_INFO_NULL, &node) != MPI_SUCCESS)
    return;
  int nrank = 0, nsize = 1;
  PMPI_Comm_rank(node, &nrank);
  PMPI_Comm_size(node, &nsize);
  const int pretend = env_int("DDTKIT_PRETEND_NODES", 1);
  if (pretend > 1) {  // consecutive node ranks form each pretend node
    MPI_Comm sub = MPI_COMM_NULL;
    const int color = static_cast<int>(static_cast<int64_t>(nrank) * pretend / nsize);
    PMPI_Comm_split(node, color, nrank, &sub);
    PMPI_Comm_free(&node);
    node = sub;
    PMPI_Comm_rank(node, &nrank);
    PMPI_Comm_size(node, &nsize);
  }
  // The runtime, on nodes of two or more processes; every process of the node agrees on it.
  int ok = 0;
  if (nsize > 1) {
    ddt_bootstrap b{nrank, nsize, &node, bcast};
    ok = ddt_comm_init_bootstrap(&b) == DDT_SUCCESS;
  }
  int all = 0;
  PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, node);
  if (ok && !all) ddt_comm_finalize();
  // Every world rank's runtime rank, for every process: (node leader's world rank, node rank).
  int leader = s.world_rank;
  PMPI_Bcast(&leader, 1, MPI_INT, 0, node);
  int mine[2] = {all ? leader : -1 - s.world_rank, nrank};
  std::vector<int> every(2 * static_cast<size_t>(s.world_size));
  PMPI_Allgather(mine, 2, MPI_INT, every.data(), 2, MPI_INT, MPI_COMM_WORLD);
  PMPI_Comm_free(&node);
  s.local.assign(s.world_size, -1);
  for (int w = 0; w < s.world_size; ++w)
    if (all && w != s.world_rank && every[2 * w] == mine[0]) s.local[w] = every[2 * w + 1];
  // The job's magic, from world rank 0 (collective whether or not this node runs the runtime).
  if (s.world_rank == 0) {
    std::random_device rd;
    for (uint64_t& m : s.magic) m = (uint64_t{rd()} << 32) ^ rd();
  }
  PMPI_Bcast(s.magic, 2, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  if (!all) return;
  PMPI_Comm_group(MPI_COMM_WORLD, &s.world_group);
  PMPI_Comm_dup(MPI_COMM_SELF, &s.poke);
  s.next_seq.assign(nsize, 0);
  ddt::shm::set_passive_isends(true);
  hot.local_on.store(true, std::memory_order_relaxed);
}

void local_finalize() {
  State& s = st();
  if (!local_on()) return;
  ddt_comm_times t{};
  {
    auto lock = runtime_lock();
    ddt_comm_get_times(&t);
    hot.local_on.store(false, std::memory_order_relaxed);
    ddt_comm_finalize();
  }
  if (s.poke != MPI_COMM_NULL) PMPI_Comm_free(&s.poke);
  if (s.world_group != MPI_GROUP_NULL) PMPI_Group_free(&s.world_group);
  const int64_t sends = s.sends.load(), receives = s.receives.load();
  if (verbose())
    std::fprintf(stderr,
                 "ddtkit-mpi: world rank %d: %lld sends and %lld receives through the runtime (rendezvous receives by "
                 "the heap %lld, CMA %lld, the cells %lld; shares written through the heap %lld, by CMA %lld)\n",
                 s.world_rank, static_cast<long long>(sends), static_cast<long long>(receives),
                 static_cast<long long>(t.by_heap), static_cast<long long>(t.by_cma), static_cast<long long>(t.by_cells),
                 static_cast<long long>(t.shares_heap), static_cast<long long>(t.shares_cma));
  if (env_int("DDTKIT_EXPECT_RUNTIME", 0) && sends + receives == 0) {
    std::fprintf(stderr, "ddtkit-mpi: FAILURE: world rank %d has same-node peers but moved no message through the runtime "
                 "(DDTKIT_EXPECT_RUNTIME=1)\n", s.world_rank);
    std::fflush(stderr);
    std::_Exit(3);
  }
  // Tests of DDTKIT_MALLOC=1 (malloc memory in the runtime's heap): the heap must have carried
  // some of this process's receives or shares.
  if (env_int("DDTKIT_EXPECT_HEAP", 0) && t.by_heap + t.shares_heap == 0) {
    std::fprintf(stderr, "ddtkit-mpi: FAILURE: world rank %d moved nothing through the mapped heap (DDTKIT_EXPECT_HEAP=1)\n",
                 s.world_rank);
    std::fflush(stderr);
    std::_Exit(3);
  }
}

int local_peer(MPI_Comm comm, int rank) {
  State& s = st();
  if (!local_on()) return -1;
  const int w = world_of(comm, rank);
  return w >= 0 && w < s.world_size ? s.local[w] : -1;
}

__thread LocalHit last_local __attribute__((tls_model("initial-exec")));

bool may_be_local(MPI_Comm comm, int source) {
  if (!local_on()) return false;
  if (source == MPI_ANY_SOURCE) return true;
  // Read before the answer is made: a forget_comm meanwhile leaves the hit stale, never current.
  const uint64_t comms = hot.comms.load(std::memory_order_acquire);
  const bool local = local_peer(comm, source) >= 0;
  last_local = LocalHit{comm, source, local, comms};
  return local;
}

void forget_comm(MPI_Comm comm) {
  State& s = st();
  std::unique_lock<std::shared_mutex> lock(s.comms_mu);
  s.comms.erase(handle_key(comm));
  s.coll_seq.erase(handle_key(comm));
  hot.comms.fetch_add(1, std::memory_order_acq_rel);
}

uint32_t next_coll_seq(MPI_Comm comm) {
  State& s = st();
  std::unique_lock<std::shared_mutex> lock(s.comms_mu);
  return s.coll_seq[handle_key(comm)]++;
}

Ticket make_ticket(int peer, int64_t bytes) {
  State& s = st();
  Ticket t{};
  t.magic[0] = s.magic[0], t.magic[1] = s.magic[1];
  t.world = s.world_rank;
  t.seq = s.next_seq[peer]++ & 0x3fffffffu;  // a runtime tag: >= 0 as an int
  t.bytes = bytes;
  return t;
}

bool read_ticket(const void* p, int64_t n, MPI_Comm comm, int source, Ticket* t, int* peer) {
  State& s = st();
  if (!local_on() || n != static_cast<int64_t>(sizeof(Ticket)) || !p) return false;
  std::memcpy(t, p, sizeof *t);  // a snapshot: the bytes came from another process
  if (t->magic[0] != s.magic[0] || t->magic[1] != s.magic[1] || t->bytes < 0 ||
      (t->reserved[0] | t->reserved[1] | t->reserved[2] | t->reserved[3]) != 0) return false;
  if (t->world < 0 || t->world >= s.world_size || t->seq > 0x3fffffffu) return false;
  // The ticket must name the process the MPI says sent it (a matched-message receive has no
  // communicator to ask: there the magic vouches for it).
  if (comm != MPI_COMM_NULL && world_of(comm, source) != t->world) return false;
  *peer = s.local[t->world];
  return *peer >= 0;
}

bool ticket_magic(const void* p16) {
  const State& s = st();
  uint64_t m[2];
  std::memcpy(m, p16, sizeof m);
  return local_on() && m[0] == s.magic[0] && m[1] == s.magic[1];
}

// Compared byte by byte as the pieces come, so that a message that is not a ticket (its first
// byte differs from the magic's but for one value in 256) costs a few loads. Gathering the 16
// bytes first (a memcpy per piece) cost every 64-byte receive of vect:8:4 under Open MPI 126
// instructions, where the MPI's own round trip is about 2,300 (callgrind, osu_latency size 128).
bool ticket_magic(const char* user, const int64_t* off, const uint8_t* len, int n) {
  unsigned char m[16];
  std::memcpy(m, st().magic, sizeof m);
  if (n <= 0 || static_cast<unsigned char>(user[off[0]]) != m[0]) return false;  // the common answer
  int at = 0;
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < len[i]; ++k, ++at)
      if (at >= 16 || static_cast<unsigned char>(user[off[i] + k]) != m[at]) return false;
  return at == 16 && local_on();
}

void poke_mpi() {
  int flag = 0;
  if (st().poke != MPI_COMM_NULL) PMPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, st().poke, &flag, MPI_STATUS_IGNORE);
}

void count_local(bool send) { (send ? st().sends : st().receives).fetch_add(1, std::memory_order_relaxed); }

}  // namespace ddtmpi
