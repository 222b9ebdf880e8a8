// Private to the CUDA backend: what a kernel body needs to compile both under nvcc (for
// the device) and under g++ (for the host-run check): the NNFIT_HD qualifier and float32
// <-> bfloat16 / float16 conversions in integer arithmetic, bit for bit those of
// core/dtype.cpp, so a body rounds the same on either side (no __half intrinsics: their
// rounding is not core's for NaN payloads, and the host has none).
#pragma once
#include <cstdint>
#include <cstring>

#include "backend/common/hd.h"

namespace nnfit::cuda {

// Storage types of the low-precision dtypes: their bits, converted through float.
struct Bf16 {
  std::uint16_t bits;
};
struct F16 {
  std::uint16_t bits;
};

NNFIT_HD std::uint32_t float_bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
NNFIT_HD float bits_float(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

NNFIT_HD float to_float(float x) { return x; }
NNFIT_HD float to_float(Bf16 x) { return bits_float(static_cast<std::uint32_t>(x.bits) << 16); }
NNFIT_HD float to_float(F16 x) {
  const std::uint32_t h = x.bits;
  const std::uint32_t sign = (h & 0x8000u) << 16;
  std::uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
  if (exp == 0) {
    if (mant == 0) return bits_float(sign);
    exp = 127 - 15 + 1;
    while ((mant & 0x400u) == 0) {
      mant <<= 1;
      --exp;
    }
    return bits_float(sign | (exp << 23) | ((mant & 0x3ffu) << 13));
  }
  if (exp == 31) return bits_float(sign | 0x7f800000u | (mant << 13));
  return bits_float(sign | ((exp + 127 - 15) << 23) | (mant << 13));
}

template <class T>
NNFIT_HD T from_float(float v);
template <>
NNFIT_HD float from_float<float>(float v) {
  return v;
}
template <>
NNFIT_HD Bf16 from_float<Bf16>(float v) {
  std::uint32_t b = float_bits(v);
  if ((b & 0x7fffffffu) > 0x7f800000u) return Bf16{static_cast<std::uint16_t>((b >> 16) | 0x40u)};
  b += 0x7fffu + ((b >> 16) & 1u);
  return Bf16{static_cast<std::uint16_t>(b >> 16)};
}
template <>
NNFIT_HD F16 from_float<F16>(float v) {
  const std::uint32_t x = float_bits(v);
  const std::uint32_t sign = (x >> 16) & 0x8000u, mag = x & 0x7fffffffu;
  if (mag > 0x7f800000u) return F16{static_cast<std::uint16_t>(sign | 0x7e00u)};
  if (mag >= 0x477ff000u) return F16{static_cast<std::uint16_t>(sign | 0x7c00u)};
  if (mag < 0x38800000u) {
    if (mag < 0x33000000u) return F16{static_cast<std::uint16_t>(sign)};
    const std::uint32_t exp = mag >> 23, mant = (mag & 0x7fffffu) | 0x800000u, shift = 126 - exp;
    std::uint32_t result = mant >> shift;
    const std::uint32_t rem = mant & ((1u << shift) - 1), halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (result & 1u))) ++result;
    return F16{static_cast<std::uint16_t>(sign | result)};
  }
  const std::uint32_t rounded = mag + 0xfffu + ((mag >> 13) & 1u);
  return F16{static_cast<std::uint16_t>(sign | ((rounded - 0x38000000u) >> 13))};
}

// Element i of a tensor of storage type T, as float; and the store back.
template <class T>
NNFIT_HD float load(const void* p, std::int64_t i) {
  return to_float(static_cast<const T*>(p)[i]);
}
template <class T>
NNFIT_HD void store(void* p, std::int64_t i, float v) {
  static_cast<T*>(p)[i] = from_float<T>(v);
}

}  // namespace nnfit::cuda
