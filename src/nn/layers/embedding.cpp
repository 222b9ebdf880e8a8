// Embedding: the gather op on the (input_dim, output_dim) table; its gradient adds each
// output row's gradient into its id's row (a dense table gradient, as Keras 3 applies it).
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

}  // namespace nnfit
