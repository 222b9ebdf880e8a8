// The checks of hdf5_object_checks.h.
#include "io/hdf5_object_checks.h"

#include <H5PLpublic.h>

#include <algorithm>
#include <string>

#include "nnfit/core/error.h"

namespace nnfit::io {

namespace {

// Note [HDF5 files stay inside themselves]. A Keras weights file is shared like a picture,
// so opening one must not make nnfit read anything else. HDF5 lets a file point outside
// itself in four ways, each refused with the object named: an external link (HDF5 opens
// the file it names: a FIFO hangs the open, any HDF5 file on disk becomes the weights),
// a user-defined link class, a dataset with external storage (raw data in files it
// names) and a virtual dataset (data mapped from other files). A filter that HDF5 does
// not ship would make it look for a plugin library in HDF5_PLUGIN_PATH, so only the
// built-in filters pass and plugin loading is off. External links are also made
// untraversable by the file access list, so a check missed here still cannot follow one.
herr_t refuse_external_link(const char*, const char*, const char*, const char*, unsigned*, hid_t, void*) { return -1; }

struct Walk {
  std::string name;     // the file, for errors
  std::string refusal;  // set by the callback when it stops the walk
  std::uint64_t values = 0;  // in all datasets (saturating)
};

std::string object(const char* path) { return std::string("/") + path; }

std::string check_dataset(hid_t group, const char* path, std::uint64_t& values) {
  const hid_t d = H5Dopen2(group, path, H5P_DEFAULT);
  if (d < 0) return object(path) + ": cannot open the dataset (damaged?)";
  std::string why;
  const hid_t dcpl = H5Dget_create_plist(d);
  const hid_t type = H5Dget_type(d);
  const hid_t space = H5Dget_space(d);
  const hssize_t points = space >= 0 ? H5Sget_simple_extent_npoints(space) : -1;
  if (space >= 0) H5Sclose(space);
  if (points > 0) values += std::min<std::uint64_t>(static_cast<std::uint64_t>(points), ~values);
  if (dcpl < 0 || type < 0) {
    why = object(path) + ": cannot read the dataset's properties (damaged?)";
  } else if (H5Pget_external_count(dcpl) != 0) {
    why = object(path) + ": its data is stored in external files; nnfit reads only data inside the file";
  } else if (H5Pget_layout(dcpl) == H5D_VIRTUAL) {
    why = object(path) + ": a virtual dataset (data mapped from other files); nnfit reads only data inside the file";
  } else if (!numeric_type_is_valid(type, why)) {
    why = object(path) + ": " + why;
  } else {
    const int filters = H5Pget_nfilters(dcpl);
    for (int i = 0; i < filters && why.empty(); ++i) {
      unsigned flags = 0;
      std::size_t n = 0;
      char filter_name[64] = {};
      const H5Z_filter_t id = H5Pget_filter2(dcpl, static_cast<unsigned>(i), &flags, &n, nullptr, sizeof filter_name,
                                             filter_name, nullptr);
      if (id < 0 || id >= H5Z_FILTER_RESERVED || H5Zfilter_avail(id) <= 0) {
        why = object(path) + ": compressed with filter " + std::to_string(id) +
              ", which HDF5 does not ship; nnfit reads deflate, shuffle, fletcher32, szip, nbit and scaleoffset";
      }
    }
  }
  if (type >= 0) H5Tclose(type);
  if (dcpl >= 0) H5Pclose(dcpl);
  H5Dclose(d);
  return why;
}

herr_t visit_link(hid_t group, const char* path, const H5L_info_t* info, void* data) {
  auto* walk = static_cast<Walk*>(data);
  if (info->type == H5L_TYPE_EXTERNAL) {
    walk->refusal = object(path) + ": an external link (to another file); nnfit reads only what is inside the file";
    return 1;
  }
  if (info->type != H5L_TYPE_HARD && info->type != H5L_TYPE_SOFT) {
    walk->refusal = object(path) + ": a user-defined link (class " + std::to_string(static_cast<int>(info->type)) +
                    "); nnfit reads only hard and soft links";
    return 1;
  }
  if (info->type == H5L_TYPE_SOFT) return 0;  // its target is inside the file and visited as itself
  H5O_info_t oinfo;
  if (H5Oget_info_by_name2(group, path, &oinfo, H5O_INFO_BASIC, H5P_DEFAULT) < 0) {
    walk->refusal = object(path) + ": cannot read the object's header (damaged?)";
    return 1;
  }
  if (oinfo.type == H5O_TYPE_DATASET) {
    walk->refusal = check_dataset(group, path, walk->values);
    if (!walk->refusal.empty()) return 1;
  }
  return 0;
}

// The standard IEEE fields of a float of `size` bytes: sign, exponent position and size,
// mantissa position and size, bias.
struct IeeeLayout {
  std::size_t size, spos, epos, esize, mpos, msize, ebias;
};
constexpr IeeeLayout kIeee[] = {{2, 15, 10, 5, 0, 10, 15}, {4, 31, 23, 8, 0, 23, 127}, {8, 63, 52, 11, 0, 52, 1023}};

}  // namespace

hid_t inside_only_fapl() {
  H5PLset_loading_state(0);
  const hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  if (fapl >= 0) H5Pset_elink_cb(fapl, refuse_external_link, nullptr);
  return fapl;
}

std::uint64_t check_file_stays_inside(hid_t file, const std::string& name) {
  Walk walk{name, {}, 0};
  const herr_t rc = H5Lvisit(file, H5_INDEX_NAME, H5_ITER_INC, visit_link, &walk);
  if (!walk.refusal.empty()) {
    throw DataError(name, -1, walk.refusal, "the file reaches outside itself or is damaged; nnfit does not load it");
  }
  if (rc < 0) throw DataError(name, -1, "cannot list the file's groups and datasets (damaged?)");
  return walk.values;
}

bool numeric_type_is_valid(hid_t type, std::string& why) {
  const H5T_class_t cls = H5Tget_class(type);
  const std::size_t size = H5Tget_size(type);
  const std::size_t precision = H5Tget_precision(type);
  const int offset = H5Tget_offset(type);
  const H5T_order_t order = H5Tget_order(type);
  if (cls == H5T_INTEGER) {
    if (precision != 8 * size || offset != 0 || (size > 1 && order != H5T_ORDER_LE && order != H5T_ORDER_BE)) {
      why = "a damaged integer type (" + std::to_string(precision) + " bits at offset " + std::to_string(offset) +
            " in " + std::to_string(size) + " bytes)";
      return false;
    }
    return true;
  }
  if (cls != H5T_FLOAT) return true;
  std::size_t spos = 0, epos = 0, esize = 0, mpos = 0, msize = 0;
  const bool fields = H5Tget_fields(type, &spos, &epos, &esize, &mpos, &msize) >= 0;
  const std::size_t ebias = H5Tget_ebias(type);
  for (const IeeeLayout& l : kIeee) {
    if (l.size != size) continue;
    if (fields && precision == 8 * size && offset == 0 && (order == H5T_ORDER_LE || order == H5T_ORDER_BE) &&
        spos == l.spos && epos == l.epos && esize == l.esize && mpos == l.mpos && msize == l.msize && ebias == l.ebias &&
        H5Tget_norm(type) == H5T_NORM_IMPLIED) {
      return true;
    }
    why = "a damaged float" + std::to_string(8 * size) + " type (sign bit " + std::to_string(spos) + ", exponent " +
          std::to_string(esize) + " bits at " + std::to_string(epos) + " with bias " + std::to_string(ebias) +
          ", mantissa " + std::to_string(msize) + " bits at " + std::to_string(mpos) + "; IEEE has " +
          std::to_string(l.esize) + ", " + std::to_string(l.msize) + ", bias " + std::to_string(l.ebias) + ")";
    return false;
  }
  why = "a float type of " + std::to_string(size) + " bytes; nnfit reads IEEE float16, float32 and float64";
  return false;
}

}  // namespace nnfit::io
