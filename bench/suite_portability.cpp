// Suite 4: performance portability (seed 004). One layout built with different constructors
// must pack at one speed: the 4D edge transfer (struct, indexed, vector, cont_of_resized) and
// the Carpen-Amarie layouts of spec §7 (tiled, bucket, block, alternating, three or four
// constructions each). The report gives max/min time across the constructions of a layout.
#include <functional>
#include <vector>

#include "context.hpp"

namespace {

// One construction: parts packed one after another (the seed's per-matrix types need two).
struct Part {
  ddt_type t;
  int64_t count;
  int64_t offset;  // of its buffer from the allocation start
};
struct Construction {
  std::string name;
  std::vector<Part> parts;
};

// The constructions of one layout are compared with each other, so each implementation's
// constructions are timed interleaved among themselves: ddtkit's together, then the peer's. (Timed
// pairwise, a slow MPI_Pack of a 10^5-entry struct evicts ddtkit's data between samples and
// makes ddtkit's struct look slow.)
void run_layout(const Context& c, const std::string& layout, const std::string& params, std::vector<Construction> cs,
                const char* base) {
  int64_t bytes = 0;
  for (const Part& p : cs[0].parts) {
    int64_t s;
    ddt_type_size(p.t, &s);
    bytes += s * p.count;
  }
  std::vector<char> out(bytes);
  std::vector<std::vector<std::unique_ptr<PeerType>>> pt(cs.size());
  bool peer = c.peer != nullptr;  // and it builds every part
  std::vector<Method> mine, theirs;
  for (size_t k = 0; k < cs.size(); ++k) {
    for (Part& p : cs[k].parts) {
      ddt_type_commit(p.t);
      pt[k].push_back(c.peer_type(p.t));
      peer = peer && pt[k].back();
    }
    mine.push_back({cs[k].name, [&, k] {
                      char* o = out.data();
                      for (const Part& p : cs[k].parts) {
                        int64_t s, got;
                        ddt_type_size(p.t, &s);
                        ddt_pack(base + p.offset, p.count, p.t, 0, o, s * p.count, &got);
                        o += s * p.count;
                      }
                    }});
    theirs.push_back({cs[k].name, [&, k] {
                        int64_t pos = 0;
                        for (size_t i = 0; i < cs[k].parts.size(); ++i)
                          pt[k][i]->pack(base + cs[k].parts[i].offset, cs[k].parts[i].count, out.data(), bytes, &pos);
                      }});
  }
  // 31 samples of at least 0.5 ms each: the constructions of one layout that share a plan (vector
  // and cont_of_resized do) measured 0.26 and 0.29 us per call in one run with 11 samples of
  // 0.2 ms, a 1.12 max/min from the clock and the neighbours alone; the medians of longer,
  // more numerous samples are what the 1.10 target can be judged on.
  auto td = measure(mine, c.reps(31), 5e5);
  auto tm = peer ? measure(theirs, c.reps(11)) : std::vector<Timing>();
  for (size_t k = 0; k < cs.size(); ++k) {
    // The construction's plan identity: the layout hash of each part, with its count and offset.
    // Constructions with one identity run the same plan and the same kernels, so the spread of
    // their times is the measurement's alone (the report shows it beside the target).
    std::string id;
    for (const Part& p : cs[k].parts) {
      uint8_t h[16];
      ddt_type_hash(p.t, h);
      char part[64];
      std::snprintf(part, sizeof part, "%02x%02x%02x%02x%02x%02x%02x%02x*%lld@%lld;", h[0], h[1], h[2], h[3], h[4], h[5],
                    h[6], h[7], (long long)p.count, (long long)p.offset);
      id += part;
    }
    std::vector<Timing> ts = {{"ddtkit", td[k].ns}};
    char their[96] = "";
    if (peer) {
      ts.push_back({"mpi", tm[k].ns});
      std::snprintf(their, sizeof their, ", %s %8.1f us", c.peer_name.c_str(), tm[k].ns / 1e3);
    }
    c.results->add("portability", layout, params, cs[k].name, bytes, ts, "\"plan_id\": \"" + id + "\"");
    c.progress("[portability] %-12s %-26s %-20s ddtkit %8.1f us%s", layout.c_str(), params.c_str(), cs[k].name.c_str(),
               td[k].ns / 1e3, their);
    pt[k].clear();
    for (Part& p : cs[k].parts) ddt_type_free(&p.t);
  }
}

ddt_type resized(ddt_type t, int64_t lb, int64_t ext) {
  ddt_type r;
  ddt_type_resized(t, lb, ext, &r);
  ddt_type_free(&t);
  return r;
}

void edge4d(const Context& c, int64_t N) {
  const int64_t fbase = 8 * N * N * N, rows = N * N;
  std::vector<char> buf(12 * N * N * N);
  for (size_t i = 0; i < buf.size(); ++i) buf[i] = static_cast<char>(i);
  std::vector<Construction> cs;
  {  // struct: every element of both edges, doubles then floats
    std::vector<int64_t> bl(10 * rows, 1), d(10 * rows);
    std::vector<ddt_type> ts(10 * rows);
    for (int64_t r = 0; r < rows; ++r)
      for (int i = 0; i < 5; ++i) {
        d[5 * r + i] = 8 * (r * N + i), ts[5 * r + i] = DDT_DOUBLE;
        d[5 * rows + 5 * r + i] = fbase + 4 * (r * N + i), ts[5 * rows + 5 * r + i] = DDT_FLOAT;
      }
    ddt_type t;
    ddt_type_struct(10 * rows, bl.data(), d.data(), ts.data(), &t);
    cs.push_back({"struct", {{t, 1, 0}}});
  }
  auto pair = [&](const std::string& name, const std::function<ddt_type(ddt_type)>& make) {
    cs.push_back({name, {{make(DDT_DOUBLE), 1, 0}, {make(DDT_FLOAT), 1, fbase}}});
  };
  pair("indexed", [&](ddt_type b) {
    std::vector<int64_t> bl(rows, 5), d(rows);
    for (int64_t r = 0; r < rows; ++r) d[r] = r * N;
    ddt_type t;
    ddt_type_indexed(rows, bl.data(), d.data(), b, &t);
    return t;
  });
  pair("vector", [&](ddt_type b) {
    ddt_type t;
    ddt_type_vector(rows, 5, N, b, &t);
    return t;
  });
  pair("cont_of_resized", [&](ddt_type b) {
    int64_t s;
    ddt_type_size(b, &s);
    ddt_type five, t;
    ddt_type_contiguous(5, b, &five);
    ddt_type r = resized(five, 0, s * N);
    ddt_type_contiguous(rows, r, &t);
    ddt_type_free(&r);
    return t;
  });
  run_layout(c, "4D edge", "N=" + std::to_string(N), std::move(cs), buf.data());
}

// Carpen-Amarie layouts over MPI_INT elements (spec §7), sized to nbytes of payload.
void carpen(const Context& c, int64_t nbytes) {
  const int64_t A = 8, A1 = 8, A2 = 24, B = 48, B1 = 48, B2 = 24, S = 8;
  std::vector<char> buf(8 * nbytes);
  const std::string p = std::to_string(nbytes) + " B of int";
  auto indexed = [](std::vector<int64_t> bl, std::vector<int64_t> d) {
    ddt_type t;
    ddt_type_indexed(static_cast<int64_t>(bl.size()), bl.data(), d.data(), DDT_INT, &t);
    return t;
  };
  auto contig = [](int64_t n, ddt_type u) {
    ddt_type t;
    ddt_type_contiguous(n, u, &t);
    ddt_type_free(&u);
    return t;
  };
  {  // tiled(A, B)
    const int64_t cnt = nbytes / (4 * A);
    auto unit = [&] { ddt_type t; ddt_type_contiguous(A, DDT_INT, &t); return resized(t, 0, 4 * B); };
    ddt_type v, inner, vt;
    ddt_type_vector(cnt, A, B, DDT_INT, &v);
    ddt_type_vector(S, A, B, DDT_INT, &inner);
    ddt_type_hvector(cnt / S, 1, S * B * 4, inner, &vt);
    ddt_type_free(&inner);
    run_layout(c, "tiled", p, {{"resized unit x count", {{unit(), cnt, 0}}}, {"contiguous of unit", {{contig(cnt, unit()), 1, 0}}},
                               {"tiled_vector", {{resized(v, 0, cnt * B * 4), 1, 0}}}, {"vector_tiled", {{vt, 1, 0}}}},
               buf.data());
  }
  {  // bucket(A1, A2, B)
    const int64_t cnt = nbytes / (4 * (A1 + A2));
    auto unit = [&] { return resized(indexed({A1, A2}, {0, B}), 0, 8 * B); };
    std::vector<int64_t> bl, d;
    for (int64_t i = 0; i < cnt; ++i) bl.push_back(A1), bl.push_back(A2), d.push_back(2 * B * i), d.push_back(2 * B * i + B);
    run_layout(c, "bucket", p, {{"resized unit x count", {{unit(), cnt, 0}}}, {"contiguous of unit", {{contig(cnt, unit()), 1, 0}}},
                                {"one indexed", {{indexed(bl, d), 1, 0}}}},
               buf.data());
  }
  {  // block(A, B1, B2)
    const int64_t B1b = 24, B2b = 40, cnt = nbytes / (8 * A);
    auto unit = [&] {
      int64_t d[] = {0, B1b};
      ddt_type t;
      ddt_type_indexed_block(2, A, d, DDT_INT, &t);
      return resized(t, 0, 4 * (B1b + B2b));
    };
    std::vector<int64_t> d;
    for (int64_t i = 0; i < cnt; ++i) d.push_back((B1b + B2b) * i), d.push_back((B1b + B2b) * i + B1b);
    ddt_type ib;
    ddt_type_indexed_block(2 * cnt, A, d.data(), DDT_INT, &ib);
    run_layout(c, "block", p, {{"resized unit x count", {{unit(), cnt, 0}}}, {"contiguous of unit", {{contig(cnt, unit()), 1, 0}}},
                               {"block_indexed", {{ib, 1, 0}}}},
               buf.data());
  }
  {  // alternating(A1, A2, B1, B2)
    const int64_t cnt = nbytes / (4 * (A1 + A2));
    auto unit = [&] { return resized(indexed({A1, A2}, {0, B1}), 0, 4 * (B1 + B2)); };
    std::vector<int64_t> bl, d;
    for (int64_t i = 0; i < cnt; ++i)
      bl.push_back(A1), bl.push_back(A2), d.push_back((B1 + B2) * i), d.push_back((B1 + B2) * i + B1);
    run_layout(c, "alternating", p, {{"resized unit x count", {{unit(), cnt, 0}}}, {"contiguous of unit", {{contig(cnt, unit()), 1, 0}}},
                                     {"alternating_indexed", {{indexed(bl, d), 1, 0}}}},
               buf.data());
  }
}

}  // namespace

void suite_portability(const Context& c) {
  std::vector<int64_t> ns = c.smoke ? std::vector<int64_t>{10} : c.full ? std::vector<int64_t>{10, 50, 100, 200, 300, 400, 500}
                                                                         : std::vector<int64_t>{10, 50, 100};
  for (int64_t n : ns) edge4d(c, n);
  carpen(c, c.smoke ? 10240 : 2621440);
}
