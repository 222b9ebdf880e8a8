// The activation layers (Activation, ReLU, LeakyReLU, ELU, Softmax) and Dropout: layers
// without weights.
#include <utility>

#include "nnfit/core/error.h"
#include "nnfit/nn/layers.h"

namespace nnfit {

Activation::Activation(std::string name, std::string activation)
    : Layer(std::move(name)), activation_(std::move(activation)) {
  check_activation(activation_, this->name());
}

int Activation::call(GraphBuilder& b, int x) { return emit_activation(b.graph(), x, activation_, name()); }

ReLU::ReLU(std::string name, ReLUOptions options) : Layer(std::move(name)), options_(options) {
  NNFIT_CHECK(!options_.max_value || *options_.max_value >= 0.0, InvalidArgument, this->name(),
              ": max_value must be >= 0, got ", *options_.max_value);
  NNFIT_CHECK(options_.negative_slope >= 0.0, InvalidArgument, this->name(), ": negative_slope must be >= 0, got ",
              options_.negative_slope);
  NNFIT_CHECK(options_.threshold >= 0.0, InvalidArgument, this->name(), ": threshold must be >= 0, got ",
              options_.threshold);
}

int ReLU::call(GraphBuilder& b, int x) {
  const ReLUOptions& o = options_;
  if (o.negative_slope == 0.0 && o.threshold == 0.0) {
    if (!o.max_value) return emit_activation(b.graph(), x, "relu", name());
    if (*o.max_value == 6.0) return emit_activation(b.graph(), x, "relu6", name());
  }
  Attrs a;
  a.set("kind", std::string("relu_keras"));
  a.set("alpha", o.negative_slope);
  a.set("threshold", o.threshold);
  if (o.max_value) a.set("max_value", *o.max_value);
  return b.graph().add("activation", {x}, a, name() + "/relu");
}

LeakyReLU::LeakyReLU(std::string name, double negative_slope)
    : Layer(std::move(name)), negative_slope_(negative_slope) {
  NNFIT_CHECK(negative_slope_ >= 0.0, InvalidArgument, this->name(), ": negative_slope must be >= 0, got ",
              negative_slope_);
}

int LeakyReLU::call(GraphBuilder& b, int x) {
  Attrs a;
  a.set("kind", std::string("leaky_relu"));
  a.set("alpha", negative_slope_);
  return b.graph().add("activation", {x}, a, name() + "/leaky_relu");
}

ELU::ELU(std::string name, double alpha) : Layer(std::move(name)), alpha_(alpha) {}

int ELU::call(GraphBuilder& b, int x) {
  Attrs a;
  a.set("kind", std::string("elu"));
  a.set("alpha", alpha_);
  return b.graph().add("activation", {x}, a, name() + "/elu");
}

Shape Softmax::output_shape(const Shape& s) const {
  // Counting the batch axis: -rank-1 .. rank name the axes of [batch, s...].
  const std::int64_t rank = s.rank() + 1;
  NNFIT_CHECK(axis_ >= -rank && axis_ < rank && axis_ != 0 && axis_ != -rank, InvalidArgument, name(), ": axis ",
              axis_, " is not a feature axis of an input of shape ", s.to_string(), " (batch axis included: 1..",
              rank - 1, " or -1..", -(rank - 1), ")");
  return s;
}

int Softmax::call(GraphBuilder& b, int x) {
  const Shape s = b.graph().desc(x).shape;
  output_shape(Shape(std::vector<std::int64_t>(s.dims().begin() + 1, s.dims().end())));
  const std::int64_t axis = axis_ < 0 ? axis_ + s.rank() : axis_;
  if (axis == s.rank() - 1) return emit_activation(b.graph(), x, "softmax", name());
  // Another axis: swap it with the last, take the softmax there and swap back.
  std::vector<std::int64_t> perm(static_cast<std::size_t>(s.rank()));
  for (std::int64_t d = 0; d < s.rank(); ++d) perm[static_cast<std::size_t>(d)] = d;
  std::swap(perm[static_cast<std::size_t>(axis)], perm.back());
  Attrs t;
  t.set("perm", perm);
  const int moved = b.graph().add("transpose", {x}, t, name() + "/to_last");
  const int y = b.graph().add("softmax", {moved}, {}, name() + "/softmax");
  return b.graph().add("transpose", {y}, t, name() + "/from_last");
}

std::vector<int> Softmax::call_masked(GraphBuilder& b, const std::vector<int>& inputs, const std::vector<int>& masks,
                                   std::vector<int>& output_masks) {
  refuse_masks(masks, "a masked softmax");
  output_masks = {-1};
  return {call(b, inputs.at(0))};
}

}  // namespace nnfit
