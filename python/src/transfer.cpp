// pack, unpack, iov and copy over raw addresses. Private to the package: its Python side (transfer.py)
// takes the addresses from numpy views or buffers it holds for the whole call, and checks that
// the type's bytes lie inside them, before it calls these. The GIL is released while bytes move,
// so other Python threads run during a large pack.
#include <sys/uio.h>

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include <nanobind/stl/pair.h>
#include <nanobind/stl/vector.h>

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
  // The pieces of stream bytes [offset, offset + size) as (base + displacement, length), the
  // last one cut at the end of the range, at most max_pieces of them. ddt_iov is given a null
  // buffer, so it lists displacements (it touches no memory) and the caller chooses the base:
  // 0, an offset into its buffer, or an address.
  m.def("_iov", [](int64_t base, int64_t count, Type& t, int64_t offset, int64_t size, int64_t max_pieces) {
    std::vector<std::pair<int64_t, int64_t>> pieces;
    int e = DDT_SUCCESS;
    {
      InUse held(t);
      nb::gil_scoped_release unlocked;
      constexpr int64_t kBatch = 1024;
      struct iovec iov[kBatch];
      const int64_t end = offset + size;
      for (int64_t at = offset; at < end && static_cast<int64_t>(pieces.size()) < max_pieces;) {
        int64_t n = 0, bytes = 0;
        e = ddt_iov(nullptr, count, held.handle(), at, iov, std::min(kBatch, max_pieces - static_cast<int64_t>(pieces.size())),
                    &n, &bytes);
        if (e != DDT_SUCCESS || n == 0 || bytes == 0) break;
        for (int64_t k = 0; k < n && at < end; ++k) {
          const int64_t len = std::min(static_cast<int64_t>(iov[k].iov_len), end - at);
          pieces.emplace_back(base + static_cast<int64_t>(reinterpret_cast<intptr_t>(iov[k].iov_base)), len);
          at += len;
        }
      }
    }
    check(e);
    return pieces;
  });
  m.def("_copy", [](uintptr_t src, int64_t scount, Type& st, uintptr_t dst, int64_t dcount, Type& dt) {
    int e;
    {
      InUse held_src(st), held_dst(dt);  // one Type on both sides is held twice: fine
      nb::gil_scoped_release unlocked;
      e = ddt_copy(reinterpret_cast<const void*>(src), scount, held_src.handle(), reinterpret_cast<void*>(dst), dcount,
                   held_dst.handle());
    }
    check(e);
  });
}

}  // namespace ddtpy
