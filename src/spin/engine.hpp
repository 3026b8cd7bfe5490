// The NIC's handlers: code that really moves one packet's payload between the packet and the
// host buffer through the type's layout, and counts the operations it performed (the NIC model
// converts them to time with ddt_spin_params' cycle costs, whose defaults are costs.hpp's). One
// Engine per simulated message.
//
// What lives in "NIC memory" is kept here as it would be there: the serialised layout, decoded
// and validated by the codec (decode_layout), descriptors of the specialised handlers, segment
// states and checkpoints. Everything a handler reads from NIC memory carries a magic and a
// checksum over its fields, checked at every handler start; a state or descriptor that fails is
// rejected with DDT_ERR_CORRUPT before anything is followed. Every DMA a handler issues is also
// checked against the buffer's true byte range (as an IOMMU would), so a descriptor entry that
// passed the header check but points elsewhere is rejected too, and nothing is written outside.
//
// Strategies (ddtkit_spin.h): SPECIALIZED (closed-form vector, indexed_block by division,
// indexed by binary search), HPU_LOCAL / RO_CP / RW_CP (the paper's MPITypes segments, here
// ddtkit cursors, with catch-up), SEEK (a cursor seeks each packet's first byte), IOVEC (the
// host-built iovec list, walked in stream order).
#pragma once
#include <sys/uio.h>

#include <cstdint>
#include <string>
#include <vector>

#include "cpu/cursor.hpp"
#include "ddtkit_spin.h"
#include "layout/layout.hpp"

namespace ddt::spin {

// Operations one handler execution performed.
struct Counts {
  int64_t blocks = 0;         // contiguous pieces moved (one DMA request each)
  int64_t runs = 0;           // op calls of the cursor (SEEK's run starts)
  int64_t catchup = 0;        // blocks walked without moving data
  int64_t catchup_bytes = 0;  // stream bytes those blocks hold (the per-byte catch-up cost)
  int64_t seek_steps = 0;     // divisions and binary-search steps
  int64_t copies = 0;         // segment / checkpoint copies
  int64_t resets = 0;         // segment reset to an earlier state
  int64_t fetches = 0;        // iovec fetches from host memory
};

// Why a strategy does not run on the NIC (the caller falls back to the host).
enum class Setup { Ok, NotApplicable, NoFit };

constexpr uint64_t kDescMagic = 0x5350494e44455343ULL;  // "SPINDESC"
constexpr uint64_t kSegMagic = 0x5350494e53454721ULL;   // "SPINSEG!"

// A segment (the paper's MPITypes segment; here a cursor) in NIC memory, with its check word.
struct Seg {
  uint64_t magic = kSegMagic;
  int64_t slot = 0;   // which vHPU / checkpoint it belongs to
  int64_t pos = 0;    // stream byte the cursor stands at
  uint64_t check = 0;
  Cursor cur;
  explicit Seg(const Cursor& c) : cur(c) {}
};

// The descriptor every strategy's handlers read first: what the message is and where the
// strategy's tables are. kind: 0 vector, 1 indexed_block, 2 indexed (SPECIALIZED); 3 general.
struct Desc {
  uint64_t magic = kDescMagic;
  int strategy = 0;
  int kind = 3;
  int64_t total = 0;    // packed bytes of the message
  int64_t es = 0;       // packed bytes of one element
  int64_t ext = 0;      // extent
  int64_t count = 0;    // elements
  int64_t disp = 0;     // root displacement
  int64_t n = 1, stride = 0, width = 0;  // vector: n blocks of width at stride per element
  int64_t entries = 0;  // indexed: blocks per element (table sizes below)
  int64_t interval = 0; // checkpoint interval (RO_CP, RW_CP)
  uint64_t check = 0;
};

uint64_t desc_check(const Desc& d);
uint64_t seg_check(const Seg& s);

class Engine {
 public:
  // Prepares strategy s for count elements of type at buf (gather: the send side). Ok, or why
  // the strategy does not run (NotApplicable: no handler for this layout; NoFit: its state does
  // not fit NIC memory). Does not touch buf. The host time it takes is host_setup_s.
  Setup setup(int s, const ddt_spin_params& p, ddt_type type, char* buf, int64_t count, bool gather);

