// DepthwiseConv1D/2D: the conv2d op with groups = channels. Keras's depthwise kernel
// (k..., C, M) is, element for element, the grouped filter (k..., 1, C * M): output
// channel c * M + m is group c's m-th, so the reshape between them is free.
#include "nn/layers/conv_window.h"
#include "nnfit/core/error.h"
#include "nnfit/nn/layers.h"

namespace nnfit {

namespace {

ConvWindow window_of(const DepthwiseConvOptions& o, std::int64_t channels) {
  return ConvWindow{o.kernel_size, o.strides, o.dilation_rate, o.padding, channels};
}

}  // namespace

DepthwiseConv::DepthwiseConv(std::string name, DepthwiseConvOptions options)
    : Layer(std::move(name)), options_(std::move(options)) {
  NNFIT_CHECK(options_.depth_multiplier > 0, InvalidArgument, this->name(), ": depth_multiplier must be positive, got ",
              options_.depth_multiplier);
  window_of(options_, 1).check(this->name());
  check_activation(options_.activation, this->name());
}

std::string DepthwiseConv::class_name() const {
  return options_.kernel_size.size() == 1 ? "DepthwiseConv1D" : "DepthwiseConv2D";
}

void DepthwiseConv::build(const Shape& input_shape, WeightFactory& weights) {
  output_shape(input_shape);
  std::vector<std::int64_t> dims = options_.kernel_size;
  dims.push_back(input_shape.dim(-1));
  dims.push_back(options_.depth_multiplier);
  add_weight(weights, "depthwise_kernel", Shape(dims), options_.depthwise_initializer);
  if (options_.use_bias) {
    add_weight(weights, "bias", Shape{input_shape.dim(-1) * options_.depth_multiplier}, options_.bias_initializer);
  }
  built_ = true;
}

Shape DepthwiseConv::output_shape(const Shape& s) const {
  const int rank = static_cast<int>(options_.kernel_size.size());
  NNFIT_CHECK(s.rank() == rank + 1, InvalidArgument, name(), ": ", class_name(), " expects ", rank,
              " spatial axes and a channel axis, got ", s.to_string());
  std::vector<std::int64_t> out = window_of(options_, 1).out(name(), spatial_dims(s));
  out.push_back(s.dim(-1) * options_.depth_multiplier);
  return Shape(out);
}

int DepthwiseConv::call(GraphBuilder& b, int x) {
  Graph& g = b.graph();
  const Shape s = g.desc(x).shape;
  const std::int64_t c = s.dim(-1), m = options_.depth_multiplier;
  const ConvWindow window = window_of(options_, c);
  // (k..., C, M) -> (kh, kw, 1, C * M)
  std::vector<std::int64_t> filter = options_.kernel_size;
  if (filter.size() == 1) filter.insert(filter.begin(), 1);
  filter.push_back(1);
  filter.push_back(c * m);
  Attrs r;
  r.set("shape", filter);
  const int w = g.add("reshape", {b.variable(weights_[0])}, r, name() + "/grouped_kernel");
  int y = g.add("conv2d", {window.to_2d(g, x, name() + "/to_2d"), w}, window.attrs(), name() + "/depthwise");
  if (options_.use_bias) y = g.add("bias_add", {y, b.variable(weights_[1])}, {}, name() + "/bias_add");
  y = emit_activation(g, y, options_.activation, name());
  return window.from_2d(g, y, name() + "/to_1d");
}

}  // namespace nnfit
