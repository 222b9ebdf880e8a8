// keras.ops.image's colour conversions and Gaussian kernels on the engine's ops (image_color.h).
#include "nn/layers/image_color.h"

#include <algorithm>
#include <cmath>

#include "nn/layers/conv_window.h"
#include "nnfit/core/tensor.h"

namespace nnfit::image_color {

int ImageGraph::op(const std::string& op, const std::vector<int>& in, Attrs a) {
  return g_.add(op, in, std::move(a), prefix_ + "/" + op + "_" + std::to_string(count_++));
}

// Note [Same-shape element-wise ops]: a broadcast operand (a scalar constant, a per-sample
// draw) is first broadcast_to the result's shape, so the binary op and its gradient see
// operands of one shape: the OpenMP kernels take that form in parallel, while a gradient
// toward a broadcast operand sums serially in the reference kernel. The broadcast operands
// here are constants and draws, whose broadcast_to gradient autodiff never needs.
int ImageGraph::binary(const std::string& kind, int a, int b) {
  const DType da = g_.desc(a).dtype;
  if (g_.desc(b).dtype != da) b = op("cast", {b}, Attrs{{"dtype", std::string(dtype_name(da))}});
  const Shape sa = shape(a), sb = shape(b);
  if (sa != sb) {
    std::vector<std::int64_t> out;
    if (sb.numel() == 1) {
      out = sa.dims();
    } else if (sa.numel() == 1) {
      out = sb.dims();
    } else if (sa.rank() == sb.rank()) {
      for (int i = 0; i < sa.rank(); ++i) out.push_back(std::max(sa[i], sb[i]));
    }
    if (!out.empty()) {
      if (Shape(out) != sa) a = op("broadcast_to", {a}, Attrs{{"shape", out}});
      if (Shape(out) != sb) b = op("broadcast_to", {b}, Attrs{{"shape", out}});
    }
  }
  return op("binary", {a, b}, Attrs{{"kind", kind}});
}

int ImageGraph::crop_axis(int x, int axis, std::int64_t begin, std::int64_t size) {
  const Shape s = shape(x);
  std::vector<std::int64_t> b(static_cast<std::size_t>(s.rank()), 0), n = s.dims();
  b[static_cast<std::size_t>(axis)] = begin;
  n[static_cast<std::size_t>(axis)] = size;
  return op("crop", {x}, Attrs{{"begin", b}, {"shape", n}});
}

int ImageGraph::constant(const Shape& s, const std::vector<double>& values) {
  Tensor t = Tensor::zeros(s);
  float* p = t.data<float>();
  for (std::size_t i = 0; i < values.size(); ++i) p[i] = static_cast<float>(values[i]);
  return g_.add_variable(prefix_ + "/constant_" + std::to_string(count_++), t);
}

// `c` in a tensor shaped `dims` cut from x (crop -> isnan -> times 0), whatever x holds.
int ImageGraph::zeros_like_crop(int x, const std::vector<std::int64_t>& dims, double c) {
  const std::vector<std::int64_t> begin(dims.size(), 0);
  return scale(unary("isnan", op("crop", {x}, Attrs{{"begin", begin}, {"shape", dims}})), 0.0, c);
}

std::int64_t ImageGraph::next_seed() {
  return static_cast<std::int64_t>((static_cast<std::uint64_t>(seed_) + 0x9E3779B97F4A7C15ull * ++draws_) >> 1);
}

int ImageGraph::uniform(int x, double lower, double upper) {
  const int low = zeros_like_crop(x, {shape(x)[0], 1, 1, 1}, lower);
  return op("noise", {low}, Attrs{{"kind", std::string("uniform_add")}, {"value", upper - lower}, {"seed", next_seed()}});
}

int ImageGraph::uniform_scalar(int x, double lower, double upper) {
  const int low = op("reshape", {zeros_like_crop(x, {1, 1, 1, 1}, lower)}, Attrs{{"shape", std::vector<std::int64_t>{1}}});
  return op("noise", {low}, Attrs{{"kind", std::string("uniform_add")}, {"value", upper - lower}, {"seed", next_seed()}});
}

int ImageGraph::value_range(int x, double from_lo, double from_hi, double to_lo, double to_hi) {
  if (from_lo == to_lo && from_hi == to_hi) return x;
  const float flo = static_cast<float>(from_lo), fhi = static_cast<float>(from_hi);
  const float tlo = static_cast<float>(to_lo), thi = static_cast<float>(to_hi);
  x = binary("subtract", x, scalar(flo));
  x = binary("divide", x, scalar(static_cast<double>(fhi - flo)));
  x = binary("multiply", x, scalar(static_cast<double>(thi - tlo)));
  return binary("add", x, scalar(tlo));
}

int rgb_to_hsv(ImageGraph& e, int x) {
  const int r = e.crop_axis(x, 3, 0, 1), g = e.crop_axis(x, 3, 1, 1), b = e.crop_axis(x, 3, 2, 1);
  const int v = e.binary("maximum", e.binary("maximum", r, g), b);
  const int lo = e.binary("minimum", e.binary("minimum", r, g), b);
  const int range = e.binary("subtract", v, lo);
  const int zero = e.scalar(0.0), one = e.scalar(1.0);
  const int v_pos = e.binary("greater", v, zero), range_pos = e.binary("greater", range, zero);
  const auto fill = [&](int like, double c) { return e.scale(like, 0.0, c); };  // finite inputs: max/min of pixels
  const int s = e.where(v_pos, e.binary("divide", range, e.where(v_pos, v, fill(v, 1.0))), fill(v, 0.0));
  const int norm = e.scale(e.unary("reciprocal", e.where(range_pos, range, fill(range, 1.0))), 1.0 / 6.0, 0.0);
  const int h_r = e.binary("multiply", norm, e.binary("subtract", g, b));
  const int h_g = e.scale(e.binary("multiply", norm, e.binary("subtract", b, r)), 1.0, 2.0 / 6.0);
  const int h_b = e.scale(e.binary("multiply", norm, e.binary("subtract", r, g)), 1.0, 4.0 / 6.0);
  int h = e.where(e.binary("equal", r, v), h_r, e.where(e.binary("equal", g, v), h_g, h_b));
  h = e.where(range_pos, h, fill(h, 0.0));
  h = e.where(e.binary("less", h, zero), e.binary("add", h, one), h);
  return e.concat({h, s, v}, 3);
}

int hsv_to_rgb(ImageGraph& e, int x) {
  const int h = e.crop_axis(x, 3, 0, 1), s = e.crop_axis(x, 3, 1, 1), v = e.crop_axis(x, 3, 2, 1);
  const int dh = e.scale(h, 6.0, 0.0);
  const auto ramp = [&](double shift, double sign, double offset) {
    return e.clip(e.scale(e.unary("abs", e.scale(dh, 1.0, -shift)), sign, offset), 0.0, 1.0);
  };
  const int dr = ramp(3.0, 1.0, -1.0), dg = ramp(2.0, -1.0, 2.0), db = ramp(4.0, -1.0, 2.0);
  const int one_s = e.scale(s, -1.0, 1.0);
  const auto channel = [&](int d) { return e.binary("multiply", e.binary("add", one_s, e.binary("multiply", s, d)), v); };
  return e.concat({channel(dr), channel(dg), channel(db)}, 3);
}

std::vector<double> gaussian_taps(std::int64_t size, double sigma) {
  std::vector<double> k(static_cast<std::size_t>(size));
  double total = 0.0;
  for (std::int64_t i = 0; i < size; ++i) {
    const double x = static_cast<double>(i) - static_cast<double>(size - 1) / 2.0;
    total += k[static_cast<std::size_t>(i)] = std::exp(-0.5 * (x / sigma) * (x / sigma));
  }
  for (double& v : k) v /= total;
  return k;
}

std::vector<double> gaussian_kernel(std::int64_t k0, std::int64_t k1, double s0, double s1) {
  const std::vector<double> ky = gaussian_taps(k1, s1), kx = gaussian_taps(k0, s0);
  std::vector<double> k;
  for (double a : ky) {
    for (double b : kx) k.push_back(a * b);
  }
  return k;
}

int depthwise_kernel(ImageGraph& e, std::int64_t c, std::int64_t kh, std::int64_t kw, std::int64_t m,
                     const std::vector<double>& k) {
  std::vector<double> kernel(static_cast<std::size_t>(kh * kw * c * m));
  for (std::int64_t t = 0; t < kh * kw; ++t) {
    for (std::int64_t ch = 0; ch < c; ++ch) {
      for (std::int64_t j = 0; j < m; ++j) {
        kernel[static_cast<std::size_t>((t * c + ch) * m + j)] = k[static_cast<std::size_t>(t * m + j)];
      }
    }
  }
  return e.constant(Shape{kh, kw, 1, c * m}, kernel);
}

int depthwise_apply(ImageGraph& e, int x, int kernel, const std::string& padding) {
  const Shape ks = e.shape(kernel);
  ConvWindow w{{ks[0], ks[1]}, {1, 1}, {1, 1}, padding, e.shape(x).dim(-1)};
  return e.op("conv2d", {x, kernel}, w.attrs());
}

}  // namespace nnfit::image_color
