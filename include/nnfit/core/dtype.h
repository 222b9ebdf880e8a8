// Element types. Floating values are f32, f16 or bf16 (mixed precision: an op computes in
// the type of its floating inputs, Note [Compute dtype] in graph/graph.cpp); the integer
// types carry ids, masks and labels.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace nnfit {

enum class DType : std::uint8_t { f32, f16, bf16, i32, i64, u8, boolean };

std::size_t dtype_size(DType dtype);
inline bool is_floating(DType dtype) { return dtype == DType::f32 || dtype == DType::f16 || dtype == DType::bf16; }
// f16 and bf16: stored in 16 bits, computed (where no kernel takes them natively) in f32.
inline bool is_low_precision(DType dtype) { return dtype == DType::f16 || dtype == DType::bf16; }
std::string_view dtype_name(DType dtype);
// Throws InvalidArgument naming the accepted spellings ("float32", "int32", ...).
DType dtype_from_name(std::string_view name);

std::uint16_t float_to_bf16(float value);
float bf16_to_float(std::uint16_t bits);
std::uint16_t float_to_f16(float value);
float f16_to_float(std::uint16_t bits);

}  // namespace nnfit
