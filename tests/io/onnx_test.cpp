// ProtoWriter's wire encoding against protobuf's documented bytes, and ONNX's ModelProto as
// io::onnx::serialize writes it, read back field by field with a small decoder here.
#include <gtest/gtest.h>

#include <filesystem>
#include <unistd.h>
#include <map>
#include <string>
#include <vector>

#include "nnfit/core/error.h"
#include "nnfit/io/onnx.h"
#include "nnfit/io/proto_writer.h"

namespace nnfit::io {
namespace {

// The fields of one message: field number -> the values (varints as numbers, length-
// delimited payloads as bytes), in order.
struct Fields {
  std::multimap<std::uint32_t, std::uint64_t> varints;
  std::multimap<std::uint32_t, std::string> bytes;
  std::multimap<std::uint32_t, std::uint32_t> fixed32;
};

std::uint64_t read_varint(const std::string& s, std::size_t& at) {
  std::uint64_t v = 0;
  for (int shift = 0;; shift += 7) {
    const auto b = static_cast<std::uint8_t>(s.at(at++));
    v |= std::uint64_t{b & 0x7fu} << shift;
    if ((b & 0x80u) == 0) return v;
  }
}

Fields decode(const std::string& s) {
  Fields f;
  std::size_t at = 0;
  while (at < s.size()) {
    const std::uint64_t tag = read_varint(s, at);
    const auto field = static_cast<std::uint32_t>(tag >> 3);
    switch (tag & 7) {
      case 0: f.varints.emplace(field, read_varint(s, at)); break;
      case 2: {
        const std::uint64_t n = read_varint(s, at);
        f.bytes.emplace(field, s.substr(at, n));
        at += n;
        break;
      }
      case 5: {
        std::uint32_t v = 0;
        for (int i = 0; i < 4; ++i) v |= std::uint32_t{static_cast<std::uint8_t>(s.at(at++))} << (8 * i);
        f.fixed32.emplace(field, v);
        break;
      }
      default: ADD_FAILURE() << "unexpected wire type " << (tag & 7); return f;
    }
  }
  return f;
}

std::string one(const Fields& f, std::uint32_t field) {
  EXPECT_EQ(f.bytes.count(field), 1u) << "field " << field;
  return f.bytes.count(field) ? f.bytes.find(field)->second : "";
}

TEST(ProtoWriter, EncodesAsProtobufDocumentsIt) {
  // https://protobuf.dev/programming-guides/encoding/: field 1 = 150 is 08 96 01.
  EXPECT_EQ(ProtoWriter().varint(1, 150).data(), std::string("\x08\x96\x01", 3));
  EXPECT_EQ(ProtoWriter().bytes(2, "testing").data(), std::string("\x12\x07testing", 9));
  EXPECT_EQ(ProtoWriter().float32(5, 1.0f).data(), std::string("\x2d\x00\x00\x80\x3f", 5));
  // A negative int64 is ten bytes of two's complement.
  const std::string neg = ProtoWriter().varint(3, -1).data();
  ASSERT_EQ(neg.size(), 11u);
  EXPECT_EQ(static_cast<std::uint8_t>(neg.back()), 0x01);
  // Repeated scalars one tag each (proto2 without [packed = true]); nothing when empty.
  EXPECT_EQ(ProtoWriter().repeated_varints(1, {1, 300}).data(), std::string("\x08\x01\x08\xac\x02", 5));
  EXPECT_EQ(ProtoWriter().repeated_varints(1, {}).data(), "");
  // An embedded message is a length-delimited field holding its bytes.
  ProtoWriter inner;
  inner.varint(1, 150);
  EXPECT_EQ(ProtoWriter().message(3, inner).data(), std::string("\x1a\x03\x08\x96\x01", 5));
}

onnx::ModelFile relu_model() {
  onnx::ModelFile m;
  m.opset = 17;
  m.ir_version = onnx::ir_version_for_opset(17);
  m.producer_name = "nnfit";
  m.graph.name = "g";
  m.graph.inputs.push_back({"x", onnx::ElemType::float32, {onnx::Dim::symbol("batch"), onnx::Dim::known(3)}, ""});
  m.graph.outputs.push_back({"Identity:0", onnx::ElemType::float32, {onnx::Dim::symbol("batch"), onnx::Dim{}}, ""});
  m.graph.nodes.push_back({"Relu", "r", {"x"}, {"y"}, {onnx::Attribute::of("alpha", 0.5f)}});
  m.graph.nodes.push_back({"Identity", "i", {"y"}, {"Identity:0"}, {}});
  const float w[2] = {1.5f, -2.0f};
  m.graph.initializers.push_back({"w", onnx::ElemType::float32, {2}, std::string(reinterpret_cast<const char*>(w), 8)});
  return m;
}

TEST(Onnx, ModelProtoFieldsAreOnnxProtos) {
  const Fields model = decode(onnx::serialize(relu_model()));
  EXPECT_EQ(model.varints.find(1)->second, 8u);  // ir_version
  EXPECT_EQ(one(model, 2), "nnfit");             // producer_name
  const Fields opset = decode(one(model, 8));    // opset_import
  EXPECT_EQ(one(opset, 1), "");
  EXPECT_EQ(opset.varints.find(2)->second, 17u);
  const Fields graph = decode(one(model, 7));
  EXPECT_EQ(one(graph, 2), "g");
  ASSERT_EQ(graph.bytes.count(1), 2u);  // nodes, in order
  const Fields relu = decode(graph.bytes.find(1)->second);
  EXPECT_EQ(one(relu, 4), "Relu");
  EXPECT_EQ(one(relu, 1), "x");
  EXPECT_EQ(one(relu, 2), "y");
  const Fields alpha = decode(one(relu, 5));
  EXPECT_EQ(one(alpha, 1), "alpha");
  EXPECT_EQ(alpha.varints.find(20)->second, 1u);        // AttributeType FLOAT
  EXPECT_EQ(alpha.fixed32.find(2)->second, 0x3f000000u);  // 0.5f
  const Fields w = decode(one(graph, 5));  // initializer: dims, data_type, name, raw_data
  EXPECT_EQ(w.varints.find(1)->second, 2u);
  EXPECT_EQ(w.varints.find(2)->second, 1u);  // FLOAT
  EXPECT_EQ(one(w, 8), "w");
  EXPECT_EQ(one(w, 9).size(), 8u);
  // input: ValueInfoProto{name, TypeProto{tensor_type{elem_type, shape{dim: param | value}}}}
  const Fields in = decode(one(graph, 11));
  EXPECT_EQ(one(in, 1), "x");
  const Fields tensor = decode(one(decode(one(in, 2)), 1));
  EXPECT_EQ(tensor.varints.find(1)->second, 1u);
  const Fields shape = decode(one(tensor, 2));
  ASSERT_EQ(shape.bytes.count(1), 2u);
  auto dim = shape.bytes.equal_range(1).first;
  EXPECT_EQ(one(decode(dim->second), 2), "batch");
  EXPECT_EQ(decode((++dim)->second).varints.find(1)->second, 3u);
  // The output's unknown dimension is an empty Dimension message.
  const Fields out_shape = decode(one(decode(one(decode(one(decode(one(graph, 12)), 2)), 1)), 2));
  EXPECT_EQ((++out_shape.bytes.equal_range(1).first)->second, "");
}

TEST(Onnx, OpsetsAndIrVersionsAsOnnxPairsThem) {
  EXPECT_EQ(onnx::ir_version_for_opset(18), 8);
  EXPECT_EQ(onnx::ir_version_for_opset(19), 9);
  EXPECT_EQ(onnx::ir_version_for_opset(21), 10);
  EXPECT_THROW(onnx::ir_version_for_opset(16), InvalidArgument);
  EXPECT_THROW(onnx::ir_version_for_opset(22), InvalidArgument);
}

TEST(Onnx, AFileIsWrittenWholeOrNotAtAll) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("nnfit_onnx_io_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string path = (dir / "m.onnx").string();
  const std::int64_t n = onnx::write_model_file(path, relu_model());
  EXPECT_EQ(static_cast<std::int64_t>(fs::file_size(path)), n);
  EXPECT_THROW(onnx::write_model_file((dir / "missing" / "m.onnx").string(), relu_model()), DataError);
  EXPECT_FALSE(fs::exists(dir / "missing"));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace nnfit::io
