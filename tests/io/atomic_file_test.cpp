// Atomic writes: a regular file is replaced whole; anything else at the target is either
// written in place (a device or pipe) or refused (a directory), and no temporary file is
// ever left behind (issue 20: `--metrics-json /dev/full` turned the device node into a
// regular file, and `--metrics-json DIR` left DIR.tmp).
#include "nnfit/io/atomic_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "nnfit/core/error.h"

namespace nnfit::io {
namespace {

namespace fs = std::filesystem;

class AtomicFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("nnfit_atomic_test_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  int entries() const { return static_cast<int>(std::distance(fs::directory_iterator(dir_), fs::directory_iterator())); }
  fs::path dir_;
};

TEST_F(AtomicFile, ReplacesARegularFileWhole) {
  const std::string path = (dir_ / "a.json").string();
  write_bytes_atomically(path, "first");
  write_bytes_atomically(path, "second");
  EXPECT_EQ(read_file_bytes(path), "second");
  EXPECT_EQ(entries(), 1) << "no temporary file left";
}

TEST_F(AtomicFile, DevicesAreWrittenInPlaceAndStayDevices) {
  struct stat st {};
  ASSERT_EQ(::stat("/dev/null", &st), 0);
  write_bytes_atomically("/dev/null", "discarded");
  ASSERT_EQ(::stat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
  if (::access("/dev/full", W_OK) != 0) GTEST_SKIP() << "no writable /dev/full";
  try {
    write_bytes_atomically("/dev/full", std::string(1 << 16, 'x'));
    ADD_FAILURE() << "a write to /dev/full must fail";
  } catch (const DataError& e) {
    EXPECT_EQ(e.file(), "/dev/full");
  }
  ASSERT_EQ(::stat("/dev/full", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode)) << "/dev/full must stay a device node";
}

TEST_F(AtomicFile, ADirectoryIsRefusedAndNothingIsLeftBehind) {
  const fs::path target = dir_ / "out";
  fs::create_directories(target);
  EXPECT_THROW(write_bytes_atomically(target.string(), "x"), DataError);
  EXPECT_EQ(entries(), 1) << "only the directory itself: no out.tmp";
  EXPECT_TRUE(fs::is_empty(target));
}

}  // namespace
}  // namespace nnfit::io
