// tfevents reader: TFRecord framing with both CRCs checked, then just enough protobuf
// decoding for Event{wall_time=1, step=2, file_version=3, summary=5},
// Summary{value=1}, Value{tag=1, simple_value=2, tensor=8} and
// TensorProto{dtype=1, tensor_content=4, float_val=5} (field numbers: event_file_writer.cpp).
#include "nnfit/profile/event_file_reader.h"

#include <cstring>
#include <fstream>
#include <iterator>
#include <optional>
#include <string_view>

#include "nnfit/core/crc32c.h"
#include "nnfit/core/error.h"

namespace nnfit::profile {
namespace {

constexpr const char* kHint = "the file is corrupt or not a TensorBoard event file";

std::uint64_t load_le(const char* p, int n) {
  std::uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

// A forward-only protobuf field reader; false from next() at the end or on malformed input.
class Fields {
 public:
  explicit Fields(std::string_view m) : m_(m) {}
  bool next() {
    if (at_ >= m_.size()) return false;
    std::uint64_t key;
    if (!varint(key)) return bad();
    number = static_cast<std::uint32_t>(key >> 3);
    type = static_cast<std::uint32_t>(key & 7);
    switch (type) {
      case 0: return varint(value) || bad();
      case 1: return fixed(8) || bad();
      case 5: return fixed(4) || bad();
      case 2: {
        std::uint64_t n;
        if (!varint(n) || n > m_.size() - at_) return bad();
        data = m_.substr(at_, n);
        at_ += n;
        return true;
      }
      default: return bad();
    }
  }
  bool malformed = false;
  std::uint32_t number = 0, type = 0;
  std::uint64_t value = 0;  // varint, or fixed32/64 bits
  std::string_view data;    // length-delimited

 private:
  bool bad() {
    malformed = true;
    return false;
  }
  bool varint(std::uint64_t& v) {
    v = 0;
    for (int shift = 0; shift < 64 && at_ < m_.size(); shift += 7) {
      const auto b = static_cast<unsigned char>(m_[at_++]);
      v |= std::uint64_t{b & 0x7fu} << shift;
      if (!(b & 0x80)) return true;
    }
    return false;
  }
  bool fixed(int n) {
    if (m_.size() - at_ < static_cast<std::size_t>(n)) return false;
    value = load_le(m_.data() + at_, n);
    at_ += static_cast<std::size_t>(n);
    return true;
  }
  std::string_view m_;
  std::size_t at_ = 0;
};

float bits_to_float(std::uint64_t bits) {
  auto b = static_cast<std::uint32_t>(bits);
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

// A rank-0 DT_FLOAT tensor's value (TF2 scalar summaries), else nullopt.
std::optional<float> tensor_scalar(std::string_view tensor) {
  Fields f(tensor);
  std::uint64_t dtype = 0;
  std::optional<float> v;
  while (f.next()) {
    if (f.number == 1 && f.type == 0) dtype = f.value;
    else if (f.number == 4 && f.type == 2 && f.data.size() == 4) v = bits_to_float(load_le(f.data.data(), 4));
    else if (f.number == 5 && f.type == 5) v = bits_to_float(f.value);
    else if (f.number == 5 && f.type == 2 && f.data.size() == 4) v = bits_to_float(load_le(f.data.data(), 4));
  }
  if (f.malformed || dtype != 1) return std::nullopt;
  return v;
}

}  // namespace

EventFileContents read_event_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw DataError(path, -1, "cannot open the event file", "check the path exists and is readable");
  const std::string s((std::istreambuf_iterator<char>(in)), {});
  EventFileContents out;
  std::size_t at = 0;
  while (at < s.size()) {
    const auto offset = static_cast<std::int64_t>(at);
    if (s.size() - at < 12) {
      out.truncated = true;
      break;
    }
    if (mask_crc(crc32c(s.data() + at, 8)) != load_le(s.data() + at + 8, 4)) {
      throw DataError(path, offset, "record length CRC mismatch", kHint);
    }
    const std::uint64_t n = load_le(s.data() + at, 8);
    if (n > s.size() - at - 12 || s.size() - at - 12 - n < 4) {
      out.truncated = true;
      break;
    }
    const std::string_view data(s.data() + at + 12, n);
    if (mask_crc(crc32c(data.data(), data.size())) != load_le(s.data() + at + 12 + n, 4)) {
      throw DataError(path, offset, "record data CRC mismatch", kHint);
    }
    at += 16 + n;

    Fields ev(data);
    double wall = 0;
    std::int64_t step = 0;
    std::string_view summary;
    while (ev.next()) {
      if (ev.number == 1 && ev.type == 1) std::memcpy(&wall, &ev.value, 8);
      else if (ev.number == 2 && ev.type == 0) step = static_cast<std::int64_t>(ev.value);
      else if (ev.number == 3 && ev.type == 2) out.file_version = std::string(ev.data);
      else if (ev.number == 5 && ev.type == 2) summary = ev.data;
    }
    if (ev.malformed) throw DataError(path, offset, "malformed Event record", kHint);
    Fields sum(summary);
    while (sum.next()) {
      if (sum.number != 1 || sum.type != 2) continue;
      Fields val(sum.data);
      ScalarEvent e{.tag = {}, .step = step, .wall_time = wall, .value = 0};
      std::optional<float> v;
      while (val.next()) {
        if (val.number == 1 && val.type == 2) e.tag = std::string(val.data);
        else if (val.number == 2 && val.type == 5) v = bits_to_float(val.value);
        else if (val.number == 8 && val.type == 2) v = tensor_scalar(val.data);
      }
      if (val.malformed) throw DataError(path, offset, "malformed Summary.Value", kHint);
      if (v) {
        e.value = *v;
        out.scalars.push_back(std::move(e));
      }
    }
    if (sum.malformed) throw DataError(path, offset, "malformed Summary", kHint);
  }
  return out;
}

}  // namespace nnfit::profile
