// The NVIDIA driver's GPU folder listing (nnfit/core/nvidia_proc.h), on a fake folder: absent,
// empty, GPU folders beside a stray file, and the in-root paths the callers prefix.
#include "nnfit/core/nvidia_proc.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace nnfit {
namespace {

namespace fs = std::filesystem;

class GpuFolder : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "nnfit_nvidia_proc_XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    root_ = tmpl;
  }
  void TearDown() override { fs::remove_all(root_); }
  fs::path gpus() const { return root_ / fs::path(kNvidiaProcGpusDir).relative_path(); }
  fs::path root_;
};

TEST_F(GpuFolder, AbsentFolderIsNoDriver) {
  const NvidiaGpuFolders f = list_nvidia_gpu_folders(gpus().string());
  EXPECT_FALSE(f.present);
  EXPECT_TRUE(f.entries.empty());
  EXPECT_EQ(f.folders, 0);
  EXPECT_EQ(f.error, "");
}

TEST_F(GpuFolder, ListsGpuFoldersSortedAndCountsOnlyFolders) {
  fs::create_directories(gpus());
  NvidiaGpuFolders f = list_nvidia_gpu_folders(gpus().string());
  EXPECT_TRUE(f.present);
  EXPECT_EQ(f.folders, 0);
  fs::create_directories(gpus() / "0000:02:00.0");
  fs::create_directories(gpus() / "0000:01:00.0");
  std::ofstream(gpus() / "stray") << "x";
  f = list_nvidia_gpu_folders(gpus().string());
  EXPECT_EQ(f.folders, 2);
  EXPECT_EQ(f.entries, (std::vector<std::string>{"0000:01:00.0", "0000:02:00.0", "stray"}));
  EXPECT_EQ(f.error, "");
}

TEST(NvidiaProc, PathsAreTheDriversInRootPaths) {
  EXPECT_STREQ(kNvidiaProcGpusDir, "/proc/driver/nvidia/gpus");
  EXPECT_STREQ(kNvidiaProcVersionFile, "/proc/driver/nvidia/version");
}

}  // namespace
}  // namespace nnfit
