// The emitters of keras.ops.image (Note [Keras operations] in operation.cpp): Resize (a crop
// or pad to the target's aspect ratio, then the resize op), the colour conversions as the
// element-wise formulas of TensorFlow's kernels, padding and cropping as the engine's pad
// and crop, the filters (GaussianBlur, SobelEdges, SSIM) and ExtractPatches as grouped
// convolutions with constant kernels (Keras's own formulation: extract_patches is a
// convolution with an identity kernel), AffineTransform and PerspectiveTransform on the
// engine's affine_transform op (TensorFlow's ImageProjectiveTransformV3). Images are batched
// here (rank 4; 5 for 3-D patches): nnfit.keras adds the batch axis to an unbatched eager call.
// keras.ops.nn's Unfold and Fold (PyTorch's im2col and col2im) are here too: the identity-kernel
// convolution of extract_patches and its input gradient.
#include <cmath>
#include <string>
#include <vector>

#include "nn/layers/conv_window.h"
#include "nn/layers/image_color.h"
#include "nn/layers/image_resize.h"
#include "nn/layers/operation_nn_emit.h"
#include "nnfit/core/tensor.h"

namespace nnfit::operation_emit {
namespace {

int img_image(const Emit& e, std::size_t k, int rank = 4) {
  int x = e.value(k);
  if (e.rank(x) != rank) {
    e.invalid("takes a batch of images of rank " + std::to_string(rank) + ", got " + e.shape(x).to_string());
  }
  if (!is_floating(e.g.desc(x).dtype)) x = e.add("cast", {x}, Attrs{{"dtype", std::string("float32")}}, "cast");
  return x;
}

// A float32 constant made while emitting (its values follow from the config and shapes):
// a graph variable of its own, as recurrent.cpp's zero bias, never trained or saved.
int img_constant_of(const Emit& e, const std::string& what, const Shape& shape, const std::vector<double>& values) {
  Tensor t = Tensor::zeros(shape);
  float* p = t.data<float>();
  for (std::size_t i = 0; i < values.size(); ++i) p[i] = static_cast<float>(values[i]);
  return e.g.add_variable(e.node(what), t);
}

int img_crop_axis(const Emit& e, int x, int axis, std::int64_t begin, std::int64_t size) {
  const Shape s = e.shape(x);
  Dims b(static_cast<std::size_t>(s.rank()), 0), n = s.dims();
  b[static_cast<std::size_t>(axis)] = begin;
  n[static_cast<std::size_t>(axis)] = size;
  return e.add("crop", {x}, Attrs{{"begin", b}, {"shape", n}}, "crop");
}

// A float list of the config: Keras writes (1.0, 1.0); the reader keeps "key.0", "key.1".
double img_config_float(const Emit& e, const std::string& key, std::size_t i) {
  const std::string item = key + "." + std::to_string(i);
  if (e.config().has(item)) return e.config().f(item);
  if (e.config().has(key)) {
    const auto& items = e.config().items();
    if (const auto* many = std::get_if<Dims>(&items.at(key))) {
      if (i < many->size()) return static_cast<double>((*many)[i]);
    } else {
      return e.config().f(key);
    }
  }
  e.invalid("\"" + key + "\" must hold " + std::to_string(i + 1) + " or more numbers");
}

int img_depthwise_filter(const Emit& e, int x, std::int64_t kh, std::int64_t kw, std::int64_t m,
                         const std::vector<double>& k, const std::string& padding) {
  image_color::ImageGraph ig(e.g, e.node(""));
  return image_color::depthwise_apply(ig, x, image_color::depthwise_kernel(ig, e.shape(x).dim(-1), kh, kw, m, k), padding);
}

// --- colour -------------------------------------------------------------------------------

std::vector<int> image_rgb_to_grayscale(const Emit& e) {
  return {channels_last_run(e, img_image(e, 0), [&](int x) {
    const std::int64_t c = e.shape(x).dim(-1);
    if (c == 1) return x;
    if (c != 3) e.invalid("takes 3 (RGB) or 1 (grayscale) channels, got " + std::to_string(c));
    // tf.image.rgb_to_grayscale's weights, summed in their order (a tensordot).
    const double w[3] = {0.2989, 0.5870, 0.1140};
    int sum = affine(e, img_crop_axis(e, x, 3, 0, 1), w[0], 0.0, "weight");
    for (int i = 1; i < 3; ++i) sum = e.add("add_n", {sum, affine(e, img_crop_axis(e, x, 3, i, 1), w[i], 0.0, "weight")});
    return sum;
  })};
}

int img_three_channels(const Emit& e, int x) {
  if (e.shape(x).dim(-1) != 3) e.invalid("takes images of 3 channels, got " + e.shape(x).to_string());
  return x;
}

// TensorFlow's RGBToHSV and HSVToRGB kernels' formulas (image_color.h).
std::vector<int> image_rgb_to_hsv(const Emit& e) {
  return {channels_last_run(e, img_image(e, 0), [&](int x) {
    image_color::ImageGraph ig(e.g, e.node(""));
    return image_color::rgb_to_hsv(ig, img_three_channels(e, x));
  })};
}

std::vector<int> image_hsv_to_rgb(const Emit& e) {
  return {channels_last_run(e, img_image(e, 0), [&](int x) {
    image_color::ImageGraph ig(e.g, e.node(""));
    return image_color::hsv_to_rgb(ig, img_three_channels(e, x));
  })};
}

// --- padding and cropping -----------------------------------------------------------------

// Keras's _pad_images / _crop_images: a side not given follows from the target size.
std::vector<int> image_pad_images(const Emit& e) {
  const int x = img_image(e, 0);
  const bool cf = channels_first(e);
  const int ha = cf ? 2 : 1;
  const std::int64_t h = e.shape(x)[ha], w = e.shape(x)[ha + 1];
  const auto get = [&](const char* key) { return e.config().has(key) ? e.config().i(key) : -1; };
  std::int64_t top = get("top_padding"), bottom = get("bottom_padding"), left = get("left_padding"), right = get("right_padding");
  const std::int64_t th = get("target_height"), tw = get("target_width");
  if (top < 0 && th >= 0 && bottom >= 0) top = th - bottom - h;
  if (bottom < 0 && th >= 0 && top >= 0) bottom = th - top - h;
  if (left < 0 && tw >= 0 && right >= 0) left = tw - right - w;
  if (right < 0 && tw >= 0 && left >= 0) right = tw - left - w;
  if (top < 0 || bottom < 0 || left < 0 || right < 0) {
    e.invalid("the paddings (top " + std::to_string(top) + ", bottom " + std::to_string(bottom) + ", left " +
              std::to_string(left) + ", right " + std::to_string(right) + ") must be >= 0 for an image of " +
              std::to_string(h) + "x" + std::to_string(w) + "; give two of each side and target size");
  }
  Dims before(4, 0), after(4, 0);
  before[static_cast<std::size_t>(ha)] = top, after[static_cast<std::size_t>(ha)] = bottom;
  before[static_cast<std::size_t>(ha) + 1] = left, after[static_cast<std::size_t>(ha) + 1] = right;
  return {e.add("pad", {x}, Attrs{{"before", before}, {"after", after}, {"value", 0.0}}, "pad")};
}

std::vector<int> image_crop_images(const Emit& e) {
  const int x = img_image(e, 0);
  const bool cf = channels_first(e);
  const int ha = cf ? 2 : 1;
  const std::int64_t h = e.shape(x)[ha], w = e.shape(x)[ha + 1];
  const auto get = [&](const char* key) { return e.config().has(key) ? e.config().i(key) : -1; };
  std::int64_t top = get("top_cropping"), bottom = get("bottom_cropping"), left = get("left_cropping"), right = get("right_cropping");
  std::int64_t th = get("target_height"), tw = get("target_width");
  if (top < 0 && th >= 0 && bottom >= 0) top = h - th - bottom;
  if (th < 0 && top >= 0 && bottom >= 0) th = h - bottom - top;
  if (left < 0 && tw >= 0 && right >= 0) left = w - tw - right;
  if (tw < 0 && left >= 0 && right >= 0) tw = w - right - left;
  if (top < 0 || left < 0 || th < 0 || tw < 0 || top + th > h || left + tw > w) {
    e.invalid("the crop (top " + std::to_string(top) + ", left " + std::to_string(left) + ", " + std::to_string(th) + "x" +
              std::to_string(tw) + ") does not fit an image of " + std::to_string(h) + "x" + std::to_string(w));
  }
  return {img_crop_axis(e, img_crop_axis(e, x, ha, top, th), ha + 1, left, tw)};
}

// --- filters --------------------------------------------------------------------------------

// Keras's TensorFlow gaussian_blur: the outer product of the taps of (size[1], sigma[1]) and
// (size[0], sigma[0]), read as a (size[0], size[1]) kernel, depthwise, padding "same".
std::vector<int> image_gaussian_blur(const Emit& e) {
  const Dims size = per_axis(e, "kernel_size", 2, Dims{3, 3});
  const double s0 = img_config_float(e, "sigma", 0), s1 = img_config_float(e, "sigma", 1);
  if (size[0] < 1 || size[1] < 1 || s0 <= 0.0 || s1 <= 0.0) e.invalid("kernel_size and sigma must be positive");
  const std::vector<double> k = image_color::gaussian_kernel(size[0], size[1], s0, s1);
  return {channels_last_run(e, img_image(e, 0), [&](int x) { return img_depthwise_filter(e, x, size[0], size[1], 1, k, "same"); })};
}

// The image with one row or column mirrored on each side along `axis` (pad mode REFLECT).
int img_reflect_pad1(const Emit& e, int x, int axis) {
  const std::int64_t n = e.shape(x)[axis];
  if (n < 2) e.invalid("reflect padding needs 2 or more rows and columns, got " + e.shape(x).to_string());
  return e.add("concat", {img_crop_axis(e, x, axis, 1, 1), x, img_crop_axis(e, x, axis, n - 2, 1)}, Attrs{{"axis", std::int64_t{axis}}}, "reflect");
}

// tf.image.sobel_edges: reflect-padded, the dy then dx Sobel kernels per channel: (N, H, W, C, 2).
std::vector<int> image_sobel_edges(const Emit& e) {
  const bool cf = channels_first(e);
  int x = img_image(e, 0);
  if (cf) x = to_channels_last(e, x);
  const Shape s = e.shape(x);
  const std::vector<double> k{-1, -1, -2, 0, -1, 1, 0, -2, 0, 0, 0, 2, 1, -1, 2, 0, 1, 1};  // (3, 3, 2): dy, dx
  int y = img_depthwise_filter(e, img_reflect_pad1(e, img_reflect_pad1(e, x, 1), 2), 3, 3, 2, k, "valid");
  y = e.reshape(y, {s[0], s[1], s[2], s[3], 2});
  return {cf ? transpose_to(e, y, {0, 3, 1, 2, 4}) : y};
}

// Keras's _ssim: per channel, Gaussian means, variances and covariance (valid windows), the
// SSIM map averaged over the window positions and the channels: one value per image.
std::vector<int> image_ssim(const Emit& e) {
  const bool cf = channels_first(e);
  int a = img_image(e, 0), b = img_image(e, 1);
  if (cf) a = to_channels_last(e, a), b = to_channels_last(e, b);
  if (e.shape(a) != e.shape(b)) e.invalid("the two images' shapes differ: " + e.shape(a).to_string() + " and " + e.shape(b).to_string());
  const std::int64_t f = e.config().i_or("filter_size", 11);
  const double sigma = e.config().f_or("filter_sigma", 1.5), max_val = e.config().f_or("max_val", 1.0);
  const double c1 = std::pow(e.config().f_or("k1", 0.01) * max_val, 2), c2 = std::pow(e.config().f_or("k2", 0.03) * max_val, 2);
  const std::vector<double> k = image_color::gaussian_kernel(f, f, sigma, sigma);
  image_color::ImageGraph ig(e.g, e.node(""));
  const int kernel = image_color::depthwise_kernel(ig, e.shape(a).dim(-1), f, f, 1, k);
  const auto mean = [&](int v) { return image_color::depthwise_apply(ig, v, kernel, "valid"); };
  const int mu1 = mean(a), mu2 = mean(b);
  const int mu1_sq = e.binary("multiply", mu1, mu1), mu2_sq = e.binary("multiply", mu2, mu2);
  const int mu12 = e.binary("multiply", mu1, mu2);
  const int s1 = e.binary("subtract", mean(e.binary("multiply", a, a)), mu1_sq);
  const int s2 = e.binary("subtract", mean(e.binary("multiply", b, b)), mu2_sq);
  const int s12 = e.binary("subtract", mean(e.binary("multiply", a, b)), mu12);
  const int num = e.binary("multiply", affine(e, mu12, 2.0, c1, "num1"), affine(e, s12, 2.0, c2, "num2"));
  const int den = e.binary("multiply", affine(e, e.binary("add", mu1_sq, mu2_sq), 1.0, c1, "den1"),
                           affine(e, e.binary("add", s1, s2), 1.0, c2, "den2"));
  const int map = e.binary("divide", num, den);
  return {e.add("reduce_mean", {map}, Attrs{{"axes", Dims{1, 2, 3}}, {"keepdims", std::int64_t{0}}}, "mean")};
}

// --- patches ----------------------------------------------------------------------------------

// Keras's _extract_patches: a convolution with the identity kernel (k..., C, prod(k)·C), so
// patch entries are ordered (rows, columns[, depth], channels).
std::vector<int> image_extract_patches(const Emit& e) {
  const auto& items = e.config().items();
  const std::size_t n = items.count("size") && std::get_if<Dims>(&items.at("size")) ? e.config().ints("size").size() : 2;
  if (n != 2 && n != 3) e.invalid("\"size\" must have 2 or 3 entries, got " + std::to_string(n));
  const Dims size = per_axis(e, "size", n, Dims(n, 1));
  const Dims strides = e.config().has("strides") ? per_axis(e, "strides", n, size) : size;
  ConvWindow w{size, strides, per_axis(e, "dilation_rate", n, Dims(n, 1)), e.config().s_or("padding", "valid"), 1};
  w.check(e.node(""), 3);
  return {channels_last_run(e, img_image(e, 0, static_cast<int>(n) + 2), [&](int x) {
    const std::int64_t c = e.shape(x).dim(-1);
    std::int64_t taps = 1;
    for (std::int64_t s : size) taps *= s;
    const std::int64_t out = taps * c;
    std::vector<double> eye(static_cast<std::size_t>(out * out), 0.0);
    for (std::int64_t i = 0; i < out; ++i) eye[static_cast<std::size_t>(i * out + i)] = 1.0;
    Dims ks(size.begin(), size.end());
    ks.push_back(c);
    ks.push_back(out);
    const int kernel = img_constant_of(e, "identity", Shape(ks), eye);
    w.out(e.node(""), spatial_of(e.shape(x)));
    return e.add(n == 3 ? "conv3d" : "conv2d", {x, kernel}, w.attrs(), "patches");
  })};
}

// --- projective transforms ------------------------------------------------------------------

int img_sampled(const Emit& e, int x, int transform) {
  const std::int64_t n = e.shape(x)[0];
  const Shape t = e.shape(transform);
  if (t.rank() == 1 && t[0] == 8) {
    transform = e.add("broadcast_to", {transform}, Attrs{{"shape", Dims{n, 8}}}, "transforms");
  } else if (t.rank() != 2 || t[1] != 8 || (t[0] != n && t[0] != 1)) {
    e.invalid("the transform must be (8,) or (batch, 8), got " + t.to_string());
  } else if (t[0] == 1 && n != 1) {
    transform = e.add("broadcast_to", {transform}, Attrs{{"shape", Dims{n, 8}}}, "transforms");
  }
  const std::string interpolation = e.config().s_or("interpolation", "bilinear");
  const std::string fill = e.config().s_or("fill_mode", "constant");
  if (interpolation != "bilinear" && interpolation != "nearest") {
    e.invalid("interpolation must be \"bilinear\" or \"nearest\", got \"" + interpolation + "\"");
  }
  if (fill != "constant" && fill != "nearest" && fill != "wrap" && fill != "reflect") {
    e.invalid("fill_mode must be one of constant, nearest, wrap, reflect, got \"" + fill + "\"");
  }
  return e.add("affine_transform", {x, transform},
               Attrs{{"fill_mode", fill}, {"interpolation", interpolation}, {"fill_value", e.config().f_or("fill_value", 0.0)}},
               "affine_transform");
}

std::vector<int> image_affine_transform(const Emit& e) {
  const int transform = e.value(1);
  return {channels_last_run(e, img_image(e, 0), [&](int x) { return img_sampled(e, x, transform); })};
}

// The 8 coefficients mapping output pixels (end points) to input pixels (start points):
// Keras's compute_homography_matrix, solved in double by Gaussian elimination.
std::vector<double> img_homography(const Emit& e, const double* start, const double* end) {
  double a[8][9] = {};
  for (int i = 0; i < 4; ++i) {
    const double sx = start[2 * i], sy = start[2 * i + 1], ex = end[2 * i], ey = end[2 * i + 1];
    const double r0[9] = {ex, ey, 1, 0, 0, 0, -sx * ex, -sx * ey, sx}, r1[9] = {0, 0, 0, ex, ey, 1, -sy * ex, -sy * ey, sy};
    for (int j = 0; j < 9; ++j) a[2 * i][j] = r0[j], a[2 * i + 1][j] = r1[j];
  }
  for (int c = 0; c < 8; ++c) {
    int p = c;
    for (int r = c + 1; r < 8; ++r) {
      if (std::fabs(a[r][c]) > std::fabs(a[p][c])) p = r;
    }
    if (std::fabs(a[p][c]) < 1e-12) e.invalid("start_points and end_points give no perspective transform (the system is singular)");
    for (int j = 0; j < 9; ++j) std::swap(a[c][j], a[p][j]);
    for (int r = 0; r < 8; ++r) {
      if (r == c) continue;
      const double m = a[r][c] / a[c][c];
      for (int j = c; j < 9; ++j) a[r][j] -= m * a[c][j];
    }
  }
  std::vector<double> out(8);
  for (int c = 0; c < 8; ++c) out[static_cast<std::size_t>(c)] = a[c][8] / a[c][c];
  return out;
}

std::vector<int> image_perspective_transform(const Emit& e) {
  for (std::size_t k : {std::size_t{1}, std::size_t{2}}) {
    if (k >= e.args.size() || e.args[k].kind != OperationArg::Kind::constant) {
      e.unsupported("start_points and end_points must be arrays (nnfit solves the transform when it builds the graph)");
    }
  }
  const OperationArg &s = e.args[1], &t = e.args[2];
  if (s.shape != t.shape || s.values.size() % 8 != 0 || s.shape.size() < 2 || s.shape.back() != 2 || s.shape[s.shape.size() - 2] != 4) {
    e.invalid("start_points and end_points must both be (4, 2) or (N, 4, 2)");
  }
  const std::size_t sets = s.values.size() / 8;
  std::vector<double> all;
  for (std::size_t i = 0; i < sets; ++i) {
    const std::vector<double> h = img_homography(e, s.values.data() + 8 * i, t.values.data() + 8 * i);
    all.insert(all.end(), h.begin(), h.end());
  }
  const int transform = img_constant_of(e, "transform", Shape{static_cast<std::int64_t>(sets), 8}, all);
  return {channels_last_run(e, img_image(e, 0), [&](int x) { return img_sampled(e, x, transform); })};
}

// --- unfold and fold (keras.ops.nn; PyTorch's im2col and col2im, channels first) ----------

struct FoldWindow {
  Dims k, d, p, s;
};
FoldWindow fold_window(const Emit& e) {
  if (!e.config().has("kernel_size")) e.invalid("\"kernel_size\" is required");
  return {per_axis(e, "kernel_size", 2, {}), per_axis(e, "dilation", 2, {1, 1}), per_axis(e, "padding", 2, {0, 0}),
          per_axis(e, "stride", 2, {1, 1})};
}

// The identity kernel (kh, kw, C, C·kh·kw) in PyTorch's patch order: output c·kh·kw + i·kw + j
// reads channel c at tap (i, j).
int unfold_kernel(const Emit& e, std::int64_t c, std::int64_t kh, std::int64_t kw) {
  const std::int64_t out = c * kh * kw;
  std::vector<double> k(static_cast<std::size_t>(kh * kw * c * out), 0.0);
  for (std::int64_t i = 0; i < kh; ++i) {
    for (std::int64_t j = 0; j < kw; ++j) {
      for (std::int64_t ch = 0; ch < c; ++ch) {
        k[static_cast<std::size_t>(((i * kw + j) * c + ch) * out + ch * kh * kw + i * kw + j)] = 1.0;
      }
    }
  }
  return img_constant_of(e, "identity", Shape{kh, kw, c, out}, k);
}

// unfold(x (N, C, H, W)) -> (N, C·kh·kw, L): zero padding, then a convolution with the
// identity kernel (exact: one product by 1 per output), its positions flattened.
std::vector<int> nn_unfold(const Emit& e) {
  int x = img_image(e, 0);
  const FoldWindow f = fold_window(e);
  const Shape xs = e.shape(x);
  if (f.p[0] > 0 || f.p[1] > 0) {
    x = e.add("pad", {x}, Attrs{{"before", Dims{0, 0, f.p[0], f.p[1]}}, {"after", Dims{0, 0, f.p[0], f.p[1]}}, {"value", 0.0}}, "pad");
  }
  x = transpose_to(e, x, {0, 2, 3, 1});
  ConvWindow w{f.k, f.s, f.d, "valid", 1};
  w.check(e.node(""), 2);
  const Dims out = w.out(e.node(""), spatial_of(e.shape(x)));
  const int y = e.add("conv2d", {x, unfold_kernel(e, xs[1], f.k[0], f.k[1])}, w.attrs(), "patches");
  return {transpose_to(e, e.reshape(y, {xs[0], out[0] * out[1], xs[1] * f.k[0] * f.k[1]}), {0, 2, 1})};
}

// fold(x (N, C·kh·kw, L)) -> (N, C, oh, ow): the adjoint of unfold (overlaps summed), as
// the convolution's input gradient with the same identity kernel, then the padding cut.
std::vector<int> nn_fold(const Emit& e) {
  const int x = e.value(0);
  const FoldWindow f = fold_window(e);
  const Dims o = per_axis(e, "output_size", 2, {});
  const Shape xs = e.shape(x);
  if (xs.rank() != 3 || xs[1] % (f.k[0] * f.k[1]) != 0) {
    e.invalid("takes (batch, C·kh·kw, blocks) with its second axis a multiple of " + std::to_string(f.k[0] * f.k[1]) +
              ", got " + xs.to_string());
  }
  const std::int64_t c = xs[1] / (f.k[0] * f.k[1]);
  const Dims padded{o[0] + 2 * f.p[0], o[1] + 2 * f.p[1]};
  ConvWindow w{f.k, f.s, f.d, "valid", 1};
  w.check(e.node(""), 2);
  const Dims blocks = w.out(e.node(""), padded);
  if (blocks[0] * blocks[1] != xs[2]) {
    e.invalid("output_size " + std::to_string(o[0]) + "x" + std::to_string(o[1]) + " has " + std::to_string(blocks[0] * blocks[1]) +
              " blocks, the input " + std::to_string(xs[2]));
  }
  const int cols = e.reshape(transpose_to(e, x, {0, 2, 1}), {xs[0], blocks[0], blocks[1], xs[1]});
  Attrs a = w.attrs();
  a.set("input_shape", Dims{xs[0], padded[0], padded[1], c});
  int y = e.add("conv2d_backprop_input", {cols, unfold_kernel(e, c, f.k[0], f.k[1])}, a, "col2im");
  if (f.p[0] > 0 || f.p[1] > 0) y = e.add("crop", {y}, Attrs{{"begin", Dims{0, f.p[0], f.p[1], 0}}, {"shape", Dims{xs[0], o[0], o[1], c}}}, "crop");
  return {transpose_to(e, y, {0, 3, 1, 2})};
}

}  // namespace

// tf.image.resize after Keras's crop or pad to the target's aspect ratio (the Resizing
// layer's boxes, image_resize.h), channels-first between two transposes.
std::vector<int> image_resize(const Emit& e) {
  const Dims size = e.config().ints("size");
  if (size.size() != 2 || size[0] < 1 || size[1] < 1) e.invalid("\"size\" must be two positive ints");
  const bool crop = e.flag("crop_to_aspect_ratio", false), pad = e.flag("pad_to_aspect_ratio", false);
  if (crop && pad) e.invalid("only one of crop_to_aspect_ratio and pad_to_aspect_ratio can be true (Keras refuses both)");
  const std::string method = e.config().s_or("interpolation", "bilinear");
  check_resize_method(method, e.node(""));
  if (pad && e.config().s_or("fill_mode", "constant") != "constant") e.invalid("fill_mode must be \"constant\"");
  return {channels_last_run(e, img_image(e, 0), [&](int x) {
    const std::int64_t h = e.shape(x)[1], w = e.shape(x)[2];
    if (crop) {
      const ImageBox box = aspect_crop_box(h, w, size[0], size[1], /*float32=*/true);
      if (box.height != h || box.width != w) x = emit_crop_box(e.g, x, box, 1, e.node("crop"));
    } else if (pad) {
      const ImageBox box = aspect_pad_box(h, w, size[0], size[1]);
      if (box.top > 0 || box.left > 0) x = emit_pad_hw(e.g, x, box.top, box.left, e.config().f_or("fill_value", 0.0), e.node("pad"));
    }
    return emit_resize(e.g, x, size[0], size[1], method, e.flag("antialias", false), e.node("resize"));
  })};
}

void add_image_emitters(std::map<std::string, Emitter>& table) {
  table["RGBToGrayscale"] = image_rgb_to_grayscale;
  table["RGBToHSV"] = image_rgb_to_hsv;
  table["HSVToRGB"] = image_hsv_to_rgb;
  table["PadImages"] = image_pad_images;
  table["CropImages"] = image_crop_images;
  table["GaussianBlur"] = image_gaussian_blur;
  table["SobelEdges"] = image_sobel_edges;
  table["SSIM"] = image_ssim;
  table["ExtractPatches"] = image_extract_patches;
  table["AffineTransform"] = image_affine_transform;
  table["PerspectiveTransform"] = image_perspective_transform;
  table["Unfold"] = nn_unfold;  // keras.ops.nn's patch operations, written as extract_patches is
  table["Fold"] = nn_fold;
}

}  // namespace nnfit::operation_emit
