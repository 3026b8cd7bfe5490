// Suite 5: commit cost. Create + commit + free of every DDTBench type, through ddtkit and
// through the MPI (the same constructor calls, replayed from the type's constructor tree).
#include "context.hpp"
#include "ddtbench.hpp"

void suite_commit(const Context& c) {
  auto ks = ddtbench_kernels(false);
  size_t i = 0;
  for (auto& k : ks) {
    ++i;
    if (c.smoke && i % 8 != 1) continue;
    TPtr tree = tnode_from_ddt(k->type);
    std::vector<Method> ms = {{"ddtkit", [&] { k->create_commit_free(); }},
                              {"mpi", [&] {
                                 int rc;
                                 MPI_Datatype m = mpi_build(*tree, &rc);
                                 MPI_Type_commit(&m);
                                 MPI_Type_free(&m);
                               }}};
    auto ts = measure(ms, c.reps(21));
    c.results->add("commit", k->name, k->params, "create+commit+free", k->bytes, ts,
                   "\"index_entries\": " + std::to_string(k->index_entries));
    c.progress("[commit %zu/%zu] %-14s %-12s ddtkit %9.2f us, %s %9.2f us", i, ks.size(), k->name.c_str(), k->params.c_str(),
               find(ts, "ddtkit") / 1e3, c.mpi.c_str(), find(ts, "mpi") / 1e3);
  }
}
