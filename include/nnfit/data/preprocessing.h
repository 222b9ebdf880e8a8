// Preprocessing ops for use inside Dataset::map, on single host tensors (images are
// [H, W, C], NHWC's per-element layout). Random ops are stateless: the same seed gives
// the same result, so a pipeline repeats exactly even under a non-deterministic parallel
// map. Derive a per-element seed with element_seed(base, index) (index from enumerate()),
// as tf.image.stateless_* ops take a seed pair.
#pragma once
#include <cstdint>
#include <vector>

#include "nnfit/core/tensor.h"

namespace nnfit::data {

// splitmix64 of (base, index): well-mixed, platform-independent per-element seeds.
std::uint64_t element_seed(std::uint64_t base, std::uint64_t index);

// Value conversion to dtype (truncation toward zero for float -> int, as tf.cast).
Tensor cast(const Tensor& t, DType dtype);
// tf.image.convert_image_dtype: u8 <-> f32 with scaling to [0, 1] (u8 -> f32 divides by
// 255; f32 -> u8 multiplies by 255 and saturates); other pairs behave like cast.
Tensor convert_image_dtype(const Tensor& t, DType dtype);
// Keras's Rescaling: x * scale + offset as f32, in one pass (u8 images: scale 1/255).
Tensor rescale(const Tensor& t, float scale, float offset = 0.0f);
// (x - mean[c]) / stddev[c] over the last axis (one value each = all channels), as f32.
// throws: InvalidArgument if the sizes do not match the channel count or a stddev is 0.
Tensor normalize(const Tensor& t, const std::vector<float>& mean, const std::vector<float>& stddev);

enum class ResizeMethod { bilinear, nearest };
// [H, W, C] -> [height, width, C] f32, with half-pixel centers (tf.image.resize, antialias off).
Tensor resize(const Tensor& image, std::int64_t height, std::int64_t width,
              ResizeMethod method = ResizeMethod::bilinear);
// A [height, width, C] window at a seeded uniform offset. throws: InvalidArgument if larger.
Tensor random_crop(const Tensor& image, std::int64_t height, std::int64_t width, std::uint64_t seed);
// Mirrors the width axis with probability 1/2.
Tensor random_flip_left_right(const Tensor& image, std::uint64_t seed);
// Adds a uniform delta in [-max_delta, max_delta) to every value (f32 result).
Tensor random_brightness(const Tensor& image, float max_delta, std::uint64_t seed);
// Scales each channel's deviation from its mean by a uniform factor in [lower, upper) (f32).
Tensor random_contrast(const Tensor& image, float lower, float upper, std::uint64_t seed);
// Integer labels (any shape, i32/i64/u8) -> f32 [..., depth]; out-of-range labels give
// all-zero rows, as tf.one_hot.
Tensor one_hot(const Tensor& labels, std::int64_t depth);

}  // namespace nnfit::data
