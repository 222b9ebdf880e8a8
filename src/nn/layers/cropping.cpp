// Cropping1D/2D/3D: the crop op on the spatial axes.
#include "nn/layers/spatial_axes.h"
#include "nnfit/nn/reshaping_layers.h"

namespace nnfit {

Cropping::Cropping(std::string name, CroppingOptions options) : Layer(std::move(name)), options_(std::move(options)) {
  NNFIT_CHECK(options_.rank >= 1 && options_.rank <= 3 && static_cast<int>(options_.cropping.size()) == options_.rank,
              InvalidArgument, this->name(), ": cropping needs one (before, after) pair per spatial axis");
  for (const auto& p : options_.cropping) {
    NNFIT_CHECK(p[0] >= 0 && p[1] >= 0, InvalidArgument, this->name(), ": cropping must be >= 0");
  }
}

Shape Cropping::output_shape(const Shape& s) const {
  check_spatial_rank(s, options_.rank, name(), class_name());
  std::vector<std::int64_t> out = s.dims();
  for (int i = 0; i < options_.rank; ++i) {
    const auto& c = options_.cropping[static_cast<std::size_t>(i)];
    auto& d = out[static_cast<std::size_t>(spatial_axis(i, options_.channels_first))];
    if (d < 0) continue;  // known per batch (Note [Shapes known per batch]); checked there
    NNFIT_CHECK(c[0] + c[1] < d, InvalidArgument, name(), ": cropping (", c[0], ", ", c[1], ") leaves nothing of ",
                s.to_string());
    d -= c[0] + c[1];
  }
  return Shape(out);
}

int Cropping::call(GraphBuilder& b, int x) {
  const Shape s = b.graph().desc(x).shape;
  const Shape out = output_shape(Shape(std::vector<std::int64_t>(s.dims().begin() + 1, s.dims().end())));
  std::vector<std::int64_t> begin(static_cast<std::size_t>(s.rank()), 0), size{s[0]};
  size.insert(size.end(), out.dims().begin(), out.dims().end());
  for (int i = 0; i < options_.rank; ++i) {
    begin[static_cast<std::size_t>(spatial_axis(i, options_.channels_first) + 1)] =
        options_.cropping[static_cast<std::size_t>(i)][0];
  }
  Attrs a;
  a.set("begin", begin);
  a.set("shape", size);
  return b.graph().add("crop", {x}, a, name() + "/crop");
}

}  // namespace nnfit
