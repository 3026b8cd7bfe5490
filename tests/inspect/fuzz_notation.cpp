// libFuzzer: ddt_type_parse on arbitrary text. Whatever it accepts must be a usable type whose
// notation parses back to the same layout (hash), size and bounds, and which commits and plans.
// Built with DDT_FUZZ=ON (tests/inspect/CMakeLists.txt); run as
//   build-fuzz/tests/inspect/fuzz_notation -max_total_time=60 -dict=tests/inspect/notation.dict
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "ddtkit.h"

namespace {

struct Shape {
  int64_t size, lb, extent;
  uint8_t hash[16];
};

Shape shape(ddt_type t) {
  Shape s{};
  ddt_type_size(t, &s.size);
  ddt_type_extent(t, &s.lb, &s.extent);
  ddt_type_hash(t, s.hash);
  return s;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);  // NUL-terminated copy
  ddt_type t = DDT_INT;
  char err[256];
  if (ddt_type_parse(text.c_str(), &t, err, sizeof err) != DDT_SUCCESS) {
    if (t != DDT_TYPE_NULL || std::strncmp(err, "character ", 10) != 0) __builtin_trap();
    return 0;
  }
  int64_t need = 0;
  if (ddt_type_notation(t, nullptr, 0, &need) == DDT_ERR_TRUNCATE) {
    std::vector<char> w(need);
    if (ddt_type_notation(t, w.data(), need, &need) != DDT_SUCCESS) __builtin_trap();
    ddt_type again;
    if (ddt_type_parse(w.data(), &again, err, sizeof err) != DDT_SUCCESS) __builtin_trap();
    const Shape a = shape(t), b = shape(again);
    if (a.size != b.size || a.lb != b.lb || a.extent != b.extent || std::memcmp(a.hash, b.hash, 16) != 0)
      __builtin_trap();
    ddt_type_free(&again);
  }
  ddt_type_commit(t);
  int64_t blocks;
  int ascending;
  ddt_type_blocks(t, &blocks, &ascending);
  ddt_type_free(&t);
  return 0;
}
