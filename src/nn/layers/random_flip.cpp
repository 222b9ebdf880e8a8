// RandomFlip: the random_flip op in training, the identity otherwise (Keras 3's).
#include "backend/common/augment.h"
#include "nn/layers/layer_seed.h"
#include "nn/layers/spatial_axes.h"
#include "nnfit/core/error.h"
#include "nnfit/nn/augmentation_layers.h"

namespace nnfit {

RandomFlip::RandomFlip(std::string name, RandomFlipOptions options)
    : Layer(std::move(name)), options_(std::move(options)) {
  bool h = false, v = false;
  NNFIT_CHECK(parse_flip_mode(options_.mode, &h, &v), InvalidArgument, this->name(), ": mode \"", options_.mode,
              "\" is not one of ", kFlipModeNames);
}

Shape RandomFlip::output_shape(const Shape& s) const {
  check_spatial_rank(s, 2, name(), class_name());
  return s;
}

int RandomFlip::call(GraphBuilder& b, int x) {
  if (!b.training()) return x;
  Attrs a;
  a.set("mode", options_.mode);
  a.set("seed", layer_op_seed(name(), options_.seed.value_or(0)));
  return b.graph().add_node("random_flip", {x}, a, name() + "/random_flip")[0];
}

}  // namespace nnfit
