// Handles: validity, reference counts, free (commit is src/plan/commit.cpp: committing is planning); and the queries MPI answers from a type.
#include <algorithm>
#include <cstring>

#include "type/type.hpp"
#include "util/checked.hpp"

namespace ddt {

void retain(ddt_type t) {
  if (!t->predefined) t->refs.fetch_add(1, std::memory_order_relaxed);
}

void release(ddt_type t) {
  if (t->predefined) return;
  if (t->refs.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  for (ddt_type c : t->types) release(c);
  t->magic = 0;
  delete t;
}

}  // namespace ddt

extern "C" {

int ddt_type_free(ddt_type* type) {
  if (!type) return DDT_ERR_ARG;
  if (int e = ddt::check_type(*type)) return e;
  if ((*type)->predefined) return DDT_ERR_PREDEFINED;
  ddt::release(*type);
  *type = DDT_TYPE_NULL;
  return DDT_SUCCESS;
}

int ddt_type_size(ddt_type type, int64_t* size) {
  if (int e = ddt::check_type(type)) return e;
  if (!size) return DDT_ERR_ARG;
  *size = type->size;
  return DDT_SUCCESS;
}

int ddt_type_extent(ddt_type type, int64_t* lb, int64_t* extent) {
  if (int e = ddt::check_type(type)) return e;
  if (!lb || !extent) return DDT_ERR_ARG;
  *lb = type->lb;
  *extent = type->extent();
  return DDT_SUCCESS;
}

int ddt_type_true_extent(ddt_type type, int64_t* true_lb, int64_t* true_extent) {
  if (int e = ddt::check_type(type)) return e;
  if (!true_lb || !true_extent) return DDT_ERR_ARG;
  *true_lb = type->true_lb;
  *true_extent = type->true_ub - type->true_lb;
  return DDT_SUCCESS;
}

int ddt_type_envelope(ddt_type type, int64_t* num_integers, int64_t* num_addresses,
                      int64_t* num_datatypes, int* combiner) {
  if (int e = ddt::check_type(type)) return e;
  if (!num_integers || !num_addresses || !num_datatypes || !combiner) return DDT_ERR_ARG;
  *num_integers = static_cast<int64_t>(type->ints.size());
  *num_addresses = static_cast<int64_t>(type->addrs.size());
  *num_datatypes = static_cast<int64_t>(type->types.size());
  *combiner = type->combiner;
  return DDT_SUCCESS;
}

int ddt_type_contents(ddt_type type, int64_t max_integers, int64_t max_addresses,
                      int64_t max_datatypes, int64_t integers[], int64_t addresses[],
                      ddt_type datatypes[]) {
  if (int e = ddt::check_type(type)) return e;
  // MPI: contents of a predefined type is an error, as is asking for a layout-only type's.
  if (type->predefined || type->combiner == DDT_COMBINER_LAYOUT) return DDT_ERR_TYPE;
  int64_t ni = type->ints.size(), na = type->addrs.size(), nt = type->types.size();
  if (max_integers < ni || max_addresses < na || max_datatypes < nt) return DDT_ERR_TRUNCATE;
  if ((ni && !integers) || (na && !addresses) || (nt && !datatypes)) return DDT_ERR_ARG;
  std::copy(type->ints.begin(), type->ints.end(), integers);
  std::copy(type->addrs.begin(), type->addrs.end(), addresses);
  for (int64_t i = 0; i < nt; ++i) {
    ddt::retain(type->types[i]);
    datatypes[i] = type->types[i];
  }
  return DDT_SUCCESS;
}

int ddt_type_set_bounds(ddt_type type, int64_t lb, int64_t extent) {
  if (int e = ddt::check_type(type)) return e;
  if (type->predefined) return DDT_ERR_PREDEFINED;
  if (type->committed.load(std::memory_order_acquire)) return DDT_ERR_ARG;  // immutable once committed
  ddt::Checked ck;
  int64_t ub = ck.add(lb, extent);
  if (ck.overflow) return DDT_ERR_OVERFLOW;
  type->lb = lb;
  type->ub = ub;
  return DDT_SUCCESS;
}

const char* ddt_error_string(int code) {
  switch (code) {
    case DDT_SUCCESS: return "success";
    case DDT_ERR_ARG: return "invalid argument (null pointer or value out of range)";
    case DDT_ERR_COUNT: return "negative count or block length";
    case DDT_ERR_TYPE: return "invalid datatype handle";
    case DDT_ERR_NOT_COMMITTED: return "datatype not committed";
    case DDT_ERR_OVERFLOW: return "size, extent or displacement overflows 64 bits";
    case DDT_ERR_TRUNCATE: return "buffer too small or range beyond the packed stream";
    case DDT_ERR_DIMS: return "invalid array dimensions, sizes or starts";
    case DDT_ERR_DISTRIB: return "invalid darray distribution or argument";
    case DDT_ERR_NO_MEM: return "out of memory";
    case DDT_ERR_SIZE_MISMATCH: return "packed sizes differ";
    case DDT_ERR_CORRUPT: return "serialized layout fails validation";
    case DDT_ERR_VERSION: return "serialized layout has an unsupported version";
    case DDT_ERR_PREDEFINED: return "operation not allowed on a predefined datatype";
    case DDT_ERR_COMM: return "not in a ddtkit job, or the runtime is not initialised";
    case DDT_ERR_PEER: return "a peer process has died";
    case DDT_ERR_DEVICE: return "no usable CUDA device, or a CUDA call failed";
    default: return "unknown error code";
  }
}

}  // extern "C"
