// The operands of the normalization and mask kernels as the op table names them, and the
// element functions their reference and OpenMP kernels share (standardize, sequence_mask's
// value). Each kernel opens with `const auto [x, gamma, ...] = NormForwardOperands(args);`,
// so both families read the same inputs the same way; where a lambda or an OpenMP region
// uses them, a named reference per field instead (`const auto& x = operands.x;`), since
// clang 14 cannot capture a structured binding. The batch and layer norm formulas
// themselves stay apart: the reference sums in double (the oracle), the OpenMP kernels in
// float per thread (docs/design/kernels.md), and sharing them would change one or the other.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "nnfit/backend/kernel.h"

namespace nnfit {

// batch_norm_train (x, gamma, beta -> y, mean, var) and layer_norm / group_norm (x, gamma,
// beta -> y, mean, rstd).
struct NormForwardOperands {
  explicit NormForwardOperands(const KernelArgs& args);
  const float *x, *gamma, *beta;
  float *y, *stat0, *stat1;
};

// batch_norm_grad (x, dy, gamma, mean, var -> dx, dgamma, dbeta) and layer_norm_grad /
// group_norm_grad (x, dy, gamma, mean, rstd -> dx, dgamma, dbeta).
struct NormBackwardOperands {
  explicit NormBackwardOperands(const KernelArgs& args);
  const float *x, *dy, *gamma, *stat0, *stat1;
  float *dx, *dgamma, *dbeta;
};

// batch_norm_infer: x, gamma, beta, moving_mean, moving_var -> y.
struct BatchNormInferOperands {
  explicit BatchNormInferOperands(const KernelArgs& args);
  const float *x, *gamma, *beta, *moving_mean, *moving_var;
  float* y;
};

// standardize (x, mean, var -> y) and standardize_grad (dy, var -> dx; mean null).
struct StandardizeOperands {
  StandardizeOperands(const KernelArgs& args, bool grad);
  const float *x, *mean, *var;
  float* y;
};

// One element of standardize: s = max(sqrt(var), 1e-7); (x − m)/s, or x·s + m with invert
// (m = 0 for the gradient), in double.
inline float standardize_element(float x, float m, float var, bool invert) {
  const double s = std::max(std::sqrt(static_cast<double>(var)), 1e-7);
  const double v = x;
  return static_cast<float>(invert ? v * s + m : (v - m) / s);
}

// Element i of sequence_mask's input (int32, int64 or float32) as a double.
inline double mask_value_at(const void* x, DType dtype, std::int64_t i) {
  switch (dtype) {
    case DType::i32: return static_cast<const std::int32_t*>(x)[i];
    case DType::i64: return static_cast<double>(static_cast<const std::int64_t*>(x)[i]);
    default: return static_cast<const float*>(x)[i];
  }
}

}  // namespace nnfit
