// The bulk float32 -> bfloat16 rounding, compiled for AVX-512 and AVX2 beside the baseline
// (the library targets x86-64's baseline, SSE2, where the rounding's compare, select and
// 32 -> 16-bit narrowing take about a cycle per element); the loader picks the clone.
#include "backend/common/low_precision.h"

namespace nnfit::low_precision {

__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
void f32_to_bf16_run(const float* __restrict src, std::uint16_t* __restrict out, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) out[i] = f32_to_bf16(src[i]);
}

}  // namespace nnfit::low_precision
