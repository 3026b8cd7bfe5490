// ddtkit._core: the public C API of ddtkit for the Python package (python/ddtkit/).
#include "core.hpp"

NB_MODULE(_core, m) {
  m.doc() = "ddtkit's C API: types, constructors, queries, notation, pack, unpack, iov and copy (use the ddtkit package)";
  ddtpy::bind_type(m);
  ddtpy::bind_constructors(m);
  ddtpy::bind_transfer(m);
}
