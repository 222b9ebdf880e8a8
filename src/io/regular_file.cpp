// require_regular_file: one stat() before the open, so special files are named, not read.
#include "nnfit/io/regular_file.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "nnfit/core/error.h"

namespace nnfit::io {

FileKind file_kind(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return FileKind::missing;
  if (S_ISREG(st.st_mode)) return FileKind::regular;
  if (S_ISDIR(st.st_mode)) return FileKind::directory;
  if (S_ISFIFO(st.st_mode)) return FileKind::fifo;
  if (S_ISCHR(st.st_mode)) return FileKind::char_device;
  if (S_ISBLK(st.st_mode)) return FileKind::block_device;
  if (S_ISSOCK(st.st_mode)) return FileKind::socket;
  return FileKind::other;
}

const char* file_kind_name(FileKind kind) {
  switch (kind) {
    case FileKind::regular: return "a regular file";
    case FileKind::directory: return "a directory";
    case FileKind::fifo: return "a FIFO (named pipe)";
    case FileKind::char_device: return "a character device";
    case FileKind::block_device: return "a block device";
    case FileKind::socket: return "a socket";
    case FileKind::other: return "a special file";
    case FileKind::missing: return "missing";
  }
  return "a special file";
}

void require_regular_file(const std::string& path, const char* what) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    const int err = errno;
    throw DataError(path, -1, std::string("cannot open ") + what + ": " + std::strerror(err),
                    "check the path exists and is readable");
  }
  const FileKind kind = file_kind(path);
  if (kind != FileKind::regular) {
    throw DataError(path, -1, std::string("is ") + file_kind_name(kind) + ", not " + what,
                    std::string("give the path of ") + what + " (nnfit does not read pipes, devices or folders here)");
  }
}

}  // namespace nnfit::io
