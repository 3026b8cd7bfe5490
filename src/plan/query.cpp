// ddt_type_blocks: what the plan knows of a type's layout, for callers that choose a transport
// (the MPI interposer) and would otherwise list every block with ddt_iov to find out.
#include "plan/plan.hpp"
#include "util/guarded.hpp"

extern "C" int ddt_type_blocks(ddt_type type, int64_t* blocks, int* ascending) {
  if (int e = ddt::check_type(type)) return e;
  if (!blocks || !ascending) return DDT_ERR_ARG;
  if (!type->committed.load(std::memory_order_acquire)) return DDT_ERR_NOT_COMMITTED;
  return ddt::guarded([&] {
    const ddt::Plan& p = ddt::plan_of(type);
    *blocks = p.blocks;
    *ascending = p.ascending ? 1 : 0;
    return static_cast<int>(DDT_SUCCESS);
  });
}
