// LayerNormalization over its axes: the layer_norm op (on the last axis; other axes are
// moved last and flattened by emit_on_axes), whose mean and reciprocal standard deviation
// outputs feed its gradient.
#include <algorithm>
#include "nnfit/core/error.h"
#include "nnfit/nn/layers.h"

namespace nnfit {

LayerNormalization::LayerNormalization(std::string name, LayerNormalizationOptions options)
    : Layer(std::move(name)), options_(options) {
  NNFIT_CHECK(options_.epsilon > 0.0, InvalidArgument, this->name(), ": epsilon must be positive");
}

std::vector<std::int64_t> LayerNormalization::axes_for(const Shape& s) const {
  const std::int64_t rank = s.rank() + 1;
  std::vector<std::int64_t> out;
  for (std::int64_t a : options_.axes) {
    const std::int64_t b = a < 0 ? a + rank : a;
    NNFIT_CHECK(b >= 1 && b < rank, InvalidArgument, name(), ": axis ", a, " is out of range for inputs of shape ",
                s.to_string(), " (the batch axis cannot be normalized over)");
    NNFIT_CHECK(std::find(out.begin(), out.end(), b) == out.end(), InvalidArgument, name(), ": axis ", a,
                " is given twice");
    out.push_back(b);
  }
  NNFIT_CHECK(!out.empty(), InvalidArgument, name(), ": needs at least one axis");
  std::sort(out.begin(), out.end());
  return out;
}

Shape LayerNormalization::output_shape(const Shape& s) const {
  axes_for(s);
  return s;
}

void LayerNormalization::build(const Shape& s, WeightFactory& weights) {
  NNFIT_CHECK(s.rank() >= 1, InvalidArgument, name(), ": needs at least one axis");
  std::vector<std::int64_t> dims;
  for (std::int64_t a : axes_for(s)) dims.push_back(s[static_cast<int>(a) - 1]);
  const Shape c(dims);  // Keras's param shape: the normalized axes' sizes
  // Order as in Keras: gamma, beta. Without scale/center the constant stays as a
  // non-trainable weight so one op serves every configuration.
  weights_.push_back({name() + "/gamma", weights.make(name() + "/gamma", c, "ones", 1, 1), options_.scale});
  weights_.push_back({name() + "/beta", weights.zeros(c), options_.center});
  built_ = true;
}

int LayerNormalization::call(GraphBuilder& b, int x) {
  Graph& g = b.graph();
  const Shape& s = g.desc(x).shape;
  const std::vector<std::int64_t> axes = axes_for(Shape(std::vector<std::int64_t>(s.dims().begin() + 1, s.dims().end())));
  Attrs eps;
  eps.set("epsilon", options_.epsilon);
  if (axes == std::vector<std::int64_t>{s.rank() - 1}) {
    return g.add_node("layer_norm", {x, b.variable(weights_[0]), b.variable(weights_[1])}, eps, name() + "/layer_norm")[0];
  }
  return emit_on_axes(g, x, axes, name(), [&](int rows) {
    const std::int64_t width = g.desc(rows).shape[1];
    const int gamma = emit_reshape(g, b.variable(weights_[0]), {width}, name() + "/gamma_flat");
    const int beta = emit_reshape(g, b.variable(weights_[1]), {width}, name() + "/beta_flat");
    return g.add_node("layer_norm", {rows, gamma, beta}, eps, name() + "/layer_norm")[0];
  });
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
