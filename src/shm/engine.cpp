// The helper-thread copy engine (engine.hpp).
#include "shm/engine.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace ddt::shm {

namespace {

inline void relax() {
#if defined(__x86_64__)
  _mm_pause();
#endif
}

// Handover: the runtime's thread sets `task`, then `pending`; the engine runs it, sets `result`,
// then `done`. The flags are atomics so that either side can wait by spinning; the mutex and the
// condition variable are for sleeping only. Whoever sleeps re-checks its flag under the mutex,
// and whoever sets a flag takes the mutex before notifying, so no wake-up is lost.
//
// Spinning or sleeping (engine_set_spinning): a sleeping engine costs the next task a thread
// wake-up, measured on the 16-core device machine (tools/cores-lease.sh, 2 ranks, COOP_HCA
// ping-pong latency): 32 KiB messages 17.8 us against RGET's 4.0 us, i.e. about 14 us per
// handover. A spinning engine answers within a pause loop, but spinning takes a core: where the
// job's processes already fill the cores (2 ranks on this 2-core machine) it would take it from
// the peer, so the engine spins only when the runtime says there are cores to spare, and then for
// kSpinFor after each task before it sleeps.
struct Engine {
  std::mutex m;
  std::condition_variable cv;
  std::function<bool()> task;
  std::atomic<bool> pending{false}, done{true}, quit{false};
  bool result = true;
  std::thread thread;

  void loop() {
    for (;;) {
      if (!await(pending)) return;
      std::function<bool()> t = std::move(task);
      pending.store(false, std::memory_order_relaxed);
      result = t();
      done.store(true, std::memory_order_release);
      std::lock_guard<std::mutex> lock(m);
      cv.notify_all();
    }
  }

  // Waits until flag is set (true) or quit (false): spins first where allowed, then sleeps.
  bool await(std::atomic<bool>& flag);
};

constexpr auto kSpinFor = std::chrono::microseconds(200);
std::atomic<bool> spinning{false};
Engine* engine = nullptr;

bool Engine::await(std::atomic<bool>& flag) {
  if (spinning.load(std::memory_order_relaxed)) {
    const auto until = std::chrono::steady_clock::now() + kSpinFor;
    for (int i = 1;; ++i) {
      if (flag.load(std::memory_order_acquire)) return true;
      if (quit.load(std::memory_order_acquire)) return false;
      relax();
      if (i % 256 == 0 && std::chrono::steady_clock::now() > until) break;
    }
  }
  std::unique_lock<std::mutex> lock(m);
  cv.wait(lock, [&] { return flag.load(std::memory_order_acquire) || quit.load(std::memory_order_acquire); });
  return flag.load(std::memory_order_acquire);
}

}  // namespace

void engine_set_spinning(bool spin) { spinning.store(spin, std::memory_order_relaxed); }

bool engine_start(std::function<bool()> task) {
  if (!engine) {
    Engine* e = new Engine;
    try {
      e->thread = std::thread([e] { e->loop(); });
    } catch (...) {
      delete e;
      return false;
    }
    engine = e;
  }
  // The engine is idle (done): it reads task only after pending is set.
  engine->task = std::move(task);
  engine->done.store(false, std::memory_order_relaxed);
  engine->pending.store(true, std::memory_order_release);
  std::lock_guard<std::mutex> lock(engine->m);
  engine->cv.notify_all();
  return true;
}

bool engine_wait() {
  if (!engine) return true;
  engine->await(engine->done);
  return engine->result;
}

void engine_stop() {
  if (!engine) return;
  {
    std::lock_guard<std::mutex> lock(engine->m);
    engine->quit.store(true, std::memory_order_release);
    engine->cv.notify_all();
  }
  engine->thread.join();
  delete engine;
  engine = nullptr;
}

}  // namespace ddt::shm
