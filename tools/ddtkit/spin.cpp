// `ddtkit spin`: the NIC offload model (issue 14, ddtkit_spin.h) on one message, or the paper's
// figures. A message is a DDTBench kernel (--kernel NAME[/PARAMS]) or a vector (--vector
// BLOCK,STRIDE,BYTES); each strategy asked for runs it (receive, or --send) and prints its
// simulated throughput, handler-time breakdown, NIC memory, DMA queue occupancy and whether every
// byte matches ddt_unpack / ddt_pack. --figures DIR writes the figures' data (Fig. 8, 12, 13,
// 14/15, 16) as JSON lines to DIR/spin.jsonl for bench/report_spin.py; --calibrate times the
// handler code on this CPU beside the model's per-operation costs.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "commands.hpp"
#include "ddtbench.hpp"
#include "ddtkit_spin.h"
#include "spin/engine.hpp"

namespace {

const char kDetails[] =
    "  --strategy S      host, specialized, hpu_local, ro_cp, rw_cp, seek, iovec or all (default all)\n"
    "  --vector B,S,M    a vector message: blocks of B bytes every S bytes, M bytes in all (default 64,128,4194304)\n"
    "  --kernel NAME     a DDTBench kernel, NAME or NAME/PARAMS (e.g. WRF_x_vec/2x2); 'list' lists them\n"
    "  --send            the sending side (outbound handlers gather) instead of the receive\n"
    "  --preset P        paper (default), paper32 or pspin\n"
    "  --packet B --line GBIT --hpus N --ghz F --nic-memory B --epsilon E --interval B\n"
    "  --queue-depth N --iovec V --scheduler auto|default|blocked --dp N --checkpoint-bytes B\n"
    "  --nic-bandwidth GBYTE_S --packet-buffer B --pcie GBYTE_S --pcie-overhead B --pcie-mps B\n"
    "  --pcie-latency NS --flush B\n"
    "                    the model's parameters (ddt_spin_params; defaults: the paper's)\n"
    "  --start-cycles C --block-cycles C --general-block-cycles C --catchup-block-cycles C\n"
    "  --catchup-byte-cycles C --seek-step-cycles C --run-cycles C\n"
    "                    the handler cost model in HPU cycles: per handler start, per block (specialized,\n"
    "                    seek, iovec), per general-handler block, per catch-up block and byte, per seek\n"
    "                    step, per seek run (defaults and their sources: src/spin/costs.hpp)\n"
    "  --reorder SEED    packets arrive in a seeded permutation; --window W bounds their moves\n"
    "  --warm            no cache flush before the host unpack\n"
    "  --figures DIR     write the paper's figures' data to DIR/spin.jsonl (Fig. 8, 12, 13, 14/15, 16)\n"
    "  --calibrate       time the handler code on this CPU beside the model's per-operation costs\n";

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

int strategy_of(const std::string& s) {
  for (int i = 0; i < DDT_SPIN_STRATEGIES; ++i)
    if (s == ddt_spin_strategy_name(i)) return i;
  return -1;
}

// A message: the type, its buffer (allocated here for vectors, the kernel's arrays otherwise),
// the count and the packed stream to receive.
struct Message {
  std::string name;
  ddt_type type = DDT_TYPE_NULL;
  bool own_type = false;
  std::vector<char> own;  // a vector's buffer
  std::unique_ptr<Kernel> kernel;
  std::vector<std::unique_ptr<Kernel>> all;  // keeps the kernel list alive
  void* buf = nullptr;
  int64_t count = 1, size = 0, span = 0;
  ~Message() {
    if (own_type && type) ddt_type_free(&type);
  }
  // The bytes the buffer consists of, for the check: the whole buffer (vectors) or every array.
  std::vector<std::pair<char*, int64_t>> regions() {
    if (!kernel) return {{own.data(), static_cast<int64_t>(own.size())}};
    std::vector<std::pair<char*, int64_t>> r;
    for (size_t i = 0; i < kernel->arrays.size(); ++i) r.push_back({kernel->arrays[i].get(), kernel->array_bytes[i]});
    return r;
  }
  void fill(char v) {
    for (auto& r : regions()) std::memset(r.first, v, static_cast<size_t>(r.second));
  }
  std::vector<char> snapshot() {
    std::vector<char> s;
    for (auto& r : regions()) s.insert(s.end(), r.first, r.first + r.second);
    return s;
  }
};

bool make_vector(Message& m, int64_t block, int64_t stride, int64_t bytes) {
  if (block < 1 || stride < block || bytes < block) return false;
  const int64_t n = bytes / block;
  if (ddt_type_hvector(n, block, stride, DDT_BYTE, &m.type) || ddt_type_commit(m.type)) return false;
  m.own_type = true;
  m.own.assign(static_cast<size_t>((n - 1) * stride + block), 0);
  m.buf = m.own.data();
  m.size = n * block;
  m.name = "vector b=" + std::to_string(block) + " s=" + std::to_string(stride);
  return true;
}

bool make_kernel(Message& m, const std::string& spec) {
  m.all = ddtbench_kernels(false);
  for (auto& k : m.all) {
    const std::string full = k->name + "/" + k->params;
    if (spec == k->name || spec == full) {
      m.kernel = std::move(k);
      m.type = m.kernel->type;
      m.buf = const_cast<void*>(m.kernel->buf);
      m.count = m.kernel->count;
      m.size = m.kernel->bytes;
      m.name = full;
      m.all.clear();
      return true;
    }
  }
  return false;
}

struct Outcome {
  int rc = 0;
  bool bytes_ok = false;
  ddt_spin_report r{};
};

// The handler costs in use, as the text and JSON outputs record them (so that a report can cite
// the costs its numbers came from, whatever flags set them).
std::string costs_text(const ddt_spin_params& p) {
  char s[256];
  std::snprintf(s, sizeof s, "start %g, block %g, general block %g, catch-up block %g, catch-up byte %g, seek step %g, run %g",
                p.start_cycles, p.block_cycles, p.general_block_cycles, p.catchup_block_cycles, p.catchup_byte_cycles,
                p.seek_step_cycles, p.run_cycles);
  return s;
}
std::string costs_json(const ddt_spin_params& p) {
  char s[320];
  std::snprintf(s, sizeof s,
                "{\"start\":%.17g,\"block\":%.17g,\"general_block\":%.17g,\"catchup_block\":%.17g,\"catchup_byte\":%.17g,"
                "\"seek_step\":%.17g,\"run\":%.17g}",
                p.start_cycles, p.block_cycles, p.general_block_cycles, p.catchup_block_cycles, p.catchup_byte_cycles,
                p.seek_step_cycles, p.run_cycles);
  return s;
}

// Runs one strategy on the message and checks every byte against ddt_unpack (receive) or
// ddt_pack (send).
Outcome run_one(Message& m, int s, const ddt_spin_params& p, bool send) {
  Outcome o;
  std::vector<char> packed(static_cast<size_t>(m.size));
  int64_t done = 0;
  if (!send) {
    for (int64_t i = 0; i < m.size; ++i) packed[i] = static_cast<char>(i * 131 + 17);
    m.fill(0);
    ddt_unpack(packed.data(), m.size, m.buf, m.count, m.type, 0, &done);
    const std::vector<char> want = m.snapshot();
    m.fill(0);
    o.rc = ddt_spin_receive(packed.data(), m.size, m.buf, m.count, m.type, s, &p, &o.r);
    o.bytes_ok = o.rc == 0 && m.snapshot() == want;
  } else {
    int64_t i = 0;
    for (auto& r : m.regions())
      for (int64_t j = 0; j < r.second; ++j) r.first[j] = static_cast<char>(++i * 37);
    std::vector<char> want(static_cast<size_t>(m.size));
    ddt_pack(m.buf, m.count, m.type, 0, want.data(), m.size, &done);
    o.rc = ddt_spin_send(m.buf, m.count, m.type, packed.data(), m.size, s, &p, &o.r);
    o.bytes_ok = o.rc == 0 && packed == want;
  }
  return o;
}

// For the figures: the host path (asked for, or fallen back to) is timed on this CPU, which
// other work shares; the fastest of three runs is kept. Offloaded runs are simulated and
// deterministic.
Outcome run_best(Message& m, int s, const ddt_spin_params& p, bool send) {
  Outcome o = run_one(m, s, p, send);
  for (int rep = 0; rep < 2 && o.rc == 0 && o.r.strategy_run == DDT_SPIN_HOST; ++rep) {
    Outcome again = run_one(m, s, p, send);
    if (again.rc || !again.bytes_ok) return again;
    if (again.r.seconds < o.r.seconds) o = again;
  }
  return o;
}

void print_outcome(const Message& m, int s, const Outcome& o, const ddt_spin_params& p) {
  const ddt_spin_report& r = o.r;
  if (o.rc) {
    std::printf("%-12s error %d\n", ddt_spin_strategy_name(s), o.rc);
    return;
  }
  const double h = r.handlers > 0 ? 1e9 / static_cast<double>(r.handlers) : 0;
  std::printf("%-12s %8.2f Gbit/s  %9.2f us%s  handler avg ns: init %.0f setup %.0f blocks %.0f (max %.0f)  "
              "NIC mem %lld B  DMA queue max %d mean %.1f (%lld req)  bytes %s\n",
              ddt_spin_strategy_name(s), r.gbit_s, r.seconds * 1e6, r.fell_back ? " [fell back to host]" : "",
              r.handler_init_s * h, r.handler_setup_s * h, r.handler_block_s * h, r.handler_max_s * 1e9,
              static_cast<long long>(r.nic_memory_used), r.dma_queue_max, r.dma_queue_mean,
              static_cast<long long>(r.dma_requests), o.bytes_ok ? "ok" : "WRONG");
  if (r.checkpoint_interval)
    std::printf("%12s dr %lld B, %lld checkpoints (%lld B each), layout %lld B\n", "", static_cast<long long>(r.checkpoint_interval),
                static_cast<long long>(r.checkpoints), static_cast<long long>(p.checkpoint_bytes),
                static_cast<long long>(r.layout_bytes));
  if (r.host_unpack_s > 0) std::printf("%12s host %s measured %.2f us\n", "", "unpack/pack", r.host_unpack_s * 1e6);
  (void)m;
}

// One JSON line: the figure, its x values, the strategy and the report's fields.
void emit(FILE* f, const char* fig, const std::string& extra, int s, const Outcome& o, const ddt_spin_params& p) {
  const ddt_spin_report& r = o.r;
  const double h = r.handlers > 0 ? 1.0 / static_cast<double>(r.handlers) : 0;
  std::fprintf(f,
               "{\"fig\":\"%s\",%s\"strategy\":\"%s\",\"hpus\":%d,\"hpu_ghz\":%g,\"packet\":%lld,\"rc\":%d,\"bytes_ok\":%s,\"seconds\":%.9g,"
               "\"gbit_s\":%.6g,\"line_gbit_s\":%g,\"fell_back\":%d,\"nic_memory\":%lld,\"layout_bytes\":%lld,"
               "\"nic_setup_bytes\":%lld,\"checkpoint_interval\":%lld,\"checkpoints\":%lld,\"init_ns\":%.6g,"
               "\"setup_ns\":%.6g,\"block_ns\":%.6g,\"handler_max_ns\":%.6g,\"dma_requests\":%lld,\"dma_queue_max\":%d,"
               "\"dma_queue_mean\":%.4g,\"gamma\":%.4g,\"host_unpack_s\":%.9g,\"host_setup_s\":%.9g,\"reorder\":%llu,"
               "\"catchup_blocks\":%lld,\"catchup_bytes\":%lld,\"cycles\":%s}\n",
               fig, extra.c_str(), ddt_spin_strategy_name(s), p.hpus, p.hpu_ghz, static_cast<long long>(p.packet_bytes), o.rc,
               o.bytes_ok ? "true" : "false", r.seconds, r.gbit_s, p.line_gbit_s, r.fell_back,
               static_cast<long long>(r.nic_memory_used), static_cast<long long>(r.layout_bytes),
               static_cast<long long>(r.nic_setup_bytes), static_cast<long long>(r.checkpoint_interval),
               static_cast<long long>(r.checkpoints), r.handler_init_s * h * 1e9, r.handler_setup_s * h * 1e9,
               r.handler_block_s * h * 1e9, r.handler_max_s * 1e9, static_cast<long long>(r.dma_requests), r.dma_queue_max,
               r.dma_queue_mean, r.gamma, r.host_unpack_s, r.host_setup_s, static_cast<unsigned long long>(p.reorder_seed),
               static_cast<long long>(r.catchup_blocks), static_cast<long long>(r.catchup_bytes), costs_json(p).c_str());
  std::fflush(f);
}

int figures(const std::string& dir, const ddt_spin_params& base) {
  const std::string path = dir + "/spin.jsonl";
  FILE* f = std::fopen(path.c_str(), "w");
  if (!f) {
    std::fprintf(stderr, "ddtkit spin: cannot write %s\n", path.c_str());
    return 1;
  }
  int bad = 0;
  auto check = [&](const Outcome& o, const std::string& what) {
    if (o.rc || !o.bytes_ok) {
      ++bad;
      std::fprintf(stderr, "ddtkit spin: %s: rc %d, bytes %s\n", what.c_str(), o.rc, o.bytes_ok ? "ok" : "WRONG");
    }
  };
  const int fig8[] = {DDT_SPIN_SPECIALIZED, DDT_SPIN_HPU_LOCAL, DDT_SPIN_RO_CP, DDT_SPIN_RW_CP, DDT_SPIN_SEEK, DDT_SPIN_HOST, DDT_SPIN_IOVEC};
  // Fig. 8: 4 MiB vector, blocks 4 B to 16 KiB, stride twice the block; seek also permuted.
  std::fprintf(stderr, "spin figures: Fig. 8\n");
  for (int64_t b = 4; b <= 16384; b *= 2) {
    Message m;
    make_vector(m, b, 2 * b, 4 << 20);
    for (int s : fig8) {
      Outcome o = run_best(m, s, base, false);
      check(o, "fig8 " + m.name);
      emit(f, "8", "\"block\":" + std::to_string(b) + ",", s, o, base);
    }
    ddt_spin_params q = base;
    q.reorder_seed = 8;
    for (int s : {DDT_SPIN_SEEK, DDT_SPIN_RW_CP}) {
      Outcome o = run_best(m, s, q, false);
      check(o, "fig8 permuted " + m.name);
      emit(f, "8p", "\"block\":" + std::to_string(b) + ",", s, o, q);
    }
  }
  // Fig. 12 (handler time breakdown) and Fig. 14 (DMA queue) for gamma = 1 to 16 blocks per
  // packet, Fig. 15's queue over time at gamma = 16.
  std::fprintf(stderr, "spin figures: Fig. 12, 14, 15\n");
  const int gen[] = {DDT_SPIN_SPECIALIZED, DDT_SPIN_HPU_LOCAL, DDT_SPIN_RO_CP, DDT_SPIN_RW_CP, DDT_SPIN_SEEK};
  for (int64_t g = 1; g <= 16; g *= 2) {
    Message m;
    const int64_t b = base.packet_bytes / g;
    make_vector(m, b, 2 * b, 4 << 20);
    for (int s : gen) {
      ddt_spin_params q = base;
      std::vector<double> tt;
      std::vector<int32_t> tq;
      if (g == 16) {
        tt.resize(1 << 22), tq.resize(1 << 22);
        q.dma_trace_t = tt.data(), q.dma_trace_q = tq.data(), q.dma_trace_cap = 1 << 22;
      }
      Outcome o = run_best(m, s, q, false);
      check(o, "fig12 " + m.name);
      emit(f, "12", "\"gamma_x\":" + std::to_string(g) + ",\"block\":" + std::to_string(b) + ",", s, o, q);
      if (g == 16 && o.r.dma_trace_n > 0) {  // at most 400 points, each the maximum of its slice
        const int64_t n = o.r.dma_trace_n, step = std::max<int64_t>(1, n / 400);
        std::fprintf(f, "{\"fig\":\"15\",\"strategy\":\"%s\",\"t_us\":[", ddt_spin_strategy_name(s));
        for (int64_t i = 0; i < n; i += step) {
          int32_t mx = 0;
          for (int64_t j = i; j < std::min(n, i + step); ++j) mx = std::max(mx, tq[j]);
          std::fprintf(f, "%s%.4f", i ? "," : "", tt[i] * 1e6);
          tq[i] = mx;
        }
        std::fprintf(f, "],\"queue\":[");
        for (int64_t i = 0; i < n; i += step) std::fprintf(f, "%s%d", i ? "," : "", tq[i]);
        std::fprintf(f, "]}\n");
      }
    }
  }
  // Fig. 13a: throughput against HPUs at 2 KiB blocks; 13b: NIC memory against block size (16
  // HPUs); 13c: NIC memory against HPUs (at 64 B blocks).
  std::fprintf(stderr, "spin figures: Fig. 13\n");
  for (int64_t blk : {int64_t{2048}, int64_t{64}}) {
    Message m;
    make_vector(m, blk, 2 * blk, 4 << 20);
    for (int P : {1, 2, 4, 8, 16, 32}) {
      ddt_spin_params q = base;
      q.hpus = P;
      for (int s : gen) {
        Outcome o = run_best(m, s, q, false);
        check(o, "fig13 " + m.name);
        emit(f, blk == 2048 ? "13a" : "13c", "\"block\":" + std::to_string(blk) + ",", s, o, q);
      }
    }
  }
  // Fig. 16: the DDTBench kernels: host unpack against the offloaded strategies, in order, and
  // seek with packets permuted.
  std::fprintf(stderr, "spin figures: Fig. 16\n");
  std::vector<std::unique_ptr<Kernel>> ks = ddtbench_kernels(false);
  for (auto& k : ks) {
    Message m;
    m.kernel = std::move(k);
    m.type = m.kernel->type, m.buf = const_cast<void*>(m.kernel->buf), m.count = m.kernel->count, m.size = m.kernel->bytes;
    m.name = m.kernel->name + "/" + m.kernel->params;
    const std::string x = "\"kernel\":\"" + m.kernel->name + "\",\"params\":\"" + m.kernel->params +
                          "\",\"size\":" + std::to_string(m.size) + ",";
    for (int s : {DDT_SPIN_HOST, DDT_SPIN_SPECIALIZED, DDT_SPIN_RW_CP, DDT_SPIN_SEEK, DDT_SPIN_IOVEC}) {
      Outcome o = run_best(m, s, base, false);
      check(o, "fig16 " + m.name);
      emit(f, "16", x, s, o, base);
    }
    ddt_spin_params q = base;
    q.reorder_seed = 16;
    Outcome o = run_best(m, DDT_SPIN_SEEK, q, false);
    check(o, "fig16 permuted " + m.name);
    emit(f, "16p", x, DDT_SPIN_SEEK, o, q);
  }
  // The PsPIN preset on Fig. 8's vector at three block sizes.
  ddt_spin_params ps;
  ddt_spin_preset("pspin", &ps);
  ps.host_flush_bytes = base.host_flush_bytes;
  // The presets keep the default costs; costs set by flags apply to these rows as to the others.
  ps.start_cycles = base.start_cycles, ps.block_cycles = base.block_cycles;
  ps.general_block_cycles = base.general_block_cycles, ps.catchup_block_cycles = base.catchup_block_cycles;
  ps.catchup_byte_cycles = base.catchup_byte_cycles, ps.seek_step_cycles = base.seek_step_cycles;
  ps.run_cycles = base.run_cycles;
  for (int64_t b : {int64_t{16}, int64_t{64}, int64_t{512}}) {
    Message m;
    make_vector(m, b, 2 * b, 4 << 20);
    for (int s : {DDT_SPIN_SPECIALIZED, DDT_SPIN_RW_CP, DDT_SPIN_SEEK}) {
      Outcome o = run_best(m, s, ps, false);
      check(o, "pspin " + m.name);
      emit(f, "pspin", "\"block\":" + std::to_string(b) + ",", s, o, ps);
    }
  }
  std::fclose(f);
  std::fprintf(stderr, "spin figures: %s written, %d transfer(s) wrong\n", path.c_str(), bad);
  return bad ? 1 : 0;
}

// Times the handler code itself on this CPU (receive, in order, one HPU's view: every packet's
// handler run back to back) and divides by the operations it counted.
int calibrate(const ddt_spin_params& costs) {
  std::printf("model costs (cycles at the HPU clock; defaults: costs.hpp): %s\n", costs_text(costs).c_str());
  std::printf("this CPU, same handler code, 4 MiB vector, stride 2 x block, 2 KiB packets (ns per handler / per block):\n");
  ddt_spin_params p;
  ddt_spin_defaults(&p);
  for (int64_t b : {int64_t{8}, int64_t{64}, int64_t{512}}) {
    Message m;
    make_vector(m, b, 2 * b, 4 << 20);
    std::vector<char> packed(static_cast<size_t>(m.size), 1);
    for (int s : {DDT_SPIN_SPECIALIZED, DDT_SPIN_HPU_LOCAL, DDT_SPIN_RO_CP, DDT_SPIN_RW_CP, DDT_SPIN_SEEK, DDT_SPIN_IOVEC}) {
      // The fastest of five passes over the message (a fresh engine each: the state strategies
      // start from their initial segments), so that page faults and other work on this shared
      // CPU count as little as possible.
      ddt::spin::Counts c;
      double ns = 1e300;
      const int64_t npkt = (m.size + p.packet_bytes - 1) / p.packet_bytes;
      bool ok = true;
      for (int pass = 0; pass < 5 && ok; ++pass) {
        ddt::spin::Engine e;
        if (e.setup(s, p, m.type, static_cast<char*>(m.buf), 1, false) != ddt::spin::Setup::Ok) {
          ok = false;
          break;
        }
        c = ddt::spin::Counts{};
        std::vector<int64_t> dma;
        dma.reserve(static_cast<size_t>(p.packet_bytes));
        const double t0 = now();
        for (int64_t i = 0; i < npkt; ++i) {
          dma.clear();
          const int64_t off = i * p.packet_bytes;
          if (e.handle(off, std::min(p.packet_bytes, m.size - off), packed.data() + off, c, dma)) return 1;
        }
        ns = std::min(ns, (now() - t0) * 1e9);
      }
      if (!ok) continue;
      std::printf("  block %5lld %-12s %8.1f ns/handler %6.2f ns/block  (%lld blocks, %lld catch-up, %lld seek steps)\n",
                  static_cast<long long>(b), ddt_spin_strategy_name(s), ns / static_cast<double>(npkt),
                  ns / static_cast<double>(std::max<int64_t>(1, c.blocks)), static_cast<long long>(c.blocks),
                  static_cast<long long>(c.catchup), static_cast<long long>(c.seek_steps));
    }
  }
  return 0;
}

bool parse_i64(const char* s, int64_t& v) {
  char* end;
  v = std::strtoll(s, &end, 10);
  return *s && !*end;
}
bool parse_f(const char* s, double& v) {
  char* end;
  v = std::strtod(s, &end);
  return *s && !*end;
}

}  // namespace

