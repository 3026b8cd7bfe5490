// The NIC model's configurations: the paper's (§5.1) as defaults, and the presets.
#include <cstring>

#include "ddtkit_spin.h"
#include "spin/costs.hpp"

extern "C" int ddt_spin_defaults(ddt_spin_params* p) {
  if (!p) return DDT_ERR_ARG;
  std::memset(p, 0, sizeof *p);
  p->packet_bytes = 2048;            // §5.1: 2 KiB of payload per packet
  p->line_gbit_s = 200;              // §5.1: 200 Gbit/s NIC
  p->hpus = 16;                      // §3.2.5 / Fig. 8: 16 Cortex-A15 HPUs
  p->hpu_ghz = 0.8;                  // §5.1: 800 MHz
  p->nic_memory_bytes = 6 << 20;     // §4: "a local memory with more than 6 MiB"
  p->nic_memory_gbyte_s = 50.0 * 1.073741824;  // §5.1: 50 GiB/s
  p->packet_buffer_bytes = 4 << 20;  // B_pkt (§3.2.4; not given in the paper): 4 MiB
  p->pcie_gbyte_s = 32.0 * 16.0 * 128.0 / 130.0 / 8.0;  // §5.1: x32 PCIe Gen4, 128b/130b
  p->pcie_request_overhead_bytes = 24;  // TLP header (16 B) + sequence number, LCRC, framing
  p->pcie_max_payload = 256;         // a common PCIe max payload size
  p->pcie_read_latency_ns = 500;     // §5.3: the iovec fetch, a PCIe read of 500 ns
  p->dma_queue_depth = 256;          // Fig. 14: occupancy stays under 160 requests
  p->epsilon = 0.2;                  // §5.1: epsilon = 0.2
  p->checkpoint_bytes = ddt::spin::kPaperCheckpointBytes;
  p->scheduler = DDT_SPIN_SCHED_AUTO;
  p->blocked_dp = 1;
  p->iovec_entries = 32;             // §5.3: ConnectX-3's scatter-gather limit
  p->host_flush_bytes = 64 << 20;
  // The handler cost model: costs.hpp holds the defaults and their sources.
  p->start_cycles = ddt::spin::kStartCycles;
  p->block_cycles = ddt::spin::kBlockCycles;
  p->general_block_cycles = ddt::spin::kGeneralBlockCycles;
  p->catchup_block_cycles = ddt::spin::kCatchupBlockCycles;
  p->catchup_byte_cycles = ddt::spin::kCatchupByteCycles;
  p->seek_step_cycles = ddt::spin::kSeekStepCycles;
  p->run_cycles = ddt::spin::kRunCycles;
  return DDT_SUCCESS;
}

extern "C" int ddt_spin_preset(const char* name, ddt_spin_params* p) {
  if (!name || !p) return DDT_ERR_ARG;
  ddt_spin_params q;
  ddt_spin_defaults(&q);
  if (std::strcmp(name, "paper") == 0) {
  } else if (std::strcmp(name, "paper32") == 0) {
    q.hpus = 32;  // §5.1's simulated NIC: 32 Cortex-A15 at 800 MHz
  } else if (std::strcmp(name, "pspin") == 0) {
    // PsPIN (Di Girolamo et al., ISCA'21): 4 clusters of 8 RISC-V HPUs at 1 GHz, 400 Gbit/s,
    // 1 KiB packets; 4 MiB of L2 packet and handler memory. The model has no clusters: the 32
    // HPUs share one scheduler, which PsPIN's cluster-local scheduling approximates for
    // packet-parallel handlers.
    q.hpus = 32;
    q.hpu_ghz = 1.0;
    q.line_gbit_s = 400;
    q.packet_bytes = 1024;
    q.nic_memory_bytes = 4 << 20;
  } else {
    return DDT_ERR_ARG;
  }
  *p = q;
  return DDT_SUCCESS;
}

extern "C" const char* ddt_spin_strategy_name(int s) {
  static const char* const names[DDT_SPIN_STRATEGIES] = {"host", "specialized", "hpu_local", "ro_cp", "rw_cp", "seek", "iovec"};
  return s >= 0 && s < DDT_SPIN_STRATEGIES ? names[s] : nullptr;
}
