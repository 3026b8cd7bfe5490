// A datatype as a tree of constructor calls, independent of ddtkit: the random generator makes
// these, the reference interpreter expands them, and build_ddt / the MPI oracle turn them into
// ddtkit and MPI types with the same arguments.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

struct TNode;
using TPtr = std::shared_ptr<const TNode>;

struct TNode {
  enum Kind { Basic, Contig, Vector, HVector, Indexed, HIndexed, IndexedBlock, HIndexedBlock,
              Struct, Subarray, Darray, Resized, Dup } kind = Basic;
  int basic = 0;                 // Basic: index in DDT_PREDEFINED_LIST
  int64_t count = 0, bl = 0, stride = 0;
  std::vector<int64_t> bls, displs;
  std::vector<TPtr> kids;        // Struct: one per block; others: the single old type
  int ndims = 0, order = 0;      // Subarray, Darray
  std::vector<int64_t> sizes, subsizes, starts;
  int psize = 1, prank = 0;      // Darray
  std::vector<int> distribs, dargs, psizes;
  int64_t lb = 0, extent = 0;    // Resized
  // Bounds imposed after construction (an MPI interposer's ddt_type_set_bounds), used by the
  // MPI oracle where a real MPI's bounds convention differs from the standard's.
  bool override_bounds = false;
  int64_t ov_lb = 0, ov_extent = 0;
};

// The constructor's name ("vector", "struct", ...) and a one-line description of a tree.
const char* kind_name(TNode::Kind k);
std::string describe(const TNode& t);
