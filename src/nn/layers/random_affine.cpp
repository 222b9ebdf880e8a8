// RandomTranslation, RandomRotation, RandomZoom and RandomShear: the random_affine op in
// training, the identity otherwise (Keras 3's). Factor bounds are Keras 3.15's: translation
// and rotation factors in [-1, 1], zoom factors in (-1, 1], shear factors in [0, 1] (a number
// f means (-f, f); pairs as Note [RandomShear's pairs] says); RandomRotation checks a pair as
// Keras's base layer does (the first at most 1, the second at least -1).
#include <algorithm>
#include <cmath>
#include <sstream>

#include "backend/common/augment.h"
#include "nn/layers/layer_seed.h"
#include "nn/layers/spatial_axes.h"
#include "nnfit/core/error.h"
#include "nnfit/nn/augmentation_layers.h"

namespace nnfit {

namespace {

const char* factor_key(RandomAffineKind kind, bool height) {
  if (kind == RandomAffineKind::rotation) return "factor";
  if (kind == RandomAffineKind::shear) return height ? "y_factor" : "x_factor";
  return height ? "height_factor" : "width_factor";
}

std::string show(const std::vector<double>& f) {
  std::ostringstream s;
  if (f.size() != 1) s << "[";
  for (std::size_t i = 0; i < f.size(); ++i) s << (i ? ", " : "") << f[i];
  if (f.size() != 1) s << "]";
  return s.str();
}

void check_factor(const std::string& layer, RandomAffineKind kind, bool height, const std::vector<double>& f) {
  const char* key = factor_key(kind, height);
  NNFIT_CHECK(f.size() == 1 || f.size() == 2, InvalidArgument, layer, ": ", key,
              " must be a number or a list of two numbers, got ", f.size(), " numbers");
  // Note [RandomShear's pairs]: Keras 3.15 takes a shear factor (a number, or each number of
  // a pair) in [0, 1] but writes a number f as the pair (-f, f), which its own from_config
  // then refuses; nnfit reads such a pair (any pair within [-1, 1]) so Keras's files load.
  const bool shear_pair = kind == RandomAffineKind::shear && f.size() == 2;
  const std::string bounds = kind == RandomAffineKind::zoom                      ? "(-1, 1]"
                             : kind == RandomAffineKind::shear && !shear_pair ? "[0, 1]"
                                                                              : "[-1, 1]";
  bool ok = true;
  if (kind == RandomAffineKind::shear) {
    for (double v : f) ok = ok && v >= (shear_pair ? -1.0 : 0.0) && v <= 1.0;
  } else if (kind == RandomAffineKind::rotation && f.size() == 2) {
    ok = f[0] <= 1.0 && f[1] >= -1.0;
  } else {
    for (double v : f) ok = ok && v <= 1.0 && (kind == RandomAffineKind::zoom ? v > -1.0 : v >= -1.0);
  }
  NNFIT_CHECK(ok, InvalidArgument, layer, ": ", key, " = ", show(f), " is outside ", bounds,
              "; pass a number or two numbers in ", bounds);
}

}  // namespace

std::pair<double, double> RandomAffine::factor_range(const std::vector<double>& f) {
  if (f.size() == 1) return {-std::abs(f[0]), std::abs(f[0])};
  return {std::min(f[0], f[1]), std::max(f[0], f[1])};
}

RandomAffine::RandomAffine(std::string name, RandomAffineKind kind, RandomAffineOptions options)
    : Layer(std::move(name)), kind_(kind), options_(std::move(options)) {
  check_factor(this->name(), kind_, true, options_.height_factor);
  if (kind_ == RandomAffineKind::translation || kind_ == RandomAffineKind::shear || !options_.width_factor.empty()) {
    NNFIT_CHECK(kind_ != RandomAffineKind::rotation, InvalidArgument, this->name(),
                ": RandomRotation has no width_factor");
    check_factor(this->name(), kind_, false, options_.width_factor);
  }
  AffineFill fill;
  AffineInterpolation interpolation;
  NNFIT_CHECK(parse_affine_fill(options_.fill_mode, &fill), InvalidArgument, this->name(), ": fill_mode \"",
              options_.fill_mode, "\" is not one of ", kAffineFillNames);
  NNFIT_CHECK(parse_affine_interpolation(options_.interpolation, &interpolation), InvalidArgument, this->name(),
              ": interpolation \"", options_.interpolation, "\" is not one of ", kAffineInterpolationNames);
}

std::string RandomAffine::class_name() const {
  switch (kind_) {
    case RandomAffineKind::translation: return "RandomTranslation";
    case RandomAffineKind::rotation: return "RandomRotation";
    case RandomAffineKind::zoom: return "RandomZoom";
    case RandomAffineKind::shear: return "RandomShear";
  }
  return "RandomTranslation";
}

Shape RandomAffine::output_shape(const Shape& s) const {
  check_spatial_rank(s, 2, name(), class_name());
  return s;
}

int RandomAffine::call(GraphBuilder& b, int x) {
  if (!b.training()) return x;
  static const char* const kKinds[] = {"translation", "rotation", "zoom", "shear"};
  Attrs a;
  a.set("kind", std::string(kKinds[static_cast<int>(kind_)]));
  const auto [hl, hu] = factor_range(options_.height_factor);
  a.set("height_lower", hl);
  a.set("height_upper", hu);
  if (options_.width_factor.empty()) {
    a.set("same_zoom", std::int64_t{kind_ == RandomAffineKind::zoom ? 1 : 0});
  } else {
    const auto [wl, wu] = factor_range(options_.width_factor);
    a.set("width_lower", wl);
    a.set("width_upper", wu);
  }
  a.set("fill_mode", options_.fill_mode);
  a.set("interpolation", options_.interpolation);
  a.set("fill_value", options_.fill_value);
  a.set("seed", layer_op_seed(name(), options_.seed.value_or(0)));
  return b.graph().add_node("random_affine", {x}, a, name() + "/random_affine")[0];
}

}  // namespace nnfit
