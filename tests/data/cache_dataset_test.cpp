// cache: second epoch identical and without touching the source, in memory and on file;
// a pass cut short caches nothing.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>

#include "dataset_test_util.h"
#include "nnfit/core/error.h"

namespace nnfit::data {
namespace {

using testing::iota;
using testing::values;

// range(0, n) that counts how many elements its iterators produced.
Dataset counted(std::int64_t n, std::shared_ptr<std::atomic<int>> produced) {
  return Dataset::range(0, n).map([produced](Element e) {
    ++*produced;
    return e;
  });
}

TEST(Cache, SecondEpochReplaysWithoutTouchingTheSource) {
  auto produced = std::make_shared<std::atomic<int>>(0);
  Dataset ds = counted(10, produced).cache();
  EXPECT_EQ(values(ds), iota(10));
  EXPECT_EQ(*produced, 10);
  EXPECT_EQ(values(ds), iota(10));
  EXPECT_EQ(*produced, 10) << "the second epoch must not run the source";
}

TEST(Cache, PartialPassCachesNothing) {
  auto produced = std::make_shared<std::atomic<int>>(0);
  Dataset ds = counted(10, produced).cache();
  EXPECT_EQ(values(ds.take(3)), iota(3));
  EXPECT_EQ(values(ds), iota(10));
  EXPECT_EQ(*produced, 13);
  EXPECT_EQ(values(ds), iota(10));
  EXPECT_EQ(*produced, 13);
}

TEST(Cache, FileCacheServesLaterDatasetsAndSurvivesTheNode) {
  const std::string path = (std::filesystem::path(::testing::TempDir()) /
                            ("nnfit_cache_test_" + std::to_string(::getpid()) + ".cache")).string();
  std::filesystem::remove(path);
  auto produced = std::make_shared<std::atomic<int>>(0);
  Tensor x = Tensor::zeros(Shape{4, 3}, DType::f32);
  for (int i = 0; i < 12; ++i) x.data<float>()[i] = 0.5f * static_cast<float>(i);
  auto build = [&] {
    return Dataset::from_tensor_slices({x}).map([produced](Element e) {
      ++*produced;
      return e;
    }).cache(path);
  };
  auto first = build().collect();
  EXPECT_EQ(*produced, 4);
  ASSERT_TRUE(std::filesystem::exists(path));
  auto second = build().collect();  // a new dataset object: only the file is shared
  EXPECT_EQ(*produced, 4);
  ASSERT_EQ(second.size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(second[i][0].shape(), (Shape{3}));
    for (int k = 0; k < 3; ++k) EXPECT_EQ(second[i][0].data<float>()[k], first[i][0].data<float>()[k]);
  }
  std::filesystem::resize_file(path, std::filesystem::file_size(path) - 5);
  try {
    build().collect();
    FAIL() << "expected DataError";
  } catch (const DataError& e) {
    EXPECT_EQ(e.file(), path);
    EXPECT_GT(e.offset(), 0);
  }
  std::filesystem::remove(path);
}

TEST(Cache, AFifoOrDeviceAsTheCacheFileIsRefusedByName) {
  // Opening a FIFO for reading blocks until a writer comes: refused before the open.
  const std::string fifo = (std::filesystem::path(::testing::TempDir()) /
                            ("nnfit_cache_fifo_" + std::to_string(::getpid()))).string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (const std::string& path : {fifo, std::string("/dev/zero")}) {
    try {
      Dataset::range(0, 3).cache(path).collect();
      FAIL() << path << " was opened as a cache";
    } catch (const DataError& e) {
      EXPECT_EQ(e.file(), path);
      EXPECT_NE(std::string(e.what()).find(", not a cache file"), std::string::npos) << e.what();
    }
  }
  std::filesystem::remove(fifo);
}

}  // namespace
}  // namespace nnfit::data
