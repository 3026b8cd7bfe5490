// Passing heap segments between the processes of a job, and the attachments a process holds to
// its peers' segments (FALCON-X 4.4's attachment cache).
//
// Each process binds a Unix datagram socket in the abstract namespace, named by the user, the job
// and the rank. An owner sends a segment's memfd there with SCM_RIGHTS, before the first message
// that names the segment (so it has arrived when that message is read); the receiver maps it
// read-only on first use and keeps the mapping until the owner says it has freed the segment.
// A receiver whose buffer lies in its heap sends that segment the same way before a CTS that
// gives the sender a share (RPUT, COOP): the sender makes its mapping writable (writable()) and
// writes its share through it with plain stores, as the receiver reads. Only a segment a CTS has
// named is ever made writable, and only the receive's bytes are written (the receive's layout,
// address and count are checked against the segment first, rendezvous.cpp). The trust is no
// wider than CMA's (process_vm_writev by the same user), and it needs no ptrace rights.
//
// Trust: anyone on the host can send to an abstract socket, so every datagram is checked: the
// kernel-supplied credentials (SO_PASSCRED) must be this user's and the pid the job registered for
// the claimed owner rank; the memfd must be sealed against shrinking (so the owner cannot make a
// reader fault) and at least as large as claimed. Anything else is closed and dropped.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "shm/heap.hpp"
#include "shm/job.hpp"

namespace ddt::shm {

struct Attachment {
  const char* local = nullptr;  // this process's mapping of the segment
  uintptr_t owner_base = 0;     // the segment's address in its owner
  int64_t size = 0;
  bool writable = false;        // mapped for writing too (writable())
  // The local address of the owner's [addr, addr + len), or null if that is not inside.
  const char* translate(uintptr_t addr, uint64_t len) const {
    if (addr < owner_base || addr - owner_base > static_cast<uint64_t>(size) ||
        len > static_cast<uint64_t>(size) - (addr - owner_base))
      return nullptr;
    return local + (addr - owner_base);
  }
};

class Attacher {
 public:
  // Binds this rank's socket; false (errno set) on failure, when the heap mechanism is not used.
  bool open(const std::string& job_key, int rank, JobHeader* job);
  void close();
  bool usable() const { return fd_ >= 0; }
  // Sends seg's descriptor to peer; false when it could not be sent now.
  bool send(int peer, const SegmentRef& seg);
  // Peer's segment id, mapped: from the table, else from the datagrams that have arrived.
  const Attachment* find(int peer, uint64_t id);
  // The same, its mapping made writable (once: mprotect); null when it cannot be (not arrived, or
  // the descriptor was not opened for writing).
  const Attachment* writable(int peer, uint64_t id);
  void drop(int peer, uint64_t id);

 private:
  void receive();  // maps every segment whose datagram has arrived
  int fd_ = -1;
  int rank_ = -1;
  std::string key_;
  JobHeader* job_ = nullptr;
  std::map<std::pair<int, uint64_t>, Attachment> table_;
};

}  // namespace ddt::shm
