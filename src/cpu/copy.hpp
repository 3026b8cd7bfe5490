// The type-to-type copy as the layers above use it (ddt_copy is its checked public face): the
// runtime copies straight from a peer's layout, mapped here, into a receive's, and a message
// longer than its receive copies only the receive's bytes.
#pragma once
#include <cstdint>

#include "ddtkit.h"

namespace ddt {

// Stream bytes [0, n) of (src, scount, stype) into the same stream bytes of (dst, dcount, dtype).
// The caller has checked both sides (ddt::stream, ddt::hostile) and that n is at most either
// side's packed size. May throw std::bad_alloc.
void copy_range(const void* src, int64_t scount, ddt_type stype, void* dst, int64_t dcount, ddt_type dtype, int64_t n);

}  // namespace ddt
