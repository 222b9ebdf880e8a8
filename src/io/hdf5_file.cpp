// H5File over the HDF5 1.10 C API. Automatic error printing is off; every failing call
// becomes a DataError with the file and object path. Dataset sizes are checked against
// the file before a tensor is allocated, so a damaged header cannot ask for terabytes,
// and a file that reaches outside itself is refused when it opens (hdf5_object_checks.h).
#include "nnfit/io/hdf5_file.h"

#include <hdf5.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <mutex>

#include "io/hdf5_guards.h"
#include "io/hdf5_object_checks.h"
#include "nnfit/core/error.h"
#include "nnfit/io/regular_file.h"

namespace nnfit::io {

namespace {

std::mutex& hdf5_mutex() {
  static std::mutex m;
  return m;
}

void quiet_hdf5() {
  static std::once_flag once;
  std::call_once(once, [] {
    // No library shutdown at exit: it closes the files still open, and a file whose close
    // failed (a write refused: disk full, file too large) made that crash in H5F__close_cb.
    H5dont_atexit();
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  });
}

// Closes an HDF5 handle with the right function when it leaves scope.
struct Handle {
  hid_t id;
  herr_t (*closer)(hid_t);
  Handle(hid_t i, herr_t (*c)(hid_t)) : id(i), closer(c) {}
  ~Handle() {
    if (id >= 0) closer(id);
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  bool ok() const { return id >= 0; }
};

std::string rel(const std::string& path) { return path.empty() ? "/" : path; }

std::atomic<unsigned>& memory_counter() {
  static std::atomic<unsigned> n{0};
  return n;
}

}  // namespace

H5File::H5File(std::int64_t id, std::string name, bool in_memory, std::shared_ptr<const HeapObjects> heaps)
    : id_(id), name_(std::move(name)), in_memory_(in_memory), heaps_(std::move(heaps)) {}

H5File::H5File(H5File&& o) noexcept
    : id_(o.id_),
      name_(std::move(o.name_)),
      in_memory_(o.in_memory_),
      heaps_(std::move(o.heaps_)),
      dataset_values_(o.dataset_values_) {
  o.id_ = -1;
}

H5File& H5File::operator=(H5File&& o) noexcept {
  if (this != &o) {
    if (id_ >= 0) {
      std::lock_guard<std::mutex> lock(hdf5_mutex());
      H5Fclose(id_);
    }
    id_ = o.id_;
    name_ = std::move(o.name_);
    in_memory_ = o.in_memory_;
    heaps_ = std::move(o.heaps_);
    dataset_values_ = o.dataset_values_;
    o.id_ = -1;
  }
  return *this;
}

H5File::~H5File() {
  if (id_ >= 0) {
    std::lock_guard<std::mutex> lock(hdf5_mutex());
    H5Fclose(id_);
  }
}

void H5File::close() {
  if (id_ < 0) return;
  std::lock_guard<std::mutex> lock(hdf5_mutex());
  const herr_t rc = H5Fclose(id_);
  id_ = -1;
  if (rc < 0) throw DataError(name_, -1, "cannot finish writing the HDF5 file (disk full?)");
}

void H5File::fail(const std::string& path, const std::string& what) const {
  throw DataError(name_, -1, rel(path) + ": " + what);
}

H5File H5File::open(const std::string& path) {
  require_regular_file(path, "an HDF5 file");  // H5Fis_hdf5 would block on a FIFO
  quiet_hdf5();
  std::lock_guard<std::mutex> lock(hdf5_mutex());
  if (H5Fis_hdf5(path.c_str()) <= 0) {
    throw DataError(path, 0, "not an HDF5 file (no HDF5 signature)", "give a Keras .h5, .weights.h5 or .keras file");
  }
  std::shared_ptr<const HeapObjects> heaps;
  {
    std::ifstream in(path, std::ios::binary | std::ios::ate);
    if (!in) throw DataError(path, -1, "cannot read the file");
    const auto file_size = static_cast<std::uint64_t>(in.tellg());
    const ReadAt read_at = [&](std::uint64_t offset, std::uint64_t n) {
      std::string out(static_cast<std::size_t>(std::min(n, file_size - std::min(offset, file_size))), '\0');
      in.clear();
      in.seekg(static_cast<std::streamoff>(offset));
      in.read(out.data(), static_cast<std::streamsize>(out.size()));
      out.resize(static_cast<std::size_t>(in.gcount()));
      return out;
    };
    heaps = check_global_heaps(read_at, file_size, path);  // Note [Damaged global heaps]
  }
  Handle fapl(inside_only_fapl(), H5Pclose);
  if (!fapl.ok()) throw DataError(path, -1, "cannot set up the HDF5 library to read the file");
  const hid_t id = H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl.id);
  if (id < 0) throw DataError(path, -1, "cannot open the HDF5 file (damaged or truncated?)");
  Handle file(id, H5Fclose);
  const std::uint64_t values = check_file_stays_inside(id, path);  // Note [HDF5 files stay inside themselves]
  file.id = -1;
  H5File out(id, path, false, std::move(heaps));
  out.dataset_values_ = values;
  return out;
}

std::optional<std::uint64_t> hdf5_end_of_file(const std::string& head) {
  static const char kSignature[] = "\x89HDF\r\n\x1a\n";
  const auto le = [&](std::size_t at, std::size_t width) {
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < width; ++i) v |= std::uint64_t(static_cast<unsigned char>(head[at + i])) << (8 * i);
    return v;
  };
  for (std::size_t at = 0; at + 64 <= head.size(); at = at == 0 ? 512 : at * 2) {
    if (std::memcmp(head.data() + at, kSignature, 8) != 0) continue;
    const unsigned version = static_cast<unsigned char>(head[at + 8]);
    // Version 0/1: sizes at +13, base address at +24 (+28 for version 1); versions 2/3:
    // sizes at +9, base address at +12. The end-of-file address is two addresses later.
    const std::size_t sizes = version <= 1 ? at + 13 : at + 9;
    const std::size_t base = version == 0 ? at + 24 : version == 1 ? at + 28 : at + 12;
    if (version > 3) return std::nullopt;
    const std::size_t width = static_cast<unsigned char>(head[sizes]);
    if ((width != 2 && width != 4 && width != 8) || base + 3 * width > head.size()) return std::nullopt;
    const std::uint64_t undefined = width == 8 ? ~0ull : (1ull << (8 * width)) - 1;
    const std::uint64_t b = le(base, width), end = le(base + 2 * width, width);
    if (b == undefined || end == undefined || end > ~0ull - b) return std::nullopt;
    return b + end;
  }
  return std::nullopt;
}