const char* spin_details() { return kDetails; }

int spin_command(int argc, char** argv) {
  ddt_spin_params p;
  ddt_spin_defaults(&p);
  std::string strategy = "all", kernel, figdir, vec = "64,128,4194304";
  bool send = false, calib = false, warm = false;
  auto fail = [](const std::string& msg) {
    std::fprintf(stderr, "ddtkit spin: %s\n", msg.c_str());
    print_usage("spin", true);
    return 2;
  };
  // Options other than --preset apply after it, whatever their order.
  for (int i = 1; i + 1 < argc; ++i)
    if (!std::strcmp(argv[i], "--preset") && ddt_spin_preset(argv[i + 1], &p)) return fail(std::string("unknown preset ") + argv[i + 1]);
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--send") { send = true; continue; }
    if (a == "--calibrate") { calib = true; continue; }
    if (a == "--warm") { warm = true; continue; }
    if (i + 1 >= argc) return fail("missing value after " + a);
    const char* v = argv[++i];
    int64_t n = 0;
    double d = 0;
    if (a == "--preset") continue;
    else if (a == "--strategy") strategy = v;
    else if (a == "--kernel") kernel = v;
    else if (a == "--vector") vec = v;
    else if (a == "--figures") figdir = v;
    else if (a == "--packet" && parse_i64(v, n)) p.packet_bytes = n;
    else if (a == "--line" && parse_f(v, d)) p.line_gbit_s = d;
    else if (a == "--hpus" && parse_i64(v, n)) p.hpus = static_cast<int>(n);
    else if (a == "--ghz" && parse_f(v, d)) p.hpu_ghz = d;
    else if (a == "--nic-memory" && parse_i64(v, n)) p.nic_memory_bytes = n;
    else if (a == "--epsilon" && parse_f(v, d)) p.epsilon = d;
    else if (a == "--interval" && parse_i64(v, n)) p.checkpoint_interval = n;
    else if (a == "--queue-depth" && parse_i64(v, n)) p.dma_queue_depth = static_cast<int>(n);
    else if (a == "--iovec" && parse_i64(v, n)) p.iovec_entries = static_cast<int>(n);
    else if (a == "--dp" && parse_i64(v, n)) p.blocked_dp = static_cast<int>(n);
    else if (a == "--checkpoint-bytes" && parse_i64(v, n)) p.checkpoint_bytes = n;
    else if (a == "--reorder" && parse_i64(v, n)) p.reorder_seed = static_cast<uint64_t>(n);
    else if (a == "--window" && parse_i64(v, n)) p.reorder_window = static_cast<int>(n);
    else if (a == "--nic-bandwidth" && parse_f(v, d)) p.nic_memory_gbyte_s = d;
    else if (a == "--packet-buffer" && parse_i64(v, n)) p.packet_buffer_bytes = n;
    else if (a == "--pcie" && parse_f(v, d)) p.pcie_gbyte_s = d;
    else if (a == "--pcie-overhead" && parse_i64(v, n)) p.pcie_request_overhead_bytes = n;
    else if (a == "--pcie-mps" && parse_i64(v, n)) p.pcie_max_payload = n;
    else if (a == "--pcie-latency" && parse_f(v, d)) p.pcie_read_latency_ns = d;
    else if (a == "--flush" && parse_i64(v, n)) p.host_flush_bytes = n;
    else if (a == "--start-cycles" && parse_f(v, d)) p.start_cycles = d;
    else if (a == "--block-cycles" && parse_f(v, d)) p.block_cycles = d;
    else if (a == "--general-block-cycles" && parse_f(v, d)) p.general_block_cycles = d;
    else if (a == "--catchup-block-cycles" && parse_f(v, d)) p.catchup_block_cycles = d;
    else if (a == "--catchup-byte-cycles" && parse_f(v, d)) p.catchup_byte_cycles = d;
    else if (a == "--seek-step-cycles" && parse_f(v, d)) p.seek_step_cycles = d;
    else if (a == "--run-cycles" && parse_f(v, d)) p.run_cycles = d;
    else if (a == "--scheduler" && (std::string(v) == "auto" || std::string(v) == "default" || std::string(v) == "blocked"))
      p.scheduler = std::string(v) == "auto"      ? DDT_SPIN_SCHED_AUTO
                    : std::string(v) == "default" ? DDT_SPIN_SCHED_DEFAULT
                                                  : DDT_SPIN_SCHED_BLOCKED_RR;
    else return fail("bad option or value: " + a + " " + v);
  }
  if (warm) p.host_flush_bytes = 0;
  if (calib) return calibrate(p);
  if (!figdir.empty()) return figures(figdir, p);

  Message m;
  if (kernel == "list") {
    for (auto& k : ddtbench_kernels(false)) std::printf("%s/%s (%lld B)\n", k->name.c_str(), k->params.c_str(), static_cast<long long>(k->bytes));
    return 0;
  }
  if (!kernel.empty()) {
    if (!make_kernel(m, kernel)) return fail("unknown kernel " + kernel + " (--kernel list)");
  } else {
    int64_t b = 0, s = 0, bytes = 0;
    if (std::sscanf(vec.c_str(), "%lld,%lld,%lld", reinterpret_cast<long long*>(&b), reinterpret_cast<long long*>(&s),
                    reinterpret_cast<long long*>(&bytes)) != 3 || !make_vector(m, b, s, bytes))
      return fail("bad --vector " + vec + " (BLOCK,STRIDE,BYTES with STRIDE >= BLOCK)");
  }
  std::vector<int> which;
  if (strategy == "all") {
    for (int s = 0; s < DDT_SPIN_STRATEGIES; ++s) which.push_back(s);
  } else if (strategy_of(strategy) >= 0) {
    which.push_back(strategy_of(strategy));
  } else {
    return fail("unknown strategy " + strategy);
  }
  std::printf("%s %s: %lld B, %d HPUs at %.2f GHz, %.0f Gbit/s, %lld B packets, NIC memory %lld B%s\n", send ? "send" : "receive",
              m.name.c_str(), static_cast<long long>(m.size), p.hpus, p.hpu_ghz, p.line_gbit_s,
              static_cast<long long>(p.packet_bytes), static_cast<long long>(p.nic_memory_bytes),
              p.reorder_seed ? ", packets permuted" : "");
  std::printf("handler costs (HPU cycles): %s\n", costs_text(p).c_str());
  int bad = 0;
  for (int s : which) {
    const Outcome o = run_one(m, s, p, send);
    if (o.rc == DDT_ERR_ARG) return fail("invalid parameters");
    print_outcome(m, s, o, p);
    bad += o.rc != 0 || !o.bytes_ok;
  }
  return bad ? 1 : 0;
}
