// Conv1D: the 2-D convolution on (batch, 1, steps, channels) with the (k, C, O) kernel
// viewed as (1, k, C, O) (free reshapes, aliased by the planner). Bias and activation are
// applied before the reshape back, so the fusion rewrite still sees conv2d -> bias_add ->
// activation. "causal" pads k - 1 zeros before the sequence and convolves "valid".
#include "nnfit/core/error.h"
#include "nnfit/graph/op_def.h"
#include "nnfit/nn/layers.h"

namespace nnfit {

namespace {

int reshaped(Graph& g, int x, std::vector<std::int64_t> dims, const std::string& name) {
  Attrs a;
  a.set("shape", std::move(dims));
  return g.add("reshape", {x}, a, name);
}

}  // namespace

Conv1D::Conv1D(std::string name, Conv1DOptions options) : Layer(std::move(name)), options_(std::move(options)) {
  NNFIT_CHECK(options_.filters > 0, InvalidArgument, this->name(), ": filters must be positive");
  NNFIT_CHECK(options_.kernel_size > 0 && options_.strides > 0, InvalidArgument, this->name(),
              ": kernel_size and strides must be positive");
  NNFIT_CHECK(options_.padding == "valid" || options_.padding == "same" || options_.padding == "causal",
              InvalidArgument, this->name(), ": padding must be \"valid\", \"same\" or \"causal\", got \"",
              options_.padding, "\"");
  check_activation(options_.activation, this->name());
}

void Conv1D::build(const Shape& input_shape, WeightFactory& weights) {
  output_shape(input_shape);
  const std::int64_t k = options_.kernel_size, c = input_shape[1];
  const std::int64_t fan_in = k * c, fan_out = k * options_.filters;
  add_kernel_and_bias(weights, Shape{k, c, options_.filters}, fan_in, fan_out, options_.kernel_initializer,
                      options_.use_bias, options_.bias_initializer);
  built_ = true;
}

Shape Conv1D::output_shape(const Shape& s) const {
  NNFIT_CHECK(s.rank() == 2, InvalidArgument, name(), ": Conv1D expects (steps, channels), got ", s.to_string());
  const bool causal = options_.padding == "causal";
  const std::int64_t steps = s[0] + (causal ? options_.kernel_size - 1 : 0);
  const Padding1d p = tf_padding(steps, options_.kernel_size, options_.strides, causal ? "valid" : options_.padding);
  NNFIT_CHECK(p.out > 0, InvalidArgument, name(), ": a kernel of ", options_.kernel_size, " does not fit input ",
              s.to_string());
  return Shape{p.out, options_.filters};
}

int Conv1D::call(GraphBuilder& b, int x) {
  Graph& g = b.graph();
  const Shape s = g.desc(x).shape;  // (batch, steps, channels)
  const Shape out = output_shape(Shape{s[1], s[2]});
  std::int64_t steps = s[1];
  if (options_.padding == "causal" && options_.kernel_size > 1) {
    Attrs p;
    p.set("before", std::vector<std::int64_t>{0, options_.kernel_size - 1, 0});
    p.set("after", std::vector<std::int64_t>{0, 0, 0});
    x = g.add("pad", {x}, p, name() + "/causal_pad");
    steps += options_.kernel_size - 1;
  }
  const int x4 = reshaped(g, x, {s[0], 1, steps, s[2]}, name() + "/to_2d");
  const int w4 = reshaped(g, b.variable(weights_[0]), {1, options_.kernel_size, s[2], options_.filters},
                          name() + "/kernel_2d");
  Attrs a;
  a.set("strides", std::vector<std::int64_t>{1, options_.strides});
  a.set("padding", options_.padding == "same" ? std::string("same") : std::string("valid"));
  int y = g.add("conv2d", {x4, w4}, a, name() + "/conv2d");
  if (options_.use_bias) y = g.add("bias_add", {y, b.variable(weights_[1])}, {}, name() + "/bias_add");
  y = emit_activation(g, y, options_.activation, name());
  return reshaped(g, y, {s[0], out[0], out[1]}, name() + "/to_1d");
}

}  // namespace nnfit
