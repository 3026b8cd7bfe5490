// pack and unpack over raw addresses. Private to the package: its Python side (transfer.py)
// takes the addresses from numpy views or buffers it holds for the whole call, and checks that
// the type's bytes lie inside them, before it calls these. The GIL is released while bytes move,
// so other Python threads run during a large pack.
#include <cstdint>

#include "core.hpp"

namespace ddtpy {

void bind_transfer(nb::module_& m) {
  m.def("_pack", [](uintptr_t in, int64_t count, Type& t, int64_t offset, uintptr_t out, int64_t outsize) {
    int64_t packed = 0;
    int e;
    {
      InUse held(t);
      nb::gil_scoped_release unlocked;
      e = ddt_pack(reinterpret_cast<const void*>(in), count, held.handle(), offset, reinterpret_cast<void*>(out), outsize,
                   &packed);
    }
    check(e);
    return packed;
  });
  m.def("_unpack", [](uintptr_t in, int64_t insize, uintptr_t out, int64_t count, Type& t, int64_t offset) {
    int64_t unpacked = 0;
    int e;
    {
      InUse held(t);
      nb::gil_scoped_release unlocked;
      e = ddt_unpack(reinterpret_cast<const void*>(in), insize, reinterpret_cast<void*>(out), count, held.handle(), offset,
                     &unpacked);
    }
    check(e);
    return unpacked;
  });
}

}  // namespace ddtpy
