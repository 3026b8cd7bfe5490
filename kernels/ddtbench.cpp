#include "ddtbench.hpp"

#include <cstring>
#include <numeric>

uint64_t splitmix_mix(uint64_t z) {
  z += 0x9E3779B97F4A7C15ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

uint64_t fnv1a64(const void* p, int64_t n) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (int64_t i = 0; i < n; ++i) h = (h ^ static_cast<const uint8_t*>(p)[i]) * 0x100000001b3ULL;
  return h;
}

std::vector<int64_t> index_list(uint64_t& state, int64_t G, int64_t icount) {
  std::vector<int64_t> a(G);
  std::iota(a.begin(), a.end(), 1);
  for (int64_t i = 0; i < G; ++i) {
    state += 0x9E3779B97F4A7C15ULL;  // next(): mix' of the advanced state, no second constant
    uint64_t z = state;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    std::swap(a[i], a[z % static_cast<uint64_t>(G)]);
  }
  a.resize(icount);
  for (auto& v : a) v -= 1;
  return a;
}

namespace {

// Allocates array `id` of n bytes filled per §4; lazy=true fills only [lo, hi) ranges later.
char* add_array(Kernel& k, int64_t id, int64_t n) {
  k.arrays.emplace_back(new char[n]);
  k.array_bytes.push_back(n);
  char* a = k.arrays.back().get();
  for (int64_t b = 0; b < n; ++b) a[b] = static_cast<char>(splitmix_mix((static_cast<uint64_t>(id) << 40) + b));
  return a;
}

int64_t addr(const void* p) { return static_cast<int64_t>(reinterpret_cast<uintptr_t>(p)); }

std::unique_ptr<Kernel> new_kernel(std::string name, std::string params, uint64_t golden) {
  auto k = std::make_unique<Kernel>();
  k->name = std::move(name);
  k->params = std::move(params);
  k->golden = golden;
  return k;
}

// Builds the kernel's type once (committed, with its packed size) and keeps the builder for the
// commit-cost benchmark, which repeats create + commit + free.
void install(Kernel& k, const std::function<void(ddt_type*)>& build) {
  ddt_type t;
  build(&t);
  ddt_type_commit(t);
  k.type = t;
  ddt_type_size(t, &k.bytes);
  k.bytes *= k.count;
  k.create_commit_free = [build] {
    ddt_type x;
    build(&x);
    ddt_type_commit(x);
    ddt_type_free(&x);
  };
}

// ---- WRF (§3.1) ----------------------------------------------------------------------------
struct WrfSet {
  const char* label;
  int64_t ims, ime, jms, jme, is, ie, js, je;
};

void wrf(std::vector<std::unique_ptr<Kernel>>& out, const char* dir, const WrfSet& w, bool sa, uint64_t golden) {
  auto k = new_kernel(std::string("WRF_") + dir + (sa ? "_sa" : "_vec"), w.label, golden);
  const int64_t dim1 = w.ime - w.ims + 1, dim2 = 65, dim3 = w.jme - w.jms + 1;
  const int64_t s1 = w.ie - w.is + 1, s2 = 65, s3 = w.je - w.js + 1;
  const int64_t i0 = w.is - w.ims, k0 = 0, j0 = w.js - w.jms, p0 = 1, limit = 2;
  std::vector<float*> f2, f3, f4;
  int64_t id = 0;
  for (int m = 0; m < 4; ++m) f2.push_back(reinterpret_cast<float*>(add_array(*k, id++, 4 * dim1 * dim3)));
  for (int m = 0; m < 3; ++m) f3.push_back(reinterpret_cast<float*>(add_array(*k, id++, 4 * dim1 * dim2 * dim3)));
  for (int m = 0; m < 2; ++m) f4.push_back(reinterpret_cast<float*>(add_array(*k, id++, 4 * dim1 * dim2 * dim3 * limit)));
  auto build_variant = [=](bool sa, ddt_type* out_type) {
    ddt_type mem[9];
    int64_t displs[9], bls[9];
    if (!sa) {
      ddt_type t2, row3, t3;
      ddt_type_vector(s3, s1, dim1, DDT_FLOAT, &t2);
      ddt_type_vector(s2, s1, dim1, DDT_FLOAT, &row3);
      ddt_type_hvector(s3, 1, dim1 * dim2 * 4, row3, &t3);
      ddt_type t4;
      ddt_type_hvector(limit - p0, 1, dim1 * dim2 * dim3 * 4, t3, &t4);
      for (int m = 0; m < 4; ++m) mem[m] = t2, displs[m] = addr(f2[m] + i0 + dim1 * j0);
      for (int m = 0; m < 3; ++m) mem[4 + m] = t3, displs[4 + m] = addr(f3[m] + i0 + dim1 * (k0 + dim2 * j0));
      for (int m = 0; m < 2; ++m)
        mem[7 + m] = t4, displs[7 + m] = addr(f4[m] + i0 + dim1 * (k0 + dim2 * (j0 + dim3 * p0)));
      for (auto& b : bls) b = 1;
      ddt_type_struct(9, bls, displs, mem, out_type);
      for (ddt_type t : {t2, row3, t3, t4}) ddt_type_free(&t);
    } else {
      const int64_t sz2[] = {dim3, dim1}, sub2[] = {s3, s1}, st2[] = {j0, i0};
      const int64_t sz3[] = {dim3, dim2, dim1}, sub3[] = {s3, s2, s1}, st3[] = {j0, k0, i0};
      const int64_t sz4[] = {limit, dim3, dim2, dim1}, sub4[] = {limit - p0, s3, s2, s1}, st4[] = {p0, j0, k0, i0};
      ddt_type a2, a3, a4;
      ddt_type_subarray(2, sz2, sub2, st2, DDT_ORDER_C, DDT_FLOAT, &a2);
      ddt_type_subarray(3, sz3, sub3, st3, DDT_ORDER_C, DDT_FLOAT, &a3);
      ddt_type_subarray(4, sz4, sub4, st4, DDT_ORDER_C, DDT_FLOAT, &a4);
      for (int m = 0; m < 4; ++m) mem[m] = a2, displs[m] = addr(f2[m]);
      for (int m = 0; m < 3; ++m) mem[4 + m] = a3, displs[4 + m] = addr(f3[m]);
      for (int m = 0; m < 2; ++m) mem[7 + m] = a4, displs[7 + m] = addr(f4[m]);
      for (auto& b : bls) b = 1;
      ddt_type_struct(9, bls, displs, mem, out_type);
      for (ddt_type t : {a2, a3, a4}) ddt_type_free(&t);
    }
  };
  auto build = [=](ddt_type* out_type) { build_variant(sa, out_type); };
  k->build_alternative = [=](ddt_type* out_type) { build_variant(!sa, out_type); };
  install(*k, build);
  // The application's loop: rows of s1 floats in pack order.
  auto rows = [=](auto&& row) {
    for (int m = 0; m < 4; ++m)
      for (int64_t j = j0; j < j0 + s3; ++j) row(f2[m] + i0 + dim1 * j);
    for (int m = 0; m < 3; ++m)
      for (int64_t j = j0; j < j0 + s3; ++j)
        for (int64_t kk = k0; kk < k0 + s2; ++kk) row(f3[m] + i0 + dim1 * (kk + dim2 * j));
    for (int m = 0; m < 2; ++m)
      for (int64_t s = p0; s < limit; ++s)
        for (int64_t j = j0; j < j0 + s3; ++j)
          for (int64_t kk = k0; kk < k0 + s2; ++kk) row(f4[m] + i0 + dim1 * (kk + dim2 * (j + dim3 * s)));
  };
  k->manual_pack = [=](char* o) {
    float* out = reinterpret_cast<float*>(o);
    rows([&](const float* src) {
      for (int64_t i = 0; i < s1; ++i) *out++ = src[i];
    });
  };
  k->manual_unpack = [=](const char* in) {
    const float* p = reinterpret_cast<const float*>(in);
    rows([&](const float* dst) {
      float* d = const_cast<float*>(dst);
      for (int64_t i = 0; i < s1; ++i) d[i] = *p++;
    });
  };
  out.push_back(std::move(k));
}

// ---- MILC (§3.2) ---------------------------------------------------------------------------
void milc(std::vector<std::unique_ptr<Kernel>>& out, int64_t d2, int64_t d3, int64_t d4, int64_t d5, uint64_t golden) {
  auto k = new_kernel("MILC_su3_zd", std::to_string(d2) + "," + std::to_string(d3) + "," + std::to_string(d4) + "," + std::to_string(d5), golden);
  float* a = reinterpret_cast<float*>(add_array(*k, 0, 24 * d2 * d3 * d4 * d5));
  k->buf = a;
  auto build = [=](ddt_type* z) {
    ddt_type v, w;
    ddt_type_contiguous(6, DDT_FLOAT, &v);
    ddt_type_vector(d5, d2 * d3 / 2, d2 * d3 * d4 / 2, v, &w);
    ddt_type_hvector(2, 1, 24 * d2 * d3 * d4 * d5 / 2, w, z);
    ddt_type_free(&v);
    ddt_type_free(&w);
  };
  install(*k, build);
  auto loop = [=](auto&& f) {
    for (int64_t tt = 0; tt < d5; ++tt)
      for (int64_t z : {int64_t{0}, d4 / 2})
        for (int64_t y = 0; y < d3 / 2; ++y)
          for (int64_t x = 0; x < d2; ++x)
            for (int64_t o = 0; o < 6; ++o) f(a[o + 6 * (x + d2 * (y + d3 * (z + d4 * tt)))]);
  };
  k->manual_pack = [=](char* o) { float* p = reinterpret_cast<float*>(o); loop([&](float& v) { *p++ = v; }); };
  k->manual_unpack = [=](const char* i) { const float* p = reinterpret_cast<const float*>(i); loop([&](float& v) { v = *p++; }); };
  out.push_back(std::move(k));
}

// ---- NAS_LU (§3.3) -------------------------------------------------------------------------
void nas_lu(std::vector<std::unique_ptr<Kernel>>& out, int64_t n, bool y, uint64_t golden) {
  auto k = new_kernel(y ? "NAS_LU_y" : "NAS_LU_x", "N=" + std::to_string(n), golden);
  double* u = reinterpret_cast<double*>(add_array(*k, 0, 40 * (n + 2) * (n + 2)));
  k->buf = y ? u + 5 * (n + (n + 2)) : u + 5 * (1 + (n + 2) * n);
  auto build = [=](ddt_type* t) {
    if (!y) {
      ddt_type_contiguous(5 * n, DDT_DOUBLE, t);
      return;
    }
    ddt_type c;
    ddt_type_contiguous(5, DDT_DOUBLE, &c);
    ddt_type_vector(n, 1, n + 2, c, t);
    ddt_type_free(&c);
  };
  install(*k, build);
  // Fortran semantics for y (the C manual loop is one block short, §3.3).
  auto loop = [=](auto&& f) {
    if (!y)
      for (int64_t j = 1; j <= n; ++j) f(u + 5 * (j + (n + 2) * n));
    else
      for (int64_t kk = 1; kk <= n; ++kk) f(u + 5 * (n + (n + 2) * kk));
  };
  k->manual_pack = [=](char* o) { double* p = reinterpret_cast<double*>(o); loop([&](double* s) { for (int l = 0; l < 5; ++l) *p++ = s[l]; }); };
  k->manual_unpack = [=](const char* i) { const double* p = reinterpret_cast<const double*>(i); loop([&](double* s) { for (int l = 0; l < 5; ++l) s[l] = *p++; }); };
  out.push_back(std::move(k));
}

// ---- NAS_MG (§3.4) -------------------------------------------------------------------------
void nas_mg(std::vector<std::unique_ptr<Kernel>>& out, const char* cls, int64_t d1, int64_t d2, int64_t d3, char face,
            uint64_t golden) {
  auto k = new_kernel(std::string("NAS_MG_") + face, cls, golden);
  double* u = reinterpret_cast<double*>(add_array(*k, 0, 8 * d1 * d2 * d3));
  auto at = [=](int64_t i, int64_t j, int64_t kk) { return u + i + d1 * (j + d2 * kk); };
  k->buf = face == 'x' ? at(d1 - 2, 1, 1) : face == 'y' ? at(1, d2 - 2, 1) : at(1, 1, 1);
  auto build = [=](ddt_type* t) {
    if (face == 'x') {
      ddt_type v;
      ddt_type_vector(d2 - 2, 1, d1, DDT_DOUBLE, &v);
      ddt_type_hvector(d3 - 2, 1, 8 * d1 * d2, v, t);
      ddt_type_free(&v);
    } else if (face == 'y') {
      ddt_type_vector(d3 - 2, d1 - 2, d1 * d2, DDT_DOUBLE, t);
    } else {
      ddt_type_vector(d2 - 2, d1 - 2, d1, DDT_DOUBLE, t);
    }
  };
  install(*k, build);
  const double* base = static_cast<const double*>(k->buf);
  auto loop = [=](auto&& f) {
    double* b = const_cast<double*>(base);
    if (face == 'x') {
      for (int64_t kk = 0; kk < d3 - 2; ++kk)
        for (int64_t j = 0; j < d2 - 2; ++j) f(b[d1 * (j + d2 * kk)]);
    } else if (face == 'y') {
      for (int64_t kk = 0; kk < d3 - 2; ++kk)
        for (int64_t i = 0; i < d1 - 2; ++i) f(b[i + d1 * d2 * kk]);
    } else {
      for (int64_t j = 0; j < d2 - 2; ++j)
        for (int64_t i = 0; i < d1 - 2; ++i) f(b[i + d1 * j]);
    }
  };
  k->manual_pack = [=](char* o) { double* p = reinterpret_cast<double*>(o); loop([&](double& v) { *p++ = v; }); };
  k->manual_unpack = [=](const char* i) { const double* p = reinterpret_cast<const double*>(i); loop([&](double& v) { v = *p++; }); };
  out.push_back(std::move(k));
}

// ---- FFT2D (§3.5), send side, P = 2 --------------------------------------------------------
void fft(std::vector<std::unique_ptr<Kernel>>& out, int64_t N, uint64_t golden) {
  const int64_t P = 2, n = N / P;
  auto k = new_kernel("FFT2D", "N=" + std::to_string(N), golden);
  char* m = add_array(*k, 0, 16 * N * n);
  k->buf = m;
  k->count = P;
  auto build = [=](ddt_type* g) {
    ddt_type c, v;
    ddt_type_contiguous(2, DDT_DOUBLE, &c);
    ddt_type_vector(n, n, N, c, &v);
    ddt_type_resized(v, 0, 16 * n, g);
    ddt_type_free(&c);
    ddt_type_free(&v);
  };
  install(*k, build);
  // The receive type S (§3.5), P instances: the block from rank q lands transposed at column q n.
  {
    ddt_type c, v, r;
    ddt_type_contiguous(2, DDT_DOUBLE, &c);
    ddt_type_vector(n, 1, N, c, &v);
    ddt_type_resized(v, 0, 16, &r);
    ddt_type_contiguous(n, r, &k->recv_type);
    ddt_type_commit(k->recv_type);
    for (ddt_type* x : {&c, &v, &r}) ddt_type_free(x);
  }
  k->manual_pack = [=](char* o) {
    for (int64_t q = 0; q < P; ++q)
      for (int64_t l = 0; l < n; ++l) std::memcpy(o + 16 * (q * n * n + l * n), m + 16 * (q * n + l * N), 16 * n);
  };
  // DDTBench's own unpack loop (timing_fft2d.c): row by row of the matrix, each complex value
  // from the received blocks at a stride of n; the same bytes as unpacking P instances of S.
  k->manual_unpack = [=](const char* i) {
    for (int64_t r = 0; r < n; ++r)
      for (int64_t l = 0; l < N; ++l) std::memcpy(m + 16 * (l + r * N), i + 16 * (r + l * n), 16);
  };
  out.push_back(std::move(k));
}

// ---- LAMMPS (§3.6) -------------------------------------------------------------------------
void lammps(std::vector<std::unique_ptr<Kernel>>& out, bool full, int64_t G, int64_t ic, uint64_t golden,
            uint64_t golden_manual) {
  auto k = new_kernel(full ? "LAMMPS_full" : "LAMMPS_atomic", std::to_string(G) + "," + std::to_string(ic), golden);
  k->golden_manual = golden_manual;
  k->manual_matches_type = false;
  uint64_t state = 1;
  auto list = std::make_shared<std::vector<int64_t>>(index_list(state, G, ic));
  const int members = full ? 6 : 4;
  std::vector<double*> arr;
  arr.push_back(reinterpret_cast<double*>(add_array(*k, 0, 8 * 3 * (G + ic))));
  for (int m = 1; m < members; ++m) arr.push_back(reinterpret_cast<double*>(add_array(*k, m, 8 * (G + ic))));
  k->index_entries = members * ic;
  auto build = [=](ddt_type* t) {
    std::vector<int64_t> d3(ic), d1(*list);
    for (int64_t i = 0; i < ic; ++i) d3[i] = 3 * (*list)[i];
    ddt_type x, s;
    ddt_type_indexed_block(ic, 3, d3.data(), DDT_DOUBLE, &x);
    ddt_type_indexed_block(ic, 1, d1.data(), DDT_DOUBLE, &s);
    std::vector<ddt_type> types{x};
    std::vector<int64_t> bls(members, 1), displs{addr(arr[0])};
    for (int m = 1; m < members; ++m) types.push_back(s), displs.push_back(addr(arr[m]));
    ddt_type_struct(members, bls.data(), displs.data(), types.data(), t);
    ddt_type_free(&x);
    ddt_type_free(&s);
  };
  install(*k, build);
  {  // the receive type: the members' values in the same (SoA) order, into the tail [G, G+ic)
    ddt_type x3, x1;
    ddt_type_contiguous(3 * ic, DDT_DOUBLE, &x3);
    ddt_type_contiguous(ic, DDT_DOUBLE, &x1);
    std::vector<ddt_type> types{x3};
    std::vector<int64_t> bls(members, 1), displs{addr(arr[0] + 3 * G)};
    for (int m = 1; m < members; ++m) types.push_back(x1), displs.push_back(addr(arr[m] + G));
    ddt_type_struct(members, bls.data(), displs.data(), types.data(), &k->recv_type);
    ddt_type_commit(k->recv_type);
    ddt_type_free(&x3);
    ddt_type_free(&x1);
  }
  // LAMMPS's own loop: per atom x, y, z, tag, type, mask (full: molecule, then q).
  std::vector<int> order{1, 2, 3};
  if (full) order.push_back(5), order.push_back(4);
  k->manual_pack = [=](char* o) {
    double* p = reinterpret_cast<double*>(o);
    for (int64_t j : *list) {
      for (int c = 0; c < 3; ++c) *p++ = arr[0][3 * j + c];
      for (int m : order) *p++ = arr[m][j];
    }
  };
  k->manual_unpack = [=](const char* in) {  // into the tail [G, G+ic), as LAMMPS receives
    const double* p = reinterpret_cast<const double*>(in);
    for (int64_t i = 0; i < ic; ++i) {
      for (int c = 0; c < 3; ++c) arr[0][3 * (G + i) + c] = *p++;
      for (int m : order) arr[m][G + i] = *p++;
    }
  };
  out.push_back(std::move(k));
}

// ---- SPECFEM3D (§3.7 - §3.9) ---------------------------------------------------------------
void specfem_oc(std::vector<std::unique_ptr<Kernel>>& out, const char* c, int64_t G, int64_t ic, uint64_t golden) {
  auto k = new_kernel("SPECFEM3D_oc", c, golden);
  uint64_t state = 1;
  auto list = std::make_shared<std::vector<int64_t>>(index_list(state, G, ic));
  float* a = reinterpret_cast<float*>(add_array(*k, 0, 4 * G));
  k->buf = a;
  k->index_entries = ic;
  auto build = [=](ddt_type* t) { ddt_type_indexed_block(ic, 1, list->data(), DDT_FLOAT, t); };
  install(*k, build);
  k->manual_pack = [=](char* o) { float* p = reinterpret_cast<float*>(o); for (int64_t j : *list) *p++ = a[j]; };
  k->manual_unpack = [=](const char* i) { const float* p = reinterpret_cast<const float*>(i); for (int64_t j : *list) a[j] = *p++; };
  out.push_back(std::move(k));
}

void specfem_cm(std::vector<std::unique_ptr<Kernel>>& out, const char* c, int64_t Gc, int64_t icc, int64_t Gi,
                int64_t ici, uint64_t golden) {
  auto k = new_kernel("SPECFEM3D_cm", c, golden);
  uint64_t state = 1;
  auto lc = std::make_shared<std::vector<int64_t>>(index_list(state, Gc, icc));
  auto li = std::make_shared<std::vector<int64_t>>(index_list(state, Gi, ici));
  float* cm = reinterpret_cast<float*>(add_array(*k, 0, 12 * Gc));
  float* icp = reinterpret_cast<float*>(add_array(*k, 1, 12 * Gi));
  k->index_entries = icc + ici;
  auto build = [=](ddt_type* t) {
    std::vector<int64_t> dc(icc), di(ici);
    for (int64_t i = 0; i < icc; ++i) dc[i] = 3 * (*lc)[i];
    for (int64_t i = 0; i < ici; ++i) di[i] = 3 * (*li)[i];
    ddt_type a, b;
    ddt_type_indexed_block(icc, 3, dc.data(), DDT_FLOAT, &a);
    ddt_type_indexed_block(ici, 3, di.data(), DDT_FLOAT, &b);
    int64_t bls[] = {1, 1}, displs[] = {addr(cm), addr(icp)};
    ddt_type types[] = {a, b};
    ddt_type_struct(2, bls, displs, types, t);
    ddt_type_free(&a);
    ddt_type_free(&b);
  };
  install(*k, build);
  k->manual_pack = [=](char* o) {
    float* p = reinterpret_cast<float*>(o);
    for (int64_t j : *lc) for (int c2 = 0; c2 < 3; ++c2) *p++ = cm[3 * j + c2];
    for (int64_t j : *li) for (int c2 = 0; c2 < 3; ++c2) *p++ = icp[3 * j + c2];
  };
  k->manual_unpack = [=](const char* in) {
    const float* p = reinterpret_cast<const float*>(in);
    for (int64_t j : *lc) for (int c2 = 0; c2 < 3; ++c2) cm[3 * j + c2] = *p++;
    for (int64_t j : *li) for (int c2 = 0; c2 < 3; ++c2) icp[3 * j + c2] = *p++;
  };
  out.push_back(std::move(k));
}

void specfem_mt(std::vector<std::unique_ptr<Kernel>>& out, const char* c, int64_t d3) {
  const int64_t d1 = 3, d2 = 2;
  auto k = new_kernel("SPECFEM3D_mt", c, 0);  // its hash is withheld in the spec
  float* a = reinterpret_cast<float*>(add_array(*k, 0, 4 * d1 * d2 * d3));
  k->buf = a;
  auto build = [=](ddt_type* t) {
    ddt_type row;
    ddt_type_contiguous(d1, DDT_FLOAT, &row);
    ddt_type_vector(d3, 1, d2, row, t);
    ddt_type_free(&row);
  };
  install(*k, build);
  k->manual_pack = [=](char* o) { for (int64_t kk = 0; kk < d3; ++kk) std::memcpy(o + 12 * kk, a + kk * d1 * d2, 12); };
  k->manual_unpack = [=](const char* i) { for (int64_t kk = 0; kk < d3; ++kk) std::memcpy(a + kk * d1 * d2, i + 12 * kk, 12); };
  out.push_back(std::move(k));
}

}  // namespace

