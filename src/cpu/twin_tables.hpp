// The type-to-type copy between two tables of one shape, as twin.hpp is for two nests: both sides
// Parts plans whose entries are twin nests at the same stream offsets, both Rows plans whose rows
// are entries of the same widths, or both List plans of blocks whose segments have the same
// counts and widths. Block j of the source then goes to
// block j of the destination, whatever the two sides' displacements, so the copy is one pass
// that reads each side's own table (or nest) and moves each block once, with no staging.
//
// This is a copy between processes whenever both build the same type over their own arrays:
// every DDTBench ping-pong does. A type built over absolute addresses (MPI_BOTTOM: WRF's struct
// of subarrays, LAMMPS's struct of per-atom index lists, SPECFEM3D_cm) has other displacements
// in every process, so the layouts differ and twin.hpp's nests do not apply; their structure is
// still the same. Before this, such a copy went through copy_range's staging buffer (a gather
// into 16 KiB that stays in L1, a scatter from it), and was slower than a whole pack followed by
// a whole unpack: ddt_copy between two instances of each kernel, one process, medians of 31,
// copy / (pack + unpack): WRF_y 1.10-1.27, WRF_x 1.03-1.09, LAMMPS_full 1.07-1.15,
// LAMMPS_atomic 1.03-1.10, SPECFEM3D_cm 1.09-1.46 (c=4: 75 against 53 us), where a twin nest's
// copy costs 0.53-0.65 of its pack and unpack (MILC, NAS_MG_y, SPECFEM3D_mt). The runtime's
// one-copy receive from the mapped heap is this copy (shm/rendezvous.cpp).
#pragma once
#include <algorithm>
#include <cstdint>

#include "cpu/copy_kernels.hpp"
#include "cpu/elements.hpp"
#include "cpu/twin.hpp"
#include "plan/plan.hpp"

