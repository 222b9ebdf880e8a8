// ColorAugmentation: Keras 3.15's RandomHue, RandomSaturation, RandomColorJitter and
// RandomGaussianBlur on the engine's existing ops, Keras's transform_images step for step
// (color_augmentation_layers.h). Per-sample draws are the noise op over a [N, 1, 1, 1]
// tensor cut from the input (image_color.h's ImageGraph::uniform); RandomGaussianBlur's
// sigma is one draw per batch, as Keras's, so its kernel is computed in the graph from the
// draw (the taps' exp(-0.5 (d / sigma)^2) normalized, their outer product) and applied as a
// grouped convolution with that kernel as an input.
#include "nnfit/nn/color_augmentation_layers.h"

#include <algorithm>
#include <cmath>

#include "nn/layers/conv_window.h"
#include "nn/layers/image_color.h"
#include "nn/layers/layer_seed.h"
#include "nn/layers/spatial_axes.h"
#include "nnfit/core/error.h"
#include "nnfit/nn/augmentation_layers.h"

namespace nnfit {

namespace {
namespace color_augmentation_ops {  // named: unity builds join this file with others

using image_color::ImageGraph;

constexpr struct {
  ColorAugmentationKind kind;
  const char* name;
} kClasses[] = {{ColorAugmentationKind::hue, "RandomHue"},
                {ColorAugmentationKind::saturation, "RandomSaturation"},
                {ColorAugmentationKind::color_jitter, "RandomColorJitter"},
                {ColorAugmentationKind::gaussian_blur, "RandomGaussianBlur"}};

constexpr double kKerasEpsilon = 1e-7;  // keras.config.epsilon()

// RandomHue: in [0, 1], the hue shifted by ±factor / 2 (the sign a fair draw), wrapped once.
int hue(ImageGraph& e, int x, double lower, double upper, double v0, double v1) {
  x = e.value_range(x, v0, v1, 0.0, 1.0);
  const int sign = e.scale(e.binary("greater", e.uniform(x, 0.0, 1.0), e.scalar(0.5)), -2.0, 1.0);
  const int shift = e.scale(e.binary("multiply", sign, e.uniform(x, lower, upper)), 0.5, 0.0);
  const int hsv = image_color::rgb_to_hsv(e, x);
  int h = e.binary("add", e.crop_axis(hsv, 3, 0, 1), shift);
  h = e.where(e.binary("greater", h, e.scalar(1.0)), e.scale(h, 1.0, -1.0), h);
  h = e.where(e.binary("less", h, e.scalar(0.0)), e.scale(h, 1.0, 1.0), h);
  const int rgb = image_color::hsv_to_rgb(e, e.concat({h, e.crop_axis(hsv, 3, 1, 2)}, 3));
  return e.value_range(e.clip(rgb, 0.0, 1.0), 0.0, 1.0, v0, v1);
}

// RandomSaturation: the saturation of the raw pixels times f / (1 - f + epsilon), clipped
// to value_range (Keras applies no value-range conversion here).
int saturation(ImageGraph& e, int x, double lower, double upper, double v0, double v1) {
  const int f = e.uniform(x, lower, upper);
  const int factor = e.binary("divide", f, e.scale(f, -1.0, 1.0 + kKerasEpsilon));
  const int hsv = image_color::rgb_to_hsv(e, x);
  const int s = e.clip(e.binary("multiply", e.crop_axis(hsv, 3, 1, 1), factor), std::min(v0, v1), std::max(v0, v1));
  return image_color::hsv_to_rgb(e, e.concat({e.crop_axis(hsv, 3, 0, 1), s, e.crop_axis(hsv, 3, 2, 1)}, 3));
}

// RandomBrightness (inside RandomColorJitter): x + draw · (high - low), clipped.
int brightness(ImageGraph& e, int x, double lower, double upper, double v0, double v1) {
  const double lo = std::min(v0, v1), hi = std::max(v0, v1);
  return e.clip(e.binary("add", x, e.scale(e.uniform(x, lower, upper), hi - lo, 0.0)), lo, hi);
}

// Normalized Gaussian taps of `size` for a drawn sigma [1]: exp(-0.5 (d / sigma)^2) / sum.
int drawn_taps(ImageGraph& e, std::int64_t size, int sigma) {
  std::vector<double> d(static_cast<std::size_t>(size));
  for (std::int64_t i = 0; i < size; ++i) d[static_cast<std::size_t>(i)] = static_cast<double>(i) - static_cast<double>(size - 1) / 2.0;
  const int q = e.binary("divide", e.constant(Shape{size}, d), sigma);
  const int taps = e.unary("exp", e.scale(e.binary("multiply", q, q), -0.5, 0.0));
  const int total = e.op("reduce", {taps}, Attrs{{"axes", std::vector<std::int64_t>{0}}, {"keepdims", std::int64_t{1}}, {"kind", std::string("sum")}});
  return e.binary("divide", taps, total);
}

// RandomGaussianBlur: with probability drawn in factor per image, Keras's gaussian_blur with
// sigma (s0, s1) drawn once per batch in sigma's range (+1e-6); then clipped to value_range.
int gaussian_blur(ImageGraph& e, int x, const ColorAugmentationOptions& o) {
  const Shape s = e.shape(x);
  const int apply = e.binary("less", e.uniform(x, 0.0, 1.0), e.uniform(x, o.lower, o.upper));
  const int s0 = e.scale(e.uniform_scalar(x, o.sigma_lower, o.sigma_upper), 1.0, 1e-6);
  const int s1 = e.scale(e.uniform_scalar(x, o.sigma_lower, o.sigma_upper), 1.0, 1e-6);
  const std::int64_t k0 = o.kernel_h, k1 = o.kernel_w, c = s[3];
  const int ky = e.op("reshape", {drawn_taps(e, k1, s1)}, Attrs{{"shape", std::vector<std::int64_t>{k1, 1}}});
  const int kx = e.op("reshape", {drawn_taps(e, k0, s0)}, Attrs{{"shape", std::vector<std::int64_t>{1, k0}}});
  // tf.tensordot(ky, kx, 0) is (k1, k0); Keras reshapes it, as it lies, to (k0, k1, 1, 1).
  int kernel = e.op("reshape", {e.binary("multiply", ky, kx)}, Attrs{{"shape", std::vector<std::int64_t>{k0, k1, 1, 1}}});
  kernel = e.op("broadcast_to", {kernel}, Attrs{{"shape", std::vector<std::int64_t>{k0, k1, 1, c}}});
  ConvWindow w{{k0, k1}, {1, 1}, {1, 1}, "same", c};
  const int blurred = e.op("conv2d", {x, kernel}, w.attrs());
  return e.clip(e.where(apply, blurred, x), o.value_first, o.value_second);
}

}  // namespace color_augmentation_ops
}  // namespace

const char* color_augmentation_class(ColorAugmentationKind kind) {
  for (const auto& c : color_augmentation_ops::kClasses) {
    if (c.kind == kind) return c.name;
  }
  return "RandomHue";
}

bool parse_color_augmentation(const std::string& class_name, ColorAugmentationKind* kind) {
  for (const auto& c : color_augmentation_ops::kClasses) {
    if (class_name == c.name) {
      *kind = c.kind;
      return true;
    }
  }
  return false;
}

std::pair<double, double> keras_factor_range(const std::vector<double>& f, double lo_bound, double hi_bound, bool* ok) {
  if (f.size() == 1) {
    *ok = f[0] >= lo_bound && f[0] <= hi_bound;
    const double a = std::fabs(f[0]);
    return {std::max(-a, lo_bound), a};
  }
  *ok = f.size() == 2 && !(f[0] > hi_bound || f[1] < lo_bound);
  if (f.size() != 2) return {0.0, 0.0};
  return {std::min(f[0], f[1]), std::max(f[0], f[1])};
}

ColorAugmentation::ColorAugmentation(std::string name, ColorAugmentationKind kind, ColorAugmentationOptions options)
    : Layer(std::move(name)), kind_(kind), options_(std::move(options)) {
  NNFIT_CHECK(options_.lower <= options_.upper, InvalidArgument, this->name(), ": factor (", options_.lower, ", ",
              options_.upper, ") must be sorted (lower, upper)");
  if (kind_ == ColorAugmentationKind::gaussian_blur) {
    NNFIT_CHECK(options_.kernel_h > 0 && options_.kernel_w > 0 && options_.kernel_h % 2 == 1 && options_.kernel_w % 2 == 1,
                InvalidArgument, this->name(), ": kernel_size must be odd, got (", options_.kernel_h, ", ",
                options_.kernel_w, ")");
    NNFIT_CHECK(options_.sigma_lower <= options_.sigma_upper && options_.sigma_upper > 0.0, InvalidArgument, this->name(),
                ": sigma (", options_.sigma_lower, ", ", options_.sigma_upper, ") must be a sorted range above 0");
  }
}

Shape ColorAugmentation::output_shape(const Shape& s) const {
  check_spatial_rank(s, 2, name(), class_name());
  if (kind_ != ColorAugmentationKind::gaussian_blur) {
    NNFIT_CHECK(s.dim(-1) == 3, InvalidArgument, name(), ": ", class_name(), " takes RGB images (3 channels), got ",
                s.to_string());
  }
  return s;
}

int ColorAugmentation::call(GraphBuilder& b, int x) {
  using namespace color_augmentation_ops;  // NOLINT: this file's steps
  if (!b.training()) return x;
  const ColorAugmentationOptions& o = options_;
  ImageGraph e(b.graph(), name(), layer_op_seed(name(), o.seed.value_or(0)));
  switch (kind_) {
    case ColorAugmentationKind::hue: return hue(e, x, o.lower, o.upper, o.value_first, o.value_second);
    case ColorAugmentationKind::saturation: return saturation(e, x, o.lower, o.upper, o.value_first, o.value_second);
    case ColorAugmentationKind::gaussian_blur: return gaussian_blur(e, x, o);
    case ColorAugmentationKind::color_jitter: break;
  }
  // RandomColorJitter: brightness, contrast, saturation, hue, each where given, with the
  // sublayers Keras makes (value_range and seed passed on).
  bool ok = true;
  if (!o.brightness.empty()) {
    const auto [lo, hi] = keras_factor_range(o.brightness, -1.0, 1.0, &ok);
    x = brightness(e, x, lo, hi, o.value_first, o.value_second);
  }
  if (!o.contrast.empty()) {
    RandomContrastOptions c;
    c.lower = o.contrast.size() == 1 ? 0.0 : std::min(o.contrast[0], o.contrast[1]);
    c.upper = o.contrast.size() == 1 ? o.contrast[0] : std::max(o.contrast[0], o.contrast[1]);
    c.value_min = std::min(o.value_first, o.value_second);
    c.value_max = std::max(o.value_first, o.value_second);
    c.seed = o.seed;
    x = RandomContrast(name() + "/random_contrast", c).call(b, x);
  }
  if (!o.saturation.empty()) {
    const auto [lo, hi] = keras_factor_range(o.saturation, -1.0, 1.0, &ok);
    x = saturation(e, x, lo, hi, o.value_first, o.value_second);
  }
  if (!o.hue.empty()) {
    const auto [lo, hi] = keras_factor_range(o.hue, 0.0, 1.0, &ok);
    x = hue(e, x, lo, hi, o.value_first, o.value_second);
  }
  return x;
}

}  // namespace nnfit
