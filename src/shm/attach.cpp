// Segment passing and attachments (attach.hpp).
#include "shm/attach.hpp"
#include "util/host_ranges.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>

namespace ddt::shm {

namespace {

constexpr uint64_t kSegMagic = 0x3167657374646464ULL;  // "dddtseg1"

struct SegMessage {
  uint64_t magic;
  int32_t owner;
  int32_t pad;
  uint64_t id;
  uint64_t base;
  int64_t size;
};

// The abstract address "\0ddtkit-<uid>-<job>-<rank>" and its length.
socklen_t address(const std::string& key, int rank, sockaddr_un* a) {
  std::memset(a, 0, sizeof *a);
  a->sun_family = AF_UNIX;
  const std::string name = "ddtkit-" + std::to_string(getuid()) + "-" + key + "-" + std::to_string(rank);
  const size_t n = std::min(name.size(), sizeof a->sun_path - 1);
  std::memcpy(a->sun_path + 1, name.data(), n);
  return static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + n);
}

}  // namespace

bool Attacher::open(const std::string& job_key, int rank, JobHeader* job) {
  close();
  const int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  const int on = 1;
  sockaddr_un a;
  const socklen_t n = address(job_key, rank, &a);
  if (setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &on, sizeof on) != 0 || bind(fd, reinterpret_cast<sockaddr*>(&a), n) != 0) {
    ::close(fd);
    return false;
  }
  fd_ = fd, rank_ = rank, key_ = job_key, job_ = job;
  return true;
}

void Attacher::close() {
  for (auto& [k, at] : table_) {
    host_range_remove(at.local);
    munmap(const_cast<char*>(at.local), static_cast<size_t>(at.size));
  }
  table_.clear();
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

bool Attacher::send(int peer, const SegmentRef& seg) {
  if (fd_ < 0) return false;
  SegMessage m{kSegMagic, rank_, 0, seg.id, seg.base, seg.size};
  iovec io{&m, sizeof m};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr h{};
  sockaddr_un a;
  h.msg_name = &a;
  h.msg_namelen = address(key_, peer, &a);
  h.msg_iov = &io, h.msg_iovlen = 1;
  h.msg_control = control, h.msg_controllen = sizeof control;
  cmsghdr* c = CMSG_FIRSTHDR(&h);
  c->cmsg_level = SOL_SOCKET, c->cmsg_type = SCM_RIGHTS, c->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(c), &seg.fd, sizeof(int));
  return sendmsg(fd_, &h, MSG_DONTWAIT | MSG_NOSIGNAL) == static_cast<ssize_t>(sizeof m);
}

void Attacher::receive() {
  for (;;) {
    SegMessage m{};
    iovec io{&m, sizeof m};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * 4) + CMSG_SPACE(sizeof(ucred))] = {};
    msghdr h{};
    h.msg_iov = &io, h.msg_iovlen = 1;
    h.msg_control = control, h.msg_controllen = sizeof control;
    const ssize_t got = recvmsg(fd_, &h, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
    if (got < 0) return;  // nothing more (or an error: the socket stays, nothing is mapped)
    int fd = -1;
    bool cred_ok = false;
    for (cmsghdr* c = CMSG_FIRSTHDR(&h); c; c = CMSG_NXTHDR(&h, c)) {
      if (c->cmsg_level != SOL_SOCKET) continue;
      if (c->cmsg_type == SCM_RIGHTS) {  // keep the first descriptor, close any others
        const size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t i = 0; i < k; ++i) {
          int f;
          std::memcpy(&f, CMSG_DATA(c) + i * sizeof(int), sizeof f);
          if (fd < 0) fd = f;
          else ::close(f);
        }
      } else if (c->cmsg_type == SCM_CREDENTIALS) {
        ucred u;
        std::memcpy(&u, CMSG_DATA(c), sizeof u);
        cred_ok = got == static_cast<ssize_t>(sizeof m) && m.magic == kSegMagic && m.owner >= 0 &&
                  m.owner < job_->size && m.owner != rank_ && u.uid == getuid() &&
                  u.pid == static_cast<pid_t>(job_->pid[m.owner].load(std::memory_order_acquire));
      }
    }
    if (fd < 0) continue;
    struct stat st;
    const int seals = fcntl(fd, F_GET_SEALS);
    const bool ok = cred_ok && !(h.msg_flags & MSG_CTRUNC) && m.size > 0 && fstat(fd, &st) == 0 &&
                    st.st_size >= m.size && seals >= 0 && (seals & F_SEAL_SHRINK) &&
                    m.base + static_cast<uint64_t>(m.size) > m.base;
    void* p = ok ? mmap(nullptr, static_cast<size_t>(m.size), PROT_READ, MAP_SHARED, fd, 0) : MAP_FAILED;
    ::close(fd);
    if (p == MAP_FAILED) continue;
    Attachment& at = table_[{m.owner, m.id}];
    if (at.local) {  // a resend replaces
      host_range_remove(at.local);
      munmap(const_cast<char*>(at.local), static_cast<size_t>(at.size));
    }
    at = Attachment{static_cast<const char*>(p), m.base, m.size};
    host_range_add(p, static_cast<uint64_t>(m.size));  // (util/host_ranges.hpp)
  }
}

const Attachment* Attacher::find(int peer, uint64_t id) {
  if (fd_ < 0) return nullptr;
  auto it = table_.find({peer, id});
  if (it != table_.end()) return &it->second;
  receive();
  it = table_.find({peer, id});
  return it == table_.end() ? nullptr : &it->second;
}

const Attachment* Attacher::writable(int peer, uint64_t id) {
  const Attachment* found = find(peer, id);
  if (!found) return nullptr;
  Attachment& at = const_cast<Attachment&>(*found);  // an entry of table_, which this object owns
  if (!at.writable) {
    if (mprotect(const_cast<char*>(at.local), static_cast<size_t>(at.size), PROT_READ | PROT_WRITE) != 0) return nullptr;
    at.writable = true;
  }
  return &at;
}

void Attacher::drop(int peer, uint64_t id) {
  receive();  // a descriptor still queued for it is mapped and dropped with it
  auto it = table_.find({peer, id});
  if (it == table_.end()) return;
  host_range_remove(it->second.local);
  munmap(const_cast<char*>(it->second.local), static_cast<size_t>(it->second.size));
  table_.erase(it);
}

}  // namespace ddt::shm
