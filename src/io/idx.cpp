// IDX reader and writer. The reader streams: a raw file is read with read(2) and a gzip
// file with zlib's gzread, straight into the result tensor when the element type maps 1:1
// (u8, i32, f32; big-endian values are swapped in place) or through a 64 KiB staging
// buffer when it narrows or widens (i8, i16 -> i32; f64 -> f32). The header is validated
// before anything large is allocated: against the file size for a raw file, and against
// deflate's 1032:1 expansion limit for a gzip file.
#include "nnfit/io/idx.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <vector>

#include "nnfit/core/error.h"
#include "nnfit/io/regular_file.h"

namespace nnfit::io {
namespace {

constexpr const char* kNotIdxHint =
    "is this a Fashion-MNIST/MNIST *-idx?-ubyte(.gz) file? Debian's dataset-fashion-mnist "
    "installs them in /usr/share/datasets/fashion-mnist";
constexpr const char* kTruncatedHint =
    "the file is incomplete (an interrupted download or copy?); fetch it again and compare "
    "its checksum";
constexpr std::size_t kStagingBytes = std::size_t{1} << 16;
constexpr std::size_t kMaxReadBytes = std::size_t{1} << 22;  // per read call; bounds offset slack
constexpr std::uint64_t kDeflateMaxRatio = 1032;

struct ElementType {
  std::uint8_t code;
  const char* name;
  std::size_t file_size;  // bytes per element in the file
  DType dtype;            // what it becomes in nnfit
};

constexpr ElementType kElementTypes[] = {
    {0x08, "uint8", 1, DType::u8},    {0x09, "int8", 1, DType::i32},
    {0x0B, "int16", 2, DType::i32},   {0x0C, "int32", 4, DType::i32},
    {0x0D, "float32", 4, DType::f32}, {0x0E, "float64", 8, DType::f32},
};

const ElementType* find_element_type(std::uint8_t code) {
  for (const ElementType& t : kElementTypes) {
    if (t.code == code) return &t;
  }
  return nullptr;
}

std::string hex_byte(std::uint8_t b) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%02x", b);
  return buf;
}

std::uint32_t load_be32(const unsigned char* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) |
         std::uint32_t{p[3]};
}

std::uint16_t load_be16(const unsigned char* p) {
  return static_cast<std::uint16_t>((p[0] << 8) | p[1]);
}

std::uint64_t load_be64(const unsigned char* p) {
  return (std::uint64_t{load_be32(p)} << 32) | load_be32(p + 4);
}

void store_be32(unsigned char* p, std::uint32_t v) {
  p[0] = static_cast<unsigned char>(v >> 24);
  p[1] = static_cast<unsigned char>(v >> 16);
  p[2] = static_cast<unsigned char>(v >> 8);
  p[3] = static_cast<unsigned char>(v);
}

// Big-endian 4-byte words to host order, in place.
void be32_to_host_inplace(void* data, std::size_t count) {
  if constexpr (std::endian::native == std::endian::big) return;
  auto* p = static_cast<std::uint32_t*>(data);
  for (std::size_t i = 0; i < count; ++i) p[i] = __builtin_bswap32(p[i]);
}