  // The payload handler of the packet holding stream bytes [off, off + len), payload its bytes
  // (written from on receive, into on send); the state it uses follows from off (HPU_LOCAL: the
  // vHPU of the packet; RO_CP / RW_CP: the checkpoint at or before off).
  // dma receives the size of each DMA request issued. DDT_ERR_CORRUPT: a state or descriptor
  // failed its check, or a DMA would fall outside the buffer (nothing of that DMA is written).
  int handle(int64_t off, int64_t len, char* payload, Counts& c, std::vector<int64_t>& dma);

  Engine() = default;
  Engine(const Engine&) = delete;  // the cursors point into nic_layout
  Engine& operator=(const Engine&) = delete;

  // Whether n bytes at p lie inside the buffer's true byte range (the DMA check).
  bool inside(uintptr_t p, int64_t n) const;

  // The vHPU of the packet at stream offset off under the strategy's own policy (-1: any HPU).
  int64_t vhpu_of(int64_t off) const;
  int64_t vhpus() const;

  // What the strategy keeps in NIC memory, and what the host moved there.
  int64_t nic_bytes = 0;
  int64_t setup_bytes = 0;
  int64_t layout_bytes = 0;
  int64_t checkpoints = 0;
  double host_setup_s = 0;
  double gamma = 0;  // average blocks per packet (for the checkpoint interval model)
  bool general_blocks = false;  // blocks cost general_block_cycles (the MPITypes strategies)

  // NIC memory, exposed so that tests can corrupt it.
  Desc desc;
  Layout nic_layout;
  std::string serialized;             // the layout's bytes as the host installed them
  std::vector<int64_t> idx_disp, idx_prefix;  // specialised indexed tables (prefix has entries + 1)
  std::vector<Seg> segs;               // HPU_LOCAL: per HPU; RO_CP: checkpoints; RW_CP: working copies
  std::vector<Seg> masters;            // RW_CP's master copies
  std::vector<struct iovec> iov;       // IOVEC: the host's list
  std::vector<int64_t> iov_prefix;     // stream offset of each iovec entry
  Seg iov_state{Cursor(nic_layout, 0, 0, 0)};  // IOVEC: entry index in slot, stream pos in pos

 private:
  template <bool G>
  int vector_h(int64_t off, int64_t len, char* payload, Counts& c, std::vector<int64_t>& dma);
  template <bool G>
  int indexed_h(int64_t off, int64_t len, char* payload, Counts& c, std::vector<int64_t>& dma);
  template <bool G>
  int segment_h(int64_t off, int64_t len, char* payload, Counts& c, std::vector<int64_t>& dma);
  template <bool G>
  int seek_h(int64_t off, int64_t len, char* payload, Counts& c, std::vector<int64_t>& dma);
  template <bool G>
  int iovec_h(int64_t off, int64_t len, char* payload, Counts& c, std::vector<int64_t>& dma);
  int64_t pick_interval(const ddt_spin_params& p, int s);
  int64_t eps_interval_ = 0;  // the largest dr the epsilon and packet-buffer bounds allow (0: user's dr)

  int strategy_ = 0;
  bool gather_ = false;
  uintptr_t buf_ = 0, lo_ = 0, hi_ = 0;  // the buffer and the true byte range DMA may touch
  int64_t v_ = 32;                        // iovec entries the NIC holds
  int hpus_ = 1;
  int64_t k_ = 1;  // packet payload bytes
  bool check_seg(const Seg& s, int64_t slot) const;
};

// Steps a seek of stream byte pos takes in L (one division per element / VEC level, a binary
// search's comparisons per SEQ level): what the seek handler counts.
int64_t seek_steps(const Layout& L, int64_t es, int64_t pos);

}  // namespace ddt::spin
