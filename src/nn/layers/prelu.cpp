// PReLU: the prelu op with a learned alpha of the input's shape (batch axis aside), 1 on
// the shared axes.
#include "nnfit/core/error.h"
#include "nnfit/nn/layers.h"

namespace nnfit {

PReLU::PReLU(std::string name, PReLUOptions options) : Layer(std::move(name)), options_(std::move(options)) {
  for (std::int64_t a : options_.shared_axes) {
    NNFIT_CHECK(a >= 1, InvalidArgument, this->name(), ": shared_axes count the batch axis as 0, so each must be >= 1, got ",
                a);
  }
}

Shape PReLU::output_shape(const Shape& s) const {
  for (std::int64_t a : options_.shared_axes) {
    NNFIT_CHECK(a <= s.rank(), InvalidArgument, name(), ": shared axis ", a, " is past the input's axes (",
                s.to_string(), " after the batch axis)");
  }
  return s;
}

void PReLU::build(const Shape& s, WeightFactory& weights) {
  output_shape(s);
  std::vector<std::int64_t> dims = s.dims();
  for (std::int64_t a : options_.shared_axes) dims[static_cast<std::size_t>(a - 1)] = 1;
  const Shape alpha(dims);
  weights_.push_back({name() + "/alpha", weights.make(name() + "/alpha", alpha, options_.alpha_initializer,
                                                      alpha.numel(), alpha.numel()),
                      true});
  built_ = true;
}

int PReLU::call(GraphBuilder& b, int x) {
  return b.graph().add("prelu", {x, b.variable(weights_[0])}, {}, name() + "/prelu");
}

}  // namespace nnfit
