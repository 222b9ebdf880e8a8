// H5File: round trips on disk and in memory, and damaged files refused with a DataError
// before HDF5 can loop on them (Note [Damaged global heaps] in src/io/hdf5_file.cpp).
#include "nnfit/io/hdf5_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "nnfit/core/error.h"

namespace nnfit::io {
namespace {

class H5FileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) / ("nnfit_hdf5_test_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::string write(const std::string& name, const std::string& bytes) const {
    std::ofstream(path(name), std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    return path(name);
  }
  std::filesystem::path dir_;
};

// An image with a dataset and variable-length string attributes (which HDF5 keeps in a
// global heap collection, as h5py's model_config).
std::string sample_image() {
  H5File f = H5File::create_in_memory("sample");
  f.create_group("/model_weights/dense");
  Tensor t = Tensor::zeros(Shape{2, 3});
  for (int i = 0; i < 6; ++i) t.data<float>()[i] = 0.5f * static_cast<float>(i);
  f.write("/model_weights/dense/kernel", t);
  f.set_string_attr("/", "model_config", R"({"class_name": "Sequential"})");
  f.set_string_list_attr("/model_weights", "layer_names", {"dense", "dense_1"});
  return f.image();
}

std::uint64_t le64(const std::string& b, std::size_t at) {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(b[at + i]);
  return v;
}

void put_le64(std::string& b, std::size_t at, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) b[at + i] = static_cast<char>((v >> (8 * i)) & 0xff);
}

// Offset of the free-space object (index 0) in the image's first global heap collection.
std::size_t free_space_object(const std::string& image) {
  const std::size_t at = image.find("GCOL");
  EXPECT_NE(at, std::string::npos);
  const std::uint64_t size = le64(image, at + 8);
  std::size_t p = at + 16;
  while (p + 16 <= at + size) {
    const unsigned index = static_cast<unsigned char>(image[p]) | (static_cast<unsigned char>(image[p + 1]) << 8);
    const std::uint64_t object = le64(image, p + 8);
    if (index == 0) return p;
    p += 16 + (object + 7) / 8 * 8;
  }
  ADD_FAILURE() << "no free-space object in the collection";
  return 0;
}

TEST_F(H5FileTest, RoundTripsTensorsAndStringAttributesOnDiskAndInMemory) {
  const std::string image = sample_image();
  const std::string file = write("sample.h5", image);
  for (const H5File& f : {H5File::open_image(image, "sample"), H5File::open(file)}) {
    EXPECT_TRUE(f.is_group("/model_weights/dense"));
    EXPECT_TRUE(f.is_dataset("/model_weights/dense/kernel"));
    const Tensor t = f.read("/model_weights/dense/kernel");
    ASSERT_EQ(t.shape(), (Shape{2, 3}));
    EXPECT_FLOAT_EQ(t.data<float>()[5], 2.5f);
    EXPECT_EQ(f.string_attr("/", "model_config"), R"({"class_name": "Sequential"})");
    EXPECT_EQ(f.string_list_attr("/model_weights", "layer_names"), (std::vector<std::string>{"dense", "dense_1"}));
    EXPECT_EQ(f.string_attr("/", "keras_version"), std::nullopt);
  }
}

TEST_F(H5FileTest, RefusesAGlobalHeapWhoseFreeSpaceHasSizeZero) {
  // HDF5 1.10 loops forever on this one (found by scripts/fuzz.sh keras_file).
  std::string image = sample_image();
  const std::size_t free_object = free_space_object(image);
  put_le64(image, free_object + 8, 0);
  const std::string file = write("zero.h5", image);
  for (int on_disk = 0; on_disk < 2; ++on_disk) {
    try {
      if (on_disk) {
        H5File::open(file);
      } else {
        H5File::open_image(image, "zero image");
      }
      FAIL() << "a damaged global heap was accepted";
    } catch (const DataError& e) {
      EXPECT_EQ(e.file(), on_disk ? file : "zero image");
      EXPECT_EQ(e.offset(), static_cast<std::int64_t>(free_object));
      EXPECT_NE(std::string(e.what()).find("damaged HDF5 global heap (object 0"), std::string::npos) << e.what();
    }
  }
}

