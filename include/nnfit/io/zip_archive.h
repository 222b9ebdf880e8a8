// Zip archives through libzip: read a member of an existing archive, write an archive of
// Stored (uncompressed) members, as Keras writes .keras files. Nothing a header declares is
// allocated before it is checked (Note [Zip member sizes] in zip_archive.cpp): a member
// must fit the archive and deflate's ratio, and is inflated in chunks under a cap.
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
  std::int32_t method = 0;            // ZIP_CM_STORE (0), ZIP_CM_DEFLATE (8), ...
};

// An open archive. Thread safety: none; one reader per archive.
class ZipReader {
 public:
  // throws: DataError naming `path` (missing, not a regular file, not a zip, damaged),
  // in nnfit's words rather than libzip's.
  explicit ZipReader(const std::string& path);
  ~ZipReader();
  ZipReader(const ZipReader&) = delete;
  ZipReader& operator=(const ZipReader&) = delete;

  const std::vector<ZipMember>& members() const { return members_; }
  bool has(const std::string& name) const;
  // The member's bytes, at most `max_bytes` of them. throws: DataError naming the member
  // when it is missing, declares more than `max_bytes`, more than its compressed size
  // allows (kMaxZipRatio) or a compressed size past the archive's, inflates to another
  // size than it declares, or is damaged (CRC).
  std::string read(const std::string& name, std::uint64_t max_bytes = kMaxZipMemberBytes) const;
  // The member's first min(n, size) bytes, without its CRC check (the rest is not read):
  // enough to look at a header before deciding how much of the member to read.
  // throws: DataError naming the member when it is missing or cannot be opened or read.
  std::string read_prefix(const std::string& name, std::uint64_t n) const;
  // The member's declared (uncompressed) size. throws: DataError when it is missing.
  std::uint64_t size(const std::string& name) const;

  static constexpr std::uint64_t kMaxZipMemberBytes = 16ull << 30;
  // Deflate's largest ratio is 1032:1 (a 258-byte match in under 2 bits); a member that
  // claims more than that from its compressed bytes is damaged or a bomb.
  static constexpr std::uint64_t kMaxZipRatio = 1032;

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
