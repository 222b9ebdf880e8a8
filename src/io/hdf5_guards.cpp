// The checks that stand between a file and HDF5 1.10's trust in it (hdf5_guards.h).
#include "io/hdf5_guards.h"

#include <cstring>
#include <vector>

#include "nnfit/core/error.h"

namespace nnfit::io {

namespace {

// The little-endian unsigned integer of n bytes at p.
std::uint64_t le_n(const unsigned char* p, int n) {
  std::uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

// Note [Damaged global heaps]. Variable-length strings (every attribute h5py writes, so
// Keras's model_config and layer_names) live in global heap collections ("GCOL", version
// 1, a 64-bit collection size, then objects: 16-bit index, 16-bit reference count, 4
// reserved bytes, 64-bit size, data padded to 8 bytes; index 0 is the free space and its
// size covers its own header). HDF5 1.10's loader walks a collection by each object's
// size and never checks for progress: a free-space object of size 0, or a size that
// wraps the pointer, makes it loop forever (fuzzing found it: a hang, not an error, in
// H5HG__cache_heap_deserialize under H5Aread). So before HDF5 sees a file, every
// collection in it is walked here the same way, and one whose objects do not tile it
// exactly is refused. A collection is recognized by its signature, version 1, zero
// reserved bytes and a size of at least 4096 (HDF5's minimum) that fits in the file;
// bytes that merely look like one inside a dataset are walked too, which only refuses a
// file whose data happens to spell a broken collection header.
constexpr std::uint64_t kMinCollection = 4096;
constexpr std::uint64_t kObjectHeader = 16;

// Walks the collection at file offset `at` and records its objects under `address` (`at`
// relative to the superblock).
void check_collection(const ReadAt& read_at, std::uint64_t at, std::uint64_t address, std::uint64_t file_size,
                      const std::string& name, HeapObjects& heaps) {
  const std::string head = read_at(at, kObjectHeader);
  if (head.size() < kObjectHeader) return;
  const auto* h = reinterpret_cast<const unsigned char*>(head.data());
  if (h[4] != 1 || h[5] != 0 || h[6] != 0 || h[7] != 0) return;
  const std::uint64_t size = le_n(h + 8, 8);
  if (size < kMinCollection || size > file_size - at) return;
  const std::string c = read_at(at, size);
  if (c.size() != size) return;
  const auto* base = reinterpret_cast<const unsigned char*>(c.data());
  std::map<std::uint32_t, std::uint64_t> objects;
  std::uint64_t p = kObjectHeader;
  while (p < size) {
    if (size - p < kObjectHeader) break;  // a tail too small for a header is free space
    const unsigned index = base[p] | (base[p + 1] << 8);
    const std::uint64_t object = le_n(base + p + 8, 8);
    std::uint64_t need = object;
    if (index > 0) need = object > size ? 0 : kObjectHeader + (object + 7) / 8 * 8;
    if (need == 0 || need > size - p) {
      throw DataError(name, static_cast<std::int64_t>(at + p),
                      "damaged HDF5 global heap (object " + std::to_string(index) + " of the collection at offset " +
                          std::to_string(at) + " claims " + std::to_string(object) + " bytes of " +
                          std::to_string(size - p) + " left)",
                      "the file's variable-length strings are corrupt; save it again from its source");
    }
    if (index > 0) objects[index] = object;
    p += need;
  }
  heaps[address] = std::move(objects);
}

// Where the superblock is: HDF5 looks at offset 0, then 512, 1024, 2048, ... (a user block
// comes first), and file addresses count from there.
std::uint64_t superblock_offset(const ReadAt& read_at, std::uint64_t file_size) {
  static const char kSignature[] = "\x89HDF\r\n\x1a\n";
  for (std::uint64_t at = 0; at < file_size; at = at == 0 ? 512 : at * 2) {
    if (read_at(at, 8) == std::string(kSignature, 8)) return at;
  }
  return 0;
}

}  // namespace

std::shared_ptr<const HeapObjects> check_global_heaps(const ReadAt& read_at, std::uint64_t file_size,
                                                      const std::string& name) {
  auto heaps = std::make_shared<HeapObjects>();
  const std::uint64_t superblock = superblock_offset(read_at, file_size);
  constexpr std::uint64_t kBlock = 1 << 20;
  for (std::uint64_t at = 0; at < file_size; at += kBlock) {
    const std::string block = read_at(at, kBlock + 3);  // a signature may straddle blocks
    const char* data = block.data();
    const char* end = data + block.size();
    for (const char* q = data; (q = static_cast<const char*>(std::memchr(q, 'G', end - q))) != nullptr; ++q) {
      if (q - data >= static_cast<std::ptrdiff_t>(kBlock)) break;  // the next block has it
      const std::uint64_t found = at + (q - data);
      if (end - q >= 4 && std::memcmp(q, "GCOL", 4) == 0 && found >= superblock) {
        check_collection(read_at, found, found - superblock, file_size, name, *heaps);
      }
    }
  }
  return heaps;
}

namespace {

// Note [Checked string references]. A variable-length string's bytes live in a global
// heap object; the attribute holds, per string, a reference: its length (4 bytes), the
// collection's address and the object's index (4 bytes). HDF5 1.10 trusts the length: it
// allocates length x (base type size) before it looks at the heap (fuzzing found a
// damaged attribute asking for 20 GiB), then copies the whole heap object into that
// buffer, however big the object is. So before a string attribute is read, its raw
// references are read through a conversion registered here (variable-length string to
// the opaque type "nnfit.vlen_ref", copying each on-disk reference out as it is), and each
// must name an object the pre-walk found (Note [Damaged global heaps]) whose size is the
// string's length. Only then does HDF5 read the strings.
constexpr char kRefTag[] = "nnfit.vlen_ref";

struct VlenRef {  // the opaque type's layout
  std::uint32_t length;
  std::uint32_t index;
  std::uint64_t address;
};

herr_t copy_vlen_refs(hid_t src, hid_t dst, H5T_cdata_t* cdata, size_t nelmts, size_t buf_stride, size_t,
                      void* buf, void*, hid_t) {
  const std::size_t src_size = H5Tget_size(src);
  switch (cdata->command) {
    case H5T_CONV_INIT: {
      cdata->need_bkg = H5T_BKG_NO;
      if (H5Tget_class(dst) != H5T_OPAQUE || H5Tis_variable_str(src) <= 0) return -1;
      char* tag = H5Tget_tag(dst);
      const bool ours = tag != nullptr && std::strcmp(tag, kRefTag) == 0;
      H5free_memory(tag);
      return ours ? 0 : -1;
    }
    case H5T_CONV_CONV: {
      // On disk: 4-byte length, an address of 4 or 8 bytes, 4-byte index.
      if (src_size != 12 && src_size != 16) return -1;
      const std::size_t in_stride = buf_stride ? buf_stride : src_size;
      const std::size_t out_stride = buf_stride ? buf_stride : sizeof(VlenRef);
      const auto* from = static_cast<const unsigned char*>(buf);
      const std::vector<unsigned char> raw(from, from + nelmts * in_stride);
      for (std::size_t i = 0; i < nelmts; ++i) {
        const unsigned char* r = raw.data() + i * in_stride;
        const int address_size = static_cast<int>(src_size) - 8;
        VlenRef ref{static_cast<std::uint32_t>(le_n(r, 4)),
                    static_cast<std::uint32_t>(le_n(r + 4 + address_size, 4)), le_n(r + 4, address_size)};
        std::memcpy(static_cast<unsigned char*>(buf) + i * out_stride, &ref, sizeof ref);
      }
      return 0;
    }
    default:
      return 0;
  }
}

// The opaque type the references are read as; the conversion is registered once.
hid_t vlen_ref_type() {
  static const hid_t type = [] {
    const hid_t t = H5Tcreate(H5T_OPAQUE, sizeof(VlenRef));
    H5Tset_tag(t, kRefTag);
    const hid_t vlen = H5Tcopy(H5T_C_S1);
    H5Tset_size(vlen, H5T_VARIABLE);
    H5Tregister(H5T_PERS_SOFT, "nnfit_vlen_refs", vlen, t, copy_vlen_refs);
    H5Tclose(vlen);
    return t;
  }();
  return type;
}

}  // namespace

bool check_string_refs(hid_t attr, hid_t type, hssize_t n, const HeapObjects& heaps, std::string& why) {
  const hid_t base = H5Tget_super(type);
  const bool bytes = base >= 0 && H5Tget_size(base) == 1;
  if (base >= 0) H5Tclose(base);
  if (!bytes) {
    why = "its strings are not made of 1-byte characters (damaged datatype)";
    return false;
  }
  std::vector<VlenRef> refs(static_cast<std::size_t>(n));
  if (H5Aread(attr, vlen_ref_type(), refs.data()) < 0) {
    why = "its string references cannot be read (damaged)";
    return false;
  }
  for (std::size_t i = 0; i < refs.size(); ++i) {
    const VlenRef& r = refs[i];
    if (r.length == 0) continue;  // HDF5 reads nothing for an empty string
    const auto collection = heaps.find(r.address);
    const auto object = collection == heaps.end() ? std::map<std::uint32_t, std::uint64_t>::const_iterator{}
                                                  : collection->second.find(r.index);
    if (collection == heaps.end() || object == collection->second.end() || object->second != r.length) {
      why = "string " + std::to_string(i) + " claims " + std::to_string(r.length) + " bytes in heap object " +
            std::to_string(r.index) + " at address " + std::to_string(r.address) +
            (collection == heaps.end() || object == collection->second.end()
                 ? ", which the file does not have"
                 : ", which holds " + std::to_string(object->second) + " bytes") +
            " (damaged file: save it again from its source)";
      return false;
    }
  }
  return true;
}

}  // namespace nnfit::io
