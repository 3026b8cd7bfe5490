// ddtkit._core.Type: one ddt_type handle with its queries, and the predefined handles.
#include <cstdint>
#include <string>
#include <vector>

#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include "core.hpp"

namespace ddtpy {

namespace {

struct Named {
  const char* name;
  ddt_type handle;
};
#define DDTPY_NAMED_(N) {#N, DDT_##N},
const Named kNamed[] = {DDT_PREDEFINED_LIST(DDTPY_NAMED_)};
#undef DDTPY_NAMED_

std::string describe(const Type& t) {
  std::string buf(4096, '\0');
  for (;;) {
    int e = ddt_type_describe(t.h, buf.data(), static_cast<int64_t>(buf.size()));
    if (e == DDT_SUCCESS) break;
    if (e != DDT_ERR_TRUNCATE) raise_error(e);
    buf.resize(buf.size() * 4);  // the description of a large irregular layout is long
  }
  buf.resize(buf.find('\0'));
  return buf;
}

// ddt_type_notation's text, asked for its length first (a large irregular type's is long).
std::string notation(const Type& t) {
  int64_t needed = 0;
  int e = ddt_type_notation(t.h, nullptr, 0, &needed);
  if (e != DDT_SUCCESS && e != DDT_ERR_TRUNCATE) raise_error(e);
  std::string buf(static_cast<size_t>(needed), '\0');
  check(ddt_type_notation(t.h, buf.data(), needed, &needed));
  buf.resize(buf.find('\0'));
  return buf;
}

// ddt_type_parse: (Type, 0, "") or (None, code, the parser's message). The package's parse()
// (ddtkit/notation.py) raises, with the position the message starts with as attributes.
nb::tuple parse(const std::string& text) {
  ddt_type t = DDT_TYPE_NULL;
  char err[1024] = "";
  const int e = ddt_type_parse(text.c_str(), &t, err, sizeof err);
  if (e == DDT_SUCCESS) return nb::make_tuple(nb::cast(new Type(t), nb::rv_policy::take_ownership), 0, "");
  return nb::make_tuple(nb::none(), e, std::string(err[0] ? err : ddt_error_string(e)));
}

nb::bytes serialize(const Type& t) {
  int64_t needed = 0;
  int e = ddt_type_serialize(t.h, nullptr, 0, &needed);
  if (e != DDT_SUCCESS && e != DDT_ERR_TRUNCATE) raise_error(e);
  std::string buf(static_cast<size_t>(needed), '\0');
  check(ddt_type_serialize(t.h, buf.data(), needed, &needed));
  return nb::bytes(buf.data(), buf.size());
}

Type* deserialize(nb::bytes data) {
  ddt_type t = DDT_TYPE_NULL;
  check(ddt_type_deserialize(data.c_str(), static_cast<int64_t>(data.size()), &t));
  return new Type(t);
}

nb::bytes layout_hash(const Type& t) {
  uint8_t out[16];
  check(ddt_type_hash(t.h, out));
  return nb::bytes(reinterpret_cast<const char*>(out), sizeof out);
}

std::tuple<int64_t, int64_t> extent(const Type& t) {
  int64_t lb = 0, ext = 0;
  check(ddt_type_extent(t.h, &lb, &ext));
  return {lb, ext};
}

std::tuple<int64_t, int64_t> true_extent(const Type& t) {
  int64_t lb = 0, ext = 0;
  check(ddt_type_true_extent(t.h, &lb, &ext));
  return {lb, ext};
}

int64_t size(const Type& t) {
  int64_t s = 0;
  check(ddt_type_size(t.h, &s));
  return s;
}

std::tuple<int64_t, int64_t, int64_t, int> envelope(const Type& t) {
  int64_t ni = 0, na = 0, nd = 0;
  int combiner = 0;
  check(ddt_type_envelope(t.h, &ni, &na, &nd, &combiner));
  return {ni, na, nd, combiner};
}

// The contents' datatypes come back each with a reference of their own (MPI's rule), which the
// new Type objects take over.
nb::tuple contents(const Type& t) {
  auto [ni, na, nd, combiner] = envelope(t);
  std::vector<int64_t> ints(ni), addrs(na);
  std::vector<ddt_type> types(nd, DDT_TYPE_NULL);
  check(ddt_type_contents(t.h, ni, na, nd, ints.data(), addrs.data(), types.data()));
  nb::list wrapped;
  for (ddt_type c : types) wrapped.append(nb::cast(new Type(c), nb::rv_policy::take_ownership));
  return nb::make_tuple(combiner, ints, addrs, wrapped);
}

std::tuple<int64_t, bool> blocks(const Type& t) {
  int64_t n = 0;
  int ascending = 0;
  check(ddt_type_blocks(t.h, &n, &ascending));
  return {n, ascending != 0};
}

std::string repr(const Type& t) {
  if (!t.h) return "<ddtkit.Type (freed)>";
  if (const char* n = predefined_name(t.h)) return std::string("<ddtkit.Type ") + n + ">";
  int64_t lb = 0, ext = 0, s = 0;
  ddt_type_size(t.h, &s);
  ddt_type_extent(t.h, &lb, &ext);
  return "<ddtkit.Type size=" + std::to_string(s) + " lb=" + std::to_string(lb) +
         " extent=" + std::to_string(ext) + ">";
}

}  // namespace

Type::Type(ddt_type t) : h(t), predefined(predefined_name(t) != nullptr) {}

Type::~Type() { free(); }

void Type::free() {
  if (h && !predefined) {
    if (busy > 0)
      freed_while_busy = h;
    else
      ddt_type_free(&h);  // a live derived handle: cannot fail
  }
  h = DDT_TYPE_NULL;
}

InUse::~InUse() {
  if (--t_.busy == 0 && t_.freed_while_busy) ddt_type_free(&t_.freed_while_busy);
}

const char* predefined_name(ddt_type t) {
  for (const Named& n : kNamed)
    if (n.handle == t) return n.name;
  return nullptr;
}

void bind_type(nb::module_& m) {
  nb::class_<Type>(m, "Type", "A ddtkit datatype (one handle of the C API)")
      .def_prop_ro("size", &size, "bytes of data in one element")
      .def_prop_ro("extent", [](const Type& t) { return std::get<1>(extent(t)); }, "extent (ub - lb)")
      .def_prop_ro("lb", [](const Type& t) { return std::get<0>(extent(t)); }, "lower bound")
      .def_prop_ro("true_extent", [](const Type& t) { return std::get<1>(true_extent(t)); },
                   "extent of the data bytes alone")
      .def_prop_ro("true_lb", [](const Type& t) { return std::get<0>(true_extent(t)); },
                   "lowest data byte's displacement")
      .def("get_extent", &extent, "(lb, extent), as ddt_type_extent")
      .def("get_true_extent", &true_extent, "(true_lb, true_extent), as ddt_type_true_extent")
      .def("envelope", &envelope, "(num_integers, num_addresses, num_datatypes, combiner)")
      .def("contents", &contents,
           "(combiner, integers, addresses, datatypes): the arguments the type was built with")
      .def("blocks", &blocks, "(contiguous blocks of one element, whether they ascend); committed types")
      .def("hash", &layout_hash, "16-byte hash of the canonical layout of one element")
      .def("serialize", &serialize, "the canonical layout as portable bytes (ddtkit.deserialize)")
      .def("describe", &describe, "the canonical layout in words")
      .def("notation", &notation,
           "the type in the notation of docs/notation.md (ddtkit.parse reads it back to the same layout)")
      .def("commit", [](Type& t) -> Type& { check(ddt_type_commit(t.h)); return t; },
           nb::rv_policy::reference, "commit for pack and unpack; returns the type")
      .def("set_bounds", [](Type& t, int64_t lb, int64_t extent) -> Type& {
        check(ddt_type_set_bounds(t.h, lb, extent));
        return t;
      }, nb::arg("lb"), nb::arg("extent"), nb::rv_policy::reference,
           "before commit: report these bounds (an MPI's, where they differ from the standard's) "
           "without changing the typemap; returns the type")
      .def("free", [](Type& t) {
        if (t.predefined) raise_error(DDT_ERR_PREDEFINED);  // as ddt_type_free answers
        t.free();
      },
           "release the handle now (derived types using it stay valid); later use raises ddtkit.Error")
      .def_prop_ro("freed", [](const Type& t) { return t.h == DDT_TYPE_NULL; })
      .def_prop_ro("predefined", [](const Type& t) { return t.predefined; })
      .def_prop_ro("name", [](const Type& t) -> nb::object {
        const char* n = t.h ? predefined_name(t.h) : nullptr;
        return n ? nb::cast(n) : nb::none();
      }, "the predefined type's name (\"DOUBLE\"), None for a derived type")
      .def_prop_ro("handle", [](const Type& t) { return reinterpret_cast<uintptr_t>(t.h); },
                   "the ddt_type handle as an integer (0 when freed)")
      .def("__eq__", [](const Type& a, const Type& b) { return a.h == b.h; }, nb::is_operator())
      .def("__hash__", [](const Type& t) { return reinterpret_cast<uintptr_t>(t.h); })
      .def("__repr__", &repr);

  m.def("deserialize", &deserialize, nb::arg("data"), nb::rv_policy::take_ownership,
        "a committed type from bytes of Type.serialize (validated; ddtkit.Error if corrupt)");
  m.def("_parse", &parse, nb::arg("text"));
  m.def("error_string", &ddt_error_string, nb::arg("code"));
  m.def("predefined", [] {
    nb::dict d;
    for (const Named& n : kNamed) d[n.name] = nb::cast(new Type(n.handle), nb::rv_policy::take_ownership);
    return d;
  }, "every predefined type by its C name without the DDT_ prefix");
}

}  // namespace ddtpy
