// Private: the [outer, reduced, inner] view of a tensor that the reductions
// (graph/reduce_op_defs.cpp) take over a run of adjacent axes; shared by their reference
// and OpenMP kernels so both read the attributes the same way.
#pragma once
#include <cstdint>
#include <vector>

#include "nnfit/core/shape.h"

namespace nnfit {

struct ReduceView {
  std::int64_t outer = 1, reduced = 1, inner = 1;
};

// `axes` is ascending and adjacent (checked by shape inference).
inline ReduceView reduce_view(const Shape& x, const std::vector<std::int64_t>& axes) {
  ReduceView v;
  for (std::int64_t d = 0; d < x.rank(); ++d) {
    (d < axes.front() ? v.outer : d <= axes.back() ? v.reduced : v.inner) *= x[d];
  }
  return v;
}

}  // namespace nnfit
