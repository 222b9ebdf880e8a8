// Column sums of a row-major [rows, C] array as the bias gradients take them (omp:bias_add_grad,
// omp:max_pool2d_grad_bias): rows summed in float, vector-wide, by blocks that start at
// multiples of kColumnSumBlock rows, each block's sum added in double. The blocks do not move
// with the range a thread is given, so the float sums are the same for any thread count (only
// the order of the double partials differs): 1.5x faster than adding every row in double,
// within 1e-6 relative of it.
#pragma once
#include <algorithm>
#include <cstdint>

#include "backend/common/low_precision.h"

namespace nnfit {

inline constexpr std::int64_t kColumnSumBlock = 16;

// acc[c] += the sum over rows [begin, end) of x[r * C + c]; `block` is float[C] scratch.
// T: float, or bfloat16 held as its bits (low_precision::load).
template <typename T>
inline void add_column_sums(const T* x, std::int64_t begin, std::int64_t end, std::int64_t C, float* block,
                            double* acc) {
  using low_precision::load;
  for (std::int64_t r0 = begin; r0 < end;) {
    const std::int64_t r1 = std::min(end, (r0 / kColumnSumBlock + 1) * kColumnSumBlock);
    const T* first = x + r0 * C;
#pragma omp simd
    for (std::int64_t c = 0; c < C; ++c) block[c] = load(first[c]);
    for (std::int64_t r = r0 + 1; r < r1; ++r) {
      const T* row = x + r * C;
#pragma omp simd
      for (std::int64_t c = 0; c < C; ++c) block[c] += load(row[c]);
    }
#pragma omp simd
    for (std::int64_t c = 0; c < C; ++c) acc[c] += block[c];
    r0 = r1;
  }
}

}  // namespace nnfit
