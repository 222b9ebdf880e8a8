// TFRecord files (format notes: shared/formats/tfrecord.md, from TF's record_writer and
// tsl/lib/hash/crc32c.h). A record is: uint64 length, uint32 masked CRC-32C of those 8
// bytes, the data, uint32 masked CRC-32C of the data, all little-endian. GZIP files hold
// the whole record stream in one gzip stream.
#pragma once
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nnfit/core/crc32c.h"

namespace nnfit::io {

// The CRC-32C and its mask are core's (nnfit/core/crc32c.h), shared with tfevents.
using nnfit::crc32c;
using nnfit::mask_crc;

// automatic: gzip is sniffed from its magic, anything else read as uncompressed. ZLIB
// streams (RFC 1950, TF's compression_type="ZLIB") carry no reliable magic, so they must be
// asked for, as in TF.
enum class Compression { automatic, none, gzip, zlib };

// Reads records in order, checking both CRCs. Streams through zlib's gzread, which reads
// uncompressed files transparently, so `automatic` sniffs the gzip magic. Offsets in errors
// and offset() count bytes of the record stream (decompressed bytes for a GZIP file).
// Not thread-safe; owns its file handle.
class TfRecordReader {
 public:
  // throws: DataError(path, -1, ...) if the file cannot be opened.
  explicit TfRecordReader(std::string path, Compression compression = Compression::automatic);
  ~TfRecordReader();
  TfRecordReader(const TfRecordReader&) = delete;
  TfRecordReader& operator=(const TfRecordReader&) = delete;

  // The next record's data, or nullopt at a clean end of file.
  // throws: DataError(path, offset of the record, ...) for a truncated header or data, a
  //   length CRC or data CRC mismatch, a corrupt gzip stream, or a GZIP/ZLIB stream that
  //   ends early (even between records). After an error the reader
  //   has lost its place and returns nullopt from then on.
  std::optional<std::string> next();
  // Offset of the record next() reads next.
  std::int64_t offset() const { return offset_; }
  const std::string& path() const { return path_; }

 private:
  std::size_t read_fully(void* dst, std::size_t n);
  std::size_t read_some(unsigned char* dst, std::size_t n);  // > 0 unless at the end
  void check_stream_end();  // throws DataError when a compressed stream was cut short
  std::string path_;
  void* gz_ = nullptr;      // gzFile (none, gzip, automatic)
  std::FILE* file_ = nullptr;  // zlib: the file, inflated through zs_
  void* zs_ = nullptr;      // z_stream
  std::vector<unsigned char> in_;
  bool zlib_end_ = false;
  std::int64_t offset_ = 0;
  bool failed_ = false;
};

// Writes records (uncompressed or GZIP). Not thread-safe. close() (or the destructor)
// finishes the file; close() reports errors, the destructor swallows them.
class TfRecordWriter {
 public:
  explicit TfRecordWriter(std::string path, Compression compression = Compression::none);
  ~TfRecordWriter();
  TfRecordWriter(const TfRecordWriter&) = delete;
  TfRecordWriter& operator=(const TfRecordWriter&) = delete;
  void write(std::string_view record);
  void close();

 private:
  void put(const void* data, std::size_t n);
  std::string path_;
  void* gz_ = nullptr;         // gzFile (none, gzip)
  std::FILE* file_ = nullptr;  // zlib: deflated through zs_
  void* zs_ = nullptr;         // z_stream
  std::vector<unsigned char> out_;
};

}  // namespace nnfit::io
