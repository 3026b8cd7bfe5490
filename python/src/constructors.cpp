// The constructors of include/ddtkit.h. Counts come from the lengths of the argument lists, so
// a list shorter than another is a ValueError here rather than an out-of-bounds read in C.
#include <cstdint>
#include <vector>

#include <nanobind/stl/vector.h>

#include "core.hpp"

namespace ddtpy {

namespace {

using I64s = std::vector<int64_t>;

// A new Type owning the handle a constructor returned.
template <class F>
Type* make(F&& construct) {
  ddt_type t = DDT_TYPE_NULL;
  check(construct(&t));
  return new Type(t);
}

void same_length(size_t a, size_t b, const char* what) {
  if (a != b) throw nb::value_error(what);
}

}  // namespace

void bind_constructors(nb::module_& m) {
  const auto own = nb::rv_policy::take_ownership;
  m.def("contiguous", [](int64_t count, const Type& old) {
    return make([&](ddt_type* t) { return ddt_type_contiguous(count, old.h, t); });
  }, nb::arg("count"), nb::arg("oldtype"), own);

  m.def("vector", [](int64_t count, int64_t blocklength, int64_t stride, const Type& old) {
    return make([&](ddt_type* t) { return ddt_type_vector(count, blocklength, stride, old.h, t); });
  }, nb::arg("count"), nb::arg("blocklength"), nb::arg("stride"), nb::arg("oldtype"), own);

  m.def("hvector", [](int64_t count, int64_t blocklength, int64_t stride_bytes, const Type& old) {
    return make([&](ddt_type* t) { return ddt_type_hvector(count, blocklength, stride_bytes, old.h, t); });
  }, nb::arg("count"), nb::arg("blocklength"), nb::arg("stride_bytes"), nb::arg("oldtype"), own);

  m.def("indexed", [](const I64s& bls, const I64s& displs, const Type& old) {
    same_length(bls.size(), displs.size(), "indexed: blocklengths and displacements differ in length");
    return make([&](ddt_type* t) {
      return ddt_type_indexed(static_cast<int64_t>(bls.size()), bls.data(), displs.data(), old.h, t);
    });
  }, nb::arg("blocklengths"), nb::arg("displacements"), nb::arg("oldtype"), own);

  m.def("hindexed", [](const I64s& bls, const I64s& displs, const Type& old) {
    same_length(bls.size(), displs.size(), "hindexed: blocklengths and displacements differ in length");
    return make([&](ddt_type* t) {
      return ddt_type_hindexed(static_cast<int64_t>(bls.size()), bls.data(), displs.data(), old.h, t);
    });
  }, nb::arg("blocklengths"), nb::arg("displacements_bytes"), nb::arg("oldtype"), own);

  m.def("indexed_block", [](int64_t blocklength, const I64s& displs, const Type& old) {
    return make([&](ddt_type* t) {
      return ddt_type_indexed_block(static_cast<int64_t>(displs.size()), blocklength, displs.data(), old.h, t);
    });
  }, nb::arg("blocklength"), nb::arg("displacements"), nb::arg("oldtype"), own);

  m.def("hindexed_block", [](int64_t blocklength, const I64s& displs, const Type& old) {
    return make([&](ddt_type* t) {
      return ddt_type_hindexed_block(static_cast<int64_t>(displs.size()), blocklength, displs.data(), old.h, t);
    });
  }, nb::arg("blocklength"), nb::arg("displacements_bytes"), nb::arg("oldtype"), own);

  m.def("struct", [](const I64s& bls, const I64s& displs, const std::vector<const Type*>& types) {
    same_length(bls.size(), displs.size(), "struct: blocklengths and displacements differ in length");
    same_length(bls.size(), types.size(), "struct: blocklengths and types differ in length");
    std::vector<ddt_type> hs;
    for (const Type* ty : types) {
      if (!ty) throw nb::type_error("struct: every member type must be a ddtkit.Type");
      hs.push_back(ty->h);
    }
    return make([&](ddt_type* t) {
      return ddt_type_struct(static_cast<int64_t>(bls.size()), bls.data(), displs.data(), hs.data(), t);
    });
  }, nb::arg("blocklengths"), nb::arg("displacements_bytes"), nb::arg("types"), own);

  m.def("subarray", [](const I64s& sizes, const I64s& subsizes, const I64s& starts, const Type& old, int order) {
    same_length(sizes.size(), subsizes.size(), "subarray: sizes and subsizes differ in length");
    same_length(sizes.size(), starts.size(), "subarray: sizes and starts differ in length");
    return make([&](ddt_type* t) {
      return ddt_type_subarray(static_cast<int>(sizes.size()), sizes.data(), subsizes.data(), starts.data(),
                               order, old.h, t);
    });
  }, nb::arg("sizes"), nb::arg("subsizes"), nb::arg("starts"), nb::arg("oldtype"),
     nb::arg("order") = static_cast<int>(DDT_ORDER_C), own);

  m.def("darray", [](int size, int rank, const I64s& gsizes, const std::vector<int>& distribs,
                     const std::vector<int>& dargs, const std::vector<int>& psizes, const Type& old, int order) {
    same_length(gsizes.size(), distribs.size(), "darray: gsizes and distribs differ in length");
    same_length(gsizes.size(), dargs.size(), "darray: gsizes and dargs differ in length");
    same_length(gsizes.size(), psizes.size(), "darray: gsizes and psizes differ in length");
    return make([&](ddt_type* t) {
      return ddt_type_darray(size, rank, static_cast<int>(gsizes.size()), gsizes.data(), distribs.data(),
                             dargs.data(), psizes.data(), order, old.h, t);
    });
  }, nb::arg("size"), nb::arg("rank"), nb::arg("gsizes"), nb::arg("distribs"), nb::arg("dargs"),
     nb::arg("psizes"), nb::arg("oldtype"), nb::arg("order") = static_cast<int>(DDT_ORDER_C), own);

  m.def("resized", [](const Type& old, int64_t lb, int64_t extent) {
    return make([&](ddt_type* t) { return ddt_type_resized(old.h, lb, extent, t); });
  }, nb::arg("oldtype"), nb::arg("lb"), nb::arg("extent"), own);

  m.def("dup", [](const Type& old) {
    return make([&](ddt_type* t) { return ddt_type_dup(old.h, t); });
  }, nb::arg("oldtype"), own);

  m.attr("ORDER_C") = static_cast<int>(DDT_ORDER_C);
  m.attr("ORDER_FORTRAN") = static_cast<int>(DDT_ORDER_FORTRAN);
  m.attr("DISTRIBUTE_BLOCK") = static_cast<int>(DDT_DISTRIBUTE_BLOCK);
  m.attr("DISTRIBUTE_CYCLIC") = static_cast<int>(DDT_DISTRIBUTE_CYCLIC);
  m.attr("DISTRIBUTE_NONE") = static_cast<int>(DDT_DISTRIBUTE_NONE);
  m.attr("DISTRIBUTE_DFLT_DARG") = static_cast<int>(DDT_DISTRIBUTE_DFLT_DARG);
}

}  // namespace ddtpy
