// Suite 3: partial packing, as a pipelining runtime does it: the stream packed in order in
// 4 KiB and 64 KiB pieces, each piece its own ddt_pack call that starts with a seek, against
// one whole pack. MPI has no byte-range pack in its API, so this suite has no peer column.
#include <vector>

#include "context.hpp"
#include "ddtbench.hpp"

namespace {

void pieces(const Context& c, const std::string& kase, const std::string& params, const void* buf, int64_t count,
            ddt_type t, int64_t bytes) {
  std::vector<char> out(bytes);
  int64_t got;
  std::vector<Method> ms = {{"whole", [&] { ddt_pack(buf, count, t, 0, out.data(), bytes, &got); }}};
  for (int64_t piece : {int64_t{4} << 10, int64_t{64} << 10})
    ms.push_back({"pieces " + std::to_string(piece >> 10) + " KiB", [&, piece] {
                    for (int64_t off = 0; off < bytes; off += piece) ddt_pack(buf, count, t, off, out.data() + off, piece, &got);
                  }});
  auto ts = measure(ms, c.reps(11));
  c.results->add("partial", kase, params, "pack", bytes, ts);
  c.progress("[partial] %-16s %-22s whole/pieces: 4 KiB %.2f, 64 KiB %.2f", kase.c_str(), params.c_str(),
             find(ts, "whole") / find(ts, "pieces 4 KiB"), find(ts, "whole") / find(ts, "pieces 64 KiB"));
}

}  // namespace

void suite_partial(const Context& c) {
  const int64_t payload = c.smoke ? 64 << 10 : 2 << 20;
  std::vector<char> src(2 * payload);
  for (const auto& b : {std::make_pair("char", DDT_CHAR), std::make_pair("double", DDT_DOUBLE)})
    for (int64_t block : {8, 64, 512, 4096}) {
      int64_t size;
      ddt_type_size(b.second, &size);
      ddt_type t;
      ddt_type_vector(payload / block, block / size, 2 * (block / size), b.second, &t);
      ddt_type_commit(t);
      pieces(c, std::string("vector ") + b.first, "2 MiB block " + std::to_string(block) + " B", src.data(), 1, t, payload);
      ddt_type_free(&t);
    }
  auto ks = ddtbench_kernels(false);
  std::string last;
  for (auto& k : ks) {
    if (k->name == last && !c.full) continue;  // the first parameter set of each kernel by default
    last = k->name;
    pieces(c, k->name, k->params, k->buf, k->count, k->type, k->bytes);
    if (c.smoke) break;
  }
}
