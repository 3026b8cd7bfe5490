// libFuzzer: bytes decoded into a sequence of constructor calls over a small stack of types
// (every constructor, any argument values including negative and huge ones). Each call must
// return an error or a usable type; the final type, when small enough, must pack the same bytes
// whole and in two partial pieces, and its serialized form must round-trip.
#include <cstdint>
#include <cstring>
#include <vector>

#include "ddtkit.h"

// The buffer address whose type's true lb lands on data: an integer computation, since tlb may
// be anything (absolute displacements) and pointer arithmetic must not overflow.
static void* origin(void* data, int64_t tlb) {
  return reinterpret_cast<void*>(reinterpret_cast<uintptr_t>(data) - static_cast<uintptr_t>(tlb));
}

namespace {

struct Input {
  const uint8_t* p;
  size_t n;
  uint8_t u8() { return n ? (--n, *p++) : 0; }
  int64_t small() { return static_cast<int8_t>(u8()); }                           // -128..127
  int64_t wide() { int64_t v = static_cast<int16_t>(u8() | (u8() << 8)); return u8() == 0xff ? v * (int64_t{1} << 48) : v; }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Input in{data, size};
  std::vector<ddt_type> stack{DDT_INT, DDT_CHAR, DDT_DOUBLE, DDT_LONG_DOUBLE_INT, DDT_C_FLOAT_COMPLEX};
  std::vector<ddt_type> owned;
  for (int steps = 0; in.n && steps < 12; ++steps) {
    int op = in.u8() % 12;
    ddt_type old = stack[in.u8() % stack.size()], t = DDT_TYPE_NULL;
    int64_t cnt = in.small() % 9, bl = in.small() % 5, st = in.wide();
    int64_t bls[8], ds[8];
    ddt_type ts[8];
    int64_t k = cnt < 0 ? 0 : cnt;
    for (int64_t i = 0; i < k; ++i) bls[i] = in.small() % 5, ds[i] = in.wide(), ts[i] = stack[in.u8() % stack.size()];
    int64_t sz[3], sub[3], sta[3];
    int dist[3], darg[3], ps[3];
    int nd = 1 + in.u8() % 3;
    for (int i = 0; i < nd; ++i) {
      sz[i] = in.small(), sub[i] = in.small(), sta[i] = in.small();
      dist[i] = in.u8() % 4, darg[i] = static_cast<int>(in.small()), ps[i] = 1 + in.u8() % 3;
      if (darg[i] == -1) darg[i] = DDT_DISTRIBUTE_DFLT_DARG;
    }
    int e;
    switch (op) {
      case 0: e = ddt_type_contiguous(cnt, old, &t); break;
      case 1: e = ddt_type_vector(cnt, bl, st, old, &t); break;
      case 2: e = ddt_type_hvector(cnt, bl, st, old, &t); break;
      case 3: e = ddt_type_indexed(cnt, bls, ds, old, &t); break;
      case 4: e = ddt_type_hindexed(cnt, bls, ds, old, &t); break;
      case 5: e = ddt_type_indexed_block(cnt, bl, ds, old, &t); break;
      case 6: e = ddt_type_hindexed_block(cnt, bl, ds, old, &t); break;
      case 7: e = ddt_type_struct(cnt, bls, ds, ts, &t); break;
      case 8: e = ddt_type_subarray(nd, sz, sub, sta, in.u8() % 3, old, &t); break;
      case 9: e = ddt_type_darray(ps[0] * (nd > 1 ? ps[1] : 1) * (nd > 2 ? ps[2] : 1), in.u8() % 4, nd, sz, dist, darg, ps,
                                  in.u8() % 2, old, &t);
        break;
      case 10: e = ddt_type_resized(old, in.wide(), in.wide(), &t); break;
      default: e = ddt_type_dup(old, &t); break;
    }
    if (e == DDT_SUCCESS) {
      if (!t) __builtin_trap();
      stack.push_back(t);
      owned.push_back(t);
    } else if (t != DDT_TYPE_NULL) {
      __builtin_trap();  // a failed call must not write *newtype
    }
  }
  ddt_type top = stack.back();
  ddt_type_commit(top);
  int64_t s, tlb, text, lb, ext;
  ddt_type_size(top, &s);
  ddt_type_true_extent(top, &tlb, &text);
  ddt_type_extent(top, &lb, &ext);
  if (s > 0 && s <= (1 << 20) && text <= (1 << 20)) {
    std::vector<char> buf(text);
    for (size_t i = 0; i < buf.size(); ++i) buf[i] = static_cast<char>(i * 131);
    std::vector<char> whole(s), parts(s);
    int64_t n, cut = s / 3;
    if (ddt_pack(origin(buf.data(), tlb), 1, top, 0, whole.data(), s, &n) != DDT_SUCCESS || n != s) __builtin_trap();
    ddt_pack(origin(buf.data(), tlb), 1, top, cut, parts.data() + cut, s - cut, &n);
    ddt_pack(origin(buf.data(), tlb), 1, top, 0, parts.data(), cut, &n);
    if (whole != parts) __builtin_trap();
    int64_t need;
    ddt_type_serialize(top, nullptr, 0, &need);
    std::vector<uint8_t> ser(need);
    ddt_type back;
    if (ddt_type_serialize(top, ser.data(), need, &need) != DDT_SUCCESS ||
        ddt_type_deserialize(ser.data(), need, &back) != DDT_SUCCESS)
      __builtin_trap();
    ddt_type_free(&back);
  }
  for (ddt_type t : owned) ddt_type_free(&t);
  return 0;
}
