// The second copy engine of COOP_HCA (seed 002, II-A2): where the paper stripes a copy over the
// CPU and the network card's DMA engine, a machine without such an engine has a helper thread.
// One per process, started on first use and stopped by ddt_comm_finalize. It runs one task at a
// time; the runtime's thread gives it a task, makes its own part of the copy, and waits for it.
// A task touches no runtime state: it copies between buffers and reads the peer's pid (the job
// header's atomics) only, so the runtime stays single-threaded in everything else.
#pragma once
#include <functional>

namespace ddt::shm {

// Hands task to the engine (starting it if needed); false when no thread could be started (the
// caller then runs the task itself).
bool engine_start(std::function<bool()> task);
// Waits for the task handed over last; its result.
bool engine_wait();
// Stops the thread (if any); engine_start starts a new one.
void engine_stop();
// Whether the engine and the thread that waits for it spin (for a while) instead of sleeping:
// only where the machine has a core to spare for it (engine.cpp says why).
void engine_set_spinning(bool spin);

}  // namespace ddt::shm
