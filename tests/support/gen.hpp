// Random datatypes for the campaign and the MPI oracle, and their construction through ddtkit.
#pragma once
#include <random>

#include "ddtkit.h"
#include "reference.hpp"
#include "tnode.hpp"

struct GenOptions {
  int max_depth = 4;
  bool allow_negative_extent = true;  // resized with extent < 0 (legal MPI; MPIs may differ)
  bool allow_overlap = true;          // typemaps whose entries overlap (legal to pack)
};

// A random type whose typemap has at most max_entries entries and whose elements touch at most
// max_span bytes; ref receives its reference expansion.
TPtr random_type(std::mt19937_64& rng, const GenOptions& opt, RefType& ref,
                 int64_t max_entries = 4000, int64_t max_span = 1 << 18);

// A random type of which c <= max_count elements pack to exactly `total` bytes (total > 0), and,
// with no_overlap, whose typemap does not overlap itself over those c elements (a receive type
// for executors that move bytes in no particular order): up to 50 tries; c in *count, 0 when
// none was found (the returned type is then the last one tried).
TPtr random_type_packing(std::mt19937_64& rng, const GenOptions& opt, int64_t total, int64_t max_count, bool no_overlap,
                         RefType& ref, int64_t* count);

// A campaign's command line: --types N and --seed S (others are left to the caller).
void campaign_args(int argc, char** argv, int64_t* types, uint64_t* seed);

// Builds t through ddtkit's constructors, freeing each intermediate handle as soon as its parent
// exists (the parent must keep it alive). Returns DDT_TYPE_NULL and sets *err on failure.
ddt_type build_ddt(const TNode& t, int* err);

// The constructor tree of a ddtkit type, read back through ddt_type_envelope/contents (so an
// MPI peer can build the same type with the same calls). Returns nullptr for a deserialized
// type, which has no constructor history.
TPtr tnode_from_ddt(ddt_type t);

// The two types Open MPI 5.0.11 packs wrongly (issue 4's facts): hvector(4, 3, 8 B,
// C_DOUBLE_COMPLEX), whose blocks overlap, and indexed(1, {3}, {-4}, resized(resized(
// C_FLOAT_COMPLEX, 4, 20), 0, 20)).
std::vector<TPtr> open_mpi_wrong_pack_types();
