// Rescaling (the scale op with an offset) and UnitNormalization (l2_normalize along one
// axis).
#include "nnfit/core/error.h"
#include "nnfit/nn/layers.h"

namespace nnfit {

Rescaling::Rescaling(std::string name, double scale, double offset)
    : Layer(std::move(name)), scale_(scale), offset_(offset) {}

int Rescaling::call(GraphBuilder& b, int x) {
  Attrs a;
  a.set("factor", scale_);
  a.set("offset", offset_);
  return b.graph().add("scale", {x}, a, name() + "/rescale");
}

UnitNormalization::UnitNormalization(std::string name, std::int64_t axis) : Layer(std::move(name)), axis_(axis) {}

Shape UnitNormalization::output_shape(const Shape& s) const {
  const std::int64_t rank = s.rank() + 1;  // with the batch axis
  const std::int64_t a = axis_ < 0 ? axis_ + rank : axis_;
  NNFIT_CHECK(a >= 1 && a < rank, InvalidArgument, name(), ": axis ", axis_, " is out of range for inputs of rank ",
              rank, " (with the batch axis); normalizing across the batch is not supported");
  return s;
}

int UnitNormalization::call(GraphBuilder& b, int x) {
  const std::int64_t rank = b.graph().desc(x).shape.rank();
  output_shape(Shape(std::vector<std::int64_t>(static_cast<std::size_t>(rank - 1), 1)));
  Attrs a;
  a.set("axis", axis_ < 0 ? axis_ + rank : axis_);
  return b.graph().add("l2_normalize", {x}, a, name() + "/l2_normalize");
}

}  // namespace nnfit