TEST_F(H5FileTest, RefusesAHeapObjectLargerThanItsCollection) {
  std::string image = sample_image();
  const std::size_t first = image.find("GCOL") + 16;  // the first object, index 1
  ASSERT_NE(static_cast<unsigned char>(image[first]), 0);
  for (const std::uint64_t size : {std::uint64_t{1} << 40, ~std::uint64_t{0} - 20, ~std::uint64_t{0}}) {
    put_le64(image, first + 8, size);
    EXPECT_THROW(H5File::open_image(image, "big"), DataError) << size;
  }
}

// Offset of the reference to the `length`-byte string in the first collection's object
// `index`: on disk, a 4-byte length, the collection's 8-byte address, a 4-byte index.
std::size_t string_reference(const std::string& image, std::uint32_t length, std::uint32_t index) {
  const std::uint64_t collection = image.find("GCOL");
  std::string ref(16, '\0');
  for (int i = 0; i < 4; ++i) ref[i] = static_cast<char>((length >> (8 * i)) & 0xff);
  put_le64(ref, 4, collection);
  for (int i = 0; i < 4; ++i) ref[12 + i] = static_cast<char>((index >> (8 * i)) & 0xff);
  const std::size_t at = image.find(ref);
  EXPECT_NE(at, std::string::npos) << "no reference to a " << length << "-byte string";
  return at;
}

TEST_F(H5FileTest, RefusesAStringWhoseLengthIsNotItsHeapObjects) {
  // HDF5 1.10 allocates what the length says before it reads the heap (fuzzing found a
  // request for 20 GiB) and copies the whole object into it: Note [Checked string references].
  const std::string image = sample_image();
  const std::string config = R"({"class_name": "Sequential"})";
  const std::size_t ref = string_reference(image, static_cast<std::uint32_t>(config.size()), 1);
  ASSERT_NE(ref, std::string::npos);
  struct Case {
    std::uint32_t length, index;
    std::string says;
  };
  for (const Case& c : {Case{0x50000000u, 1, "claims 1342177280 bytes in heap object 1"},
                        Case{27, 1, "which holds 28 bytes"}, Case{28, 99, "heap object 99"}}) {
    std::string bad = image;
    for (int i = 0; i < 4; ++i) bad[ref + i] = static_cast<char>((c.length >> (8 * i)) & 0xff);
    for (int i = 0; i < 4; ++i) bad[ref + 12 + i] = static_cast<char>((c.index >> (8 * i)) & 0xff);
    const H5File f = H5File::open_image(bad, "bad ref");
    try {
      f.string_attr("/", "model_config");
      FAIL() << "a string reference of " << c.length << " bytes in object " << c.index << " was read";
    } catch (const DataError& e) {
      EXPECT_EQ(e.file(), "bad ref");
      EXPECT_NE(std::string(e.what()).find("attribute \"model_config\" string 0 claims"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(c.says), std::string::npos) << e.what();
    }
    // The other attribute's strings are intact and still read.
    EXPECT_EQ(f.string_list_attr("/model_weights", "layer_names"), (std::vector<std::string>{"dense", "dense_1"}));
  }
}

TEST_F(H5FileTest, SignatureLookalikesInsideDataAreNotCollections) {
  // "GCOL" bytes with a wrong version or a size below HDF5's minimum are left alone.
  H5File f = H5File::create_in_memory("lookalike");
  Tensor t = Tensor::zeros(Shape{8}, DType::u8);
  std::memcpy(t.data<std::uint8_t>(), "GCOL\x02\0\0\0", 8);
  f.write("/data", t);
  Tensor u = Tensor::zeros(Shape{16}, DType::u8);
  std::memcpy(u.data<std::uint8_t>(), "GCOL\x01\0\0\0\x10\0\0\0\0\0\0\0", 16);
  f.write("/data2", u);
  const std::string image = f.image();
  const H5File back = H5File::open_image(image, "lookalike");
  EXPECT_EQ(back.read("/data").data<std::uint8_t>()[0], 'G');
}

TEST_F(H5FileTest, BadFilesAreDataErrorsNamingTheFile) {
  const std::string text = write("text.h5", "not hdf5 at all");
  EXPECT_THROW(H5File::open(text), DataError);
  EXPECT_THROW(H5File::open(path("missing.h5")), DataError);
  EXPECT_THROW(H5File::open(dir_.string()), DataError);
  EXPECT_THROW(H5File::open_image("\x89HDF", "short"), DataError);
  std::string truncated = sample_image();
  truncated.resize(truncated.size() / 2);
  EXPECT_THROW(H5File::open_image(truncated, "truncated").read("/model_weights/dense/kernel"), DataError);
}

}  // namespace
}  // namespace nnfit::io
