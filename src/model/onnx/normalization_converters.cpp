// ONNX forms of Keras's normalizations in inference mode: BatchNormalization with its
// moving statistics (ONNX's BatchNormalization, on the channel axis placed at 1),
// LayerNormalization (ONNX's LayerNormalization over trailing axes, opset 17) and the
// Normalization preprocessing layer ((x - mean) / max(sqrt(variance), 1e-7), Keras's).
#include <algorithm>
#include <cmath>

#include "model/onnx/layer_converters.h"

namespace nnfit::onnx_export {
namespace normalization_family {
namespace {

using V = std::vector<Value>;

std::int64_t positive_axis(std::int64_t axis, int rank) { return axis < 0 ? axis + rank : axis; }

Tensor filled(std::int64_t n, float v) {
  Tensor t = Tensor::uninitialized(Shape{n}, DType::f32);
  std::fill(t.data<float>(), t.data<float>() + n, v);
  return t;
}

// gamma or beta: the layer's own, which it keeps (as the constant 1 or 0) even without
// scale or center, or that constant.
Tensor scale_or(const LayerCall& c, const char* what, std::int64_t n, float constant) {
  const Tensor t = c.weight(what);
  return t.defined() ? t : filled(n, constant);
}

V batch_norm(LayerCall& c) {
  Value x = c.emit.as_float(c.in());
  const std::vector<std::int64_t> axes = c.integers("axis");
  if (axes.size() != 1) c.refuse("a normalization over several axes is not exported");
  const std::int64_t axis = positive_axis(axes[0], x.rank);
  // ONNX normalizes axis 1: the Keras axis as it sits now, or the channels moved there.
  if (axis_in(x.layout, x.rank, axis) != 1) {
    if (axis != x.rank - 1) c.refuse("its axis " + std::to_string(axes[0]) + " is neither the channel axis nor axis 1");
    x = c.emit.to_channels_first(x);
  }
  const Tensor mean = c.require_weight("moving_mean");
  const std::int64_t n = mean.numel();
  const Tensor gamma = scale_or(c, "gamma", n, 1.0f), beta = scale_or(c, "beta", n, 0.0f);
  const std::string y = c.emit.node("BatchNormalization",
                                    {x.name, c.emit.constant(c.hint("gamma"), gamma), c.emit.constant(c.hint("beta"), beta),
                                     c.emit.constant(c.hint("moving_mean"), mean),
                                     c.emit.constant(c.hint("moving_variance"), c.require_weight("moving_variance"))},
                                    {Attribute::of("epsilon", static_cast<float>(c.number("epsilon")))}, c.hint());
  return {LayerCall::out(y, x.rank, x.layout, x.mask_from)};
}

V layer_norm(LayerCall& c) {
  const Value x = c.emit.as_float(c.emit.to_keras(c.in()));
  if (c.config.value("rms_scaling", false)) c.refuse("rms_scaling is not exported");
  std::vector<std::int64_t> axes;
  for (std::int64_t a : c.integers("axis")) axes.push_back(positive_axis(a, x.rank));
  std::sort(axes.begin(), axes.end());
  for (std::size_t i = 0; i < axes.size(); ++i) {
    if (axes[i] != x.rank - static_cast<std::int64_t>(axes.size() - i)) {
      c.refuse("it normalizes over axes that are not the trailing ones, which ONNX's LayerNormalization needs");
    }
  }
  // Scale and bias have the normalized axes' shape (Keras's gamma and beta have it too).
  std::vector<std::int64_t> dims;
  for (std::int64_t a : axes) {
    const std::int64_t d = c.input_shapes[0][static_cast<int>(a) - 1];
    if (d == kUnknownDim) c.refuse("it normalizes over an axis of unknown size");
    dims.push_back(d);
  }
  std::int64_t n = 1;
  for (std::int64_t d : dims) n *= d;
  const Tensor gamma = scale_or(c, "gamma", n, 1.0f), beta = scale_or(c, "beta", n, 0.0f);
  const std::string y = c.emit.node("LayerNormalization",
                                    {x.name, c.emit.constant(c.hint("gamma"), gamma.reshape(Shape(dims))),
                                     c.emit.constant(c.hint("beta"), beta.reshape(Shape(dims)))},
                                    {Attribute::of("axis", axes.front()),
                                     Attribute::of("epsilon", static_cast<float>(c.number("epsilon")))},
                                    c.hint());
  return {LayerCall::out(y, x.rank, Layout::keras, x.mask_from)};
}

V normalization(LayerCall& c) {
  const Value x = c.emit.as_float(c.emit.to_keras(c.in()));
  std::vector<std::int64_t> kept;
  if (!c.config.at("axis").is_null()) {
    for (std::int64_t a : c.integers("axis")) kept.push_back(positive_axis(a, x.rank));
  }
  // mean and variance hold the kept axes' sizes; broadcast them as [1 or size per axis].
  std::vector<std::int64_t> dims;
  for (int a = 1; a < x.rank; ++a) {
    const bool keep = std::find(kept.begin(), kept.end(), a) != kept.end();
    if (keep && c.input_shapes[0][a - 1] == kUnknownDim) c.refuse("it keeps statistics along an axis of unknown size");
    dims.push_back(keep ? c.input_shapes[0][a - 1] : 1);
  }
  const Tensor mean = c.require_weight("mean"), var = c.require_weight("variance");
  Tensor scale = Tensor::uninitialized(var.shape(), DType::f32);
  for (std::int64_t i = 0; i < var.numel(); ++i) scale.data<float>()[i] = std::max(std::sqrt(var.data<float>()[i]), 1e-7f);
  const std::string m = c.emit.constant(c.hint("mean"), mean.reshape(Shape(dims)));
  const std::string s = c.emit.constant(c.hint("std"), scale.reshape(Shape(dims)));
  std::string y;
  if (c.config.value("invert", false)) {
    y = c.emit.node("Add", {c.emit.node("Mul", {x.name, s}, {}, c.hint("scale")), m}, {}, c.hint());
  } else {
    y = c.emit.node("Div", {c.emit.node("Sub", {x.name, m}, {}, c.hint("center")), s}, {}, c.hint());
  }
  return {LayerCall::out(y, x.rank, Layout::keras, x.mask_from)};
}

}  // namespace

std::vector<ConverterEntry> entries() {
  return {
      {"BatchNormalization", batch_norm},
      {"LayerNormalization", layer_norm},
      {"Normalization", normalization},
  };
}

}  // namespace normalization_family

std::vector<ConverterEntry> normalization_converters() { return normalization_family::entries(); }

}  // namespace nnfit::onnx_export