namespace ddt {

// Whether (ps, scount) and (pd, dcount) are Parts plans of twin entries at the same offsets.
inline bool parts_twins(const Plan& ps, int64_t scount, const Plan& pd, int64_t dcount) {
  if (ps.shape != Shape::Parts || pd.shape != Shape::Parts || scount != dcount || ps.size != pd.size ||
      ps.parts.size() != pd.parts.size())
    return false;
  for (size_t j = 0; j < ps.parts.size(); ++j)
    if (ps.part_offset[j] != pd.part_offset[j] || !twins(ps.parts[j], 1, pd.parts[j], 1)) return false;
  return true;
}

// Whether (ps, scount) and (pd, dcount) are List plans of blocks only, segment for segment of
// one count and width.
inline bool list_twins(const Plan& ps, int64_t scount, const Plan& pd, int64_t dcount) {
  if (ps.shape != Shape::List || pd.shape != Shape::List || scount != dcount || ps.size != pd.size ||
      ps.segments.size() != pd.segments.size())
    return false;
  for (size_t j = 0; j < ps.segments.size(); ++j) {
    const Plan::Segment &a = ps.segments[j], &b = pd.segments[j];
    if (a.width <= 0 || a.width != b.width || a.count != b.count) return false;
  }
  return true;
}

// Whether (ps, scount) and (pd, dcount) are Rows plans of as many rows of entries of one width
// each (a struct of a few members, an array of such structs: the particles of an AoS).
inline bool rows_twins(const Plan& ps, int64_t scount, const Plan& pd, int64_t dcount) {
  if (ps.shape != Shape::Rows || pd.shape != Shape::Rows || scount != dcount || ps.size != pd.size ||
      ps.rows != pd.rows || ps.row_n != pd.row_n)
    return false;
  for (int j = 0; j < ps.rows; ++j)
    if (ps.rwidth[j] != pd.rwidth[j]) return false;
  return true;
}

// Calls share(se, de, off, end) for each element's stream bytes [off, end) of the range [lo, hi),
// with the element's address on each side (both sides place element k at their own extent).
template <class Share>
inline void twin_elements(const Plan& ps, uintptr_t s, const Plan& pd, uintptr_t d, int64_t lo, int64_t hi,
                          Share&& share) {
  element_indices(ps.size, lo, hi, [&](int64_t k, int64_t off, int64_t end) {
    share(s + static_cast<uintptr_t>(ps.disp + k * ps.extent), d + static_cast<uintptr_t>(pd.disp + k * pd.extent), off,
          end);
  });
}

// Stream bytes [lo, hi) between two Parts plans, parts_twins(): each entry's share by twin_copy.
inline void parts_twin_copy(const Plan& ps, uintptr_t s, const Plan& pd, uintptr_t d, int64_t lo, int64_t hi,
                            int64_t out) {
  twin_elements(ps, s, pd, d, lo, hi, [&](uintptr_t se, uintptr_t de, int64_t off, int64_t end) {
    for (size_t j = 0; j < ps.parts.size(); ++j) {
      const int64_t first = ps.part_offset[j], size = ps.parts[j].size;
      const int64_t a = std::max(off, first), b = std::min(end, first + size);
      if (a < b) twin_copy(ps.parts[j], 1, se, pd.parts[j], de, a - first, b - first, out);
    }
  });
}

// Stream bytes [lo, hi) between two Rows plans, rows_twins(): entry j of each row to entry j.
inline void rows_twin_copy(const Plan& ps, uintptr_t s, const Plan& pd, uintptr_t d, int64_t lo, int64_t hi) {
  int64_t row = 0;  // stream bytes of one row
  for (int j = 0; j < ps.rows; ++j) row += ps.rwidth[j];
  twin_elements(ps, s, pd, d, lo, hi, [&](uintptr_t se, uintptr_t de, int64_t off, int64_t end) {
    for (int64_t r = off / row, at = r * row; at < end; ++r) {
      const uintptr_t sr = se + static_cast<uintptr_t>(r * ps.row_stride), dr = de + static_cast<uintptr_t>(r * pd.row_stride);
      for (int j = 0; j < ps.rows; at += ps.rwidth[j], ++j) {
        const int64_t a = std::max(off, at), b = std::min(end, at + ps.rwidth[j]);
        if (a < b)
          any_copy(reinterpret_cast<char*>(dr + static_cast<uintptr_t>(pd.rdisp[j] + (a - at))),
                   reinterpret_cast<const char*>(sr + static_cast<uintptr_t>(ps.rdisp[j] + (a - at))), b - a);
      }
    }
  });
}

// Blocks [i, j) of one segment, block m from s + sd[m] to d + dd[m], of a width fixed at compile
// time where the table widths have one (W = 0: w bytes).
template <int64_t W, class DS, class DD>
inline void paired_blocks(const DS* sd, const DD* dd, int64_t i, int64_t j, uintptr_t s, uintptr_t d, int64_t w) {
#pragma GCC unroll 4
  for (; i < j; ++i)
    move_block<true, W>(reinterpret_cast<char*>(d + static_cast<uintptr_t>(dd[i])),
                        reinterpret_cast<char*>(s + static_cast<uintptr_t>(sd[i])), w);
}

// Bytes [a, b) of a segment of blocks of width w: a partial first and last block, and the whole
// ones between by paired_blocks.
template <class DS, class DD>
inline void paired_segment(const DS* sd, const DD* dd, int64_t w, uintptr_t s, uintptr_t d, int64_t a, int64_t b) {
  const auto part = [&](int64_t m, int64_t from, int64_t to) {  // bytes [from, to) of block m
    any_copy(reinterpret_cast<char*>(d + static_cast<uintptr_t>(dd[m] + from)),
             reinterpret_cast<const char*>(s + static_cast<uintptr_t>(sd[m] + from)), to - from);
  };
  int64_t i = a / w;
  if (const int64_t off = a - i * w; off) {
    part(i, off, std::min(w, off + (b - a)));
    a = std::min(b, (i + 1) * w);
    ++i;
  }
  const int64_t j = b / w;
  if (i < j) {
    switch (w) {
#define DDT_CASE_(W) \
  case W: paired_blocks<W>(sd, dd, i, j, s, d, W); break;
      DDT_TABLE_WIDTHS(DDT_CASE_)
#undef DDT_CASE_
      default: paired_blocks<0>(sd, dd, i, j, s, d, w);
    }
    a = j * w;
  }
  if (a < b) part(j, 0, b - j * w);
}

// Stream bytes [lo, hi) between two List plans, list_twins(): each element cut at its segments'
// stream offsets, each segment's share by paired_segment over both sides' tables.
inline void list_twin_copy(const Plan& ps, uintptr_t s, const Plan& pd, uintptr_t d, int64_t lo, int64_t hi) {
  const auto run = [&](const auto* sd, const auto* dd) {
    twin_elements(ps, s, pd, d, lo, hi, [&](uintptr_t se, uintptr_t de, int64_t off, int64_t end) {
      int64_t first = 0;
      for (const Plan::Segment& g : ps.segments) {
        const int64_t len = g.count * g.width, a = std::max(off, first), b = std::min(end, first + len);
        if (a < b) paired_segment(sd + g.first, dd + g.first, g.width, se, de, a - first, b - first);
        first += len;
        if (first >= end) break;
      }
    });
  };
  const bool sn = !ps.list.empty(), dn = !pd.list.empty();
  if (sn && dn) run(ps.list.data(), pd.list.data());
  else if (sn) run(ps.list.data(), pd.list64.data());
  else if (dn) run(ps.list64.data(), pd.list.data());
  else run(ps.list64.data(), pd.list64.data());
}

}  // namespace ddt
