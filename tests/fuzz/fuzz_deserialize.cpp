// libFuzzer: ddt_type_deserialize on arbitrary bytes. Whatever it accepts must be a layout the
// rest of the library handles: describe, hash, re-serialize, and pack and iov over a buffer
// that covers the type's true extent.
#include <cstdint>
#include <cstring>
#include <vector>

#include "ddtkit.h"

// The buffer address whose type's true lb lands on data: an integer computation, since tlb may
// be anything (absolute displacements) and pointer arithmetic must not overflow.
static void* origin(void* data, int64_t tlb) {
  return reinterpret_cast<void*>(reinterpret_cast<uintptr_t>(data) - static_cast<uintptr_t>(tlb));
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ddt_type t;
  if (ddt_type_deserialize(data, static_cast<int64_t>(size), &t) != DDT_SUCCESS) return 0;
  char desc[2048];
  ddt_type_describe(t, desc, sizeof desc);
  uint8_t h[16];
  ddt_type_hash(t, h);
  int64_t need = 0;
  ddt_type_serialize(t, nullptr, 0, &need);
  std::vector<uint8_t> again(need);
  if (ddt_type_serialize(t, again.data(), need, &need) != DDT_SUCCESS) __builtin_trap();
  int64_t size_b, tlb, text;
  ddt_type_size(t, &size_b);
  ddt_type_true_extent(t, &tlb, &text);
  if (text >= 0 && text <= (1 << 20) && size_b <= (1 << 22)) {
    std::vector<char> buf(text + 1), out(size_b + 1);
    int64_t n;
    if (ddt_pack(origin(buf.data(), tlb), 1, t, 0, out.data(), size_b, &n) != DDT_SUCCESS || n != size_b) __builtin_trap();
    struct iovec iov[8];
    int64_t nio, bytes;
    ddt_iov(origin(buf.data(), tlb), 1, t, size_b / 2, iov, 8, &nio, &bytes);
  }
  ddt_type_free(&t);
  return 0;
}
