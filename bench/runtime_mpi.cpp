// The MPI twin of runtime_bench.cpp (issue 10): the same vector sweep (vector_sweep.hpp) and the
// same stencil (stencil.hpp) through one MPI, with its own datatype path (MPI_Type_vector of
// MPI_BYTE, MPI_Type_create_subarray of MPI_DOUBLE) and with the hand-written loops around
// contiguous messages. Built once per MPI (runtime_mpi_<mpi>), run natively:
//
//   mpiexec -n 2 runtime_mpi_<mpi> [--out DIR] [--smoke | --full]
//   mpiexec -n P runtime_mpi_<mpi> --stencil-only [--out DIR] ...   (P > 2: the stencil alone)
//
// JSON lines to DIR/runtime_<mpich|openmpi>.jsonl (the --stencil-only runs append). The
// DDTBench ping-pong through each MPI is ddtbench_mpi's (interposer_<mpi>.jsonl, method native).
#include <mpi.h>
#include <sys/stat.h>

#include <cstdlib>
#include <cstring>
#include <memory>

#include "stencil.hpp"
#include "protocol_sweep.hpp"
#include "vector_sweep.hpp"

namespace {

using namespace rtbench;

struct Mpi {
  using Type = MPI_Datatype;
  using Req = MPI_Request;
  int me = 0, np = 1;

  [[noreturn]] void fail(const char* what) {
    std::fprintf(stderr, "runtime_mpi: rank %d: %s\n", me, what);
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
    std::exit(1);
  }
  // MPI_ERRORS_RETURN is set on MPI_COMM_WORLD, so a failure comes back here and is reported.
  void ck(int e, const char* what) {
    if (e == MPI_SUCCESS) return;
    char s[MPI_MAX_ERROR_STRING], m[MPI_MAX_ERROR_STRING + 64];
    int len = 0;
    MPI_Error_string(e, s, &len);
    std::snprintf(m, sizeof m, "%s failed: %s", what, s);
    fail(m);
  }
  static int count_of(int64_t c) { return static_cast<int>(c); }  // every count here fits an int
  void send(const void* b, int64_t c, Type t, int p, int tag) { ck(MPI_Send(b, count_of(c), t, p, tag, MPI_COMM_WORLD), "MPI_Send"); }
  void recv(void* b, int64_t c, Type t, int p, int tag) {
    ck(MPI_Recv(b, count_of(c), t, p, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "MPI_Recv");
  }
  void isend(const void* b, int64_t c, Type t, int p, int tag, Req* r) {
    ck(MPI_Isend(b, count_of(c), t, p, tag, MPI_COMM_WORLD, r), "MPI_Isend");
  }
  void irecv(void* b, int64_t c, Type t, int p, int tag, Req* r) {
    ck(MPI_Irecv(b, count_of(c), t, p, tag, MPI_COMM_WORLD, r), "MPI_Irecv");
  }
  void wait(Req* r) { ck(MPI_Wait(r, MPI_STATUS_IGNORE), "MPI_Wait"); }
  void waitall(int n, Req* r) { ck(MPI_Waitall(n, r, MPI_STATUSES_IGNORE), "MPI_Waitall"); }
  void barrier() { ck(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier"); }
  Type bytes() { return MPI_BYTE; }
  int64_t bcast0(int64_t v) {
    long long x = v;
    ck(MPI_Bcast(&x, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD), "MPI_Bcast");
    return x;
  }
  void* alloc(int64_t n) {  // page-aligned, as osu_latency's buffers
    void* p = nullptr;
    if (posix_memalign(&p, 4096, static_cast<size_t>(n))) fail("posix_memalign");
    return p;
  }
  void release(void* p) { std::free(p); }
  Type vector(int64_t count, int64_t block, int64_t stride) {
    MPI_Datatype t;
    ck(MPI_Type_vector(count_of(count), count_of(block), count_of(stride), MPI_BYTE, &t), "MPI_Type_vector");
    ck(MPI_Type_commit(&t), "MPI_Type_commit");
    return t;
  }
  Type subarray(const int64_t sizes[3], const int64_t sub[3], const int64_t start[3]) {
    int sz[3], su[3], st[3];
    for (int i = 0; i < 3; ++i) sz[i] = count_of(sizes[i]), su[i] = count_of(sub[i]), st[i] = count_of(start[i]);
    MPI_Datatype t;
    ck(MPI_Type_create_subarray(3, sz, su, st, MPI_ORDER_C, MPI_DOUBLE, &t), "MPI_Type_create_subarray");
    ck(MPI_Type_commit(&t), "MPI_Type_commit");
    return t;
  }
  void free_type(Type& t) { ck(MPI_Type_free(&t), "MPI_Type_free"); }
};

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  Mpi t;
  MPI_Comm_rank(MPI_COMM_WORLD, &t.me);
  MPI_Comm_size(MPI_COMM_WORLD, &t.np);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  Options o;
  if (!parse_options(argc, argv, o) || (!o.stencil_only && t.np != 2)) {
    if (t.me == 0)
      std::fprintf(stderr, "usage: mpiexec -n 2 runtime_mpi [--out DIR] [--smoke|--full]\n"
                           "       mpiexec -n P runtime_mpi --stencil-only [--out DIR] [--smoke|--full]\n");
    MPI_Finalize();
    return 2;
  }
  char version[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  MPI_Get_library_version(version, &len);
  std::string v(version, std::strcspn(version, "\n,"));
  while (v.find("  ") != std::string::npos) v.erase(v.find("  "), 1);
  const bool mpich = v.find("MPICH") != std::string::npos;
  const std::string side = mpich ? "MPICH" : "Open MPI";
  std::unique_ptr<Jsonl> out;
  if (t.me == 0) {
    mkdir(o.out.c_str(), 0755);
    const std::string path = o.out + "/runtime_" + (mpich ? "mpich" : "openmpi") + ".jsonl";
    out.reset(new Jsonl(path, o.stencil_only, side, v));
    if (!out->ok()) t.fail(("cannot write " + path).c_str());
    std::printf("== %s (issue 10's vector sweep and stencil), %d processes%s -> %s\n", v.c_str(), t.np,
                o.smoke ? ", smoke" : o.full ? ", full" : "", path.c_str());
  }
  if (!o.stencil_only && !o.protocols_only)
    with_usage(t, out.get(), "vector sweep",
               [&] { vector_sweep(t, out.get(), o, {{"mpi-ddt", nullptr}, {"mpi-hand", nullptr, true}}); });
  if (!o.stencil_only)  // issue 15's protocol sweep: the MPI as it is, beside ddtkit's protocols
    with_usage(t, out.get(), "protocols", [&] { protocol_sweep(t, out.get(), o, {{"mpi", nullptr, nullptr, nullptr}}); });
  if (!o.protocols_only)
    with_usage(t, out.get(), "stencil",
               [&] { stencil(t, out.get(), o, {{"mpi-subarray", nullptr}, {"mpi-hand", nullptr, true}}); });
  out.reset();
  MPI_Finalize();
  return 0;
}
