// TFRecord reader and writer over zlib's gz* stream API (transparent for uncompressed
// files; GZIP) or zlib's inflate/deflate on a FILE (ZLIB), with core's CRC-32C. The length CRC is checked before the length is
// trusted, so a corrupt header never leads to a huge allocation.
#include "nnfit/io/tfrecord.h"

#include <zlib.h>

#include <algorithm>
#include <cstring>

#include "nnfit/core/error.h"
#include "nnfit/io/regular_file.h"

namespace nnfit::io {
namespace {

constexpr std::uint64_t kMaxRecordBytes = std::uint64_t{1} << 32;  // sanity bound after the CRC
constexpr const char* kCorruptHint =
    "the file is corrupt or not a TFRecord file; if it is GZIP or ZLIB compressed, say so";

std::uint64_t load_le64(const unsigned char* p) {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}
std::uint32_t load_le32(const unsigned char* p) {
  return std::uint32_t{p[0]} | (std::uint32_t{p[1]} << 8) | (std::uint32_t{p[2]} << 16) |
         (std::uint32_t{p[3]} << 24);
}
void store_le64(unsigned char* p, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<unsigned char>(v >> (8 * i));
}
void store_le32(unsigned char* p, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<unsigned char>(v >> (8 * i));
}

}  // namespace

TfRecordReader::TfRecordReader(std::string path, Compression compression) : path_(std::move(path)) {
  if (file_kind(path_) != FileKind::missing) require_regular_file(path_, "a TFRecord file");
  if (compression == Compression::zlib) {
    file_ = std::fopen(path_.c_str(), "rb");
    if (file_ == nullptr) throw DataError(path_, -1, "cannot open TFRecord file", "check the path exists and is readable");
    auto* zs = new z_stream{};
    inflateInit(zs);
    zs_ = zs;
    in_.resize(1 << 18);
    return;
  }
  // gzread detects gzip by its magic and passes other files through.
  gzFile f = gzopen(path_.c_str(), "rb");
  if (f == nullptr) throw DataError(path_, -1, "cannot open TFRecord file", "check the path exists and is readable");
  gzbuffer(f, 1 << 18);
  gz_ = f;
}

TfRecordReader::~TfRecordReader() {
  if (gz_) gzclose(static_cast<gzFile>(gz_));
  if (zs_) {
    inflateEnd(static_cast<z_stream*>(zs_));
    delete static_cast<z_stream*>(zs_);
  }
  if (file_) std::fclose(file_);
}

std::size_t TfRecordReader::read_some(unsigned char* dst, std::size_t n) {
  const unsigned chunk = static_cast<unsigned>(std::min<std::size_t>(n, 1u << 30));
  if (gz_) {
    const int r = gzread(static_cast<gzFile>(gz_), dst, chunk);
    if (r < 0) {
      int err = 0;
      const char* msg = gzerror(static_cast<gzFile>(gz_), &err);
      failed_ = true;
      throw DataError(path_, offset_, std::string("corrupt compressed stream: ") + (msg ? msg : "zlib error"), kCorruptHint);
    }
    return static_cast<std::size_t>(r);
  }
  auto* zs = static_cast<z_stream*>(zs_);
  zs->next_out = dst;
  zs->avail_out = chunk;
  while (zs->avail_out == chunk && !zlib_end_) {
    if (zs->avail_in == 0) {
      const std::size_t got = std::fread(in_.data(), 1, in_.size(), file_);
      if (got == 0) break;  // file ends before the stream: the caller sees a truncation
      zs->next_in = in_.data();
      zs->avail_in = static_cast<uInt>(got);
    }
    const int r = inflate(zs, Z_NO_FLUSH);
    if (r == Z_STREAM_END) zlib_end_ = true;
    if (r != Z_OK && r != Z_STREAM_END && r != Z_BUF_ERROR) {
      failed_ = true;
      throw DataError(path_, offset_, std::string("corrupt ZLIB stream: ") + (zs->msg ? zs->msg : "inflate error"), kCorruptHint);
    }
  }
  return chunk - zs->avail_out;
}

std::size_t TfRecordReader::read_fully(void* dst, std::size_t n) {
  auto* out = static_cast<unsigned char*>(dst);
  std::size_t got = 0;
  while (got < n) {
    const std::size_t r = read_some(out + got, n - got);
    if (r == 0) break;
    got += r;
  }
  return got;
}

// A clean end of file must also be the end of the compressed stream: a GZIP or ZLIB
// stream cut at a record boundary would otherwise read as a shorter file.
void TfRecordReader::check_stream_end() {
  bool cut = false;
  if (gz_) {
    int err = Z_OK;
    gzerror(static_cast<gzFile>(gz_), &err);
    cut = err == Z_BUF_ERROR;  // zlib's "unexpected end of file"
  } else {
    cut = !zlib_end_ && static_cast<z_stream*>(zs_)->total_in > 0;  // an empty file holds no records
  }
  if (cut) {
    failed_ = true;
    throw DataError(path_, offset_, "truncated compressed stream: the file ends inside it, after the last whole record",
                    "the file is incomplete (an interrupted write or copy?)");
  }
}

std::optional<std::string> TfRecordReader::next() {
  if (failed_) return std::nullopt;
  unsigned char header[12];
  const std::size_t got = read_fully(header, sizeof header);
  if (got == 0) {
    check_stream_end();
    return std::nullopt;
  }
  if (got < sizeof header) {
    failed_ = true;
    throw DataError(path_, offset_, "truncated record header: " + std::to_string(got) + " of 12 bytes",
                    "the file is incomplete (an interrupted write or copy?)");
  }
  const std::uint64_t length = load_le64(header);
  if (mask_crc(crc32c(header, 8)) != load_le32(header + 8)) {
    failed_ = true;
    throw DataError(path_, offset_, "corrupt record: the length's CRC-32C does not match", kCorruptHint);
  }
  if (length > kMaxRecordBytes) {
    failed_ = true;
    throw DataError(path_, offset_, "record length " + std::to_string(length) + " is implausible", kCorruptHint);
  }
  // Note [Record length from the file]: the length has a valid CRC but may still be far
  // more than the file holds (a crafted or damaged file, or a stream that is cut short).
  // The data is read in chunks that at most double what has arrived, so memory follows the
  // bytes really present, never the length field.
  std::string data;
  std::size_t got_data = 0;
  while (got_data < length) {
    const std::size_t chunk = static_cast<std::size_t>(
        std::min<std::uint64_t>(length - got_data, std::max<std::size_t>(got_data, std::size_t{1} << 20)));
    data.resize(got_data + chunk);
    const std::size_t r = read_fully(data.data() + got_data, chunk);
    got_data += r;
    if (r < chunk) break;
  }
  unsigned char footer[4];
  const std::size_t got_footer = got_data == length ? read_fully(footer, 4) : 0;
  if (got_data < length || got_footer < 4) {
    failed_ = true;
    throw DataError(path_, offset_,
                    "truncated record: " + std::to_string(length) + " data bytes + 4 CRC bytes expected, the file ends after " +
                        std::to_string(got_data + got_footer),
                    "the file is incomplete (an interrupted write or copy?)");
  }
  if (mask_crc(crc32c(data.data(), data.size())) != load_le32(footer)) {
    failed_ = true;
    throw DataError(path_, offset_, "corrupt record: the data's CRC-32C does not match", kCorruptHint);
  }
  offset_ += static_cast<std::int64_t>(length) + 16;
  return data;
}

TfRecordWriter::TfRecordWriter(std::string path, Compression compression) : path_(std::move(path)) {
  if (compression == Compression::zlib) {
    file_ = std::fopen(path_.c_str(), "wb");
    if (file_ == nullptr) throw DataError(path_, -1, "cannot create TFRecord file", "check the directory exists and is writable");
    auto* zs = new z_stream{};
    deflateInit(zs, Z_DEFAULT_COMPRESSION);
    zs_ = zs;
    out_.resize(1 << 16);
    return;
  }
  gzFile f = gzopen(path_.c_str(), compression == Compression::gzip ? "wb6" : "wbT");
  if (f == nullptr) throw DataError(path_, -1, "cannot create TFRecord file", "check the directory exists and is writable");
  gz_ = f;
}

TfRecordWriter::~TfRecordWriter() {
  try {
    close();
  } catch (const Error&) {  // the destructor cannot report; close() does
  }
}

void TfRecordWriter::put(const void* data, std::size_t n) {
  if (gz_) {
    if (n && gzwrite(static_cast<gzFile>(gz_), data, static_cast<unsigned>(n)) != static_cast<int>(n)) {
      throw DataError(path_, -1, "write failed (disk full?)");
    }
    return;
  }
  auto* zs = static_cast<z_stream*>(zs_);
  zs->next_in = static_cast<Bytef*>(const_cast<void*>(data));
  zs->avail_in = static_cast<uInt>(n);
  do {
    zs->next_out = out_.data();
    zs->avail_out = static_cast<uInt>(out_.size());
    deflate(zs, Z_NO_FLUSH);
    const std::size_t have = out_.size() - zs->avail_out;
    if (have && std::fwrite(out_.data(), 1, have, file_) != have) throw DataError(path_, -1, "write failed (disk full?)");
  } while (zs->avail_in > 0 || zs->avail_out == 0);
}

void TfRecordWriter::write(std::string_view record) {
  NNFIT_CHECK(gz_ != nullptr || zs_ != nullptr, InvalidArgument, "TfRecordWriter: write after close");
  unsigned char header[12];
  unsigned char footer[4];
  store_le64(header, record.size());
  store_le32(header + 8, mask_crc(crc32c(header, 8)));
  store_le32(footer, mask_crc(crc32c(record.data(), record.size())));
  put(header, sizeof header);
  put(record.data(), record.size());
  put(footer, sizeof footer);
}

void TfRecordWriter::close() {
  if (gz_) {
    const int r = gzclose(static_cast<gzFile>(gz_));
    gz_ = nullptr;
    if (r != Z_OK) throw DataError(path_, -1, "closing the file failed (disk full?)");
  }
  if (zs_) {
    auto* zs = static_cast<z_stream*>(zs_);
    bool ok = true;
    int r = Z_OK;
    zs->avail_in = 0;
    while (r != Z_STREAM_END && ok) {
      zs->next_out = out_.data();
      zs->avail_out = static_cast<uInt>(out_.size());
      r = deflate(zs, Z_FINISH);
      const std::size_t have = out_.size() - zs->avail_out;
      ok = (r == Z_OK || r == Z_STREAM_END || r == Z_BUF_ERROR) && std::fwrite(out_.data(), 1, have, file_) == have;
    }
    deflateEnd(zs);
    delete zs;
    zs_ = nullptr;
    ok = std::fclose(file_) == 0 && ok;
    file_ = nullptr;
    if (!ok) throw DataError(path_, -1, "closing the file failed (disk full?)");
  }
}

}  // namespace nnfit::io
