// The NIC model's time: packet arrivals at line rate (in order or a seeded permutation within a
// window), the scheduler over the HPUs (default: any idle HPU; blocked round-robin: one packet at
// a time per virtual HPU), sPIN's ordering rules (payload handlers after the header has arrived,
// the completion handler after every payload handler), handler time from counted operations
// times ddt_spin_params' cycle costs (defaults: costs.hpp), NIC memory bandwidth for checkpoint
// copies, and the DMA queue towards the host over a PCIe model (bandwidth, per-request overhead,
// TLP splitting, queue depth).
//
// What it does not capture: contention between HPUs for NIC memory other than the checkpoint
// copies' share of its bandwidth, caches on the HPUs, the HPU stalling when the DMA queue is
// full (a full queue delays the request, not the handler), and link-level flow control.
#pragma once
#include <cstdint>
#include <vector>

#include "ddtkit_spin.h"
#include "spin/engine.hpp"

namespace ddt::spin {

// A DMA request: enqueued at t, of bytes, issued by handler execution `job`.
struct DmaReq {
  double t;
  int64_t bytes;
  int64_t job;
};

struct QueueOut {
  double last = 0;   // when the last request's bytes are in host memory
  int max = 0;       // largest occupancy
  double mean = 0;   // time-averaged occupancy over [first enqueue, last]
  int64_t trace_n = 0;
  std::vector<double> job_done;  // per job: when its last request completed (0: none)
};

// Serves reqs through the PCIe FIFO (sorted by enqueue time here); writes params' trace.
QueueOut run_dma_queue(std::vector<DmaReq>& reqs, const ddt_spin_params& p, int64_t jobs);

// The stream indices of the packets in the order they arrive.
std::vector<int64_t> arrival_order(int64_t npkt, const ddt_spin_params& p);

// Service time of one request on the PCIe link.
double pcie_seconds(int64_t bytes, const ddt_spin_params& p);

// Runs the message through the NIC with e's handlers (set up for it): receive moves packed into
// the buffer, send fills packed from it. Fills the timing fields of r. DDT_ERR_CORRUPT from a handler.
int simulate(Engine& e, const ddt_spin_params& p, int64_t total, char* packed, bool send, ddt_spin_report& r);

}  // namespace ddt::spin
