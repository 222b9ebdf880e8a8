// Private to src/backend: float32 <-> bfloat16 / float16 conversion loops, split over
// threads. bfloat16 as inline bit arithmetic the compiler vectorizes (round to nearest
// even, NaN kept quiet: the bits of core/dtype.cpp's float_to_bf16, checked by the
// low-precision conformance test); float16 through core/dtype.cpp's scalar conversions.
#pragma once
#include <algorithm>
#include <bit>
#include <cstdint>

#include "nnfit/core/dtype.h"

namespace nnfit::low_precision {

inline constexpr std::int64_t kParallelElements = 1 << 15;

// One bfloat16 as float32 and back (round to nearest even, NaN kept quiet): inline bit
// arithmetic, for kernels that read and write bfloat16 in their own loops.
inline float bf16_to_f32(std::uint16_t bits) { return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16); }
inline std::uint16_t f32_to_bf16(float v) {
  const std::uint32_t b = std::bit_cast<std::uint32_t>(v);
  // A signed compare of the non-negative magnitude (x86's packed compares are signed: an
  // unsigned one kept the loops scalar) and a mask select.
  const std::uint32_t nan = 0u - static_cast<std::uint32_t>(static_cast<std::int32_t>(b & 0x7fffffffu) > 0x7f800000);
  const std::uint32_t rounded = (b + 0x7fffu + ((b >> 16) & 1u)) >> 16, quiet = (b >> 16) | 0x40u;
  return static_cast<std::uint16_t>((quiet & nan) | (rounded & ~nan));
}

// An element of a float32-or-bfloat16 loop (bfloat16 held as its bits), computed in
// float32 and rounded once on store: one loop body serves both dtypes.
inline float load(float v) { return v; }
inline float load(std::uint16_t bits) { return bf16_to_f32(bits); }
inline void store(float v, float* out) { *out = v; }
inline void store(float v, std::uint16_t* out) { *out = f32_to_bf16(v); }

inline void to_f32(DType from, const void* src, float* dst, std::int64_t n) {
  const auto* __restrict bits = static_cast<const std::uint16_t*>(src);
  if (from == DType::bf16) {
    auto* __restrict out = reinterpret_cast<std::uint32_t*>(dst);
#pragma omp parallel for simd schedule(static) if (n >= kParallelElements)
    for (std::int64_t i = 0; i < n; ++i) out[i] = static_cast<std::uint32_t>(bits[i]) << 16;
  } else {
#pragma omp parallel for schedule(static) if (n >= kParallelElements)
    for (std::int64_t i = 0; i < n; ++i) dst[i] = f16_to_float(bits[i]);
  }
}

// f32_to_bf16 over n elements, the widest vectors this CPU has (low_precision.cpp).
void f32_to_bf16_run(const float* src, std::uint16_t* out, std::int64_t n);

inline void from_f32(DType to, const float* src, void* dst, std::int64_t n) {
  auto* __restrict out = static_cast<std::uint16_t*>(dst);
  if (to == DType::bf16) {
    constexpr std::int64_t kBlock = 1 << 14;
    const std::int64_t blocks = (n + kBlock - 1) / kBlock;
#pragma omp parallel for schedule(static) if (n >= kParallelElements)
    for (std::int64_t b = 0; b < blocks; ++b) {
      f32_to_bf16_run(src + b * kBlock, out + b * kBlock, std::min(kBlock, n - b * kBlock));
    }
  } else {
#pragma omp parallel for schedule(static) if (n >= kParallelElements)
    for (std::int64_t i = 0; i < n; ++i) out[i] = float_to_f16(src[i]);
  }
}

}  // namespace nnfit::low_precision
