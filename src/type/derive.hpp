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

// A table constructor's arguments as the caller gave them (indexed, hindexed, indexed_block,
// hindexed_block, struct): entry i is bl(i) copies of type(i) at displs[i] * scale bytes. Read in
// place, so a long list is walked once and never copied into parts.
struct Table {
  int64_t count;
  const int64_t* bls;  // nullptr: every entry has bl_all
  int64_t bl_all;
  const int64_t* displs;
  int64_t scale;           // 1 for byte displacements, else the old type's extent
  const ddt_type* types;   // nullptr: every entry has type_all
  ddt_type type_all;
  int64_t bl(int64_t i) const { return bls ? bls[i] : bl_all; }
  ddt_type type(int64_t i) const { return types ? types[i] : type_all; }
};

// Builds the type of the given parts (MPI bounds rules; struct rules when is_struct) into a new
// object, records the constructor arguments, and returns DDT_SUCCESS or an error without
// touching *out.
int derive(const std::vector<Part>& parts, bool is_struct, int combiner, std::vector<int64_t> ints,
           std::vector<int64_t> addrs, std::vector<ddt_type> types, ddt_type* out);

// derive() for a table: the same type as the parts {displs[i] * scale, 1, 0, bl(i), type(i)}.
int derive(const Table& table, bool is_struct, int combiner, std::vector<int64_t> ints,
           std::vector<int64_t> addrs, std::vector<ddt_type> types, ddt_type* out);

// A fresh derived object holding references to its children.
ddt_type new_derived(int combiner, std::vector<int64_t> ints, std::vector<int64_t> addrs,
                     std::vector<ddt_type> types);

}  // namespace ddt
