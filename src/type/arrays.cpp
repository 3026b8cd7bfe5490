// Subarray and darray. Both describe a set of elements of a global array of old types, in the
// array's memory order, with explicit bounds lb = 0, ub = the whole array (MPI-4.1 5.1.3/5.1.4).
// They are built straight into the layout, one dimension at a time from the fastest: a
// dimension contributes VEC(n, stride_of_that_dimension, inner), and darray's cyclic(k) is a
// VEC of full blocks plus at most one partial block, so neither costs more than O(ndims).
#include <new>

#include "layout/builder.hpp"
#include "type/derive.hpp"
#include "util/checked.hpp"
#include "util/guarded.hpp"

using ddt::guarded;

namespace {

// Byte strides of each dimension of the global array, fastest dimension = 1 element.
int strides(int ndims, const int64_t* sizes, int order, int64_t ext, std::vector<int64_t>& st,
            int64_t& total) {
  ddt::Checked ck;
  st.assign(ndims, 0);
  int64_t s = ext, elems = 1;
  for (int i = 0; i < ndims; ++i) {
    int d = order == DDT_ORDER_C ? ndims - 1 - i : i;
    st[d] = s;
    s = ck.mul(s, sizes[d]);
    elems = ck.mul(elems, sizes[d]);
  }
  total = s;
  return ck.overflow ? DDT_ERR_OVERFLOW : DDT_SUCCESS;
}

// Finishes a subarray/darray object: bounds [0, total), markers, old type's alignment.
int finish_array(int combiner, std::vector<int64_t> ints, ddt_type oldtype, ddt::Builder& b,
                 ddt::Placed root, int64_t size, int64_t total, ddt_type* newtype) {
  if (b.error()) return b.error();
  ddt_type t = ddt::new_derived(combiner, std::move(ints), {}, {oldtype});
  if (!t) return DDT_ERR_NO_MEM;
  t->size = size;
  t->align = oldtype->align;
  t->lb = 0;
  t->ub = total;
  t->lb_marker = t->ub_marker = true;
  t->has_entries = true;
  t->layout = b.finish(root);
  if (int e = ddt::set_true_bounds_from_layout(t)) {
    ddt::release(t);
    return e;
  }
  *newtype = t;
  return DDT_SUCCESS;
}

}  // namespace

