// IDX reader/writer: round trips, every element type, the real Fashion-MNIST files, and
// bad input (each asserting where the DataError points and what it says).
#include "nnfit/io/idx.h"

#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <numeric>
#include <string>
#include <vector>

#include "nnfit/core/error.h"

namespace nnfit::io {
namespace {

using Bytes = std::vector<unsigned char>;

std::string temp_path(const std::string& name) {
  std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) /
                              ("nnfit_idx_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return (dir / name).string();
}

std::string write_raw(const std::string& name, const Bytes& bytes) {
  std::string path = temp_path(name);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  return path;
}

Bytes gzip_bytes(const Bytes& bytes) {
  uLongf cap = compressBound(static_cast<uLong>(bytes.size())) + 64;
  Bytes out(cap);
  z_stream zs{};
  // windowBits 15 + 16 makes deflate write a gzip header and trailer.
  EXPECT_EQ(deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
  zs.next_in = const_cast<Bytef*>(bytes.data());
  zs.avail_in = static_cast<uInt>(bytes.size());
  zs.next_out = out.data();
  zs.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&zs, Z_FINISH), Z_STREAM_END);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

Bytes read_file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(in), {});
}

// An IDX header followed by payload bytes.
Bytes idx_bytes(unsigned char code, const std::vector<std::uint32_t>& dims, const Bytes& payload) {
  Bytes b{0, 0, code, static_cast<unsigned char>(dims.size())};
  for (std::uint32_t d : dims) {
    b.push_back(static_cast<unsigned char>(d >> 24));
    b.push_back(static_cast<unsigned char>(d >> 16));
    b.push_back(static_cast<unsigned char>(d >> 8));
    b.push_back(static_cast<unsigned char>(d));
  }
  b.insert(b.end(), payload.begin(), payload.end());
  return b;
}

// A pseudo-random u8 payload that deflate cannot squeeze to nothing.
Bytes noise(std::size_t n) {
  Bytes b(n);
  std::uint32_t s = 12345;
  for (auto& v : b) {
    s = s * 1664525u + 1013904223u;
    v = static_cast<unsigned char>(s >> 24);
  }
  return b;
}

// Runs fn, expecting a DataError; returns it for inspection.
template <typename Fn>
DataError expect_data_error(Fn fn) {
  try {
    fn();
  } catch (const DataError& e) {
    return e;
  }
  ADD_FAILURE() << "expected a DataError";
  return DataError("", -2, "none");
}

