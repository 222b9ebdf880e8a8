// LayerNormalization over the last axis: the layer_norm op, whose mean and reciprocal
// standard deviation outputs feed its gradient.
#include "nnfit/core/error.h"
#include "nnfit/nn/layers.h"

namespace nnfit {

LayerNormalization::LayerNormalization(std::string name, LayerNormalizationOptions options)
    : Layer(std::move(name)), options_(options) {
  NNFIT_CHECK(options_.epsilon > 0.0, InvalidArgument, this->name(), ": epsilon must be positive");
}

void LayerNormalization::build(const Shape& s, WeightFactory& weights) {
  NNFIT_CHECK(s.rank() >= 1, InvalidArgument, name(), ": needs at least one axis");
  const Shape c{s.dim(-1)};
  // Order as in Keras: gamma, beta. Without scale/center the constant stays as a
  // non-trainable weight so one op serves every configuration.
  weights_.push_back({name() + "/gamma", weights.make(name() + "/gamma", c, "ones", 1, 1), options_.scale});
  weights_.push_back({name() + "/beta", weights.zeros(c), options_.center});
  built_ = true;
}

int LayerNormalization::call(GraphBuilder& b, int x) {
  Attrs eps;
  eps.set("epsilon", options_.epsilon);
  return b.graph().add_node("layer_norm", {x, b.variable(weights_[0]), b.variable(weights_[1])}, eps,
                            name() + "/layer_norm")[0];
}

std::vector<Weight*> LayerNormalization::saved_weights() {
  std::vector<Weight*> out;
  if (options_.scale) out.push_back(&weights_[0]);
  if (options_.center) out.push_back(&weights_[1]);
  return out;
}

GroupNormalization::GroupNormalization(std::string name, GroupNormalizationOptions options)
    : Layer(std::move(name)), options_(options) {
  NNFIT_CHECK(options_.groups > 0, InvalidArgument, this->name(), ": groups must be positive, got ", options_.groups);
  NNFIT_CHECK(options_.epsilon > 0.0, InvalidArgument, this->name(), ": epsilon must be positive");
}

Shape GroupNormalization::output_shape(const Shape& s) const {
  NNFIT_CHECK(s.rank() >= 1 && s.dim(-1) % options_.groups == 0, InvalidArgument, name(), ": groups ", options_.groups,
              " must divide the ", s.rank() >= 1 ? s.dim(-1) : 0, " channels of ", s.to_string());
  return s;
}

void GroupNormalization::build(const Shape& s, WeightFactory& weights) {
  output_shape(s);
  const Shape c{s.dim(-1)};
  // As LayerNormalization: gamma, beta, the absent ones kept as non-trainable constants.
  weights_.push_back({name() + "/gamma", weights.make(name() + "/gamma", c, "ones", 1, 1), options_.scale});
  weights_.push_back({name() + "/beta", weights.zeros(c), options_.center});
  built_ = true;
}

int GroupNormalization::call(GraphBuilder& b, int x) {
  Attrs a;
  a.set("epsilon", options_.epsilon);
  a.set("groups", options_.groups);
  return b.graph().add_node("group_norm", {x, b.variable(weights_[0]), b.variable(weights_[1])}, a,
                            name() + "/group_norm")[0];
}

std::vector<Weight*> GroupNormalization::saved_weights() {
  std::vector<Weight*> out;
  if (options_.scale) out.push_back(&weights_[0]);
  if (options_.center) out.push_back(&weights_[1]);
  return out;
}

}  // namespace nnfit
