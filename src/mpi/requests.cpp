// Requests with work attached (a staged receive to unpack, a staging buffer to release, a
// persistent send to pack at each start) and the completion functions that run that work.
//
// Every completion function looks up the work of its requests BEFORE calling the MPI, because
// the MPI sets a completed non-persistent request to MPI_REQUEST_NULL, and may hand its handle
// to the next new request. A request with no work attached (predefined types, contiguous
// layouts) costs one hash lookup, and nothing at all while no request has work.
//
// A request that is `busy` (a send through the runtime whose receiver has not copied yet; see
// Pending) is incomplete whatever the MPI says of its ticket: the functions below poll it, leave
// it to the MPI only once it is done, and meanwhile keep the array's other requests moving, since
// one of them may be the receive whose ticket the peer waits on.
#include <sched.h>

#include <atomic>
#include <cstring>
#include <mutex>
#include <unordered_map>

#include "mpi/local.hpp"
#include "mpi/shim.hpp"

namespace ddtmpi {

namespace {

uint64_t key(MPI_Request r) { return handle_key(r); }

struct Registry {
  std::mutex mu;
  std::unordered_map<uint64_t, PendingRef> map;
  std::vector<std::pair<MPI_Request, PendingRef>> adopted;
};
Registry& reg() {
  static Registry* r = new Registry;
  return *r;
}

// hot.live: the registry's map.size() + adopted.size(), read without the lock.
bool none() { return hot.live.load(std::memory_order_relaxed) == 0; }

// Work of each request of an array, or false when none has any.
bool snapshot(int n, const MPI_Request reqs[], std::vector<PendingRef>& out) {
  if (none() || n <= 0) return false;
  out.assign(n, nullptr);
  bool any = false;
  for (int i = 0; i < n; ++i) any |= (out[i] = find(reqs[i])) != nullptr;
  return any;
}

// Statuses to complete with, where the user passed MPI_STATUS(ES)_IGNORE.
MPI_Status* statuses(MPI_Status* user, std::vector<MPI_Status>& local, int n) {
  if (user != MPI_STATUSES_IGNORE) return user;
  local.resize(n > 0 ? n : 1);
  return local.data();
}

// ---- busy requests ------------------------------------------------------------------------------

bool is_busy(const PendingRef& p) { return p && p->active && p->busy && p->busy(); }

bool has_busy(const std::vector<PendingRef>& ps) {
  for (const PendingRef& p : ps)
    if (p && p->busy) return true;
  return false;
}

// Polls every busy request once; busy[i] says which still are.
bool any_busy(int n, const std::vector<PendingRef>& ps, std::vector<char>& busy) {
  bool any = false;
  busy.assign(n, 0);
  for (int i = 0; i < n; ++i)
    if (is_busy(ps[i])) busy[i] = 1, any = true;
  return any;
}

// The receives of the array that the MPI has completed get their work run now (their tickets
// taken), the MPI keeping the requests: a peer may be waiting for that copy.
void deliver_ready(int n, const MPI_Request reqs[], const std::vector<PendingRef>& ps, const std::vector<char>& busy) {
  for (int i = 0; i < n; ++i) {
    const PendingRef& p = ps[i];
    if (!p || busy[i] || p->busy || !p->active || p->delivered || reqs[i] == MPI_REQUEST_NULL) continue;
    int flag = 0;
    MPI_Status st;
    if (PMPI_Request_get_status(reqs[i], &flag, &st) == MPI_SUCCESS && flag) deliver_early(p, st);
  }
}

void pause(int i) {
  if (i % 16 == 15) poke_mpi();  // see LocalSend::wait
  if (i > 64) sched_yield();     // an oversubscribed node: let the peer run
}

// Waits until no request of the array is busy, keeping the others moving.
void wait_not_busy(int n, const MPI_Request reqs[], const std::vector<PendingRef>& ps) {
  std::vector<char> busy;
  for (int i = 0; any_busy(n, ps, busy); ++i) {
    deliver_ready(n, reqs, ps, busy);
    deliver_pending();
    pause(i);
  }
}

// The array with its busy requests hidden (MPI_REQUEST_NULL), for the MPI's any/some calls, and
// back: the MPI may have completed (nulled) the others.
std::vector<MPI_Request> masked(int n, const MPI_Request reqs[], const std::vector<char>& busy) {
  std::vector<MPI_Request> m(reqs, reqs + n);
  for (int i = 0; i < n; ++i)
    if (busy[i]) m[i] = MPI_REQUEST_NULL;
  return m;
}
void unmask(int n, MPI_Request reqs[], const std::vector<MPI_Request>& m, const std::vector<char>& busy) {
  for (int i = 0; i < n; ++i)
    if (!busy[i]) reqs[i] = m[i];
}

// The first request of an array whose message came from the stash (Pending::held), or -1.
int held_first(int n, const std::vector<PendingRef>& ps) {
  for (int i = 0; i < n; ++i)
    if (ps[i] && ps[i]->held && ps[i]->active) return i;
  return -1;
}

using SomeFn = int (*)(int, MPI_Request[], int*, int[], MPI_Status[]);

// MPI_Waitsome and MPI_Testsome: the requests that completed (outcount of them, or none) get
// their work run. With busy requests: Testsome over the others, repeated for Waitsome until
// one completes.
template <SomeFn F, bool Wait>
int some(int n, MPI_Request reqs[], int* outcount, int indices[], MPI_Status sts[]) {
  std::vector<PendingRef> ps;
  if (disabled() || !snapshot(n, reqs, ps)) return F(n, reqs, outcount, indices, sts);
  std::vector<MPI_Request> before(reqs, reqs + n);
  std::vector<MPI_Status> local;
  MPI_Status* st = statuses(sts, local, n);
  if (held_first(n, ps) >= 0) {  // complete already; the MPI would call them inactive
    int k = 0, rc = MPI_SUCCESS;
    for (int i = 0; i < n; ++i)
      if (ps[i] && ps[i]->held && ps[i]->active) {
        PMPI_Wait(&reqs[i], &st[k]);  // inactive: returns at once with an empty status
        indices[k] = i;
        rc = first_error(rc, complete(before[i], ps[i], st[k++]));
      }
    *outcount = k;
    return rc;
  }
  int rc = MPI_SUCCESS;
  std::vector<char> busy;
  if (has_busy(ps)) {
    for (int i = 0;; ++i) {
      if (!any_busy(n, ps, busy)) {
        rc = F(n, reqs, outcount, indices, st);
        break;
      }
      std::vector<MPI_Request> m = masked(n, reqs, busy);
      rc = PMPI_Testsome(n, m.data(), outcount, indices, st);
      unmask(n, reqs, m, busy);
      if (rc != MPI_SUCCESS || (*outcount != MPI_UNDEFINED && *outcount > 0)) break;
      if (!Wait) {
        *outcount = 0;  // the busy ones are still active
        break;
      }
      pause(i);
    }
  } else {
    rc = F(n, reqs, outcount, indices, st);
  }
  int rc2 = MPI_SUCCESS;
  if (*outcount != MPI_UNDEFINED)
    for (int k = 0; k < *outcount; ++k)
      if (ps[indices[k]]) rc2 = first_error(rc2, complete(before[indices[k]], ps[indices[k]], st[k]));
  return first_error(rc, rc2);
}

}  // namespace

void attach(MPI_Request req, PendingRef p) {
  if (req == MPI_REQUEST_NULL) return;
  p->req = req;
  Registry& r = reg();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.map.find(key(req));
  if (it == r.map.end()) {
    hot.live.fetch_add(1, std::memory_order_relaxed);
  } else if (it->second->ticket) {
    hot.tickets.fetch_sub(1, std::memory_order_relaxed);
  }
  if (p->ticket) hot.tickets.fetch_add(1, std::memory_order_relaxed);
  r.map[key(req)] = std::move(p);
}

PendingRef find(MPI_Request req) {
  if (none() || req == MPI_REQUEST_NULL) return nullptr;
  Registry& r = reg();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.map.find(key(req));
  return it == r.map.end() ? nullptr : it->second;
}

void detach(MPI_Request req, const PendingRef& p) {
  Registry& r = reg();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.map.find(key(req));
  if (it != r.map.end() && it->second == p) {
    if (p->ticket) hot.tickets.fetch_sub(1, std::memory_order_relaxed);
    r.map.erase(it);
    hot.live.fetch_sub(1, std::memory_order_relaxed);
  }
}

// hot.tickets counts the entries of the registry's map that are receives that may get a ticket.
bool thread_multiple() {
  static const bool multiple = [] {
    int level = MPI_THREAD_SINGLE;
    PMPI_Query_thread(&level);
    return level == MPI_THREAD_MULTIPLE;
  }();
  return multiple;
}

void deliver_pending() {
  if (!tickets_pending()) return;
  std::vector<PendingRef> todo;
  {
    Registry& r = reg();
    std::lock_guard<std::mutex> lock(r.mu);
    for (auto& kv : r.map) {
      const PendingRef& p = kv.second;
      if (p->ticket && p->active && !p->delivered && !p->busy) todo.push_back(p);
    }
  }
  for (const PendingRef& p : todo) {
    int flag = 0;
    MPI_Status st;
    if (PMPI_Request_get_status(p->req, &flag, &st) == MPI_SUCCESS && flag) deliver_early(p, st);
  }
}

// PMPI_Waitall the same way.
int waitall_delivering(int n, MPI_Request reqs[], MPI_Status sts[]) {
  if (!tickets_pending()) return PMPI_Waitall(n, reqs, sts);
  for (int i = 0;; ++i) {
    int flag = 0;
    const int rc = PMPI_Testall(n, reqs, &flag, sts);
    if (rc != MPI_SUCCESS || flag) return rc;
    deliver_pending();
    if (i > 64) sched_yield();
  }
}

int wait_delivering(MPI_Request* req, MPI_Status* st) {
  if (!tickets_pending()) return PMPI_Wait(req, st);
  for (int i = 0;; ++i) {
    int flag = 0;
    const int rc = PMPI_Test(req, &flag, st);
    if (rc != MPI_SUCCESS || flag) return rc;
    deliver_pending();
    if (i > 64) sched_yield();
  }
}

namespace {
int empty_query(void*, MPI_Status* st) {  // the Pending writes the status that counts
  st->MPI_SOURCE = MPI_UNDEFINED, st->MPI_TAG = MPI_UNDEFINED, st->MPI_ERROR = MPI_SUCCESS;
  PMPI_Status_set_elements(st, MPI_BYTE, 0);
  PMPI_Status_set_cancelled(st, 0);
  return MPI_SUCCESS;
}
int nothing_to_free(void*) { return MPI_SUCCESS; }
}  // namespace

int nothing_to_cancel(void*, int) { return MPI_SUCCESS; }

int completed_request(MPI_Request* req) {
  int rc = PMPI_Grequest_start(empty_query, nothing_to_free, nothing_to_cancel, nullptr, req);
  return rc != MPI_SUCCESS ? rc : PMPI_Grequest_complete(*req);
}

int complete(MPI_Request before, const PendingRef& p, MPI_Status& st) {
  if (!p || !p->active) return MPI_SUCCESS;  // an inactive persistent request completes empty
  int rc = MPI_SUCCESS;
  if (p->delivered) {
    // The status the early delivery gave, whole: the MPI's may now be empty (an unstarted held
    // request's; and MPICH 5.0.2 gives a persistent receive that MPI_Request_get_status saw
    // complete an empty status at its MPI_Wait: probe_test's second start read tag -1).
    rc = p->delivered_rc;
    const int error = st.MPI_ERROR;  // the MPI's call sets it, or leaves it, as the standard says
    st = p->delivered_status;
    st.MPI_ERROR = error;
  } else if (p->complete) {
    rc = p->complete(st);
  }
  p->delivered = false, p->delivered_rc = MPI_SUCCESS, p->held = false;
  if (p->persistent) p->active = false;
  else detach(before, p);
  return rc;
}

int deliver_early(const PendingRef& p, MPI_Status& st) {
  const int rc = p->complete ? p->complete(st) : MPI_SUCCESS;
  p->delivered = true, p->delivered_rc = rc, p->delivered_status = st;
  return rc;
}

void adopt(MPI_Request req, PendingRef p) {
  detach(req, p);
  Registry& r = reg();
  std::lock_guard<std::mutex> lock(r.mu);
  r.adopted.emplace_back(req, std::move(p));
  hot.live.fetch_add(1, std::memory_order_relaxed);
}

void progress_adopted(bool wait) {
  if (none()) return;
  std::vector<std::pair<MPI_Request, PendingRef>> mine;
  {
    Registry& r = reg();
    std::lock_guard<std::mutex> lock(r.mu);
    if (r.adopted.empty()) return;
    mine.swap(r.adopted);
    hot.live.fetch_sub(mine.size(), std::memory_order_relaxed);
  }
  std::vector<std::pair<MPI_Request, PendingRef>> left;
  for (auto& [req, p] : mine) {
    if (is_busy(p)) {  // a send through the runtime: its receiver has not copied yet
      if (!wait) {
        left.emplace_back(req, p);
        continue;
      }
      for (int i = 0; is_busy(p); ++i) pause(i);
    }
    MPI_Status st;
    int flag = 1;
    MPI_Request r = req;
    if (wait) PMPI_Wait(&r, &st);
    else PMPI_Test(&r, &flag, &st);
    if (!flag) {
      left.emplace_back(req, p);
      continue;
    }
    if (p->active && !p->delivered && p->complete) p->complete(st);
    if (p->persistent) PMPI_Request_free(&r);  // the user freed it; the MPI still held it
  }
  if (left.empty()) return;
  Registry& r = reg();
  std::lock_guard<std::mutex> lock(r.mu);
  hot.live.fetch_add(left.size(), std::memory_order_relaxed);
  r.adopted.insert(r.adopted.end(), left.begin(), left.end());
}

}  // namespace ddtmpi

