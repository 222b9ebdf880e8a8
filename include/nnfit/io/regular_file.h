// The check every reader makes before it opens a path whose format needs a regular file:
// a FIFO blocks open() forever, a device (/dev/zero, /dev/urandom) never ends and a
// directory is not data, so each is refused by name before anything opens it. stat()
// follows symlinks, so a link to a device is refused as the device.
#pragma once
#include <string>

namespace nnfit::io {

enum class FileKind { regular, directory, fifo, char_device, block_device, socket, other, missing };

// What `path` is (after symlinks), by one stat().
FileKind file_kind(const std::string& path);
// "a regular file", "a directory", "a FIFO (named pipe)", "a character device", ...
const char* file_kind_name(FileKind kind);

// throws: DataError naming `path` when it is missing or is not a regular file (saying
// what it is). `what` names the file the caller expected, with its article ("a model
// file", "an HDF5 file").
void require_regular_file(const std::string& path, const char* what = "a regular file");

}  // namespace nnfit::io
