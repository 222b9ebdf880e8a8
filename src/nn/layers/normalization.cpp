// Keras's Normalization preprocessing layer: the standardize op over the kept axes (moved
// last and flattened by emit_on_axes), its mean and variance constants of the model.
#include <algorithm>
#include <cstring>

#include "nnfit/core/error.h"
#include "nnfit/memory/allocator.h"
#include "nnfit/nn/layers.h"

namespace nnfit {

Normalization::Normalization(std::string name, NormalizationOptions options)
    : Layer(std::move(name)), options_(std::move(options)) {
  NNFIT_CHECK(options_.mean.size() == options_.variance.size(), InvalidArgument, this->name(),
              ": mean and variance must both be given, with as many values (got ", options_.mean.size(), " and ",
              options_.variance.size(), ")");
  for (double v : options_.variance) {
    NNFIT_CHECK(v >= 0.0, InvalidArgument, this->name(), ": a variance must be non-negative, got ", v);
  }
}

std::vector<std::int64_t> Normalization::kept_axes(const Shape& s) const {
  const std::int64_t rank = s.rank() + 1;
  std::vector<std::int64_t> out;
  for (std::int64_t a : options_.axes) {
    const std::int64_t b = a < 0 ? a + rank : a;
    NNFIT_CHECK(b >= 1 && b < rank, InvalidArgument, name(), ": axis ", a, " is out of range for inputs of shape ",
                s.to_string(), " (the batch axis cannot have its own statistics)");
    if (std::find(out.begin(), out.end(), b) == out.end()) out.push_back(b);
  }
  std::sort(out.begin(), out.end());
  return out;
}

Shape Normalization::output_shape(const Shape& s) const {
  std::int64_t positions = 1;
  for (std::int64_t a : kept_axes(s)) positions *= s[static_cast<int>(a) - 1];
  const std::size_t given = options_.mean.size();
  NNFIT_CHECK(given <= 1 || static_cast<std::int64_t>(given) == positions, InvalidArgument, name(),
              ": mean and variance hold ", given, " values; expected 1 or one per position of the kept axes (",
              positions, ")");
  return s;
}

void Normalization::build(const Shape& s, WeightFactory& weights) {
  std::vector<std::int64_t> dims;
  for (std::int64_t a : kept_axes(s)) dims.push_back(s[static_cast<int>(a) - 1]);
  const Shape stats(dims);
  output_shape(s);
  Tensor mean = weights.zeros(stats), var = weights.zeros(stats);
  if (adapted()) {
    std::fill(var.data<float>(), var.data<float>() + var.numel(), 1.0f);  // Keras's initial variance
  } else {
    const std::size_t given = options_.mean.size();
    for (std::int64_t i = 0; i < stats.numel(); ++i) {
      const std::size_t k = given == 1 ? 0 : static_cast<std::size_t>(i);
      mean.data<float>()[i] = static_cast<float>(options_.mean[k]);
      var.data<float>()[i] = static_cast<float>(options_.variance[k]);
    }
  }
  weights_.push_back({name() + "/mean", mean, false});
  weights_.push_back({name() + "/variance", var, false});
  if (adapted()) {
    // Keras's sample count of adapt(), an int64 scalar nnfit keeps for the file only.
    Tensor count = Tensor::zeros(Shape{}, DType::i64);
    weights_.push_back({name() + "/count", count, false});
  }
  built_ = true;
}

int Normalization::call(GraphBuilder& b, int x) {
  Graph& g = b.graph();
  const Shape& s = g.desc(x).shape;
  const std::vector<std::int64_t> axes = kept_axes(Shape(std::vector<std::int64_t>(s.dims().begin() + 1, s.dims().end())));
  Attrs a;
  if (options_.invert) a.set("invert", std::int64_t{1});
  return emit_on_axes(g, x, axes, name(), [&](int rows) {
    const std::int64_t width = g.desc(rows).shape[1];
    const int mean = emit_reshape(g, b.variable(weights_[0]), {width}, name() + "/mean_flat");
    const int var = emit_reshape(g, b.variable(weights_[1]), {width}, name() + "/variance_flat");
    return g.add("standardize", {rows, mean, var}, a, name() + "/standardize");
  });
}

std::vector<Weight*> Normalization::saved_weights() {
  if (!adapted()) return {};
  return {&weights_[0], &weights_[1], &weights_[2]};
}

}  // namespace nnfit
