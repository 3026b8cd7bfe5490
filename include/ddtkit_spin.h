/* ddtkit's NIC offload model (issue 14): a packet-level discrete-event model of a sPIN NIC
 * (Di Girolamo et al., SC'19, "Network-accelerated non-contiguous memory transfers") whose
 * packet handlers are ddtkit code that really moves the bytes. A message of `size` packed bytes
 * arrives (or leaves) as packets; a scheduler hands one handler execution per packet to the
 * NIC's HPUs; each handler scatters its payload into the receive buffer (or gathers it from the
 * send buffer) through the type's layout and counts what it did (blocks, catch-up blocks, seek
 * steps, checkpoint bytes copied); the counts times per-operation costs (ddt_spin_params'
 * *_cycles fields, whose defaults and sources are in src/spin/costs.hpp; checkpoint copies at the
 * NIC memory bandwidth) give the handler's simulated time, and its DMA writes go through a PCIe
 * model. The result is a simulated time and the real bytes, which the caller can check.
 *
 * C ABI, 64-bit sizes, error codes of ddtkit.h. Not thread-safe per call: one call simulates one
 * message; calls on different buffers may run in parallel. */
#ifndef DDTKIT_SPIN_H
#define DDTKIT_SPIN_H

#include <stdint.h>

#include "ddtkit.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The datatype-processing strategies. The first six are the paper's (§3.2), SEEK is ddtkit's:
 *   DDT_SPIN_HOST         the NIC writes the packed stream contiguously to host memory, then the
 *                         host unpacks it (ddt_unpack timed on this CPU with a cold cache);
 *   DDT_SPIN_SPECIALIZED  closed-form handlers: vector (one division per packet) and
 *                         indexed_block / indexed (binary search over the block list, §3.2.3);
 *                         any other layout falls back to HOST;
 *   DDT_SPIN_HPU_LOCAL    one segment (cursor) per HPU, blocked round-robin with dp = 1: each
 *                         handler catches up over the packets the other HPUs took;
 *   DDT_SPIN_RO_CP        read-only checkpoints every dr bytes: a handler copies the nearest
 *                         checkpoint at or before its packet and catches up from it;
 *   DDT_SPIN_RW_CP        progressing checkpoints: blocked round-robin with dp = dr / k and one
 *                         virtual HPU per checkpoint, master copies reset it when packets come
 *                         out of order; dr from the paper's model (epsilon) within NIC memory;
 *   DDT_SPIN_SEEK         each handler seeks its packet's first byte from the layout itself
 *                         (O(depth + log n)); NIC memory holds the serialised layout only;
 *   DDT_SPIN_IOVEC        the Portals 4 baseline: the NIC holds iovec_entries entries of the
 *                         host-built iovec list and fetches the next ones with a PCIe read. */
enum { DDT_SPIN_HOST, DDT_SPIN_SPECIALIZED, DDT_SPIN_HPU_LOCAL, DDT_SPIN_RO_CP, DDT_SPIN_RW_CP, DDT_SPIN_SEEK, DDT_SPIN_IOVEC };
/* Number of strategies (they are numbered 0 .. DDT_SPIN_STRATEGIES - 1). */
#define DDT_SPIN_STRATEGIES 7

/* Scheduling policies (§3.2.1). AUTO: each strategy's own. DEFAULT: any idle HPU takes the next
 * ready packet. BLOCKED_RR: sequences of blocked_dp consecutive packets go to one virtual HPU,
 * which runs them one at a time on any idle HPU and yields it when none is ready. HPU_LOCAL
 * (dp = 1, P vHPUs), RW_CP (dp = dr / k, one vHPU per checkpoint) and IOVEC (one engine, stream
 * order) always use their own policy, as the paper defines them; the others follow this field. */
enum { DDT_SPIN_SCHED_AUTO, DDT_SPIN_SCHED_DEFAULT, DDT_SPIN_SCHED_BLOCKED_RR };

/* The NIC, the network and the host interface. ddt_spin_defaults fills every field with the
 * paper's configuration (§5.1); a program may then change any of them. */
