// Zip archives through libzip: read a member of an existing archive, write an archive of
// Stored (uncompressed) members, as Keras writes .keras files. Reading refuses members
// whose size the archive cannot plausibly hold (a zip bomb), before inflating anything.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace nnfit::io {

struct ZipMember {
  std::string name;
  std::uint64_t size = 0;             // uncompressed
  std::uint64_t compressed_size = 0;
};

// An open archive. Thread safety: none; one reader per archive.
class ZipReader {
 public:
  // throws: DataError naming `path` (missing, a directory, not a zip, damaged).
  explicit ZipReader(const std::string& path);
  ~ZipReader();
  ZipReader(const ZipReader&) = delete;
  ZipReader& operator=(const ZipReader&) = delete;

  const std::vector<ZipMember>& members() const { return members_; }
  bool has(const std::string& name) const;
  // The member's bytes. throws: DataError naming the member when it is missing, larger
  // than 1000 times the archive (or 16 GiB), or damaged (CRC).
  std::string read(const std::string& name) const;

 private:
  std::string path_;
  void* zip_ = nullptr;  // zip_t*
  std::uint64_t archive_bytes_ = 0;
  std::vector<ZipMember> members_;
};

// Writes `members` (name, bytes) Stored, in order, to `path` atomically.
// throws: DataError naming `path`.
void write_zip(const std::string& path, const std::vector<std::pair<std::string, std::string>>& members);

}  // namespace nnfit::io
