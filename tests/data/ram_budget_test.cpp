// The input pipelines' RAM budget: an in-memory cache or a shuffle buffer that would pass
// it fails with OutOfMemory naming the buffer and the budget and saying what to change;
// what they held is released; a cache to a file is not limited; a completed cache holds
// its bytes for as long as it lives.
#include "nnfit/data/ram_budget.h"

#include <gtest/gtest.h>

#include <filesystem>
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
