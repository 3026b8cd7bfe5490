// ddt_spin_receive / ddt_spin_send: argument checks, the host path (and the fallback to it), and
// the offloaded path through the engine's handlers and the model.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <cstring>
#include <vector>

#include "ddtkit_spin.h"
#include "spin/engine.hpp"
#include "spin/model.hpp"
#include "type/type.hpp"

namespace {

using ddt::spin::DmaReq;

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// A cycle cost: >= 0, and finite (an infinite handler would never end; NaN fails every compare).
bool cost_ok(double c) { return std::isfinite(c) && c >= 0; }

bool valid(const ddt_spin_params& p) {
  return cost_ok(p.start_cycles) && cost_ok(p.block_cycles) && cost_ok(p.general_block_cycles) &&
         cost_ok(p.catchup_block_cycles) && cost_ok(p.catchup_byte_cycles) && cost_ok(p.seek_step_cycles) &&
         cost_ok(p.run_cycles) && p.packet_bytes >= 1 && p.line_gbit_s > 0 && p.hpus >= 1 && p.hpus <= 4096 && p.hpu_ghz > 0 &&
         p.nic_memory_bytes >= 0 && p.reorder_window >= 0 && p.nic_memory_gbyte_s > 0 && p.packet_buffer_bytes >= 0 &&
         p.pcie_gbyte_s > 0 && p.pcie_request_overhead_bytes >= 0 && p.pcie_max_payload >= 1 &&
         p.pcie_read_latency_ns >= 0 && p.dma_queue_depth >= 1 && p.epsilon > 0 && p.checkpoint_bytes >= 1 &&
         p.checkpoint_interval >= 0 && p.scheduler >= DDT_SPIN_SCHED_AUTO && p.scheduler <= DDT_SPIN_SCHED_BLOCKED_RR &&
         p.blocked_dp >= 1 && p.iovec_entries >= 1 && p.host_flush_bytes >= 0 && p.dma_trace_cap >= 0 &&
         (p.dma_trace_cap == 0 || (p.dma_trace_t && p.dma_trace_q));
}

// Writes bytes the size of a large last-level cache, so that the host unpack starts cold, as the
// message just written by the NIC would find it (no direct cache placement, §5.3).
void flush_cache(int64_t bytes) {
  if (bytes <= 0) return;
  std::vector<char> junk(static_cast<size_t>(bytes));
  std::memset(junk.data(), 1, junk.size());
  volatile char sink = junk[junk.size() / 2];
  (void)sink;
}

// The host path: the NIC moves the packed stream contiguously (one DMA per packet, as packets
// arrive; on send after the host packed it), the host unpacks (or packed) with ddtkit, timed.
int host_path(const void* packed_in, char* packed_out, int64_t total, void* buf, int64_t count, ddt_type type,
              const ddt_spin_params& p, bool send, ddt_spin_report& r) {
  std::vector<char> staging(static_cast<size_t>(total));
  const int64_t k = p.packet_bytes, npkt = (total + k - 1) / k;
  std::vector<DmaReq> reqs;
  const double byte_s = 8.0 / (p.line_gbit_s * 1e9);
  if (!send) {
    const std::vector<int64_t> order = ddt::spin::arrival_order(npkt, p);
    double clock = 0;
    for (int64_t i : order) {
      const int64_t off = i * k, len = std::min(k, total - off);
      std::memcpy(staging.data() + off, static_cast<const char*>(packed_in) + off, static_cast<size_t>(len));
      clock += static_cast<double>(len) * byte_s;
      reqs.push_back({clock, len, i});
    }
    const ddt::spin::QueueOut q = ddt::spin::run_dma_queue(reqs, p, npkt);
    flush_cache(p.host_flush_bytes);
    int64_t done = 0;
    const double t0 = now();
    const int rc = ddt_unpack(staging.data(), total, buf, count, type, 0, &done);
    r.host_unpack_s = now() - t0;
    if (rc) return rc;
    r.seconds = q.last + r.host_unpack_s;
    r.dma_queue_max = q.max, r.dma_queue_mean = q.mean, r.dma_trace_n = q.trace_n;
  } else {
    flush_cache(p.host_flush_bytes);
    int64_t done = 0;
    const double t0 = now();
    const int rc = ddt_pack(buf, count, type, 0, staging.data(), total, &done);
    r.host_unpack_s = now() - t0;
    if (rc) return rc;
    for (int64_t i = 0; i < npkt; ++i) reqs.push_back({r.host_unpack_s, std::min(k, total - i * k), i});
    const ddt::spin::QueueOut q = ddt::spin::run_dma_queue(reqs, p, npkt);
    double link = 0;
    for (int64_t i = 0; i < npkt; ++i) {
      const int64_t off = i * k, len = std::min(k, total - off);
      std::memcpy(packed_out + off, staging.data() + off, static_cast<size_t>(len));
      link = std::max(link, q.job_done[i] + p.pcie_read_latency_ns * 1e-9) + static_cast<double>(len) * byte_s;
    }
    r.seconds = link;
    r.dma_queue_max = q.max, r.dma_queue_mean = q.mean, r.dma_trace_n = q.trace_n;
  }
  r.packets = npkt;
  r.dma_requests = npkt;
  return DDT_SUCCESS;
}

int transfer(const void* packed_in, char* packed_out, int64_t size, void* buf, int64_t count, ddt_type type, int strategy,
             const ddt_spin_params* pp, ddt_spin_report* report, bool send) {
  if (!pp || !report || strategy < 0 || strategy >= DDT_SPIN_STRATEGIES || !valid(*pp)) return DDT_ERR_ARG;
  if (int e = ddt::check_type(type)) return e;
  if (!type->committed.load(std::memory_order_acquire)) return DDT_ERR_NOT_COMMITTED;
  if (count < 0 || size < 0) return DDT_ERR_COUNT;
  const ddt_spin_params& p = *pp;
  __int128 total = static_cast<__int128>(count) * type->size;
  if (total > INT64_MAX) return DDT_ERR_OVERFLOW;
  if (total != size) return DDT_ERR_TRUNCATE;
  if (size > 0 && !(send ? static_cast<const void*>(packed_out) : packed_in)) return DDT_ERR_ARG;
  // The buffer's true byte range must be addressable (ddt_unpack's rule: no near-NULL base for
  // relative displacements) and representable.
  if (size > 0) {
    const __int128 last = static_cast<__int128>(count - 1) * type->extent();
    const __int128 lo = (last < 0 ? last : 0) + type->true_lb, hi = (last > 0 ? last : 0) + type->true_ub;
    const __int128 a = static_cast<__int128>(reinterpret_cast<uintptr_t>(buf)) + lo;
    if (lo < INT64_MIN || hi > INT64_MAX) return DDT_ERR_OVERFLOW;
    if (a < 65536 || static_cast<__int128>(reinterpret_cast<uintptr_t>(buf)) + hi > static_cast<__int128>(UINTPTR_MAX))
      return DDT_ERR_ARG;
  }
  ddt_spin_report r;
  std::memset(&r, 0, sizeof r);
  r.strategy_run = strategy;
  if (size == 0) {
    *report = r;
    return DDT_SUCCESS;
  }
  int rc = DDT_SUCCESS;
  if (strategy != DDT_SPIN_HOST) {
    auto e = std::make_unique<ddt::spin::Engine>();
    const ddt::spin::Setup s = e->setup(strategy, p, type, static_cast<char*>(buf), count, send);
    r.layout_bytes = e->layout_bytes;
    r.gamma = e->gamma;
    if (s == ddt::spin::Setup::Ok) {
      r.nic_memory_used = e->nic_bytes;
      r.nic_setup_bytes = e->setup_bytes;
      r.checkpoint_interval = e->desc.interval;
      r.checkpoints = e->checkpoints;
      r.host_setup_s = e->host_setup_s;
      rc = ddt::spin::simulate(*e, p, size, send ? packed_out : const_cast<char*>(static_cast<const char*>(packed_in)), send, r);
      if (rc == DDT_SUCCESS) {
        r.gbit_s = static_cast<double>(size) * 8.0 / r.seconds / 1e9;
        *report = r;
      }
      return rc;
    }
    // §3.2.6: the strategy does not apply, or its state does not fit: the host unpacks.
    r.fell_back = 1;
    r.strategy_run = DDT_SPIN_HOST;
  }
  rc = host_path(packed_in, packed_out, size, buf, count, type, p, send, r);
  if (rc) return rc;
  if (p.line_gbit_s > 0 && r.seconds > 0) r.gbit_s = static_cast<double>(size) * 8.0 / r.seconds / 1e9;
  *report = r;
  return DDT_SUCCESS;
}

}  // namespace

extern "C" int ddt_spin_receive(const void* packed, int64_t size, void* buf, int64_t count, ddt_type type, int strategy,
                                const ddt_spin_params* p, ddt_spin_report* report) {
  return transfer(packed, nullptr, size, buf, count, type, strategy, p, report, false);
}

extern "C" int ddt_spin_send(const void* buf, int64_t count, ddt_type type, void* packed, int64_t size, int strategy,
                             const ddt_spin_params* p, ddt_spin_report* report) {
  return transfer(nullptr, static_cast<char*>(packed), size, const_cast<void*>(buf), count, type, strategy, p, report, true);
}