std::vector<std::unique_ptr<Kernel>> ddtbench_kernels(bool big) {
  std::vector<std::unique_ptr<Kernel>> ks;
  const WrfSet y[] = {{"2x2", -4, 27, 34, 85, 1, 23, 41, 43}, {"3x3", 8, 34, 21, 61, 12, 30, 28, 30},
                      {"4x4", 4, 27, 14, 47, 8, 23, 21, 23}, {"5x5", 10, 31, 10, 39, 14, 27, 17, 19},
                      {"8x8", 4, 22, 4, 27, 8, 18, 11, 13}};
  const uint64_t gy[] = {0x513ae3c231d511c5, 0x1481a01f9aa2c3b3, 0x676d4d1c7885d409, 0x2fae381b4ec1969a, 0xef5caf5fc8989946};
  for (int i = 0; i < 5; ++i) wrf(ks, "y", y[i], false, gy[i]), wrf(ks, "y", y[i], true, gy[i]);
  const WrfSet x[] = {{"2x2", -4, 27, 34, 85, 18, 20, 38, 81}, {"4x4", 4, 27, 14, 47, 18, 20, 18, 43},
                      {"8x8", 4, 22, 4, 27, 13, 15, 8, 23}};
  const uint64_t gx[] = {0x1407a9af647f5b93, 0xd086a10f0ede8749, 0x69c814617cf71f6f};
  for (int i = 0; i < 3; ++i) wrf(ks, "x", x[i], false, gx[i]), wrf(ks, "x", x[i], true, gx[i]);
  milc(ks, 16, 16, 16, 16, 0x16a2417286b51870);
  milc(ks, 8, 16, 16, 16, 0xd5a620bdfec70b6b);
  milc(ks, 8, 8, 8, 16, 0xeb84f6bf34204b15);
  milc(ks, 8, 8, 8, 8, 0x31f93fd589531ee9);
  const int64_t lu[] = {12, 33, 64, 102, 162, 408, 1020};
  const uint64_t glx[] = {0x498ee0c858a3250b, 0xae77e4d6c0220f84, 0x72f53d0d1acbfc0d, 0x36016666e7051d8f,
                          0x73b32694701d5e4a, 0xa7c9d4e1e79d044c, 0xcee10871e6b36e67};
  const uint64_t gly[] = {0x989c10c045e3fae3, 0xcbecec6c50602c69, 0x11463a392073c001, 0x85449ac61df22b13,
                          0x2bc8e84726045bf0, 0xafeacb698a27923c, 0x25e4501f130bf713};
  for (int i = 0; i < 7; ++i) nas_lu(ks, lu[i], false, glx[i]), nas_lu(ks, lu[i], true, gly[i]);
  struct { const char* c; int64_t d1, d2, d3; uint64_t gx, gy, gz; } mg[] = {
      {"S", 34, 18, 18, 0xdee48a60cbc84958, 0xae5d6e74c68a600e, 0x2d9194fce8a3a97a},
      {"W", 130, 66, 66, 0xf6bd35246438f1d4, 0xfa9ed4c7c595950b, 0xd24897a947e23fcd},
      {"A", 258, 130, 130, 0x971c64757a89fc7a, 0xf3a6a1e21c2c3086, 0x3e688852defa3078},
      {"C", 514, 258, 258, 0x6874196622300aa1, 0x06e2742e053b1881, 0xe70be7e299bffb10}};
  for (auto& m : mg) {
    if (!big && m.c[0] == 'C') continue;
    nas_mg(ks, m.c, m.d1, m.d2, m.d3, 'x', m.gx);
    nas_mg(ks, m.c, m.d1, m.d2, m.d3, 'y', m.gy);
    nas_mg(ks, m.c, m.d1, m.d2, m.d3, 'z', m.gz);
  }
  lammps(ks, true, 3534, 3062, 0xc901175fab61365c, 0x444d6cc5ea2934c8);
  lammps(ks, true, 2597, 2243, 0x25f626c697fa2e08, 0x5beab626ad02c378);
  lammps(ks, true, 1907, 1662, 0x17a39ee98b924cbb, 0x15bcae37e1c3ef9b);
  lammps(ks, false, 4084, 243, 0, 0);
  lammps(ks, false, 2157, 145, 0, 0);
  lammps(ks, false, 1217, 114, 0, 0);
  specfem_oc(ks, "c=4", 88881, 3225, 0x8d5a63f4f85b868d);
  specfem_oc(ks, "c=3", 38585, 1897, 0x0a05428a8de198c0);
  specfem_oc(ks, "c=2", 12857, 877, 0x56a6d80570513b66);
  specfem_oc(ks, "c=1", 3697, 493, 0xe57203813072bb70);
  specfem_cm(ks, "c=4", 834917, 11797, 51153, 3009, 0xe7bf36df87410e97);
  specfem_cm(ks, "c=3", 396849, 7125, 22477, 1729, 0x79047b7d14ed1b4c);
  specfem_cm(ks, "c=2", 152001, 3801, 7209, 801, 0xa2221f9d1fdc6913);
  specfem_cm(ks, "c=1", 39929, 1957, 1225, 245, 0xc77653d475b4c3e3);
  specfem_mt(ks, "c=1", 7600);
  specfem_mt(ks, "c=2", 6400);
  specfem_mt(ks, "c=3", 5600);
  specfem_mt(ks, "c=4", 6200);
  const int64_t fn[] = {256, 512, 768, 1024, 1536};
  const uint64_t gf[] = {0x1258f69863259f68, 0xa2878766641a1599, 0x3f399707b88ee30c, 0xe7e152fc7b3a261b, 0xf59f09d81beea8c5};
  for (int i = 0; i < 5; ++i) fft(ks, fn[i], gf[i]);
  return ks;
}
