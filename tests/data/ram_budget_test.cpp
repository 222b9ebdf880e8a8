// The input pipelines' RAM budget: an in-memory cache, a shuffle buffer or a static
// prefetch queue that would pass it fails with OutOfMemory naming the buffer and the
// budget and saying what to change; what they held is released; a cache to a file is not
// limited; a completed cache holds its bytes for as long as it lives.
#include "nnfit/data/ram_budget.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <thread>
#include <unistd.h>

#include "nnfit/core/error.h"
#include "nnfit/data/dataset.h"

namespace nnfit::data {
namespace {

// 100 elements of 4 KiB each, each a fresh buffer (as a decoding map makes).
Dataset kib4_elements() {
  return Dataset::range(0, 100).map(
      [](Element) { return Element{Tensor::zeros(Shape{1024}, DType::f32)}; }, {},
      ElementSpec{{DType::f32, Shape{1024}}});
}

class RamBudget : public ::testing::Test {
 protected:
  void SetUp() override { set_pipeline_ram_limit(256 * 1024); }  // room for 64 elements
  void TearDown() override { set_pipeline_ram_limit(0); }
};

std::string error_of(const Dataset& ds) {
  try {
    ds.collect();
  } catch (const OutOfMemory& e) {
    return std::string(e.what()) + " | " + e.hint();
  }
  return "";
}

TEST_F(RamBudget, CacheInMemoryPastTheBudgetFailsClearlyAndReleases) {
  const std::string err = error_of(kib4_elements().cache());
  EXPECT_NE(err.find("cache (in memory)"), std::string::npos) << err;
  EXPECT_NE(err.find("RAM budget of 256.00 KiB"), std::string::npos) << err;
  EXPECT_NE(err.find("NNFIT_PIPELINE_RAM_LIMIT"), std::string::npos) << err;
  EXPECT_NE(err.find("cache to a file"), std::string::npos) << err;
  EXPECT_EQ(pipeline_ram_in_use(), 0);
}

TEST_F(RamBudget, CacheToAFileIsNotLimited) {
  const std::string file = ::testing::TempDir() + "nnfit_ram_budget_" + std::to_string(::getpid()) + ".cache";
  const Dataset ds = kib4_elements().cache(file);
  EXPECT_EQ(ds.collect().size(), 100u);
  EXPECT_EQ(ds.collect().size(), 100u);  // read back from the file
  EXPECT_EQ(pipeline_ram_in_use(), 0);
  std::filesystem::remove(file);
}

TEST_F(RamBudget, CompletedCacheHoldsItsBytesUntilItGoes) {
  {
    const Dataset ds = kib4_elements().take(50).cache();
    EXPECT_EQ(ds.collect().size(), 50u);
    EXPECT_EQ(pipeline_ram_in_use(), 50 * 4096);
    EXPECT_EQ(ds.collect().size(), 50u);  // replay holds no more
    EXPECT_EQ(pipeline_ram_in_use(), 50 * 4096);
  }
  EXPECT_EQ(pipeline_ram_in_use(), 0);
}

TEST_F(RamBudget, ShuffleBufferPastTheBudgetFailsAndAFittingOneRuns) {
  const std::string err = error_of(kib4_elements().shuffle(100, ShuffleOptions{1}));
  EXPECT_NE(err.find("shuffle buffer"), std::string::npos) << err;
  EXPECT_NE(err.find("smaller shuffle buffer than 100"), std::string::npos) << err;
  EXPECT_EQ(pipeline_ram_in_use(), 0);
  EXPECT_EQ(kib4_elements().shuffle(32, ShuffleOptions{1}).collect().size(), 100u);
  EXPECT_EQ(pipeline_ram_in_use(), 0);
}

TEST_F(RamBudget, StaticPrefetchHoldsItsQueueAgainstTheBudget) {
  // The producer fills prefetch(8) while the consumer holds back: 8 queued elements are
  // reserved, and dropping the iterator releases them.
  const Dataset ds = kib4_elements().prefetch(8);
  {
    std::unique_ptr<Iterator> it = ds.make_iterator();  // the producer starts here
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (pipeline_ram_in_use() < 8 * 4096 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // no ninth element comes
    EXPECT_EQ(pipeline_ram_in_use(), 8 * 4096);
    for (int i = 0; i < 10; ++i) ASSERT_TRUE(it->next().has_value());
    EXPECT_LE(pipeline_ram_in_use(), 8 * 4096);
  }
  EXPECT_EQ(pipeline_ram_in_use(), 0);
  EXPECT_EQ(kib4_elements().prefetch(32).collect().size(), 100u);  // 128 KiB of 256 fit
  EXPECT_EQ(pipeline_ram_in_use(), 0);
}

TEST_F(RamBudget, StaticPrefetchPastTheBudgetFailsClearlyAndReleases) {
  // Elements of 320 KiB: not even one fits a 256 KiB budget, whatever the timing.
  const Dataset big = Dataset::range(0, 4).map(
      [](Element) { return Element{Tensor::zeros(Shape{80 * 1024}, DType::f32)}; }, {},
      ElementSpec{{DType::f32, Shape{80 * 1024}}});
  const std::string err = error_of(big.prefetch(2));
  if (std::getenv("NNFIT_TEST_VERBOSE")) std::printf("%s\n", err.c_str());
  EXPECT_NE(err.find("prefetch(2) buffer: holding 320.00 KiB"), std::string::npos) << err;
  EXPECT_NE(err.find("RAM budget of 256.00 KiB"), std::string::npos) << err;
  EXPECT_NE(err.find("smaller prefetch buffer than 2"), std::string::npos) << err;
  EXPECT_NE(err.find("prefetch(AUTOTUNE)"), std::string::npos) << err;
  EXPECT_EQ(pipeline_ram_in_use(), 0);
  // The stream ends at the error: the element is not skipped.
  std::unique_ptr<Iterator> it = big.prefetch(2).make_iterator();
  EXPECT_THROW(it->next(), OutOfMemory);
  EXPECT_FALSE(it->next().has_value());
}

TEST_F(RamBudget, PrefetchBesideACacheSeesWhatTheCacheHolds) {
  // A completed cache holds 60 of the 64 elements' room; a prefetch(8) beside it queues
  // 4 elements, and the fifth fails naming what the others hold.
  const Dataset cached = kib4_elements().take(60).cache();
  ASSERT_EQ(cached.collect().size(), 60u);
  std::unique_ptr<Iterator> it = kib4_elements().prefetch(8).make_iterator();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (pipeline_ram_in_use() < 64 * 4096 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // the producer meets the budget
  std::string err;
  int got = 0;
  try {
    while (it->next()) ++got;
  } catch (const OutOfMemory& e) {
    err = e.what();
  }
  EXPECT_EQ(got, 4);
  EXPECT_NE(err.find("prefetch(8) buffer"), std::string::npos) << err;
  EXPECT_NE(err.find("240.00 KiB held by other pipeline buffers"), std::string::npos) << err;
  it.reset();
  EXPECT_EQ(pipeline_ram_in_use(), 60 * 4096);
}

TEST_F(RamBudget, AutotunePrefetchWithoutATunerGrowsOnlyWithinTheBudget) {
  set_pipeline_ram_limit(40 * 1024);  // room for 10 elements: the doubling stops at 8
  EXPECT_EQ(kib4_elements().prefetch(kAutotune).collect().size(), 100u);
  EXPECT_EQ(pipeline_ram_in_use(), 0);
}

TEST(RamBudgetDefault, ComesFromTheMachineOrTheEnvironment) {
  set_pipeline_ram_limit(0);
  ::unsetenv("NNFIT_PIPELINE_RAM_LIMIT");
  EXPECT_GT(pipeline_ram_limit(), 0);
  ::setenv("NNFIT_PIPELINE_RAM_LIMIT", "3MiB", 1);
  EXPECT_EQ(pipeline_ram_limit(), 3 * 1024 * 1024);
  ::setenv("NNFIT_PIPELINE_RAM_LIMIT", "lots", 1);
  EXPECT_THROW(pipeline_ram_limit(), InvalidArgument);
  ::unsetenv("NNFIT_PIPELINE_RAM_LIMIT");
}

}  // namespace
}  // namespace nnfit::data
