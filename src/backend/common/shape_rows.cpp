// Strides, the axis view and transpose's plan (backend/common/shape_rows.h).
#include "backend/common/shape_rows.h"

namespace nnfit {

std::vector<std::int64_t> strides_of(const Shape& s) {
  std::vector<std::int64_t> st(static_cast<std::size_t>(s.rank()), 1);
  for (std::int64_t d = s.rank() - 2; d >= 0; --d) st[static_cast<std::size_t>(d)] = st[static_cast<std::size_t>(d) + 1] * s[d + 1];
  return st;
}

AxisView axis_view(const Shape& s, std::int64_t axis) {
  AxisView v;
  for (std::int64_t d = 0; d < s.rank(); ++d) (d < axis ? v.outer : d == axis ? v.axis : v.inner) *= s[d];
  return v;
}

PadCropPlan::PadCropPlan(bool pad_, Shape small_, Shape big_, std::vector<std::int64_t> offset_, float value_)
    : pad(pad_), value(value_), small(std::move(small_)), big(std::move(big_)), offset(std::move(offset_)),
      big_strides(strides_of(big)), row(small.rank() > 0 ? small[small.rank() - 1] : 0) {}

TransposePlan transpose_plan(const Shape& x, const std::vector<std::int64_t>& perm) {
  TransposePlan p;
  const auto xs = strides_of(x);
  std::vector<std::int64_t> dims;
  for (std::int64_t a : perm) {
    dims.push_back(x[a]);
    p.step.push_back(xs[static_cast<std::size_t>(a)]);
  }
  p.y_shape = Shape(dims);
  if (p.y_shape.rank() > 0) {
    p.last = p.y_shape[p.y_shape.rank() - 1];
    p.last_step = p.step.back();
  }
  return p;
}

}  // namespace nnfit
