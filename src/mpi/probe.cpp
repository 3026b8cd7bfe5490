// Probes of messages that may be tickets (local.hpp), and the stash of what they took.
//
// A probe must report the message as the application sent it, but a ticket is 64 bytes to the
// MPI. So where a probe finds exactly 64 bytes from a process of this node, it takes that message
// from the MPI (MPI_Mprobe by the found source and tag, then MPI_Mrecv) to read it, and keeps it
// in the stash: the probe reports the message's own bytes (a ticket's) or the 64 bytes (data that
// only looked like one), and the next receive that matches takes it from the stash, in the order
// the probes found them, before asking the MPI.
//
// Order. A stashed message was the earliest of its source that the probe's (source, tag) matched,
// so a later receive with the same tag or MPI_ANY_TAG from that source gets it first, as MPI's
// non-overtaking rule says, except in one case: a probe for a specific tag stashes a message while
// an earlier one of the same source with another tag is still in the MPI, and a receive with
// MPI_ANY_TAG follows. Then the stashed (later) message is delivered first. Telling the two apart
// would need the MPI's arrival order, which no MPI call gives.
//
// Matched probes (MPI_Mprobe, MPI_Improbe) of a stashed message return a genuine MPI_Message of
// the MPI's own: that of an empty message this process sends itself on a private communicator,
// which MPI_Mrecv / MPI_Imrecv recognise (take_matched), receive, and replace by the stashed one.
//
// Every receive looks in the stash first: MPI_Recv, MPI_Irecv, MPI_Sendrecv(_replace),
// MPI_Isendrecv (through MPI_Irecv), and a persistent receive at each MPI_Start, whose MPI
// request is then not started (Pending::held, requests.cpp: it completes as an inactive one).
#include <atomic>
#include <deque>
#include <mutex>
#include <unordered_map>

#include "mpi/local.hpp"
#include "mpi/shim.hpp"

namespace ddtmpi {

std::atomic<size_t> stashed_count{0};  // the stash's items.size()

namespace {

struct Stash {
  std::mutex mu;
  std::deque<Stashed> items;                       // in the order probes took them
  std::unordered_map<uint64_t, Stashed> matched;   // by the MPI_Message handed out for each
  MPI_Comm self = MPI_COMM_NULL;                   // for the empty messages behind matched handles
};
Stash& stash() {
  static Stash* s = new Stash;
  return *s;
}

bool matches(const Stashed& e, MPI_Comm comm, int source, int tag) {
  return e.comm == comm && (source == MPI_ANY_SOURCE || source == e.source) && (tag == MPI_ANY_TAG || tag == e.tag);
}

// The first stashed message (source, tag) matches on comm; items.end() if none. Lock held.
std::deque<Stashed>::iterator first(Stash& s, MPI_Comm comm, int source, int tag) {
  for (auto it = s.items.begin(); it != s.items.end(); ++it)
    if (matches(*it, comm, source, tag)) return it;
  return s.items.end();
}

// The status a probe reports for a stashed message.
void report(const Stashed& e, MPI_Status* st) {
  if (st == MPI_STATUS_IGNORE) return;
  st->MPI_SOURCE = e.source, st->MPI_TAG = e.tag, st->MPI_ERROR = MPI_SUCCESS;
  PMPI_Status_set_cancelled(st, 0);
  PMPI_Status_set_elements_x(st, MPI_BYTE, e.ticket ? e.t.bytes : static_cast<MPI_Count>(sizeof e.data));
}

// The status the MPI gave a probe into our local st, into the user's: every field but MPI_ERROR,
// which a probe leaves as it was (MPICH's probes do not write it, so st's is garbage; mpi4py's
// test_util_pkl5 asserts the user's stays 0).
void give(const MPI_Status& st, MPI_Status* user) {
  if (user == MPI_STATUS_IGNORE) return;
  const int error = user->MPI_ERROR;
  *user = st;
  user->MPI_ERROR = error;
}

// Whether a message the MPI found (status st) may be a ticket: the probe must read it.
bool suspect(MPI_Comm comm, const MPI_Status& st) {
  return local_on() && received_bytes(st) == static_cast<int64_t>(sizeof(Ticket)) && may_be_local(comm, st.MPI_SOURCE);
}

// Receives the message *m (64 bytes) into a stash entry.
Stashed read_in(MPI_Comm comm, MPI_Message* m) {
  Stashed e;
  MPI_Status st;
  PMPI_Mrecv(e.data, sizeof e.data, MPI_BYTE, m, &st);
  e.comm = comm, e.source = st.MPI_SOURCE, e.tag = st.MPI_TAG;
  e.ticket = read_ticket(e.data, sizeof e.data, comm, st.MPI_SOURCE, &e.t, &e.peer);
  return e;
}

// Takes the message the MPI found (st) by its exact source and tag, into the stash's end.
Stashed stash_found(MPI_Comm comm, const MPI_Status& st) {
  MPI_Message m;
  PMPI_Mprobe(st.MPI_SOURCE, st.MPI_TAG, comm, &m, MPI_STATUS_IGNORE);
  Stashed e = read_in(comm, &m);
  Stash& s = stash();
  std::lock_guard<std::mutex> lock(s.mu);
  s.items.push_back(e);
  stashed_count.fetch_add(1, std::memory_order_relaxed);
  return e;
}

// A genuine MPI_Message standing for e: an empty message to this process, matched now.
MPI_Message hand_out(const Stashed& e) {
  Stash& s = stash();
  std::lock_guard<std::mutex> lock(s.mu);
  if (s.self == MPI_COMM_NULL) PMPI_Comm_dup(MPI_COMM_SELF, &s.self);
  MPI_Message m = MPI_MESSAGE_NULL;
  MPI_Request r = MPI_REQUEST_NULL;  // a send to oneself may wait for its receive (MPICH's does)
  PMPI_Isend(nullptr, 0, MPI_BYTE, 0, 0, s.self, &r);
  PMPI_Mprobe(0, 0, s.self, &m, MPI_STATUS_IGNORE);
  PMPI_Request_free(&r);
  s.matched[handle_key(m)] = e;
  return m;
}

// The first stashed message that (source, tag) matches, copied to *out and taken out of the
// stash when take is set (a receive, a matched probe) or left there (a probe); false if none.
bool first_stashed(MPI_Comm comm, int source, int tag, Stashed* out, bool take) {
  Stash& s = stash();
  if (stashed_count.load(std::memory_order_relaxed) == 0) return false;
  std::lock_guard<std::mutex> lock(s.mu);
  auto it = first(s, comm, source, tag);
  if (it == s.items.end()) return false;
  *out = *it;
  if (take) {
    s.items.erase(it);
    stashed_count.fetch_sub(1, std::memory_order_relaxed);
  }
  return true;
}

}  // namespace

bool take_stashed(MPI_Comm comm, int source, int tag, Stashed* out) { return first_stashed(comm, source, tag, out, true); }

bool take_matched(MPI_Message* msg, Stashed* out) {
  Stash& s = stash();
  if (*msg == MPI_MESSAGE_NULL || *msg == MPI_MESSAGE_NO_PROC) return false;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    auto it = s.matched.find(handle_key(*msg));
    if (it == s.matched.end()) return false;
    *out = it->second;
    s.matched.erase(it);
  }
  PMPI_Mrecv(nullptr, 0, MPI_BYTE, msg, MPI_STATUS_IGNORE);  // the empty message behind it
  return true;
}

}  // namespace ddtmpi

