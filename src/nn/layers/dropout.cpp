// Dropout and SpatialDropout1D/2D/3D: the dropout op, with a noise shape where decisions
// are shared; emit_dropout also serves the recurrent layers' input dropout. GaussianNoise,
// GaussianDropout and AlphaDropout: the noise op, seeded the same way.
#include "nn/layers/layer_seed.h"
#include "nnfit/core/error.h"
#include "nnfit/nn/layers.h"

namespace nnfit {

std::int64_t layer_op_seed(const std::string& name, std::int64_t seed) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : name) h = (h ^ c) * 1099511628211ull;
  return static_cast<std::int64_t>((h ^ static_cast<std::uint64_t>(seed)) >> 1);
}

int emit_dropout(Graph& graph, int x, double rate, std::int64_t seed, const std::vector<std::int64_t>& noise,
                 const std::string& name) {
  Attrs a;
  a.set("rate", rate);
  a.set("seed", layer_op_seed(name, seed));
  if (!noise.empty()) a.set("noise_shape", noise);
  return graph.add_node("dropout", {x}, a, name + "/dropout")[0];
}

Dropout::Dropout(std::string name, double rate, std::int64_t seed, std::vector<std::int64_t> noise_shape)
    : Layer(std::move(name)), rate_(rate), seed_(seed), noise_shape_(std::move(noise_shape)) {
  NNFIT_CHECK(rate >= 0.0 && rate < 1.0, InvalidArgument, this->name(), ": rate must be in [0, 1), got ", rate);
}

Shape Dropout::output_shape(const Shape& s) const {
  if (!noise_shape_.empty()) {
    NNFIT_CHECK(static_cast<std::int64_t>(noise_shape_.size()) == s.rank() + 1, InvalidArgument, name(),
                ": noise_shape has ", noise_shape_.size(), " axes, the input ", s.rank() + 1, " (with the batch axis)");
    for (std::int64_t d = 0; d < s.rank(); ++d) {
      const std::int64_t n = noise_shape_[static_cast<std::size_t>(d + 1)];
      NNFIT_CHECK(n == -1 || n == 1 || n == s[d], InvalidArgument, name(), ": noise_shape axis ", d + 1, " is ", n,
                  "; it must be 1, the input's ", s[d], " or null");
    }
  }
  return s;
}

std::vector<std::int64_t> Dropout::noise_for(const Shape& batched) const {
  if (noise_shape_.empty()) return {};
  std::vector<std::int64_t> noise = noise_shape_;
  for (std::size_t d = 0; d < noise.size(); ++d) {
    if (noise[d] == -1 || d == 0) noise[d] = batched[static_cast<std::int64_t>(d)];  // None, and the batch
  }
  return noise;
}

int Dropout::call(GraphBuilder& b, int x) {
  // Inference and rate 0 are the identity (Keras's Dropout).
  if (!b.training() || rate_ == 0.0) return x;
  return emit_dropout(b.graph(), x, rate_, seed_, noise_for(b.graph().desc(x).shape), name());
}

SpatialDropout::SpatialDropout(std::string name, int rank, double rate, std::int64_t seed, bool channels_first)
    : Dropout(std::move(name), rate, seed), rank_(rank), channels_first_(channels_first) {
  NNFIT_CHECK(rank >= 1 && rank <= 3, InvalidArgument, this->name(), ": SpatialDropout has 1, 2 or 3 spatial axes");
}

Shape SpatialDropout::output_shape(const Shape& s) const {
  NNFIT_CHECK(s.rank() == rank_ + 1, InvalidArgument, name(), ": ", class_name(), " expects ", rank_,
              " spatial axes and a channel axis, got ", s.to_string());
  return s;
}

std::vector<std::int64_t> SpatialDropout::noise_for(const Shape& batched) const {
  // One decision per (sample, channel): every spatial position of a feature map together.
  std::vector<std::int64_t> noise(static_cast<std::size_t>(batched.rank()), 1);
  noise[0] = batched[0];
  const std::int64_t channels_axis = channels_first_ ? 1 : batched.rank() - 1;
  noise[static_cast<std::size_t>(channels_axis)] = batched[channels_axis];
  return noise;
}

NoiseLayer::NoiseLayer(std::string name, NoiseKind kind, double value, std::int64_t seed)
    : Layer(std::move(name)), kind_(kind), value_(value), seed_(seed) {
  NNFIT_CHECK(value >= 0.0 && (kind == NoiseKind::gaussian_noise || value < 1.0), InvalidArgument, this->name(), ": ",
              kind == NoiseKind::gaussian_noise ? "stddev must not be negative" : "rate must be in [0, 1)", ", got ",
              value);
}

std::string NoiseLayer::class_name() const {
  switch (kind_) {
    case NoiseKind::gaussian_noise: return "GaussianNoise";
    case NoiseKind::gaussian_dropout: return "GaussianDropout";
    case NoiseKind::alpha_dropout: return "AlphaDropout";
  }
  return "GaussianNoise";
}

int NoiseLayer::call(GraphBuilder& b, int x) {
  if (!b.training() || value_ == 0.0) return x;  // Keras's: the identity outside training
  static const char* const kKinds[] = {"gaussian_add", "gaussian_mul", "alpha_dropout"};
  Attrs a;
  a.set("kind", std::string(kKinds[static_cast<int>(kind_)]));
  a.set("value", value_);
  a.set("seed", layer_op_seed(name(), seed_));
  return b.graph().add_node("noise", {x}, a, name() + "/noise")[0];
}

}  // namespace nnfit
