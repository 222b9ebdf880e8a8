// Conv2D over NHWC inputs with an HWIO kernel (Keras's channels_last layout); dilation and
// groups are the conv2d op's own.
#include "nn/layers/conv_window.h"
#include "nnfit/core/error.h"
#include "nnfit/nn/layers.h"

namespace nnfit {

namespace {

ConvWindow window_of(const Conv2DOptions& o) {
  return ConvWindow{o.kernel_size, o.strides, o.dilation_rate, o.padding, o.groups};
}

}  // namespace

Conv2D::Conv2D(std::string name, Conv2DOptions options) : Layer(std::move(name)), options_(std::move(options)) {
  NNFIT_CHECK(options_.filters > 0, InvalidArgument, this->name(), ": filters must be positive");
  NNFIT_CHECK(options_.kernel_size.size() == 2, InvalidArgument, this->name(), ": kernel_size must be two integers");
  window_of(options_).check(this->name());
  check_groups(this->name(), options_.groups, options_.filters, -1);
  check_activation(options_.activation, this->name());
}

void Conv2D::build(const Shape& input_shape, WeightFactory& weights) {
  output_shape(input_shape);
  const std::int64_t kh = options_.kernel_size[0], kw = options_.kernel_size[1];
  const std::int64_t c = input_shape[2] / options_.groups;
  add_kernel_and_bias(weights, Shape{kh, kw, c, options_.filters}, kh * kw * c, kh * kw * options_.filters,
                      options_.kernel_initializer, options_.use_bias, options_.bias_initializer);
  built_ = true;
}

Shape Conv2D::output_shape(const Shape& s) const {
  NNFIT_CHECK(s.rank() == 3, InvalidArgument, name(), ": Conv2D expects (height, width, channels), got ",
              s.to_string(), "; give the input shape with a channel axis, e.g. (28, 28, 1)");
  check_groups(name(), options_.groups, options_.filters, s[2]);
  const auto out = window_of(options_).out(name(), spatial_dims(s));
  return Shape{out[0], out[1], options_.filters};
}

int Conv2D::call(GraphBuilder& b, int x) {
  Graph& g = b.graph();
  int y = g.add("conv2d", {x, b.variable(weights_[0])}, window_of(options_).attrs(), name() + "/conv2d");
  if (options_.use_bias) y = g.add("bias_add", {y, b.variable(weights_[1])}, {}, name() + "/bias_add");
  return emit_activation(g, y, options_.activation, name());
}

}  // namespace nnfit
