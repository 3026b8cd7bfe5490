// The reference interpreter: the MPI typemap of a TNode, expanded entry by entry. It shares
// no code with ddtkit's layout or executors; it is the oracle they are checked against.
//
// Bounds follow MPI-4.1 as MPI implementations apply it: a derived type's lb/ub come from
// each copy's lb/ub (explicit markers, where present, take precedence as the standard says),
// and only struct pads its extent to the largest alignment when it has no explicit ub.
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

#include "tnode.hpp"

struct RefType {
  std::vector<std::pair<int64_t, int64_t>> map;  // (displacement, bytes) in typemap order
  std::vector<int> kinds;                        // basic type of each map entry (predefined index)
  int64_t size = 0, lb = 0, ub = 0, true_lb = 0, true_ub = 0, align = 1;
  bool lb_marker = false, ub_marker = false, has_entries = false;
  int64_t extent() const { return ub - lb; }
};

// Expands t; returns false if the typemap would exceed max_entries (the generator retries).
bool ref_eval(const TNode& t, RefType& out, int64_t max_entries = 200000);
// The packed stream of count elements at buf (buf + k*extent + disp for each entry).
void ref_pack(const RefType& r, const char* buf, int64_t count, char* out);
void ref_unpack(const RefType& r, const char* in, int64_t count, char* buf);
// Whether two typemap entries of count elements share a byte: a receive into such a type depends
// on the order its bytes are written in (MPI: undefined), so no executor can be checked on it.
bool ref_overlaps(const RefType& r, int64_t count);
// Lowest and highest+1 byte address offsets touched by count elements, relative to buf.
void ref_span(const RefType& r, int64_t count, int64_t& lo, int64_t& hi);
// Basic type facts used by the reference: size and alignment of predefined index i.
int64_t basic_size(int i);
int64_t basic_align(int i);
// Typemap of a pair type or basic type as (disp, len) entries with their basic kinds, and its extent.
void basic_map(int i, std::vector<std::pair<int64_t, int64_t>>& map, std::vector<int>& kinds, int64_t& extent);
// Marks, for count elements, the packed-stream bytes that are padding inside an x87 long double
// (bytes 10..15 of each 16-byte slot): an MPI that copies long double by value may skip them.
std::vector<bool> x87_padding(const RefType& r, int64_t count);
