// write_file_atomically: temp file + fsync + rename + fsync of the folder (the rename is
// only durable once the folder's entry is on disk).
#include "nnfit/io/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "nnfit/core/error.h"
#include "nnfit/io/regular_file.h"

namespace nnfit::io {

namespace fs = std::filesystem;

namespace {

void fsync_path(const std::string& path, bool directory, const std::string& target) {
  const int fd = ::open(path.c_str(), directory ? O_RDONLY | O_DIRECTORY : O_RDONLY);
  if (fd < 0) throw DataError(target, -1, "cannot open " + path + " to sync it: " + std::strerror(errno));
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  if (rc != 0) throw DataError(target, -1, "cannot sync " + path + " to disk: " + std::strerror(err));
}

}  // namespace

void write_file_atomically(const std::string& path, const std::function<void(const std::string&)>& write) {
  const fs::path target(path);
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    throw DataError(path, -1, "the folder " + dir.string() + " does not exist", "create it first");
  }
  if (fs::is_directory(target, ec)) throw DataError(path, -1, "is a directory; give a file name");
  if (fs::exists(target, ec) && !fs::is_regular_file(target, ec)) {
    // Note [Atomic writes replace only files]: renaming over /dev/full would turn the
    // device node into a regular file (as root, in a container); a device or pipe has no
    // partial state to protect, so it is written directly and its errors are the call's.
    write(path);
    return;
  }
  static std::atomic<unsigned> counter{0};
  std::string tmp_name = ".";  // appended piece by piece (GCC 12's -Wrestrict false positive)
  tmp_name += target.filename().string();
  tmp_name += ".tmp";
  tmp_name += std::to_string(::getpid());
  tmp_name += '_';
  tmp_name += std::to_string(counter++);
  const fs::path tmp = dir / tmp_name;
  try {
    write(tmp.string());
    fsync_path(tmp.string(), false, path);
    fs::rename(tmp, target, ec);
    if (ec) throw DataError(path, -1, "cannot rename " + tmp.string() + " into place: " + ec.message());
  } catch (const DataError& e) {
    // Named by the file the caller asked for (the writer saw only the temporary one).
    fs::remove(tmp, ec);
    if (e.file() == path) throw;
    throw DataError(path, -1, std::string("not written, any earlier version is kept: ") + e.what(),
                    e.hint().empty() ? "check the free space, quota and permissions of " + dir.string() : e.hint());
  } catch (...) {
    fs::remove(tmp, ec);
    throw;
  }
  fsync_path(dir.string(), true, path);
}

void write_bytes_atomically(const std::string& path, std::string_view bytes) {
  write_file_atomically(path, [&](const std::string& tmp) {
    std::FILE* f = std::fopen(tmp.c_str(), "wb");
    if (!f) throw DataError(path, -1, std::string("cannot create ") + tmp + ": " + std::strerror(errno));
    const std::size_t n = std::fwrite(bytes.data(), 1, bytes.size(), f);
    const bool ok = n == bytes.size() && std::fflush(f) == 0;
    const int err = errno;
    std::fclose(f);
    if (!ok) throw DataError(path, -1, std::string("cannot write ") + tmp + ": " + std::strerror(err));
  });
}

std::string read_file_bytes(const std::string& path, const char* what) {
  if (file_kind(path) != FileKind::missing) require_regular_file(path, (std::string("a ") + what).c_str());
  std::ifstream f(path, std::ios::binary);
  if (!f) throw DataError(path, -1, std::string("cannot open: ") + std::strerror(errno), "check the path exists and is readable");
  std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (f.bad()) throw DataError(path, -1, "read error");
  return bytes;
}

}  // namespace nnfit::io
