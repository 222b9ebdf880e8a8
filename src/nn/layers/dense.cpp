// Dense: y = activation(x·kernel + bias) on the last axis; kernel is (in, out) as in Keras.
#include "nnfit/core/error.h"
#include "nnfit/nn/layers.h"

namespace nnfit {

Dense::Dense(std::string name, DenseOptions options) : Layer(std::move(name)), options_(std::move(options)) {
  NNFIT_CHECK(options_.units > 0, InvalidArgument, this->name(), ": units must be positive, got ", options_.units);
  check_activation(options_.activation, this->name());
}

void Dense::build(const Shape& input_shape, WeightFactory& weights) {
  NNFIT_CHECK(input_shape.rank() == 1, InvalidArgument, name(), ": Dense expects a flat input (features,), got ",
              input_shape.to_string(), "; add a Flatten layer before it");
  std::int64_t in = input_shape[0];
  add_kernel_and_bias(weights, Shape{in, options_.units}, in, options_.units, options_.kernel_initializer,
                      options_.use_bias, options_.bias_initializer);
  built_ = true;
}

Shape Dense::output_shape(const Shape& input_shape) const {
  NNFIT_CHECK(input_shape.rank() == 1, InvalidArgument, name(), ": Dense expects a flat input (features,), got ",
              input_shape.to_string(), "; add a Flatten layer before it");
  return Shape{options_.units};
}

int Dense::call(GraphBuilder& b, int x) {
  Graph& g = b.graph();
  int y = g.add("matmul", {x, b.variable(weights_[0])}, {}, name() + "/matmul");
  if (options_.use_bias) y = g.add("bias_add", {y, b.variable(weights_[1])}, {}, name() + "/bias_add");
  return emit_activation(g, y, options_.activation, name());
}

}  // namespace nnfit
