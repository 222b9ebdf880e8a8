// ImageAugmentation: Keras 3.15's element-wise image augmentation layers (RandomBrightness,
// RandomGrayscale, RandomInvert, Solarization, RandomPosterization, AutoContrast,
// RandomErasing, RandomColorDegeneration, RandomSharpness, MaxNumBoundingBoxes, MixUp,
// CutMix, Equalization) written with the engine's existing ops, Keras's transform_images
// step for step.
//
// Note [Augmentation from existing ops]: each of these layers is a few element-wise steps
// on per-sample random numbers, so each is emitted as a small graph of ops the engine has
// (noise for the draws, binary, unary, where, reduce, crop, pad, cumulative) rather than
// as a kernel of its own: every backend runs them, gradients flow where Keras's would, and
// no new kernel needs a reference, an OpenMP and a CUDA version. A per-sample draw is the
// noise op (uniform_add, keyed by run seed, node seed, step and element) over a
// [batch, 1, 1, 1] tensor of the range's lower end, made from the input by crop -> isnan
// -> scale by 0 (a constant whatever the pixels hold, NaN included); each draw of a layer
// has its own node seed. Arithmetic follows Keras's order of operations in float32, so
// with a range of one value (factor (0.3, 0.3), bits fixed) the output equals Keras's.
#include <algorithm>
#include <cmath>

#include "nn/layers/layer_seed.h"
#include "nn/layers/spatial_axes.h"
#include "nnfit/core/error.h"
#include "nnfit/nn/image_augmentation_layers.h"

namespace nnfit {

namespace {
// Named inside the anonymous namespace: unity builds join this file with others.
namespace image_augmentation_ops {

constexpr struct {
  ImageAugmentationKind kind;
  const char* name;
} kClasses[] = {{ImageAugmentationKind::brightness, "RandomBrightness"},
                {ImageAugmentationKind::grayscale, "RandomGrayscale"},
                {ImageAugmentationKind::invert, "RandomInvert"},
                {ImageAugmentationKind::solarization, "Solarization"},
                {ImageAugmentationKind::posterization, "RandomPosterization"},
                {ImageAugmentationKind::auto_contrast, "AutoContrast"},
                {ImageAugmentationKind::erasing, "RandomErasing"},
                {ImageAugmentationKind::color_degeneration, "RandomColorDegeneration"},
                {ImageAugmentationKind::sharpness, "RandomSharpness"},
                {ImageAugmentationKind::max_num_bounding_boxes, "MaxNumBoundingBoxes"},
                {ImageAugmentationKind::mix_up, "MixUp"},
                {ImageAugmentationKind::cut_mix, "CutMix"},
                {ImageAugmentationKind::equalization, "Equalization"}};

// Emits one layer's ops: names them `<layer>/<op>_<k>` and numbers its draws' seeds.
class AugmentGraph {
 public:
  AugmentGraph(Graph& g, std::string layer, std::int64_t seed) : g_(g), layer_(std::move(layer)), seed_(seed) {}

