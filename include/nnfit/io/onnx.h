// ONNX files: the messages of onnx.proto that an exported inference graph needs (ModelProto,
// GraphProto, NodeProto, AttributeProto, TensorProto, ValueInfoProto with its TypeProto and
// TensorShapeProto), as plain structs, and their serialization with ProtoWriter. The
// structs say nothing about where the graph comes from: src/model/onnx/ turns a Keras
// model's layers into them (docs/design/onnx_export.md has both halves).
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace nnfit::io::onnx {

// TensorProto.DataType values.
enum class ElemType : std::int32_t { float32 = 1, uint8 = 2, int8 = 3, int32 = 6, int64 = 7, boolean = 9 };

// One dimension of a value's shape: a size (value >= 0), a named symbol shared by the
// values that have it (param: "batch"), or unknown (neither).
struct Dim {
  std::int64_t value = -1;
  std::string param;
  static Dim known(std::int64_t v) { return {v, ""}; }
  static Dim symbol(std::string p) { return {-1, std::move(p)}; }
};

struct ValueInfo {
  std::string name;
  ElemType type = ElemType::float32;
  std::vector<Dim> shape;
  std::string doc;
};

struct Attribute {
  enum class Kind : std::int32_t { f = 1, i = 2, s = 3, floats = 6, ints = 7, strings = 8 };
  std::string name;
  Kind kind = Kind::i;
  float f = 0;
  std::int64_t i = 0;
  std::string s;
  std::vector<float> floats;
  std::vector<std::int64_t> ints;
  std::vector<std::string> strings;

  static Attribute of(std::string name, std::int64_t v);
  static Attribute of(std::string name, float v);
  static Attribute of(std::string name, std::string v);
  static Attribute of(std::string name, std::vector<std::int64_t> v);
  static Attribute of(std::string name, std::vector<float> v);
  static Attribute of(std::string name, std::vector<std::string> v);
};

struct Node {
  std::string op_type;
  std::string name;
  std::vector<std::string> inputs;   // "" for an optional input left out
  std::vector<std::string> outputs;
  std::vector<Attribute> attributes;
};

// A constant: little-endian bytes of `dims`' elements of `type` (TensorProto.raw_data).
struct Initializer {
  std::string name;
  ElemType type = ElemType::float32;
  std::vector<std::int64_t> dims;
  std::string raw;
};

struct Graph {
  std::string name;
  std::vector<Node> nodes;  // in topological order, as ONNX requires
  std::vector<Initializer> initializers;
  std::vector<ValueInfo> inputs;
  std::vector<ValueInfo> outputs;
  std::string doc;
};

struct ModelFile {
  std::int64_t ir_version = 8;
  std::int64_t opset = 17;  // of the default domain (ai.onnx)
  std::string producer_name;
  std::string producer_version;
  std::string doc;
  std::vector<std::pair<std::string, std::string>> metadata;  // ModelProto.metadata_props
  Graph graph;
};

// The IR version a runtime expects with `opset` (onnx.helper.VERSION_TABLE: 17 and 18
// come with IR 8, 19 and 20 with 9, 21 with 10). throws: InvalidArgument for another opset.
std::int64_t ir_version_for_opset(std::int64_t opset);

// ModelProto's bytes.
std::string serialize(const ModelFile& model);
// Writes serialize(model) to `path` atomically (io/atomic_file.h); returns the bytes written.
// throws: DataError naming `path`.
std::int64_t write_model_file(const std::string& path, const ModelFile& model);

}  // namespace nnfit::io::onnx