typedef struct {
  int64_t packet_bytes;      /* payload per packet, default 2048 */
  double  line_gbit_s;       /* default 200 */
  int     hpus;              /* default 16 */
  double  hpu_ghz;           /* default 0.8 */
  int64_t nic_memory_bytes;  /* for handler state and checkpoints, default 6 MiB (§4: "more than 6 MiB") */
  uint64_t reorder_seed;     /* 0: packets in order; otherwise a seeded permutation */
  int     reorder_window;    /* packets a packet may move by (0: any) */
  double  nic_memory_gbyte_s;  /* NIC memory bandwidth shared by the HPUs, default 50 GiB/s (§5.1) */
  int64_t packet_buffer_bytes; /* NIC packet buffer (B_pkt of §3.2.4), default 4 MiB */
  double  pcie_gbyte_s;        /* host interface data rate, default x32 Gen4: 32 x 16 GT/s x 128/130 / 8 */
  int64_t pcie_request_overhead_bytes; /* per DMA request (TLP header, framing), default 24 */
  int64_t pcie_max_payload;    /* bytes per TLP; larger requests are split, default 256 */
  double  pcie_read_latency_ns; /* a NIC read from host memory (iovec fetch, send-side gather), default 500 */
  int     dma_queue_depth;     /* DMA write requests the queue holds before handlers wait, default 256 */
  double  epsilon;             /* RW_CP's scheduling overhead bound (§3.2.4), default 0.2 */
  int64_t checkpoint_bytes;    /* bytes of one checkpoint (the paper's MPITypes segment), default 612 */
  int64_t checkpoint_interval; /* dr in bytes for RO_CP / RW_CP (RW_CP rounds it up to packets); 0: the
                                * paper's model (§3.2.4): the largest dr whose scheduling overhead
                                * stays within epsilon, within the packet buffer, and giving at least
                                * one sequence per HPU. Where that dr's checkpoints (and RW_CP's
                                * masters) do not fit NIC memory, the NIC memory bound is tried
                                * first: the smallest dr (whole packets) whose checkpoints fit, if
                                * the epsilon and packet-buffer bounds still allow it; only where no
                                * dr meets all three does the host unpack (fell_back). A dr set here
                                * is used as given: if its checkpoints do not fit, the host unpacks. */
  int     scheduler;           /* DDT_SPIN_SCHED_*, default AUTO */
  int     blocked_dp;          /* packets per sequence for BLOCKED_RR when the strategy leaves it open, default 1 */
  int     iovec_entries;       /* v of the Portals 4 baseline, default 32 (ConnectX-3's scatter-gather limit) */
  int64_t host_flush_bytes;    /* bytes written before the host unpack to make its cache cold, default 64 MiB; 0: warm */
  /* Optional DMA queue trace (Fig. 15): where non-null, up to dma_trace_cap samples (time in
   * seconds, queue length) are written, one per change of the queue, and the report says how many. */
  double  *dma_trace_t;
  int32_t *dma_trace_q;
  int64_t  dma_trace_cap;
  /* The handler cost model: cycles at hpu_ghz per operation a handler counted while it ran.
   * Defaults: src/spin/costs.hpp, which gives each one's source (the paper's text and this CPU's
   * timings of the same handler code). Each must be finite and >= 0 (DDT_ERR_ARG otherwise). */
  double  start_cycles;         /* per handler start (and the completion handler), default 64 */
  double  block_cycles;         /* per block moved by SPECIALIZED, SEEK and IOVEC, default 10 */
  double  general_block_cycles; /* per block found by the MPITypes interpreter (HPU_LOCAL, RO_CP, RW_CP), default 20 */
  double  catchup_block_cycles; /* per block walked in catch-up (HPU_LOCAL, RO_CP, RW_CP), default 12 */
  double  catchup_byte_cycles;  /* per byte walked in catch-up, default 0: the paper's MPITypes catch-up
                                 * goes block by block, so catchup_block_cycles carries it; this term
                                 * models a catch-up whose cost grows with the bytes skipped */
  double  seek_step_cycles;     /* per division or binary-search step of a seek or lookup, default 6 */
  double  run_cycles;           /* SEEK: per run of blocks after the first (the cursor's descent), default 12 */
} ddt_spin_params;