// A file opened for sequential reading, raw or gzip. Tracks the offset in the (decompressed)
// IDX stream so every error can say where it happened. Not thread-safe; owns the descriptor.
class IdxSource {
 public:
  explicit IdxSource(const std::string& path) : path_(path) {
    if (file_kind(path) != FileKind::missing) require_regular_file(path, "an IDX file");
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) {
      throw DataError(path, -1, std::string("cannot open IDX file: ") + std::strerror(errno),
                      "check the path; Debian's dataset-fashion-mnist installs Fashion-MNIST "
                      "in /usr/share/datasets/fashion-mnist");
    }
    struct stat st {};
    if (::fstat(fd_, &st) != 0 || S_ISDIR(st.st_mode)) {
      int err = S_ISDIR(st.st_mode) ? EISDIR : errno;
      ::close(fd_);
      throw DataError(path, -1, std::string("cannot read IDX file: ") + std::strerror(err));
    }
    file_bytes_ = static_cast<std::int64_t>(st.st_size);
    unsigned char magic[2] = {0, 0};
    gzip_ = ::pread(fd_, magic, 2, 0) == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
    if (gzip_) {
      gz_ = gzdopen(fd_, "rb");  // takes over fd_
      if (gz_ == nullptr) {
        ::close(fd_);
        throw DataError(path, -1, "cannot open gzip stream (out of memory?)");
      }
      gzbuffer(gz_, 1 << 18);
    }
  }
  ~IdxSource() {
    if (gz_ != nullptr) {
      gzclose(gz_);
    } else if (fd_ >= 0) {
      ::close(fd_);
    }
  }
  IdxSource(const IdxSource&) = delete;
  IdxSource& operator=(const IdxSource&) = delete;

  const std::string& path() const { return path_; }
  bool gzip() const { return gzip_; }
  std::int64_t file_bytes() const { return file_bytes_; }
  std::int64_t offset() const { return offset_; }
  // True once a gzip stream ended without its trailer (the compressed file is cut off).
  bool gzip_cut_off() const { return gzip_cut_off_; }

  // Reads up to n bytes; returns fewer only at the end of the data.
  // throws: DataError on a read error or a corrupt gzip stream.
  std::size_t read(void* dst, std::size_t n) {
    auto* out = static_cast<unsigned char*>(dst);
    std::size_t got = 0;
    while (got < n) {
      std::size_t want = std::min(n - got, kMaxReadBytes);
      long r = gzip_ ? gzread(gz_, out + got, static_cast<unsigned>(want))
                     : static_cast<long>(::read(fd_, out + got, want));
      if (r < 0) {
        if (!gzip_ && errno == EINTR) continue;
        throw_read_error();
      }
      if (r == 0) {
        if (gzip_) check_gzip_end();
        break;
      }
      got += static_cast<std::size_t>(r);
      offset_ += r;
    }
    return got;
  }

 private:
  void check_gzip_end() {
    int err = Z_OK;
    gzerror(gz_, &err);
    if (err == Z_BUF_ERROR) {
      gzip_cut_off_ = true;
    } else if (err != Z_OK) {
      throw_read_error();
    }
  }

  [[noreturn]] void throw_read_error() {
    if (!gzip_) {
      throw DataError(path_, offset_, std::string("read failed: ") + std::strerror(errno));
    }
    int err = Z_OK;
    const char* msg = gzerror(gz_, &err);
    if (err == Z_ERRNO) {
      throw DataError(path_, offset_, std::string("read failed: ") + std::strerror(errno));
    }
    throw DataError(path_, offset_,
                    detail::concat("corrupt gzip stream: ", msg, " (after ", offset_,
                                   " decompressed bytes; ", file_bytes_, " compressed bytes in the file)"),
                    "the .gz file is damaged; fetch it again and compare its checksum");
  }

  std::string path_;
  int fd_ = -1;
  gzFile gz_ = nullptr;
  bool gzip_ = false;
  bool gzip_cut_off_ = false;
  std::int64_t file_bytes_ = 0;
  std::int64_t offset_ = 0;
};

// What the header promised, for error messages.
struct Header {
  const ElementType* type = nullptr;
  Shape shape;
  std::int64_t header_bytes = 0;
  std::int64_t payload_bytes = 0;  // in the file's element type
  std::string describe() const {
    return detail::concat(type->name, " ", shape.to_string());
  }
};

[[noreturn]] void throw_truncated(const IdxSource& src, const Header& h, std::int64_t payload_got) {
  std::int64_t expected = h.header_bytes + h.payload_bytes;
  std::int64_t actual = h.header_bytes + payload_got;
  std::string what = detail::concat(
      "truncated IDX data: the header (", h.describe(), ") needs ", h.payload_bytes,
      " payload bytes, ", expected, " bytes in all, but the ", src.gzip() ? "decompressed " : "",
      "data ends after ", actual, " bytes (", expected - actual, " missing)",
      src.gzip_cut_off() ? "; the gzip stream itself is cut off" : "");
  throw DataError(src.path(), actual, what, kTruncatedHint);
}

// Reads exactly n header bytes or throws a truncation error naming `what`.
void read_header_bytes(IdxSource& src, unsigned char* dst, std::size_t n, const char* what) {
  std::size_t got = src.read(dst, n);
  if (got == n) return;
  if (src.offset() == 0) {
    throw DataError(src.path(), 0,
                    src.gzip() ? "empty gzip stream, expected an IDX header" : "empty file, expected an IDX header",
                    kNotIdxHint);
  }
  throw DataError(src.path(), src.offset(),
                  detail::concat("truncated IDX header: the data ends inside the ", what),
                  kNotIdxHint);
}