using namespace ddtmpi;

extern "C" {

int MPI_Iprobe(int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status) {
  if (disabled() || source == MPI_PROC_NULL || !local_on()) return PMPI_Iprobe(source, tag, comm, flag, status);
  Stashed e;
  if (first_stashed(comm, source, tag, &e, false)) {
    *flag = 1;
    report(e, status);
    return MPI_SUCCESS;
  }
  MPI_Status st;
  int rc = PMPI_Iprobe(source, tag, comm, flag, &st);
  if (rc != MPI_SUCCESS || !*flag || !suspect(comm, st)) {
    if (rc == MPI_SUCCESS && *flag) give(st, status);
    return rc;
  }
  report(stash_found(comm, st), status);
  return MPI_SUCCESS;
}

int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status* status) {
  if (disabled() || source == MPI_PROC_NULL || !local_on()) return PMPI_Probe(source, tag, comm, status);
  Stashed e;
  if (first_stashed(comm, source, tag, &e, false)) {
    report(e, status);
    return MPI_SUCCESS;
  }
  MPI_Status st;
  int rc = PMPI_Probe(source, tag, comm, &st);
  if (rc != MPI_SUCCESS || !suspect(comm, st)) {
    if (rc == MPI_SUCCESS) give(st, status);
    return rc;
  }
  report(stash_found(comm, st), status);
  return MPI_SUCCESS;
}

int MPI_Improbe(int source, int tag, MPI_Comm comm, int* flag, MPI_Message* msg, MPI_Status* status) {
  if (disabled() || source == MPI_PROC_NULL || !local_on()) return PMPI_Improbe(source, tag, comm, flag, msg, status);
  Stashed e;
  if (first_stashed(comm, source, tag, &e, true)) {
    *flag = 1;
    *msg = hand_out(e);
    report(e, status);
    return MPI_SUCCESS;
  }
  MPI_Status st;
  int rc = PMPI_Improbe(source, tag, comm, flag, msg, &st);
  if (rc != MPI_SUCCESS || !*flag || !suspect(comm, st)) {
    if (rc == MPI_SUCCESS && *flag) give(st, status);
    return rc;
  }
  e = read_in(comm, msg);
  *msg = hand_out(e);
  report(e, status);
  return MPI_SUCCESS;
}

int MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message* msg, MPI_Status* status) {
  if (disabled() || source == MPI_PROC_NULL || !local_on()) return PMPI_Mprobe(source, tag, comm, msg, status);
  Stashed e;
  if (first_stashed(comm, source, tag, &e, true)) {
    *msg = hand_out(e);
    report(e, status);
    return MPI_SUCCESS;
  }
  MPI_Status st;
  int rc = PMPI_Mprobe(source, tag, comm, msg, &st);
  if (rc != MPI_SUCCESS || !suspect(comm, st)) {
    if (rc == MPI_SUCCESS) give(st, status);
    return rc;
  }
  e = read_in(comm, msg);
  *msg = hand_out(e);
  report(e, status);
  return MPI_SUCCESS;
}

}  // extern "C"