::testing::AssertionResult contains(const std::string& haystack, const std::string& needle) {
  if (haystack.find(needle) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "\"" << haystack << "\" does not contain \"" << needle << "\"";
}

TEST(Idx, RoundTripsU8I32F32) {
  Tensor u8 = Tensor::zeros(Shape{3, 2, 5}, DType::u8);
  for (int i = 0; i < 30; ++i) u8.data<std::uint8_t>()[i] = static_cast<std::uint8_t>(i * 9);
  Tensor i32 = Tensor::zeros(Shape{4}, DType::i32);
  const std::int32_t ivals[] = {-2147483647 - 1, -1, 0, 70000};
  std::copy(std::begin(ivals), std::end(ivals), i32.data<std::int32_t>());
  Tensor f32 = Tensor::zeros(Shape{2, 3}, DType::f32);
  const float fvals[] = {1.0f, -0.5f, 3.25e-7f, 1e30f, 0.0f, -123.75f};
  std::copy(std::begin(fvals), std::end(fvals), f32.data<float>());

  for (const Tensor& t : {u8, i32, f32}) {
    std::string path = temp_path(std::string("rt_") + std::string(dtype_name(t.dtype())) + ".idx");
    write_idx(path, t);
    Tensor back = read_idx(path);
    EXPECT_EQ(back.shape(), t.shape());
    EXPECT_EQ(back.dtype(), t.dtype());
    ASSERT_EQ(back.nbytes(), t.nbytes());
    EXPECT_EQ(std::memcmp(back.raw(), t.raw(), t.nbytes()), 0) << dtype_name(t.dtype());
  }
}

TEST(Idx, WritesBigEndianHeaderAndValues) {
  Tensor f32 = Tensor::zeros(Shape{1, 2}, DType::f32);
  f32.data<float>()[0] = 1.0f;  // 3f 80 00 00
  f32.data<float>()[1] = -2.0f;  // c0 00 00 00
  std::string path = temp_path("be.idx");
  write_idx(path, f32);
  Bytes expected = idx_bytes(0x0D, {1, 2}, {0x3f, 0x80, 0, 0, 0xc0, 0, 0, 0});
  EXPECT_EQ(read_file_bytes(path), expected);
}

TEST(Idx, WriteRejectsUnsupportedDtypeAndRankZero) {
  EXPECT_THROW(write_idx(temp_path("bad.idx"), Tensor::zeros(Shape{2}, DType::f16)), Unsupported);
  EXPECT_THROW(write_idx(temp_path("bad.idx"), Tensor::zeros(Shape{}, DType::u8)), InvalidArgument);
}

TEST(Idx, ReadsEveryElementType) {
  {
    Tensor t = read_idx(write_raw("i8.idx", idx_bytes(0x09, {3}, {0xff, 0x80, 0x7f})));
    EXPECT_EQ(t.dtype(), DType::i32);
    EXPECT_EQ(t.data<std::int32_t>()[0], -1);
    EXPECT_EQ(t.data<std::int32_t>()[1], -128);
    EXPECT_EQ(t.data<std::int32_t>()[2], 127);
  }
  {
    Tensor t = read_idx(write_raw("i16.idx", idx_bytes(0x0B, {2}, {0xff, 0xfe, 0x12, 0x34})));
    EXPECT_EQ(t.dtype(), DType::i32);
    EXPECT_EQ(t.data<std::int32_t>()[0], -2);
    EXPECT_EQ(t.data<std::int32_t>()[1], 0x1234);
  }
  {
    Tensor t = read_idx(write_raw("i32.idx", idx_bytes(0x0C, {1}, {0xff, 0xff, 0xff, 0xfd})));
    EXPECT_EQ(t.dtype(), DType::i32);
    EXPECT_EQ(t.data<std::int32_t>()[0], -3);
  }
  {
    // float64 1.5 = 3f f8 00.., -0.1 narrows to the nearest float.
    Tensor t = read_idx(write_raw("f64.idx", idx_bytes(0x0E, {2}, {0x3f, 0xf8, 0, 0, 0, 0, 0, 0, 0xbf, 0xb9,
                                                                    0x99, 0x99, 0x99, 0x99, 0x99, 0x9a})));
    EXPECT_EQ(t.dtype(), DType::f32);
    EXPECT_EQ(t.shape(), (Shape{2}));
    EXPECT_EQ(t.data<float>()[0], 1.5f);
    EXPECT_EQ(t.data<float>()[1], -0.1f);
  }
}

TEST(Idx, LargeI16PayloadCrossesStagingChunks) {
  const std::uint32_t n = 100000;  // > 64 KiB / 2 elements per staging chunk
  Bytes payload;
  for (std::uint32_t i = 0; i < n; ++i) {
    auto v = static_cast<std::uint16_t>(static_cast<std::int16_t>(static_cast<int>(i % 65536) - 32768));
    payload.push_back(static_cast<unsigned char>(v >> 8));
    payload.push_back(static_cast<unsigned char>(v));
  }
  Tensor t = read_idx(write_raw("i16_big.idx.gz", gzip_bytes(idx_bytes(0x0B, {n}, payload))));
  ASSERT_EQ(t.numel(), n);
  for (std::uint32_t i : {0u, 1u, 32767u, 32768u, 65535u, 65536u, n - 1}) {
    EXPECT_EQ(t.data<std::int32_t>()[i], static_cast<int>(i % 65536) - 32768) << i;
  }
}

TEST(Idx, GzipReadsLikeRaw) {
  Bytes raw = idx_bytes(0x08, {10, 100}, noise(1000));
  Tensor a = read_idx(write_raw("plain.idx", raw));
  Tensor b = read_idx(write_raw("plain.idx.gz", gzip_bytes(raw)));
  EXPECT_EQ(a.shape(), (Shape{10, 100}));
  EXPECT_EQ(b.shape(), a.shape());
  EXPECT_EQ(std::memcmp(a.raw(), b.raw(), a.nbytes()), 0);
}

TEST(Idx, ZeroSizedDimensionGivesEmptyTensor) {
  Tensor t = read_idx(write_raw("empty_dim.idx", idx_bytes(0x08, {0, 28, 28}, {})));
  EXPECT_EQ(t.shape(), (Shape{0, 28, 28}));
  EXPECT_EQ(t.numel(), 0);
}

// Debian's dataset-fashion-mnist package; the first labels and per-class counts were
// checked against Python's gzip module.
constexpr const char* kFashionDir = "/usr/share/datasets/fashion-mnist";

TEST(IdxFashionMnist, TrainImagesAndLabels) {
  const std::string dir = kFashionDir;
  if (!std::filesystem::exists(dir + "/train-images-idx3-ubyte.gz")) {
    GTEST_SKIP() << "Fashion-MNIST not installed at " << dir << " (apt-get install dataset-fashion-mnist)";
  }
  Tensor x = read_idx(dir + "/train-images-idx3-ubyte.gz");
  EXPECT_EQ(x.shape(), (Shape{60000, 28, 28}));
  EXPECT_EQ(x.dtype(), DType::u8);
  const auto* px = x.data<std::uint8_t>();
  EXPECT_EQ(std::accumulate(px, px + 784, std::int64_t{0}), 76247);  // first image
  EXPECT_EQ(std::accumulate(px, px + x.numel(), std::int64_t{0}), 3431114169LL);

  Tensor y = read_idx(dir + "/train-labels-idx1-ubyte.gz");
  EXPECT_EQ(y.shape(), (Shape{60000}));
  EXPECT_EQ(y.dtype(), DType::u8);
  std::vector<int> counts(10, 0);
  const auto* py = y.data<std::uint8_t>();
  for (std::int64_t i = 0; i < y.numel(); ++i) {
    ASSERT_LE(py[i], 9) << "label " << i;
    ++counts[py[i]];
  }
  EXPECT_EQ(counts, std::vector<int>(10, 6000));
  EXPECT_EQ((std::vector<int>(py, py + 10)), (std::vector<int>{9, 0, 0, 3, 0, 2, 7, 2, 5, 5}));
}

TEST(IdxFashionMnist, TestImagesAndLabels) {
  const std::string dir = kFashionDir;
  if (!std::filesystem::exists(dir + "/t10k-images-idx3-ubyte.gz")) {
    GTEST_SKIP() << "Fashion-MNIST not installed at " << dir << " (apt-get install dataset-fashion-mnist)";
  }
  EXPECT_EQ(read_idx(dir + "/t10k-images-idx3-ubyte.gz").shape(), (Shape{10000, 28, 28}));
  Tensor y = read_idx(dir + "/t10k-labels-idx1-ubyte.gz");
  EXPECT_EQ(y.shape(), (Shape{10000}));
  const auto* py = y.data<std::uint8_t>();
  EXPECT_EQ((std::vector<int>(py, py + 10)), (std::vector<int>{9, 2, 1, 1, 6, 1, 4, 6, 5, 7}));
}

TEST(IdxBadInput, TruncatedRawPayload) {
  Bytes b = idx_bytes(0x08, {4, 5}, noise(13));  // 20 payload bytes promised, 13 present
  std::string path = write_raw("trunc.idx", b);
  DataError e = expect_data_error([&] { read_idx(path); });
  EXPECT_EQ(e.file(), path);
  EXPECT_EQ(e.offset(), 12 + 13);  // where the data ran out
  EXPECT_TRUE(contains(e.what(), "truncated"));
  EXPECT_TRUE(contains(e.what(), "32 bytes in all"));        // expected size
  EXPECT_TRUE(contains(e.what(), "data ends after 25 bytes"));  // actual size
  EXPECT_TRUE(contains(e.what(), "uint8 (4, 5)"));
  EXPECT_FALSE(e.hint().empty());
}

TEST(IdxBadInput, TruncatedHeader) {
  std::string path = write_raw("trunc_header.idx", {0, 0, 0x08, 3, 0, 0, 0xea});
  DataError e = expect_data_error([&] { read_idx(path); });
  EXPECT_EQ(e.offset(), 7);
  EXPECT_TRUE(contains(e.what(), "truncated IDX header"));
  EXPECT_TRUE(contains(e.what(), "dimension sizes"));

  DataError empty = expect_data_error([&] { read_idx(write_raw("empty.idx", {})); });
  EXPECT_EQ(empty.offset(), 0);
  EXPECT_TRUE(contains(empty.what(), "empty file"));
}

TEST(IdxBadInput, TruncatedPayloadInsideValidGzip) {
  Bytes b = idx_bytes(0x08, {100, 10}, noise(700));
  std::string path = write_raw("trunc_payload.idx.gz", gzip_bytes(b));
  DataError e = expect_data_error([&] { read_idx(path); });
  EXPECT_EQ(e.file(), path);
  EXPECT_EQ(e.offset(), 12 + 700);
  EXPECT_TRUE(contains(e.what(), "1012 bytes in all"));
  EXPECT_TRUE(contains(e.what(), "decompressed data ends after 712 bytes"));
  EXPECT_FALSE(contains(e.what(), "cut off"));
}

TEST(IdxBadInput, CutOffGzipFile) {
  Bytes gz = gzip_bytes(idx_bytes(0x08, {100, 100}, noise(10000)));
  gz.resize(gz.size() / 2);
  std::string path = write_raw("cut.idx.gz", gz);
  DataError e = expect_data_error([&] { read_idx(path); });
  EXPECT_EQ(e.file(), path);
  EXPECT_GT(e.offset(), 12);
  EXPECT_LT(e.offset(), 10012);
  EXPECT_TRUE(contains(e.what(), "10012 bytes in all"));
  EXPECT_TRUE(contains(e.what(), "gzip stream itself is cut off"));
}

TEST(IdxBadInput, GzipMissingOnlyItsTrailer) {
  Bytes gz = gzip_bytes(idx_bytes(0x08, {50}, noise(50)));
  gz.resize(gz.size() - 8);  // CRC32 and ISIZE gone, every payload byte still there
  std::string path = write_raw("no_trailer.idx.gz", gz);
  DataError e = expect_data_error([&] { read_idx(path); });
  EXPECT_EQ(e.offset(), 8 + 50) << e.what();
  EXPECT_TRUE(contains(e.what(), "cut off"));
}

TEST(IdxBadInput, WrongMagic) {
  std::string path = write_raw("zip.idx", {'P', 'K', 3, 4, 20, 0, 0, 0});
  DataError e = expect_data_error([&] { read_idx(path); });
  EXPECT_EQ(e.file(), path);
  EXPECT_EQ(e.offset(), 0);
  EXPECT_TRUE(contains(e.what(), "not an IDX file"));
  EXPECT_TRUE(contains(e.what(), "50 4b 03 04"));
  EXPECT_TRUE(contains(e.what(), "00 00 <type code> <ndims>"));
  EXPECT_TRUE(contains(e.hint(), "idx?-ubyte"));
}

TEST(IdxBadInput, BadTypeCode) {
  std::string path = write_raw("type.idx", idx_bytes(0x07, {1}, {0}));
  DataError e = expect_data_error([&] { read_idx(path); });
  EXPECT_EQ(e.offset(), 2);
  EXPECT_TRUE(contains(e.what(), "type code 0x07"));
  EXPECT_TRUE(contains(e.what(), "08 (uint8)"));
}

TEST(IdxBadInput, ZeroDimensions) {
  std::string path = write_raw("ndims0.idx", {0, 0, 0x08, 0, 1, 2, 3});
  DataError e = expect_data_error([&] { read_idx(path); });
  EXPECT_EQ(e.offset(), 3);
  EXPECT_TRUE(contains(e.what(), "0 dimensions"));
}

TEST(IdxBadInput, TrailingBytesRawAndGzip) {
  Bytes b = idx_bytes(0x0D, {2}, Bytes(8 + 3, 0));  // 8 payload bytes + 3 extra
  std::string raw = write_raw("trailing.idx", b);
  DataError e = expect_data_error([&] { read_idx(raw); });
  EXPECT_EQ(e.file(), raw);
  EXPECT_EQ(e.offset(), 16);
  EXPECT_TRUE(contains(e.what(), "3 trailing bytes"));
  EXPECT_TRUE(contains(e.what(), "file has 19"));

  std::string gz = write_raw("trailing.idx.gz", gzip_bytes(b));
  DataError g = expect_data_error([&] { read_idx(gz); });
  EXPECT_EQ(g.offset(), 16);
  EXPECT_TRUE(contains(g.what(), "3 trailing bytes"));
  EXPECT_TRUE(contains(g.what(), "decompressed data has 19"));
}

TEST(IdxBadInput, MissingFile) {
  std::string path = temp_path("does_not_exist.idx");
  DataError e = expect_data_error([&] { read_idx(path); });
  EXPECT_EQ(e.file(), path);
  EXPECT_EQ(e.offset(), -1);
  EXPECT_TRUE(contains(e.what(), "No such file or directory"));
  EXPECT_TRUE(contains(e.what(), path));
}

TEST(IdxBadInput, DirectoryIsNotAFile) {
  std::string dir = temp_path("a_directory");
  std::filesystem::create_directories(dir);
  DataError e = expect_data_error([&] { read_idx(dir); });
  EXPECT_TRUE(contains(e.what(), "is a directory, not an IDX file")) << e.what();
}

TEST(IdxBadInput, CorruptGzipData) {
  Bytes gz = gzip_bytes(idx_bytes(0x08, {100, 100}, noise(10000)));
  for (std::size_t i = gz.size() / 3; i < gz.size() / 3 + 16; ++i) gz[i] ^= 0x5a;
  std::string path = write_raw("corrupt.idx.gz", gz);
  DataError e = expect_data_error([&] { read_idx(path); });
  EXPECT_EQ(e.file(), path);
  EXPECT_TRUE(contains(e.what(), "corrupt gzip stream"));
  EXPECT_GE(e.offset(), 0);
  EXPECT_TRUE(contains(e.hint(), "damaged"));
}

TEST(IdxBadInput, CorruptGzipChecksum) {
  Bytes gz = gzip_bytes(idx_bytes(0x08, {64}, noise(64)));
  gz[gz.size() - 8] ^= 0xff;  // first byte of the CRC32 trailer
  DataError e = expect_data_error([&] { read_idx(write_raw("crc.idx.gz", gz)); });
  EXPECT_TRUE(contains(e.what(), "corrupt gzip stream"));
  EXPECT_TRUE(contains(e.what(), "incorrect data check"));  // zlib's words for a CRC mismatch
}

TEST(IdxBadInput, HugeDimsInSmallGzipRejectedBeforeAllocating) {
  std::string path = write_raw("huge.idx.gz", gzip_bytes(idx_bytes(0x08, {60000, 60000, 60000}, {})));
  DataError e = expect_data_error([&] { read_idx(path); });
  EXPECT_EQ(e.offset(), 4);
  EXPECT_TRUE(contains(e.what(), "more than a gzip file of"));

  std::string overflow = write_raw("overflow.idx", idx_bytes(0x0E, {0xffffffff, 0xffffffff, 0xffffffff}, {}));
  DataError o = expect_data_error([&] { read_idx(overflow); });
  EXPECT_TRUE(contains(o.what(), "overflow"));
}

}  // namespace
}  // namespace nnfit::io
