// Yaksa through dlopen (gpu_yaksa.hpp). The signatures are yaksa.h's (v0.4), restated here for
// the calls made: the benchmark needs no Yaksa headers to build.
#include "gpu_yaksa.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <vector>

namespace yk {

namespace {

constexpr Type kByte = 38;         // YAKSA_TYPE__BYTE
constexpr Type kInt = 14;          // YAKSA_TYPE__INT (4 bytes)
constexpr Type kDouble = 46;       // YAKSA_TYPE__DOUBLE

// Yaksa's kernels move one element of the base type per thread: given bytes, a byte a thread.
// An MPI program's types are built of its data's elements, so the peer gets the widest element
// that divides every size and offset (its best case): doubles, else ints, else bytes.
int64_t elem_of(int64_t all) { return all % 8 == 0 ? 8 : all % 4 == 0 ? 4 : 1; }
Type base_of(int64_t e) { return e == 8 ? kDouble : e == 4 ? kInt : kByte; }
constexpr uint64_t kReplace = 10;  // YAKSA_OP__REPLACE
constexpr int kOrderC = 0;         // YAKSA_SUBARRAY_ORDER__C

struct Api {
  int (*init)(void*) = nullptr;
  int (*hvector)(intptr_t, intptr_t, intptr_t, Type, void*, Type*) = nullptr;
  int (*hindexed_block)(intptr_t, intptr_t, const intptr_t*, Type, void*, Type*) = nullptr;
  int (*subarray)(int, const intptr_t*, const intptr_t*, const intptr_t*, int, Type, void*, Type*) = nullptr;
  int (*free)(Type) = nullptr;
  int (*pack)(const void*, uintptr_t, Type, uintptr_t, void*, uintptr_t, uintptr_t*, void*, uint64_t, void*) = nullptr;
  int (*unpack)(const void*, uintptr_t, void*, uintptr_t, Type, uintptr_t, uintptr_t*, void*, uint64_t, void*) = nullptr;
  bool ok = false;
};
Api api;

template <class F>
bool sym(void* lib, const char* name, F* f) {
  *f = reinterpret_cast<F>(dlsym(lib, name));
  return *f != nullptr;
}

}  // namespace

bool load(std::string* why, std::string* where) {
  const char* e = std::getenv("DDTKIT_YAKSA");
  *where = e && *e ? e : "build-yaksa/lib/libyaksa.so";
  void* lib = dlopen(where->c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    *why = std::string("not built (make yaksa builds it): ") + dlerror();
    return false;
  }
  if (!sym(lib, "yaksa_init", &api.init) || !sym(lib, "yaksa_type_create_hvector", &api.hvector) ||
      !sym(lib, "yaksa_type_create_hindexed_block", &api.hindexed_block) ||
      !sym(lib, "yaksa_type_create_subarray", &api.subarray) || !sym(lib, "yaksa_type_free", &api.free) ||
      !sym(lib, "yaksa_pack_stream", &api.pack) || !sym(lib, "yaksa_unpack_stream", &api.unpack)) {
    *why = "a function of yaksa.h is missing from " + *where;
    return false;
  }
  if (api.init(nullptr) != 0) {
    *why = "yaksa_init failed";
    return false;
  }
  api.ok = true;
  return true;
}

bool loaded() { return api.ok; }

Type hvector(int64_t count, int64_t block, int64_t stride) {
  const int64_t e = elem_of(block | stride);
  Type t = 0;
  return api.ok && api.hvector(count, block / e, stride, base_of(e), nullptr, &t) == 0 ? t : 0;
}

Type hindexed_block(int64_t count, int64_t block, const int64_t* displs) {
  if (!api.ok) return 0;
  int64_t all = block;
  for (int64_t i = 0; i < count; ++i) all |= displs[i];
  const int64_t e = elem_of(all);
  std::vector<intptr_t> d(displs, displs + count);
  Type t = 0;
  return api.hindexed_block(count, block / e, d.data(), base_of(e), nullptr, &t) == 0 ? t : 0;
}

Type subarray2(int64_t rows, int64_t cols, int64_t subrows, int64_t subcols, int64_t row0, int64_t col0) {
  const int64_t e = elem_of(cols | subcols | col0);
  const intptr_t sizes[2] = {rows, cols / e}, subs[2] = {subrows, subcols / e}, starts[2] = {row0, col0 / e};
  Type t = 0;
  return api.ok && api.subarray(2, sizes, subs, starts, kOrderC, base_of(e), nullptr, &t) == 0 ? t : 0;
}

void free_type(Type t) {
  if (api.ok && t) api.free(t);
}

bool pack(const void* typed, Type t, void* packed, int64_t bytes, cudaStream_t s) {
  uintptr_t done = 0;
  return api.ok && t && api.pack(typed, 1, t, 0, packed, bytes, &done, nullptr, kReplace, &s) == 0 &&
         done == static_cast<uintptr_t>(bytes);
}

bool unpack(const void* packed, int64_t bytes, void* typed, Type t, cudaStream_t s) {
  uintptr_t done = 0;
  return api.ok && t && api.unpack(packed, bytes, typed, 1, t, 0, &done, nullptr, kReplace, &s) == 0 &&
         done == static_cast<uintptr_t>(bytes);
}

}  // namespace yk