extern "C" {

int ddt_type_subarray(int ndims, const int64_t sizes[], const int64_t subsizes[],
                      const int64_t starts[], int order, ddt_type oldtype, ddt_type* newtype) {
  if (!newtype) return DDT_ERR_ARG;
  if (int e = ddt::check_type(oldtype)) return e;
  if (ndims < 1) return DDT_ERR_DIMS;
  if (!sizes || !subsizes || !starts) return DDT_ERR_ARG;
  if (order != DDT_ORDER_C && order != DDT_ORDER_FORTRAN) return DDT_ERR_ARG;
  for (int i = 0; i < ndims; ++i)
    if (sizes[i] < 1 || subsizes[i] < 1 || subsizes[i] > sizes[i] || starts[i] < 0 ||
        starts[i] > sizes[i] - subsizes[i])
      return DDT_ERR_DIMS;
  return guarded([&] {
    std::vector<int64_t> st;
    int64_t total;
    if (int e = strides(ndims, sizes, order, oldtype->extent(), st, total)) return e;
    ddt::Checked ck;
    int64_t size = oldtype->size;
    ddt::Builder b;
    ddt::Placed p = b.import(*oldtype->layout);
    for (int i = 0; i < ndims; ++i) {
      int d = order == DDT_ORDER_C ? ndims - 1 - i : i;
      p = b.shift(b.vec(subsizes[d], st[d], p), ck.mul(starts[d], st[d]));
      size = ck.mul(size, subsizes[d]);
    }
    if (ck.overflow) return static_cast<int>(DDT_ERR_OVERFLOW);
    std::vector<int64_t> ints{ndims};
    for (const int64_t* a : {sizes, subsizes, starts}) ints.insert(ints.end(), a, a + ndims);
    ints.push_back(order);
    return finish_array(DDT_COMBINER_SUBARRAY, std::move(ints), oldtype, b, p, size, total, newtype);
  });
}

int ddt_type_darray(int size, int rank, int ndims, const int64_t gsizes[], const int distribs[],
                    const int dargs[], const int psizes[], int order, ddt_type oldtype,
                    ddt_type* newtype) {
  if (!newtype) return DDT_ERR_ARG;
  if (int e = ddt::check_type(oldtype)) return e;
  if (size < 1 || rank < 0 || rank >= size) return DDT_ERR_ARG;
  if (ndims < 1) return DDT_ERR_DIMS;
  if (!gsizes || !distribs || !dargs || !psizes) return DDT_ERR_ARG;
  if (order != DDT_ORDER_C && order != DDT_ORDER_FORTRAN) return DDT_ERR_ARG;
  int64_t nprocs = 1;
  for (int i = 0; i < ndims; ++i) {
    if (gsizes[i] < 1 || psizes[i] < 1) return DDT_ERR_DIMS;
    nprocs *= psizes[i];
    if (nprocs > size) return DDT_ERR_DIMS;
    switch (distribs[i]) {
      case DDT_DISTRIBUTE_NONE:
        if (psizes[i] != 1) return DDT_ERR_DISTRIB;
        break;
      case DDT_DISTRIBUTE_BLOCK:
        if (dargs[i] != DDT_DISTRIBUTE_DFLT_DARG &&
            (dargs[i] < 1 || static_cast<int64_t>(dargs[i]) * psizes[i] < gsizes[i]))
          return DDT_ERR_DISTRIB;
        break;
      case DDT_DISTRIBUTE_CYCLIC:
        if (dargs[i] != DDT_DISTRIBUTE_DFLT_DARG && dargs[i] < 1) return DDT_ERR_DISTRIB;
        break;
      default:
        return DDT_ERR_DISTRIB;
    }
  }
  if (nprocs != size) return DDT_ERR_DIMS;
  return guarded([&] {
    std::vector<int64_t> st;
    int64_t total;
    if (int e = strides(ndims, gsizes, order, oldtype->extent(), st, total)) return e;
    // The process grid is row-major whatever the array order (MPI-4.1 5.1.4).
    std::vector<int64_t> coord(ndims);
    int64_t r = rank, procs = size;
    for (int i = 0; i < ndims; ++i) {
      procs /= psizes[i];
      coord[i] = r / procs;
      r %= procs;
    }
    ddt::Checked ck;
    int64_t bytes = oldtype->size;
    ddt::Builder b;
    ddt::Placed p = b.import(*oldtype->layout);
    for (int i = 0; i < ndims; ++i) {
      int d = order == DDT_ORDER_C ? ndims - 1 - i : i;
      int64_t g = gsizes[d], np = psizes[d], c = coord[d], s = st[d], local = 0;
      if (distribs[d] == DDT_DISTRIBUTE_CYCLIC) {
        int64_t k = dargs[d] == DDT_DISTRIBUTE_DFLT_DARG ? 1 : dargs[d];
        int64_t nblocks = (g + k - 1) / k;  // blocks of the whole dimension
        int64_t mine = c < nblocks ? (nblocks - c + np - 1) / np : 0;
        if (mine == 0) {
          p = {};
        } else {
          int64_t last = c + (mine - 1) * np, last_len = std::min(k, g - last * k);
          int64_t full = last_len == k ? mine : mine - 1;
          ddt::Placed blk = b.vec(k, s, p);
          ddt::Placed run = b.shift(b.vec(full, ck.mul(ck.mul(k, np), s), blk), ck.mul(ck.mul(c, k), s));
          ddt::Placed tail = full == mine ? ddt::Placed{} : b.shift(b.vec(last_len, s, p), ck.mul(ck.mul(last, k), s));
          p = b.seq({run, tail});
          local = full * k + (full == mine ? 0 : last_len);
        }
      } else {
        int64_t blk = distribs[d] == DDT_DISTRIBUTE_NONE ? g
                      : dargs[d] == DDT_DISTRIBUTE_DFLT_DARG ? (g + np - 1) / np
                                                             : dargs[d];
        int64_t start = std::min(g, c * blk);
        local = std::max<int64_t>(0, std::min(blk, g - start));
        p = b.shift(b.vec(local, s, p), ck.mul(start, s));
      }
      bytes = ck.mul(bytes, local);
    }
    if (ck.overflow) return static_cast<int>(DDT_ERR_OVERFLOW);
    std::vector<int64_t> ints{size, rank, ndims};
    ints.insert(ints.end(), gsizes, gsizes + ndims);
    for (const int* a : {distribs, dargs, psizes}) ints.insert(ints.end(), a, a + ndims);
    ints.push_back(order);
    return finish_array(DDT_COMBINER_DARRAY, std::move(ints), oldtype, b, p, bytes, total, newtype);
  });
}

}  // extern "C"
