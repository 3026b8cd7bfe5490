// Suite 1: the DDTBench kernels (spec §3) with their default parameter sets. Each is checked
// before it is timed: ddtkit's bytes against the spec's golden FNV-1a hash, the hand-written
// loop and the MPI's MPI_Pack; then pack and unpack are timed for ddtkit, the MPI, memcpy of
// the same bytes and the application's own loop.
#include <cstring>
#include <vector>

#include "context.hpp"
#include "ddtbench.hpp"

void suite_ddtbench(const Context& c) {
  auto ks = ddtbench_kernels(!c.smoke);
  size_t i = 0;
  for (auto& kp : ks) {
    Kernel& k = *kp;
    ++i;
    if (c.smoke && i % 8 != 1) continue;
    MPI_Datatype mt = mpi_of(k.type);
    const void* mbuf = k.buf ? k.buf : MPI_BOTTOM;
    const int64_t n = k.bytes;
    std::vector<char> packed(n), other(n), contig(n), sink(n);
    int64_t got;
    ddt_pack(k.buf, k.count, k.type, 0, packed.data(), n, &got);
    uint64_t h = fnv1a64(packed.data(), n);
    int pos = 0;
    MPI_Pack(mbuf, (int)k.count, mt, other.data(), (int)n, &pos, MPI_COMM_SELF);
    bool mpi_ok = pos == n && std::memcmp(other.data(), packed.data(), n) == 0;
    k.manual_pack(contig.data());
    bool manual_ok = !k.manual_matches_type || std::memcmp(contig.data(), packed.data(), n) == 0;
    const char* golden = !k.golden ? "no golden hash in the spec" : h == k.golden ? "= golden" : "!= GOLDEN";
    c.progress("[ddtbench %zu/%zu] %-14s %-12s %9lld B  fnv %016llx %s, manual %s, %s %s", i, ks.size(), k.name.c_str(),
               k.params.c_str(), (long long)n, (unsigned long long)h, golden,
               k.manual_matches_type ? (manual_ok ? "equal" : "DIFFERS") : "AoS order (spec 3.6)", c.mpi.c_str(),
               mpi_ok ? "equal" : "DIFFERS");
    char extra[160];
    std::snprintf(extra, sizeof extra, "\"fnv\": \"%016llx\", \"golden_ok\": %s, \"manual_ok\": %s, \"mpi_ok\": %s",
                  (unsigned long long)h, k.golden ? (h == k.golden ? "true" : "false") : "null",
                  manual_ok ? "true" : "false", mpi_ok ? "true" : "false");
    std::vector<Method> pack = {
        {"ddtkit", [&] { ddt_pack(k.buf, k.count, k.type, 0, sink.data(), n, &got); }},
        {"mpi", [&] { int p = 0; MPI_Pack(mbuf, (int)k.count, mt, sink.data(), (int)n, &p, MPI_COMM_SELF); }},
        {"memcpy", [&] { std::memcpy(sink.data(), contig.data(), n); }},
        {"manual", [&] { k.manual_pack(sink.data()); }}};
    c.results->add("ddtbench", k.name, k.params, "pack", n, measure(pack, c.reps(11)), extra);
    std::vector<Method> unpack = {
        {"ddtkit", [&] { ddt_unpack(packed.data(), n, const_cast<void*>(k.buf), k.count, k.type, 0, &got); }},
        {"mpi", [&] { int p = 0; MPI_Unpack(packed.data(), (int)n, &p, const_cast<void*>(mbuf), (int)k.count, mt, MPI_COMM_SELF); }},
        {"memcpy", [&] { std::memcpy(sink.data(), packed.data(), n); }},
        {"manual", [&] { k.manual_unpack(packed.data()); }}};
    c.results->add("ddtbench", k.name, k.params, "unpack", n, measure(unpack, c.reps(11)), extra);
    mpi_free(mt, k.type);
  }
}
