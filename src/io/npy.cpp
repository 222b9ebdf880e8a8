// .npy/.npz reader and writer. A .npy file is read whole and parsed from memory (the
// same parser serves .npz members). The header dict is parsed as the one literal writers
// emit, {'descr': str, 'fortran_order': bool, 'shape': tuple} (Note [Strict npy header]),
// not by a general Python-literal parser; anything else is rejected with its text.
#include "nnfit/io/npy.h"

#include <zlib.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <fstream>
#include <iterator>

#include "nnfit/core/error.h"
#include "nnfit/io/regular_file.h"

namespace nnfit::io {
namespace {

constexpr unsigned char kMagic[] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
constexpr std::size_t kMaxHeaderBytes = 1 << 20;
constexpr const char* kNotNpyHint = "is this a file written by numpy.save? (np.load(path) should open it)";

struct NpyType {
  char kind;
  int size;
  DType dtype;
};
constexpr NpyType kTypes[] = {
    {'f', 4, DType::f32}, {'f', 8, DType::f32}, {'f', 2, DType::f16}, {'b', 1, DType::boolean},
    {'u', 1, DType::u8},  {'i', 1, DType::i32}, {'i', 2, DType::i32}, {'u', 2, DType::i32},
    {'i', 4, DType::i32}, {'u', 4, DType::i64}, {'i', 8, DType::i64},
};

std::vector<unsigned char> slurp(const std::string& path, const char* what) {
  require_regular_file(path, what);  // /dev/zero would be read for ever
  std::ifstream in(path, std::ios::binary);
  if (!in) throw DataError(path, -1, "cannot open file", "check the path exists and is readable");
  return std::vector<unsigned char>(std::istreambuf_iterator<char>(in), {});
}

// Note [Strict npy header]: the header is the repr of a dict with exactly the keys descr,
// fortran_order and shape, each once (numpy's own reader refuses others too). It is
// parsed as that literal, so a repeated or extra key, or text after the closing brace, is
// an error naming it, never a first match that ignores the rest.
struct NpyHeader {
  std::string descr;
  bool fortran = false;
  std::vector<std::int64_t> dims;
};

class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::string& file, std::int64_t offset)
      : text_(text), file_(file), offset_(offset) {}

  NpyHeader parse() {
    NpyHeader h;
    bool seen[3] = {false, false, false};
    expect('{');
    while (skip_space(), peek() != '}') {
      const std::string key = quoted("a key");
      skip_space();
      expect(':');
      skip_space();
      const int which = key == "descr" ? 0 : key == "fortran_order" ? 1 : key == "shape" ? 2 : -1;
      if (which < 0) fail("unexpected key '" + key + "' (a .npy header has descr, fortran_order and shape)");
      if (seen[which]) fail("key '" + key + "' appears twice");
      seen[which] = true;
      if (which == 0) {
        if (peek() != '\'' && peek() != '"') {
          throw DataError(file_, offset_, "structured dtypes are not supported (descr is not a string): " + std::string(text_),
                          "save plain numeric arrays, one per .npy or npz member");
        }
        h.descr = quoted("descr");
      } else if (which == 1) {
        h.fortran = word("True");
        if (!h.fortran && !word("False")) fail("bad fortran_order (True or False)");
      } else {
        h.dims = shape();
      }
      skip_space();
      if (peek() != ',') break;
      ++pos_;
    }
    skip_space();
    expect('}');
    while (pos_ < text_.size() && std::string_view(" \t\r\n").find(text_[pos_]) != std::string_view::npos) ++pos_;
    if (pos_ != text_.size()) fail("text after the header dict");
    const char* names[] = {"descr", "fortran_order", "shape"};
    for (int k = 0; k < 3; ++k) {
      if (!seen[k]) {
        throw DataError(file_, offset_, std::string("npy header has no '") + names[k] + "': " + std::string(text_), kNotNpyHint);
      }
    }
    return h;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw DataError(file_, offset_ + static_cast<std::int64_t>(pos_), "bad npy header: " + what + ": " + std::string(text_),
                    kNotNpyHint);
  }
  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  void skip_space() {
    while (peek() == ' ') ++pos_;
  }
  void expect(char c) {
    if (peek() != c) fail(std::string("expected '") + c + "'");
    ++pos_;
  }
  bool word(std::string_view w) {
    if (text_.substr(pos_, w.size()) != w) return false;
    pos_ += w.size();
    return true;
  }
  std::string quoted(const char* what) {
    const char q = peek();
    if (q != '\'' && q != '"') fail(std::string("expected ") + what + " in quotes");
    const std::size_t close = text_.find(q, pos_ + 1);
    if (close == std::string_view::npos) fail(std::string("unterminated ") + what);
    std::string out(text_.substr(pos_ + 1, close - pos_ - 1));
    pos_ = close + 1;
    return out;
  }
  // (2, 3) / (5,) / (): non-negative integers; their product is checked by the caller.
  std::vector<std::int64_t> shape() {
    expect('(');
    std::vector<std::int64_t> dims;
    while (skip_space(), peek() != ')') {
      std::int64_t v = 0;
      int digits = 0;
      while (peek() >= '0' && peek() <= '9') {
        if (++digits > 18) fail("a dimension of more than 18 digits");
        v = v * 10 + (text_[pos_++] - '0');
      }
      if (digits == 0) fail("bad shape");
      if (peek() == 'L') ++pos_;  // Python 2's long literal, as numpy under Python 2 wrote it
      dims.push_back(v);
      skip_space();
      if (peek() != ',') break;
      ++pos_;
    }
    expect(')');
    return dims;
  }