H5File H5File::open_image(const std::string& bytes, const std::string& name) {
  quiet_hdf5();
  std::lock_guard<std::mutex> lock(hdf5_mutex());
  static const char kSignature[] = "\x89HDF\r\n\x1a\n";
  if (bytes.size() < 8 || std::memcmp(bytes.data(), kSignature, 8) != 0) {
    throw DataError(name, 0, "not an HDF5 file (no HDF5 signature)");
  }
  const ReadAt read_at = [&](std::uint64_t offset, std::uint64_t n) {
    const std::uint64_t from = std::min<std::uint64_t>(offset, bytes.size());
    return bytes.substr(static_cast<std::size_t>(from), static_cast<std::size_t>(std::min<std::uint64_t>(n, bytes.size() - from)));
  };
  auto heaps = check_global_heaps(read_at, bytes.size(), name);  // Note [Damaged global heaps]
  Handle fapl(inside_only_fapl(), H5Pclose);
  if (!fapl.ok() || H5Pset_fapl_core(fapl.id, 1 << 16, 0) < 0 ||
      H5Pset_file_image(fapl.id, const_cast<char*>(bytes.data()), bytes.size()) < 0) {
    throw DataError(name, -1, "cannot hand the HDF5 image to the library");
  }
  const std::string id_name = "nnfit_image_" + std::to_string(memory_counter()++);
  const hid_t id = H5Fopen(id_name.c_str(), H5F_ACC_RDONLY, fapl.id);
  if (id < 0) throw DataError(name, -1, "cannot open the HDF5 data (damaged or truncated?)");
  Handle file(id, H5Fclose);
  const std::uint64_t values = check_file_stays_inside(id, name);  // Note [HDF5 files stay inside themselves]
  file.id = -1;
  H5File out(id, name, true, std::move(heaps));
  out.dataset_values_ = values;
  return out;
}

