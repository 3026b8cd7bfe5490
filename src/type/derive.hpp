// The one place where a derived type's size, bounds and layout are computed from its parts.
#pragma once
#include <vector>

#include "type/type.hpp"

namespace ddt {

// count blocks, block i at disp + i*stride bytes; a block is bl copies of t, copy j at
// j*extent(t). Every constructor but subarray and darray is a list of these.
struct Part {
  int64_t disp, count, stride, bl;
  ddt_type t;
};

// Builds the type of the given parts (MPI bounds rules; struct rules when is_struct) into a new
// object, records the constructor arguments, and returns DDT_SUCCESS or an error without
// touching *out.
int derive(const std::vector<Part>& parts, bool is_struct, int combiner, std::vector<int64_t> ints,
           std::vector<int64_t> addrs, std::vector<ddt_type> types, ddt_type* out);

// A fresh derived object holding references to its children.
ddt_type new_derived(int combiner, std::vector<int64_t> ints, std::vector<int64_t> addrs,
                     std::vector<ddt_type> types);

}  // namespace ddt