using namespace ddtmpi;

extern "C" {

// Each request call starts with requests_plain(): with no interposer work on any request (a
// program of predefined-type messages, or every derived one done), the MPI's own call, reached by
// a jump from a function that sets up no frame (the rest is out of line, in *_full).
[[gnu::noinline]] static int wait_full(MPI_Request* req, MPI_Status* status);
int MPI_Wait(MPI_Request* req, MPI_Status* status) {
  if (requests_plain()) return PMPI_Wait(req, status);
  return wait_full(req, status);
}
static int wait_full(MPI_Request* req, MPI_Status* status) {
  PendingRef p = disabled() ? nullptr : find(*req);
  if (!p) return disabled() ? PMPI_Wait(req, status) : wait_delivering(req, status);
  for (int i = 0; is_busy(p); ++i) {
    deliver_pending();
    pause(i);
  }
  MPI_Request before = *req;
  MPI_Status local;
  MPI_Status* st = status == MPI_STATUS_IGNORE ? &local : status;
  int rc = wait_delivering(req, st);
  return first_error(rc, complete(before, p, *st));
}

[[gnu::noinline]] static int test_full(MPI_Request* req, int* flag, MPI_Status* status);
int MPI_Test(MPI_Request* req, int* flag, MPI_Status* status) {
  if (requests_plain()) return PMPI_Test(req, flag, status);
  return test_full(req, flag, status);
}
static int test_full(MPI_Request* req, int* flag, MPI_Status* status) {
  PendingRef p = disabled() ? nullptr : find(*req);
  if (!p) {
    int rc = PMPI_Test(req, flag, status);
    if (!disabled()) progress_adopted(false);
    return rc;
  }
  if (is_busy(p)) {
    poke_mpi();
    *flag = 0;
    return MPI_SUCCESS;
  }
  MPI_Request before = *req;
  MPI_Status local;
  MPI_Status* st = status == MPI_STATUS_IGNORE ? &local : status;
  int rc = PMPI_Test(req, flag, st);
  if (rc != MPI_SUCCESS || !*flag) return rc;
  return complete(before, p, *st);
}

[[gnu::noinline]] static int waitall_full(int n, MPI_Request reqs[], MPI_Status sts[]);
int MPI_Waitall(int n, MPI_Request reqs[], MPI_Status sts[]) {
  if (requests_plain()) return PMPI_Waitall(n, reqs, sts);
  return waitall_full(n, reqs, sts);
}
static int waitall_full(int n, MPI_Request reqs[], MPI_Status sts[]) {
  std::vector<PendingRef> ps;
  if (disabled()) return PMPI_Waitall(n, reqs, sts);
  if (!snapshot(n, reqs, ps)) return waitall_delivering(n, reqs, sts);
  if (has_busy(ps)) wait_not_busy(n, reqs, ps);
  std::vector<MPI_Request> before(reqs, reqs + n);
  std::vector<MPI_Status> local;
  MPI_Status* st = statuses(sts, local, n);
  int rc = waitall_delivering(n, reqs, st);
  int rc2 = MPI_SUCCESS;
  for (int i = 0; i < n; ++i)
    if (ps[i] && (rc == MPI_SUCCESS || st[i].MPI_ERROR != MPI_ERR_PENDING)) rc2 = first_error(rc2, complete(before[i], ps[i], st[i]));
  return first_error(rc, rc2);
}

[[gnu::noinline]] static int testall_full(int n, MPI_Request reqs[], int* flag, MPI_Status sts[]);
int MPI_Testall(int n, MPI_Request reqs[], int* flag, MPI_Status sts[]) {
  if (requests_plain()) return PMPI_Testall(n, reqs, flag, sts);
  return testall_full(n, reqs, flag, sts);
}
static int testall_full(int n, MPI_Request reqs[], int* flag, MPI_Status sts[]) {
  std::vector<PendingRef> ps;
  if (disabled() || !snapshot(n, reqs, ps)) return PMPI_Testall(n, reqs, flag, sts);
  std::vector<char> busy;
  if (has_busy(ps) && any_busy(n, ps, busy)) {
    deliver_ready(n, reqs, ps, busy);
    poke_mpi();
    *flag = 0;
    return MPI_SUCCESS;
  }
  std::vector<MPI_Request> before(reqs, reqs + n);
  std::vector<MPI_Status> local;
  MPI_Status* st = statuses(sts, local, n);
  int rc = PMPI_Testall(n, reqs, flag, st);
  if (!*flag) return rc;
  int rc2 = MPI_SUCCESS;
  for (int i = 0; i < n; ++i)
    if (ps[i]) rc2 = first_error(rc2, complete(before[i], ps[i], st[i]));
  return first_error(rc, rc2);
}

int MPI_Waitany(int n, MPI_Request reqs[], int* index, MPI_Status* status) {
  std::vector<PendingRef> ps;
  if (disabled() || !snapshot(n, reqs, ps)) return PMPI_Waitany(n, reqs, index, status);
  std::vector<MPI_Request> before(reqs, reqs + n);
  MPI_Status local;
  MPI_Status* st = status == MPI_STATUS_IGNORE ? &local : status;
  if ((*index = held_first(n, ps)) >= 0) {
    PMPI_Wait(&reqs[*index], st);
    return complete(before[*index], ps[*index], *st);
  }
  int rc = MPI_SUCCESS;
  std::vector<char> busy;
  for (int i = 0;; ++i) {
    if (!has_busy(ps) || !any_busy(n, ps, busy)) {
      rc = PMPI_Waitany(n, reqs, index, st);
      break;
    }
    std::vector<MPI_Request> m = masked(n, reqs, busy);
    int flag = 0;
    rc = PMPI_Testany(n, m.data(), index, &flag, st);
    unmask(n, reqs, m, busy);
    if (rc != MPI_SUCCESS || (flag && *index != MPI_UNDEFINED)) break;
    pause(i);
  }
  if (*index == MPI_UNDEFINED || !ps[*index]) return rc;
  return first_error(rc, complete(before[*index], ps[*index], *st));
}

int MPI_Testany(int n, MPI_Request reqs[], int* index, int* flag, MPI_Status* status) {
  std::vector<PendingRef> ps;
  if (disabled() || !snapshot(n, reqs, ps)) return PMPI_Testany(n, reqs, index, flag, status);
  std::vector<MPI_Request> before(reqs, reqs + n);
  MPI_Status local;
  MPI_Status* st = status == MPI_STATUS_IGNORE ? &local : status;
  if ((*index = held_first(n, ps)) >= 0) {
    *flag = 1;
    PMPI_Wait(&reqs[*index], st);
    return complete(before[*index], ps[*index], *st);
  }
  int rc = MPI_SUCCESS;
  std::vector<char> busy;
  if (has_busy(ps) && any_busy(n, ps, busy)) {  // the busy ones are active and incomplete
    std::vector<MPI_Request> m = masked(n, reqs, busy);
    rc = PMPI_Testany(n, m.data(), index, flag, st);
    unmask(n, reqs, m, busy);
    if (*flag && *index == MPI_UNDEFINED) *flag = 0;
  } else {
    rc = PMPI_Testany(n, reqs, index, flag, st);
  }
  if (!*flag || *index == MPI_UNDEFINED || !ps[*index]) return rc;
  return first_error(rc, complete(before[*index], ps[*index], *st));
}

int MPI_Waitsome(int n, MPI_Request reqs[], int* outcount, int indices[], MPI_Status sts[]) {
  return some<PMPI_Waitsome, true>(n, reqs, outcount, indices, sts);
}

int MPI_Testsome(int n, MPI_Request reqs[], int* outcount, int indices[], MPI_Status sts[]) {
  return some<PMPI_Testsome, false>(n, reqs, outcount, indices, sts);
}

// Does not free the request: a completed receive is unpacked now (the user may read the buffer
// as soon as flag is set) and marked delivered so the Wait or Test that frees it does not
// unpack it again.
int MPI_Request_get_status(MPI_Request req, int* flag, MPI_Status* status) {
  PendingRef p = disabled() ? nullptr : find(req);
  if (!p) return PMPI_Request_get_status(req, flag, status);
  if (is_busy(p)) {
    poke_mpi();
    *flag = 0;
    return MPI_SUCCESS;
  }
  MPI_Status local;
  MPI_Status* st = status == MPI_STATUS_IGNORE ? &local : status;
  int rc = PMPI_Request_get_status(req, flag, st);
  if (rc != MPI_SUCCESS || !*flag || !p->active) return rc;
  if (p->delivered) {  // asked again: the same status as the first time
    const int error = st->MPI_ERROR;
    *st = p->delivered_status;
    st->MPI_ERROR = error;
    return MPI_SUCCESS;
  }
  rc = deliver_early(p, *st);
  p->delivered_rc = MPI_SUCCESS;  // reported here, not again by the wait or test that frees it
  return rc;
}

// A send through the runtime is not cancelled: its ticket may already have been matched, and the
// standard lets a cancellation fail, the send then completing as usual (MPI_Test_cancelled says
// false). Nor is a persistent receive whose start took its message from the stash (held): that
// message is matched, and its MPI request was never started (MPICH: "Attempt to cancel an
// inactive persistent request"). A request with a cancel of its own (MPI_Isendrecv's pair) runs
// it. Everything else is the MPI's to cancel.
int MPI_Cancel(MPI_Request* req) {
  PendingRef p = disabled() ? nullptr : find(*req);
  if (p && p->held && p->active) return MPI_SUCCESS;
  if (p && p->cancel && p->active) return p->cancel();
  if (p && p->busy && p->active) return MPI_SUCCESS;
  return PMPI_Cancel(req);
}

// An active request the user frees still has work (its receive must land in the user's buffer,
// its staging must outlive the send): the interposer keeps the MPI request and finishes it.
int MPI_Request_free(MPI_Request* req) {
  PendingRef p = disabled() ? nullptr : find(*req);
  if (!p) return PMPI_Request_free(req);
  if (p->persistent && !p->active) {
    detach(*req, p);
    return PMPI_Request_free(req);
  }
  adopt(*req, p);
  *req = MPI_REQUEST_NULL;
  return MPI_SUCCESS;
}

// A persistent receive whose message a probe stashed is not started in the MPI (Pending::held).
int MPI_Start(MPI_Request* req) {
  PendingRef p = disabled() ? nullptr : find(*req);
  if (p) {
    const int rc = p->start ? p->start() : MPI_SUCCESS;
    if (rc != MPI_SUCCESS && rc != kStartHeld) return rc;
    p->active = true;
    p->delivered = false;
    p->held = rc == kStartHeld;
    if (p->held) return MPI_SUCCESS;
  }
  return PMPI_Start(req);
}

int MPI_Startall(int n, MPI_Request reqs[]) {
  std::vector<PendingRef> ps;
  bool any_held = false;
  if (!disabled() && snapshot(n, reqs, ps))
    for (const PendingRef& p : ps)
      if (p) {
        const int rc = p->start ? p->start() : MPI_SUCCESS;
        if (rc != MPI_SUCCESS && rc != kStartHeld) return rc;
        p->active = true;
        p->delivered = false;
        p->held = rc == kStartHeld;
        any_held |= p->held;
      }
  if (!any_held) return PMPI_Startall(n, reqs);
  int rc = MPI_SUCCESS;
  for (int i = 0; i < n && rc == MPI_SUCCESS; ++i)
    if (!(ps[i] && ps[i]->held)) rc = PMPI_Start(&reqs[i]);
  return rc;
}

}  // extern "C"