H5File H5File::create(const std::string& path) {
  quiet_hdf5();
  std::lock_guard<std::mutex> lock(hdf5_mutex());
  const hid_t id = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  if (id < 0) throw DataError(path, -1, "cannot create the HDF5 file");
  return H5File(id, path, false);
}

H5File H5File::create_in_memory(const std::string& name) {
  quiet_hdf5();
  std::lock_guard<std::mutex> lock(hdf5_mutex());
  Handle fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
  if (!fapl.ok() || H5Pset_fapl_core(fapl.id, 1 << 16, 0) < 0) throw DataError(name, -1, "cannot set up an HDF5 image");
  const std::string id_name = "nnfit_image_" + std::to_string(memory_counter()++);
  const hid_t id = H5Fcreate(id_name.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.id);
  if (id < 0) throw DataError(name, -1, "cannot create an HDF5 image");
  return H5File(id, name, true);
}

std::string H5File::image() const {
  std::lock_guard<std::mutex> lock(hdf5_mutex());
  if (H5Fflush(id_, H5F_SCOPE_GLOBAL) < 0) fail("", "cannot flush the HDF5 image");
  const ssize_t n = H5Fget_file_image(id_, nullptr, 0);
  if (n < 0) fail("", "cannot read the HDF5 image");
  std::string out(static_cast<std::size_t>(n), '\0');
  if (H5Fget_file_image(id_, out.data(), out.size()) != n) fail("", "cannot read the HDF5 image");
  return out;
}

namespace {

// Whether every link on `path` exists (H5Lexists fails on a missing parent).
bool links_exist(hid_t file, const std::string& path) {
  std::string prefix;
  for (std::size_t start = 0;;) {
    const std::size_t slash = path.find('/', start);
    const std::string part = path.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
    if (!part.empty()) {
      prefix += "/" + part;
      if (H5Lexists(file, prefix.c_str(), H5P_DEFAULT) <= 0) return false;
    }
    if (slash == std::string::npos) return true;
    start = slash + 1;
  }
}

H5I_type_t object_type(hid_t file, const std::string& path) {
  if (!links_exist(file, path)) return H5I_BADID;
  Handle obj(H5Oopen(file, path.c_str(), H5P_DEFAULT), H5Oclose);
  return obj.ok() ? H5Iget_type(obj.id) : H5I_BADID;
}

}  // namespace

bool H5File::is_group(const std::string& path) const {
  if (path.empty() || path == "/") return true;
  std::lock_guard<std::mutex> lock(hdf5_mutex());
  return object_type(id_, path) == H5I_GROUP;
}

bool H5File::is_dataset(const std::string& path) const {
  std::lock_guard<std::mutex> lock(hdf5_mutex());
  return object_type(id_, path) == H5I_DATASET;
}

