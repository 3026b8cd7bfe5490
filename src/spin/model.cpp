// The NIC model's discrete-event part (model.hpp).
#include "spin/model.hpp"

#include <algorithm>
#include <deque>
#include <functional>
#include <queue>
#include <random>

namespace ddt::spin {

double pcie_seconds(int64_t bytes, const ddt_spin_params& p) {
  const int64_t tlps = std::max<int64_t>(1, (bytes + p.pcie_max_payload - 1) / p.pcie_max_payload);
  return static_cast<double>(bytes + tlps * p.pcie_request_overhead_bytes) / (p.pcie_gbyte_s * 1e9);
}

std::vector<int64_t> arrival_order(int64_t npkt, const ddt_spin_params& p) {
  std::vector<int64_t> order(static_cast<size_t>(npkt));
  for (int64_t i = 0; i < npkt; ++i) order[i] = i;
  if (p.reorder_seed == 0 || npkt < 2) return order;
  std::mt19937_64 rng(p.reorder_seed);
  if (p.reorder_window <= 0) {
    std::shuffle(order.begin(), order.end(), rng);
    return order;
  }
  // Packet i gets the key i + u, u uniform in [0, w + 1): every packet with a smaller index by
  // more than w sorts before it and every one larger by more than w after, so it moves by at most
  // w; packets w apart may still swap (with u in [0, w], as before, they could not, and a window
  // of 1 left every packet in order).
  std::uniform_real_distribution<double> u(0.0, static_cast<double>(p.reorder_window) + 1.0);
  std::vector<std::pair<double, int64_t>> key(static_cast<size_t>(npkt));
  for (int64_t i = 0; i < npkt; ++i) key[i] = {static_cast<double>(i) + u(rng), i};
  std::sort(key.begin(), key.end());
  for (int64_t i = 0; i < npkt; ++i) order[i] = key[i].second;
  return order;
}

QueueOut run_dma_queue(std::vector<DmaReq>& reqs, const ddt_spin_params& p, int64_t jobs) {
  QueueOut q;
  q.job_done.assign(static_cast<size_t>(std::max<int64_t>(jobs, 0)), 0.0);
  if (reqs.empty()) return q;
  std::stable_sort(reqs.begin(), reqs.end(), [](const DmaReq& a, const DmaReq& b) { return a.t < b.t; });
  std::deque<double> out;  // completion times of the requests in the queue, FIFO
  std::vector<std::pair<double, int>> ev;  // +1 at enqueue, -1 at completion
  ev.reserve(reqs.size() * 2);
  double server = 0;
  for (const DmaReq& r : reqs) {
    double t = r.t;
    while (!out.empty() && out.front() <= t) out.pop_front();
    if (static_cast<int>(out.size()) >= p.dma_queue_depth) {  // full: wait for the oldest to drain
      t = out.front();
      out.pop_front();
    }
    const double begin = std::max(t, server);
    server = begin + pcie_seconds(r.bytes, p);
    out.push_back(server);
    ev.push_back({t, +1});
    ev.push_back({server, -1});
    if (r.job >= 0 && r.job < jobs) q.job_done[r.job] = std::max(q.job_done[r.job], server);
  }
  q.last = server;
  std::sort(ev.begin(), ev.end());  // at equal times completions (-1) come first
  int occ = 0;
  double prev = ev.front().first, area = 0;
  const double first = prev;
  for (const auto& e : ev) {
    area += occ * (e.first - prev);
    prev = e.first;
    occ += e.second;
    q.max = std::max(q.max, occ);
    if (p.dma_trace_cap > 0 && q.trace_n < p.dma_trace_cap) {
      p.dma_trace_t[q.trace_n] = e.first;
      p.dma_trace_q[q.trace_n] = occ;
      ++q.trace_n;
    }
  }
  q.mean = prev > first ? area / (prev - first) : 0;
  return q;
}

int simulate(Engine& e, const ddt_spin_params& p, int64_t total, char* packed, bool send, ddt_spin_report& r) {
  const int64_t k = p.packet_bytes, npkt = (total + k - 1) / k;
  const double hz = p.hpu_ghz * 1e9, byte_s = 8.0 / (p.line_gbit_s * 1e9);
  const int strategy = e.desc.strategy;
  // Each HPU's share of the NIC memory bandwidth, for checkpoint and segment copies.
  const double copy_s = static_cast<double>(p.checkpoint_bytes) / (p.nic_memory_gbyte_s * 1e9 / p.hpus);
  const double block_cycles = e.general_blocks ? p.general_block_cycles : p.block_cycles;

  std::vector<int64_t> order = arrival_order(npkt, p);
  // Arrival of each packet (its last byte) at line rate in arrival order. The send side's
  // outbound engine creates the handler requests as fast as the link takes the packets.
  std::vector<double> arrive(static_cast<size_t>(npkt));
  double clock = 0;
  for (int64_t a = 0; a < npkt; ++a) {
    const int64_t i = order[a];
    clock += static_cast<double>(std::min(k, total - i * k)) * byte_s;
    arrive[i] = clock;
  }
  // Payload handlers wait for the header handler (sPIN's rule), which runs on the first packet
  // to arrive: every packet carries the matching information, so with reordering the message is
  // matched by whichever packet comes first. No header handler is installed for datatype
  // processing (§3.2.2), so it costs nothing beyond that packet's arrival.
  const double header = send || npkt == 0 ? 0.0 : arrive[order[0]];
  std::vector<double> ready(static_cast<size_t>(npkt));
  for (int64_t i = 0; i < npkt; ++i) ready[i] = std::max(arrive[i], header);
  // IOVEC walks its list in stream order: packet i is ready for its one engine once every packet
  // before it is, so it takes them in stream order.
  if (strategy == DDT_SPIN_IOVEC) {
    for (int64_t i = 1; i < npkt; ++i) ready[i] = std::max(ready[i], ready[i - 1]);
    std::sort(order.begin(), order.end());
  }
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return ready[a] < ready[b]; });

  // The scheduler: every packet belongs to a virtual HPU (its own under the default policy; the
  // strategy's under blocked round-robin: HPU_LOCAL, RW_CP, IOVEC, or blocked_dp packets when
  // asked for). A vHPU runs one packet at a time, in the order its packets became ready, on any
  // idle HPU; a vHPU with nothing ready yields its HPU. Ready vHPUs take idle HPUs first come,
  // first served.
  const bool blocked_asked = p.scheduler == DDT_SPIN_SCHED_BLOCKED_RR;
  const int phys = strategy == DDT_SPIN_IOVEC ? 1 : p.hpus;
  std::vector<int64_t> vhpu(static_cast<size_t>(npkt));
  int64_t nv = 0;
  for (int64_t i = 0; i < npkt; ++i) {
    int64_t v = e.vhpu_of(i * k);
    if (v < 0) v = blocked_asked ? i / p.blocked_dp : -1;
    vhpu[i] = v;
    nv = std::max(nv, v + 1);
  }
  for (int64_t i = 0; i < npkt; ++i)
    if (vhpu[i] < 0) vhpu[i] = nv + i;  // default policy: a vHPU per packet
  // Each vHPU's ready packets, a FIFO linked through nxt (head -1: empty).
  std::vector<int64_t> head(static_cast<size_t>(nv + npkt), -1), tail(static_cast<size_t>(nv + npkt), -1),
      nxt(static_cast<size_t>(npkt), -1);
  std::vector<char> active(static_cast<size_t>(nv + npkt), 0);  // running or in the ready queue
  std::deque<int64_t> runnable;
  using Done = std::pair<double, int64_t>;  // completion time, vHPU
  std::priority_queue<Done, std::vector<Done>, std::greater<Done>> running;
  int idle = phys;

  std::vector<DmaReq> reqs;
  std::vector<int64_t> dma;
  std::vector<double> job_end(static_cast<size_t>(npkt), 0.0);
  double all_end = 0;
  int64_t next = 0;  // next packet (in order) to become ready
  double now_t = 0;  // the simulation clock
  for (int64_t dispatched = 0; dispatched < npkt;) {
    if (runnable.empty() || idle == 0) {
      // Advance the clock to the next event: a packet becoming ready, or a handler finishing.
      const double ta = next < npkt ? ready[order[next]] : 1e300;
      const double tc = running.empty() ? 1e300 : running.top().first;
      const double t = std::min(ta, tc);
      now_t = t;
      while (!running.empty() && running.top().first <= t) {
        const int64_t v = running.top().second;
        running.pop();
        ++idle;
        active[v] = 0;
        if (head[v] >= 0) active[v] = 1, runnable.push_back(v);
      }
      while (next < npkt && ready[order[next]] <= t) {
        const int64_t i = order[next++], v = vhpu[i];
        (tail[v] >= 0 ? nxt[tail[v]] : head[v]) = i;
        tail[v] = i;
        if (!active[v]) active[v] = 1, runnable.push_back(v);
      }
      continue;
    }
    const int64_t v = runnable.front();
    runnable.pop_front();
    const int64_t i = head[v];
    head[v] = nxt[i];
    if (head[v] < 0) tail[v] = -1;
    --idle;
    ++dispatched;
    const int64_t off = i * k, len = std::min(k, total - off);
    const double start = now_t;  // the event that made the packet or an HPU available
    Counts c;
    dma.clear();
    if (int rc = e.handle(off, len, packed + off, c, dma)) return rc;
    // Time of this handler, by phase (Fig. 12): init (start, RO_CP's checkpoint copy), setup
    // (catch-up, resets, seeks, iovec fetches), blocks.
    const double reset_copies = static_cast<double>(c.resets), plain_copies = static_cast<double>(c.copies - c.resets);
    const double init = p.start_cycles / hz + plain_copies * copy_s;
    const double setup = (static_cast<double>(c.catchup) * p.catchup_block_cycles +
                          static_cast<double>(c.catchup_bytes) * p.catchup_byte_cycles +
                          static_cast<double>(c.seek_steps) * p.seek_step_cycles) / hz +
                         reset_copies * copy_s + static_cast<double>(c.fetches) * p.pcie_read_latency_ns * 1e-9;
    const double blocks = (static_cast<double>(c.blocks) * block_cycles +
                           (strategy == DDT_SPIN_SEEK ? static_cast<double>(std::max<int64_t>(0, c.runs - 1)) * p.run_cycles : 0.0)) / hz;
    const double dur = init + setup + blocks;
    const double end = start + dur;
    running.push({end, v});
    job_end[i] = end;
    all_end = std::max(all_end, end);
    // Non-blocking DMA: the requests leave the handler spread over its block phase.
    const double n = static_cast<double>(dma.size());
    for (size_t j = 0; j < dma.size(); ++j)
      reqs.push_back({start + init + setup + blocks * (static_cast<double>(j) + 1) / n, dma[j], i});

    r.handler_init_s += init;
    r.handler_setup_s += setup;
    r.handler_block_s += blocks;
    r.handler_max_s = std::max(r.handler_max_s, dur);
    r.blocks += c.blocks;
    r.catchup_blocks += c.catchup;
    r.catchup_bytes += c.catchup_bytes;
    r.seek_steps += c.seek_steps;
    r.checkpoint_copies += c.copies;
    r.resets += c.resets;
    ++r.handlers;
  }
  r.packets = npkt;
  r.dma_requests = static_cast<int64_t>(reqs.size());
  if (!send) {
    // The completion handler: after every payload handler, a zero-byte DMA that raises the event.
    const double done = all_end + p.start_cycles / hz;
    reqs.push_back({done, 0, -1});
    const QueueOut q = run_dma_queue(reqs, p, npkt);
    r.seconds = std::max(done, q.last);
    r.dma_queue_max = q.max, r.dma_queue_mean = q.mean, r.dma_trace_n = q.trace_n;
  } else {
    // A packet leaves once its handler has gathered it (its DMA reads back after the read
    // latency), one at a time at line rate.
    const QueueOut q = run_dma_queue(reqs, p, npkt);
    std::vector<std::pair<double, int64_t>> ready(static_cast<size_t>(npkt));
    for (int64_t i = 0; i < npkt; ++i)
      ready[i] = {std::max(job_end[i], q.job_done[i] > 0 ? q.job_done[i] + p.pcie_read_latency_ns * 1e-9 : 0.0), i};
    std::sort(ready.begin(), ready.end());
    double link = 0;
    for (const auto& x : ready) link = std::max(link, x.first) + static_cast<double>(std::min(k, total - x.second * k)) * byte_s;
    r.seconds = link;
    r.dma_queue_max = q.max, r.dma_queue_mean = q.mean, r.dma_trace_n = q.trace_n;
  }
  return DDT_SUCCESS;
}

}  // namespace ddt::spin
