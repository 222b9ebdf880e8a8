// ZipReader against archives whose headers lie (Note [Zip member sizes]): declared sizes
// past deflate's ratio or the caller's cap refused before anything is inflated, streams
// longer or shorter than declared, libzip's open errors in nnfit's words, special files.
#include "nnfit/io/zip_archive.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zip.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "nnfit/core/error.h"

namespace nnfit::io {
namespace {

class ZipArchiveTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) / ("nnfit_zip_test_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // An archive of one deflated member `name` holding `bytes`.
  std::string deflated(const std::string& file, const std::string& name, const std::string& bytes) const {
    int err = 0;
    zip_t* z = zip_open(path(file).c_str(), ZIP_CREATE | ZIP_TRUNCATE, &err);
    EXPECT_NE(z, nullptr);
    zip_source_t* src = zip_source_buffer(z, bytes.data(), bytes.size(), 0);
    const zip_int64_t index = zip_file_add(z, name.c_str(), src, 0);
    EXPECT_GE(index, 0);
    zip_set_file_compression(z, static_cast<zip_uint64_t>(index), ZIP_CM_DEFLATE, 9);
    EXPECT_EQ(zip_close(z), 0);
    return path(file);
  }
  static std::string slurp(const std::string& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  static void spit(const std::string& p, const std::string& bytes) {
    std::ofstream(p, std::ios::binary | std::ios::trunc).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  // Sets the first member's uncompressed size in its local header and the central directory.
  static void patch_size(const std::string& p, std::uint32_t size, bool local = true) {
    std::string b = slurp(p);
    const std::size_t central = b.find(std::string("PK\x01\x02", 4));
    ASSERT_NE(central, std::string::npos);
    for (int i = 0; i < 4; ++i) {
      if (local) b[22 + i] = static_cast<char>((size >> (8 * i)) & 0xff);
      b[central + 24 + i] = static_cast<char>((size >> (8 * i)) & 0xff);
    }
    spit(p, b);
  }
  std::filesystem::path dir_;
};

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const DataError& e) {
    return e.what();
  }
  return "";
}

TEST_F(ZipArchiveTest, ReadsStoredAndDeflatedMembers) {
  write_zip(path("stored.zip"), {{"a.json", "{}"}, {"b.bin", std::string(5000, 'x')}});
  ZipReader stored(path("stored.zip"));
  EXPECT_EQ(stored.read("a.json"), "{}");
  EXPECT_EQ(stored.read("b.bin"), std::string(5000, 'x'));
  const std::string big(3 << 20, 'z');  // inflates across several 1 MiB chunks
  ZipReader packed(deflated("packed.zip", "config.json", big));
  EXPECT_EQ(packed.read("config.json"), big);
}

TEST_F(ZipArchiveTest, ADeclaredSizePastDeflatesRatioIsRefusedBeforeInflating) {
  // The sweep's 3.2 GB config.json in a small archive: refused by its headers alone.
  const std::string p = deflated("bomb.zip", "config.json", "{" + std::string(100000, ' ') + "}");
  patch_size(p, 3200000000u);
  ZipReader zip(p);
  const std::string what = error_of([&] { zip.read("config.json"); });
  EXPECT_NE(what.find("member \"config.json\" declares 3200000000 bytes"), std::string::npos) << what;
  EXPECT_NE(what.find("largest ratio (1032:1)"), std::string::npos) << what;
}

TEST_F(ZipArchiveTest, AMemberPastTheCallersCapIsRefused) {
  // A real deflate stream of 8 MiB of zeros (about 8 KiB packed): within deflate's ratio,
  // but past the 1 MiB the caller allows.
  ZipReader zip(deflated("zeros.zip", "config.json", std::string(8 << 20, '\0')));
  const std::string what = error_of([&] { zip.read("config.json", 1 << 20); });
  EXPECT_NE(what.find("declares 8388608 bytes; nnfit reads at most 1048576"), std::string::npos) << what;
}

TEST_F(ZipArchiveTest, AStreamLongerOrShorterThanDeclaredIsDamaged) {
  const std::string text = "{" + std::string(100000, ' ') + "}";
  const std::string shorter = deflated("short.zip", "config.json", text);
  patch_size(shorter, 100001);
  ZipReader a(shorter);
  std::string what = error_of([&] { a.read("config.json"); });
  EXPECT_NE(what.find("inflates past the 100001 bytes it declares"), std::string::npos) << what;
  const std::string longer = deflated("long.zip", "config.json", text);
  patch_size(longer, 100003);
  ZipReader b(longer);
  what = error_of([&] { b.read("config.json"); });
  EXPECT_NE(what.find("inflates to 100002 bytes, not the 100003 it declares"), std::string::npos) << what;
}

TEST_F(ZipArchiveTest, LibzipOpenErrorsAreSaidInNnfitsWords) {
  // A duplicate name: libzip says "File already exists".
  write_zip(path("dup.zip"), {{"config.json", "{}"}, {"config_json", "{}"}});
  std::string b = slurp(path("dup.zip"));
  for (std::size_t at = 0; (at = b.find("config_json", at)) != std::string::npos;) b[at + 6] = '.';
  spit(path("dup.zip"), b);
  std::string what = error_of([&] { ZipReader z(path("dup.zip")); });
  EXPECT_NE(what.find("two members of the zip archive have the same name"), std::string::npos) << what;
  EXPECT_EQ(what.find("already exists"), std::string::npos) << what;
  // A size of 0xFFFFFFFF without a zip64 record: libzip says "No such file".
  const std::string p = deflated("ffff.zip", "config.json", "{}");
  patch_size(p, 0xFFFFFFFFu, false);
  what = error_of([&] { ZipReader z(p); });
  EXPECT_NE(what.find("0xFFFFFFFF (zip64) but the archive has no zip64 record"), std::string::npos) << what;
  EXPECT_EQ(what.find("No such file"), std::string::npos) << what;
}

TEST_F(ZipArchiveTest, SpecialFilesAreRefusedByNameBeforeOpening) {
  ASSERT_EQ(::mkfifo(path("pipe.keras").c_str(), 0600), 0);
  std::string what = error_of([&] { ZipReader z(path("pipe.keras")); });  // would block in open()
  EXPECT_NE(what.find("is a FIFO (named pipe), not a zip archive"), std::string::npos) << what;
  what = error_of([&] { ZipReader z("/dev/zero"); });
  EXPECT_NE(what.find("/dev/zero: is a character device"), std::string::npos) << what;
  what = error_of([&] { ZipReader z(dir_.string()); });
  EXPECT_NE(what.find("is a directory"), std::string::npos) << what;
}

}  // namespace
}  // namespace nnfit::io
