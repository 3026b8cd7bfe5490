// CHECK for the test programs that run without GoogleTest (the preloaded allocator's, under
// LD_PRELOAD): a failed condition counts in `failures` and says where, prefixed by kTestName;
// the program keeps going and fails at its end. Each program defines both before it includes this.
#pragma once
#include <cstdio>

#define CHECK(cond, ...)                                  \
  do {                                                    \
    if (!(cond)) {                                        \
      ++failures;                                         \
      std::fprintf(stderr, "%s: FAILED: ", kTestName);    \
      std::fprintf(stderr, __VA_ARGS__);                  \
      std::fprintf(stderr, " (line %d)\n", __LINE__);     \
    }                                                     \
  } while (0)
