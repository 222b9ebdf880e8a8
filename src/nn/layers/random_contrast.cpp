// RandomContrast: the random_contrast op in training, the identity otherwise (Keras 3's).
// Keras 3.15 reads a single factor f as the range (0, f) (its base layer's _set_factor with
// bounds (0, 1)), so the drawn contrast factor lies in [1, 1 + f]; a pair (a, b) in
// [1 - a, 1 + b]. Both are kept as Keras's.
#include <algorithm>

#include "nn/layers/layer_seed.h"
#include "nn/layers/spatial_axes.h"
#include "nnfit/core/error.h"
#include "nnfit/nn/augmentation_layers.h"

namespace nnfit {

RandomContrast::RandomContrast(std::string name, RandomContrastOptions options)
    : Layer(std::move(name)), options_(std::move(options)) {
  NNFIT_CHECK(options_.lower <= options_.upper, InvalidArgument, this->name(), ": factor (", options_.lower, ", ",
              options_.upper, ") must be sorted (lower, upper)");
  NNFIT_CHECK(options_.lower <= 1.0 && options_.upper >= 0.0, InvalidArgument, this->name(), ": factor (",
              options_.lower, ", ", options_.upper, ") must lie in [0, 1]; pass a number or two numbers in [0, 1]");
  NNFIT_CHECK(options_.value_min <= options_.value_max, InvalidArgument, this->name(), ": value_range (",
              options_.value_min, ", ", options_.value_max, ") must be (lower, upper)");
}

Shape RandomContrast::output_shape(const Shape& s) const {
  check_spatial_rank(s, 2, name(), class_name());
  return s;
}

int RandomContrast::call(GraphBuilder& b, int x) {
  if (!b.training()) return x;
  Attrs a;
  // A negative lower bound makes 1 - lower the larger end; TF's uniform draws between them.
  a.set("factor_lower", std::min(1.0 - options_.lower, 1.0 + options_.upper));
  a.set("factor_upper", std::max(1.0 - options_.lower, 1.0 + options_.upper));
  a.set("value_lower", options_.value_min);
  a.set("value_upper", options_.value_max);
  a.set("seed", layer_op_seed(name(), options_.seed.value_or(0)));
  return b.graph().add_node("random_contrast", {x}, a, name() + "/random_contrast")[0];
}

}  // namespace nnfit
