// ONNX forms of Keras's core layers: Dense, the activation layers, the layers that pass
// through at inference (Dropout and its kin, the noise layers, the random augmentations),
// Flatten, Reshape, Permute, RepeatVector, Embedding, Rescaling. The formulas are Keras 3's
// (keras/src/layers/...) in inference mode.
#include <cmath>

#include "model/onnx/layer_converters.h"

namespace nnfit::onnx_export {
namespace core_family {
namespace {

using V = std::vector<Value>;

V identity(LayerCall& c) { return {c.in()}; }

V dense(LayerCall& c) {
  if (c.config.contains("lora_rank") && !c.config["lora_rank"].is_null()) c.refuse("LoRA weights are not exported");
  const Value x = c.emit.as_float(c.emit.to_keras(c.in()));
  std::string y = c.emit.node("MatMul", {x.name, c.emit.constant(c.hint("kernel"), c.require_weight("kernel"))}, {},
                              c.hint("matmul"));
  if (c.flag("use_bias")) y = c.emit.node("Add", {y, c.emit.constant(c.hint("bias"), c.require_weight("bias"))}, {}, c.hint("bias_add"));
  return {LayerCall::out(c.activation(y), x.rank)};
}

// An element-wise layer keeps its input's layout.
Value like(const Value& in, const std::string& name) { return LayerCall::out(name, in.rank, in.layout, in.mask_from); }

V activation(LayerCall& c) {
  const Value x = c.emit.as_float(c.in());
  const std::string name = c.text("activation");
  if (name == "softmax" || name == "log_softmax") {  // over the last Keras axis
    const Value k = c.emit.to_keras(x);
    return {like(k, c.activation(k.name))};
  }
  return {like(x, c.activation(x.name))};
}

V relu(LayerCall& c) {  // Keras's ReLU(max_value, negative_slope, threshold)
  const Value x = c.emit.as_float(c.in());
  if (c.number("threshold") != 0.0) c.refuse("a threshold other than 0 is not exported");
  const double slope = c.number("negative_slope");
  std::string y = slope == 0.0 ? c.emit.node("Relu", {x.name}, {}, c.hint("relu"))
                               : c.emit.node("LeakyRelu", {x.name}, {Attribute::of("alpha", static_cast<float>(slope))}, c.hint("relu"));
  if (c.config.contains("max_value") && !c.config["max_value"].is_null()) {
    y = c.emit.node("Min", {y, c.emit.constant(c.hint("max_value"), {}, {static_cast<float>(c.number("max_value"))})}, {},
                    c.hint("max"));
  }
  return {like(x, y)};
}

V leaky_relu(LayerCall& c) {
  const Value x = c.emit.as_float(c.in());
  const float slope = static_cast<float>(c.number("negative_slope"));
  return {like(x, c.emit.node("LeakyRelu", {x.name}, {Attribute::of("alpha", slope)}, c.hint()))};
}

V elu(LayerCall& c) {
  const Value x = c.emit.as_float(c.in());
  return {like(x, c.emit.node("Elu", {x.name}, {Attribute::of("alpha", static_cast<float>(c.number("alpha")))}, c.hint()))};
}

V softmax(LayerCall& c) {
  const Value x = c.emit.to_keras(c.emit.as_float(c.in()));
  const std::vector<std::int64_t> axes = c.integers("axis");
  if (axes.size() != 1) c.refuse("a softmax over several axes is not exported");
  return {like(x, c.emit.node("Softmax", {x.name}, {Attribute::of("axis", axes[0])}, c.hint()))};
}

V prelu(LayerCall& c) {  // alpha has the input's shape without the batch axis (1 on shared axes)
  const Value x = c.emit.as_float(c.emit.to_keras(c.in()));
  return {like(x, c.emit.node("PRelu", {x.name, c.emit.constant(c.hint("alpha"), c.require_weight("alpha"))}, {}, c.hint()))};
}

V flatten(LayerCall& c) {
  const Value x = c.emit.to_keras(c.in());  // Keras flattens in channels-last order
  Value y = LayerCall::out(c.emit.node("Flatten", {x.name}, {Attribute::of("axis", std::int64_t{1})}, c.hint()), 2);
  y.type = x.type;
  return {y};
}

V reshape(LayerCall& c) {
  const Value x = c.emit.to_keras(c.in());
  std::vector<std::int64_t> target{0};  // 0: the batch size, copied from the input
  for (std::int64_t d : c.integers("target_shape")) target.push_back(d);
  const std::string shape = c.emit.constant_i64(c.hint("shape"), {static_cast<std::int64_t>(target.size())}, target);
  Value y = LayerCall::out(c.emit.node("Reshape", {x.name, shape}, {}, c.hint()), static_cast<int>(target.size()));
  y.type = x.type;
  return {y};
}

V permute(LayerCall& c) {
  const Value x = c.emit.to_keras(c.in());
  std::vector<std::int64_t> perm{0};
  for (std::int64_t d : c.integers("dims")) perm.push_back(d);
  Value y = LayerCall::out(c.emit.node("Transpose", {x.name}, {Attribute::of("perm", perm)}, c.hint()), x.rank);
  y.type = x.type;
  return {y};
}

V repeat_vector(LayerCall& c) {  // [B, F] -> [B, n, F]
  const Value x = c.emit.as_float(c.in());
  const std::string one = c.emit.constant_i64(c.hint("axis"), {1}, {1});
  const std::string u = c.emit.node("Unsqueeze", {x.name, one}, {}, c.hint("unsqueeze"));
  const std::string reps = c.emit.constant_i64(c.hint("repeats"), {3}, {1, c.integer("n"), 1});
  return {LayerCall::out(c.emit.node("Tile", {u, reps}, {}, c.hint()), 3)};
}

V embedding(LayerCall& c) {
  Value ids = c.emit.to_keras(c.in());
  // Keras casts the ids to int32 (truncating floats); Gather takes int32 or int64.
  std::string idx = ids.name;
  if (ids.type != ElemType::int32 && ids.type != ElemType::int64) {
    idx = c.emit.node("Cast", {ids.name}, {Attribute::of("to", static_cast<std::int64_t>(ElemType::int64))}, c.hint("ids"));
  }
  const std::string table = c.emit.constant(c.hint("embeddings"), c.require_weight("embeddings"));
  const std::string y = c.emit.node("Gather", {table, idx}, {Attribute::of("axis", std::int64_t{0})}, c.hint());
  return {LayerCall::out(y, ids.rank + 1, Layout::keras, c.flag("mask_zero") ? c.layer.name() : "")};
}

// A config number or list (per channel) as float32 values.
std::vector<float> numbers(const LayerCall& c, const char* key) {
  const ojson& v = c.config.at(key);
  std::vector<float> out;
  if (v.is_number()) return {v.get<float>()};
  if (v.is_array()) {
    for (const ojson& e : v) {
      if (!e.is_number()) c.refuse(std::string("config '") + key + "' is " + v.dump() + ", not numbers");
      out.push_back(e.get<float>());
    }
    return out;
  }
  c.refuse(std::string("config '") + key + "' is " + v.dump() + ", not a number or a list of numbers");
}

V rescaling(LayerCall& c) {  // x * scale + offset, scale and offset numbers or per-channel lists
  const std::vector<float> scale = numbers(c, "scale"), offset = numbers(c, "offset");
  Value x = c.emit.as_float(c.in());
  if (scale.size() > 1 || offset.size() > 1) x = c.emit.to_keras(x);  // lists broadcast over the last axis
  auto dims = [](const std::vector<float>& v) { return v.size() > 1 ? std::vector<std::int64_t>{static_cast<std::int64_t>(v.size())} : std::vector<std::int64_t>{}; };
  std::string y = c.emit.node("Mul", {x.name, c.emit.constant(c.hint("scale"), dims(scale), scale)}, {}, c.hint("scale"));
  y = c.emit.node("Add", {y, c.emit.constant(c.hint("offset"), dims(offset), offset)}, {}, c.hint());
  return {like(x, y)};
}

}  // namespace

std::vector<ConverterEntry> entries() {
  return {
      {"Dense", dense},
      {"Activation", activation},
      {"ReLU", relu},
      {"LeakyReLU", leaky_relu},
      {"ELU", elu},
      {"Softmax", softmax, /*reads_mask=*/true},
      {"PReLU", prelu},
      // At inference these return their inputs (Keras's call with training=False).
      {"Dropout", identity},
      {"SpatialDropout1D", identity},
      {"SpatialDropout2D", identity},
      {"SpatialDropout3D", identity},
      {"GaussianNoise", identity},
      {"GaussianDropout", identity},
      {"AlphaDropout", identity},
      {"ActivityRegularization", identity},
      {"Identity", identity},
      {"RandomFlip", identity},
      {"RandomRotation", identity},
      {"RandomZoom", identity},
      {"RandomTranslation", identity},
      {"RandomContrast", identity},
      {"RandomBrightness", identity},
      {"RandomShear", identity},
      {"RandomGrayscale", identity},
      {"RandomInvert", identity},
      {"Solarization", identity},
      {"RandomPosterization", identity},
      {"RandomErasing", identity},
      {"RandomColorDegeneration", identity},
      {"RandomSharpness", identity},
      {"MaxNumBoundingBoxes", identity},
      {"MixUp", identity},
      {"CutMix", identity},
      {"Equalization", identity},
      {"Flatten", flatten},
      {"Reshape", reshape},
      {"Permute", permute},
      {"RepeatVector", repeat_vector},
      {"Embedding", embedding},
      {"Rescaling", rescaling},
  };
}

}  // namespace core_family

std::vector<ConverterEntry> core_converters() { return core_family::entries(); }

}  // namespace nnfit::onnx_export
