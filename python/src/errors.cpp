// The bridge from C error codes to Python exceptions. The exception classes are Python classes
// (ddtkit/_errors.py), so that they can inherit from ValueError where Python users expect one;
// they are looked up when an error happens, never held across interpreter shutdown.
#include "core.hpp"

namespace ddtpy {

void raise_error(int code) {
  nb::object from_code = nb::module_::import_("ddtkit._errors").attr("from_code");
  nb::object exc = from_code(code, ddt_error_string(code));
  PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(exc.ptr())), exc.ptr());
  throw nb::python_error();
}

}  // namespace ddtpy