/* What one simulated transfer did. Times are simulated seconds unless the name says measured. */
typedef struct {
  double  seconds;             /* simulated time from the first packet to the last byte in host memory */
  double  gbit_s;              /* message bits / seconds */
  int64_t nic_memory_used;     /* peak bytes of handler state and checkpoints */
  int     fell_back;           /* 1 if the strategy could not run on the NIC and the host unpacked */
  int     strategy_run;        /* the strategy that ran: the one asked for, or DDT_SPIN_HOST */
  int64_t packets;             /* payload packets of the message */
  int64_t handlers;            /* payload handler executions */
  double  handler_init_s;      /* summed over handlers: start, descriptor checks, checkpoint copies */
  double  handler_setup_s;     /* summed: catch-up, resets and seeks before the first byte */
  double  handler_block_s;     /* summed: finding each contiguous block and issuing its DMA */
  double  handler_max_s;       /* the longest handler */
  int64_t blocks;              /* contiguous pieces moved by handlers (DMA requests before PCIe splitting) */
  int64_t catchup_blocks;      /* blocks walked without moving data (catch-up) */
  int64_t seek_steps;          /* divisions and binary-search steps of seeks and specialised lookups */
  int64_t checkpoint_copies;   /* checkpoint or segment copies (RO_CP per handler, RW_CP resets) */
  int64_t resets;              /* segments reset to an earlier state (packets out of order) */
  int64_t dma_requests;        /* DMA write (receive) or read (send) requests issued */
  int     dma_queue_max;       /* largest DMA queue occupancy */
  double  dma_queue_mean;      /* time-averaged occupancy while the message was processed */
  int64_t dma_trace_n;         /* samples written to params' dma_trace_* */
  int64_t checkpoint_interval; /* dr chosen (RO_CP, RW_CP), 0 otherwise */
  int64_t checkpoints;         /* checkpoints stored in NIC memory (RW_CP counts the masters too) */
  int64_t layout_bytes;        /* serialised layout, what SEEK and the general handlers keep on the NIC */
  int64_t nic_setup_bytes;     /* bytes the host moved to the NIC to set the strategy up (Fig. 16's annotation) */
  double  host_setup_s;        /* measured on this CPU: building descriptors, checkpoints or the iovec list */
  double  host_unpack_s;       /* measured on this CPU: ddt_unpack / ddt_pack for HOST (0 otherwise) */
  double  gamma;               /* average contiguous blocks per packet */
  int64_t catchup_bytes;       /* stream bytes walked without moving data (catch-up) */
} ddt_spin_report;

/* Fills every field of *p with the paper's configuration (16 HPUs). DDT_ERR_ARG for NULL. */
int ddt_spin_defaults(ddt_spin_params *p);

/* Fills *p with a named configuration: "paper" (= ddt_spin_defaults), "paper32" (32 HPUs, the
 * simulated system of §5.1), "pspin" (PsPIN, ISCA'21: 32 HPUs in 4 clusters at 1 GHz,
 * 400 Gbit/s, 1 KiB packets). DDT_ERR_ARG for NULL or an unknown name, *p untouched. */
int ddt_spin_preset(const char *name, ddt_spin_params *p);

/* The strategy's name ("host", "specialized", "hpu_local", "ro_cp", "rw_cp", "seek", "iovec"), or
 * NULL for a number out of range. */
const char *ddt_spin_strategy_name(int strategy);

/* Receive: the packed stream (packed, size) arrives as packets and is unpacked into (buf, count, type) by the strategy's handlers. */
/* size must equal count x the type's size (DDT_ERR_TRUNCATE otherwise). DDT_ERR_ARG for a NULL
 * packed, params or report, an unknown strategy or invalid parameters; DDT_ERR_TYPE /
 * DDT_ERR_NOT_COMMITTED / DDT_ERR_COUNT as ddt_unpack, DDT_ERR_OVERFLOW for a buffer span past
 * 64 bits; on these errors nothing is written. A strategy that does not apply, or whose state does
 * not fit NIC memory, runs HOST and sets fell_back. A handler that finds its state or descriptor
 * corrupted stops with DDT_ERR_CORRUPT (the packets before it have been delivered; nothing is ever
 * written outside the type's bytes of the buffer). Overlapping typemaps receive in the order the
 * handlers ran, which MPI leaves undefined. */
int ddt_spin_receive(const void *packed, int64_t size, void *buf, int64_t count, ddt_type type,
                     int strategy, const ddt_spin_params *p, ddt_spin_report *report);

/* Send: outbound handlers gather (buf, count, type) into the packets whose payloads, in stream order, land in packed. */
/* The same arguments and errors as ddt_spin_receive; HOST packs with ddt_pack first (timed), then
 * the NIC sends the contiguous stream. */
int ddt_spin_send(const void *buf, int64_t count, ddt_type type, void *packed, int64_t size,
                  int strategy, const ddt_spin_params *p, ddt_spin_report *report);

#ifdef __cplusplus
}
#endif

#endif /* DDTKIT_SPIN_H */
