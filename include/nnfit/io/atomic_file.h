// Atomic file replacement: every file nnfit writes goes to a temporary name in the same
// folder, is flushed to disk (fsync) and renamed over the target, and the folder is
// synced; a kill at any instant leaves either the previous file or the new one, whole.
#pragma once
#include <functional>
#include <string>
#include <string_view>

namespace nnfit::io {

// Calls write(tmp_path) to produce the file under a temporary name beside `path`, then
// syncs and renames it into place. If write throws, the temporary file is removed and
// the exception propagates; `path` is untouched. Only a regular file is ever replaced: an
// existing device, FIFO or socket at `path` (/dev/null, /dev/stdout, a pipe) is written in
// place by write(path), so a failing device (/dev/full) fails the call and stays a device.
// throws: DataError naming `path` when the folder is missing or the sync/rename fails.
void write_file_atomically(const std::string& path, const std::function<void(const std::string& tmp_path)>& write);
void write_bytes_atomically(const std::string& path, std::string_view bytes);

// The whole file as bytes. throws: DataError naming `path` (missing, a directory, unreadable);
// `what` names the kind of file expected ("CSV file") in the directory message.
std::string read_file_bytes(const std::string& path, const char* what = "file");

}  // namespace nnfit::io
