// ZipReader and write_zip over libzip. Members are read whole (Keras's members are a few
// JSON files and one HDF5 image); consistency checks (ZIP_CHECKCONS) catch a truncated
// or patched central directory when the archive opens.
#include "nnfit/io/zip_archive.h"

#include <zip.h>

#include <filesystem>

#include "nnfit/core/error.h"
#include "nnfit/io/atomic_file.h"

namespace nnfit::io {

namespace {

constexpr std::uint64_t kMaxMemberBytes = 16ull << 30;
constexpr std::uint64_t kMaxRatio = 1000;

std::string zip_error_text(int code) {
  zip_error_t e;
  zip_error_init_with_code(&e, code);
  std::string s = zip_error_strerror(&e);
  zip_error_fini(&e);
  return s;
}

}  // namespace

ZipReader::ZipReader(const std::string& path) : path_(path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw DataError(path, -1, "is a directory, not a zip file");
  if (!std::filesystem::exists(path, ec)) throw DataError(path, -1, "no such file");
  archive_bytes_ = std::filesystem::file_size(path, ec);
  int err = 0;
  zip_t* z = zip_open(path.c_str(), ZIP_RDONLY | ZIP_CHECKCONS, &err);
  if (!z) throw DataError(path, -1, "not a readable zip archive: " + zip_error_text(err), "the file may be truncated");
  zip_ = z;
  const zip_int64_t n = zip_get_num_entries(z, 0);
  for (zip_int64_t i = 0; i < n; ++i) {
    zip_stat_t st;
    zip_stat_init(&st);
    if (zip_stat_index(z, static_cast<zip_uint64_t>(i), 0, &st) != 0) {
      throw DataError(path, -1, "member " + std::to_string(i) + " cannot be read: " + zip_strerror(z));
    }
    members_.push_back({st.name ? st.name : "", st.size, st.comp_size});
  }
}

ZipReader::~ZipReader() {
  if (zip_) zip_discard(static_cast<zip_t*>(zip_));
}

bool ZipReader::has(const std::string& name) const {
  for (const ZipMember& m : members_) {
    if (m.name == name) return true;
  }
  return false;
}

std::string ZipReader::read(const std::string& name) const {
  zip_t* z = static_cast<zip_t*>(zip_);
  const zip_int64_t index = zip_name_locate(z, name.c_str(), 0);
  if (index < 0) throw DataError(path_, -1, "member \"" + name + "\" is missing");
  const ZipMember& m = members_[static_cast<std::size_t>(index)];
  if (m.size > kMaxMemberBytes || m.size > kMaxRatio * std::max<std::uint64_t>(archive_bytes_, 1)) {
    throw DataError(path_, -1,
                    "member \"" + name + "\" claims " + std::to_string(m.size) + " bytes from an archive of " +
                        std::to_string(archive_bytes_) + "; refusing to inflate it (damaged file or zip bomb)");
  }
  zip_file_t* f = zip_fopen_index(z, static_cast<zip_uint64_t>(index), 0);
  if (!f) throw DataError(path_, -1, "member \"" + name + "\" cannot be opened: " + zip_strerror(z));
  std::string out(static_cast<std::size_t>(m.size), '\0');
  const zip_int64_t got = m.size ? zip_fread(f, out.data(), m.size) : 0;
  // Reading to the end checks the CRC; a short or failed read is a damaged member.
  char extra;
  const zip_int64_t more = zip_fread(f, &extra, 1);
  std::string why = got < 0 || more < 0 ? zip_file_strerror(f) : "";
  zip_fclose(f);
  if (got != static_cast<zip_int64_t>(m.size) || more != 0) {
    throw DataError(path_, -1, "member \"" + name + "\" is damaged" + (why.empty() ? "" : ": " + why));
  }
  return out;
}

void write_zip(const std::string& path, const std::vector<std::pair<std::string, std::string>>& members) {
  write_file_atomically(path, [&](const std::string& tmp) {
    int err = 0;
    zip_t* z = zip_open(tmp.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &err);
    if (!z) throw DataError(path, -1, "cannot create a zip archive: " + zip_error_text(err));
    for (const auto& [name, bytes] : members) {
      zip_source_t* src = zip_source_buffer(z, bytes.data(), bytes.size(), 0);
      const zip_int64_t index = src ? zip_file_add(z, name.c_str(), src, ZIP_FL_ENC_UTF_8 | ZIP_FL_OVERWRITE) : -1;
      if (index < 0) {
        if (src) zip_source_free(src);
        const std::string why = zip_strerror(z);
        zip_discard(z);
        throw DataError(path, -1, "cannot add \"" + name + "\" to the archive: " + why);
      }
      zip_set_file_compression(z, static_cast<zip_uint64_t>(index), ZIP_CM_STORE, 0);
    }
    if (zip_close(z) != 0) {
      const std::string why = zip_strerror(z);
      zip_discard(z);
      throw DataError(path, -1, "cannot write the zip archive: " + why);
    }
  });
}

}  // namespace nnfit::io