  std::string_view text_;
  const std::string& file_;
  std::int64_t offset_;
  std::size_t pos_ = 0;
};

template <typename Src, typename Dst>
void convert(const unsigned char* src, Dst* dst, std::size_t n, bool swap) {
  for (std::size_t i = 0; i < n; ++i) {
    Src v;
    std::memcpy(&v, src + i * sizeof(Src), sizeof(Src));
    if (swap) {
      auto* b = reinterpret_cast<unsigned char*>(&v);
      std::reverse(b, b + sizeof(Src));
    }
    dst[i] = static_cast<Dst>(v);
  }
}

// Fortran-ordered flat data -> C order, element size `es`.
void fortran_to_c(const unsigned char* src, unsigned char* dst, const Shape& shape, std::size_t es) {
  const int rank = shape.rank();
  const auto n = static_cast<std::size_t>(shape.numel());
  std::vector<std::int64_t> idx(static_cast<std::size_t>(rank), 0);
  for (std::size_t f = 0; f < n; ++f) {  // f walks Fortran order: first index fastest
    std::int64_t c = 0;
    for (int k = 0; k < rank; ++k) c = c * shape[k] + idx[static_cast<std::size_t>(k)];
    std::memcpy(dst + static_cast<std::size_t>(c) * es, src + f * es, es);
    for (int k = 0; k < rank; ++k) {
      if (++idx[static_cast<std::size_t>(k)] < shape[k]) break;
      idx[static_cast<std::size_t>(k)] = 0;
    }
  }
}

std::uint16_t le16(const unsigned char* p) { return static_cast<std::uint16_t>(p[0] | (p[1] << 8)); }
std::uint32_t le32(const unsigned char* p) {
  return std::uint32_t{p[0]} | (std::uint32_t{p[1]} << 8) | (std::uint32_t{p[2]} << 16) | (std::uint32_t{p[3]} << 24);
}
std::uint64_t le64(const unsigned char* p) { return le32(p) | (std::uint64_t{le32(p + 4)} << 32); }
void put16(std::string& s, std::uint16_t v) { s.push_back(static_cast<char>(v)); s.push_back(static_cast<char>(v >> 8)); }
void put32(std::string& s, std::uint32_t v) { put16(s, static_cast<std::uint16_t>(v)); put16(s, static_cast<std::uint16_t>(v >> 16)); }

}  // namespace

