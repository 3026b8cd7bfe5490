// The MPI type constructors that reduce to parts (derive.cpp), plus resized and dup.
// Each validates every argument before building, so a failed call leaves *newtype untouched.
#include <new>

#include "type/derive.hpp"
#include "util/checked.hpp"
#include "util/guarded.hpp"

using ddt::guarded;

using ddt::Part;

namespace {

int check_out(ddt_type* newtype) { return newtype ? DDT_SUCCESS : DDT_ERR_ARG; }

// Validates (count, arrays) of the table constructors.
int check_table(int64_t count, const void* a, const void* b) {
  if (count < 0) return DDT_ERR_COUNT;
  if (count > 0 && (!a || !b)) return DDT_ERR_ARG;
  return DDT_SUCCESS;
}

// indexed / hindexed / indexed_block / hindexed_block share this: per-block lengths (or one
// length for all) and displacements in elements (scale = extent) or bytes (scale = 1).
int table(int combiner, int64_t count, const int64_t* bls, int64_t bl_all, const int64_t* displs,
          bool bytes, ddt_type oldtype, ddt_type* newtype) {
  if (int e = check_out(newtype)) return e;
  if (int e = ddt::check_type(oldtype)) return e;
  if (int e = check_table(count, bls ? static_cast<const void*>(bls) : &bl_all, displs)) return e;
  if (!bls && bl_all < 0) return DDT_ERR_COUNT;
  return guarded([&] {
    if (bls)
      for (int64_t i = 0; i < count; ++i)
        if (bls[i] < 0) return static_cast<int>(DDT_ERR_COUNT);
    std::vector<int64_t> ints = ddt::Recycled<int64_t>::take(2 + (bls ? count : 0) + (bytes ? 0 : count)), addrs;
    ints.push_back(count);
    if (bls)
      ints.insert(ints.end(), bls, bls + count);
    else
      ints.push_back(bl_all);
    if (bytes) {
      addrs = ddt::Recycled<int64_t>::take(count);
      addrs.assign(displs, displs + count);
    } else {
      ints.insert(ints.end(), displs, displs + count);
    }
    const ddt::Table tab{count, bls, bl_all, displs, bytes ? 1 : oldtype->extent(), nullptr, oldtype};
    return ddt::derive(tab, false, combiner, std::move(ints), std::move(addrs), {oldtype}, newtype);
  });
}

// resized and dup keep their old type's typemap: the same size, alignment, true bounds and
// (shared, not copied) layout.
void inherit_typemap(ddt_type t, ddt_type old) {
  t->size = old->size;
  t->align = old->align;
  t->layout = old->layout;
  t->true_lb = old->true_lb;
  t->true_ub = old->true_ub;
}

}  // namespace

