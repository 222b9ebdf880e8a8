// Private to src/io: what H5File checks through the HDF5 C API once a file is open and
// before any dataset is read (Note [HDF5 files stay inside themselves] in
// hdf5_object_checks.cpp): nothing reaches outside the file (external links, external
// storage, virtual datasets, filters HDF5 does not ship), and every numeric datatype is
// the IEEE or two's-complement type its size says.
#pragma once
#include <hdf5.h>

#include <cstdint>
#include <string>

namespace nnfit::io {

// A file access property list that refuses to traverse external links and turns HDF5's
// filter plugin loading off (the caller closes it). Call under the HDF5 mutex.
hid_t inside_only_fapl();

// Walks every link and dataset of the open `file`; returns how many values its datasets
// hold in all. throws: DataError naming `name` and the object. Call under the HDF5 mutex.
std::uint64_t check_file_stays_inside(hid_t file, const std::string& name);

// A float or integer dataset type must be the standard layout of its size (a float32
// with a 40-bit exponent is a damaged type, not data). `why` says what is wrong when it
// returns false; other classes pass.
bool numeric_type_is_valid(hid_t type, std::string& why);

}  // namespace nnfit::io
