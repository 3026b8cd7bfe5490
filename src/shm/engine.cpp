// The helper-thread copy engine (engine.hpp).
#include "shm/engine.hpp"

#include <condition_variable>
#include <mutex>
#include <thread>

namespace ddt::shm {

namespace {

// Handover under one mutex: the runtime's thread sets `task`, the engine runs it and sets
// `result` and `done`; `quit` ends the thread. The runtime waits on `done` only after it has made
// its own part of the copy, so the condition variable's cost is off the copy's path.
struct Engine {
  std::mutex m;
  std::condition_variable cv;
  std::function<bool()> task;
  bool pending = false, done = true, result = true, quit = false;
  std::thread thread;

  void loop() {
    std::unique_lock<std::mutex> lock(m);
    for (;;) {
      cv.wait(lock, [&] { return pending || quit; });
      if (quit) return;
      std::function<bool()> t = std::move(task);
      pending = false;
      lock.unlock();
      const bool ok = t();
      lock.lock();
      result = ok, done = true;
      cv.notify_all();
    }
  }
};

Engine* engine = nullptr;

}  // namespace

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
  std::lock_guard<std::mutex> lock(engine->m);
  engine->task = std::move(task);
  engine->pending = true, engine->done = false;
  engine->cv.notify_all();
  return true;
}

bool engine_wait() {
  if (!engine) return true;
  std::unique_lock<std::mutex> lock(engine->m);
  engine->cv.wait(lock, [] { return engine->done; });
  return engine->result;
}

void engine_stop() {
  if (!engine) return;
  {
    std::lock_guard<std::mutex> lock(engine->m);
    engine->quit = true;
    engine->cv.notify_all();
  }
  engine->thread.join();
  delete engine;
  engine = nullptr;
}

}  // namespace ddt::shm
