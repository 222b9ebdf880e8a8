// Permute: the transpose op with the batch axis kept first.
#include "nnfit/core/error.h"
#include "nnfit/nn/reshaping_layers.h"

namespace nnfit {

Permute::Permute(std::string name, std::vector<std::int64_t> dims) : Layer(std::move(name)), dims_(std::move(dims)) {
  std::vector<bool> seen(dims_.size() + 1, false);
  for (std::int64_t d : dims_) {
    NNFIT_CHECK(d >= 1 && d <= static_cast<std::int64_t>(dims_.size()) && !seen[static_cast<std::size_t>(d)],
                InvalidArgument, this->name(), ": dims must be a permutation of 1..", dims_.size());
    seen[static_cast<std::size_t>(d)] = true;
  }
}

Shape Permute::output_shape(const Shape& s) const {
  NNFIT_CHECK(s.rank() == static_cast<std::int64_t>(dims_.size()), InvalidArgument, name(), ": dims has ",
              dims_.size(), " entries for input ", s.to_string());
  std::vector<std::int64_t> out;
  for (std::int64_t d : dims_) out.push_back(s[d - 1]);
  return Shape(out);
}

int Permute::call(GraphBuilder& b, int x) {
  const Shape s = b.graph().desc(x).shape;
  output_shape(Shape(std::vector<std::int64_t>(s.dims().begin() + 1, s.dims().end())));
  std::vector<std::int64_t> perm{0};
  perm.insert(perm.end(), dims_.begin(), dims_.end());
  Attrs a;
  a.set("perm", perm);
  return b.graph().add("transpose", {x}, a, name() + "/transpose");
}

}  // namespace nnfit