Tensor parse_npy(const unsigned char* data, std::size_t size, const std::string& file, std::int64_t base) {
  if (size < 10 || std::memcmp(data, kMagic, sizeof kMagic) != 0) {
    throw DataError(file, base, "not a .npy file (no \\x93NUMPY magic)", kNotNpyHint);
  }
  const int major = data[6];
  if (major < 1 || major > 3) throw DataError(file, base + 6, "unsupported .npy version " + std::to_string(major), kNotNpyHint);
  const std::size_t len_bytes = major == 1 ? 2 : 4;
  if (size < 8 + len_bytes) throw DataError(file, base + 8, "truncated .npy header", kNotNpyHint);
  const std::size_t header_len = major == 1 ? le16(data + 8) : le32(data + 8);
  const std::size_t data_start = 8 + len_bytes + header_len;
  if (header_len > kMaxHeaderBytes || data_start > size) {
    throw DataError(file, base + 8, "header length " + std::to_string(header_len) + " runs past the end of the file", kNotNpyHint);
  }
  const std::int64_t hoff = base + static_cast<std::int64_t>(8 + len_bytes);
  const std::string_view header(reinterpret_cast<const char*>(data + 8 + len_bytes), header_len);

  const NpyHeader h = HeaderParser(header, file, hoff).parse();
  const std::string& descr = h.descr;
  if (descr.size() < 3 || std::string("<>|=").find(descr[0]) == std::string::npos) {
    throw DataError(file, hoff, "unsupported npy dtype '" + descr + "'", kNotNpyHint);
  }
  const bool big_endian = descr[0] == '>';
  const char kind = descr[1];
  int item = 0;
  try {
    item = std::stoi(descr.substr(2));
  } catch (...) {
    item = -1;
  }
  const NpyType* type = nullptr;
  for (const NpyType& t : kTypes) {
    if (t.kind == kind && t.size == item) type = &t;
  }
  if (type == nullptr) {
    throw DataError(file, hoff, "unsupported npy dtype '" + descr + "'",
                    "nnfit reads float16/32/64, bool, int8-64 and uint8-32 arrays; convert with "
                    "arr.astype(np.float32) (object, string, complex and uint64 arrays are not supported)");
  }
  const bool fortran = h.fortran;

  // The bytes the shape needs are checked against the file before the shape is used for
  // anything: a product past 2^64 (or past the file) is refused, never wrapped.
  std::uint64_t elements = 1, need_bytes = 0;
  bool overflow = false;
  for (std::int64_t d : h.dims) overflow = overflow || __builtin_mul_overflow(elements, static_cast<std::uint64_t>(d), &elements);
  overflow = overflow || __builtin_mul_overflow(elements, static_cast<std::uint64_t>(item), &need_bytes);
  if (overflow || need_bytes > size - data_start) {
    std::string dims = "(";
    for (std::size_t k = 0; k < h.dims.size(); ++k) dims += (k ? ", " : "") + std::to_string(h.dims[k]);
    throw DataError(file, base + static_cast<std::int64_t>(size),
                    "npy data is truncated: shape " + dims + ") of '" + descr + "' needs " +
                        (overflow ? std::string("more than 2^64") : std::to_string(need_bytes)) + " bytes, the file has " +
                        std::to_string(size - data_start),
                    "the file is incomplete (an interrupted write or copy?)");
  }
  const Shape shape(h.dims);
  const auto n = static_cast<std::size_t>(elements);
  const auto need = static_cast<std::size_t>(need_bytes);
  const unsigned char* src = data + data_start;
  std::vector<unsigned char> c_order;
  if (fortran && shape.rank() > 1) {
    c_order.resize(need);
    fortran_to_c(src, c_order.data(), shape, static_cast<std::size_t>(item));
    src = c_order.data();
  }
  Tensor out = Tensor::zeros(shape, type->dtype);
  const bool swap = big_endian && item > 1;
  switch (kind == 'f' ? item : kind == 'b' ? 110 : 100 + item * (kind == 'u' ? 10 : 1)) {
    case 4: convert<float>(src, out.data<float>(), n, swap); break;
    case 8: convert<double>(src, out.data<float>(), n, swap); break;
    case 2: convert<std::uint16_t>(src, out.data<std::uint16_t>(), n, swap); break;
    case 101: convert<std::int8_t>(src, out.data<std::int32_t>(), n, false); break;
    case 102: convert<std::int16_t>(src, out.data<std::int32_t>(), n, swap); break;
    case 104: convert<std::int32_t>(src, out.data<std::int32_t>(), n, swap); break;
    case 108: convert<std::int64_t>(src, out.data<std::int64_t>(), n, swap); break;
    case 110: convert<std::uint8_t>(src, out.data<std::uint8_t>(), n, false); break;  // u1 and b1
    case 120: convert<std::uint16_t>(src, out.data<std::int32_t>(), n, swap); break;
    case 140: convert<std::uint32_t>(src, out.data<std::int64_t>(), n, swap); break;
    default: break;
  }
  return out;
}

