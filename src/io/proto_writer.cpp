// ProtoWriter: protocol-buffer wire encoding (include/nnfit/io/proto_writer.h). Little-endian
// fixed-width values and base-128 varints, as https://protobuf.dev/programming-guides/encoding/
// specifies them.
#include "nnfit/io/proto_writer.h"

#include <cstring>

namespace nnfit::io {

void ProtoWriter::put_varint(std::string& out, std::uint64_t value) {
  while (value >= 0x80) {
    out.push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
}

void ProtoWriter::put_tag(std::string& out, std::uint32_t field, WireType type) {
  put_varint(out, (std::uint64_t{field} << 3) | type);
}

ProtoWriter& ProtoWriter::varint(std::uint32_t field, std::int64_t value) {
  put_tag(out_, field, kVarint);
  put_varint(out_, static_cast<std::uint64_t>(value));
  return *this;
}

ProtoWriter& ProtoWriter::float32(std::uint32_t field, float value) {
  std::uint32_t bits;
  std::memcpy(&bits, &value, 4);
  put_tag(out_, field, kFixed32);
  for (int i = 0; i < 4; ++i) out_.push_back(static_cast<char>(bits >> (8 * i)));
  return *this;
}

ProtoWriter& ProtoWriter::bytes(std::uint32_t field, std::string_view value) {
  put_tag(out_, field, kLengthDelimited);
  put_varint(out_, value.size());
  out_.append(value);
  return *this;
}

ProtoWriter& ProtoWriter::repeated_varints(std::uint32_t field, const std::vector<std::int64_t>& values) {
  for (std::int64_t v : values) varint(field, v);
  return *this;
}

ProtoWriter& ProtoWriter::repeated_floats(std::uint32_t field, const std::vector<float>& values) {
  for (float v : values) float32(field, v);
  return *this;
}

}  // namespace nnfit::io
