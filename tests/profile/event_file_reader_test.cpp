// The tfevents reader: round trip with the writer, the real TF1 sample (simple_value
// scalars; a DT_STRING tensor skipped), TF2's tensor-form scalar, a truncated tail, and
// corrupt CRCs reported with file and offset.
#include "nnfit/profile/event_file_reader.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "nnfit/core/error.h"
#include "nnfit/profile/event_file_writer.h"

namespace nnfit::profile {
namespace {

namespace fs = std::filesystem;

fs::path temp_dir(const std::string& name) {
  fs::path d = fs::path(::testing::TempDir()) / ("nnfit_reader_test_" + std::to_string(::getpid())) / name;
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}
void spit(const fs::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

TEST(EventFileReader, RoundTripsTheWriter) {
  const fs::path dir = temp_dir("round");
  std::string path;
  {
    EventFileWriter w(dir.string());
    for (int epoch = 0; epoch < 3; ++epoch) w.add_scalar("epoch_loss", 1.0 / (epoch + 1), epoch, 100.0 + epoch);
    w.add_scalar("epoch_learning_rate", 1e-3, 2);
    path = w.path();
  }
  const EventFileContents c = read_event_file(path);
  EXPECT_EQ(c.file_version, "brain.Event:2");
  EXPECT_FALSE(c.truncated);
  ASSERT_EQ(c.scalars.size(), 4u);
  for (int epoch = 0; epoch < 3; ++epoch) {
    EXPECT_EQ(c.scalars[epoch].tag, "epoch_loss");
    EXPECT_EQ(c.scalars[epoch].step, epoch);
    EXPECT_EQ(c.scalars[epoch].wall_time, 100.0 + epoch);
    EXPECT_FLOAT_EQ(c.scalars[epoch].value, 1.0f / static_cast<float>(epoch + 1));
  }
  EXPECT_FLOAT_EQ(c.scalars[3].value, 1e-3f);
}

TEST(EventFileReader, ReadsTheRealTensorFlowSample) {
  const std::string sample = std::string(NNFIT_SOURCE_DIR) +
                             "/../shared/formats/samples/tensorboard/events.out.tfevents.1646034751.jiyongjung.c.googlers.com";
  if (!fs::exists(sample)) GTEST_SKIP() << "shared/formats samples not present";
  const EventFileContents c = read_event_file(sample);
  EXPECT_EQ(c.file_version, "brain.Event:2");
  ASSERT_EQ(c.scalars.size(), 20u);  // 10 scalars at steps 999 and 1000; checkpoint_path is a string
  EXPECT_EQ(c.scalars[0].step, 999);
  EXPECT_EQ(c.scalars[10].step, 1000);
  EXPECT_EQ(c.scalars[0].tag, "accuracy");
  EXPECT_GT(c.scalars[0].value, 0.0f);
  EXPECT_LE(c.scalars[0].value, 1.0f);
}

TEST(EventFileReader, ReadsTensorFormScalars) {
  // shared/formats/tensorboard.md: the TF2 tensor scalar example, byte for byte.
  const unsigned char rec[] = {
      0x34, 0, 0, 0, 0, 0, 0, 0, 0x5e, 0x33, 0x17, 0x5c, 0x09, 0, 0, 0x80, 0x40, 0xfc, 0x54, 0xd9, 0x41, 0x10, 0x02,
      0x2a, 0x27, 0x0a, 0x25, 0x0a, 0x0a, 'e', 'p', 'o', 'c', 'h', '_', 'l', 'o', 's', 's', 0x42, 0x0a, 0x08, 0x01,
      0x12, 0x00, 0x22, 0x04, 0x00, 0x00, 0x80, 0x3e, 0x4a, 0x0b, 0x0a, 0x09, 0x0a, 0x07, 's', 'c', 'a', 'l', 'a',
      'r', 's', 0x3f, 0xd1, 0xa1, 0x9c};
  const fs::path path = temp_dir("tensor") / "events.out.tfevents.1700000002.host";
  spit(path, frame_record(encode_file_version_event(1700000000.0)) + std::string(reinterpret_cast<const char*>(rec), sizeof rec));
  const EventFileContents c = read_event_file(path.string());
  ASSERT_EQ(c.scalars.size(), 1u);
  EXPECT_EQ(c.scalars[0].tag, "epoch_loss");
  EXPECT_EQ(c.scalars[0].step, 2);
  EXPECT_EQ(c.scalars[0].value, 0.25f);
}

TEST(EventFileReader, TruncatedTailIsToleratedCorruptionIsNot) {
  const fs::path dir = temp_dir("bad");
  const std::string good = frame_record(encode_file_version_event(1.0)) + frame_record(encode_scalar_event("a", 1, 1, 2.0));
  spit(dir / "cut", good + frame_record(encode_scalar_event("b", 2, 2, 3.0)).substr(0, 20));
  const EventFileContents cut = read_event_file((dir / "cut").string());
  EXPECT_TRUE(cut.truncated);
  EXPECT_EQ(cut.scalars.size(), 1u);

  std::string bad = good;
  bad[bad.size() - 6] ^= 0x10;  // inside the second record's data
  spit(dir / "bad", bad);
  try {
    read_event_file((dir / "bad").string());
    FAIL() << "no error";
  } catch (const DataError& e) {
    EXPECT_EQ(e.offset(), static_cast<std::int64_t>(frame_record(encode_file_version_event(1.0)).size()));
    EXPECT_NE(std::string(e.what()).find("CRC"), std::string::npos);
  }
  EXPECT_THROW(read_event_file((dir / "missing").string()), DataError);
}

}  // namespace
}  // namespace nnfit::profile
