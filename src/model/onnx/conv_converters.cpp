// ONNX forms of Keras's convolutions: Conv1D/2D/3D (groups, dilation, valid, same and
// causal padding), DepthwiseConv1D/2D, SeparableConv1D/2D and Conv1D/2D/3DTranspose. ONNX
// convolves channels-first (Note [Layouts in the exported graph]); kernels are permuted on
// the host from Keras's (k..., in, out) to ONNX's (out, in, k...).
#include <algorithm>

#include "model/onnx/layer_converters.h"

namespace nnfit::onnx_export {
namespace conv_family {
namespace {

using V = std::vector<Value>;

// The input as the convolution reads it: channels-first, from a channels-last layer by the
// layout machinery, or as the Keras tensor itself for data_format="channels_first".
Value conv_input(LayerCall& c) {
  const bool channels_first = c.config.value("data_format", std::string("channels_last")) == "channels_first";
  const Value x = c.emit.as_float(channels_first ? c.emit.to_keras(c.in()) : c.emit.to_channels_first(c.in()));
  return {x.name, x.rank, x.type, channels_first ? Layout::keras : Layout::channels_first, x.mask_from};
}

// kernel_shape, strides, dilations and the padding of a window of `n` spatial axes.
std::vector<Attribute> window(LayerCall& c, std::size_t n, const std::vector<std::int64_t>& kernel) {
  const std::vector<std::int64_t> strides = c.integers("strides");
  const std::vector<std::int64_t> dilations = c.config.contains("dilation_rate") ? c.integers("dilation_rate")
                                                                                 : std::vector<std::int64_t>(n, 1);
  if (strides.size() != n || dilations.size() != n || kernel.size() != n) c.refuse("its window has the wrong rank");
  std::vector<Attribute> a{Attribute::of("kernel_shape", kernel), Attribute::of("strides", strides),
                           Attribute::of("dilations", dilations)};
  const std::string padding = c.text("padding");
  bool unit_strides = true, dilated = false;
  for (std::size_t i = 0; i < n; ++i) {
    unit_strides = unit_strides && strides[i] == 1;
    dilated = dilated || dilations[i] > 1;
  }
  if (padding == "same" && unit_strides) {
    // (k - 1) * dilation zeros in all, the odd one at the end (TF's SAME), written out:
    // onnxruntime refuses SAME_UPPER with dilations.
    std::vector<std::int64_t> pads(2 * n);
    for (std::size_t i = 0; i < n; ++i) {
      const std::int64_t total = (kernel[i] - 1) * dilations[i];
      pads[i] = total / 2;
      pads[n + i] = total - total / 2;
    }
    a.push_back(Attribute::of("pads", pads));
  } else if (padding == "same") {
    if (dilated) c.refuse("same padding with both strides and dilation is not exported");
    a.push_back(Attribute::of("auto_pad", std::string("SAME_UPPER")));  // TF's SAME: the odd pixel at the end
  } else if (padding == "causal") {  // Conv1D: (k - 1) * dilation zeros before the sequence
    a.push_back(Attribute::of("pads", std::vector<std::int64_t>{(kernel[0] - 1) * dilations[0], 0}));
  } else if (padding != "valid") {
    c.refuse("padding '" + padding + "' is not exported");
  }
  return a;
}

Value finish(LayerCall& c, const Value& x, std::string y) {
  return LayerCall::out(c.activation(y), x.rank, x.layout, x.mask_from);
}

// Keras kernel (k1..kn, in, out) -> ONNX (out, in, k1..kn).
Tensor onnx_kernel(const Tensor& keras) {
  const int n = keras.shape().rank() - 2;
  std::vector<std::int64_t> perm{n + 1, n};
  for (int i = 0; i < n; ++i) perm.push_back(i);
  return permute_host(keras, perm);
}

V conv(LayerCall& c) {
  const Value x = conv_input(c);
  const Tensor k = c.require_weight("kernel");
  const std::vector<std::int64_t> ks = c.integers("kernel_size");
  std::vector<Attribute> attrs = window(c, ks.size(), ks);
  attrs.push_back(Attribute::of("group", c.config.contains("groups") ? c.integer("groups") : std::int64_t{1}));
  std::vector<std::string> ins{x.name, c.emit.constant(c.hint("kernel"), onnx_kernel(k))};
  if (c.flag("use_bias")) ins.push_back(c.emit.constant(c.hint("bias"), c.require_weight("bias")));
  return {finish(c, x, c.emit.node("Conv", ins, attrs, c.hint("conv")))};
}

// Keras depthwise kernel (k..., in, multiplier) -> ONNX (in * multiplier, 1, k...): output
// channel c * multiplier + m reads input channel c, as Keras orders them.
Tensor onnx_depthwise_kernel(const Tensor& keras) {
  const Shape& s = keras.shape();
  const int n = s.rank() - 2;
  std::vector<std::int64_t> flat(s.dims().begin(), s.dims().begin() + n);
  flat.push_back(s[n] * s[n + 1]);
  std::vector<std::int64_t> perm{n};
  for (int i = 0; i < n; ++i) perm.push_back(i);
  Tensor t = permute_host(keras.reshape(Shape(flat)), perm);
  std::vector<std::int64_t> dims{flat.back(), 1};
  for (int i = 0; i < n; ++i) dims.push_back(s[i]);
  return t.reshape(Shape(dims));
}

Tensor depthwise_weight(LayerCall& c) {
  Tensor k = c.weight("depthwise_kernel");
  return k.defined() ? k : c.require_weight("kernel");
}

V depthwise(LayerCall& c) {
  const Value x = conv_input(c);
  const Tensor k = depthwise_weight(c);
  const std::vector<std::int64_t> ks = c.integers("kernel_size");
  std::vector<Attribute> attrs = window(c, ks.size(), ks);
  attrs.push_back(Attribute::of("group", k.shape()[k.shape().rank() - 2]));
  std::vector<std::string> ins{x.name, c.emit.constant(c.hint("depthwise_kernel"), onnx_depthwise_kernel(k))};
  if (c.flag("use_bias")) ins.push_back(c.emit.constant(c.hint("bias"), c.require_weight("bias")));
  return {finish(c, x, c.emit.node("Conv", ins, attrs, c.hint("depthwise")))};
}

V separable(LayerCall& c) {  // depthwise, then a 1x1 convolution with the bias
  const Value x = conv_input(c);
  const Tensor k = depthwise_weight(c);
  const std::vector<std::int64_t> ks = c.integers("kernel_size");
  std::vector<Attribute> attrs = window(c, ks.size(), ks);
  attrs.push_back(Attribute::of("group", k.shape()[k.shape().rank() - 2]));
  const std::string d = c.emit.node("Conv", {x.name, c.emit.constant(c.hint("depthwise_kernel"), onnx_depthwise_kernel(k))},
                                    attrs, c.hint("depthwise"));
  std::vector<std::string> ins{d, c.emit.constant(c.hint("pointwise_kernel"), onnx_kernel(c.require_weight("pointwise_kernel")))};
  if (c.flag("use_bias")) ins.push_back(c.emit.constant(c.hint("bias"), c.require_weight("bias")));
  return {finish(c, x, c.emit.node("Conv", ins, {}, c.hint("pointwise")))};
}

// Note [Transposed convolution padding]
// Keras's output length L (compute_conv_transpose_output_length) and TensorFlow's placement
// (the gradient of a convolution with that padding: SAME puts floor(total/2) before) are
// said to ONNX as explicit begin pads, end pads and output_padding: begin = TF's pad
// before; then the end is cropped (pads) or extended (output_padding) until the length is
// L. Every term is independent of the input length, so None lengths export too.
V conv_transpose(LayerCall& c) {
  const Value x = conv_input(c);
  const Tensor k = c.require_weight("kernel");  // (k..., out, in)
  const std::vector<std::int64_t> ks = c.integers("kernel_size"), strides = c.integers("strides");
  const std::vector<std::int64_t> dil = c.integers("dilation_rate");
  const std::size_t n = ks.size();
  std::vector<std::int64_t> out_pad;
  if (c.config.contains("output_padding") && !c.config["output_padding"].is_null()) out_pad = c.integers("output_padding");
  if (out_pad.size() == 1 && n > 1) out_pad.resize(n, out_pad[0]);
  const std::string padding = c.text("padding");
  if (padding != "same" && padding != "valid") c.refuse("padding '" + padding + "' is not exported");
  std::vector<std::int64_t> begin(n), end(n), extend(n);
  const std::int64_t in = 1000;  // any length: the pads do not depend on it
  for (std::size_t i = 0; i < n; ++i) {
    const std::int64_t s = strides[i], ke = ks[i] + (ks[i] - 1) * (dil[i] - 1);
    std::int64_t L;
    if (out_pad.empty()) {
      L = padding == "valid" ? in * s + std::max<std::int64_t>(ke - s, 0) : in * s;
    } else {
      L = (in - 1) * s + ke - 2 * (padding == "same" ? ke / 2 : 0) + out_pad[i];
    }
    begin[i] = padding == "same" ? std::max<std::int64_t>((in - 1) * s + ke - L, 0) / 2 : 0;
    const std::int64_t base = (in - 1) * s + ke - begin[i];
    end[i] = std::max<std::int64_t>(base - L, 0);
    extend[i] = std::max<std::int64_t>(L - base, 0);
    if (extend[i] >= std::max(s, dil[i])) c.refuse("its output_padding is not expressible in ONNX (it must stay below the stride)");
  }
  std::vector<std::int64_t> pads = begin;
  pads.insert(pads.end(), end.begin(), end.end());
  // Keras (k..., out, in) -> ONNX ConvTranspose (in, out, k...).
  std::vector<std::int64_t> perm{static_cast<std::int64_t>(n) + 1, static_cast<std::int64_t>(n)};
  for (std::size_t i = 0; i < n; ++i) perm.push_back(static_cast<std::int64_t>(i));
  std::vector<std::string> ins{x.name, c.emit.constant(c.hint("kernel"), permute_host(k, perm))};
  if (c.flag("use_bias")) ins.push_back(c.emit.constant(c.hint("bias"), c.require_weight("bias")));
  std::vector<Attribute> attrs{Attribute::of("kernel_shape", ks), Attribute::of("strides", strides),
                               Attribute::of("dilations", dil), Attribute::of("pads", pads),
                               Attribute::of("output_padding", extend)};
  return {finish(c, x, c.emit.node("ConvTranspose", ins, attrs, c.hint("conv_transpose")))};
}

}  // namespace

std::vector<ConverterEntry> entries() {
  return {
      {"Conv1D", conv},
      {"Conv2D", conv},
      {"Conv3D", conv},
      {"DepthwiseConv1D", depthwise},
      {"DepthwiseConv2D", depthwise},
      {"SeparableConv1D", separable},
      {"SeparableConv2D", separable},
      {"Conv1DTranspose", conv_transpose},
      {"Conv2DTranspose", conv_transpose},
      {"Conv3DTranspose", conv_transpose},
  };
}

}  // namespace conv_family

std::vector<ConverterEntry> conv_converters() { return conv_family::entries(); }

}  // namespace nnfit::onnx_export
