// CenterCrop: Keras 3's centred window of the target size, or, when the input is smaller
// on either axis, its smart_resize (the largest centred window with the target's aspect
// ratio, resized bilinearly to the target).
#include "nn/layers/image_resize.h"
#include "nn/layers/spatial_axes.h"
#include "nnfit/core/error.h"
#include "nnfit/nn/image_preprocessing_layers.h"

namespace nnfit {

CenterCrop::CenterCrop(std::string name, CenterCropOptions options)
    : Layer(std::move(name)), options_(std::move(options)) {
  NNFIT_CHECK(options_.height >= 1 && options_.width >= 1, InvalidArgument, this->name(),
              ": height and width must be >= 1, got ", options_.height, " and ", options_.width);
}

Shape CenterCrop::output_shape(const Shape& s) const {
  check_spatial_rank(s, 2, name(), class_name());
  std::vector<std::int64_t> out = s.dims();
  out[static_cast<std::size_t>(spatial_axis(0, options_.channels_first))] = options_.height;
  out[static_cast<std::size_t>(spatial_axis(1, options_.channels_first))] = options_.width;
  return Shape(out);
}

int CenterCrop::call(GraphBuilder& b, int x) {
  Graph& g = b.graph();
  const Shape s = g.desc(x).shape;
  output_shape(Shape(std::vector<std::int64_t>(s.dims().begin() + 1, s.dims().end())));
  const int h_axis = options_.channels_first ? 2 : 1;
  const std::int64_t h = s[h_axis], w = s[h_axis + 1];
  const std::int64_t th = options_.height, tw = options_.width;
  if (h >= th && w >= tw) {
    return emit_crop_box(g, x, ImageBox{(h - th) / 2, (w - tw) / 2, th, tw}, h_axis, name() + "/crop");
  }
  int y = options_.channels_first ? emit_to_channels_last(g, x, name() + "/to_channels_last") : x;
  // smart_resize computes its box in Python floats on static shapes.
  const ImageBox box = aspect_crop_box(h, w, th, tw, /*float32=*/false);
  if (box.height != h || box.width != w) y = emit_crop_box(g, y, box, 1, name() + "/crop");
  y = emit_resize(g, y, th, tw, "bilinear", false, name() + "/resize");
  return options_.channels_first ? emit_to_channels_first(g, y, name() + "/to_channels_first") : y;
}

}  // namespace nnfit
