// Public entry points never let an exception out: an allocation failure becomes DDT_ERR_NO_MEM.
#pragma once
#include <new>

#include "ddtkit.h"

namespace ddt {

template <class F>
int guarded(F f) {
  try {
    return f();
  } catch (const std::bad_alloc&) {
    return DDT_ERR_NO_MEM;
  }
}

}  // namespace ddt
