// Dense: y = activation(x·kernel + bias) on the last axis (any leading axes, as Keras's);
// kernel is (in, out) as in Keras.
#include "nnfit/core/error.h"
#include "nnfit/nn/layers.h"

namespace nnfit {

Dense::Dense(std::string name, DenseOptions options) : Layer(std::move(name)), options_(std::move(options)) {
  NNFIT_CHECK(options_.units > 0, InvalidArgument, this->name(), ": units must be positive, got ", options_.units);
  check_activation(options_.activation, this->name());
}

void Dense::build(const Shape& input_shape, WeightFactory& weights) {
  output_shape(input_shape);
  std::int64_t in = input_shape.dim(-1);
  add_kernel_and_bias(weights, Shape{in, options_.units}, in, options_.units, options_.kernel_initializer,
                      options_.use_bias, options_.bias_initializer);
  built_ = true;
}

Shape Dense::output_shape(const Shape& input_shape) const {
  NNFIT_CHECK(input_shape.rank() >= 1, InvalidArgument, name(), ": Dense needs an input with a feature axis, got ",
              input_shape.to_string());
  std::vector<std::int64_t> dims = input_shape.dims();
  dims.back() = options_.units;
  return Shape(dims);
}

int Dense::call(GraphBuilder& b, int x) {
  Graph& g = b.graph();
  const Shape s = g.desc(x).shape;  // [N, ..., F]
  // Keras's Dense acts on the last axis: the leading axes are rows of one matmul.
  const bool flat = s.rank() == 2;
  if (!flat) x = emit_reshape(g, x, {s.numel() / s.dim(-1), s.dim(-1)}, name() + "/rows");
  int y = g.add("matmul", {x, b.variable(weights_[0])}, {}, name() + "/matmul");
  if (options_.use_bias) y = g.add("bias_add", {y, b.variable(weights_[1])}, {}, name() + "/bias_add");
  y = emit_activation(g, y, options_.activation, name());
  if (!flat) {
    std::vector<std::int64_t> dims = s.dims();
    dims.back() = options_.units;
    y = emit_reshape(g, y, std::move(dims), name() + "/unrows");
  }
  return y;
}

}  // namespace nnfit
