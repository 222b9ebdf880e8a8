// Embedding: the gather op on the (input_dim, output_dim) table; its gradient adds each
// output row's gradient into its id's row (a dense table gradient, as Keras 3 applies it).
// With mask_zero its output carries the mask ids != 0. Masking: the mask from features.
#include "nnfit/core/error.h"
#include "nnfit/nn/layers.h"

namespace nnfit {

Embedding::Embedding(std::string name, EmbeddingOptions options) : Layer(std::move(name)), options_(std::move(options)) {
  NNFIT_CHECK(options_.input_dim > 0, InvalidArgument, this->name(), ": input_dim must be positive, got ",
              options_.input_dim);
  NNFIT_CHECK(options_.output_dim > 0, InvalidArgument, this->name(), ": output_dim must be positive, got ",
              options_.output_dim);
}

void Embedding::build(const Shape& input_shape, WeightFactory& weights) {
  output_shape(input_shape);
  add_weight(weights, "embeddings", Shape{options_.input_dim, options_.output_dim}, options_.embeddings_initializer);
  built_ = true;
}

Shape Embedding::output_shape(const Shape& input_shape) const {
  std::vector<std::int64_t> dims = input_shape.dims();
  dims.push_back(options_.output_dim);
  return Shape(dims);
}

int Embedding::call(GraphBuilder& b, int x) {
  return b.graph().add("gather", {b.variable(weights_[0]), x}, {}, name() + "/gather");
}

std::vector<int> Embedding::call_masked(GraphBuilder& b, const std::vector<int>& inputs, const std::vector<int>&,
                                        std::vector<int>& output_masks) {
  const int y = call(b, inputs.at(0));
  int mask = -1;
  if (options_.mask_zero) {
    Attrs a;
    a.set("value", 0.0);
    mask = b.graph().add("sequence_mask", {inputs[0]}, a, name() + "/mask");
  }
  output_masks = {mask};
  return {y};
}

ActivityRegularization::ActivityRegularization(std::string name, double l1, double l2) : Layer(std::move(name)) {
  Regularizer r;
  r.kind = "L1L2";
  r.l1 = l1;
  r.l2 = l2;
  check_regularizer(r, this->name());
  set_activity_regularizer(r);
}

Masking::Masking(std::string name, double mask_value) : Layer(std::move(name)), mask_value_(mask_value) {}

Shape Masking::output_shape(const Shape& input_shape) const {
  NNFIT_CHECK(input_shape.rank() >= 2, InvalidArgument, name(), ": Masking expects (steps, features), got ",
              input_shape.to_string());
  return input_shape;
}

int Masking::call(GraphBuilder& b, int x) {
  std::vector<int> masks;
  return call_masked(b, {x}, {-1}, masks)[0];
}

std::vector<int> Masking::call_masked(GraphBuilder& b, const std::vector<int>& inputs, const std::vector<int>&,
                                      std::vector<int>& output_masks) {
  Graph& g = b.graph();
  Attrs a;
  a.set("value", mask_value_);
  a.set("reduce_last", std::int64_t{1});
  const int mask = g.add("sequence_mask", {inputs.at(0)}, a, name() + "/mask");
  output_masks = {mask};
  return {g.add("apply_mask", {inputs[0], mask}, {}, name() + "/apply_mask")};
}

}  // namespace nnfit
