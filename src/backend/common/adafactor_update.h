// Keras 3's Adafactor update (keras/src/optimizers/adafactor.py) as the functions its
// kernels share: the reference (each pass in order), OpenMP (each pass split over threads)
// and CUDA (each pass one launch of these functions, NNFIT_HD) kernels.
// Note [Adafactor's passes]: the update needs whole-variable and per-row/per-column means
// before any element steps, so it runs as passes, each writing only its own index:
// (1) Σw² per fixed chunk (w's RMS sets the step size); (2) the factored second moments,
// r per row (mean over the last axis of g² + ε1) and c per column (mean over the axis before
// it), or, for a variable of rank < 2, v per element; (3) per matrix, the mean of r; (4) v
// = r/mean(r) ⊗ c per element and Σu² per chunk, u = g/√v; (5) the step w −= α·u/max(1,
// RMS(u)/clip_threshold). Sums run in double in a fixed order (within a chunk, row or
// column, then the chunks in order), so the three kernels give the same bits (Note
// [Bitwise slot updates]). Keras computes in float32; this differs from it by rounding.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "backend/common/hd.h"
#include "backend/common/train_op_checks.h"

namespace nnfit {

inline constexpr std::int64_t kAdafactorChunk = 4096;

NNFIT_HD std::int64_t adafactor_chunks(std::int64_t n) { return (n + kAdafactorChunk - 1) / kAdafactorChunk; }

// A variable's geometry: `batch` matrices of rows × cols (its last two axes), factored
// when its rank is >= 2; else one row of n elements, not factored.
struct AdafactorShape {
  std::int64_t n = 0, batch = 1, rows = 1, cols = 1;
  bool factored = false;
};

// This step's scalars (t = step + 1): ρ = min(lr, 1/√t) (Keras's rho_t; its relative_step
// clamp of lr to the same bound changes nothing after it) and β2_t = 1 − t^beta_2_decay.
struct AdafactorStep {
  double rho = 0.0, beta_2 = 0.0;
};

NNFIT_HD AdafactorStep adafactor_step_at(double beta_2_decay, double learning_rate, std::int64_t step) {
  const double t = static_cast<double>(step + 1);
  AdafactorStep s;
  s.rho = std::min(learning_rate, 1.0 / std::sqrt(t));
  s.beta_2 = 1.0 - std::pow(t, beta_2_decay);
  return s;
}

// Pass 1 (and 4's sums): Σx² over chunk k of x (n elements) into partial[k].
NNFIT_HD void adafactor_square_chunk(const float* x, std::int64_t n, std::int64_t k, double* partial) {
  const std::int64_t end = (k + 1) * kAdafactorChunk < n ? (k + 1) * kAdafactorChunk : n;
  double s = 0.0;
  for (std::int64_t i = k * kAdafactorChunk; i < end; ++i) s += static_cast<double>(x[i]) * x[i];
  partial[k] = s;
}

// Pass 2, factored: row q of the batch·rows rows: r = β·r + (1 − β)·mean_j(g² + ε1).
NNFIT_HD void adafactor_row(const OptimizerParams& p, const AdafactorShape& sh, const AdafactorStep& s,
                            const float* grad, float* r, std::int64_t q) {
  const float* g = grad + q * sh.cols;
  double sum = 0.0;
  for (std::int64_t j = 0; j < sh.cols; ++j) sum += static_cast<double>(g[j]) * g[j] + p.epsilon_1;
  r[q] = static_cast<float>(s.beta_2 * r[q] + (1.0 - s.beta_2) * (sum / static_cast<double>(sh.cols)));
}

// Pass 2, factored: column q of the batch·cols columns: c = β·c + (1 − β)·mean_i(g² + ε1).
NNFIT_HD void adafactor_col(const OptimizerParams& p, const AdafactorShape& sh, const AdafactorStep& s,
                            const float* grad, float* c, std::int64_t q) {
  const std::int64_t b = q / sh.cols, j = q % sh.cols;
  const float* g = grad + b * sh.rows * sh.cols + j;
  double sum = 0.0;
  for (std::int64_t i = 0; i < sh.rows; ++i) sum += static_cast<double>(g[i * sh.cols]) * g[i * sh.cols] + p.epsilon_1;
  c[q] = static_cast<float>(s.beta_2 * c[q] + (1.0 - s.beta_2) * (sum / static_cast<double>(sh.rows)));
}

// Pass 3, factored: matrix b's mean of r into mean_r[b].
NNFIT_HD void adafactor_row_mean(const AdafactorShape& sh, const float* r, std::int64_t b, double* mean_r) {
  double sum = 0.0;
  for (std::int64_t i = 0; i < sh.rows; ++i) sum += r[b * sh.rows + i];
  mean_r[b] = sum / static_cast<double>(sh.rows);
}

// Pass 4, element i: v (factored: r/mean(r) ⊗ c; else its moving average of g² + ε1).
NNFIT_HD void adafactor_velocity(const OptimizerParams& p, const AdafactorShape& sh, const AdafactorStep& s,
                                 const float* grad, const float* r, const float* c, const double* mean_r, float* v,
                                 std::int64_t i) {
  if (!sh.factored) {
    const double g2 = static_cast<double>(grad[i]) * grad[i] + p.epsilon_1;
    v[i] = static_cast<float>(s.beta_2 * v[i] + (1.0 - s.beta_2) * g2);
    return;
  }
  const std::int64_t per = sh.rows * sh.cols, b = i / per, row = (i % per) / sh.cols, col = i % sh.cols;
  v[i] = static_cast<float>(r[b * sh.rows + row] / mean_r[b] * c[b * sh.cols + col]);
}

// u = g/√v of element i, as pass 4's sums and pass 5 read it.
NNFIT_HD double adafactor_u(const float* grad, const float* v, std::int64_t i) { return grad[i] / std::sqrt(static_cast<double>(v[i])); }

// Pass 4's sums: Σu² over chunk k into partial[k].
NNFIT_HD void adafactor_u_square_chunk(const float* grad, const float* v, std::int64_t n, std::int64_t k,
                                       double* partial) {
  const std::int64_t end = (k + 1) * kAdafactorChunk < n ? (k + 1) * kAdafactorChunk : n;
  double sum = 0.0;
  for (std::int64_t i = k * kAdafactorChunk; i < end; ++i) {
    const double u = adafactor_u(grad, v, i);
    sum += u * u;
  }
  partial[k] = sum;
}

// Between passes 4 and 5: out[0] = α = max(ε2, RMS(w))·ρ, out[1] = max(1, RMS(u)/clip);
// the chunk partials of w² and u² added in order.
NNFIT_HD void adafactor_factors(const OptimizerParams& p, const AdafactorStep& s, const double* w_partial,
                                const double* u_partial, std::int64_t n, double* out) {
  const std::int64_t chunks = adafactor_chunks(n);
  double w2 = 0.0, u2 = 0.0;
  for (std::int64_t k = 0; k < chunks; ++k) {
    w2 += w_partial[k];
    u2 += u_partial[k];
  }
  const double rms_w = std::sqrt(w2 / static_cast<double>(n)), rms_u = std::sqrt(u2 / static_cast<double>(n));
  out[0] = std::max(p.epsilon_2, rms_w) * s.rho;
  out[1] = std::max(1.0, rms_u / p.clip_threshold);
}

// Pass 5, element i: w −= α·u/max(1, RMS(u)/clip).
NNFIT_HD void adafactor_apply(float* param, const float* grad, const float* v, const double* factors, std::int64_t i) {
  param[i] = static_cast<float>(param[i] - factors[0] * (adafactor_u(grad, v, i) / factors[1]));
}

// The workspace of one update, in doubles: w's and u's chunk partials, the means of r, the
// two factors.
struct AdafactorWorkspace {
  double* w_partial;
  double* u_partial;
  double* mean_r;
  double* factors;
};
NNFIT_HD std::int64_t adafactor_workspace_doubles(const AdafactorShape& sh) {
  return 2 * adafactor_chunks(sh.n) + sh.batch + 2;
}
NNFIT_HD AdafactorWorkspace adafactor_workspace(const AdafactorShape& sh, double* base) {
  const std::int64_t chunks = adafactor_chunks(sh.n);
  return {base, base + chunks, base + 2 * chunks, base + 2 * chunks + sh.batch};
}

// The variable's geometry from the update's KernelDesc (check_optimizer has checked the
// slots' shapes against it).
AdafactorShape adafactor_shape_of(const Shape& variable);

// One update's constants and, per run, its operands, as SlotUpdateState is for the element
// rules: the reference and OpenMP kernels unpack their arguments here and differ only in
// their loops. Inputs: param, grad, r, c, v (the update op's order).
struct AdafactorState {
  struct Run {
    float* param;
    const float* grad;
    float* r;
    float* c;
    float* v;
    AdafactorWorkspace ws;  // in the kernel's workspace (workspace_bytes())
    AdafactorStep step;
  };
  AdafactorState(OptimizerParams p, AdafactorShape sh) : params(p), shape(sh) {}
  std::size_t workspace_bytes() const {
    return static_cast<std::size_t>(adafactor_workspace_doubles(shape)) * sizeof(double);
  }
  Run operands(const KernelArgs& args) const;

  OptimizerParams params;
  AdafactorShape shape;
};

}  // namespace nnfit
