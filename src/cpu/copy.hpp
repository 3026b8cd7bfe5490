// The type-to-type copy as the layers above use it (ddt_copy is its checked public face): the
// runtime copies straight from a peer's layout, mapped here, into a receive's, and a message
// longer than its receive copies only the receive's bytes.
#pragma once
#include <cstdint>

#include "ddtkit.h"

namespace ddt {

// Stream bytes [from, to) of (src, scount, stype) into the same stream bytes of (dst, dcount,
// dtype). The caller has checked both sides (ddt::stream, ddt::hostile) and that 0 <= from and
// to is at most either side's packed size. Each side is sought once (the runtime copies a
// message in chunks, or in two shares on two cores, with it). May throw std::bad_alloc.
// footprint: the bytes of the whole transfer into dst that this range is a share of (0: the
// range alone); where one side is contiguous, the store kind is chosen by it (execute.cpp).
void copy_range(const void* src, int64_t scount, ddt_type stype, void* dst, int64_t dcount, ddt_type dtype, int64_t from,
                int64_t to, int64_t footprint = 0);
// Stream bytes [0, n).
inline void copy_range(const void* src, int64_t scount, ddt_type stype, void* dst, int64_t dcount, ddt_type dtype,
                       int64_t n) {
  copy_range(src, scount, stype, dst, dcount, dtype, 0, n);
}

// Whether copy_range between these sides moves their blocks in 64-byte windows under a block
// mask (twin.hpp with the plan's permute kernel: tiny blocks of one shape on both sides), where a
// block costs a fraction of a load and store: the runtime's mechanism choice asks it. Both types
// valid and committed (the caller's checks).
bool copy_in_windows(ddt_type stype, int64_t scount, ddt_type dtype, int64_t dcount);

// Whether copy_range between these sides transposes by tiles (tile.hpp: a transposed grid
// against a grid of the same elements, neither side contiguous). In cache such a copy costs about
// what a pack and an unpack of the same bytes do together, not one of them (FFT2D N=256's 256 KiB
// block, send type to receive type, one process: copy 11.1 us, pack 4.7, unpack 5.9): the runtime's
// mechanism choice asks it. Both types valid and committed.
bool copy_by_tiles(ddt_type stype, int64_t scount, ddt_type dtype, int64_t dcount);

}  // namespace ddt
