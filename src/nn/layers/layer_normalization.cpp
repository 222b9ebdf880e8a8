// LayerNormalization and RMSNormalization over their axes: the layer_norm op (on the last
// axis; other axes are moved last and flattened by emit_on_axes) in its layer, rms_scaling
// or rms mode, whose mean and reciprocal standard deviation outputs feed its gradient.
#include <algorithm>
#include "nnfit/core/error.h"
#include "nnfit/nn/layers.h"

namespace nnfit {

LayerNormalization::LayerNormalization(std::string name, LayerNormalizationOptions options)
    : Layer(std::move(name)), options_(options) {
  NNFIT_CHECK(options_.epsilon > 0.0, InvalidArgument, this->name(), ": epsilon must be positive");
}

namespace {

// The axes normalized for an input of `s` (without the batch axis), counting the batch
// axis, sorted; throws InvalidArgument naming the layer for an axis out of range.
std::vector<std::int64_t> normalized_axes(const std::string& layer, const std::vector<std::int64_t>& axes,
                                          const Shape& s) {
  const std::int64_t rank = s.rank() + 1;
  std::vector<std::int64_t> out;
  for (std::int64_t a : axes) {
    const std::int64_t b = a < 0 ? a + rank : a;
    NNFIT_CHECK(b >= 1 && b < rank, InvalidArgument, layer, ": axis ", a, " is out of range for inputs of shape ",
                s.to_string(), " (the batch axis cannot be normalized over)");
    NNFIT_CHECK(std::find(out.begin(), out.end(), b) == out.end(), InvalidArgument, layer, ": axis ", a,
                " is given twice");
    out.push_back(b);
  }
  NNFIT_CHECK(!out.empty(), InvalidArgument, layer, ": needs at least one axis");
  std::sort(out.begin(), out.end());
  return out;
}

// Keras's parameter shape: the normalized axes' sizes.
Shape param_shape(const std::string& layer, const std::vector<std::int64_t>& axes, const Shape& s) {
  NNFIT_CHECK(s.rank() >= 1, InvalidArgument, layer, ": needs at least one axis");
  std::vector<std::int64_t> dims;
  for (std::int64_t a : normalized_axes(layer, axes, s)) dims.push_back(s[static_cast<int>(a) - 1]);
  return Shape(dims);
}

// layer_norm over `axes` of x (with the batch axis) in `mode`, gamma and beta of the axes'
// shape: one op on the last axis, other axes moved last and flattened by emit_on_axes.
int emit_normalization(GraphBuilder& b, const std::string& layer, const std::vector<std::int64_t>& axes, int x,
                       const Weight& gamma, const Weight& beta, double epsilon, const char* mode) {
  Graph& g = b.graph();
  const Shape& s = g.desc(x).shape;
  const std::vector<std::int64_t> on =
      normalized_axes(layer, axes, Shape(std::vector<std::int64_t>(s.dims().begin() + 1, s.dims().end())));
  Attrs a;
  a.set("epsilon", epsilon);
  if (std::string(mode) != "layer") a.set("mode", std::string(mode));
  if (on == std::vector<std::int64_t>{s.rank() - 1}) {
    return g.add_node("layer_norm", {x, b.variable(gamma), b.variable(beta)}, a, layer + "/layer_norm")[0];
  }
  return emit_on_axes(g, x, on, layer, [&](int rows) {
    const std::int64_t width = g.desc(rows).shape[1];
    const int gf = emit_reshape(g, b.variable(gamma), {width}, layer + "/gamma_flat");
    const int bf = emit_reshape(g, b.variable(beta), {width}, layer + "/beta_flat");
    return g.add_node("layer_norm", {rows, gf, bf}, a, layer + "/layer_norm")[0];
  });
}

}  // namespace

Shape LayerNormalization::output_shape(const Shape& s) const {
  param_shape(name(), options_.axes, s);
  return s;
}

void LayerNormalization::build(const Shape& s, WeightFactory& weights) {
  const Shape c = param_shape(name(), options_.axes, s);
  // Order as in Keras: gamma, beta. Without scale/center the constant stays as a
  // non-trainable weight so one op serves every configuration. rms_scaling has gamma
  // always and beta never (Keras 3).
  weights_.push_back({name() + "/gamma", weights.make(name() + "/gamma", c, "ones", 1, 1), has_gamma()});
  weights_.push_back({name() + "/beta", weights.zeros(c), has_beta()});
  built_ = true;
}

int LayerNormalization::call(GraphBuilder& b, int x) {
  return emit_normalization(b, name(), options_.axes, x, weights_[0], weights_[1], options_.epsilon,
                            options_.rms_scaling ? "rms_scaling" : "layer");
}

std::vector<Weight*> LayerNormalization::saved_weights() {
  std::vector<Weight*> out;
  if (has_gamma()) out.push_back(&weights_[0]);
  if (has_beta()) out.push_back(&weights_[1]);
  return out;
}

RMSNormalization::RMSNormalization(std::string name, RMSNormalizationOptions options)
    : Layer(std::move(name)), options_(std::move(options)) {
  NNFIT_CHECK(options_.epsilon > 0.0, InvalidArgument, this->name(), ": epsilon must be positive");
}

Shape RMSNormalization::output_shape(const Shape& s) const {
  param_shape(name(), options_.axes, s);
  return s;
}

void RMSNormalization::build(const Shape& s, WeightFactory& weights) {
  const Shape c = param_shape(name(), options_.axes, s);
  weights_.push_back({name() + "/scale", weights.make(name() + "/scale", c, "ones", 1, 1), true});
  weights_.push_back({name() + "/beta", weights.zeros(c), false});  // the op's zero offset
  built_ = true;
}

int RMSNormalization::call(GraphBuilder& b, int x) {
  return emit_normalization(b, name(), options_.axes, x, weights_[0], weights_[1], options_.epsilon, "rms");
}

std::vector<Weight*> RMSNormalization::saved_weights() { return {&weights_[0]}; }

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
