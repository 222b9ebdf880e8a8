// UpSampling1D/2D/3D. Nearest: one repeat op per spatial axis with a size above 1 (Keras
// repeats too). UpSampling2D with another interpolation: Keras's keras.ops.image.resize to
// (size[0] * height, size[1] * width), the resize op, channels last.
#include "nn/layers/image_resize.h"
#include "nn/layers/spatial_axes.h"
#include "nnfit/nn/reshaping_layers.h"

namespace nnfit {

UpSampling::UpSampling(std::string name, UpSamplingOptions options) : Layer(std::move(name)), options_(std::move(options)) {
  NNFIT_CHECK(options_.rank >= 1 && options_.rank <= 3 && static_cast<int>(options_.size.size()) == options_.rank,
              InvalidArgument, this->name(), ": size needs one factor per spatial axis");
  for (std::int64_t f : options_.size) NNFIT_CHECK(f >= 1, InvalidArgument, this->name(), ": size must be >= 1");
  if (options_.interpolation != "nearest") {
    NNFIT_CHECK(options_.rank == 2, InvalidArgument, this->name(), ": interpolation \"", options_.interpolation,
                "\" needs UpSampling2D (UpSampling1D and UpSampling3D repeat)");
    check_resize_method(options_.interpolation, this->name());
  }
}

Shape UpSampling::output_shape(const Shape& s) const {
  check_spatial_rank(s, options_.rank, name(), class_name());
  std::vector<std::int64_t> out = s.dims();
  for (int i = 0; i < options_.rank; ++i) {
    auto& d = out[static_cast<std::size_t>(spatial_axis(i, options_.channels_first))];
    if (d >= 0) d *= options_.size[static_cast<std::size_t>(i)];  // unknown stays unknown (Note [Shapes known per batch])
  }
  return Shape(out);
}

int UpSampling::call(GraphBuilder& b, int x) {
  const Shape s = b.graph().desc(x).shape;
  const Shape out = output_shape(Shape(std::vector<std::int64_t>(s.dims().begin() + 1, s.dims().end())));
  if (options_.interpolation != "nearest") {
    Graph& g = b.graph();
    const bool cf = options_.channels_first;
    int y = cf ? emit_to_channels_last(g, x, name() + "/to_channels_last") : x;
    y = emit_resize(g, y, out[cf ? 1 : 0], out[cf ? 2 : 1], options_.interpolation, false, name() + "/resize");
    return cf ? emit_to_channels_first(g, y, name() + "/to_channels_first") : y;
  }
  int y = x;
  for (int i = 0; i < options_.rank; ++i) {
    if (options_.size[static_cast<std::size_t>(i)] == 1) continue;
    Attrs a;
    a.set("axis", spatial_axis(i, options_.channels_first) + 1);
    a.set("repeats", options_.size[static_cast<std::size_t>(i)]);
    y = b.graph().add("repeat", {y}, a, name() + "/repeat" + std::to_string(i));
  }
  if (y == x) {  // every factor 1: Keras returns the input unchanged
    Attrs a;
    a.set("shape", s.dims());
    y = b.graph().add("reshape", {x}, a, name() + "/identity");
  }
  return y;
}

}  // namespace nnfit