std::vector<std::string> H5File::children(const std::string& group) const {
  if (!is_group(group)) fail(group, "no such group");
  std::lock_guard<std::mutex> lock(hdf5_mutex());
  Handle g(H5Gopen2(id_, rel(group).c_str(), H5P_DEFAULT), H5Gclose);
  H5G_info_t info;
  if (!g.ok() || H5Gget_info(g.id, &info) < 0) fail(group, "cannot list the group");
  std::vector<std::string> out;
  for (hsize_t i = 0; i < info.nlinks; ++i) {
    const ssize_t n = H5Lget_name_by_idx(g.id, ".", H5_INDEX_NAME, H5_ITER_INC, i, nullptr, 0, H5P_DEFAULT);
    if (n < 0) fail(group, "cannot read a member's name");
    std::string name(static_cast<std::size_t>(n) + 1, '\0');
    H5Lget_name_by_idx(g.id, ".", H5_INDEX_NAME, H5_ITER_INC, i, name.data(), name.size(), H5P_DEFAULT);
    name.resize(static_cast<std::size_t>(n));
    out.push_back(std::move(name));
  }
  return out;
}

void H5File::create_group(const std::string& path) {
  if (is_group(path)) return;
  std::lock_guard<std::mutex> lock(hdf5_mutex());
  Handle lcpl(H5Pcreate(H5P_LINK_CREATE), H5Pclose);
  H5Pset_create_intermediate_group(lcpl.id, 1);
  Handle g(H5Gcreate2(id_, path.c_str(), lcpl.id, H5P_DEFAULT, H5P_DEFAULT), H5Gclose);
  if (!g.ok()) fail(path, "cannot create the group");
}

Tensor H5File::read(const std::string& path) const {
  if (!is_dataset(path)) fail(path, "no such dataset");
  std::lock_guard<std::mutex> lock(hdf5_mutex());
  Handle d(H5Dopen2(id_, path.c_str(), H5P_DEFAULT), H5Dclose);
  Handle type(d.ok() ? H5Dget_type(d.id) : -1, H5Tclose);
  Handle space(d.ok() ? H5Dget_space(d.id) : -1, H5Sclose);
  if (!d.ok() || !type.ok() || !space.ok()) fail(path, "cannot open the dataset");
  const H5T_class_t cls = H5Tget_class(type.id);
  const std::size_t size = H5Tget_size(type.id);
  std::string why;
  if (!numeric_type_is_valid(type.id, why)) fail(path, why);
  DType dtype;
  hid_t mem;
  if (cls == H5T_FLOAT && (size == 4 || size == 8)) {
    dtype = DType::f32;
    mem = H5T_NATIVE_FLOAT;
  } else if (cls == H5T_INTEGER && size == 8 && H5Tget_sign(type.id) == H5T_SGN_2) {
    dtype = DType::i64;
    mem = H5T_NATIVE_INT64;
  } else if (cls == H5T_INTEGER && size == 4 && H5Tget_sign(type.id) == H5T_SGN_2) {
    dtype = DType::i32;
    mem = H5T_NATIVE_INT32;
  } else if (cls == H5T_INTEGER && size == 1 && H5Tget_sign(type.id) == H5T_SGN_NONE) {
    dtype = DType::u8;
    mem = H5T_NATIVE_UINT8;
  } else {
    fail(path, "holds " + std::string(cls == H5T_FLOAT ? "float" : cls == H5T_INTEGER ? "integer" : "non-numeric") +
                   " values of " + std::to_string(size) + " bytes; nnfit reads float32/64, int64, int32 and uint8");
  }
  const int rank = H5Sget_simple_extent_ndims(space.id);
  if (rank < 0 || rank > 8) fail(path, "has an unreadable shape");
  hsize_t dims[8] = {};
  H5Sget_simple_extent_dims(space.id, dims, nullptr);
  std::vector<std::int64_t> shape;
  std::uint64_t count = 1;
  for (int i = 0; i < rank; ++i) {
    if (dims[i] > static_cast<hsize_t>(std::numeric_limits<std::int64_t>::max()) ||
        (dims[i] && count > std::numeric_limits<std::uint64_t>::max() / dims[i])) {
      fail(path, "has a shape whose size overflows");
    }
    count *= dims[i];
    shape.push_back(static_cast<std::int64_t>(dims[i]));
  }
  hsize_t file_size = 0;
  H5Fget_filesize(id_, &file_size);
  const std::uint64_t stored_bytes = count * size;
  if (count > std::numeric_limits<std::uint64_t>::max() / std::max<std::size_t>(size, 1) ||
      (!in_memory_ && stored_bytes > static_cast<std::uint64_t>(file_size)) ||
      (in_memory_ && stored_bytes > static_cast<std::uint64_t>(file_size) + (1u << 20))) {
    fail(path, "claims " + std::to_string(count) + " values, more than the file's " + std::to_string(file_size) +
                   " bytes hold (damaged or truncated)");
  }
  Tensor t = Tensor::zeros(Shape(shape), dtype);
  if (count > 0 && H5Dread(d.id, mem, H5S_ALL, H5S_ALL, H5P_DEFAULT, t.raw()) < 0) {
    fail(path, "cannot read the values (damaged or truncated)");
  }
  return t;
}

