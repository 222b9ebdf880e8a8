// Keras 3's colour augmentation layers built on keras.ops.image's conversions: RandomHue,
// RandomSaturation, RandomColorJitter and RandomGaussianBlur (channels_last). One class,
// ColorAugmentation, holds them: each emits the engine's existing ops (the noise op's
// per-sample draws, the HSV conversions and Gaussian kernels of image_color.h, a grouped
// convolution), so they run on every backend with their gradients and need no kernel of
// their own. Draws are per step and per sample, repeatable for a run, never Keras's
// numbers; their ranges and the arithmetic on them are Keras 3.15's (RandomSaturation
// converts raw pixels to HSV and clips saturation to value_range, as Keras does). In
// inference each is the identity. Shapes exclude the batch axis: (height, width, channels).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "nnfit/nn/layer.h"

namespace nnfit {

enum class ColorAugmentationKind { hue, saturation, color_jitter, gaussian_blur };

// Keras's class name of a kind, and the kind of a class name (false: not one of these).
const char* color_augmentation_class(ColorAugmentationKind kind);
bool parse_color_augmentation(const std::string& class_name, ColorAugmentationKind* kind);

// The settings as Keras's constructors derive them (the Keras codec applies Keras's rules).
struct ColorAugmentationOptions {
  // factor: the drawn range (RandomHue: the hue shift's size; RandomSaturation: the
  // saturation draw; RandomGaussianBlur: the blur probability's range).
  double lower = 0.0, upper = 0.0;
  // value_range as written: RandomSaturation keeps it sorted, the others as given.
  double value_first = 0.0, value_second = 255.0;
  // RandomGaussianBlur: the kernel (odd sizes) and sigma's range.
  std::int64_t kernel_h = 3, kernel_w = 3;
  double sigma_lower = 0.0, sigma_upper = 1.0;
  // RandomColorJitter: each factor as written (empty: null), one number or two.
  std::vector<double> brightness, contrast, saturation, hue;
  std::optional<std::int64_t> seed;
};

class ColorAugmentation final : public Layer {
 public:
  // throws: InvalidArgument naming the layer and setting for a range Keras refuses.
  ColorAugmentation(std::string name, ColorAugmentationKind kind, ColorAugmentationOptions options);
  ColorAugmentationKind kind() const { return kind_; }
  const ColorAugmentationOptions& options() const { return options_; }
  std::string class_name() const override { return color_augmentation_class(kind_); }
  Shape output_shape(const Shape& input_shape) const override;
  int call(GraphBuilder& builder, int x) override;

 private:
  ColorAugmentationKind kind_;
  ColorAugmentationOptions options_;
};

// Keras's _set_factor: a number f in [lo_bound, hi_bound] reads as (max(-|f|, lo_bound), |f|);
// a pair is sorted. `ok` is false where Keras refuses it.
std::pair<double, double> keras_factor_range(const std::vector<double>& f, double lo_bound, double hi_bound, bool* ok);

}  // namespace nnfit
