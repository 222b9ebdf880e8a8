// ZipReader and write_zip over libzip. Members are read whole (Keras's members are a few
// JSON files and one HDF5 image); consistency checks (ZIP_CHECKCONS) catch a truncated
// or patched central directory when the archive opens, and libzip's error texts (written
// for its own API: "File already exists" for a duplicate name) are said in nnfit's words.
#include "nnfit/io/zip_archive.h"

#include <zip.h>

#include <algorithm>
#include <filesystem>

#include "nnfit/core/error.h"
#include "nnfit/io/atomic_file.h"
#include "nnfit/io/regular_file.h"

namespace nnfit::io {

namespace {

std::string zip_error_text(int code) {
  zip_error_t e;
  zip_error_init_with_code(&e, code);
  std::string s = zip_error_strerror(&e);
  zip_error_fini(&e);
  return s;
}

// zip_open's error codes as what they mean for an archive being read.
[[noreturn]] void refuse_archive(const std::string& path, int code) {
  const char* kDamaged = "the archive is damaged or was not written by a zip tool; save the model again";
  switch (code) {
    case ZIP_ER_EXISTS:
      throw DataError(path, -1, "two members of the zip archive have the same name", kDamaged);
    case ZIP_ER_NOENT:  // libzip 1.7: a 0xFFFFFFFF size or offset without its zip64 record
      throw DataError(path, -1, "a member's size or offset is 0xFFFFFFFF (zip64) but the archive has no zip64 record for it",
                      kDamaged);
    case ZIP_ER_NOZIP:
      throw DataError(path, -1, "not a zip archive (no end-of-central-directory record)",
                      "the file may be truncated, or is not a .keras file");
    case ZIP_ER_INCONS:
      throw DataError(path, -1, "the zip archive's central directory and its members disagree",
                      "the file may be truncated or patched; save the model again");
    case ZIP_ER_READ:
    case ZIP_ER_SEEK:
    case ZIP_ER_EOF:
      throw DataError(path, -1, "the zip archive cannot be read to its end", "the file may be truncated");
    case ZIP_ER_MEMORY:
      throw DataError(path, -1, "the zip archive's directory does not fit in memory (more members than it can hold?)",
                      kDamaged);
    case ZIP_ER_MULTIDISK:
      throw DataError(path, -1, "a multi-volume zip archive; nnfit reads single-file archives", kDamaged);
    default:
      throw DataError(path, -1, "not a readable zip archive (libzip: " + zip_error_text(code) + ")", kDamaged);
  }
}

}  // namespace

ZipReader::ZipReader(const std::string& path) : path_(path) {
  require_regular_file(path, "a zip archive");
  std::error_code ec;
  archive_bytes_ = std::filesystem::file_size(path, ec);
  int err = 0;
  zip_t* z = zip_open(path.c_str(), ZIP_RDONLY | ZIP_CHECKCONS, &err);
  if (!z) refuse_archive(path, err);
  zip_ = z;
  const zip_int64_t n = zip_get_num_entries(z, 0);
  for (zip_int64_t i = 0; i < n; ++i) {
    zip_stat_t st;
    zip_stat_init(&st);
    if (zip_stat_index(z, static_cast<zip_uint64_t>(i), 0, &st) != 0) {
      throw DataError(path, -1, "member " + std::to_string(i) + " cannot be read: " + zip_strerror(z));
    }
    members_.push_back({st.name ? st.name : "", st.size, st.comp_size, st.comp_method});
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

// Note [Zip member sizes]. A member's sizes come from its headers, which anyone can
// write: a 3 MB archive may declare a 3 GB config.json, or hold a real 1 GiB deflate
// stream. So before a byte is allocated, the declared size must be at most the caller's
// cap (the JSON members have a small one), the compressed size must fit the archive, and
// the declared size may be at most kMaxZipRatio times the compressed size (deflate cannot
// do better; Stored is 1:1). The member is then inflated in 1 MiB chunks into a buffer
// that grows with what arrives, never past the declared size: a stream that runs longer
// or shorter than its header says is damaged. libzip itself stops at the end of the
// deflate stream, whatever the header declared.
std::string ZipReader::read(const std::string& name, std::uint64_t max_bytes) const {
  zip_t* z = static_cast<zip_t*>(zip_);
  const zip_int64_t index = zip_name_locate(z, name.c_str(), 0);
  if (index < 0) throw DataError(path_, -1, "member \"" + name + "\" is missing");
  const ZipMember& m = members_[static_cast<std::size_t>(index)];
  const std::string member = "member \"" + name + "\" ";
  const char* kHint = "the archive is damaged or crafted (a zip bomb); nnfit does not inflate it";
  if (m.size > max_bytes) {
    throw DataError(path_, -1,
                    member + "declares " + std::to_string(m.size) + " bytes; nnfit reads at most " +
                        std::to_string(max_bytes) + " for it",
                    kHint);
  }
  if (m.compressed_size > archive_bytes_) {
    throw DataError(path_, -1,
                    member + "declares " + std::to_string(m.compressed_size) + " compressed bytes in an archive of " +
                        std::to_string(archive_bytes_),
                    kHint);
  }
  if (m.size > kMaxZipRatio * m.compressed_size + 1024) {
    throw DataError(path_, -1,
                    member + "declares " + std::to_string(m.size) + " bytes from " + std::to_string(m.compressed_size) +
                        " compressed, past deflate's largest ratio (" + std::to_string(kMaxZipRatio) + ":1)",
                    kHint);
  }
  zip_file_t* f = zip_fopen_index(z, static_cast<zip_uint64_t>(index), 0);
  if (!f) {
    throw DataError(path_, -1, member + "cannot be opened (libzip: " + zip_strerror(z) + ")",
                    "an encrypted member, or a compression method nnfit's libzip lacks; save it Stored or deflated");
  }
  constexpr std::uint64_t kChunk = 1 << 20;
  std::string out;
  // Stored bytes are on disk already; a compressed member's room grows as it inflates.
  out.reserve(static_cast<std::size_t>((m.method == ZIP_CM_STORE ? m.size : std::min(m.size, kChunk)) + 1));
  std::string why;
  bool longer = false;
  for (;;) {
    const std::uint64_t have = out.size();
    // One byte past the declared size tells a stream that runs longer than its header.
    const std::uint64_t want = std::min(kChunk, m.size + 1 - have);
    out.resize(static_cast<std::size_t>(have + want));
    const zip_int64_t got = zip_fread(f, out.data() + have, want);
    if (got < 0) {
      const int code = zip_error_code_zip(zip_file_get_error(f));
      why = code == ZIP_ER_CRC     ? "fails its CRC check"
            : code == ZIP_ER_ZLIB  ? "holds a broken deflate stream"
                                   : std::string("cannot be read (libzip: ") + zip_file_strerror(f) + ")";
      out.resize(static_cast<std::size_t>(have));
      break;
    }
    out.resize(static_cast<std::size_t>(have + static_cast<std::uint64_t>(got)));
    if (out.size() > m.size) {
      longer = true;
      break;
    }
    if (got == 0) break;
  }
  zip_fclose(f);
  if (!why.empty() || longer || out.size() != m.size) {
    const std::string what = !why.empty() ? why
                             : longer     ? "inflates past the " + std::to_string(m.size) + " bytes it declares"
                                          : "inflates to " + std::to_string(out.size()) + " bytes, not the " +
                                            std::to_string(m.size) + " it declares";
    throw DataError(path_, -1, member + what, "the archive is damaged; save the model again");
  }
  return out;
}

std::uint64_t ZipReader::size(const std::string& name) const {
  for (const ZipMember& m : members_) {
    if (m.name == name) return m.size;
  }
  throw DataError(path_, -1, "member \"" + name + "\" is missing");
}

std::string ZipReader::read_prefix(const std::string& name, std::uint64_t n) const {
  zip_t* z = static_cast<zip_t*>(zip_);
  const zip_int64_t index = zip_name_locate(z, name.c_str(), 0);
  if (index < 0) throw DataError(path_, -1, "member \"" + name + "\" is missing");
  const ZipMember& m = members_[static_cast<std::size_t>(index)];
  zip_file_t* f = zip_fopen_index(z, static_cast<zip_uint64_t>(index), 0);
  if (!f) {
    throw DataError(path_, -1, "member \"" + name + "\" cannot be opened (libzip: " + zip_strerror(z) + ")",
                    "an encrypted member, or a compression method nnfit's libzip lacks; save it Stored or deflated");
  }
  std::string out(static_cast<std::size_t>(std::min(n, m.size)), '\0');
  std::size_t have = 0;
  while (have < out.size()) {
    const zip_int64_t got = zip_fread(f, out.data() + have, out.size() - have);
    if (got <= 0) break;  // a damaged stream: the full read names what is wrong
    have += static_cast<std::size_t>(got);
  }
  zip_fclose(f);
  out.resize(have);
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
