// The predefined types: one static object per MPI C basic type, sizes and alignments taken from
// this compiler's C types (so they agree with the MPI built for the same ABI). Pair types have
// the typemap of the C struct MPI defines for them: a value at 0 and an int after it, padded.
#include <cstddef>
#include <cwchar>

#include "layout/builder.hpp"
#include "type/type.hpp"

extern "C" {
#define DDT_DEFINE_PREDEFINED_(N) struct ddt_type_s ddt_predef_##N;
DDT_PREDEFINED_LIST(DDT_DEFINE_PREDEFINED_)
#undef DDT_DEFINE_PREDEFINED_
}

namespace ddt {
namespace {

template <class V>
struct Pair {
  V v;
  int i;
};

void init_one(ddt_type t, int index, int64_t size, int64_t align) {
  t->predefined = true;
  t->predefined_index = index;
  t->committed = true;
  t->size = size;
  t->lb = 0;
  t->ub = size;
  t->align = align;
  t->has_entries = size > 0;
  Builder b;
  t->layout = b.finish(b.block(size));
  t->true_lb = 0;
  t->true_ub = size;
}

// A pair type {V at 0, int at offsetof(Pair<V>, i)}, extent sizeof(Pair<V>).
template <class V>
void init_pair(ddt_type t, int index) {
  constexpr int64_t off = offsetof(Pair<V>, i);
  init_one(t, index, sizeof(V) + sizeof(int), alignof(Pair<V>));
  t->ub = sizeof(Pair<V>);
  t->true_ub = off + sizeof(int);
  Builder b;
  t->layout = b.finish(b.seq({b.block(sizeof(V)), b.shift(b.block(sizeof(int)), off)}));
}

struct Init {
  Init() {
    int i = 0;
    auto basic = [&i](ddt_type t, int64_t size, int64_t align) { init_one(t, i++, size, align); };
    basic(DDT_CHAR, 1, 1);
    basic(DDT_SIGNED_CHAR, 1, 1);
    basic(DDT_UNSIGNED_CHAR, 1, 1);
    basic(DDT_BYTE, 1, 1);
    basic(DDT_SHORT, sizeof(short), alignof(short));
    basic(DDT_UNSIGNED_SHORT, sizeof(short), alignof(short));
    basic(DDT_INT, sizeof(int), alignof(int));
    basic(DDT_UNSIGNED, sizeof(int), alignof(int));
    basic(DDT_LONG, sizeof(long), alignof(long));
    basic(DDT_UNSIGNED_LONG, sizeof(long), alignof(long));
    basic(DDT_LONG_LONG, sizeof(long long), alignof(long long));
    basic(DDT_UNSIGNED_LONG_LONG, sizeof(long long), alignof(long long));
    basic(DDT_FLOAT, sizeof(float), alignof(float));
    basic(DDT_DOUBLE, sizeof(double), alignof(double));
    basic(DDT_LONG_DOUBLE, sizeof(long double), alignof(long double));
    basic(DDT_C_BOOL, sizeof(bool), alignof(bool));
    basic(DDT_INT8_T, 1, 1);
    basic(DDT_INT16_T, 2, alignof(int16_t));
    basic(DDT_INT32_T, 4, alignof(int32_t));
    basic(DDT_INT64_T, 8, alignof(int64_t));
    basic(DDT_UINT8_T, 1, 1);
    basic(DDT_UINT16_T, 2, alignof(uint16_t));
    basic(DDT_UINT32_T, 4, alignof(uint32_t));
    basic(DDT_UINT64_T, 8, alignof(uint64_t));
    basic(DDT_C_FLOAT_COMPLEX, 2 * sizeof(float), alignof(float));
    basic(DDT_C_DOUBLE_COMPLEX, 2 * sizeof(double), alignof(double));
    basic(DDT_C_LONG_DOUBLE_COMPLEX, 2 * sizeof(long double), alignof(long double));
    basic(DDT_WCHAR, sizeof(wchar_t), alignof(wchar_t));
    basic(DDT_AINT, sizeof(intptr_t), alignof(intptr_t));
    basic(DDT_OFFSET, 8, alignof(int64_t));
    basic(DDT_COUNT, 8, alignof(int64_t));
    basic(DDT_PACKED, 1, 1);
    init_pair<float>(DDT_FLOAT_INT, i++);
    init_pair<double>(DDT_DOUBLE_INT, i++);
    init_pair<long>(DDT_LONG_INT, i++);
    init_pair<int>(DDT_2INT, i++);
    init_pair<short>(DDT_SHORT_INT, i++);
    init_pair<long double>(DDT_LONG_DOUBLE_INT, i++);
  }
};
// Predefined types are ready before main() and before any constructor of a later-initialised
// translation unit that includes ddtkit.h (the library's objects are initialised on load).
Init init_predefined;

}  // namespace

ddt_type predefined_by_index(int i) {
  static const ddt_type all[] = {
#define DDT_ADDR_PREDEFINED_(N) &ddt_predef_##N,
      DDT_PREDEFINED_LIST(DDT_ADDR_PREDEFINED_)
#undef DDT_ADDR_PREDEFINED_
  };
  constexpr int n = sizeof all / sizeof all[0];
  return i >= 0 && i < n ? all[i] : nullptr;
}

}  // namespace ddt
