// SeparableConv1D/2D: the depthwise convolution (conv2d with groups = channels, its (k...,
// C, M) kernel viewed as (k..., 1, C * M)) then a 1x1 conv2d by the (1..., C * M, filters)
// pointwise kernel, then bias and activation, as Keras computes it.
#include "nn/layers/conv_window.h"
#include "nnfit/core/error.h"
#include "nnfit/nn/layers.h"

namespace nnfit {

namespace {

ConvWindow window_of(const SeparableConvOptions& o, std::int64_t channels) {
  return ConvWindow{o.kernel_size, o.strides, o.dilation_rate, o.padding, channels};
}

}  // namespace

SeparableConv::SeparableConv(std::string name, SeparableConvOptions options)
    : Layer(std::move(name)), options_(std::move(options)) {
  NNFIT_CHECK(options_.filters > 0, InvalidArgument, this->name(), ": filters must be positive");
  NNFIT_CHECK(options_.depth_multiplier > 0, InvalidArgument, this->name(), ": depth_multiplier must be positive, got ",
              options_.depth_multiplier);
  window_of(options_, 1).check(this->name());
  check_activation(options_.activation, this->name());
}

std::string SeparableConv::class_name() const {
  return options_.kernel_size.size() == 1 ? "SeparableConv1D" : "SeparableConv2D";
}

void SeparableConv::build(const Shape& input_shape, WeightFactory& weights) {
  output_shape(input_shape);
  const std::int64_t cm = input_shape.dim(-1) * options_.depth_multiplier;
  std::vector<std::int64_t> depthwise = options_.kernel_size;
  depthwise.push_back(input_shape.dim(-1));
  depthwise.push_back(options_.depth_multiplier);
  std::vector<std::int64_t> pointwise(options_.kernel_size.size(), 1);
  pointwise.push_back(cm);
  pointwise.push_back(options_.filters);
  add_weight(weights, "depthwise_kernel", Shape(depthwise), options_.depthwise_initializer);
  add_weight(weights, "pointwise_kernel", Shape(pointwise), options_.pointwise_initializer);
  if (options_.use_bias) add_weight(weights, "bias", Shape{options_.filters}, options_.bias_initializer);
  built_ = true;
}

Shape SeparableConv::output_shape(const Shape& s) const {
  const int rank = static_cast<int>(options_.kernel_size.size());
  NNFIT_CHECK(s.rank() == rank + 1, InvalidArgument, name(), ": ", class_name(), " expects ", rank,
              " spatial axes and a channel axis, got ", s.to_string());
  std::vector<std::int64_t> out = window_of(options_, 1).out(name(), spatial_dims(s));
  out.push_back(options_.filters);
  return Shape(out);
}

int SeparableConv::call(GraphBuilder& b, int x) {
  Graph& g = b.graph();
  const std::int64_t c = g.desc(x).shape.dim(-1), cm = c * options_.depth_multiplier;
  const ConvWindow window = window_of(options_, c);
  std::vector<std::int64_t> grouped = options_.kernel_size;
  if (grouped.size() == 1) grouped.insert(grouped.begin(), 1);
  grouped.push_back(1);
  grouped.push_back(cm);
  const int dw = emit_reshape(g, b.variable(weights_[0]), grouped, name() + "/grouped_kernel");
  const int pw = emit_reshape(g, b.variable(weights_[1]), {1, 1, cm, options_.filters}, name() + "/pointwise_2d");
  int y = g.add("conv2d", {window.to_2d(g, x, name() + "/to_2d"), dw}, window.attrs(), name() + "/depthwise");
  Attrs pointwise;
  pointwise.set("strides", std::vector<std::int64_t>{1, 1});
  pointwise.set("padding", std::string("valid"));
  y = g.add("conv2d", {y, pw}, pointwise, name() + "/pointwise");
  if (options_.use_bias) y = g.add("bias_add", {y, b.variable(weights_[2])}, {}, name() + "/bias_add");
  y = emit_activation(g, y, options_.activation, name());
  return window.from_2d(g, y, name() + "/to_1d");
}

}  // namespace nnfit
