// Aspect-ratio boxes and the crop, pad, resize and transpose emission of the image layers
// (image_resize.h).
#include "nn/layers/image_resize.h"

#include <algorithm>

#include "backend/common/resize_taps.h"
#include "nnfit/core/error.h"

namespace nnfit {

namespace {

// int(a / b) for a, b > 0: TensorFlow's float32 division then cast, or Python's.
std::int64_t truncated_quotient(std::int64_t a, std::int64_t b, bool float32) {
  if (float32) return static_cast<std::int64_t>(static_cast<float>(a) / static_cast<float>(b));
  return static_cast<std::int64_t>(static_cast<double>(a) / static_cast<double>(b));
}

}  // namespace

ImageBox aspect_crop_box(std::int64_t h, std::int64_t w, std::int64_t th, std::int64_t tw, bool float32) {
  ImageBox box;
  box.height = std::max<std::int64_t>(std::min(h, truncated_quotient(w * th, tw, float32)), 1);
  box.width = std::max<std::int64_t>(std::min(w, truncated_quotient(h * tw, th, float32)), 1);
  box.top = truncated_quotient(h - box.height, 2, float32);
  box.left = truncated_quotient(w - box.width, 2, float32);
  return box;
}

ImageBox aspect_pad_box(std::int64_t h, std::int64_t w, std::int64_t th, std::int64_t tw) {
  const std::int64_t pad_h = std::max(h, truncated_quotient(w * th, tw, true));
  const std::int64_t pad_w = std::max(w, truncated_quotient(h * tw, th, true));
  ImageBox box;
  box.top = truncated_quotient(pad_h - h, 2, true);
  box.left = truncated_quotient(pad_w - w, 2, true);
  box.height = h + 2 * box.top;
  box.width = w + 2 * box.left;
  return box;
}

int emit_crop_box(Graph& g, int x, const ImageBox& box, int h_axis, const std::string& name) {
  const Shape& s = g.desc(x).shape;
  std::vector<std::int64_t> begin(static_cast<std::size_t>(s.rank()), 0), size = s.dims();
  begin[static_cast<std::size_t>(h_axis)] = box.top;
  begin[static_cast<std::size_t>(h_axis) + 1] = box.left;
  size[static_cast<std::size_t>(h_axis)] = box.height;
  size[static_cast<std::size_t>(h_axis) + 1] = box.width;
  Attrs a;
  a.set("begin", begin);
  a.set("shape", size);
  return g.add("crop", {x}, a, name);
}

int emit_pad_hw(Graph& g, int x, std::int64_t rows, std::int64_t cols, double value, const std::string& name) {
  const std::vector<std::int64_t> sides{0, rows, cols, 0};
  Attrs a;
  a.set("before", sides);
  a.set("after", sides);
  a.set("value", value);
  return g.add("pad", {x}, a, name);
}

int emit_resize(Graph& g, int x, std::int64_t oh, std::int64_t ow, const std::string& method, bool antialias,
                const std::string& name) {
  Attrs a;
  a.set("size", std::vector<std::int64_t>{oh, ow});
  a.set("method", method);
  a.set("antialias", std::int64_t{antialias ? 1 : 0});
  return g.add("resize", {x}, a, name);
}

int emit_to_channels_last(Graph& g, int x, const std::string& name) {
  Attrs a;
  a.set("perm", std::vector<std::int64_t>{0, 2, 3, 1});
  return g.add("transpose", {x}, a, name);
}

int emit_to_channels_first(Graph& g, int x, const std::string& name) {
  Attrs a;
  a.set("perm", std::vector<std::int64_t>{0, 3, 1, 2});
  return g.add("transpose", {x}, a, name);
}

void check_resize_method(const std::string& method, const std::string& layer) {
  ResizeInterpolation m;
  NNFIT_CHECK(parse_resize_method(method, &m), InvalidArgument, layer, ": interpolation \"", method,
              "\" is not one of ", kResizeMethodNames);
}

}  // namespace nnfit