  int op(const std::string& op, const std::vector<int>& in, Attrs a = {}) {
    return g_.add(op, in, std::move(a), layer_ + "/" + op + "_" + std::to_string(count_++));
  }
  Shape shape(int v) const { return g_.desc(v).shape; }
  int unary(const std::string& kind, int x) { return op("unary", {x}, Attrs{{"kind", kind}}); }
  int binary(const std::string& kind, int a, int b) { return op("binary", {a, b}, Attrs{{"kind", kind}}); }
  int scale(int x, double factor, double offset) {
    return op("scale", {x}, Attrs{{"factor", factor}, {"offset", offset}});
  }
  int where(int cond, int a, int b) { return op("where", {cond, a, b}); }
  int crop(int x, std::vector<std::int64_t> begin, std::vector<std::int64_t> size) {
    return op("crop", {x}, Attrs{{"begin", std::move(begin)}, {"shape", std::move(size)}});
  }
  // `c` in every element of a tensor shaped `dims` (each at most x's), whatever x holds.
  int fill(int x, const std::vector<std::int64_t>& dims, double c) {
    std::vector<std::int64_t> begin(dims.size(), 0);
    return scale(unary("isnan", crop(x, begin, dims)), 0.0, c);
  }
  // `c` shaped [N, 1, 1, 1]: a per-sample value that broadcasts over an image.
  int per_sample(int x, double c) { return fill(x, {shape(x)[0], 1, 1, 1}, c); }
  int scalar(int x, double c) { return fill(x, {1, 1, 1, 1}, c); }
  // A uniform draw in [lower, upper) per sample (TensorFlow's minval + (maxval - minval)·u).
  int uniform(int x, double lower, double upper) {
    Attrs a{{"kind", std::string("uniform_add")}, {"value", upper - lower}, {"seed", next_seed()}};
    return op("noise", {per_sample(x, lower)}, a);
  }
  // One uniform draw in [lower, upper) for the whole batch ([1, 1, 1, 1]).
  int uniform_batch(int x, double lower, double upper) {
    Attrs a{{"kind", std::string("uniform_add")}, {"value", upper - lower}, {"seed", next_seed()}};
    return op("noise", {scalar(x, lower)}, a);
  }
  // A Gamma(alpha, 1) draw per sample (the noise op's gamma_add).
  int gamma(int x, double alpha) {
    Attrs a{{"kind", std::string("gamma_add")}, {"value", 1.0}, {"rate", alpha}, {"seed", next_seed()}};
    return op("noise", {per_sample(x, 0.0)}, a);
  }
  // log u per sample for u uniform in (0, 1] (1 minus a [0, 1) draw, kept above 1e-30 where
  // float32 rounds it to 0).
  int log_uniform(int x) {
    const int u = binary("subtract", scalar(x, 1.0), uniform(x, 0.0, 1.0));
    return unary("log", binary("maximum", u, scalar(x, 1e-30)));
  }
  // value·n for n standard normal, per element of x's shape.
  int normal_like(int x, double value) {
    Attrs a{{"kind", std::string("gaussian_add")}, {"value", value}, {"seed", next_seed()}};
    return op("noise", {scale(unary("isnan", x), 0.0, 0.0)}, a);
  }
  // numpy.clip(x, lower, upper), as TensorFlow's clip_by_value: min(max(x, lower), upper).
  int clip(int x, double lower, double upper) {
    return binary("minimum", binary("maximum", x, scalar(x, lower)), scalar(x, upper));
  }
  // Keras's _transform_value_range: (x - from_lo) / (from_hi - from_lo) · (to_hi - to_lo) + to_lo
  // in float32, the identity when the ranges are equal.
  int value_range(int x, double from_lo, double from_hi, double to_lo, double to_hi) {
    if (from_lo == to_lo && from_hi == to_hi) return x;
    const float flo = static_cast<float>(from_lo), fhi = static_cast<float>(from_hi);
    const float tlo = static_cast<float>(to_lo), thi = static_cast<float>(to_hi);
    x = binary("subtract", x, scalar(x, flo));
    x = binary("divide", x, scalar(x, static_cast<double>(fhi - flo)));
    x = binary("multiply", x, scalar(x, static_cast<double>(thi - tlo)));
    return binary("add", x, scalar(x, tlo));
  }
  // Keras's rgb_to_grayscale on the TensorFlow backend: the channels dotted with
  // (0.2989, 0.5870, 0.1140); [N, H, W, 1].
  int grayscale(int x) {
    const Shape s = shape(x);
    static const double kWeights[] = {0.2989, 0.5870, 0.1140};
    int sum = -1;
    for (std::int64_t c = 0; c < 3; ++c) {
      const int ch = crop(x, {0, 0, 0, c}, {s[0], s[1], s[2], 1});
      const int term = binary("multiply", ch, scalar(x, static_cast<float>(kWeights[c])));
      sum = sum < 0 ? term : binary("add", sum, term);
    }
    return sum;
  }
  // 0, 1, ..., n - 1 along `axis` of a tensor that is 1 elsewhere (rank 4).
  int iota(int x, int axis) {
    std::vector<std::int64_t> dims{1, 1, 1, 1};
    dims[static_cast<std::size_t>(axis)] = shape(x)[axis];
    const int ones = fill(x, dims, 1.0);
    Attrs a{{"kind", std::string("cumsum")}, {"axis", std::int64_t{axis}}, {"reverse", std::int64_t{0}}};
    return scale(op("cumulative", {ones}, a), 1.0, -1.0);
  }
  int constant_tensor(const std::string& what, const std::vector<double>& values) {
    Tensor t = Tensor::zeros(Shape{1, 1, 1, static_cast<std::int64_t>(values.size())});
    for (std::size_t i = 0; i < values.size(); ++i) t.data<float>()[i] = static_cast<float>(values[i]);
    return g_.add_variable(layer_ + "/" + what, t);
  }

