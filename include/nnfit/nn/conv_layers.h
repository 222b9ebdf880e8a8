// The convolution layers, with Keras's names, arguments, defaults and weight layouts
// (channels last). The 1-D forms run the 2-D ops on (batch, 1, steps, channels). Included
// by nnfit/nn/layers.h.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "nnfit/nn/layer.h"

namespace nnfit {

// Conv2D over (height, width, channels) with a (kh, kw, channels / groups, filters) kernel;
// output channel j reads only group j / (filters / groups)'s input channels.
struct Conv2DOptions {
  std::int64_t filters = 0;
  std::vector<std::int64_t> kernel_size{3, 3};
  std::vector<std::int64_t> strides{1, 1};
  std::string padding = "valid";
  std::vector<std::int64_t> dilation_rate{1, 1};
  std::int64_t groups = 1;
  std::string activation = "linear";
  bool use_bias = true;
  std::string kernel_initializer = "glorot_uniform";
  std::string bias_initializer = "zeros";
};

class Conv2D final : public Layer {
 public:
  const Conv2DOptions& options() const { return options_; }
  Conv2D(std::string name, Conv2DOptions options);
  std::string class_name() const override { return "Conv2D"; }
  bool supports_unknown_dims() const override { return true; }
  void build(const Shape& input_shape, WeightFactory& weights) override;
  Shape output_shape(const Shape& input_shape) const override;
  int call(GraphBuilder& builder, int x) override;

 private:
  Conv2DOptions options_;
};

// Conv3D over (depth, height, width, channels) with a (kd, kh, kw, channels / groups,
// filters) kernel, Keras's layout; the conv3d op's strides, padding, dilation and groups.
struct Conv3DOptions {
  std::int64_t filters = 0;
  std::vector<std::int64_t> kernel_size{3, 3, 3};
  std::vector<std::int64_t> strides{1, 1, 1};
  std::string padding = "valid";
  std::vector<std::int64_t> dilation_rate{1, 1, 1};
  std::int64_t groups = 1;
  std::string activation = "linear";
  bool use_bias = true;
  std::string kernel_initializer = "glorot_uniform";
  std::string bias_initializer = "zeros";
};

class Conv3D final : public Layer {
 public:
  const Conv3DOptions& options() const { return options_; }
  Conv3D(std::string name, Conv3DOptions options);
  std::string class_name() const override { return "Conv3D"; }
  void build(const Shape& input_shape, WeightFactory& weights) override;
  Shape output_shape(const Shape& input_shape) const override;
  int call(GraphBuilder& builder, int x) override;

 private:
  Conv3DOptions options_;
};

// Conv1D over (steps, channels) with a (kernel_size, channels, filters) kernel, Keras's
// layout; padding "valid", "same" or "causal" (zeros before the sequence only, so output
// t sees inputs up to t; dilation_rate * (kernel_size - 1) of them). Runs the 2-D
// convolution on (1, steps, channels).
struct Conv1DOptions {
  std::int64_t filters = 0;
  std::int64_t kernel_size = 3;
  std::int64_t strides = 1;
  std::string padding = "valid";
  std::int64_t dilation_rate = 1;
  std::int64_t groups = 1;
  std::string activation = "linear";
  bool use_bias = true;
  std::string kernel_initializer = "glorot_uniform";
  std::string bias_initializer = "zeros";
};

class Conv1D final : public Layer {
 public:
  const Conv1DOptions& options() const { return options_; }
  Conv1D(std::string name, Conv1DOptions options);
  std::string class_name() const override { return "Conv1D"; }
  bool supports_unknown_dims() const override { return true; }
  void build(const Shape& input_shape, WeightFactory& weights) override;
  Shape output_shape(const Shape& input_shape) const override;
  int call(GraphBuilder& builder, int x) override;

