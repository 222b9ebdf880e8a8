// Private to src/nn/layers: keras.ops.image's colour conversions and Gaussian filtering as
// compositions of the engine's ops on channels-last float images, shared by the operation
// emitters (operation_image_emitters.cpp) and the colour augmentation layers
// (color_augmentation.cpp), so a RandomHue layer and ops.image.rgb_to_hsv compute the same.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "nnfit/graph/graph.h"

namespace nnfit::image_color {

// Adds ops named `<prefix>/<op>_<k>` to one graph; constants it makes are graph variables
// of their own (as recurrent.cpp's zero bias), never trained or saved. Not thread-safe.
class ImageGraph {
 public:
  ImageGraph(Graph& g, std::string prefix, std::int64_t seed = 0) : g_(g), prefix_(std::move(prefix)), seed_(seed) {}
  Graph& graph() { return g_; }
  Shape shape(int v) const { return g_.desc(v).shape; }
  int op(const std::string& op, const std::vector<int>& in, Attrs a = {});
  int unary(const std::string& kind, int x) { return op("unary", {x}, Attrs{{"kind", kind}}); }
  // Broadcasting; b is cast to a's dtype where they differ (constants are float32).
  int binary(const std::string& kind, int a, int b);
  int scale(int x, double factor, double offset) { return op("scale", {x}, Attrs{{"factor", factor}, {"offset", offset}}); }
  int where(int cond, int a, int b) { return op("where", {cond, a, b}); }
  int crop_axis(int x, int axis, std::int64_t begin, std::int64_t size);
  int concat(const std::vector<int>& xs, int axis) { return op("concat", xs, Attrs{{"axis", std::int64_t{axis}}}); }
  int constant(const Shape& shape, const std::vector<double>& values);
  int scalar(double v) { return constant(Shape{1}, {v}); }
  int clip(int x, double lower, double upper) { return binary("minimum", binary("maximum", x, scalar(lower)), scalar(upper)); }
  // A uniform draw in [lower, upper) per sample of x, shaped [N, 1, 1, 1] (the noise op,
  // keyed by run seed, this graph's seed and draw count, step and sample).
  int uniform(int x, double lower, double upper);
  // One uniform draw in [lower, upper) for the whole batch, shaped [1].
  int uniform_scalar(int x, double lower, double upper);
  // Keras's _transform_value_range: (x - from_lo) / (from_hi - from_lo) · (to_hi - to_lo) + to_lo.
  int value_range(int x, double from_lo, double from_hi, double to_lo, double to_hi);

 private:
  int zeros_like_crop(int x, const std::vector<std::int64_t>& dims, double c);
  std::int64_t next_seed();

  Graph& g_;
  std::string prefix_;
  std::int64_t seed_;
  int count_ = 0;
  std::uint64_t draws_ = 0;
};

// x [N, H, W, 3] -> HSV (TensorFlow's RGBToHSV kernel's formula; a grey pixel's hue and a
// black pixel's saturation are 0 with finite gradients) and back (TensorFlow's HSVToRGB).
int rgb_to_hsv(ImageGraph& e, int x);
int hsv_to_rgb(ImageGraph& e, int x);

// A normalized 1-D Gaussian of `size` taps: exp(-0.5 (x / sigma)^2) at x = i - (size - 1) / 2.
std::vector<double> gaussian_taps(std::int64_t size, double sigma);
// Keras's TensorFlow gaussian_blur kernel for kernel_size (k0, k1) and sigma (s0, s1): the
// outer product of the taps of (k1, s1) and (k0, s0), read row-major as (k0, k1).
std::vector<double> gaussian_kernel(std::int64_t k0, std::int64_t k1, double s0, double s1);
// The grouped convolution kernel (kh, kw, 1, C·m) filtering each of C channels with the
// (kh, kw) taps `k` (row-major, m per tap: output j of a channel reads k[..., j]).
int depthwise_kernel(ImageGraph& e, std::int64_t c, std::int64_t kh, std::int64_t kw, std::int64_t m,
                     const std::vector<double>& k);
// x [N, H, W, C] convolved channel by channel with `kernel` (kh, kw, 1, C·m), stride 1.
int depthwise_apply(ImageGraph& e, int x, int kernel, const std::string& padding);

}  // namespace nnfit::image_color
