// Flatten and Reshape: views, aliased by the planner (no copy).
#include "nnfit/core/error.h"
#include "nnfit/nn/layers.h"

namespace nnfit {

namespace {
int emit_reshape(GraphBuilder& b, int x, const Shape& sample, const std::string& name) {
  std::vector<std::int64_t> dims{b.graph().desc(x).shape[0]};
  dims.insert(dims.end(), sample.dims().begin(), sample.dims().end());
  Attrs a;
  a.set("shape", dims);
  return b.graph().add("reshape", {x}, a, name + "/reshape");
}
}  // namespace

Shape Flatten::output_shape(const Shape& s) const { return Shape{s.is_static() ? s.numel() : kUnknownDim}; }

int Flatten::call(GraphBuilder& b, int x) {
  Shape s = b.graph().desc(x).shape;
  return emit_reshape(b, x, Shape{s.numel() / std::max<std::int64_t>(s[0], 1)}, name());
}

Reshape::Reshape(std::string name, std::vector<std::int64_t> target) : Layer(std::move(name)), target_(std::move(target)) {
  int unknown = 0;
  for (std::int64_t d : target_) {
    NNFIT_CHECK(d > 0 || d == -1, InvalidArgument, this->name(), ": target_shape entries must be positive or -1");
    unknown += d == -1;
  }
  NNFIT_CHECK(unknown <= 1, InvalidArgument, this->name(), ": at most one target_shape entry may be -1");
}

Shape Reshape::output_shape(const Shape& s) const {
  if (!s.is_static()) return Shape(target_);  // the -1 entry, if any, known per batch
  std::int64_t known = 1;
  for (std::int64_t d : target_) known *= d == -1 ? 1 : d;
  std::vector<std::int64_t> out = target_;
  for (std::int64_t& d : out) {
    if (d == -1) {
      NNFIT_CHECK(known > 0 && s.numel() % known == 0, InvalidArgument, name(), ": cannot reshape ", s.to_string(),
                  " to ", Shape(target_).to_string());
      d = s.numel() / known;
    }
  }
  Shape o(out);
  NNFIT_CHECK(o.numel() == s.numel(), InvalidArgument, name(), ": cannot reshape ", s.to_string(), " (",
              s.numel(), " values) to ", o.to_string(), " (", o.numel(), " values)");
  return o;
}

int Reshape::call(GraphBuilder& b, int x) {
  Shape s = b.graph().desc(x).shape;
  std::vector<std::int64_t> sample(s.dims().begin() + 1, s.dims().end());
  return emit_reshape(b, x, output_shape(Shape(sample)), name());
}

}  // namespace nnfit
