// The geometry of the data-movement kernels shared by the reference kernels (ref_shape.cpp,
// ref_merge.cpp) and the OpenMP ones (omp_shape.cpp): row-major strides, the [outer, axis,
// inner] view of a shape, and transpose's plan with its one row function. The two kernels
// differ only in how they walk the rows (a running index, or a static share per thread), so
// every output element is computed by the same code: bit-identical.
#pragma once
#include <cstdint>
#include <cstring>
#include <vector>

#include "nnfit/core/shape.h"

namespace nnfit {

// Row-major strides, in elements.
std::vector<std::int64_t> strides_of(const Shape& s);

// A shape seen as [outer, axis, inner] around one axis.
struct AxisView {
  std::int64_t outer = 1, axis = 1, inner = 1;
};
AxisView axis_view(const Shape& s, std::int64_t axis);

// pad (small x into big y, the rest `value`) or crop (big x to small y) at `offset` in big.
struct PadCropPlan {
  PadCropPlan(bool pad, Shape small, Shape big, std::vector<std::int64_t> offset, float value);
  bool pad;
  float value;
  Shape small, big;
  std::vector<std::int64_t> offset, big_strides;
  std::int64_t row = 0;  // small's last axis: one memcpy a row
};

// One row: pad copies x's row at small_at to y at big_at; crop copies x at big_at to y's
// row at small_at.
inline void pad_crop_row(const PadCropPlan& p, const float* x, float* y, std::int64_t small_at, std::int64_t big_at) {
  const auto bytes = static_cast<std::size_t>(p.row) * sizeof(float);
  if (p.pad) {
    std::memcpy(y + big_at, x + small_at, bytes);
  } else {
    std::memcpy(y + small_at, x + big_at, bytes);
  }
}

// transpose's output shape and, per output axis, the stride of x it walks.
struct TransposePlan {
  Shape y_shape;
  std::vector<std::int64_t> step;
  std::int64_t last = 0, last_step = 0;  // the output's last axis and x's stride along it
};
TransposePlan transpose_plan(const Shape& x, const std::vector<std::int64_t>& perm);

// The cases of transpose with no row to walk: true when done (an empty output, or a scalar
// copied).
inline bool transpose_without_rows(const TransposePlan& p, const float* x, float* y) {
  if (p.y_shape.numel() == 0) return true;
  if (p.y_shape.rank() == 0) {
    *y = *x;
    return true;
  }
  return false;
}

// One output row of transpose: y_row[j] = x[at + j·last_step], at = x's offset of the row.
inline void transpose_row(const TransposePlan& p, const float* x, std::int64_t at, float* y_row) {
  for (std::int64_t j = 0; j < p.last; ++j) y_row[j] = x[at + j * p.last_step];
}

}  // namespace nnfit
