// FALCON-X's stencil benchmark (its figure 12): the halo exchange of a 3-D 7-point stencil.
// Each process owns n^3 doubles inside a halo of one cell, (n+2)^3 in memory in C order (the
// last index fastest). The processes form a periodic grid: 1-D, P x 1 x 1 (split along the
// slowest dimension: a face is n rows of n contiguous doubles), or 3-D, balanced as
// MPI_Dims_create would (a split in the fastest dimension makes faces of single doubles). An
// iteration exchanges the face with the neighbour on each side of every split dimension:
// irecv into the halo, isend of the boundary layer, waitall. The faces are subarray types; the
// hand-written variant packs each face into a contiguous buffer and unpacks on arrival. The
// figure is communication only (no compute), time per iteration on rank 0.
#pragma once
#include <cstring>

#include "transfer.hpp"

namespace rtbench {

struct Grid {
  int64_t n = 0;
  int dims[3] = {1, 1, 1}, coord[3] = {0, 0, 0};
  int64_t side() const { return n + 2; }
  int64_t cells() const { return side() * side() * side(); }
  int64_t at(int64_t i, int64_t j, int64_t k) const { return (i * side() + j) * side() + k; }
};

// Balanced factors of np over three dimensions (largest prime factors first, each to the
// dimension with the fewest processes so far, ties to the slowest), or np x 1 x 1.
inline void grid_dims(int np, bool three_d, int dims[3]) {
  dims[0] = dims[1] = dims[2] = 1;
  if (!three_d) {
    dims[0] = np;
    return;
  }
  std::vector<int> primes;
  for (int p = 2, r = np; r > 1;)
    if (r % p == 0) primes.push_back(p), r /= p;
    else ++p;
  std::sort(primes.rbegin(), primes.rend());
  for (int p : primes) *std::min_element(dims, dims + 3) *= p;
  std::sort(dims, dims + 3, [](int a, int b) { return a > b; });
}

inline Grid make_grid(int64_t n, int np, int me, bool three_d) {
  Grid g;
  g.n = n;
  grid_dims(np, three_d, g.dims);
  g.coord[0] = me / (g.dims[1] * g.dims[2]);
  g.coord[1] = me / g.dims[2] % g.dims[1];
  g.coord[2] = me % g.dims[2];
  return g;
}

// One face of the exchange: toward the neighbour at dir (-1 or +1) along dim. The boundary layer
// is sent with tag send_tag; the halo layer receives what the neighbour sent toward this process,
// whose tag names the opposite direction. (With 2 processes along dim, both neighbours are one
// process, and the tags tell its two messages apart.)
struct Face {
  int dim, dir, peer, send_tag, recv_tag;
  int64_t sizes[3], subsizes[3], send_start[3], recv_start[3];
  int64_t elems;
};

inline std::vector<Face> grid_faces(const Grid& g) {
  std::vector<Face> fs;
  for (int d = 0; d < 3; ++d) {
    if (g.dims[d] == 1) continue;  // no neighbour: the halo of an unsplit dimension is not exchanged
    for (int dir : {-1, +1}) {
      Face f;
      f.dim = d, f.dir = dir;
      int c[3] = {g.coord[0], g.coord[1], g.coord[2]};
      c[d] = (c[d] + dir + g.dims[d]) % g.dims[d];
      f.peer = (c[0] * g.dims[1] + c[1]) * g.dims[2] + c[2];
      f.send_tag = 10 + 2 * d + (dir > 0);
      f.recv_tag = 10 + 2 * d + (dir < 0);
      f.elems = 1;
      for (int e = 0; e < 3; ++e) {
        f.sizes[e] = g.side();
        f.subsizes[e] = e == d ? 1 : g.n;
        f.send_start[e] = e != d ? 1 : dir < 0 ? 1 : g.n;
        f.recv_start[e] = e != d ? 1 : dir < 0 ? 0 : g.n + 1;
        f.elems *= f.subsizes[e];
      }
      fs.push_back(f);
    }
  }
  return fs;
}

// The hand-written face loops: rows of the fastest dimension are contiguous.
inline void face_pack(const Grid& g, const Face& f, const double* a, double* out) {
  for (int64_t i = 0; i < f.subsizes[0]; ++i)
    for (int64_t j = 0; j < f.subsizes[1]; ++j) {
      const double* row = a + g.at(f.send_start[0] + i, f.send_start[1] + j, f.send_start[2]);
      for (int64_t k = 0; k < f.subsizes[2]; ++k) *out++ = row[k];
    }
}
inline void face_unpack(const Grid& g, const Face& f, const double* in, double* a) {
  for (int64_t i = 0; i < f.subsizes[0]; ++i)
    for (int64_t j = 0; j < f.subsizes[1]; ++j) {
      double* row = a + g.at(f.recv_start[0] + i, f.recv_start[1] + j, f.recv_start[2]);
      for (int64_t k = 0; k < f.subsizes[2]; ++k) row[k] = *in++;
    }
}

// Byte check: an interior cell holds its global coordinates; every halo cell starts at -1. After
// one exchange, a halo cell of a split dimension holds the value of the cell it mirrors on the
// neighbour (periodic), and every other cell, edges and corners included, is unchanged.
inline double cell_value(int64_t gi, int64_t gj, int64_t gk) { return gi * 1e6 + gj * 1e3 + gk; }

inline double expected_cell(const Grid& g, int64_t i, int64_t j, int64_t k, bool exchanged) {
  const int64_t l[3] = {i, j, k};
  int64_t glob[3];
  int halo_dims = 0;
  for (int e = 0; e < 3; ++e) {
    const bool halo = l[e] == 0 || l[e] == g.n + 1;
    if (halo && (!exchanged || g.dims[e] == 1)) return -1;
    halo_dims += halo;
    const int64_t extent = g.dims[e] * g.n;
    glob[e] = ((g.coord[e] * g.n + l[e] - 1) % extent + extent) % extent;
  }
  if (halo_dims > 1) return -1;  // edges and corners: a 7-point stencil exchanges faces only
  return cell_value(glob[0], glob[1], glob[2]);
}

inline void grid_fill(const Grid& g, double* a) {
  for (int64_t i = 0; i < g.side(); ++i)
    for (int64_t j = 0; j < g.side(); ++j)
      for (int64_t k = 0; k < g.side(); ++k) a[g.at(i, j, k)] = expected_cell(g, i, j, k, false);
}

inline bool grid_check(const Grid& g, const double* a, int64_t* bad) {
  for (int64_t i = 0; i < g.side(); ++i)
    for (int64_t j = 0; j < g.side(); ++j)
      for (int64_t k = 0; k < g.side(); ++k)
        if (a[g.at(i, j, k)] != expected_cell(g, i, j, k, true)) {
          *bad = g.at(i, j, k);
          return false;
        }
  return true;
}

struct StencilMethod {
  std::string name;
  std::function<void()> setup;  // on every rank, before the method's first iteration
  bool hand = false;
};

inline std::vector<int64_t> stencil_sizes(const Options& o) {
  if (o.smoke) return {12};
  if (o.full) return {64, 128};
  return {64};
}

// One transport's side of the stencil: its grid array, the faces' types both ways and the hand
// path's staging, built on construction and released on destruction.
template <class T>
struct StencilCase {
  using Req = typename T::Req;
  T& t;
  const Grid& g;
  const std::vector<Face>& fs;
  double* a;
  std::vector<typename T::Type> stype, rtype;
  std::vector<double*> sstage, rstage;
  std::vector<Req> req;

