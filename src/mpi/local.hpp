// Same-node messages through ddtkit's intra-node runtime (issue 11): what the interposer's
// point-to-point calls use to send a derived-type message with one copy to a process of the same
// node, while the MPI keeps the matching.
//
// The protocol. The sender posts the message in the runtime (src/shm: layout memoized by content
// hash, mapped heap or CMA, the rendezvous protocols) under a private tag, a sequence number per
// peer, and then sends the MPI a 64-byte ticket on the user's communicator with the user's
// destination and tag. The MPI matches the ticket as it would have matched the message (ordering,
// wildcards, probes, cancel of a receive all stay the MPI's); the receive that gets it reads the
// sequence number and takes the message from the runtime, straight into its own buffer and type,
// and reports the message's bytes in its status. The sender's request completes when the runtime
// send does (after the receiver's copy: a synchronous send completes only after the match).
//
// What a receive tells apart: every intercepted receive of 64 bytes or more from a process that
// may be on this node checks whether exactly 64 bytes arrived that start with the job's 128-bit
// magic (drawn at MPI_Init by world rank 0) and name the status's source; anything else is data.
// A ticket is only ever sent for messages of at least runtime_min_bytes() (>= 64), so a receive
// too short for a ticket would have been truncated anyway.
//
// Progress. The runtime moves only inside ddtkit's calls, and an MPI program may wait in calls
// the interposer never sees (a barrier). So nothing may need a process's progress after it has
// posted a non-blocking send: the runtime is told so (ddt::shm::set_passive_isends: the receiver
// copies the whole message by itself), a non-blocking send is posted only when its RTS can be
// written at once (ddt::shm::can_post) and its pieces are long enough for CMA or it lies in the
// mapped heap, and the receiver finishes its copy inside the call that matched the ticket. A
// blocking send (MPI_Send, MPI_Ssend, MPI_Rsend) waits inside the call, progressing the runtime
// and the MPI, so any protocol and mechanism may need it.
#pragma once
#include <atomic>
#include <mpi.h>

#include <cstdint>
#include <mutex>

#include "ddtkit.h"
#include "mpi/shim.hpp"

