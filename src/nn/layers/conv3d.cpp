// Conv3D over NDHWC inputs with a DHWIO kernel (Keras's channels_last layout): the conv3d
// op with its strides, padding, dilations and groups, then bias_add and the activation
// (fused by the graph rewrite, as Conv2D's).
#include "nn/layers/conv_window.h"
#include "nnfit/core/error.h"
#include "nnfit/nn/layers.h"

namespace nnfit {

namespace {

ConvWindow window_of(const Conv3DOptions& o) {
  return ConvWindow{o.kernel_size, o.strides, o.dilation_rate, o.padding, o.groups};
}

}  // namespace

Conv3D::Conv3D(std::string name, Conv3DOptions options) : Layer(std::move(name)), options_(std::move(options)) {
  NNFIT_CHECK(options_.filters > 0, InvalidArgument, this->name(), ": filters must be positive");
  NNFIT_CHECK(options_.kernel_size.size() == 3, InvalidArgument, this->name(),
              ": kernel_size must be three integers (depth, height, width), got ", options_.kernel_size.size());
  window_of(options_).check(this->name(), 3);
  check_groups(this->name(), options_.groups, options_.filters, -1);
  check_activation(options_.activation, this->name());
}

// Keras's fans for a (kd, kh, kw, in, out) kernel: the receptive field times in or out.
void Conv3D::build(const Shape& input_shape, WeightFactory& weights) {
  output_shape(input_shape);
  const auto& k = options_.kernel_size;
  const std::int64_t receptive = k[0] * k[1] * k[2];
  const std::int64_t c = input_shape[3] / options_.groups;
  add_kernel_and_bias(weights, Shape{k[0], k[1], k[2], c, options_.filters}, receptive * c,
                      receptive * options_.filters, options_.kernel_initializer, options_.use_bias,
                      options_.bias_initializer);
  built_ = true;
}

Shape Conv3D::output_shape(const Shape& s) const {
  NNFIT_CHECK(s.rank() == 4, InvalidArgument, name(), ": Conv3D expects (depth, height, width, channels), got ",
              s.to_string(), "; give the input shape with a channel axis, e.g. (16, 32, 32, 1)");
  check_groups(name(), options_.groups, options_.filters, s[3]);
  const auto out = window_of(options_).out(name(), spatial_dims(s));
  return Shape{out[0], out[1], out[2], options_.filters};
}

int Conv3D::call(GraphBuilder& b, int x) {
  Graph& g = b.graph();
  int y = g.add("conv3d", {x, b.variable(weights_[0])}, window_of(options_).attrs(), name() + "/conv3d");
  if (options_.use_bias) y = g.add("bias_add", {y, b.variable(weights_[1])}, {}, name() + "/bias_add");
  return emit_activation(g, y, options_.activation, name());
}

}  // namespace nnfit
