// Private to src/io: what H5File checks before HDF5 1.10 sees a file's bytes, because
// HDF5 trusts them (fuzzing found hangs and 20 GiB allocations). Note [Damaged global
// heaps]: every global heap collection must tile with its objects. Note [Checked string
// references]: every variable-length string must name one of those objects, of its own
// length. Both in hdf5_guards.cpp.
#pragma once
#include <hdf5.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

namespace nnfit::io {

// `read_at(offset, n)` gives n bytes at offset (fewer at the end of the file).
using ReadAt = std::function<std::string(std::uint64_t, std::uint64_t)>;
// The objects of every collection, by collection address (relative to the superblock, as
// HDF5's addresses are) and object index: their sizes.
using HeapObjects = std::map<std::uint64_t, std::map<std::uint32_t, std::uint64_t>>;

// Walks every collection in a file of `file_size` bytes and returns their objects.
// throws: DataError naming `name` and the offset of a collection that does not tile.
std::shared_ptr<const HeapObjects> check_global_heaps(const ReadAt& read_at, std::uint64_t file_size,
                                                      const std::string& name);

// Whether every string of the variable-length string attribute `attr` (`n` of them, of
// datatype `type`) names an object in `heaps` of its own length; `why` says which does
// not. Call under the HDF5 mutex.
bool check_string_refs(hid_t attr, hid_t type, hssize_t n, const HeapObjects& heaps, std::string& why);

}  // namespace nnfit::io