Header read_header(IdxSource& src) {
  unsigned char magic[4];
  read_header_bytes(src, magic, 4, "4-byte magic");
  if (magic[0] != 0 || magic[1] != 0) {
    throw DataError(src.path(), 0,
                    detail::concat("not an IDX file: it starts with bytes ", hex_byte(magic[0]), " ",
                                   hex_byte(magic[1]), " ", hex_byte(magic[2]), " ", hex_byte(magic[3]),
                                   ", an IDX file starts with 00 00 <type code> <ndims>"),
                    kNotIdxHint);
  }
  Header h;
  h.type = find_element_type(magic[2]);
  if (h.type == nullptr) {
    throw DataError(src.path(), 2,
                    detail::concat("unknown IDX element type code 0x", hex_byte(magic[2]),
                                   "; expected 08 (uint8), 09 (int8), 0b (int16), 0c (int32), "
                                   "0d (float32) or 0e (float64)"),
                    kNotIdxHint);
  }
  const int ndims = magic[3];
  if (ndims == 0) {
    throw DataError(src.path(), 3, "IDX header declares 0 dimensions; expected at least 1",
                    kNotIdxHint);
  }
  std::vector<unsigned char> raw_dims(static_cast<std::size_t>(ndims) * 4);
  read_header_bytes(src, raw_dims.data(), raw_dims.size(), "dimension sizes");
  std::vector<std::int64_t> dims(static_cast<std::size_t>(ndims));
  std::uint64_t bytes = h.type->file_size;
  bool overflow = false;
  for (int i = 0; i < ndims; ++i) {
    dims[static_cast<std::size_t>(i)] = load_be32(&raw_dims[static_cast<std::size_t>(i) * 4]);
    overflow |= __builtin_mul_overflow(bytes, static_cast<std::uint64_t>(dims[static_cast<std::size_t>(i)]), &bytes);
  }
  h.shape = Shape(std::move(dims));
  h.header_bytes = 4 + 4 * std::int64_t{ndims};
  if (overflow || bytes > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max() / 2)) {
    throw DataError(src.path(), 4,
                    detail::concat("IDX dimensions ", h.shape.to_string(), " overflow a 64-bit byte count"),
                    kNotIdxHint);
  }
  h.payload_bytes = static_cast<std::int64_t>(bytes);
  return h;
}

// Rejects a header whose payload cannot be in this file before allocating for it.
void check_size_before_reading(const IdxSource& src, const Header& h) {
  const std::int64_t expected = h.header_bytes + h.payload_bytes;
  if (!src.gzip()) {
    if (src.file_bytes() < expected) throw_truncated(src, h, src.file_bytes() - h.header_bytes);
    if (src.file_bytes() > expected) {
      throw DataError(src.path(), expected,
                      detail::concat(src.file_bytes() - expected, " trailing bytes after the IDX payload: the header (",
                                     h.describe(), ") accounts for ", expected, " bytes but the file has ",
                                     src.file_bytes()),
                      "the header's dimensions do not match the data; is the file damaged or "
                      "two files concatenated?");
    }
    return;
  }
  const std::uint64_t limit = static_cast<std::uint64_t>(src.file_bytes()) * kDeflateMaxRatio + 4096;
  if (static_cast<std::uint64_t>(expected) > limit) {
    throw DataError(src.path(), 4,
                    detail::concat("IDX header (", h.describe(), ") claims ", expected,
                                   " bytes, more than a gzip file of ", src.file_bytes(),
                                   " bytes can hold (deflate expands at most 1032:1)"),
                    kTruncatedHint);
  }
}

// Reads the payload straight into dst; throws a truncation error if it ends early.
void read_payload_exact(IdxSource& src, const Header& h, void* dst, std::size_t n) {
  std::size_t got = src.read(dst, n);
  if (got != n) throw_truncated(src, h, src.offset() - h.header_bytes);
}

void read_payload(IdxSource& src, const Header& h, Tensor& out) {
  const std::size_t count = static_cast<std::size_t>(h.shape.numel());
  switch (h.type->code) {
    case 0x08:
      read_payload_exact(src, h, out.raw(), count);
      return;
    case 0x0C:
    case 0x0D:
      read_payload_exact(src, h, out.raw(), count * 4);
      be32_to_host_inplace(out.raw(), count);
      return;
    default:
      break;
  }
  // Widening or narrowing types go through a staging buffer.
  const std::size_t in_size = h.type->file_size;
  const std::size_t per_chunk = kStagingBytes / in_size;
  std::vector<unsigned char> staging(per_chunk * in_size);
  for (std::size_t done = 0; done < count;) {
    const std::size_t n = std::min(per_chunk, count - done);
    read_payload_exact(src, h, staging.data(), n * in_size);
    const unsigned char* p = staging.data();
    if (h.type->code == 0x09) {
      auto* dst = out.data<std::int32_t>() + done;
      for (std::size_t i = 0; i < n; ++i) dst[i] = static_cast<std::int8_t>(p[i]);
    } else if (h.type->code == 0x0B) {
      auto* dst = out.data<std::int32_t>() + done;
      for (std::size_t i = 0; i < n; ++i) dst[i] = static_cast<std::int16_t>(load_be16(p + 2 * i));
    } else {  // 0x0E
      auto* dst = out.data<float>() + done;
      for (std::size_t i = 0; i < n; ++i) {
        dst[i] = static_cast<float>(std::bit_cast<double>(load_be64(p + 8 * i)));
      }
    }
    done += n;
  }
}

