// H5File refuses, when a file opens, every way an HDF5 file reaches outside itself (Note
// [HDF5 files stay inside themselves]): external links, external storage, virtual
// datasets, filters HDF5 does not ship; and a float type whose fields are not IEEE's.
// The files are made with the HDF5 C API, as a hostile writer would.
#include <gtest/gtest.h>
#include <hdf5.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>

#include "nnfit/core/error.h"
#include "nnfit/io/hdf5_file.h"

namespace nnfit::io {
namespace {

class H5ObjectChecksTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) / ("nnfit_hdf5_checks_test_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // A file holding a 2x3 float32 /weights/kernel, made by `extra(file)` too.
  std::string make(const std::string& name, const std::function<void(hid_t)>& extra = {}) const {
    const hid_t f = H5Fcreate(path(name).c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    EXPECT_GE(f, 0);
    const hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
    H5Pset_create_intermediate_group(lcpl, 1);
    const hsize_t dims[2] = {2, 3};
    const hid_t space = H5Screate_simple(2, dims, nullptr);
    const hid_t d = H5Dcreate2(f, "/weights/kernel", H5T_IEEE_F32LE, space, lcpl, H5P_DEFAULT, H5P_DEFAULT);
    const float values[6] = {0, 1, 2, 3, 4, 5};
    H5Dwrite(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, values);
    H5Dclose(d);
    if (extra) extra(f);
    H5Sclose(space);
    H5Pclose(lcpl);
    H5Fclose(f);
    return path(name);
  }
  std::filesystem::path dir_;
};

std::string slurp(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// The refusal H5File::open and H5File::open_image give for the file at `p` ("" if none).
std::string refusal(const std::string& p, bool image = false) {
  try {
    if (image) {
      H5File::open_image(slurp(p), p);
    } else {
      H5File::open(p);
    }
  } catch (const DataError& e) {
    return e.what();
  }
  return "";
}

TEST_F(H5ObjectChecksTest, AnOrdinaryFileOpensAndReads) {
  const std::string p = make("plain.h5");
  EXPECT_EQ(refusal(p), "");
  const Tensor t = H5File::open(p).read("/weights/kernel");
  EXPECT_FLOAT_EQ(t.data<float>()[5], 5.0f);
}

TEST_F(H5ObjectChecksTest, ExternalLinksAreRefusedNotFollowed) {
  // The target is a FIFO: following the link would block in open() for ever.
  ASSERT_EQ(::mkfifo(path("pipe.h5").c_str(), 0600), 0);
  const std::string p = make("elink.h5", [&](hid_t f) {
    H5Lcreate_external(path("pipe.h5").c_str(), "/data", f, "/weights/bias", H5P_DEFAULT, H5P_DEFAULT);
  });
  for (bool image : {false, true}) {
    const std::string what = refusal(p, image);
    EXPECT_NE(what.find("/weights/bias: an external link (to another file)"), std::string::npos) << what;
  }
}

TEST_F(H5ObjectChecksTest, ExternalStorageIsRefused) {
  const std::string p = make("external.h5", [&](hid_t f) {
    const hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_external(dcpl, path("raw.bin").c_str(), 0, 24);
    const hsize_t n = 6;
    const hid_t space = H5Screate_simple(1, &n, nullptr);
    H5Dclose(H5Dcreate2(f, "/outside", H5T_IEEE_F32LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT));
    H5Sclose(space);
    H5Pclose(dcpl);
  });
  const std::string what = refusal(p);
  EXPECT_NE(what.find("/outside: its data is stored in external files"), std::string::npos) << what;
}

TEST_F(H5ObjectChecksTest, VirtualDatasetsAreRefused) {
  const std::string source = make("source.h5");
  const std::string p = make("virtual.h5", [&](hid_t f) {
    const hsize_t dims[2] = {2, 3};
    const hid_t space = H5Screate_simple(2, dims, nullptr);
    const hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_virtual(dcpl, space, source.c_str(), "/weights/kernel", space);
    H5Dclose(H5Dcreate2(f, "/mapped", H5T_IEEE_F32LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT));
    H5Pclose(dcpl);
    H5Sclose(space);
  });
  const std::string what = refusal(p);
  EXPECT_NE(what.find("/mapped: a virtual dataset"), std::string::npos) << what;
}

size_t pass_through(unsigned, size_t, const unsigned[], size_t nbytes, size_t*, void**) { return nbytes; }

TEST_F(H5ObjectChecksTest, FiltersHdf5DoesNotShipAreRefused) {
  // A filter registered while writing, as a plugin would; gone when the file is read.
  const H5Z_filter_t kFilter = 40000;
  const H5Z_class2_t filter{H5Z_CLASS_T_VERS, kFilter, 1, 1, "test filter", nullptr, nullptr, pass_through};
  ASSERT_GE(H5Zregister(&filter), 0);
  const std::string p = make("filtered.h5", [&](hid_t f) {
    const hsize_t n = 6;
    const hid_t space = H5Screate_simple(1, &n, nullptr);
    const hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, 1, &n);
    H5Pset_filter(dcpl, kFilter, H5Z_FLAG_MANDATORY, 0, nullptr);
    H5Dclose(H5Dcreate2(f, "/packed", H5T_IEEE_F32LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT));
    H5Pclose(dcpl);
    H5Sclose(space);
  });
  ASSERT_GE(H5Zunregister(kFilter), 0);
  const std::string what = refusal(p);
  EXPECT_NE(what.find("/packed: compressed with filter 40000, which HDF5 does not ship"), std::string::npos) << what;
}

TEST_F(H5ObjectChecksTest, AFloat32WithAFortyBitExponentIsRefused) {
  // The sweep's one flipped byte: the type message's exponent size 8 -> 40. HDF5 reads
  // such data as NaNs; h5py and Keras refuse it.
  std::string b = slurp(make("exponent.h5"));
  const std::string fields("\x00\x00\x20\x00\x17\x08\x00\x17\x7f\x00\x00\x00", 12);  // offset, precision, epos, esize, mpos, msize, bias
  const std::size_t at = b.find(fields);
  ASSERT_NE(at, std::string::npos);
  b[at + 5] = 40;
  std::ofstream(path("exponent.h5"), std::ios::binary | std::ios::trunc).write(b.data(), static_cast<std::streamsize>(b.size()));
  for (bool image : {false, true}) {
    const std::string what = refusal(path("exponent.h5"), image);
    EXPECT_NE(what.find("/weights/kernel: a damaged float32 type (sign bit 31, exponent 40 bits"), std::string::npos)
        << what;
  }
}

TEST_F(H5ObjectChecksTest, SpecialFilesAreRefusedBeforeHdf5OpensThem) {
  ASSERT_EQ(::mkfifo(path("model.h5").c_str(), 0600), 0);
  std::string what = refusal(path("model.h5"));
  EXPECT_NE(what.find("is a FIFO (named pipe), not an HDF5 file"), std::string::npos) << what;
  what = refusal("/dev/urandom");
  EXPECT_NE(what.find("/dev/urandom: is a character device"), std::string::npos) << what;
}

}  // namespace
}  // namespace nnfit::io