 private:
  Conv1DOptions options_;
};

// DepthwiseConv1D and DepthwiseConv2D (the rank is kernel_size's length): each input
// channel c convolved by its own depth_multiplier filters, giving output channels
// c * depth_multiplier + m. Kernel "depthwise_kernel" (k..., channels, depth_multiplier).
struct DepthwiseConvOptions {
  std::vector<std::int64_t> kernel_size{3, 3};
  std::vector<std::int64_t> strides{1, 1};
  std::string padding = "valid";
  std::vector<std::int64_t> dilation_rate{1, 1};
  std::int64_t depth_multiplier = 1;
  std::string activation = "linear";
  bool use_bias = true;
  std::string depthwise_initializer = "glorot_uniform";
  std::string bias_initializer = "zeros";
};

class DepthwiseConv final : public Layer {
 public:
  const DepthwiseConvOptions& options() const { return options_; }
  DepthwiseConv(std::string name, DepthwiseConvOptions options);
  std::string class_name() const override;
  void build(const Shape& input_shape, WeightFactory& weights) override;
  Shape output_shape(const Shape& input_shape) const override;
  int call(GraphBuilder& builder, int x) override;

 private:
  DepthwiseConvOptions options_;
};

// SeparableConv1D and SeparableConv2D: a depthwise convolution (strides, padding,
// dilation_rate, depth_multiplier) then a pointwise 1x1 one to `filters`, then bias and
// activation. Weights depthwise_kernel (k..., C, M), pointwise_kernel (1..., C * M,
// filters), bias (filters), in Keras's order.
struct SeparableConvOptions {
  std::int64_t filters = 0;
  std::vector<std::int64_t> kernel_size{3, 3};
  std::vector<std::int64_t> strides{1, 1};
  std::string padding = "valid";
  std::vector<std::int64_t> dilation_rate{1, 1};
  std::int64_t depth_multiplier = 1;
  std::string activation = "linear";
  bool use_bias = true;
  std::string depthwise_initializer = "glorot_uniform";
  std::string pointwise_initializer = "glorot_uniform";
  std::string bias_initializer = "zeros";
};

class SeparableConv final : public Layer {
 public:
  const SeparableConvOptions& options() const { return options_; }
  SeparableConv(std::string name, SeparableConvOptions options);
  std::string class_name() const override;
  void build(const Shape& input_shape, WeightFactory& weights) override;
  Shape output_shape(const Shape& input_shape) const override;
  int call(GraphBuilder& builder, int x) override;

 private:
  SeparableConvOptions options_;
};

// Conv1DTranspose, Conv2DTranspose and Conv3DTranspose: the gradient of a convolution with respect to its
// input, as Keras computes it. Kernel (k..., filters, channels), bias (filters). Each
// output length is Keras's deconv_output_length: without output_padding, in * stride
// ("same") or in * stride + max(k - stride, 0) ("valid"), k counting dilation; with it,
// (in - 1) * stride + k - 2 * (k / 2 if "same") + output_padding.
struct ConvTransposeOptions {
  std::int64_t filters = 0;
  std::vector<std::int64_t> kernel_size{3, 3};
  std::vector<std::int64_t> strides{1, 1};
  std::string padding = "valid";
  std::vector<std::int64_t> output_padding;  // empty: none (Keras's None)
  std::vector<std::int64_t> dilation_rate{1, 1};
  std::string activation = "linear";
  bool use_bias = true;
  std::string kernel_initializer = "glorot_uniform";
  std::string bias_initializer = "zeros";
};

class ConvTranspose final : public Layer {
 public:
  const ConvTransposeOptions& options() const { return options_; }
  ConvTranspose(std::string name, ConvTransposeOptions options);
  std::string class_name() const override;
  void build(const Shape& input_shape, WeightFactory& weights) override;
  Shape output_shape(const Shape& input_shape) const override;
  int call(GraphBuilder& builder, int x) override;

 private:
  ConvTransposeOptions options_;
};

}  // namespace nnfit
