// The DDTBench kernels of shared/spec/ddtbench.md, built through ddtkit's constructors exactly as
// the spec describes (§3), on arrays filled by the spec's byte-check convention (§4), with the
// hand-written pack loop each application uses. Shared by the golden-hash tests and the benchmarks.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ddtkit.h"

uint64_t splitmix_mix(uint64_t z);                 // §4 mix(), with the constant added first
uint64_t fnv1a64(const void* p, int64_t n);

struct Kernel {
  std::string name;    // e.g. "WRF_y_vec"
  std::string params;  // e.g. "2x2"
  std::vector<std::unique_ptr<char[]>> arrays;
  std::vector<int64_t> array_bytes;  // size of each of arrays
  ddt_type type = DDT_TYPE_NULL;  // committed; displacements absolute where DDTBench uses MPI_BOTTOM
  // DDTBench's receive type where it has its own, which the unpack benchmark times as DDTBench's
  // receiver does: LAMMPS (spec 3.6) a struct of contiguous runs at the tail of the arrays, where
  // the application's own unpack writes too (count 1, as the send); FFT2D (spec 3.5) the
  // transpose S, count instances into the arrays (the all-to-all's receive). DDT_TYPE_NULL: the
  // receiver uses `type`.
  ddt_type recv_type = DDT_TYPE_NULL;
  const void* buf = nullptr;      // the buffer argument (nullptr = MPI_BOTTOM)
  int64_t count = 1;
  int64_t bytes = 0;              // packed size
  // The application's hand-written pack loop and its unpack, into / from a contiguous buffer.
  // For LAMMPS they use the application's own order (array of structs), not the datatype's.
  std::function<void(char*)> manual_pack;
  std::function<void(const char*)> manual_unpack;
  bool manual_matches_type = true;  // false for LAMMPS (DDTBench's own AoS/SoA difference)
  uint64_t golden = 0;              // §4 FNV-1a of the datatype's packed bytes; 0 where withheld
  uint64_t golden_manual = 0;       // §4 FNV-1a of the manual loop's bytes, where listed
  // Create + commit + free of the type alone, for the commit-cost benchmark.
  std::function<void()> create_commit_free;
  int64_t index_entries = 0;        // index-list entries the type carries (LAMMPS, SPECFEM3D)
  // WRF only: builds the other variant (_sa for _vec and back) over this kernel's own arrays.
  std::function<void(ddt_type*)> build_alternative;
  ~Kernel() {
    if (type) ddt_type_free(&type);
    if (recv_type) ddt_type_free(&recv_type);
  }
};

// Every kernel and parameter set of DDTBench's default run (spec §3), in the spec's test order.
// big = false leaves out the sets whose arrays exceed 64 MiB (NAS_MG class C).
std::vector<std::unique_ptr<Kernel>> ddtbench_kernels(bool big = true);

// §4's deterministic index list: icount distinct indices of [0, G) from the §2.5 shuffle.
// next is the SplitMix64 stream state, shared across lists of one kernel.
std::vector<int64_t> index_list(uint64_t& state, int64_t G, int64_t icount);
