// ONNX forms of Keras's merge layers: Add, Subtract, Multiply, Average, Maximum, Minimum
// (broadcasting axes of size 1, as ONNX's element-wise ops do) and Concatenate. Inputs that
// share a layout are merged in it; mixed ones are brought to the Keras layout first.
#include "model/onnx/layer_converters.h"

namespace nnfit::onnx_export {
namespace merge_family {
namespace {

using V = std::vector<Value>;

// The inputs as float32, in one layout: their common one, else the Keras layout.
std::vector<Value> aligned(LayerCall& c) {
  bool same = true;
  for (const Value& v : c.inputs) same = same && v.layout == c.inputs[0].layout && v.rank == c.inputs[0].rank;
  std::vector<Value> out;
  for (const Value& v : c.inputs) out.push_back(c.emit.as_float(same ? v : c.emit.to_keras(v)));
  return out;
}

std::vector<std::string> names(const std::vector<Value>& vs) {
  std::vector<std::string> out;
  for (const Value& v : vs) out.push_back(v.name);
  return out;
}

Value merged(const std::vector<Value>& in, const std::string& name) {
  return LayerCall::out(name, in[0].rank, in[0].layout, in[0].mask_from);
}

V variadic(LayerCall& c, const char* op) {
  const std::vector<Value> in = aligned(c);
  return {merged(in, c.emit.node(op, names(in), {}, c.hint()))};
}

V add(LayerCall& c) { return variadic(c, "Sum"); }
V maximum(LayerCall& c) { return variadic(c, "Max"); }
V minimum(LayerCall& c) { return variadic(c, "Min"); }

V multiply(LayerCall& c) {  // Keras multiplies in order; Mul is binary
  const std::vector<Value> in = aligned(c);
  std::string y = in[0].name;
  for (std::size_t i = 1; i < in.size(); ++i) y = c.emit.node("Mul", {y, in[i].name}, {}, c.hint());
  return {merged(in, y)};
}

V subtract(LayerCall& c) {
  const std::vector<Value> in = aligned(c);
  if (in.size() != 2) c.refuse("Subtract takes exactly two inputs");
  return {merged(in, c.emit.node("Sub", {in[0].name, in[1].name}, {}, c.hint()))};
}

V average(LayerCall& c) {  // the sum divided by the count, as Keras's Average
  const std::vector<Value> in = aligned(c);
  const std::string sum = c.emit.node("Sum", names(in), {}, c.hint("sum"));
  const std::string n = c.emit.constant(c.hint("count"), {}, {static_cast<float>(in.size())});
  return {merged(in, c.emit.node("Div", {sum, n}, {}, c.hint()))};
}

V concatenate(LayerCall& c) {
  const std::vector<Value> in = aligned(c);
  std::int64_t axis = c.integer("axis");
  if (axis < 0) axis += in[0].rank;
  const std::int64_t at = axis_in(in[0].layout, in[0].rank, axis);
  return {merged(in, c.emit.node("Concat", names(in), {Attribute::of("axis", at)}, c.hint()))};
}

}  // namespace

std::vector<ConverterEntry> entries() {
  return {
      {"Add", add},           {"Subtract", subtract}, {"Multiply", multiply},       {"Average", average},
      {"Maximum", maximum},   {"Minimum", minimum},   {"Concatenate", concatenate},
  };
}

}  // namespace merge_family

std::vector<ConverterEntry> merge_converters() { return merge_family::entries(); }

}  // namespace nnfit::onnx_export
