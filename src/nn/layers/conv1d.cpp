// Conv1D: the 2-D convolution on (batch, 1, steps, channels) with the (k, C/groups, O)
// kernel viewed as (1, k, C/groups, O). Bias and activation are applied before the reshape
// back, so the fusion rewrite still sees conv2d -> bias_add -> activation. "causal" pads
// dilation_rate * (k - 1) zeros before the sequence and convolves "valid".
#include "nn/layers/conv_window.h"
#include "nnfit/core/error.h"
#include "nnfit/nn/layers.h"

namespace nnfit {

namespace {

bool causal(const Conv1DOptions& o) { return o.padding == "causal"; }

std::int64_t causal_pad(const Conv1DOptions& o) { return causal(o) ? o.dilation_rate * (o.kernel_size - 1) : 0; }

ConvWindow window_of(const Conv1DOptions& o) {
  return ConvWindow{{o.kernel_size}, {o.strides}, {o.dilation_rate}, causal(o) ? "valid" : o.padding, o.groups};
}

}  // namespace

Conv1D::Conv1D(std::string name, Conv1DOptions options) : Layer(std::move(name)), options_(std::move(options)) {
  NNFIT_CHECK(options_.filters > 0, InvalidArgument, this->name(), ": filters must be positive");
  NNFIT_CHECK(options_.padding == "valid" || options_.padding == "same" || options_.padding == "causal",
              InvalidArgument, this->name(), ": padding must be \"valid\", \"same\" or \"causal\", got \"",
              options_.padding, "\"");
  window_of(options_).check(this->name());
  check_groups(this->name(), options_.groups, options_.filters, -1);
  check_activation(options_.activation, this->name());
}

void Conv1D::build(const Shape& input_shape, WeightFactory& weights) {
  output_shape(input_shape);
  const std::int64_t k = options_.kernel_size, c = input_shape[1] / options_.groups;
  add_kernel_and_bias(weights, Shape{k, c, options_.filters}, k * c, k * options_.filters,
                      options_.kernel_initializer, options_.use_bias, options_.bias_initializer);
  built_ = true;
}

Shape Conv1D::output_shape(const Shape& s) const {
  NNFIT_CHECK(s.rank() == 2, InvalidArgument, name(), ": Conv1D expects (steps, channels), got ", s.to_string());
  check_groups(name(), options_.groups, options_.filters, s[1]);
  const auto out = window_of(options_).out(name(), {s[0] < 0 ? kUnknownDim : s[0] + causal_pad(options_)});
  return Shape{out[0], options_.filters};
}

int Conv1D::call(GraphBuilder& b, int x) {
  Graph& g = b.graph();
  const ConvWindow window = window_of(options_);
  if (causal_pad(options_) > 0) {
    Attrs p;
    p.set("before", std::vector<std::int64_t>{0, causal_pad(options_), 0});
    p.set("after", std::vector<std::int64_t>{0, 0, 0});
    x = g.add("pad", {x}, p, name() + "/causal_pad");
  }
  const int x2 = window.to_2d(g, x, name() + "/to_2d");
  const int w2 = window.kernel_to_2d(g, b.variable(weights_[0]), name() + "/kernel_2d");
  int y = g.add("conv2d", {x2, w2}, window.attrs(), name() + "/conv2d");
  if (options_.use_bias) y = g.add("bias_add", {y, b.variable(weights_[1])}, {}, name() + "/bias_add");
  y = emit_activation(g, y, options_.activation, name());
  return window.from_2d(g, y, name() + "/to_1d");
}

}  // namespace nnfit