namespace ddtmpi {

// 64 bytes: the receive may name any type of the message's signature, and MPICH aborts a receive
// whose bytes are not a whole number of its type's basic elements (typerep_yaksa_pack.c: "element_size
// < 0 || actual_unpack_bytes % element_size == 0"): 40 bytes into MPI_C_DOUBLE_COMPLEX (16 B)
// aborted the receiver of a vector of them. Basic elements are 1 to 32 bytes, powers of two
// (MPI_C_LONG_DOUBLE_COMPLEX, MPI_COMPLEX32 the largest), so 64 bytes are whole elements of all.
struct Ticket {
  uint64_t magic[2];
  int32_t world;     // the sender's rank in MPI_COMM_WORLD
  uint32_t seq;      // the runtime tag of the message
  int64_t bytes;     // packed bytes of the message
  int64_t reserved[4];  // zero
};
static_assert(sizeof(Ticket) == 64, "a ticket is 64 bytes on every ABI");

// Starts the runtime among this node's processes (MPI_Init*: collective over MPI_COMM_WORLD),
// unless DDTKIT_RUNTIME=0. DDTKIT_PRETEND_NODES=k (tests and benchmarks only) splits each node's
// processes into k pretend nodes of consecutive world ranks, so that one machine shows both
// paths and their mix. Any failure leaves the runtime off on every process of the node.
void local_init();
// Finishes what is in flight and leaves the runtime (MPI_Finalize, before the MPI's).
void local_finalize();
inline bool local_on() { return hot.local_on.load(std::memory_order_relaxed); }  // State::on's mirror

// The runtime rank of rank `rank` of comm (of its remote group for an intercommunicator), or -1
// where it is not a process of this node, is this process, or the runtime is off.
int local_peer(MPI_Comm comm, int rank);
// Whether a receive from `source` (MPI_ANY_SOURCE included) may get a ticket.
bool may_be_local(MPI_Comm comm, int source);
// may_be_local's last answer in this thread for one (comm, source), valid while hot.comms is
// the value it was made at: every receive of 64 bytes or more of a derived type asks, and the
// way through local_peer and the communicator's ranks cost 61 instructions of a 512 B vector's
// round trip under Open MPI, whose own are about 3,900 (callgrind). A communicator's ranks never
// change while it lives, and forget_comm (its handle freed: the MPI may reuse it) bumps hot.comms.
// Trivial and __thread for the reason PeekHit is (shim.hpp).
struct LocalHit {
  MPI_Comm comm;
  int source;
  bool local;
  uint64_t comms;
};
extern __thread LocalHit last_local __attribute__((tls_model("initial-exec")));
inline bool may_be_local_hit(MPI_Comm comm, int source) {
  const LocalHit& h = last_local;
  if (h.comm == comm && h.source == source && h.comms == hot.comms.load(std::memory_order_acquire)) return h.local;
  return may_be_local(comm, source);
}
// Forgets comm (MPI_Comm_free, MPI_Comm_disconnect: the MPI may reuse its handle).
void forget_comm(MPI_Comm comm);
// The next number of a collective that comm's ranks move through the runtime (0, 1, ...; every
// rank counts them alike; forget_comm starts a reused handle at 0 again).
uint32_t next_coll_seq(MPI_Comm comm);
// Blocking collectives through the runtime where every rank of comm takes that way alike
// (local_coll.cpp says when); *taken says whether it did, and then the MPI code is the call's result.
int local_alltoall(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount, MPI_Datatype rtype,
                   MPI_Comm comm, bool* taken);
int local_allgather(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount, MPI_Datatype rtype,
                    MPI_Comm comm, bool* taken);
int local_bcast(void* buf, int count, MPI_Datatype dt, int root, MPI_Comm comm, bool* taken);
int local_gather(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount, MPI_Datatype rtype, int root,
                 MPI_Comm comm, bool* taken);
int local_scatter(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount, MPI_Datatype rtype, int root,
                  MPI_Comm comm, bool* taken);

// Messages of fewer packed bytes go the staged way (DDTKIT_RUNTIME_MIN, at least 64; by default
// 8 KiB under MPICH and 4 KiB under Open MPI, measured: see local.cpp).
int64_t runtime_min_bytes();
// The same for messages of predefined types and of derived types whose data is one contiguous
// piece (TypeInfo::Contig), which the MPI would otherwise move as they are
// (DDTKIT_RUNTIME_CONTIG_MIN, at least 64; by default 8 KiB under MPICH and 3.5 KiB under
// Open MPI, measured: see local.cpp), except for the sizes runtime_contig_gap names.
int64_t runtime_contig_min_bytes();
bool runtime_contig_gap(int64_t bytes);
// Whether a message of count elements of a Pack type that the runtime could only move with two
// copies (its eager cells or its pipelined ones) goes to the MPI as it is instead: under Open MPI,
// for the messages the pass rule hands it (pass.cpp), unless DDTKIT_RUNTIME_MIN was set (tests
// that route every message through the runtime); never under MPICH. See local.cpp.
bool native_pipeline(const TypeInfo& info, int64_t count);
// Packed bytes up to which such a message never takes the runtime, whatever its buffer and peer,
// unless its type is small_pieces, or of short_pieces past kHeapEagerMax (one from the heap
// takes it: p2p.cpp's note_as_is): local_send_peer moves it only past the runtime's eager cells,
// with one copy. The runtime's eager size under Open MPI (where native_pipeline holds), 0
// elsewhere.
int64_t native_pipeline_upto();
// Collectives whose chunks have fewer packed bytes stay with the MPI (DDTKIT_RUNTIME_COLL_MIN, at
// least 64; by default 1 MiB, measured: see local.cpp).
int64_t runtime_coll_min_bytes();
// The same for MPI_Bcast, which needs no agreement (DDTKIT_RUNTIME_BCAST_MIN; by default 256 KiB
// or DDTKIT_RUNTIME_COLL_MIN where lower: see local.cpp).
int64_t runtime_bcast_min_bytes();

// The runtime is single-threaded: the interposer calls it under this lock (MPI_THREAD_MULTIPLE).
std::unique_lock<std::mutex> runtime_lock();

// A ticket for a message of `bytes` to runtime rank peer, with the next sequence number.
Ticket make_ticket(int peer, int64_t bytes);
// Whether the n bytes at p that a receive on comm got from comm rank `source` are a ticket; if
// so *t is it and *peer its sender's runtime rank.
bool read_ticket(const void* p, int64_t n, MPI_Comm comm, int source, Ticket* t, int* peer);
// Whether 16 bytes are this job's ticket magic (false while the runtime is off).
bool ticket_magic(const void* p16);
// The same for the 16 bytes that n pieces hold in order (piece i: len[i] bytes at user + off[i]).
bool ticket_magic(const char* user, const int64_t* off, const uint8_t* len, int n);
// False where the 64 bytes a receive of type ti (not staged) got into buf cannot be a ticket,
// told from their first 16 bytes; true where they may be (take_ticket then reads the whole).
bool maybe_ticket(const TypeInfo& ti, const void* buf);

// Drives the MPI's progress engine once, without completing anything of the user's.
void poke_mpi();

// A send through the runtime (local_transfer.cpp): count elements of a translated type at buf to
// runtime rank peer, in MPI send mode `mode` (DDT_SEND_*), from a blocking call or not.
struct LocalSend {
  TypeRef info;  // keeps the translation alive while the runtime reads it
  const void* buf = nullptr;
  int64_t count = 0;
  int peer = -1, mode = DDT_SEND_STANDARD;
  bool blocking = false;
  int heap_rts = -1;  // local_send_peer's answer of rendezvous_from_heap, handed to isend_as (-1: none)
  ddt_request req = DDT_REQUEST_NULL;
  Ticket ticket{};
  int error = DDT_SUCCESS;
  // Posts the message in the runtime and makes its ticket (next sequence number); an MPI code.
  int post();
  // Progresses the runtime; true once the send is complete (error then says how it ended).
  bool poll();
  // poll() until complete, driving the MPI's progress too; the MPI code of how it ended.
  int wait();
};

// The runtime rank a send of count elements of info at buf to dest on comm goes to, or -1 for
// the staged way: a Pack type, at least runtime_min_bytes(), a same-node peer, not a message
// native_pipeline hands to the MPI unless the runtime moves it with one copy; and for a
// non-blocking send also its RTS written at once and a copy that needs nothing more of this
// process (pieces long enough for CMA, or the buffer in the mapped heap). Persistent sends skip
// the check of the moment (a start cannot fall back to the staged way). *heap_rts (if given) is
// set to 1 where the decision asked ddt::shm::rendezvous_from_heap and it said yes, for the send's
// isend_as (LocalSend::heap_rts) not to ask again; left as is otherwise.
int local_send_peer(const TypeInfo& info, const void* buf, int64_t count, MPI_Comm comm, int dest, bool blocking,
                    bool persistent = false, int* heap_rts = nullptr);

// For a receive that has completed with status st: whether what arrived is a ticket, and if so
// the message it stands for taken from the runtime into the receive's buffer (s: the receive as
// prepared; its staging, if any, holds what arrived) and st's count set to the message's bytes.
// Returns an MPI code; *taken says whether it was a ticket.
int take_ticket(const Side& s, MPI_Comm comm, MPI_Status& st, bool* taken);
// The message of ticket t (from runtime rank peer) into the receive s, st's count set to its
// bytes: take_ticket's second half, for tickets that a probe took from the MPI (probe.cpp).
int receive_ticket(const Side& s, MPI_Comm comm, const Ticket& t, int peer, MPI_Status& st);
// The same with the receive type's translation already looked up (take_ticket's).
int receive_ticket(const Side& s, MPI_Comm comm, const Ticket& t, int peer, MPI_Status& st, const TypeRef& info);

// Messages a probe had to take from the MPI to read them (probe.cpp): a probe that finds 64
// bytes from a same-node process receives them to see whether they are a ticket (it must report
// the message's own size), and keeps what it took here, in order, until a receive takes it.
struct Stashed {
  MPI_Comm comm = MPI_COMM_NULL;
  int source = 0, tag = 0;
  bool ticket = false;
  Ticket t{};                  // ticket: what it names
  int peer = -1;
  char data[sizeof(Ticket)];   // not a ticket: the 64 bytes of the message
};
// Takes the first stashed message on comm that a receive (source, tag) matches; false if none.
bool take_stashed(MPI_Comm comm, int source, int tag, Stashed* out);
// How many messages probes have stashed, read without the stash's lock: a receive checks it
// first, and one that finds none goes to the MPI (a probe in another thread at that moment is
// not ordered before the receive anyway).
extern std::atomic<size_t> stashed_count;
// Takes the stashed message that *msg (from MPI_Mprobe / MPI_Improbe) stands for; false if it
// stands for none (a message the MPI holds).
bool take_matched(MPI_Message* msg, Stashed* out);
// Delivers a stashed message into the receive s: the runtime's copy or the 64 bytes; st gets
// the message's source, tag and bytes.
int deliver_stashed(const Stashed& e, const Side& s, MPI_Status& st);

// Whether a receive of count elements of dt from source on comm could get a ticket (the runtime
// is on, the buffer holds 64 bytes, the source may be on this node).
bool may_get_ticket(const void* buf, int64_t count, MPI_Datatype dt, MPI_Comm comm, int source);
// The same for a type of `size` bytes an element (TypeInfo::size), already looked up.
inline bool may_get_ticket(int64_t size, int64_t count, MPI_Comm comm, int source) {
  if (!local_on() || source == MPI_PROC_NULL || count <= 0) return false;
  if (size <= 0 || count < static_cast<int64_t>((sizeof(Ticket) + size - 1) / size)) return false;
  return source == MPI_ANY_SOURCE || may_be_local_hit(comm, source);
}

// Counts of messages that went through the runtime, for DDTKIT_EXPECT_RUNTIME (tests: finalize
// fails on a process that has same-node peers and moved none).
void count_local(bool send);

}  // namespace ddtmpi
