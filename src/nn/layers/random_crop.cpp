// RandomCrop: Keras 3.15's get_random_transformation and transform_images on static shapes.
// The random window is the same for the whole batch (Keras draws one offset per call): its
// rows and columns are gathered by index from a per-step draw (noise over one element,
// floored), so the crop runs on every backend and its gradient is gather's.
#include <algorithm>

#include "nn/layers/image_resize.h"
#include "nn/layers/layer_seed.h"
#include "nn/layers/spatial_axes.h"
#include "nnfit/core/error.h"
#include "nnfit/nn/random_crop_layer.h"

namespace nnfit {

namespace {
namespace random_crop_ops {

std::vector<std::int64_t> dims(std::initializer_list<std::int64_t> d) { return d; }

// `c` in a tensor of x's first `shape` elements (crop -> isnan -> scale by 0), whatever x holds.
int constant(Graph& g, int x, std::vector<std::int64_t> shape, double c, const std::string& name) {
  const int part =
      g.add("crop", {x}, Attrs{{"begin", dims({0, 0, 0, 0})}, {"shape", std::move(shape)}}, name + "/crop");
  const int nan = g.add("unary", {part}, Attrs{{"kind", std::string("isnan")}}, name + "/isnan");
  return g.add("scale", {nan}, Attrs{{"factor", 0.0}, {"offset", c}}, name);
}

// Rows [start, start + size) of x along `axis` (1: height, 2: width) for `start` a [1]
// value: x's axis moved first, flattened to [length, rest], gathered, and moved back.
int gather_window(Graph& g, int x, int axis, int start, std::int64_t size, const std::string& name) {
  // The indices start + 0, 1, ..., size - 1: a cumulative sum of ones, less one.
  const int ones = constant(g, x, dims({1, axis == 1 ? size : 1, axis == 2 ? size : 1, 1}), 1.0, name + "/ones");
  const int flat_ones = g.add("reshape", {ones}, Attrs{{"shape", dims({size})}}, name + "/flat_ones");
  const Attrs cumsum{{"kind", std::string("cumsum")}, {"axis", std::int64_t{0}}, {"reverse", std::int64_t{0}}};
  const int counts = g.add("cumulative", {flat_ones}, cumsum, name + "/counts");
  const int iota = g.add("scale", {counts}, Attrs{{"factor", 1.0}, {"offset", -1.0}}, name + "/iota");
  const int ids = g.add("binary", {iota, start}, Attrs{{"kind", std::string("add")}}, name + "/ids");
  const std::vector<std::int64_t> to_front = axis == 1 ? dims({1, 0, 2, 3}) : dims({2, 0, 1, 3});
  const std::vector<std::int64_t> back = axis == 1 ? dims({1, 0, 2, 3}) : dims({1, 2, 0, 3});
  const int front = g.add("transpose", {x}, Attrs{{"perm", to_front}}, name + "/to_front");
  const Shape fs = g.desc(front).shape;
  const int rows = g.add("reshape", {front}, Attrs{{"shape", dims({fs[0], fs[1] * fs[2] * fs[3]})}}, name + "/rows");
  const int picked = g.add("gather", {rows, ids}, {}, name + "/gather");
  const int shaped = g.add("reshape", {picked}, Attrs{{"shape", dims({size, fs[1], fs[2], fs[3]})}}, name + "/window");
  return g.add("transpose", {shaped}, Attrs{{"perm", back}}, name + "/back");
}

// One draw per step: floor(u·(length − size + 1)), u uniform in [0, 1), as a [1] value.
int window_start(Graph& g, int x, std::int64_t length, std::int64_t size, std::int64_t seed, const std::string& name) {
  const int zero = g.add("reshape", {constant(g, x, dims({1, 1, 1, 1}), 0.0, name + "/zero")},
                         Attrs{{"shape", dims({1})}}, name + "/flat");
  const Attrs draw{
      {"kind", std::string("uniform_add")}, {"value", static_cast<double>(length - size + 1)}, {"seed", seed}};
  return g.add("unary", {g.add("noise", {zero}, draw, name + "/draw")}, Attrs{{"kind", std::string("floor")}},
               name + "/start");
}

}  // namespace random_crop_ops
}  // namespace

RandomCrop::RandomCrop(std::string name, RandomCropOptions options)
    : Layer(std::move(name)), options_(std::move(options)) {
  NNFIT_CHECK(options_.height >= 1 && options_.width >= 1, InvalidArgument, this->name(),
              ": height and width must be >= 1, got ", options_.height, " and ", options_.width);
}

Shape RandomCrop::output_shape(const Shape& s) const {
  check_spatial_rank(s, 2, name(), class_name());
  return Shape{options_.height, options_.width, s[2]};
}

int RandomCrop::call(GraphBuilder& b, int x) {
  using namespace random_crop_ops;
  Graph& g = b.graph();
  const Shape s = g.desc(x).shape;
  const std::int64_t h = s[1], w = s[2], th = options_.height, tw = options_.width;
  if (b.training() && h > th && w > tw) {
    const std::int64_t seed = layer_op_seed(name(), options_.seed.value_or(0));
    const int rows = gather_window(g, x, 1, window_start(g, x, h, th, seed, name() + "/top"), th, name() + "/rows");
    return gather_window(g, rows, 2, window_start(g, x, w, tw, seed + 1, name() + "/left"), tw, name() + "/columns");
  }
  // Keras's fixed window: its start from the largest centred window of the target's aspect
  // ratio (Python's float arithmetic), its size the target's, clipped to the image.
  const ImageBox centred = aspect_crop_box(h, w, th, tw, /*float32=*/false);
  ImageBox box{centred.top, centred.left, std::min(th, h - centred.top), std::min(tw, w - centred.left)};
  int y = box.top == 0 && box.left == 0 && box.height == h && box.width == w
              ? x
              : emit_crop_box(g, x, box, 1, name() + "/crop");
  if (box.height != th || box.width != tw) y = emit_resize(g, y, th, tw, "bilinear", false, name() + "/resize");
  return y;
}

}  // namespace nnfit