// Reads to the end: for gzip this also makes zlib check the CRC and length trailer.
void check_no_trailing_data(IdxSource& src, const Header& h) {
  const std::int64_t end = h.header_bytes + h.payload_bytes;
  unsigned char sink[4096];
  std::int64_t extra = 0;
  for (std::size_t got; (got = src.read(sink, sizeof sink)) > 0;) extra += static_cast<std::int64_t>(got);
  if (extra > 0) {
    throw DataError(src.path(), end,
                    detail::concat(extra, " trailing bytes after the IDX payload: the header (", h.describe(),
                                   ") accounts for ", end, " bytes but the ",
                                   src.gzip() ? "decompressed data has " : "file has ", end + extra),
                    "the header's dimensions do not match the data; is the file damaged or two "
                    "files concatenated?");
  }
  if (src.gzip_cut_off()) {
    throw DataError(src.path(), end,
                    "the gzip stream is cut off after the complete IDX payload (its CRC trailer is missing)",
                    kTruncatedHint);
  }
}

}  // namespace

Tensor read_idx(const std::string& path) {
  IdxSource src(path);
  Header h = read_header(src);
  check_size_before_reading(src, h);
  Tensor out = Tensor::zeros(h.shape, h.type->dtype);
  read_payload(src, h, out);
  check_no_trailing_data(src, h);
  return out;
}

void write_idx(const std::string& path, const Tensor& t) {
  NNFIT_CHECK(t.defined() && t.shape().rank() >= 1, InvalidArgument,
              "write_idx needs a tensor of rank >= 1, got ",
              t.defined() ? t.shape().to_string() : std::string("an undefined tensor"));
  std::uint8_t code = 0;
  switch (t.dtype()) {
    case DType::u8: code = 0x08; break;
    case DType::i32: code = 0x0C; break;
    case DType::f32: code = 0x0D; break;
    default:
      throw Unsupported(detail::concat("write_idx supports uint8, int32 and float32, not ",
                                       dtype_name(t.dtype())));
  }
  NNFIT_CHECK(t.shape().rank() <= 255, InvalidArgument, "IDX holds at most 255 dimensions");
  std::vector<unsigned char> header{0, 0, code, static_cast<unsigned char>(t.shape().rank())};
  for (std::int64_t d : t.shape().dims()) {
    NNFIT_CHECK(d >= 0 && d <= std::int64_t{0xFFFFFFFF}, InvalidArgument,
                "IDX dimensions must fit in 32 bits, got ", t.shape().to_string());
    header.resize(header.size() + 4);
    store_be32(&header[header.size() - 4], static_cast<std::uint32_t>(d));
  }

  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "wb"), &std::fclose);
  if (!f) throw DataError(path, -1, std::string("cannot create IDX file: ") + std::strerror(errno));
  auto write = [&](const void* p, std::size_t n, std::int64_t at) {
    if (n != 0 && std::fwrite(p, 1, n, f.get()) != n) {
      throw DataError(path, at, std::string("write failed: ") + std::strerror(errno));
    }
  };
  write(header.data(), header.size(), 0);
  const auto* src = static_cast<const unsigned char*>(t.raw());
  const std::size_t count = static_cast<std::size_t>(t.numel());
  std::int64_t at = static_cast<std::int64_t>(header.size());
  if (code == 0x08 || std::endian::native == std::endian::big) {
    write(src, t.nbytes(), at);
  } else {
    std::vector<unsigned char> staging(kStagingBytes);
    const std::size_t per_chunk = kStagingBytes / 4;
    for (std::size_t done = 0; done < count;) {
      const std::size_t n = std::min(per_chunk, count - done);
      for (std::size_t i = 0; i < n; ++i) {
        std::uint32_t v;
        std::memcpy(&v, src + 4 * (done + i), 4);
        store_be32(&staging[4 * i], v);
      }
      write(staging.data(), n * 4, at);
      at += static_cast<std::int64_t>(n * 4);
      done += n;
    }
  }
  if (std::fflush(f.get()) != 0) {
    throw DataError(path, -1, std::string("write failed: ") + std::strerror(errno));
  }
}

}  // namespace nnfit::io
