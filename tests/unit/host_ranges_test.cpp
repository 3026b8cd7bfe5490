// util/host_ranges: the table of memory ddtkit mapped itself, which the GPU layer's device checks
// trust as host memory without asking the driver. A wrong "yes" would let the CPU touch device
// memory, so what it holds must be exactly what was added and not removed.
#include <gtest/gtest.h>

#include <vector>

#include "util/host_ranges.hpp"

namespace {

TEST(HostRanges, HoldsWhatWasAddedUntilRemoved) {
  std::vector<char> a(4096), b(100);
  const auto at = [](const std::vector<char>& v, size_t i) { return reinterpret_cast<uintptr_t>(v.data()) + i; };
  EXPECT_FALSE(ddt::host_range_holds(at(a, 0), 1));
  ddt::host_range_add(a.data(), a.size());
  ddt::host_range_add(b.data(), b.size());
  EXPECT_TRUE(ddt::host_range_holds(at(a, 0), 4096));
  EXPECT_TRUE(ddt::host_range_holds(at(a, 4000), 96));
  EXPECT_FALSE(ddt::host_range_holds(at(a, 4000), 97));  // reaches past the range
  EXPECT_FALSE(ddt::host_range_holds(at(a, 0) - 1, 2));  // starts before it
  EXPECT_TRUE(ddt::host_range_holds(at(b, 10), 90));
  ddt::host_range_remove(a.data());
  EXPECT_FALSE(ddt::host_range_holds(at(a, 0), 1));
  EXPECT_TRUE(ddt::host_range_holds(at(b, 0), 100));
  ddt::host_range_remove(b.data());
  EXPECT_FALSE(ddt::host_range_holds(at(b, 0), 1));
  ddt::host_range_add(nullptr, 10);  // ignored
  EXPECT_FALSE(ddt::host_range_holds(0, 1));
}

TEST(HostRanges, AFullTableForgetsNothingItHolds) {
  // More ranges than slots: the ones that fit are held, the rest are simply unknown (asked about).
  std::vector<std::vector<char>> v(300, std::vector<char>(16));
  for (auto& x : v) ddt::host_range_add(x.data(), x.size());
  int held = 0;
  for (auto& x : v) held += ddt::host_range_holds(reinterpret_cast<uintptr_t>(x.data()), x.size());
  EXPECT_GE(held, 200);
  EXPECT_LE(held, 256);
  for (auto& x : v) ddt::host_range_remove(x.data());
  for (auto& x : v) EXPECT_FALSE(ddt::host_range_holds(reinterpret_cast<uintptr_t>(x.data()), 1));
}

}  // namespace