extern "C" {

int ddt_type_contiguous(int64_t count, ddt_type oldtype, ddt_type* newtype) {
  if (int e = check_out(newtype)) return e;
  if (int e = ddt::check_type(oldtype)) return e;
  if (count < 0) return DDT_ERR_COUNT;
  return guarded([&] {
    return ddt::derive({{0, 1, 0, count, oldtype}}, false, DDT_COMBINER_CONTIGUOUS, {count}, {},
                       {oldtype}, newtype);
  });
}

int ddt_type_vector(int64_t count, int64_t blocklength, int64_t stride, ddt_type oldtype,
                    ddt_type* newtype) {
  if (int e = check_out(newtype)) return e;
  if (int e = ddt::check_type(oldtype)) return e;
  if (count < 0 || blocklength < 0) return DDT_ERR_COUNT;
  ddt::Checked ck;
  int64_t sb = ck.mul(stride, oldtype->extent());
  if (ck.overflow) return DDT_ERR_OVERFLOW;
  return guarded([&] {
    return ddt::derive({{0, count, sb, blocklength, oldtype}}, false, DDT_COMBINER_VECTOR,
                       {count, blocklength, stride}, {}, {oldtype}, newtype);
  });
}

int ddt_type_hvector(int64_t count, int64_t blocklength, int64_t stride_bytes, ddt_type oldtype,
                     ddt_type* newtype) {
  if (int e = check_out(newtype)) return e;
  if (int e = ddt::check_type(oldtype)) return e;
  if (count < 0 || blocklength < 0) return DDT_ERR_COUNT;
  return guarded([&] {
    return ddt::derive({{0, count, stride_bytes, blocklength, oldtype}}, false, DDT_COMBINER_HVECTOR,
                       {count, blocklength}, {stride_bytes}, {oldtype}, newtype);
  });
}

int ddt_type_indexed(int64_t count, const int64_t blocklengths[], const int64_t displs[],
                     ddt_type oldtype, ddt_type* newtype) {
  if (count > 0 && !blocklengths) return DDT_ERR_ARG;
  return table(DDT_COMBINER_INDEXED, count, blocklengths, 0, displs, false, oldtype, newtype);
}

int ddt_type_hindexed(int64_t count, const int64_t blocklengths[], const int64_t displs_bytes[],
                      ddt_type oldtype, ddt_type* newtype) {
  if (count > 0 && !blocklengths) return DDT_ERR_ARG;
  return table(DDT_COMBINER_HINDEXED, count, blocklengths, 0, displs_bytes, true, oldtype, newtype);
}

int ddt_type_indexed_block(int64_t count, int64_t blocklength, const int64_t displs[],
                           ddt_type oldtype, ddt_type* newtype) {
  return table(DDT_COMBINER_INDEXED_BLOCK, count, nullptr, blocklength, displs, false, oldtype, newtype);
}

int ddt_type_hindexed_block(int64_t count, int64_t blocklength, const int64_t displs_bytes[],
                            ddt_type oldtype, ddt_type* newtype) {
  return table(DDT_COMBINER_HINDEXED_BLOCK, count, nullptr, blocklength, displs_bytes, true, oldtype,
               newtype);
}

int ddt_type_struct(int64_t count, const int64_t blocklengths[], const int64_t displs_bytes[],
                    const ddt_type types[], ddt_type* newtype) {
  if (int e = check_out(newtype)) return e;
  if (int e = check_table(count, blocklengths, displs_bytes)) return e;
  if (count > 0 && !types) return DDT_ERR_ARG;
  for (int64_t i = 0; i < count; ++i) {
    if (int e = ddt::check_type(types[i])) return e;
    if (blocklengths[i] < 0) return DDT_ERR_COUNT;
  }
  return guarded([&] {
    std::vector<int64_t> ints{count};
    ints.insert(ints.end(), blocklengths, blocklengths + count);
    std::vector<int64_t> addrs(displs_bytes, displs_bytes + count);
    std::vector<ddt_type> ts(types, types + count);
    const ddt::Table tab{count, blocklengths, 0, displs_bytes, 1, types, nullptr};
    return ddt::derive(tab, true, DDT_COMBINER_STRUCT, std::move(ints), std::move(addrs),
                       std::move(ts), newtype);
  });
}

int ddt_type_resized(ddt_type oldtype, int64_t lb, int64_t extent, ddt_type* newtype) {
  if (int e = check_out(newtype)) return e;
  if (int e = ddt::check_type(oldtype)) return e;
  ddt::Checked ck;
  int64_t ub = ck.add(lb, extent);
  if (ck.overflow) return DDT_ERR_OVERFLOW;
  return guarded([&] {
    ddt_type t = ddt::new_derived(DDT_COMBINER_RESIZED, {}, {lb, extent}, {oldtype});
    if (!t) return static_cast<int>(DDT_ERR_NO_MEM);
    inherit_typemap(t, oldtype);
    t->lb = lb;
    t->ub = ub;
    t->lb_marker = t->ub_marker = true;
    t->has_entries = true;
    *newtype = t;
    return static_cast<int>(DDT_SUCCESS);
  });
}

int ddt_type_dup(ddt_type oldtype, ddt_type* newtype) {
  if (int e = check_out(newtype)) return e;
  if (int e = ddt::check_type(oldtype)) return e;
  return guarded([&] {
    ddt_type t = ddt::new_derived(DDT_COMBINER_DUP, {}, {}, {oldtype});
    if (!t) return static_cast<int>(DDT_ERR_NO_MEM);
    inherit_typemap(t, oldtype);
    t->lb = oldtype->lb;
    t->ub = oldtype->ub;
    t->lb_marker = oldtype->lb_marker;
    t->ub_marker = oldtype->ub_marker;
    t->has_entries = oldtype->has_entries;
    t->committed = oldtype->committed.load();  // MPI: a dup of a committed type is committed
    *newtype = t;
    return static_cast<int>(DDT_SUCCESS);
  });
}

}  // extern "C"
