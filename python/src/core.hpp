// Shared by the files of the extension ddtkit._core: the Type wrapper and the error bridge.
// The extension is a thin layer over the public C API (include/ddtkit.h) and nothing else;
// what is Python-specific (numpy views, mpi4py, argument checks on buffers) lives in the
// package's Python files.
#pragma once
#include <nanobind/nanobind.h>

#include "ddtkit.h"

namespace nb = nanobind;

namespace ddtpy {

// Raises ddtkit.Error (or its ValueError subclass for argument errors, chosen by
// ddtkit._errors.from_code) carrying the code and ddt_error_string's message.
[[noreturn]] void raise_error(int code);
inline void check(int code) {
  if (code != DDT_SUCCESS) raise_error(code);
}

// One handle. A derived type's handle is owned: freed when the Python object is collected or
// at free(), after which h is DDT_TYPE_NULL and every call on it answers DDT_ERR_TYPE from the C
// API (no dangling pointer ever reaches it). Predefined handles are static and never freed.
// busy counts pack/unpack calls running on the handle with the GIL released: a free() from
// another thread meanwhile only hides the handle, and the last of those calls frees it. Both
// fields are touched only with the GIL held.
struct Type {
  ddt_type h = DDT_TYPE_NULL;
  bool predefined = false;
  int busy = 0;
  ddt_type freed_while_busy = DDT_TYPE_NULL;

  explicit Type(ddt_type t);
  ~Type();
  Type(const Type&) = delete;
  Type& operator=(const Type&) = delete;
  void free();
};

// Holds a Type's handle for a call that releases the GIL (see Type::busy).
class InUse {
 public:
  explicit InUse(Type& t) : t_(t), h_(t.h) { ++t_.busy; }
  ~InUse();
  ddt_type handle() const { return h_; }
  InUse(const InUse&) = delete;
  InUse& operator=(const InUse&) = delete;

 private:
  Type& t_;
  ddt_type h_;
};

// The name of a predefined handle ("DOUBLE", "2INT"), or nullptr for a derived one.
const char* predefined_name(ddt_type t);

void bind_type(nb::module_& m);
void bind_constructors(nb::module_& m);
void bind_transfer(nb::module_& m);

}  // namespace ddtpy
