// ddt_type_commit: committing a type is choosing its plan. The layout exists from construction
// (src/type/type.hpp), so commit only plans and marks the type usable for data movement.
// Committing again is allowed (MPI permits it) and keeps the plan it has.
#include "plan/plan.hpp"
#include "type/type.hpp"
#include "util/guarded.hpp"

extern "C" int ddt_type_commit(ddt_type type) {
  if (int e = ddt::check_type(type)) return e;
  return ddt::guarded([&] {
    ddt::plan_of(type);
    type->committed.store(true, std::memory_order_release);
    return static_cast<int>(DDT_SUCCESS);
  });
}
