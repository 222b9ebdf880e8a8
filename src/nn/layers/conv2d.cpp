// Conv2D over NHWC inputs with an HWIO kernel (Keras's channels_last layout).
#include "nnfit/core/error.h"
#include "nnfit/graph/op_def.h"
#include "nnfit/nn/layers.h"

namespace nnfit {

Conv2D::Conv2D(std::string name, Conv2DOptions options) : Layer(std::move(name)), options_(std::move(options)) {
  NNFIT_CHECK(options_.filters > 0, InvalidArgument, this->name(), ": filters must be positive");
  NNFIT_CHECK(options_.kernel_size.size() == 2 && options_.kernel_size[0] > 0 && options_.kernel_size[1] > 0,
              InvalidArgument, this->name(), ": kernel_size must be two positive integers");
  NNFIT_CHECK(options_.strides.size() == 2 && options_.strides[0] > 0 && options_.strides[1] > 0,
              InvalidArgument, this->name(), ": strides must be two positive integers");
  NNFIT_CHECK(options_.padding == "valid" || options_.padding == "same", InvalidArgument, this->name(),
              ": padding must be \"valid\" or \"same\", got \"", options_.padding, "\"");
  check_activation(options_.activation, this->name());
}

void Conv2D::build(const Shape& input_shape, WeightFactory& weights) {
  output_shape(input_shape);
  std::int64_t kh = options_.kernel_size[0], kw = options_.kernel_size[1], c = input_shape[2];
  std::int64_t fan_in = kh * kw * c, fan_out = kh * kw * options_.filters;
  add_kernel_and_bias(weights, Shape{kh, kw, c, options_.filters}, fan_in, fan_out, options_.kernel_initializer,
                      options_.use_bias, options_.bias_initializer);
  built_ = true;
}

Shape Conv2D::output_shape(const Shape& s) const {
  NNFIT_CHECK(s.rank() == 3, InvalidArgument, name(), ": Conv2D expects (height, width, channels), got ",
              s.to_string(), "; give the input shape with a channel axis, e.g. (28, 28, 1)");
  Padding1d h = tf_padding(s[0], options_.kernel_size[0], options_.strides[0], options_.padding);
  Padding1d w = tf_padding(s[1], options_.kernel_size[1], options_.strides[1], options_.padding);
  NNFIT_CHECK(h.out > 0 && w.out > 0, InvalidArgument, name(), ": a ", options_.kernel_size[0], "x",
              options_.kernel_size[1], " kernel does not fit input ", s.to_string());
  return Shape{h.out, w.out, options_.filters};
}

int Conv2D::call(GraphBuilder& b, int x) {
  Graph& g = b.graph();
  Attrs a;
  a.set("strides", options_.strides);
  a.set("padding", options_.padding);
  int y = g.add("conv2d", {x, b.variable(weights_[0])}, a, name() + "/conv2d");
  if (options_.use_bias) y = g.add("bias_add", {y, b.variable(weights_[1])}, {}, name() + "/bias_add");
  return emit_activation(g, y, options_.activation, name());
}

}  // namespace nnfit
