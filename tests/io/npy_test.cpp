// NPY/NPZ: the real NumPy-written sample, hand-built headers for every dtype path
// (byte order, fortran_order, scalars), stored and deflated archives, and bad input with
// the file and offset of each DataError.
#include "nnfit/io/npy.h"

#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "nnfit/core/error.h"

namespace nnfit::io {
namespace {

std::string temp_path(const std::string& name) {
  auto dir = std::filesystem::path(::testing::TempDir()) / ("nnfit_npy_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return (dir / name).string();
}

std::string write_file(const std::string& name, const std::string& bytes) {
  const std::string path = temp_path(name);
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return path;
}

// A v1.0 .npy image with the given header dict and raw data, padded as NumPy pads.
std::string npy(const std::string& dict, const std::string& data) {
  std::string header = dict;
  const std::size_t total = (10 + header.size() + 1 + 63) / 64 * 64;
  header.append(total - 10 - header.size() - 1, ' ');
  header += '\n';
  std::string out = "\x93NUMPY\x01";
  out.push_back('\0');
  out.push_back(static_cast<char>(header.size() & 0xff));
  out.push_back(static_cast<char>(header.size() >> 8));
  return out + header + data;
}

template <typename T>
std::string raw(std::initializer_list<T> values, bool big_endian = false) {
  std::string out;
  for (T v : values) {
    char b[sizeof(T)];
    std::memcpy(b, &v, sizeof(T));
    if (big_endian) std::reverse(b, b + sizeof(T));
    out.append(b, sizeof(T));
  }
  return out;
}

TEST(Npy, ReadsTheRealNumPySample) {
  const std::string path = std::string(NNFIT_SOURCE_DIR) +
                           "/../shared/formats/samples/npy/tinygrad_openpilot_b1ab7897cbfa35981e1636fe551e4ce5.npy";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "sample not found: " << path;
  Tensor t = read_npy(path);
  EXPECT_EQ(t.dtype(), DType::f32);
  EXPECT_EQ(t.shape(), (Shape{1, 6504}));
  float sum = 0;
  for (int i = 0; i < 6504; ++i) sum += std::abs(t.data<float>()[i]);
  EXPECT_GT(sum, 0.0f);
  for (int i = 0; i < 6504; ++i) ASSERT_TRUE(std::isfinite(t.data<float>()[i])) << i;
}

TEST(Npy, RoundTripsEveryWritableDtype) {
  for (DType dtype : {DType::f32, DType::f16, DType::i32, DType::i64, DType::u8, DType::boolean}) {
    Tensor t = Tensor::zeros(Shape{2, 3}, dtype);
    auto* b = static_cast<unsigned char*>(t.raw());
    for (std::size_t i = 0; i < t.nbytes(); ++i) b[i] = static_cast<unsigned char>(dtype == DType::boolean ? i % 2 : i * 7 + 1);
    const std::string path = temp_path("rt.npy");
    write_npy(path, t);
    Tensor back = read_npy(path);
    EXPECT_EQ(back.dtype(), dtype);
    EXPECT_EQ(back.shape(), t.shape());
    EXPECT_EQ(std::memcmp(back.raw(), t.raw(), t.nbytes()), 0) << dtype_name(dtype);
  }
  EXPECT_THROW(write_npy(temp_path("bf.npy"), Tensor::zeros(Shape{1}, DType::bf16)), Unsupported);
}

TEST(Npy, ByteOrderNarrowingAndWidening) {
  Tensor f8 = parse_npy(reinterpret_cast<const unsigned char*>(npy("{'descr': '>f8', 'fortran_order': False, 'shape': (3,), }",
                                                                   raw<double>({0.5, -2.0, 1e300}, true)).data()),
                        npy("{'descr': '>f8', 'fortran_order': False, 'shape': (3,), }", raw<double>({0.5, -2.0, 1e300}, true)).size(), "be");
  EXPECT_EQ(f8.dtype(), DType::f32);
  EXPECT_EQ(f8.data<float>()[0], 0.5f);
  EXPECT_EQ(f8.data<float>()[1], -2.0f);
  EXPECT_TRUE(std::isinf(f8.data<float>()[2]));

  const std::string i2 = npy("{'descr': '>i2', 'fortran_order': False, 'shape': (2,), }", raw<std::int16_t>({-3, 300}, true));
  Tensor t = read_npy(write_file("i2.npy", i2));
  EXPECT_EQ(t.dtype(), DType::i32);
  EXPECT_EQ(t.data<std::int32_t>()[0], -3);
  EXPECT_EQ(t.data<std::int32_t>()[1], 300);

  const std::string u4 = npy("{'descr': '<u4', 'fortran_order': False, 'shape': (1,), }", raw<std::uint32_t>({4000000000u}));
  Tensor w = read_npy(write_file("u4.npy", u4));
  EXPECT_EQ(w.dtype(), DType::i64);
  EXPECT_EQ(w.data<std::int64_t>()[0], 4000000000LL);

  const std::string scalar = npy("{'descr': '<i8', 'fortran_order': False, 'shape': (), }", raw<std::int64_t>({-7}));
  Tensor s = read_npy(write_file("scalar.npy", scalar));
  EXPECT_EQ(s.shape(), Shape{});
  EXPECT_EQ(s.data<std::int64_t>()[0], -7);
}

TEST(Npy, FortranOrderIsTransposedToCOrder) {
  // a = [[0, 1, 2], [3, 4, 5]] stored column-major: 0 3 1 4 2 5.
  const std::string f = npy("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", raw<float>({0, 3, 1, 4, 2, 5}));
  Tensor t = read_npy(write_file("fortran.npy", f));
  for (int i = 0; i < 6; ++i) EXPECT_EQ(t.data<float>()[i], static_cast<float>(i));
}

TEST(Npy, UnsupportedDtypeNamesFileOffsetAndWhatToDo) {
  const std::string c8 = npy("{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }", std::string(8, '\0'));
  const std::string path = write_file("c8.npy", c8);
  try {
    read_npy(path);
    FAIL();
  } catch (const DataError& e) {
    EXPECT_EQ(e.file(), path);
    EXPECT_EQ(e.offset(), 10) << "the header starts at byte 10";
    EXPECT_NE(std::string(e.what()).find("'<c8'"), std::string::npos) << e.what();
    EXPECT_NE(e.hint().find("astype"), std::string::npos);
  }
  for (const char* d : {"|O", "<U5", "<u8"}) {
    const std::string bad = npy(std::string("{'descr': '") + d + "', 'fortran_order': False, 'shape': (1,), }", std::string(32, '\0'));
    EXPECT_THROW(read_npy(write_file("bad.npy", bad)), DataError) << d;
  }
}

TEST(Npy, BadMagicTruncatedDataAndBadHeaders) {
  try {
    read_npy(write_file("magic.npy", "PK\x03\x04 not npy at all"));
    FAIL();
  } catch (const DataError& e) {
    EXPECT_EQ(e.offset(), 0);
  }
  const std::string full = npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", raw<float>({0, 1, 2, 3, 4, 5}));
  const std::string path = write_file("trunc.npy", full.substr(0, full.size() - 4));
  try {
    read_npy(path);
    FAIL();
  } catch (const DataError& e) {
    EXPECT_EQ(e.file(), path);
    EXPECT_EQ(e.offset(), static_cast<std::int64_t>(full.size() - 4)) << "points at the end of the short file";
    EXPECT_NE(std::string(e.what()).find("24 bytes"), std::string::npos) << e.what();
  }
  EXPECT_THROW(read_npy(write_file("noshape.npy", npy("{'descr': '<f4', 'fortran_order': False, }", ""))), DataError);
  EXPECT_THROW(read_npy(write_file("struct.npy", npy("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }", "0000"))), DataError);
  EXPECT_THROW(read_npy(temp_path("missing.npy")), DataError);
}

// A zip with one Deflated member, built the way np.savez_compressed lays it out (ZIP64
// extra field in the local header only).
std::string deflated_npz(const std::string& name, const std::string& body) {
  std::string comp(compressBound(static_cast<uLong>(body.size())) + 64, '\0');
  z_stream zs{};
  deflateInit2(&zs, 6, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(body.data()));
  zs.avail_in = static_cast<uInt>(body.size());
  zs.next_out = reinterpret_cast<Bytef*>(comp.data());
  zs.avail_out = static_cast<uInt>(comp.size());
  deflate(&zs, Z_FINISH);
  comp.resize(zs.total_out);
  deflateEnd(&zs);
  const auto crc = static_cast<std::uint32_t>(crc32(0, reinterpret_cast<const Bytef*>(body.data()), static_cast<uInt>(body.size())));
  auto u16 = [](std::string& s, unsigned v) { s += raw<std::uint16_t>({static_cast<std::uint16_t>(v)}); };
  auto u32 = [](std::string& s, std::uint32_t v) { s += raw<std::uint32_t>({v}); };
  std::string z;
  u32(z, 0x04034b50); u16(z, 45); u16(z, 0); u16(z, 8); u16(z, 0); u16(z, 0x21); u32(z, crc);
  u32(z, 0xffffffffu); u32(z, 0xffffffffu); u16(z, static_cast<unsigned>(name.size())); u16(z, 20);
  z += name;
  u16(z, 1); u16(z, 16); z += raw<std::uint64_t>({body.size(), comp.size()});
  z += comp;
  const auto cd = static_cast<std::uint32_t>(z.size());
  std::string c;
  u32(c, 0x02014b50); u16(c, 45); u16(c, 45); u16(c, 0); u16(c, 8); u16(c, 0); u16(c, 0x21); u32(c, crc);
  u32(c, static_cast<std::uint32_t>(comp.size())); u32(c, static_cast<std::uint32_t>(body.size()));
  u16(c, static_cast<unsigned>(name.size())); u16(c, 0); u16(c, 0); u16(c, 0); u16(c, 0); u32(c, 0); u32(c, 0);
  c += name;
  z += c;
  u32(z, 0x06054b50); u16(z, 0); u16(z, 0); u16(z, 1); u16(z, 1); u32(z, static_cast<std::uint32_t>(c.size())); u32(z, cd); u16(z, 0);
  return z;
}

TEST(Npz, StoredRoundTripKeepsNamesAndOrder) {
  Tensor x = Tensor::zeros(Shape{2, 2}, DType::f32);
  for (int i = 0; i < 4; ++i) x.data<float>()[i] = 1.5f * static_cast<float>(i);
  Tensor y = Tensor::zeros(Shape{3}, DType::i64);
  y.data<std::int64_t>()[2] = 9;
  const std::string path = temp_path("a.npz");
  write_npz(path, {{"x", x}, {"y", y}});
  auto arrays = read_npz(path);
  ASSERT_EQ(arrays.size(), 2u);
  EXPECT_EQ(arrays[0].first, "x");
  EXPECT_EQ(arrays[1].first, "y");
  EXPECT_EQ(arrays[0].second.data<float>()[3], 4.5f);
  EXPECT_EQ(arrays[1].second.data<std::int64_t>()[2], 9);
}

TEST(Npz, DeflatedMemberWithZip64LocalExtra) {
  const std::string body = npy("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", raw<float>({1, 2, 3}));
  auto arrays = read_npz(write_file("c.npz", deflated_npz("arr_0.npy", body)));
  ASSERT_EQ(arrays.size(), 1u);
  EXPECT_EQ(arrays[0].first, "arr_0");
  EXPECT_EQ(arrays[0].second.data<float>()[2], 3.0f);
}

TEST(Npz, CorruptArchivesNameFileAndOffset) {
  const std::string body = npy("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", raw<float>({1, 2, 3}));
  std::string z = deflated_npz("arr_0.npy", body);
  const std::string path = write_file("not.npz", "just some bytes, no zip directory here");
  try {
    read_npz(path);
    FAIL();
  } catch (const DataError& e) {
    EXPECT_EQ(e.file(), path);
  }
  std::string bad_crc = z;
  bad_crc[14] ^= 0x55;  // local CRC is not used; corrupt the central directory's copy instead
  const std::size_t cd = bad_crc.find("PK\x01\x02");
  bad_crc[cd + 16] ^= 0x55;
  try {
    read_npz(write_file("crc.npz", bad_crc));
    FAIL();
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("CRC-32"), std::string::npos) << e.what();
    EXPECT_EQ(e.offset(), 30 + 9 + 20) << "the member's data starts after the local header";
  }
  std::string method = z;
  method[cd + 10] = 12;  // bzip2
  EXPECT_THROW(read_npz(write_file("bz.npz", method)), DataError);
}

// np.savez's archive with ZIP64 records (tests/io/fixtures/npz/make_fixtures.py): ZIP64
// extra fields in the headers and a ZIP64 end-of-central-directory record.
std::string zip64_fixture() {
  std::ifstream in(std::string(NNFIT_SOURCE_DIR) + "/tests/io/fixtures/npz/zip64.npz", std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void put_le(std::string& z, std::size_t at, std::uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) z[at + static_cast<std::size_t>(i)] = static_cast<char>((v >> (8 * i)) & 0xff);
}

void expect_fixture_arrays(const std::vector<std::pair<std::string, Tensor>>& arrays) {
  ASSERT_EQ(arrays.size(), 2u);
  EXPECT_EQ(arrays[0].first, "x");
  EXPECT_EQ(arrays[0].second.shape(), (Shape{4, 10}));
  EXPECT_EQ(arrays[0].second.data<float>()[39], 39.0f);
  EXPECT_EQ(arrays[1].first, "y");
  EXPECT_EQ(arrays[1].second.data<std::int64_t>()[2], 9);
}

TEST(Npz, Zip64RecordsWrittenByNumpy) {
  const std::string z = zip64_fixture();
  ASSERT_NE(z.find("PK\x06\x06"), std::string::npos) << "the fixture has a ZIP64 end-of-central-directory record";
  expect_fixture_arrays(read_npz(write_file("zip64.npz", z)));
}

TEST(Npz, EndRecordDefersToZip64Record) {
  // An archive past 4 GiB or 65535 members: the classic record's count and offset hold
  // 0xFFFF and 0xFFFFFFFF, and only the ZIP64 record has the real values.
  std::string z = zip64_fixture();
  const std::size_t eocd = z.rfind("PK\x05\x06");
  put_le(z, eocd + 8, 0xffff, 2);
  put_le(z, eocd + 10, 0xffff, 2);
  put_le(z, eocd + 16, 0xffffffffu, 4);
  expect_fixture_arrays(read_npz(write_file("escaped.npz", z)));

  std::string no_locator = z;
  no_locator[eocd - 20] = 'X';  // the locator's signature
  try {
    read_npz(write_file("nolocator.npz", no_locator));
    FAIL() << "an escaped record without a ZIP64 locator was accepted";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("no ZIP64 locator"), std::string::npos) << e.what();
    EXPECT_EQ(e.offset(), static_cast<std::int64_t>(eocd));
  }
  std::string bad_record = z;
  put_le(bad_record, eocd - 20 + 8, z.size() + 100, 8);  // the locator points past the file
  EXPECT_THROW(read_npz(write_file("badrecord.npz", bad_record)), DataError);
}

TEST(Npz, CentralDirectoryCountAndOffsetFromADamagedRecord) {
  const std::string z = zip64_fixture();
  const std::size_t eocd = z.rfind("PK\x05\x06");
  // More members than the directory holds: the entry after the last one is not there.
  std::string count = z;
  put_le(count, eocd + 10, 65534, 2);
  try {
    read_npz(write_file("count.npz", count));
    FAIL() << "65534 members claimed, 2 present";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("entry 3 of 65534"), std::string::npos) << e.what();
  }
  // A directory offset past the end of the file, and one in the middle of a member.
  for (const std::uint64_t offset : {std::uint64_t{0xfffffff0u}, std::uint64_t{40}}) {
    std::string moved = z;
    put_le(moved, eocd + 16, offset, 4);
    try {
      read_npz(write_file("offset.npz", moved));
      FAIL() << "directory at " << offset << " accepted";
    } catch (const DataError& e) {
      EXPECT_NE(std::string(e.what()).find("entry 1 of 2"), std::string::npos) << e.what();
      EXPECT_EQ(e.offset(), static_cast<std::int64_t>(std::min<std::uint64_t>(offset, z.size())));
    }
  }
}

}  // namespace
}  // namespace nnfit::io
