// ZeroPadding1D/2D/3D: the pad op on the spatial axes.
#include "nn/layers/spatial_axes.h"
#include "nnfit/nn/reshaping_layers.h"

namespace nnfit {

ZeroPadding::ZeroPadding(std::string name, ZeroPaddingOptions options) : Layer(std::move(name)), options_(std::move(options)) {
  NNFIT_CHECK(options_.rank >= 1 && options_.rank <= 3 && static_cast<int>(options_.padding.size()) == options_.rank,
              InvalidArgument, this->name(), ": padding needs one (before, after) pair per spatial axis");
  for (const auto& p : options_.padding) {
    NNFIT_CHECK(p[0] >= 0 && p[1] >= 0, InvalidArgument, this->name(), ": padding must be >= 0");
  }
}

Shape ZeroPadding::output_shape(const Shape& s) const {
  check_spatial_rank(s, options_.rank, name(), class_name());
  std::vector<std::int64_t> out = s.dims();
  for (int i = 0; i < options_.rank; ++i) {
    const auto& p = options_.padding[static_cast<std::size_t>(i)];
    auto& d = out[static_cast<std::size_t>(spatial_axis(i, options_.channels_first))];
    if (d >= 0) d += p[0] + p[1];  // an unknown size stays unknown (Note [Shapes known per batch])
  }
  return Shape(out);
}

int ZeroPadding::call(GraphBuilder& b, int x) {
  const Shape s = b.graph().desc(x).shape;
  output_shape(Shape(std::vector<std::int64_t>(s.dims().begin() + 1, s.dims().end())));
  std::vector<std::int64_t> before(static_cast<std::size_t>(s.rank()), 0), after = before;
  for (int i = 0; i < options_.rank; ++i) {
    const auto axis = static_cast<std::size_t>(spatial_axis(i, options_.channels_first) + 1);
    before[axis] = options_.padding[static_cast<std::size_t>(i)][0];
    after[axis] = options_.padding[static_cast<std::size_t>(i)][1];
  }
  Attrs a;
  a.set("before", before);
  a.set("after", after);
  return b.graph().add("pad", {x}, a, name() + "/pad");
}

}  // namespace nnfit