 private:
  std::int64_t next_seed() {
    return static_cast<std::int64_t>((static_cast<std::uint64_t>(seed_) + 0x9E3779B97F4A7C15ull * ++draws_) >> 1);
  }

  Graph& g_;
  std::string layer_;
  std::int64_t seed_;
  int count_ = 0;
  std::uint64_t draws_ = 0;
};

std::pair<double, double> sorted_range(double a, double b) { return {std::min(a, b), std::max(a, b)}; }

int brightness(AugmentGraph& e, int x, const ImageAugmentationOptions& o) {
  const auto [lo, hi] = sorted_range(o.value_first, o.value_second);
  const int delta = e.binary("multiply", e.uniform(x, o.lower, o.upper), e.scalar(x, hi - lo));
  return e.clip(e.binary("add", x, delta), lo, hi);
}

// Keras: where(uniform(0, 1) < factor, grayscale, images); one channel passes unchanged.
int grayscale(AugmentGraph& e, int x, const ImageAugmentationOptions& o) {
  if (e.shape(x)[3] == 1) return x;
  const int apply = e.binary("less", e.uniform(x, 0.0, 1.0), e.per_sample(x, o.upper));
  return e.where(apply, e.grayscale(x), x);
}

int invert(AugmentGraph& e, int x, const ImageAugmentationOptions& o) {
  const int probability = e.uniform(x, o.lower, o.upper);
  const int apply = e.binary("less", e.uniform(x, 0.0, 1.0), probability);
  return e.where(apply, e.binary("subtract", e.scalar(x, o.value_second), x), x);
}

int solarization(AugmentGraph& e, int x, const ImageAugmentationOptions& o) {
  const auto [lo, hi] = sorted_range(o.value_first, o.value_second);
  // Keras draws the addition and the threshold in [lower, upper · 255): only the upper end
  // is scaled to pixels.
  const int additions = e.uniform(x, o.lower, o.upper * 255.0);
  const int thresholds = e.uniform(x, o.second_lower, o.second_upper * 255.0);
  int r = e.clip(e.binary("add", e.value_range(x, lo, hi, 0.0, 255.0), additions), 0.0, 255.0);
  r = e.where(e.binary("less", r, thresholds), r, e.binary("subtract", e.scalar(x, 255.0), r));
  return e.value_range(r, 0.0, 255.0, lo, hi);
}

int posterization(AugmentGraph& e, int x, const ImageAugmentationOptions& o) {
  const auto [lo, hi] = sorted_range(o.value_first, o.value_second);
  // randint(minval, maxval) excludes maxval; a range of one value is that value.
  const int bits = o.lower == o.upper ? e.per_sample(x, o.lower) : e.unary("floor", e.uniform(x, o.lower, o.upper));
  const int step = e.binary("power", e.scalar(x, 2.0), e.binary("subtract", e.scalar(x, 8.0), bits));
  // The uint8 cast truncates; (v >> s) << s is floor(v / 2^s)·2^s, exact in float32.
  const int v = e.unary("trunc", e.value_range(x, lo, hi, 0.0, 255.0));
  const int kept = e.binary("multiply", e.unary("floor", e.binary("divide", v, step)), step);
  return e.value_range(kept, 0.0, 255.0, lo, hi);
}

int auto_contrast(AugmentGraph& e, int x, const ImageAugmentationOptions& o) {
  const auto [lo, hi] = sorted_range(o.value_first, o.value_second);
  const int images = e.value_range(x, lo, hi, 0.0, 255.0);
  const Attrs spatial{{"axes", std::vector<std::int64_t>{1, 2}}, {"keepdims", std::int64_t{1}}};
  Attrs low_attrs = spatial, high_attrs = spatial;
  low_attrs.set("kind", std::string("min"));
  high_attrs.set("kind", std::string("max"));
  const int low = e.op("reduce", {images}, low_attrs), high = e.op("reduce", {images}, high_attrs);
  const int scale = e.binary("divide", e.scalar(x, 255.0), e.binary("subtract", high, low));
  const int offset = e.binary("multiply", e.unary("negative", low), scale);
  int r = e.binary("add", e.binary("multiply", images, scale), offset);
  r = e.value_range(e.clip(r, 0.0, 255.0), 0.0, 255.0, lo, hi);
  // A flat channel (high == low) gives NaN: Keras keeps the input there.
  return e.where(e.unary("isnan", r), x, r);
}

int erasing(AugmentGraph& e, int x, const ImageAugmentationOptions& o) {
  const Shape s = e.shape(x);
  // Per axis: a side of sqrt(scale draw) times the image's, placed uniformly inside it.
  const auto bounds = [&](std::int64_t length) {
    const int side = e.binary("multiply", e.unary("sqrt", e.uniform(x, o.second_lower, o.second_upper)),
                              e.scalar(x, static_cast<double>(length)));
    const int start = e.binary("multiply", e.uniform(x, 0.0, 1.0),
                               e.binary("subtract", e.scalar(x, static_cast<double>(length)), side));
    return std::pair<int, int>{start, e.binary("add", start, side)};
  };
  const auto [x0, x1] = bounds(s[2]);
  const auto [y0, y1] = bounds(s[1]);
  const int gx = e.iota(x, 2), gy = e.iota(x, 1);
  const int in_x = e.binary("logical_and", e.binary("greater_equal", gx, x0), e.binary("less", gx, x1));
  const int in_y = e.binary("logical_and", e.binary("greater_equal", gy, y0), e.binary("less", gy, y1));
  const int mask = e.binary("logical_and", in_x, in_y);
  const int probability = e.uniform(x, o.lower, o.upper);
  const int apply = e.binary("less", e.uniform(x, 0.0, 1.0), probability);
  int fill;
  if (o.fill_value.empty()) {
    fill = e.normal_like(x, o.value_second);
  } else if (o.fill_value.size() == 1) {
    fill = e.scalar(x, o.fill_value[0]);
  } else {
    fill = e.constant_tensor("fill_value", o.fill_value);
  }
  fill = e.binary("minimum", e.binary("maximum", fill, e.scalar(x, o.value_first)), e.scalar(x, o.value_second));
  return e.where(apply, e.where(mask, fill, x), x);
}

int color_degeneration(AugmentGraph& e, int x, const ImageAugmentationOptions& o) {
  const auto [lo, hi] = sorted_range(o.value_first, o.value_second);
  const int factor = e.uniform(x, o.lower, o.upper);
  const int r = e.binary("add", x, e.binary("multiply", factor, e.binary("subtract", e.grayscale(x), x)));
  return e.clip(r, lo, hi);
}

// Keras: a depthwise 3x3 smoothing with weights 1/13 around 5/13 ("same" zero padding),
// then x + (1 - 2·factor)·(smoothed - x).
int sharpness(AugmentGraph& e, int x, const ImageAugmentationOptions& o) {
  const auto [lo, hi] = sorted_range(o.value_first, o.value_second);
  const Shape s = e.shape(x);
  const int padded = e.op("pad", {x},
                          Attrs{{"before", std::vector<std::int64_t>{0, 1, 1, 0}},
                                {"after", std::vector<std::int64_t>{0, 1, 1, 0}},
                                {"value", 0.0}});
  int ring = -1;
  for (std::int64_t dy = 0; dy < 3; ++dy) {
    for (std::int64_t dx = 0; dx < 3; ++dx) {
      if (dy == 1 && dx == 1) continue;
      const int shifted = e.crop(padded, {0, dy, dx, 0}, {s[0], s[1], s[2], s[3]});
      ring = ring < 0 ? shifted : e.binary("add", ring, shifted);
    }
  }
  const int smoothed = e.binary("add", e.binary("multiply", ring, e.scalar(x, 1.0f / 13.0f)),
                                e.binary("multiply", x, e.scalar(x, 5.0f / 13.0f)));
  const int factor = e.binary("multiply", e.uniform(x, o.lower, o.upper), e.scalar(x, 2.0));
  const int keep = e.binary("subtract", e.scalar(x, 1.0), factor);
  const int r = e.binary("add", x, e.binary("multiply", keep, e.binary("subtract", smoothed, x)));
  return e.clip(r, lo, hi);
}

// A random permutation of the batch ([N] int32): the order that sorts one uniform draw per
// sample (Keras shuffles arange(N)).
int permutation(AugmentGraph& e, int x) {
  const std::int64_t n = e.shape(x)[0];
  const int draws = e.op("reshape", {e.uniform(x, 0.0, 1.0)}, Attrs{{"shape", std::vector<std::int64_t>{n}}});
  return e.op("argsort", {draws}, Attrs{{"axis", std::int64_t{0}}, {"descending", std::int64_t{0}}});
}

// x's samples in the order `perm` (numpy.take(images, perm, axis=0)).
int take_samples(AugmentGraph& e, int x, int perm) {
  const Shape s = e.shape(x);
  const int rows = e.op("reshape", {x}, Attrs{{"shape", std::vector<std::int64_t>{s[0], s[1] * s[2] * s[3]}}});
  return e.op("reshape", {e.op("gather", {rows, perm})}, Attrs{{"shape", s.dims()}});
}

// MixUp: w·x + (1 − w)·x[perm], w ~ Beta(alpha, alpha) per sample as G1 / (G1 + G2).
int mix_up(AugmentGraph& e, int x, const ImageAugmentationOptions& o) {
  const int g1 = e.gamma(x, o.upper), g2 = e.gamma(x, o.upper);
  const int w = e.binary("divide", g1, e.binary("add", g1, g2));
  const int mixed = take_samples(e, x, permutation(e, x));
  const int keep = e.binary("subtract", e.scalar(x, 1.0), w);
  return e.binary("add", e.binary("multiply", w, x), e.binary("multiply", keep, mixed));
}

// A Beta(a, a) draw per sample for `a` a per-sample tensor in (0, 1] (CutMix draws a per
// batch): Jöhnk's method in logs, log X = log(u1)/a, log Y = log(u2)/a, accepted when
// X + Y <= 1, giving X / (X + Y) = sigmoid(log X − log Y). An attempt is accepted with
// probability Γ(a+1)²/Γ(2a+1) >= 1/2; the graph unrolls kAttempts of them, the first
// accepted wins (none of 16: 0.5, probability below 2e-5).
int beta_draw(AugmentGraph& e, int x, int a) {
  constexpr int kAttempts = 16;
  int result = e.per_sample(x, 0.5), found = e.per_sample(x, 0.0);
  for (int k = 0; k < kAttempts; ++k) {
    const int lx = e.binary("divide", e.log_uniform(x), a);
    const int ly = e.binary("divide", e.log_uniform(x), a);
    const int m = e.binary("maximum", lx, ly);
    const int sum =
        e.binary("add", e.unary("exp", e.binary("subtract", lx, m)), e.unary("exp", e.binary("subtract", ly, m)));
    const int accepted = e.binary("less_equal", e.binary("add", m, e.unary("log", sum)), e.scalar(x, 0.0));
    const int w = e.binary("divide", e.scalar(x, 1.0),
                           e.binary("add", e.scalar(x, 1.0), e.unary("exp", e.binary("subtract", ly, lx))));
    const int take = e.binary("logical_and", accepted, e.unary("logical_not", found));
    result = e.where(take, w, result);
    found = e.binary("logical_or", found, accepted);
  }
  return result;
}

// CutMix: a box of x[perm] pasted into each image; its side is sqrt(1 − w) of the image's
// along each axis, w ~ Beta(a, a), a ~ U(factor) + 1e-6 drawn once per batch, as Keras's.
int cut_mix(AugmentGraph& e, int x, const ImageAugmentationOptions& o) {
  const Shape s = e.shape(x);
  const int a = e.binary("add", e.uniform_batch(x, o.lower, o.upper), e.scalar(x, 1e-6));
  const int ratio = e.unary("sqrt", e.binary("subtract", e.scalar(x, 1.0), beta_draw(e, x, a)));
  const auto bounds = [&](std::int64_t length) {
    const int side = e.binary("multiply", ratio, e.scalar(x, static_cast<double>(length)));
    const int start = e.binary("multiply", e.uniform(x, 0.0, 1.0),
                               e.binary("subtract", e.scalar(x, static_cast<double>(length)), side));
    return std::pair<int, int>{start, e.binary("add", start, side)};
  };
  const auto [x0, x1] = bounds(s[2]);
  const auto [y0, y1] = bounds(s[1]);
  const int gx = e.iota(x, 2), gy = e.iota(x, 1);
  const int in_x = e.binary("logical_and", e.binary("greater_equal", gx, x0), e.binary("less", gx, x1));
  const int in_y = e.binary("logical_and", e.binary("greater_equal", gy, y0), e.binary("less", gy, y1));
  return e.where(e.binary("logical_and", in_x, in_y), take_samples(e, x, permutation(e, x)), x);
}

// Equalization: Keras's _equalize_channel on every channel at once. A channel's histogram
// (over the whole batch, as Keras flattens images[..., i]) is the gather_grad op's
// scatter-add of ones at the pixels' bins (bin + channel·bins), so it needs memory for the
// pixels, not pixels × bins; its cumulative sum gives the lookup table Keras builds, read
// back by gather. The bins come from the values with their gradient stopped (Keras's
// bincount has none); a channel of one bin passes unchanged.
int equalization(AugmentGraph& e, int x, const ImageAugmentationOptions& o) {
  const auto [lo, hi] = sorted_range(o.value_first, o.value_second);
  const Shape s = e.shape(x);
  const std::int64_t pixels = s[0] * s[1] * s[2], channels = s[3], bins = o.bins;
  const auto reshape = [&](int v, std::vector<std::int64_t> dims) {
    return e.op("reshape", {v}, Attrs{{"shape", std::move(dims)}});
  };
  const auto clip_trunc = [&](int v) { return e.unary("trunc", e.clip(v, 0.0, static_cast<double>(bins - 1))); };
  // Keras's _scale_values to (0, 255): values·scale + offset, scale and offset in Python floats.
  const double scale = 255.0 / (hi - lo), offset = 0.0 - lo * scale;
  const int v = e.binary("add", e.binary("multiply", x, e.scalar(x, scale)), e.scalar(x, offset));
  const int fixed = e.unary("stop_gradient", v);
  const int channel_base = e.binary("multiply", e.iota(x, 3), e.scalar(x, static_cast<double>(bins)));
  // _custom_histogram_fixed_width: int32((v − 0)·(bins − 1) / 255), clipped to the bins.
  const int bin =
      e.binary("divide", e.binary("multiply", fixed, e.scalar(x, static_cast<double>(bins - 1))), e.scalar(x, 255.0));
  const int ids =
      reshape(e.binary("add", e.clip(e.unary("trunc", bin), 0.0, static_cast<double>(bins - 1)), channel_base),
              {pixels * channels});
  const int ones = reshape(e.scale(e.unary("isnan", fixed), 0.0, 1.0), {pixels * channels, 1});
  const int hist = reshape(e.op("gather_grad", {ids, ones}, Attrs{{"rows", channels * bins}}), {1, 1, channels, bins});
  const Attrs along{{"kind", std::string("cumsum")}, {"axis", std::int64_t{3}}, {"reverse", std::int64_t{0}}};
  const int cdf = e.op("cumulative", {hist}, along);
  const auto reduce = [&](const char* kind, int t) {
    return e.op(
        "reduce", {t},
        Attrs{{"kind", std::string(kind)}, {"axes", std::vector<std::int64_t>{3}}, {"keepdims", std::int64_t{1}}});
  };
  const int big = e.binary("add", e.scalar(x, 3.0e38), e.binary("multiply", cdf, e.scalar(x, 0.0)));
  const int cdf_min = reduce("min", e.where(e.binary("greater", cdf, e.scalar(x, 0.0)), cdf, big));
  const int total = e.op("crop", {cdf},
                         Attrs{{"begin", std::vector<std::int64_t>{0, 0, 0, bins - 1}},
                               {"shape", std::vector<std::int64_t>{1, 1, channels, 1}}});
  int denominator = e.binary("subtract", total, cdf_min);
  denominator = e.where(e.binary("equal", denominator, e.scalar(x, 0.0)), e.scalar(x, 1.0), denominator);
  const int table = e.clip(
      e.unary("round", e.binary("divide", e.binary("multiply", e.binary("subtract", cdf, cdf_min), e.scalar(x, 255.0)),
                                denominator)),
      0.0, 255.0);
  // Lookup: int32(clip(v / 255 · (bins − 1), 0, bins − 1)).
  const int scaled =
      e.binary("multiply", e.binary("divide", fixed, e.scalar(x, 255.0)), e.scalar(x, static_cast<double>(bins - 1)));
  const int lookup = reshape(e.binary("add", clip_trunc(scaled), channel_base), {pixels * channels});
  const int equalized = reshape(e.op("gather", {reshape(table, {channels * bins, 1}), lookup}), s.dims());
  const int used = reduce("sum", e.binary("greater", hist, e.scalar(x, 0.0)));
  const int flat = reshape(e.binary("less_equal", used, e.scalar(x, 1.0)), {1, 1, 1, channels});
  const int r = e.where(flat, v, equalized);
  // Back to value_range: _scale_values from (0, 255).
  const double back = (hi - lo) / 255.0;
  return e.binary("add", e.binary("multiply", r, e.scalar(x, back)), e.scalar(x, lo - 0.0 * back));
}

void check_range(const std::string& layer, const char* key, double lower, double upper, double min, double max) {
  NNFIT_CHECK(lower <= upper && lower >= min && upper <= max, InvalidArgument, layer, ": ", key, " (", lower, ", ",
              upper, ") must be a sorted range within [", min, ", ", max, "]");
}

}  // namespace image_augmentation_ops
}  // namespace

const char* image_augmentation_class(ImageAugmentationKind kind) {
  using image_augmentation_ops::kClasses;
  for (const auto& c : kClasses) {
    if (c.kind == kind) return c.name;
  }
  return "RandomBrightness";
}

bool parse_image_augmentation(const std::string& class_name, ImageAugmentationKind* kind) {
  using image_augmentation_ops::kClasses;
  for (const auto& c : kClasses) {
    if (class_name == c.name) {
      *kind = c.kind;
      return true;
    }
  }
  return false;
}

ImageAugmentation::ImageAugmentation(std::string name, ImageAugmentationKind kind, ImageAugmentationOptions options)
    : Layer(std::move(name)), kind_(kind), options_(std::move(options)) {
  using image_augmentation_ops::check_range;
  const std::string& n = this->name();
  const ImageAugmentationOptions& o = options_;
  switch (kind_) {
    case ImageAugmentationKind::brightness:
    case ImageAugmentationKind::color_degeneration:
      check_range(n, "factor", o.lower, o.upper, -1.0, 1.0);
      break;
    case ImageAugmentationKind::grayscale:
      check_range(n, "factor", 0.0, o.upper, 0.0, 1.0);
      break;
    case ImageAugmentationKind::invert:
    case ImageAugmentationKind::sharpness:
      check_range(n, "factor", o.lower, o.upper, 0.0, 1.0);
      break;
    case ImageAugmentationKind::erasing:
      check_range(n, "factor", o.lower, o.upper, 0.0, 1.0);
      check_range(n, "scale", o.second_lower, o.second_upper, 0.0, 1.0);
      NNFIT_CHECK(o.fill_value.size() <= 1 || o.fill_value.size() == 3, InvalidArgument, n,
                  ": fill_value must be null, a number or a list of three numbers, got ", o.fill_value.size(),
                  " numbers");
      break;
    case ImageAugmentationKind::solarization:
      check_range(n, "addition_factor", o.lower, o.upper, 0.0, 1.0);
      check_range(n, "threshold_factor", o.second_lower, o.second_upper, 0.0, 1.0);
      break;
    case ImageAugmentationKind::posterization:
      check_range(n, "factor", o.lower, o.upper, 1.0, 8.0);
      NNFIT_CHECK(o.lower == std::floor(o.lower) && o.upper == std::floor(o.upper), InvalidArgument, n, ": factor (",
                  o.lower, ", ", o.upper, ") must be whole numbers of bits");
      break;
    case ImageAugmentationKind::cut_mix:
      check_range(n, "factor", o.lower, o.upper, 0.0, 1.0);
      break;
    case ImageAugmentationKind::mix_up:
      NNFIT_CHECK(o.upper > 0.0, InvalidArgument, n, ": alpha = ", o.upper,
                  " must be above 0 (the Beta(alpha, alpha) the mixing weight is drawn from)");
      break;
    case ImageAugmentationKind::equalization:
      NNFIT_CHECK(o.bins >= 1, InvalidArgument, n, ": bins = ", o.bins, " must be at least 1");
      break;
    case ImageAugmentationKind::auto_contrast:
    case ImageAugmentationKind::max_num_bounding_boxes:
      break;
  }
  const bool has_range = kind_ != ImageAugmentationKind::max_num_bounding_boxes &&
                         kind_ != ImageAugmentationKind::mix_up && kind_ != ImageAugmentationKind::cut_mix &&
                         kind_ != ImageAugmentationKind::grayscale;
  NNFIT_CHECK(o.value_first != o.value_second || !has_range, InvalidArgument, n, ": value_range (", o.value_first, ", ",
              o.value_second, ") is empty; pass the pixels' (lower, upper), e.g. (0, 255) or (0, 1)");
}

Shape ImageAugmentation::output_shape(const Shape& s) const {
  check_spatial_rank(s, 2, name(), class_name());
  const bool rgb = kind_ == ImageAugmentationKind::color_degeneration;
  const bool rgb_or_gray = kind_ == ImageAugmentationKind::grayscale;
  NNFIT_CHECK(!rgb || s[2] == 3, InvalidArgument, name(), ": ", class_name(), " takes RGB images (3 channels), got ",
              s.to_string());
  NNFIT_CHECK(!rgb_or_gray || s[2] == 3 || s[2] == 1, InvalidArgument, name(), ": ", class_name(),
              " takes RGB (3 channels) or grayscale (1 channel) images, got ", s.to_string());
  return s;
}

int ImageAugmentation::call(GraphBuilder& b, int x) {
  using namespace image_augmentation_ops;  // the emitters, one per kind
  const bool always = kind_ == ImageAugmentationKind::auto_contrast;
  if (kind_ == ImageAugmentationKind::max_num_bounding_boxes || (!b.training() && !always)) return x;
  const DType dtype = b.graph().desc(x).dtype;
  const int in = b.cast(x, DType::f32);
  AugmentGraph e(b.graph(), name(), layer_op_seed(name(), options_.seed.value_or(0)));
  int y = in;
  switch (kind_) {
    case ImageAugmentationKind::brightness:
      y = brightness(e, in, options_);
      break;
    case ImageAugmentationKind::grayscale:
      y = grayscale(e, in, options_);
      break;
    case ImageAugmentationKind::invert:
      y = invert(e, in, options_);
      break;
    case ImageAugmentationKind::solarization:
      y = solarization(e, in, options_);
      break;
    case ImageAugmentationKind::posterization:
      y = posterization(e, in, options_);
      break;
    case ImageAugmentationKind::auto_contrast:
      y = auto_contrast(e, in, options_);
      break;
    case ImageAugmentationKind::erasing:
      y = erasing(e, in, options_);
      break;
    case ImageAugmentationKind::color_degeneration:
      y = color_degeneration(e, in, options_);
      break;
    case ImageAugmentationKind::sharpness:
      y = sharpness(e, in, options_);
      break;
    case ImageAugmentationKind::mix_up:
      y = mix_up(e, in, options_);
      break;
    case ImageAugmentationKind::cut_mix:
      y = cut_mix(e, in, options_);
      break;
    case ImageAugmentationKind::equalization:
      y = equalization(e, in, options_);
      break;
    case ImageAugmentationKind::max_num_bounding_boxes:
      break;
  }
  return b.cast(y, dtype);
}

}  // namespace nnfit
