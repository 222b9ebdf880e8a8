// Resizing: Keras 3's keras.ops.image.resize on the TensorFlow backend, as a crop or pad to
// the target's aspect ratio (when asked) followed by the resize op; channels-first inputs
// are transposed to channels last around them, as Keras does.
#include "nn/layers/image_resize.h"
#include "nn/layers/spatial_axes.h"
#include "nnfit/core/error.h"
#include "nnfit/nn/image_preprocessing_layers.h"

namespace nnfit {

Resizing::Resizing(std::string name, ResizingOptions options) : Layer(std::move(name)), options_(std::move(options)) {
  NNFIT_CHECK(options_.height >= 1 && options_.width >= 1, InvalidArgument, this->name(),
              ": height and width must be >= 1, got ", options_.height, " and ", options_.width);
  check_resize_method(options_.interpolation, this->name());
  NNFIT_CHECK(!(options_.crop_to_aspect_ratio && options_.pad_to_aspect_ratio), InvalidArgument, this->name(),
              ": only one of crop_to_aspect_ratio and pad_to_aspect_ratio can be true (Keras refuses both)");
  NNFIT_CHECK(options_.fill_mode == "constant", InvalidArgument, this->name(), ": fill_mode \"", options_.fill_mode,
              "\" is not supported; Keras implements only \"constant\"");
}

Shape Resizing::output_shape(const Shape& s) const {
  check_spatial_rank(s, 2, name(), class_name());
  std::vector<std::int64_t> out = s.dims();
  out[static_cast<std::size_t>(spatial_axis(0, options_.channels_first))] = options_.height;
  out[static_cast<std::size_t>(spatial_axis(1, options_.channels_first))] = options_.width;
  return Shape(out);
}

int Resizing::call(GraphBuilder& b, int x) {
  Graph& g = b.graph();
  const Shape s = g.desc(x).shape;
  output_shape(Shape(std::vector<std::int64_t>(s.dims().begin() + 1, s.dims().end())));
  int y = options_.channels_first ? emit_to_channels_last(g, x, name() + "/to_channels_last") : x;
  const std::int64_t h = g.desc(y).shape[1], w = g.desc(y).shape[2];
  if (options_.crop_to_aspect_ratio) {
    const ImageBox box = aspect_crop_box(h, w, options_.height, options_.width, /*float32=*/true);
    if (box.height != h || box.width != w) y = emit_crop_box(g, y, box, 1, name() + "/crop");
  } else if (options_.pad_to_aspect_ratio) {
    const ImageBox box = aspect_pad_box(h, w, options_.height, options_.width);
    if (box.top > 0 || box.left > 0) y = emit_pad_hw(g, y, box.top, box.left, options_.fill_value, name() + "/pad");
  }
  y = emit_resize(g, y, options_.height, options_.width, options_.interpolation, options_.antialias,
                  name() + "/resize");
  return options_.channels_first ? emit_to_channels_first(g, y, name() + "/to_channels_first") : y;
}

}  // namespace nnfit
