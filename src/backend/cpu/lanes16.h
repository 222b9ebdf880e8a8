// Private to the OpenMP convolution kernels (omp_conv_filter_grad_bf16.cpp,
// cpu_conv_max_pool_argmax.cpp): 16 float lanes as GCC vector extensions, which are
// AVX-512 registers in their x86-64-v4 clones and pairs of AVX2 ones in the v3 clones.
// Written out because GCC kept float[16] sums on the stack, where each multiply-add waited
// on the store of the one before. A scalar times an F16 (`v * w`) compiles to one FMA with
// an embedded broadcast; `F16{} + v` would add a zero first (0 + -0 is +0, so GCC keeps it).
#pragma once
#include <bit>
#include <cstdint>
#include <cstring>

namespace nnfit::lanes16 {

inline constexpr std::int64_t kLanes = 16;     // output channels per block: one AVX-512 float vector
inline constexpr std::int64_t kMaxBlocks = 4;  // blocks per pass: up to 64 channels of sums in registers
inline constexpr std::int64_t kChunk = kLanes * kMaxBlocks;

using F16 = float __attribute__((vector_size(64)));
using U16 = std::uint32_t __attribute__((vector_size(64)));
using I16 = std::int32_t __attribute__((vector_size(64)));
using U16x16h = std::uint16_t __attribute__((vector_size(32)));
using U8x16 = std::uint8_t __attribute__((vector_size(16)));

// GCC warns, in every file that includes this, that passing such a type by value changes
// the ABI of a function compiled without AVX-512: these are inlined into each clone, never
// called across an ABI boundary.
#pragma GCC diagnostic ignored "-Wpsabi"

[[gnu::always_inline]] inline F16 load16(const float* p) {
  F16 r;
  std::memcpy(&r, p, sizeof r);
  return r;
}
// 16 bfloat16 values widened to float.
[[gnu::always_inline]] inline F16 load16_bf16(const std::uint16_t* p) {
  U16x16h h;
  std::memcpy(&h, p, sizeof h);
  return std::bit_cast<F16>(__builtin_convertvector(h, U16) << 16);
}
// 16 bytes widened to 32-bit lanes. In two steps: GCC 12 turns the direct byte-to-word
// conversion into 16 scalar loads and inserts.
[[gnu::always_inline]] inline U16 load16_u8(const std::uint8_t* p) {
  U8x16 b;
  std::memcpy(&b, p, sizeof b);
  return __builtin_convertvector(__builtin_convertvector(b, U16x16h), U16);
}
[[gnu::always_inline]] inline void store16(F16 v, float* p) { std::memcpy(p, &v, sizeof v); }
// v rounded to bfloat16 and back: low_precision::f32_to_bf16 (nearest even, NaN kept quiet)
// on 16 lanes, the low half of each lane zero.
[[gnu::always_inline]] inline F16 round_bf16(F16 v) {
  const U16 b = std::bit_cast<U16>(v);
  const U16 nan = std::bit_cast<U16>(std::bit_cast<I16>(b & 0x7fffffffu) > 0x7f800000);
  const U16 rounded = (b + 0x7fffu + ((b >> 16) & 1u)) & 0xffff0000u, quiet = (b | 0x00400000u) & 0xffff0000u;
  return std::bit_cast<F16>((quiet & nan) | (rounded & ~nan));
}
// mask ? a : b per lane (mask all ones or zero).
[[gnu::always_inline]] inline F16 select(U16 mask, F16 a, F16 b) {
  return std::bit_cast<F16>((std::bit_cast<U16>(a) & mask) | (std::bit_cast<U16>(b) & ~mask));
}

}  // namespace nnfit::lanes16
