// The host bandwidth probe: arrays sized past the last-level cache, whole cache lines per
// thread, a figure that agrees with a memcpy timed here over the same amount of memory,
// and bad options rejected.
#include "nnfit/profile/bandwidth.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <vector>

#include "nnfit/core/error.h"

namespace nnfit::profile {
namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;

TEST(Bandwidth, DefaultArraysAreFourTimesTheLastLevelCache) {
  const std::size_t llc = last_level_cache_bytes();
  const std::size_t arrays = default_bandwidth_array_bytes();
  EXPECT_GE(arrays, 64 * kMiB);
  EXPECT_LE(arrays, 1024 * kMiB);
  if (llc == 0) {
    EXPECT_EQ(arrays, 256 * kMiB);
  } else {
    EXPECT_GE(arrays, std::min(4 * llc, 1024 * kMiB)) << "last-level cache " << llc;
  }
}

TEST(Bandwidth, ArraysAreWholeCacheLinesPerThread) {
  const BandwidthMeasurement m = measure_host_bandwidth({3, 1000, 1});
  EXPECT_EQ(m.array_bytes, 960u);  // 1000 B / 3 threads: 5 lines of 64 B each
  EXPECT_EQ(m.threads, 3);
  EXPECT_EQ(m.rounds, 1);
  EXPECT_GT(m.gbps, 0.0);
  EXPECT_EQ(measure_host_bandwidth({2, 1, 1}).array_bytes, 128u);  // at least a line each
}

// memcpy moves 2 bytes per byte copied (one read, one write), the triad 3 per element size
// (two read, one written); both run past the cache, so their rates agree within what a
// store's extra line read (the triad) or glibc's streaming stores (memcpy) make of it: the
// triad gave 1.07-1.5x memcpy's rate on the 2-core dev VM, so [0.6, 2.5] leaves room for
// a busy machine. A probe that counted one array (1/3) or timed nothing would be outside.
TEST(Bandwidth, AgreesWithAMemcpyOfTheSameSize) {
#if defined(__SANITIZE_ADDRESS__)  // g++; clang says so through __has_feature
#define NNFIT_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define NNFIT_TEST_ASAN 1
#endif
#endif
#if defined(NNFIT_TEST_ASAN)
  GTEST_SKIP() << "AddressSanitizer checks every load and store of the triad but not memcpy's: no rate to compare";
#endif
  const std::size_t bytes = 64 * kMiB;
  // The two are measured in alternation and the best of each kept, so a burst of load from
  // another process (the tests run two at a time on shared machines) hits both alike.
  std::vector<char> src(3 * bytes / 2, 1), dst(src.size(), 0);
  double copy_gbps = 0, triad_gbps = 0;
  for (int round = 0; round < 6; ++round) {
    const BandwidthMeasurement m = measure_host_bandwidth({1, bytes, 1});
    EXPECT_EQ(m.array_bytes, bytes);
    const auto t0 = std::chrono::steady_clock::now();
    std::memcpy(dst.data(), src.data(), src.size());
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (round > 0) {  // the first pass faults the pages in
      copy_gbps = std::max(copy_gbps, 2.0 * static_cast<double>(src.size()) / s / 1e9);
      triad_gbps = std::max(triad_gbps, m.gbps);
    }
  }
  EXPECT_EQ(dst[src.size() - 1], 1);
  EXPECT_GT(triad_gbps, copy_gbps * 0.6) << "triad " << triad_gbps << " GB/s, memcpy " << copy_gbps << " GB/s";
  EXPECT_LT(triad_gbps, copy_gbps * 2.5) << "triad " << triad_gbps << " GB/s, memcpy " << copy_gbps << " GB/s";
}

TEST(Bandwidth, BadOptionsAreInvalidArguments) {
  EXPECT_THROW(measure_host_bandwidth({0, 1024, 1}), InvalidArgument);
  EXPECT_THROW(measure_host_bandwidth({1, 1024, 0}), InvalidArgument);
}

}  // namespace
}  // namespace nnfit::profile
