// Keras 3's random image augmentation layers that run inside a model: RandomFlip,
// RandomTranslation, RandomRotation, RandomZoom, RandomShear and RandomContrast (channels_last). Like
// Keras's, each is the identity at inference and draws anew for every sample of every
// training step; the draws come from nnfit's counter-based generator (seeded from the
// layer's name and seed, as Dropout), so they repeat for a run but cannot equal Keras's.
// The geometry ops sample as keras.ops.image.affine_transform on the TensorFlow backend.
// Shapes exclude the batch axis: (height, width, channels).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "nnfit/nn/layer.h"

namespace nnfit {

struct RandomFlipOptions {
  std::string mode = "horizontal_and_vertical";  // horizontal, vertical, horizontal_and_vertical
  std::optional<std::int64_t> seed;               // Keras's null: none
  std::string bounding_box_format;                // "" for null; kept to be written back
};

// One draw per sample: with probability 1/2 the image is flipped along every axis the mode
// names (horizontal_and_vertical flips both together, as Keras does).
class RandomFlip final : public Layer {
 public:
  RandomFlip(std::string name, RandomFlipOptions options);
  const RandomFlipOptions& options() const { return options_; }
  std::string class_name() const override { return "RandomFlip"; }
  Shape output_shape(const Shape& input_shape) const override;
  int call(GraphBuilder& builder, int x) override;

 private:
  RandomFlipOptions options_;
};

enum class RandomAffineKind { translation, rotation, zoom, shear };

// A factor is kept as Keras wrote it (one number, or a pair in the given order) so it is
// written back the same; the range it means is the layer's (factor_range()).
struct RandomAffineOptions {
  // RandomTranslation/RandomZoom: height_factor; RandomRotation: factor; RandomShear: y_factor.
  std::vector<double> height_factor;
  // RandomTranslation (required), RandomZoom (empty: Keras's null, the height's zoom),
  // RandomShear's x_factor.
  std::vector<double> width_factor;
  std::string fill_mode = "reflect";       // reflect, wrap, constant, nearest
  std::string interpolation = "bilinear";  // bilinear, nearest
  double fill_value = 0.0;                 // read by fill_mode constant
  std::optional<std::int64_t> seed;
  std::string bounding_box_format;
};

// RandomTranslation (shift by a fraction of the height and width), RandomRotation (by a
// fraction of a full turn about the centre), RandomZoom (each output pixel reads the input
// at 1 + factor times its distance from the centre: a positive factor zooms out, showing
// more of the image with the border filled by fill_mode, as Keras's), RandomShear (x' = x +
// sx·y, y' = sy·x + y about the origin, both factors negated together for half the
// samples, as Keras's shear matrix).
class RandomAffine final : public Layer {
 public:
  // throws: InvalidArgument naming the key and value for a factor outside Keras's bounds
  // or an unknown fill_mode / interpolation.
  RandomAffine(std::string name, RandomAffineKind kind, RandomAffineOptions options);
  RandomAffineKind kind() const { return kind_; }
  const RandomAffineOptions& options() const { return options_; }
  std::string class_name() const override;
  Shape output_shape(const Shape& input_shape) const override;
  int call(GraphBuilder& builder, int x) override;
  // The (lower, upper) range Keras derives from a factor: a number f gives (-|f|, |f|),
  // a pair is sorted.
  static std::pair<double, double> factor_range(const std::vector<double>& factor);

 private:
  RandomAffineKind kind_;
  RandomAffineOptions options_;
};

struct RandomContrastOptions {
  // Keras's factor as written: (lower, upper) in [0, 1]; the contrast factor is drawn from
  // [1 - lower, 1 + upper]. A single number f reads as (0, f), as Keras 3 reads it.
  double lower = 0.0, upper = 0.0;
  double value_min = 0.0, value_max = 255.0;  // value_range: outputs are clipped to it
  std::optional<std::int64_t> seed;
};

// y = clip((x - mean) * f + mean, value_range), mean per image and channel over its pixels.
class RandomContrast final : public Layer {
 public:
  RandomContrast(std::string name, RandomContrastOptions options);
  const RandomContrastOptions& options() const { return options_; }
  std::string class_name() const override { return "RandomContrast"; }
  Shape output_shape(const Shape& input_shape) const override;
  int call(GraphBuilder& builder, int x) override;

 private:
  RandomContrastOptions options_;
};

}  // namespace nnfit
