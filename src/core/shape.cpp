// Shape helpers.
#include "nnfit/core/shape.h"

#include "nnfit/core/error.h"

namespace nnfit {

// A product past 2^63 comes only from sizes read from outside (a layer's units, a file's
// header): it is refused here, where every size is computed, instead of wrapping into a
// small allocation that later code overruns.
std::int64_t Shape::numel() const {
  std::int64_t n = 1;
  for (std::int64_t d : dims_) {
    if (__builtin_mul_overflow(n, d, &n)) {
      throw InvalidArgument("shape " + to_string() + " has more elements than 64 bits can count",
                            "a size in the model, the data or the config is far too large");
    }
  }
  return n;
}

std::int64_t Shape::dim(int axis) const {
  int r = rank();
  int a = axis < 0 ? axis + r : axis;
  NNFIT_CHECK(a >= 0 && a < r, InvalidArgument, "axis ", axis, " out of range for shape ",
              to_string());
  return dims_[static_cast<std::size_t>(a)];
}

bool Shape::is_static() const {
  for (std::int64_t d : dims_) {
    if (d < 0) return false;
  }
  return true;
}

bool Shape::admits(const Shape& concrete) const {
  if (concrete.rank() != rank()) return false;
  for (std::size_t i = 0; i < dims_.size(); ++i) {
    if (dims_[i] >= 0 ? concrete.dims_[i] != dims_[i] : concrete.dims_[i] < 0) return false;
  }
  return true;
}

std::string Shape::to_string() const {
  std::string s = "(";
  for (std::size_t i = 0; i < dims_.size(); ++i) {
    if (i) s += ", ";
    s += dims_[i] < 0 ? std::string("None") : std::to_string(dims_[i]);
  }
  if (dims_.size() == 1) s += ",";
  return s + ")";
}

}  // namespace nnfit
