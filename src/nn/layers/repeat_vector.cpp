// RepeatVector: (batch, features) -> (batch, 1, features) (a free reshape) -> repeat n
// times on axis 1.
#include "nnfit/core/error.h"
#include "nnfit/nn/reshaping_layers.h"

namespace nnfit {

RepeatVector::RepeatVector(std::string name, std::int64_t n) : Layer(std::move(name)), n_(n) {
  NNFIT_CHECK(n_ >= 1, InvalidArgument, this->name(), ": n must be >= 1, got ", n_);
}

Shape RepeatVector::output_shape(const Shape& s) const {
  NNFIT_CHECK(s.rank() == 1, InvalidArgument, name(), ": RepeatVector expects (features), got ", s.to_string());
  return Shape{n_, s[0]};
}

int RepeatVector::call(GraphBuilder& b, int x) {
  const Shape s = b.graph().desc(x).shape;
  output_shape(Shape{s[1]});
  Attrs r;
  r.set("shape", std::vector<std::int64_t>{s[0], 1, s[1]});
  const int x3 = b.graph().add("reshape", {x}, r, name() + "/expand");
  Attrs a;
  a.set("axis", std::int64_t{1});
  a.set("repeats", n_);
  return b.graph().add("repeat", {x3}, a, name() + "/repeat");
}

}  // namespace nnfit
