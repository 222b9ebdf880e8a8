// H5File: the part of the HDF5 C library nnfit needs for Keras's files (groups, numeric
// datasets, string attributes), as an RAII handle whose failures are DataErrors naming the
// file and the HDF5 object path. Files open from disk or from bytes in memory (a
// model.weights.h5 inside a .keras zip needs no temporary file) and are created on disk
// or in memory. The HDF5 headers stay in the .cpp.
//
// Thread safety: Debian's HDF5 is built without its thread-safe option, so every call
// takes one process-wide mutex; handles may be used from any thread.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "nnfit/core/tensor.h"

namespace nnfit::io {

// Where the HDF5 file whose first bytes are `head` ends: its superblock's base address plus
// its end-of-file address (superblock versions 0 to 3, the signature at 0, 512, 1024, ...
// within `head`); nullopt when `head` holds no readable superblock. Bytes past that end are
// not part of the file: HDF5 never reads them.
std::optional<std::uint64_t> hdf5_end_of_file(const std::string& head);

class H5File {
 public:
  // throws: DataError (missing file, a directory, not HDF5, damaged).
  static H5File open(const std::string& path);
  // An HDF5 file image held in `bytes`; `name` is what errors call it.
  static H5File open_image(const std::string& bytes, const std::string& name);
  // A new empty file at `path` (truncating), or in memory (image() gives its bytes).
  static H5File create(const std::string& path);
  static H5File create_in_memory(const std::string& name);

  H5File(H5File&& other) noexcept;
  H5File& operator=(H5File&& other) noexcept;
  H5File(const H5File&) = delete;
  H5File& operator=(const H5File&) = delete;
  ~H5File();

  const std::string& name() const { return name_; }
  // How many values the datasets of a file opened here hold in all (0 for a file made
  // here): what any model loaded from it can fill.
  std::uint64_t dataset_values() const { return dataset_values_; }
  // The bytes of a file made by create_in_memory (flushed first).
  std::string image() const;
  // Flushes and closes; errors surface here rather than in the destructor.
  void close();

  // Paths are absolute within the file ("/model_weights/dense") or relative to the root.
  bool is_group(const std::string& path) const;
  bool is_dataset(const std::string& path) const;
  // A group's members in name order (HDF5's default index).
  std::vector<std::string> children(const std::string& group) const;
  // Creates the group and any missing parents.
  void create_group(const std::string& path);

  // A numeric dataset as a host tensor: float32 (float64 is converted), int64, int32 or
  // uint8, any rank (rank 0 for a scalar). Its size is checked against the file's before
  // anything is allocated. throws: DataError naming the object for another type.
  Tensor read(const std::string& path) const;
  // Writes `t` (float32, int64, int32 or uint8; contiguous) as a new dataset.
  void write(const std::string& path, const Tensor& t);

  // A string attribute of the object at `path`: a scalar or 1-D array of variable- or
  // fixed-length strings; Keras's split attributes (name0, name1, ...) are joined. nullopt
  // when the attribute is absent.
  std::optional<std::vector<std::string>> string_list_attr(const std::string& path, const std::string& name) const;
  std::optional<std::string> string_attr(const std::string& path, const std::string& name) const;
  // Writes variable-length UTF-8 strings, as h5py does by default.
  void set_string_attr(const std::string& path, const std::string& name, const std::string& value);
  void set_string_list_attr(const std::string& path, const std::string& name, const std::vector<std::string>& values);

 private:
  // The global heap objects the pre-walk found and checked, by collection address (relative
  // to the superblock, as HDF5 addresses are) and object index: their sizes. A variable-
  // length string may only name one of these (Note [Checked string references]).
  using HeapObjects = std::map<std::uint64_t, std::map<std::uint32_t, std::uint64_t>>;

  H5File(std::int64_t id, std::string name, bool in_memory, std::shared_ptr<const HeapObjects> heaps = nullptr);
  [[noreturn]] void fail(const std::string& path, const std::string& what) const;
  std::int64_t id_ = -1;  // hid_t
  std::string name_;
  bool in_memory_ = false;
  std::shared_ptr<const HeapObjects> heaps_;  // null for a file created here: its strings are ours
  std::uint64_t dataset_values_ = 0;
};

}  // namespace nnfit::io
