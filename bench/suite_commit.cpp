// Suite 5: commit cost. Create + commit + free of every DDTBench type, through ddtkit and
// through the peer (the same constructor calls, replayed from the type's constructor tree).
#include "context.hpp"
#include "ddtbench.hpp"

void suite_commit(const Context& c) {
  auto ks = ddtbench_kernels(false);
  size_t i = 0;
  for (auto& k : ks) {
    ++i;
    if (c.smoke && i % 8 != 1) continue;
    std::vector<Method> ms = {{"ddtkit", [&] { k->create_commit_free(); }}};
    if (c.peer)
      if (std::function<void()> theirs = c.peer->create_commit_free(k->type)) ms.push_back({"mpi", theirs});
    auto ts = measure(ms, c.reps(21));
    c.results->add("commit", k->name, k->params, "create+commit+free", k->bytes, ts,
                   "\"index_entries\": " + std::to_string(k->index_entries));
    char their[96] = "";
    if (ms.size() > 1) std::snprintf(their, sizeof their, ", %s %9.2f us", c.peer_name.c_str(), find(ts, "mpi") / 1e3);
    c.progress("[commit %zu/%zu] %-14s %-12s ddtkit %9.2f us%s", i, ks.size(), k->name.c_str(), k->params.c_str(),
               find(ts, "ddtkit") / 1e3, their);
  }
}