  StencilCase(T& tr, const Grid& grid, const std::vector<Face>& faces) : t(tr), g(grid), fs(faces) {
    a = static_cast<double*>(t.alloc(g.cells() * 8));
    for (const Face& f : fs) {
      stype.push_back(t.subarray(f.sizes, f.subsizes, f.send_start));
      rtype.push_back(t.subarray(f.sizes, f.subsizes, f.recv_start));
      sstage.push_back(static_cast<double*>(t.alloc(f.elems * 8)));
      rstage.push_back(static_cast<double*>(t.alloc(f.elems * 8)));
    }
    req.resize(2 * fs.size());
  }
  ~StencilCase() {
    for (auto& ty : stype) t.free_type(ty);
    for (auto& ty : rtype) t.free_type(ty);
    for (double* p : sstage) t.release(p);
    for (double* p : rstage) t.release(p);
    t.release(a);
  }
  // One iteration's exchange: the faces' subarray types, or (hand) packed around byte messages.
  void iteration(bool hand) {
    const int nf = static_cast<int>(fs.size());
    for (int f = 0; f < nf; ++f)
      if (hand) t.irecv(rstage[f], fs[f].elems * 8, t.bytes(), fs[f].peer, fs[f].recv_tag, &req[f]);
      else t.irecv(a, 1, rtype[f], fs[f].peer, fs[f].recv_tag, &req[f]);
    for (int f = 0; f < nf; ++f)
      if (hand) {
        face_pack(g, fs[f], a, sstage[f]);
        t.isend(sstage[f], fs[f].elems * 8, t.bytes(), fs[f].peer, fs[f].send_tag, &req[nf + f]);
      } else {
        t.isend(a, 1, stype[f], fs[f].peer, fs[f].send_tag, &req[nf + f]);
      }
    t.waitall(2 * nf, req.data());
    if (hand)
      for (int f = 0; f < nf; ++f) face_unpack(g, fs[f], rstage[f], a);
  }
  // One exchange from a filled grid, checked (on the failing rank: t.fail).
  void check(const std::string& name, const char* params, const char* decomp, bool hand) {
    grid_fill(g, a);
    t.barrier();
    iteration(hand);
    int64_t bad = -1;
    if (!grid_check(g, a, &bad)) {
      char why[160];
      std::snprintf(why, sizeof why, "stencil %s %s %s: wrong value at cell %lld", name.c_str(), params, decomp,
                    (long long)bad);
      t.fail(why);
    }
  }
};

template <class T>
void stencil_report(T& t, Jsonl* out, bool three_d, const Grid& g, const std::vector<Face>& fs, const char* params,
                    const char* decomp, const std::string& name, double ns) {
  if (t.me != 0 || !out) return;
  int64_t bytes = 0;
  for (const Face& f : fs) bytes += f.elems * 8;
  char extra[96];
  std::snprintf(extra, sizeof extra, "\"decomp\": \"%s\", \"faces\": %d, \"np\": %d, \"n\": %lld", decomp,
                static_cast<int>(fs.size()), t.np, (long long)g.n);
  out->add("rt_stencil", three_d ? "3d" : "1d", params, "iteration", name, bytes, ns, extra);
  std::printf("[stencil %s %-8s %s] %-16s %9.2f us per iteration (%d faces, %lld B sent per rank)\n",
              three_d ? "3-D" : "1-D", decomp, params, name.c_str(), ns / 1e3, static_cast<int>(fs.size()),
              (long long)bytes);
  std::fflush(stdout);
}

// Each size and decomposition of the sweep, as (three_d, grid, faces, params, decomp).
template <class F>
void stencil_cases(int np, int me, const Options& o, F&& each) {
  for (int64_t n : stencil_sizes(o))
    for (bool three_d : {false, true}) {
      const Grid g = make_grid(n, np, me, three_d);
      if (three_d && g.dims[0] == np) continue;  // the same grid as the 1-D one (P prime)
      const std::vector<Face> fs = grid_faces(g);
      char params[64];
      std::snprintf(params, sizeof params, "P=%d n=%lld", np, (long long)n);
      char decomp[32];
      std::snprintf(decomp, sizeof decomp, "%dx%dx%d", g.dims[0], g.dims[1], g.dims[2]);
      each(three_d, g, fs, params, decomp);
    }
}

// Every rank takes part; rank 0 writes out. Each method in a series of its own.
template <class T>
void stencil(T& t, Jsonl* out, const Options& o, const std::vector<StencilMethod>& methods) {
  const Budget b = o.budget();
  stencil_cases(t.np, t.me, o, [&](bool three_d, const Grid& g, const std::vector<Face>& fs, const char* params,
                                   const char* decomp) {
    StencilCase<T> c(t, g, fs);
    for (const StencilMethod& m : methods) {
      if (m.setup) m.setup();
      c.check(m.name, params, decomp, m.hand);
      const double ns = time_op(t, [&] { c.iteration(m.hand); }, b);
      stencil_report(t, out, three_d, g, fs, params, decomp, m.name, ns);
    }
  });
}

// The MPI's stencil (its subarray types, and by hand) and ddtkit's runtime's (`ddtkit`) in the
// same processes, sample by sample in turn (transfer.hpp's interleaved), so that the speedup is
// taken over the same phases of the machine. Timed one series after the other, the 2x2x1 grid
// on 4 processes (2 cores) put the runtime at 29.9-47.9 us from one run to the next against the
// faster MPI's 65, and the speedup between 1.36x and 2.23x. The samples start at ddtkit's
// barrier, which yields: with the MPI's, which spins, a rank still spinning in it with more
// processes than cores held a core into the next sample (ddtkit 108-228 us per iteration in
// MPICH's run against 45-52 in its own; MPICH itself 1.2-2.7 ms; with ddtkit's barrier 33-50 and
// 170-280). R's setup comes from the caller.
template <class T, class R>
void stencil_same_run(T& t, R& rt, Jsonl* out, const Options& o) {
  const Budget b = o.budget();
  stencil_cases(t.np, t.me, o, [&](bool three_d, const Grid& g, const std::vector<Face>& fs, const char* params,
                                   const char* decomp) {
    StencilCase<T> mc(t, g, fs);
    StencilCase<R> rc(rt, g, fs);
    mc.check("mpi-subarray", params, decomp, false);
    mc.check("mpi-hand", params, decomp, true);
    rc.check("ddtkit", params, decomp, false);
    const std::vector<Method> ms = {{"mpi-subarray", [&] { mc.iteration(false); }},
                                    {"mpi-hand", [&] { mc.iteration(true); }},
                                    {"ddtkit", [&] { rc.iteration(false); }}};
    const std::vector<double> ns = interleaved(rt, ms, b);  // ddtkit's barrier: it yields (see above)
    for (size_t m = 0; m < ms.size(); ++m) stencil_report(t, out, three_d, g, fs, params, decomp, ms[m].name, ns[m]);
  });
}

}  // namespace rtbench
