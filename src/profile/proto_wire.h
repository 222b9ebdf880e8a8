// Protocol-buffer wire encoding by hand, for the few messages profile writes (Event,
// Summary). Fields are appended in field-number order, as protobuf serializers emit them.
#pragma once
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace nnfit::profile::wire {

enum WireType : std::uint32_t { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5 };

inline void put_varint(std::string& out, std::uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}
inline void put_tag(std::string& out, std::uint32_t field, WireType type) { put_varint(out, (std::uint64_t{field} << 3) | type); }
inline void put_le(std::string& out, std::uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
}
// int64 fields are varints of the two's-complement value (10 bytes when negative).
inline void put_int64(std::string& out, std::uint32_t field, std::int64_t v) {
  put_tag(out, field, kVarint);
  put_varint(out, static_cast<std::uint64_t>(v));
}
inline void put_double(std::string& out, std::uint32_t field, double v) {
  std::uint64_t bits;
  std::memcpy(&bits, &v, 8);
  put_tag(out, field, kFixed64);
  put_le(out, bits, 8);
}
inline void put_float(std::string& out, std::uint32_t field, float v) {
  std::uint32_t bits;
  std::memcpy(&bits, &v, 4);
  put_tag(out, field, kFixed32);
  put_le(out, bits, 4);
}
// strings, bytes and embedded messages
inline void put_bytes(std::string& out, std::uint32_t field, std::string_view bytes) {
  put_tag(out, field, kLengthDelimited);
  put_varint(out, bytes.size());
  out.append(bytes);
}

}  // namespace nnfit::profile::wire
