// Keras 3's image augmentation layers that are made of element-wise arithmetic:
// RandomBrightness, RandomGrayscale, RandomInvert, Solarization, RandomPosterization,
// AutoContrast, RandomErasing, RandomColorDegeneration, RandomSharpness,
// MaxNumBoundingBoxes, MixUp, CutMix and Equalization (channels_last). One class, ImageAugmentation, holds them: each
// emits the engine's existing ops (noise draws per sample, binary, where, reduce, crop),
// so they run on every backend with their gradients, and no kernel of their own (Note
// [Augmentation from existing ops] in image_augmentation.cpp). Random draws come from the
// noise op (seeded from the layer's name and seed, as Dropout): per step and per sample,
// repeatable for a run, never Keras's numbers; their ranges and the arithmetic on them are
// Keras 3.15's, quirks kept (Solarization's upper bounds times 255, a posterization
// draw's exclusive upper bound). Shapes exclude the batch axis: (height, width, channels).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "nnfit/nn/layer.h"

namespace nnfit {

enum class ImageAugmentationKind {
  brightness,              // RandomBrightness
  grayscale,               // RandomGrayscale
  invert,                  // RandomInvert
  solarization,            // Solarization
  posterization,           // RandomPosterization
  auto_contrast,           // AutoContrast (not random: the same in training and inference)
  erasing,                 // RandomErasing
  color_degeneration,      // RandomColorDegeneration
  sharpness,               // RandomSharpness
  max_num_bounding_boxes,  // MaxNumBoundingBoxes (images pass unchanged)
  mix_up,                  // MixUp (images only: a model's layer never sees the labels)
  cut_mix,                 // CutMix (the same)
  equalization,            // Equalization (each channel's histogram over the whole batch, as Keras's)
};

// Keras's class name of a kind, and the kind of a class name (false: not one of these).
const char* image_augmentation_class(ImageAugmentationKind kind);
bool parse_image_augmentation(const std::string& class_name, ImageAugmentationKind* kind);

// The settings as Keras's constructors derive them (the Keras codec applies Keras's rules
// to what a config holds: a single factor f reads as (-f, f), (0, f) or (1, f) by class).
struct ImageAugmentationOptions {
  // factor: the drawn range (RandomGrayscale: upper is the probability; MixUp: upper is alpha)
  double lower = 0.0, upper = 0.0;
  // value_range: what pixels span. Keras sorts it except for RandomInvert and RandomErasing,
  // which keep it as given; so does this.
  double value_first = 0.0, value_second = 255.0;
  // Solarization's threshold_factor (lower, upper); RandomErasing's scale.
  double second_lower = 0.0, second_upper = 0.0;
  std::vector<double> fill_value;  // RandomErasing: empty for null (Gaussian noise), 1 or 3 numbers
  std::int64_t bins = 256;         // Equalization
  std::int64_t max_number = 0;     // MaxNumBoundingBoxes
  std::int64_t box_fill_value = -1;
  std::optional<std::int64_t> seed;  // null: none
  std::string bounding_box_format;   // "" for null; kept to be written back
};

class ImageAugmentation final : public Layer {
 public:
  // throws: InvalidArgument naming the layer and setting for a range Keras refuses.
  ImageAugmentation(std::string name, ImageAugmentationKind kind, ImageAugmentationOptions options);
  ImageAugmentationKind kind() const { return kind_; }
  const ImageAugmentationOptions& options() const { return options_; }
  std::string class_name() const override { return image_augmentation_class(kind_); }
  Shape output_shape(const Shape& input_shape) const override;
  int call(GraphBuilder& builder, int x) override;

 private:
  ImageAugmentationKind kind_;
  ImageAugmentationOptions options_;
};

}  // namespace nnfit
