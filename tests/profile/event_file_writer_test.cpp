// tfevents: byte-exact records against the format notes and the real TF sample, a file
// written by EventFileWriter decoded back by an independent little decoder (CRCs, Event
// and Summary fields), file naming, and errors for an unwritable directory.
#include "nnfit/profile/event_file_writer.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>

#include "nnfit/core/crc32c.h"
#include "nnfit/core/error.h"

namespace nnfit::profile {
namespace {

namespace fs = std::filesystem;

std::string bytes(std::initializer_list<int> b) {
  std::string s;
  for (int c : b) s.push_back(static_cast<char>(c));
  return s;
}
std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}
fs::path temp_dir(const std::string& name) {
  fs::path d = fs::path(::testing::TempDir()) / ("nnfit_events_test_" + std::to_string(::getpid())) / name;
  fs::remove_all(d);
  return d;
}

std::uint64_t le(const std::string& s, std::size_t at, int n) {
  std::uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(s[at + static_cast<std::size_t>(i)]);
  return v;
}

// Splits a TFRecord stream, checking both CRCs.
std::vector<std::string> records(const std::string& s) {
  std::vector<std::string> out;
  std::size_t at = 0;
  while (at < s.size()) {
    EXPECT_GE(s.size() - at, 16u);
    const std::uint64_t n = le(s, at, 8);
    EXPECT_EQ(mask_crc(crc32c(s.data() + at, 8)), le(s, at + 8, 4)) << "length CRC at " << at;
    std::string data = s.substr(at + 12, n);
    EXPECT_EQ(mask_crc(crc32c(data.data(), data.size())), le(s, at + 12 + n, 4)) << "data CRC at " << at;
    out.push_back(std::move(data));
    at += 16 + n;
  }
  return out;
}

// A protobuf message's fields: number -> (wire type, raw payload: varint value, fixed bytes or
// length-delimited bytes), in order.
struct Field {
  int number, type;
  std::uint64_t varint = 0;
  std::string data;
};
std::vector<Field> fields(const std::string& m) {
  std::vector<Field> out;
  std::size_t at = 0;
  auto varint = [&] {
    std::uint64_t v = 0;
    for (int shift = 0;; shift += 7) {
      const auto b = static_cast<unsigned char>(m.at(at++));
      v |= std::uint64_t{b & 0x7fu} << shift;
      if (!(b & 0x80)) return v;
    }
  };
  while (at < m.size()) {
    const std::uint64_t key = varint();
    Field f{static_cast<int>(key >> 3), static_cast<int>(key & 7)};
    if (f.type == 0) f.varint = varint();
    else if (f.type == 1) f.data = m.substr(at, 8), at += 8;
    else if (f.type == 5) f.data = m.substr(at, 4), at += 4;
    else if (f.type == 2) {
      const std::uint64_t n = varint();
      f.data = m.substr(at, n);
      at += n;
    } else {
      ADD_FAILURE() << "unexpected wire type " << f.type;
      break;
    }
    out.push_back(f);
  }
  return out;
}
double as_double(const std::string& b) {
  std::uint64_t v = le(b, 0, 8);
  double d;
  std::memcpy(&d, &v, 8);
  return d;
}
float as_float(const std::string& b) {
  auto v = static_cast<std::uint32_t>(le(b, 0, 4));
  float f;
  std::memcpy(&f, &v, 4);
  return f;
}

TEST(EventFile, RecordsMatchTheFormatNotesByteForByte) {
  // shared/formats/tensorboard.md section 4, "Byte-exact examples".
  EXPECT_EQ(frame_record(encode_file_version_event(1700000000.0)),
            bytes({0x18, 0, 0, 0, 0, 0, 0, 0, 0xa3, 0x7f, 0x4b, 0x22, 0x09, 0, 0, 0, 0x40, 0xfc, 0x54, 0xd9, 0x41,
                   0x1a, 0x0d, 'b', 'r', 'a', 'i', 'n', '.', 'E', 'v', 'e', 'n', 't', ':', '2', 0xec, 0xed, 0x8f, 0x9d}));
  EXPECT_EQ(frame_record(encode_scalar_event("epoch_loss", 0.5f, 1, 1700000001.0)),
            bytes({0x20, 0, 0, 0, 0, 0, 0, 0, 0x29, 0xed, 0xa9, 0x50, 0x09, 0, 0, 0x40, 0x40, 0xfc, 0x54, 0xd9, 0x41,
                   0x10, 0x01, 0x2a, 0x13, 0x0a, 0x11, 0x0a, 0x0a, 'e', 'p', 'o', 'c', 'h', '_', 'l', 'o', 's', 's',
                   0x15, 0, 0, 0, 0x3f, 0x03, 0x7a, 0xfc, 0xaa}));
}

TEST(EventFile, FirstRecordMatchesARealTensorFlowFile) {
  const std::string sample = slurp(std::string(NNFIT_SOURCE_DIR) +
                                   "/../shared/formats/samples/tensorboard/events.out.tfevents.1646034751.jiyongjung.c.googlers.com");
  if (sample.empty()) GTEST_SKIP() << "shared/formats samples not present";
  EXPECT_EQ(frame_record(encode_file_version_event(1646034751.0)), sample.substr(0, 40));
}

TEST(EventFile, WriterFileDecodesBack) {
  const fs::path dir = temp_dir("decode") / "train";  // parents are created
  std::string path;
  {
    EventFileWriter w(dir.string());
    path = w.path();
    w.add_scalar("epoch_loss", 0.75, 0, 1700000000.5);
    w.add_scalar("epoch_accuracy", 0.25, 1);
    w.add_scalar("epoch_memory_peak_bytes", 123456789.0, 1 << 20);
    w.close();
    EXPECT_THROW(w.add_scalar("late", 1, 1), DataError);
  }
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  const std::string name = fs::path(path).filename().string();
  EXPECT_TRUE(std::regex_match(name, std::regex(R"(events\.out\.tfevents\.\d{10}\.(.+)\.(\d+)\.(\d+)\.v2)"))) << name;
  EXPECT_NE(name.find(std::string(".") + host + "." + std::to_string(::getpid()) + "."), std::string::npos) << name;
  EXPECT_EQ(fs::path(path).parent_path(), dir);

  const auto recs = records(slurp(path));
  ASSERT_EQ(recs.size(), 4u);
  auto first = fields(recs[0]);
  ASSERT_EQ(first.size(), 2u);
  EXPECT_EQ(first[0].number, 1);  // wall_time, double
  EXPECT_EQ(first[0].type, 1);
  EXPECT_NEAR(as_double(first[0].data), static_cast<double>(std::time(nullptr)), 60.0);
  EXPECT_EQ(first[1].number, 3);  // file_version
  EXPECT_EQ(first[1].data, "brain.Event:2");

  struct Want { const char* tag; float value; std::int64_t step; };
  const Want want[] = {{"epoch_loss", 0.75f, 0}, {"epoch_accuracy", 0.25f, 1}, {"epoch_memory_peak_bytes", 123456789.0f, 1 << 20}};
  for (int i = 0; i < 3; ++i) {
    SCOPED_TRACE(want[i].tag);
    std::int64_t step = 0;
    std::string summary;
    double wall = 0;
    for (const Field& f : fields(recs[static_cast<std::size_t>(i + 1)])) {
      if (f.number == 1) wall = as_double(f.data);
      else if (f.number == 2) step = static_cast<std::int64_t>(f.varint);
      else if (f.number == 5) summary = f.data;
      else ADD_FAILURE() << "unexpected Event field " << f.number;
    }
    if (i == 0) EXPECT_EQ(wall, 1700000000.5);
    EXPECT_GT(wall, 1.6e9);
    EXPECT_EQ(step, want[i].step);
    const auto s = fields(summary);
    ASSERT_EQ(s.size(), 1u);
    EXPECT_EQ(s[0].number, 1);  // Summary.value
    const auto v = fields(s[0].data);
    ASSERT_EQ(v.size(), 2u);
    EXPECT_EQ(v[0].number, 1);  // tag
    EXPECT_EQ(v[0].data, want[i].tag);
    EXPECT_EQ(v[1].number, 2);  // simple_value, fixed32
    EXPECT_EQ(v[1].type, 5);
    EXPECT_EQ(as_float(v[1].data), want[i].value);
  }
}

TEST(EventFile, TwoWritersInOneSecondGetTwoFiles) {
  const fs::path dir = temp_dir("two");
  EventFileWriter a(dir.string()), b(dir.string());
  EXPECT_NE(a.path(), b.path());
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 2);
}

TEST(EventFile, UnwritableDirectoryThrowsDataErrorNamingIt) {
  const fs::path dir = temp_dir("blocked");
  fs::create_directories(dir.parent_path());
  std::ofstream(dir) << "a file where the directory should be";
  try {
    EventFileWriter w((dir / "train").string());
    FAIL() << "no error";
  } catch (const DataError& e) {
    EXPECT_NE(e.file().find("blocked"), std::string::npos) << e.file();
    EXPECT_FALSE(e.hint().empty());
  }
}

}  // namespace
}  // namespace nnfit::profile