void H5File::write(const std::string& path, const Tensor& t) {
  hid_t mem;
  switch (t.dtype()) {
    case DType::f32: mem = H5T_IEEE_F32LE; break;
    case DType::i64: mem = H5T_STD_I64LE; break;
    case DType::i32: mem = H5T_STD_I32LE; break;
    case DType::u8: mem = H5T_STD_U8LE; break;
    default: fail(path, "cannot write a " + std::string(dtype_name(t.dtype())) + " tensor");
  }
  std::lock_guard<std::mutex> lock(hdf5_mutex());
  std::vector<hsize_t> dims(t.shape().dims().begin(), t.shape().dims().end());
  Handle space(dims.empty() ? H5Screate(H5S_SCALAR) : H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr),
               H5Sclose);
  Handle lcpl(H5Pcreate(H5P_LINK_CREATE), H5Pclose);
  H5Pset_create_intermediate_group(lcpl.id, 1);
  Handle d(H5Dcreate2(id_, path.c_str(), mem, space.id, lcpl.id, H5P_DEFAULT, H5P_DEFAULT), H5Dclose);
  const hid_t native = t.dtype() == DType::f32   ? H5T_NATIVE_FLOAT
                       : t.dtype() == DType::i64 ? H5T_NATIVE_INT64
                       : t.dtype() == DType::i32 ? H5T_NATIVE_INT32
                                                 : H5T_NATIVE_UINT8;
  if (!d.ok() || (t.numel() > 0 && H5Dwrite(d.id, native, H5S_ALL, H5S_ALL, H5P_DEFAULT, t.raw()) < 0)) {
    fail(path, "cannot write the dataset");
  }
}

namespace {

// Reads one string attribute (scalar or 1-D; variable or fixed length) into out. `heaps`
// (null for a file created here) checks variable-length strings first; `why` says what
// is wrong when it returns false.
bool read_strings(hid_t attr, const HeapObjects* heaps, std::vector<std::string>& out, std::string& why) {
  Handle type(H5Aget_type(attr), H5Tclose);
  Handle space(H5Aget_space(attr), H5Sclose);
  if (!type.ok() || !space.ok()) return false;
  const hssize_t n = H5Sget_simple_extent_npoints(space.id);
  if (n < 0 || n > (1 << 24)) return false;
  if (H5Tget_class(type.id) != H5T_STRING) {
    return n == 0;  // h5py writes an empty list as an empty float array
  }
  if (H5Tis_variable_str(type.id) > 0) {
    if (n > 0 && heaps != nullptr && !check_string_refs(attr, type.id, n, *heaps, why)) return false;
    Handle mem(H5Tcopy(H5T_C_S1), H5Tclose);
    H5Tset_size(mem.id, H5T_VARIABLE);
    H5Tset_cset(mem.id, H5Tget_cset(type.id));
    std::vector<char*> ptrs(static_cast<std::size_t>(n), nullptr);
    if (n > 0 && H5Aread(attr, mem.id, ptrs.data()) < 0) return false;
    for (char* p : ptrs) out.emplace_back(p ? p : "");
    if (n > 0) H5Dvlen_reclaim(mem.id, space.id, H5P_DEFAULT, ptrs.data());
    return true;
  }
  const std::size_t size = H5Tget_size(type.id);
  if (size == 0 || size > (1 << 20)) return false;
  std::string buf(static_cast<std::size_t>(n) * size, '\0');
  Handle mem(H5Tcopy(type.id), H5Tclose);
  if (n > 0 && H5Aread(attr, mem.id, buf.data()) < 0) return false;
  for (hssize_t i = 0; i < n; ++i) {
    std::string s = buf.substr(static_cast<std::size_t>(i) * size, size);
    s.resize(std::strlen(s.c_str()));
    out.push_back(std::move(s));
  }
  return true;
}

}  // namespace

