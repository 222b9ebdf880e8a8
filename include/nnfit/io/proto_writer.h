// ProtoWriter: protocol-buffer wire encoding by hand (varints, fixed 32-bit floats and
// length-delimited fields), enough to write messages such as ONNX's ModelProto without
// linking protobuf. A message is built in a ProtoWriter, and an embedded message is
// another writer's bytes added as a length-delimited field. Field numbers come from the
// format's .proto file; the writer only encodes (docs/design/onnx_export.md).
// Thread safety: none; one writer per message being built.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace nnfit::io {

class ProtoWriter {
 public:
  enum WireType : std::uint32_t { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5 };

  // int32, int64, enum and bool fields: a varint of the two's-complement value (ten
  // bytes when negative, as protobuf encodes a negative int64).
  ProtoWriter& varint(std::uint32_t field, std::int64_t value);
  ProtoWriter& float32(std::uint32_t field, float value);
  // string, bytes and embedded-message fields.
  ProtoWriter& bytes(std::uint32_t field, std::string_view value);
  ProtoWriter& message(std::uint32_t field, const ProtoWriter& embedded) { return bytes(field, embedded.data()); }
  // A repeated int64 or float field, one tag per element: proto2's encoding of a repeated
  // scalar not declared [packed = true] (ONNX's dims, ints, floats); nothing when empty.
  ProtoWriter& repeated_varints(std::uint32_t field, const std::vector<std::int64_t>& values);
  ProtoWriter& repeated_floats(std::uint32_t field, const std::vector<float>& values);

  const std::string& data() const { return out_; }

  // The raw encodings, for tests and for writers that build fields themselves.
  static void put_varint(std::string& out, std::uint64_t value);
  static void put_tag(std::string& out, std::uint32_t field, WireType type);

 private:
  std::string out_;
};

}  // namespace nnfit::io
