// Preprocessing ops (see preprocessing.h). Plain loops over f32: they run per element on
// the pipeline's threads, where the parallel map, not SIMD, is the lever. Every op reads
// its input through to_f32 so any numeric dtype is accepted.
#include "nnfit/data/preprocessing.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

#include "data/element_util.h"
#include "nnfit/core/error.h"

namespace nnfit::data {
namespace {

double get(const Tensor& t, std::int64_t i) {
  switch (t.dtype()) {
    case DType::f32: return t.data<float>()[i];
    case DType::f16: return f16_to_float(t.data<std::uint16_t>()[i]);
    case DType::bf16: return bf16_to_float(t.data<std::uint16_t>()[i]);
    case DType::i32: return t.data<std::int32_t>()[i];
    case DType::i64: return static_cast<double>(t.data<std::int64_t>()[i]);
    case DType::u8: case DType::boolean: return t.data<std::uint8_t>()[i];
  }
  return 0;
}

void set(const Tensor& t, std::int64_t i, double v) {
  switch (t.dtype()) {
    case DType::f32: t.data<float>()[i] = static_cast<float>(v); break;
    case DType::f16: t.data<std::uint16_t>()[i] = float_to_f16(static_cast<float>(v)); break;
    case DType::bf16: t.data<std::uint16_t>()[i] = float_to_bf16(static_cast<float>(v)); break;
    case DType::i32: t.data<std::int32_t>()[i] = static_cast<std::int32_t>(v); break;
    case DType::i64: t.data<std::int64_t>()[i] = static_cast<std::int64_t>(v); break;
    case DType::u8: t.data<std::uint8_t>()[i] = static_cast<std::uint8_t>(v); break;
    case DType::boolean: t.data<std::uint8_t>()[i] = v != 0 ? 1 : 0; break;
  }
}

Tensor to_f32(const Tensor& t) { return t.dtype() == DType::f32 ? t : cast(t, DType::f32); }

void check_image(const Tensor& image, const char* who) {
  NNFIT_CHECK(image.shape().rank() == 3, InvalidArgument, who, ": expects an [H, W, C] image, got shape ",
              image.shape().to_string());
}

// Uniform in [0, 1) from a seed (53 random bits).
double uniform01(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

}  // namespace

std::uint64_t element_seed(std::uint64_t base, std::uint64_t index) {
  std::uint64_t z = base + 0x9e3779b97f4a7c15ull * (index + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

Tensor cast(const Tensor& t, DType dtype) {
  Tensor out = Tensor::zeros(t.shape(), dtype);
  for (std::int64_t i = 0; i < t.numel(); ++i) set(out, i, get(t, i));
  return out;
}

// The u8 -> f32 loop of rescale, the per-batch normalize of image pipelines: compiled for
// AVX2 too and chosen at load time, since the baseline x86-64 build converts 4 bytes per
// instruction where AVX2 converts 8 ([128, 28, 28] on this machine: 17.5 -> 7.0-8.4 us).
#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target_clones("avx2", "default")))
#endif
static void rescale_u8(const std::uint8_t* __restrict in, float* __restrict o, std::int64_t n, float scale,
                       float offset) {
  for (std::int64_t i = 0; i < n; ++i) o[i] = static_cast<float>(in[i]) * scale + offset;
}

Tensor rescale(const Tensor& t, float scale, float offset) {
  Tensor out = Tensor::uninitialized(t.shape(), DType::f32);
  float* o = out.data<float>();
  const std::int64_t n = t.numel();
  if (t.dtype() == DType::u8) {
    rescale_u8(t.data<std::uint8_t>(), o, n, scale, offset);
  } else if (t.dtype() == DType::f32) {
    const float* in = t.data<float>();
    for (std::int64_t i = 0; i < n; ++i) o[i] = in[i] * scale + offset;
  } else {
    for (std::int64_t i = 0; i < n; ++i) o[i] = static_cast<float>(get(t, i)) * scale + offset;
  }
  return out;
}

Tensor convert_image_dtype(const Tensor& t, DType dtype) {
  if (t.dtype() == DType::u8 && dtype == DType::f32) {
    Tensor out = Tensor::zeros(t.shape(), dtype);
    for (std::int64_t i = 0; i < t.numel(); ++i) out.data<float>()[i] = static_cast<float>(t.data<std::uint8_t>()[i]) / 255.0f;
    return out;
  }
  if (t.dtype() == DType::f32 && dtype == DType::u8) {
    Tensor out = Tensor::zeros(t.shape(), dtype);
    for (std::int64_t i = 0; i < t.numel(); ++i) {
      out.data<std::uint8_t>()[i] = static_cast<std::uint8_t>(std::clamp(t.data<float>()[i] * 255.0f + 0.5f, 0.0f, 255.0f));
    }
    return out;
  }
  return cast(t, dtype);
}

Tensor normalize(const Tensor& t, const std::vector<float>& mean, const std::vector<float>& stddev) {
  const std::int64_t channels = t.shape().rank() == 0 ? 1 : t.shape().dim(-1);
  auto fits = [&](std::size_t n) { return n == 1 || static_cast<std::int64_t>(n) == channels; };
  NNFIT_CHECK(fits(mean.size()) && fits(stddev.size()), InvalidArgument, "normalize: ", mean.size(), " means and ",
              stddev.size(), " stddevs for ", channels, " channels (give 1 or one per channel)");
  for (float s : stddev) NNFIT_CHECK(s != 0.0f, InvalidArgument, "normalize: a stddev is 0");
  Tensor src = to_f32(t);
  Tensor out = Tensor::zeros(t.shape(), DType::f32);
  for (std::int64_t i = 0; i < t.numel(); ++i) {
    const auto c = static_cast<std::size_t>(i % channels);
    out.data<float>()[i] = (src.data<float>()[i] - mean[mean.size() == 1 ? 0 : c]) / stddev[stddev.size() == 1 ? 0 : c];
  }
  return out;
}

Tensor resize(const Tensor& image, std::int64_t height, std::int64_t width, ResizeMethod method) {
  check_image(image, "resize");
  NNFIT_CHECK(height > 0 && width > 0, InvalidArgument, "resize: size must be positive, got ", height, "x", width);
  const std::int64_t h = image.shape()[0], w = image.shape()[1], c = image.shape()[2];
  Tensor src = to_f32(image);
  const float* s = src.data<float>();
  Tensor out = Tensor::zeros(Shape{height, width, c}, DType::f32);
  float* d = out.data<float>();
  const double sy = static_cast<double>(h) / static_cast<double>(height), sx = static_cast<double>(w) / static_cast<double>(width);
  for (std::int64_t y = 0; y < height; ++y) {
    for (std::int64_t x = 0; x < width; ++x) {
      float* px = d + (y * width + x) * c;
      if (method == ResizeMethod::nearest) {
        const std::int64_t iy = std::min<std::int64_t>(h - 1, static_cast<std::int64_t>(std::floor((static_cast<double>(y) + 0.5) * sy)));
        const std::int64_t ix = std::min<std::int64_t>(w - 1, static_cast<std::int64_t>(std::floor((static_cast<double>(x) + 0.5) * sx)));
        std::copy_n(s + (iy * w + ix) * c, c, px);
        continue;
      }
      const double fy = std::clamp((static_cast<double>(y) + 0.5) * sy - 0.5, 0.0, static_cast<double>(h - 1));
      const double fx = std::clamp((static_cast<double>(x) + 0.5) * sx - 0.5, 0.0, static_cast<double>(w - 1));
      const auto y0 = static_cast<std::int64_t>(fy), x0 = static_cast<std::int64_t>(fx);
      const std::int64_t y1 = std::min(y0 + 1, h - 1), x1 = std::min(x0 + 1, w - 1);
      const double wy = fy - static_cast<double>(y0), wx = fx - static_cast<double>(x0);
      for (std::int64_t k = 0; k < c; ++k) {
        const double top = s[(y0 * w + x0) * c + k] * (1 - wx) + s[(y0 * w + x1) * c + k] * wx;
        const double bottom = s[(y1 * w + x0) * c + k] * (1 - wx) + s[(y1 * w + x1) * c + k] * wx;
        px[k] = static_cast<float>(top * (1 - wy) + bottom * wy);
      }
    }
  }
  return out;
}

Tensor random_crop(const Tensor& image, std::int64_t height, std::int64_t width, std::uint64_t seed) {
  check_image(image, "random_crop");
  const std::int64_t h = image.shape()[0], w = image.shape()[1], c = image.shape()[2];
  NNFIT_CHECK(height > 0 && width > 0 && height <= h && width <= w, InvalidArgument, "random_crop: cannot crop ",
              height, "x", width, " from an image of ", image.shape().to_string());
  std::mt19937_64 rng(seed);
  const auto oy = static_cast<std::int64_t>(detail::bounded(rng, static_cast<std::uint64_t>(h - height + 1)));
  const auto ox = static_cast<std::int64_t>(detail::bounded(rng, static_cast<std::uint64_t>(w - width + 1)));
  Tensor out = Tensor::zeros(Shape{height, width, c}, image.dtype());
  const std::size_t es = dtype_size(image.dtype());
  for (std::int64_t y = 0; y < height; ++y) {
    std::memcpy(static_cast<char*>(out.raw()) + static_cast<std::size_t>(y * width * c) * es,
                static_cast<const char*>(image.raw()) + static_cast<std::size_t>(((oy + y) * w + ox) * c) * es,
                static_cast<std::size_t>(width * c) * es);
  }
  return out;
}

Tensor random_flip_left_right(const Tensor& image, std::uint64_t seed) {
  check_image(image, "random_flip_left_right");
  std::mt19937_64 rng(seed);
  if (uniform01(rng) >= 0.5) return image;
  const std::int64_t h = image.shape()[0], w = image.shape()[1], c = image.shape()[2];
  Tensor out = Tensor::zeros(image.shape(), image.dtype());
  const std::size_t px = static_cast<std::size_t>(c) * dtype_size(image.dtype());
  for (std::int64_t y = 0; y < h; ++y) {
    for (std::int64_t x = 0; x < w; ++x) {
      std::memcpy(static_cast<char*>(out.raw()) + static_cast<std::size_t>(y * w + x) * px,
                  static_cast<const char*>(image.raw()) + static_cast<std::size_t>(y * w + (w - 1 - x)) * px, px);
    }
  }
  return out;
}

Tensor random_brightness(const Tensor& image, float max_delta, std::uint64_t seed) {
  NNFIT_CHECK(max_delta >= 0, InvalidArgument, "random_brightness: max_delta must be >= 0");
  std::mt19937_64 rng(seed);
  const auto delta = static_cast<float>((uniform01(rng) * 2 - 1) * max_delta);
  Tensor out = to_f32(image).clone();
  for (std::int64_t i = 0; i < out.numel(); ++i) out.data<float>()[i] += delta;
  return out;
}

Tensor random_contrast(const Tensor& image, float lower, float upper, std::uint64_t seed) {
  check_image(image, "random_contrast");
  NNFIT_CHECK(0 <= lower && lower < upper, InvalidArgument, "random_contrast: need 0 <= lower < upper");
  std::mt19937_64 rng(seed);
  const auto factor = static_cast<float>(lower + uniform01(rng) * (upper - lower));
  Tensor out = to_f32(image).clone();
  const std::int64_t c = image.shape()[2], pixels = image.shape()[0] * image.shape()[1];
  float* d = out.data<float>();
  for (std::int64_t k = 0; k < c; ++k) {
    double mean = 0;
    for (std::int64_t p = 0; p < pixels; ++p) mean += d[p * c + k];
    mean /= static_cast<double>(std::max<std::int64_t>(pixels, 1));
    for (std::int64_t p = 0; p < pixels; ++p) d[p * c + k] = static_cast<float>((d[p * c + k] - mean) * factor + mean);
  }
  return out;
}

Tensor one_hot(const Tensor& labels, std::int64_t depth) {
  NNFIT_CHECK(depth > 0, InvalidArgument, "one_hot: depth must be positive, got ", depth);
  NNFIT_CHECK(labels.dtype() == DType::i32 || labels.dtype() == DType::i64 || labels.dtype() == DType::u8,
              InvalidArgument, "one_hot: labels must be integers, got ", dtype_name(labels.dtype()));
  std::vector<std::int64_t> dims = labels.shape().dims();
  dims.push_back(depth);
  Tensor out = Tensor::zeros(Shape(std::move(dims)), DType::f32);
  for (std::int64_t i = 0; i < labels.numel(); ++i) {
    const auto v = static_cast<std::int64_t>(get(labels, i));
    if (v >= 0 && v < depth) out.data<float>()[i * depth + v] = 1.0f;
  }
  return out;
}

}  // namespace nnfit::data