std::optional<std::vector<std::string>> H5File::string_list_attr(const std::string& path, const std::string& name) const {
  if (!is_group(path) && !is_dataset(path)) fail(path, "no such object");
  std::lock_guard<std::mutex> lock(hdf5_mutex());
  const std::string obj = rel(path);
  auto read_one = [&](const std::string& attr_name, std::vector<std::string>& out) {
    Handle a(H5Aopen_by_name(id_, obj.c_str(), attr_name.c_str(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
    std::string why;
    if (!a.ok() || !read_strings(a.id, heaps_.get(), out, why)) {
      fail(path, "attribute \"" + attr_name + "\" " + (why.empty() ? "is not a string or a list of strings" : why));
    }
  };
  std::vector<std::string> out;
  if (H5Aexists_by_name(id_, obj.c_str(), name.c_str(), H5P_DEFAULT) > 0) {
    read_one(name, out);
    return out;
  }
  // Keras splits attributes past HDF5's 64 KiB header limit into name0, name1, ...
  bool found = false;
  for (int chunk = 0;; ++chunk) {
    const std::string part = name + std::to_string(chunk);
    if (H5Aexists_by_name(id_, obj.c_str(), part.c_str(), H5P_DEFAULT) <= 0) break;
    read_one(part, out);
    found = true;
  }
  if (!found) return std::nullopt;
  return out;
}

std::optional<std::string> H5File::string_attr(const std::string& path, const std::string& name) const {
  auto v = string_list_attr(path, name);
  if (!v) return std::nullopt;
  if (v->size() != 1) fail(path, "attribute \"" + name + "\" holds " + std::to_string(v->size()) + " strings, expected one");
  return (*v)[0];
}

namespace {

void write_strings(hid_t file, const std::string& obj, const std::string& name, const std::vector<std::string>& values,
                   bool scalar, const std::string& file_name) {
  Handle type(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(type.id, H5T_VARIABLE);
  H5Tset_cset(type.id, H5T_CSET_UTF8);
  const hsize_t n = values.size();
  Handle space(scalar ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &n, nullptr), H5Sclose);
  if (H5Aexists_by_name(file, obj.c_str(), name.c_str(), H5P_DEFAULT) > 0) {
    H5Adelete_by_name(file, obj.c_str(), name.c_str(), H5P_DEFAULT);
  }
  Handle a(H5Acreate_by_name(file, obj.c_str(), name.c_str(), type.id, space.id, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
           H5Aclose);
  std::vector<const char*> ptrs;
  for (const std::string& v : values) ptrs.push_back(v.c_str());
  if (!a.ok() || (!ptrs.empty() && H5Awrite(a.id, type.id, ptrs.data()) < 0)) {
    throw DataError(file_name, -1, obj + ": cannot write attribute \"" + name + "\"");
  }
}

}  // namespace

void H5File::set_string_attr(const std::string& path, const std::string& name, const std::string& value) {
  std::lock_guard<std::mutex> lock(hdf5_mutex());
  write_strings(id_, rel(path), name, {value}, true, name_);
}

void H5File::set_string_list_attr(const std::string& path, const std::string& name, const std::vector<std::string>& values) {
  std::lock_guard<std::mutex> lock(hdf5_mutex());
  write_strings(id_, rel(path), name, values, false, name_);
}

}  // namespace nnfit::io
