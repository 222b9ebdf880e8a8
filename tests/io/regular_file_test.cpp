// require_regular_file and every io reader that needs a regular file: a FIFO (which would
// block open() for ever), a character device (/dev/zero never ends) and a directory are
// refused by name before they are opened.
#include "nnfit/io/regular_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include "nnfit/core/error.h"
#include "nnfit/io/csv.h"
#include "nnfit/io/hdf5_file.h"
#include "nnfit/io/idx.h"
#include "nnfit/io/image.h"
#include "nnfit/io/npy.h"
#include "nnfit/io/tfrecord.h"
#include "nnfit/io/zip_archive.h"

namespace nnfit::io {
namespace {

class RegularFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) / ("nnfit_regular_file_test_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    fifo_ = (dir_ / "pipe").string();
    ASSERT_EQ(::mkfifo(fifo_.c_str(), 0600), 0);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
  std::string fifo_;
};

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const DataError& e) {
    return e.what();
  }
  return "";
}

TEST_F(RegularFileTest, SaysWhatAPathIs) {
  std::ofstream(dir_ / "plain") << "x";
  EXPECT_EQ(file_kind((dir_ / "plain").string()), FileKind::regular);
  EXPECT_EQ(file_kind(dir_.string()), FileKind::directory);
  EXPECT_EQ(file_kind(fifo_), FileKind::fifo);
  EXPECT_EQ(file_kind("/dev/zero"), FileKind::char_device);
  EXPECT_EQ(file_kind((dir_ / "missing").string()), FileKind::missing);
  EXPECT_NO_THROW(require_regular_file((dir_ / "plain").string()));
  EXPECT_NE(error_of([&] { require_regular_file((dir_ / "missing").string(), "a model file"); })
                .find("cannot open a model file: No such file or directory"),
            std::string::npos);
}

TEST_F(RegularFileTest, EveryReaderRefusesSpecialFilesByName) {
  struct Reader {
    const char* what;
    std::function<void(const std::string&)> read;
  };
  const Reader readers[] = {
      {"not a .npy file", [](const std::string& p) { read_npy(p); }},
      {"not a .npz file", [](const std::string& p) { read_npz(p); }},
      {"not an image file", [](const std::string& p) { read_image(p); }},
      {"not an IDX file", [](const std::string& p) { read_idx(p); }},
      {"not a TFRecord file", [](const std::string& p) { TfRecordReader r(p); }},
      {"not a CSV file", [](const std::string& p) { infer_csv_schema(p); }},
      {"not an HDF5 file", [](const std::string& p) { H5File::open(p); }},
      {"not a zip archive", [](const std::string& p) { ZipReader z(p); }},
  };
  for (const Reader& r : readers) {
    for (const auto& special : {std::pair{fifo_, "is a FIFO (named pipe), "},
                                {std::string("/dev/zero"), "is a character device, "},
                                {dir_.string(), "is a directory, "}}) {
      const std::string& path = special.first;  // not a binding: the lambda captures it (clang 14)
      const char* kind = special.second;
      const std::string what = error_of([&] { r.read(path); });
      EXPECT_NE(what.find(path + ": " + kind + r.what), std::string::npos) << r.what << " on " << path << ": " << what;
    }
  }
}

}  // namespace
}  // namespace nnfit::io
