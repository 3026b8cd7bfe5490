// libfork_first.so, for heap_fork_order_test: "another library" whose fork handlers are registered
// before the heap's. It registers them from its constructor, and the test links it after
// libddtkit.so, so the loader runs that constructor before libddtkit's (the loader runs
// constructors from the end of the list of the program's libraries): its prepare handler then runs
// after the heap has taken its lock, and its parent and child handlers before the heap's. What
// each handler does is set by the test (the hooks, null by default).
#include <pthread.h>

extern "C" {
__attribute__((visibility("default"))) void (*fork_first_prepare)() = nullptr;
__attribute__((visibility("default"))) void (*fork_first_parent)() = nullptr;
__attribute__((visibility("default"))) void (*fork_first_child)() = nullptr;
}

namespace {
void prepare() {
  if (fork_first_prepare) fork_first_prepare();
}
void parent() {
  if (fork_first_parent) fork_first_parent();
}
void child() {
  if (fork_first_child) fork_first_child();
}
__attribute__((constructor)) void register_handlers() { pthread_atfork(prepare, parent, child); }
}  // namespace