Tensor read_npy(const std::string& path) {
  const std::vector<unsigned char> bytes = slurp(path, "a .npy file");
  return parse_npy(bytes.data(), bytes.size(), path);
}

std::string npy_bytes(const Tensor& t) {
  const char* descr = nullptr;
  switch (t.dtype()) {
    case DType::f32: descr = "<f4"; break;
    case DType::f16: descr = "<f2"; break;
    case DType::i32: descr = "<i4"; break;
    case DType::i64: descr = "<i8"; break;
    case DType::u8: descr = "|u1"; break;
    case DType::boolean: descr = "|b1"; break;
    case DType::bf16: throw Unsupported("write_npy: NumPy has no bfloat16 dtype; cast to float32 first");
  }
  std::string shape = "(";
  for (int k = 0; k < t.shape().rank(); ++k) shape += std::to_string(t.shape()[k]) + (t.shape().rank() == 1 ? ",)" : k + 1 < t.shape().rank() ? ", " : ")");
  if (t.shape().rank() == 0) shape += ")";
  std::string header = std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  const std::size_t total = (10 + header.size() + 1 + 63) / 64 * 64;
  header.append(total - 10 - header.size() - 1, ' ');
  header.push_back('\n');
  std::string out(reinterpret_cast<const char*>(kMagic), sizeof kMagic);
  out.push_back('\x01');
  out.push_back('\x00');
  put16(out, static_cast<std::uint16_t>(header.size()));
  out += header;
  out.append(static_cast<const char*>(t.raw()), t.nbytes());
  return out;
}

void write_npy(const std::string& path, const Tensor& t) {
  const std::string bytes = npy_bytes(t);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw DataError(path, -1, "write failed");
}

