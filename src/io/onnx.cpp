// ONNX's ModelProto and the messages inside it, serialized field by field with the field
// numbers of onnx.proto (onnx 1.23; the numbers have not changed since IR version 3).
// Repeated scalars not declared packed (dims, ints, floats) are written one tag per
// element, as proto2 does; tensors carry raw_data. Fields are written in field-number
// order except where onnx.proto's own order differs, which parsers accept either way.
#include "nnfit/io/onnx.h"

#include "nnfit/core/error.h"
#include "nnfit/io/atomic_file.h"
#include "nnfit/io/proto_writer.h"

namespace nnfit::io::onnx {
namespace {

// Field numbers (onnx.proto).
namespace model_f { enum : std::uint32_t { ir_version = 1, producer_name = 2, producer_version = 3, doc = 6, graph = 7, opset_import = 8, metadata_props = 14 }; }
namespace opset_f { enum : std::uint32_t { domain = 1, version = 2 }; }
namespace entry_f { enum : std::uint32_t { key = 1, value = 2 }; }
namespace graph_f { enum : std::uint32_t { node = 1, name = 2, initializer = 5, doc = 10, input = 11, output = 12 }; }
namespace node_f { enum : std::uint32_t { input = 1, output = 2, name = 3, op_type = 4, attribute = 5 }; }
namespace attr_f { enum : std::uint32_t { name = 1, f = 2, i = 3, s = 4, floats = 7, ints = 8, strings = 9, type = 20 }; }
namespace tensor_f { enum : std::uint32_t { dims = 1, data_type = 2, name = 8, raw_data = 9 }; }
namespace value_f { enum : std::uint32_t { name = 1, type = 2, doc = 3 }; }
namespace type_f { enum : std::uint32_t { tensor_type = 1 }; }
namespace tensor_type_f { enum : std::uint32_t { elem_type = 1, shape = 2 }; }
namespace shape_f { enum : std::uint32_t { dim = 1 }; }
namespace dim_f { enum : std::uint32_t { dim_value = 1, dim_param = 2 }; }

ProtoWriter attribute(const Attribute& a) {
  ProtoWriter w;
  w.bytes(attr_f::name, a.name);
  switch (a.kind) {
    case Attribute::Kind::f: w.float32(attr_f::f, a.f); break;
    case Attribute::Kind::i: w.varint(attr_f::i, a.i); break;
    case Attribute::Kind::s: w.bytes(attr_f::s, a.s); break;
    case Attribute::Kind::floats: w.repeated_floats(attr_f::floats, a.floats); break;
    case Attribute::Kind::ints: w.repeated_varints(attr_f::ints, a.ints); break;
    case Attribute::Kind::strings:
      for (const std::string& s : a.strings) w.bytes(attr_f::strings, s);
      break;
  }
  w.varint(attr_f::type, static_cast<std::int64_t>(a.kind));
  return w;
}

ProtoWriter node(const Node& n) {
  ProtoWriter w;
  for (const std::string& in : n.inputs) w.bytes(node_f::input, in);
  for (const std::string& out : n.outputs) w.bytes(node_f::output, out);
  if (!n.name.empty()) w.bytes(node_f::name, n.name);
  w.bytes(node_f::op_type, n.op_type);
  for (const Attribute& a : n.attributes) w.message(node_f::attribute, attribute(a));
  return w;
}

ProtoWriter tensor(const Initializer& t) {
  ProtoWriter w;
  w.repeated_varints(tensor_f::dims, t.dims);
  w.varint(tensor_f::data_type, static_cast<std::int64_t>(t.type));
  w.bytes(tensor_f::name, t.name);
  w.bytes(tensor_f::raw_data, t.raw);
  return w;
}

ProtoWriter value_info(const ValueInfo& v) {
  ProtoWriter shape;
  for (const Dim& d : v.shape) {
    ProtoWriter dim;
    if (d.value >= 0) dim.varint(dim_f::dim_value, d.value);
    else if (!d.param.empty()) dim.bytes(dim_f::dim_param, d.param);
    shape.message(shape_f::dim, dim);
  }
  ProtoWriter tensor_type;
  tensor_type.varint(tensor_type_f::elem_type, static_cast<std::int64_t>(v.type));
  tensor_type.message(tensor_type_f::shape, shape);
  ProtoWriter type;
  type.message(type_f::tensor_type, tensor_type);
  ProtoWriter w;
  w.bytes(value_f::name, v.name);
  w.message(value_f::type, type);
  if (!v.doc.empty()) w.bytes(value_f::doc, v.doc);
  return w;
}

ProtoWriter graph(const Graph& g) {
  ProtoWriter w;
  for (const Node& n : g.nodes) w.message(graph_f::node, node(n));
  w.bytes(graph_f::name, g.name);
  for (const Initializer& t : g.initializers) w.message(graph_f::initializer, tensor(t));
  if (!g.doc.empty()) w.bytes(graph_f::doc, g.doc);
  for (const ValueInfo& v : g.inputs) w.message(graph_f::input, value_info(v));
  for (const ValueInfo& v : g.outputs) w.message(graph_f::output, value_info(v));
  return w;
}

}  // namespace

Attribute Attribute::of(std::string name, std::int64_t v) {
  Attribute a;
  a.name = std::move(name);
  a.kind = Kind::i;
  a.i = v;
  return a;
}
Attribute Attribute::of(std::string name, float v) {
  Attribute a;
  a.name = std::move(name);
  a.kind = Kind::f;
  a.f = v;
  return a;
}
Attribute Attribute::of(std::string name, std::string v) {
  Attribute a;
  a.name = std::move(name);
  a.kind = Kind::s;
  a.s = std::move(v);
  return a;
}
Attribute Attribute::of(std::string name, std::vector<std::int64_t> v) {
  Attribute a;
  a.name = std::move(name);
  a.kind = Kind::ints;
  a.ints = std::move(v);
  return a;
}
Attribute Attribute::of(std::string name, std::vector<float> v) {
  Attribute a;
  a.name = std::move(name);
  a.kind = Kind::floats;
  a.floats = std::move(v);
  return a;
}
Attribute Attribute::of(std::string name, std::vector<std::string> v) {
  Attribute a;
  a.name = std::move(name);
  a.kind = Kind::strings;
  a.strings = std::move(v);
  return a;
}

std::int64_t ir_version_for_opset(std::int64_t opset) {
  if (opset == 17 || opset == 18) return 8;
  if (opset == 19 || opset == 20) return 9;
  if (opset == 21) return 10;
  throw InvalidArgument("ONNX opset " + std::to_string(opset) + " is not one nnfit writes",
                        "use an opset from 17 to 21 (17 is the default)");
}

std::string serialize(const ModelFile& m) {
  ProtoWriter w;
  w.varint(model_f::ir_version, m.ir_version);
  w.bytes(model_f::producer_name, m.producer_name);
  w.bytes(model_f::producer_version, m.producer_version);
  if (!m.doc.empty()) w.bytes(model_f::doc, m.doc);
  w.message(model_f::graph, graph(m.graph));
  ProtoWriter opset;
  opset.bytes(opset_f::domain, "");
  opset.varint(opset_f::version, m.opset);
  w.message(model_f::opset_import, opset);
  for (const auto& [k, v] : m.metadata) {
    ProtoWriter e;
    e.bytes(entry_f::key, k);
    e.bytes(entry_f::value, v);
    w.message(model_f::metadata_props, e);
  }
  return w.data();
}

std::int64_t write_model_file(const std::string& path, const ModelFile& model) {
  const std::string bytes = serialize(model);
  write_bytes_atomically(path, bytes);
  return static_cast<std::int64_t>(bytes.size());
}

}  // namespace nnfit::io::onnx
