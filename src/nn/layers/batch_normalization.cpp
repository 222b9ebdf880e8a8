// BatchNormalization over its features axis (the last by default; another one is moved
// last around the channels-last ops by emit_on_axes). Training: batch statistics plus
// moving-average updates emitted as side nodes; inference: moving statistics.
#include "nnfit/core/error.h"
#include "nnfit/nn/layers.h"

namespace nnfit {

BatchNormalization::BatchNormalization(std::string name, BatchNormalizationOptions options)
    : Layer(std::move(name)), options_(options) {
  NNFIT_CHECK(options_.momentum >= 0.0 && options_.momentum <= 1.0, InvalidArgument, this->name(),
              ": momentum must be in [0, 1]");
  NNFIT_CHECK(options_.epsilon > 0.0, InvalidArgument, this->name(), ": epsilon must be positive");
}

std::int64_t BatchNormalization::axis_for(const Shape& s) const {
  const std::int64_t rank = s.rank() + 1;
  const std::int64_t a = options_.axis < 0 ? options_.axis + rank : options_.axis;
  NNFIT_CHECK(a >= 1 && a < rank, InvalidArgument, name(), ": axis ", options_.axis, " is out of range for inputs of ",
              "shape ", s.to_string(), " (the batch axis cannot be normalized over)");
  return a;
}

Shape BatchNormalization::output_shape(const Shape& s) const {
  axis_for(s);
  return s;
}

void BatchNormalization::build(const Shape& s, WeightFactory& weights) {
  NNFIT_CHECK(s.rank() >= 1, InvalidArgument, name(), ": needs at least one axis");
  Shape c{s[static_cast<int>(axis_for(s)) - 1]};
  // Order as in Keras: gamma, beta, moving_mean, moving_variance. Without scale/center the
  // constant is kept as a non-trainable weight so one op serves every configuration.
  weights_.push_back({name() + "/gamma", weights.make(name() + "/gamma", c, "ones", 1, 1), options_.scale});
  weights_.push_back({name() + "/beta", weights.zeros(c), options_.center});
  weights_.push_back({name() + "/moving_mean", weights.zeros(c), false});
  weights_.push_back({name() + "/moving_variance", weights.make(name() + "/moving_variance", c, "ones", 1, 1), false});
  built_ = true;
}

int BatchNormalization::call(GraphBuilder& b, int x) {
  Graph& g = b.graph();
  const Shape& s = g.desc(x).shape;
  const std::int64_t axis = axis_for(Shape(std::vector<std::int64_t>(s.dims().begin() + 1, s.dims().end())));
  const auto normalize = [&](int rows) {
    int gamma = b.variable(weights_[0]), beta = b.variable(weights_[1]);
    int mm = b.variable(weights_[2]), mv = b.variable(weights_[3]);
    Attrs eps;
    eps.set("epsilon", options_.epsilon);
    // Keras: a frozen BatchNormalization normalizes with its moving statistics even in fit.
    if (!b.training() || !trainable()) {
      return g.add("batch_norm_infer", {rows, gamma, beta, mm, mv}, eps, name() + "/batch_norm");
    }
    std::vector<int> out = g.add_node("batch_norm_train", {rows, gamma, beta}, eps, name() + "/batch_norm");
    Attrs m;
    m.set("momentum", options_.momentum);
    g.add_node("moving_average_update", {mm, out[1]}, m, name() + "/update_moving_mean");
    g.add_node("moving_average_update", {mv, out[2]}, m, name() + "/update_moving_variance");
    return out[0];
  };
  if (axis == s.rank() - 1) return normalize(x);  // channels last: the ops take [..., C] as is
  return emit_on_axes(g, x, {axis}, name(), normalize);
}

std::vector<Weight*> BatchNormalization::saved_weights() {
  std::vector<Weight*> out;
  if (options_.scale) out.push_back(&weights_[0]);
  if (options_.center) out.push_back(&weights_[1]);
  out.push_back(&weights_[2]);
  out.push_back(&weights_[3]);
  return out;
}

std::vector<int> BatchNormalization::call_masked(GraphBuilder& b, const std::vector<int>& inputs, const std::vector<int>& masks,
                                   std::vector<int>& output_masks) {
  refuse_masks(masks, "its batch moments over the present steps only");
  output_masks = {-1};
  return {call(b, inputs.at(0))};
}

}  // namespace nnfit