std::vector<std::pair<std::string, Tensor>> read_npz(const std::string& path) {
  const std::vector<unsigned char> z = slurp(path, "a .npz file");
  const std::size_t size = z.size();
  // End of central directory: signature 0x06054b50, within the last 22 + 65535 bytes.
  std::size_t eocd = std::string::npos;
  for (std::size_t i = size >= 22 ? size - 22 + 1 : 0; i-- > 0 && size - i <= 22 + 65535;) {
    if (le32(&z[i]) == 0x06054b50u) {
      eocd = i;
      break;
    }
  }
  if (eocd == std::string::npos) {
    throw DataError(path, static_cast<std::int64_t>(size), "not a .npz/zip archive (no end-of-central-directory record)",
                    "is this a file written by numpy.savez?");
  }
  std::uint64_t entries = le16(&z[eocd + 10]);
  std::uint64_t cd = le32(&z[eocd + 16]);
  // Note [ZIP64 end of central directory]: an archive past 4 GiB or 65535 members (numpy's
  // savez writes one through zipfile's allowZip64) leaves 0xFFFF / 0xFFFFFFFF here and
  // keeps the real values in the ZIP64 record, which the locator just before the classic
  // record points to.
  if (entries == 0xffffu || cd == 0xffffffffu) {
    if (eocd < 20 || le32(&z[eocd - 20]) != 0x07064b50u) {
      throw DataError(path, static_cast<std::int64_t>(eocd),
                      "the end-of-central-directory record defers to a ZIP64 record, but no ZIP64 locator precedes it",
                      "the archive is corrupt or truncated");
    }
    const std::uint64_t rec = le64(&z[eocd - 20 + 8]);
    if (rec > eocd - 20 || eocd - 20 - rec < 56 || le32(&z[rec]) != 0x06064b50u) {
      throw DataError(path, static_cast<std::int64_t>(std::min<std::uint64_t>(rec, size)),
                      "the ZIP64 locator points to no ZIP64 end-of-central-directory record", "the archive is corrupt");
    }
    entries = le64(&z[rec + 32]);
    cd = le64(&z[rec + 48]);
  }
  std::vector<std::pair<std::string, Tensor>> out;
  for (std::uint64_t e = 0; e < entries; ++e) {
    // Each entry is at least 46 bytes and is checked before it is read, so a count or an
    // offset from a damaged record ends here, after at most size / 46 entries.
    if (cd > size || size - cd < 46 || le32(&z[cd]) != 0x02014b50u) {
      throw DataError(path, static_cast<std::int64_t>(std::min<std::uint64_t>(cd, size)),
                      "bad central directory entry " + std::to_string(e + 1) + " of " + std::to_string(entries),
                      "the archive is corrupt or truncated");
    }
    const unsigned method = le16(&z[cd + 10]);
    const std::uint32_t crc = le32(&z[cd + 16]);
    std::uint64_t csize = le32(&z[cd + 20]), usize = le32(&z[cd + 24]);
    const std::size_t name_len = le16(&z[cd + 28]), extra_len = le16(&z[cd + 30]), comment_len = le16(&z[cd + 32]);
    std::uint64_t local = le32(&z[cd + 42]);
    if (cd + 46 + name_len + extra_len > size) throw DataError(path, static_cast<std::int64_t>(cd), "truncated central directory", "the archive is corrupt");
    std::string name(reinterpret_cast<const char*>(&z[cd + 46]), name_len);
    // ZIP64 extra field (id 1): the 0xFFFFFFFF fields, in order usize, csize, offset.
    for (std::size_t x = cd + 46 + name_len; x + 4 <= cd + 46 + name_len + extra_len;) {
      const unsigned id = le16(&z[x]), len = le16(&z[x + 2]);
      std::size_t f = x + 4;
      if (id == 1) {
        if (usize == 0xffffffffu && f + 8 <= x + 4 + len) { usize = le64(&z[f]); f += 8; }
        if (csize == 0xffffffffu && f + 8 <= x + 4 + len) { csize = le64(&z[f]); f += 8; }
        if (local == 0xffffffffu && f + 8 <= x + 4 + len) { local = le64(&z[f]); }
      }
      x += 4 + len;
    }
    cd += 46 + name_len + extra_len + comment_len;

    // Note [Sizes from files]: every offset and size read from the archive is compared with
    // what is left of the file by subtraction, so a ZIP64 value near 2^64 cannot wrap a sum
    // past the check, and a member's claimed size is bounded by what its bytes can hold
    // (Stored: itself; Deflated: deflate's 1032:1 limit) before anything is allocated.
    if (local > size || size - local < 30 || le32(&z[local]) != 0x04034b50u) {
      throw DataError(path, static_cast<std::int64_t>(std::min<std::uint64_t>(local, size)),
                      "bad local header for member '" + name + "'", "the archive is corrupt");
    }
    const std::size_t data_at = local + 30 + le16(&z[local + 26]) + le16(&z[local + 28]);
    if (data_at > size || csize > size - data_at) {
      throw DataError(path, static_cast<std::int64_t>(std::min(data_at, size)), "member '" + name + "' is truncated",
                      "the archive is incomplete");
    }
    if (method == 8 && usize / 1032 > csize) {
      throw DataError(path, static_cast<std::int64_t>(data_at),
                      "member '" + name + "' claims " + std::to_string(usize) + " bytes from " + std::to_string(csize) +
                          " compressed, more than deflate can expand to",
                      "the archive is corrupt");
    }
    std::vector<unsigned char> inflated;
    const unsigned char* member = &z[data_at];
    if (method == 8) {
      inflated.resize(usize);
      z_stream zs{};
      inflateInit2(&zs, -MAX_WBITS);
      zs.next_in = const_cast<unsigned char*>(member);
      zs.next_out = inflated.data();
      // zlib counts in 32 bits: feed both sides in chunks so a member past 4 GiB inflates whole.
      std::uint64_t in_left = csize, out_left = usize;
      int r = Z_OK;
      for (;;) {
        const auto in_chunk = static_cast<uInt>(std::min<std::uint64_t>(in_left, 1u << 30));
        const auto out_chunk = static_cast<uInt>(std::min<std::uint64_t>(out_left, 1u << 30));
        zs.avail_in = in_chunk;
        zs.avail_out = out_chunk;
        r = inflate(&zs, Z_NO_FLUSH);
        const std::uint64_t used = in_chunk - zs.avail_in, made = out_chunk - zs.avail_out;
        in_left -= used;
        out_left -= made;
        // Done, damaged, or stuck (input ended early, or more output than usize).
        if (r == Z_STREAM_END || (r != Z_OK && r != Z_BUF_ERROR) || (used == 0 && made == 0)) break;
      }
      const bool ok = r == Z_STREAM_END && out_left == 0;
      inflateEnd(&zs);
      if (!ok) throw DataError(path, static_cast<std::int64_t>(data_at), "member '" + name + "': corrupt deflate stream", "the archive is corrupt");
      member = inflated.data();
    } else if (method != 0) {
      throw DataError(path, static_cast<std::int64_t>(local), "member '" + name + "' uses zip compression method " +
                      std::to_string(method) + "; only Stored (np.savez) and Deflated (np.savez_compressed) are supported");
    } else if (csize != usize) {
      throw DataError(path, static_cast<std::int64_t>(local), "stored member '" + name + "' has differing sizes", "the archive is corrupt");
    }
    if (::crc32_z(0L, member, static_cast<std::size_t>(usize)) != crc) {
      throw DataError(path, static_cast<std::int64_t>(data_at), "member '" + name + "': CRC-32 mismatch", "the archive is corrupt");
    }
    Tensor t = parse_npy(member, usize, path + ":" + name, 0);
    if (name.ends_with(".npy")) name.resize(name.size() - 4);
    out.emplace_back(std::move(name), std::move(t));
  }
  return out;
}

void write_npz(const std::string& path, const std::vector<std::pair<std::string, Tensor>>& arrays) {
  std::string out, central;
  for (const auto& [key, tensor] : arrays) {
    const std::string name = key + ".npy";
    const std::string body = npy_bytes(tensor);
    const auto crc = static_cast<std::uint32_t>(::crc32(0L, reinterpret_cast<const Bytef*>(body.data()), static_cast<uInt>(body.size())));
    const auto offset = static_cast<std::uint32_t>(out.size());
    put32(out, 0x04034b50u); put16(out, 20); put16(out, 0); put16(out, 0); put16(out, 0); put16(out, 0x21);
    put32(out, crc); put32(out, static_cast<std::uint32_t>(body.size())); put32(out, static_cast<std::uint32_t>(body.size()));
    put16(out, static_cast<std::uint16_t>(name.size())); put16(out, 0);
    out += name;
    out += body;
    put32(central, 0x02014b50u); put16(central, 20); put16(central, 20); put16(central, 0); put16(central, 0);
    put16(central, 0); put16(central, 0x21); put32(central, crc); put32(central, static_cast<std::uint32_t>(body.size()));
    put32(central, static_cast<std::uint32_t>(body.size())); put16(central, static_cast<std::uint16_t>(name.size()));
    put16(central, 0); put16(central, 0); put16(central, 0); put16(central, 0); put32(central, 0); put32(central, offset);
    central += name;
  }
  const auto cd_offset = static_cast<std::uint32_t>(out.size());
  out += central;
  put32(out, 0x06054b50u); put16(out, 0); put16(out, 0);
  put16(out, static_cast<std::uint16_t>(arrays.size())); put16(out, static_cast<std::uint16_t>(arrays.size()));
  put32(out, static_cast<std::uint32_t>(central.size())); put32(out, cd_offset); put16(out, 0);
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(out.data(), static_cast<std::streamsize>(out.size()));
  if (!f) throw DataError(path, -1, "write failed");
}

}  // namespace nnfit::io
