// The per-element formulas of the optimizer updates that keep their slots in double
// arithmetic (Adagrad, Adamax, Lion, Adadelta, Nadam, Ftrl, and Lamb's two passes; Keras 3's
// update_step), shared
// by the reference kernel (ref_train_optimizers.cpp, a loop in order) and the OpenMP kernel
// (omp_slot_updates.cpp, the same loop split over threads), so the two cannot drift apart.
// Note [Bitwise slot updates]: each element's update reads and writes only element i, so
// the split changes nothing; the conformance test holds the OpenMP kernel to the reference
// bit for bit. That relies on the compiler not contracting a·b + c into an FMA differently
// in the two loops, which holds for the baseline x86-64 target the build uses (no -march).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include "backend/common/hd.h"
#include "backend/common/train_op_checks.h"

namespace nnfit {

// lamb: not an element rule (Note [LAMB's trust ratio in two passes]); its step's scalars
// come from slot_step_at, its passes from the lamb_* functions below.
enum class SlotRule { adagrad, adamax, lion, adadelta, nadam, ftrl, lamb, schedule_free };

// The rule of an op (adagrad_update, ..., ftrl_update); false for any other op.
bool slot_rule_of(const std::string& op, SlotRule* out);

// A step's scalars, computed once per run in double.
struct SlotStep {
  double lr = 0.0;
  double b1t = 0.0;  // β1^t (Adamax)
  // Nadam's momentum schedule: u_t, u_{t+1}, the products of u over steps 1..t and
  // 1..t+1 (Keras's _u_product, updated before each step), and β2^t.
  double u_t = 0.0, u_next = 0.0, u_prod = 0.0, u_prod_next = 0.0, b2t = 0.0;  // b2t: Nadam's and Lamb's
  // ScheduleFreeAdamW: the step's 1/t and its rate after warm-up.
  double inv_t = 0.0, warm_lr = 0.0;
};

// Note [Nadam's schedule without state]
// Keras's Nadam keeps u_prod = Π_{s=1..t} u_s, u_s = β1·(1 − 0.5·0.96^s), in a variable it
// multiplies by u_t before each step. Here it is a function of t alone, so no kernel
// carries state across steps and a CUDA graph's replay computes it on the device from the
// step in the StepScalars (optimizer_kernels.h's SlotStepFn calls slot_step_at). The
// factors are multiplied in order, with 0.96^s by repeated multiplication, until one's
// (1 − 0.5·0.96^s) rounds to exactly 1.0 (0.5·0.96^s ≤ 2^-54: s = 900, whatever β1); from
// there on every factor is β1 exactly, since 0.96^s only decreases, so the rest of the
// product is β1^(t − 900 + 1), one pow. The product of the first 899 factors depends on β1
// alone: NadamPrefix, computed once when a kernel is made (a constant, not step state, so
// a captured launch may carry it). Against a running product (Keras's, nnfit's before) it
// differs only in rounding: 0.96^s by multiplication is within s/2 ulp of pow's, which
// moves 1 − 0.5·0.96^s by under an ulp; the tail's one pow against t − 900 roundings of a
// running product: relative differences of 1e-16..1e-14 (β1 0.8..0.999, t up to 20000;
// slot_update_test.cpp holds them under 1e-13), far below the float32 update they enter.
// Cost per kernel per step, on one thread (the CPU's and the device's alike): t
// iterations of two multiplies and a subtract in the first 899 steps, one pow after.
// Only mul, sub and pow: on the host (the CPU kernels, cuda-host) and the device it is the
// same IEEE arithmetic (own_kernels.cu builds with --fmad=false) except pow's last ulp.
struct NadamPrefix {
  double product = 1.0;        // Π of the factors before unit_step
  std::int64_t unit_step = 1;  // the first s whose factor is β1 exactly (900)
};

NNFIT_HD NadamPrefix nadam_prefix(double beta_1) {
  NadamPrefix p;
  double decay = 1.0;  // 0.96^s
  for (std::int64_t s = 1;; ++s) {  // ends: 0.96^s falls below 2^-53 at s = 900
    decay *= 0.96;
    const double f = 1.0 - 0.5 * decay;
    if (f == 1.0) {
      p.unit_step = s;
      return p;
    }
    p.product *= beta_1 * f;
  }
}

// Π_{s=1..t} u_s, and 0.96^t into *decay_t (0 from unit_step on, where u_t is β1 exactly).
// requires: prefix is nadam_prefix(beta_1).
NNFIT_HD double nadam_u_product(double beta_1, const NadamPrefix& prefix, std::int64_t t, double* decay_t) {
  if (t >= prefix.unit_step) {
    *decay_t = 0.0;
    return prefix.product * std::pow(beta_1, static_cast<double>(t - prefix.unit_step + 1));
  }
  double product = 1.0, decay = 1.0;
  for (std::int64_t s = 1; s <= t; ++s) {  // the prefix's own loop, stopped at t
    decay *= 0.96;
    product *= beta_1 * (1.0 - 0.5 * decay);
  }
  *decay_t = decay;
  return product;
}

// The scalars of step `step` (t = step + 1, Keras's local_step) for `rule`; `nadam` is
// read for Nadam only, `warmup_steps` for ScheduleFreeAdamW only. NNFIT_HD: the CUDA kernel computes them on the device from the
// StepScalars (Note [Step values in device memory]), the CPU kernels on the host, with
// this one function.
NNFIT_HD SlotStep slot_step_at(SlotRule rule, double beta_1, double beta_2, const NadamPrefix& nadam,
                               double learning_rate, std::int64_t step, std::int64_t warmup_steps = 0) {
  SlotStep s;
  s.lr = learning_rate;
  const double t = static_cast<double>(step + 1);
  s.b1t = std::pow(beta_1, t);
  if (rule == SlotRule::lamb || rule == SlotRule::schedule_free) s.b2t = std::pow(beta_2, t);
  if (rule == SlotRule::schedule_free) {
    s.inv_t = 1.0 / t;
    s.warm_lr = warmup_steps > 0 ? learning_rate * std::min(t / static_cast<double>(warmup_steps), 1.0) : learning_rate;
  }
  if (rule == SlotRule::nadam) {
    double decay = 0.0;  // 0.96^t
    s.u_prod = nadam_u_product(beta_1, nadam, step + 1, &decay);
    s.u_t = beta_1 * (1.0 - 0.5 * decay);
    s.u_next = beta_1 * (1.0 - 0.5 * (decay * 0.96));
    s.u_prod_next = s.u_prod * s.u_next;
    s.b2t = std::pow(beta_2, t);
  }
  return s;
}

// slot_step_at for a kernel's run on the host.
SlotStep slot_step(SlotRule rule, const OptimizerParams& p, const NadamPrefix& nadam, const StepContext& ctx);

// Note [ScheduleFreeAdamW's momentum starts at 0]
// Keras 3.15's ScheduleFreeAdamW.build assigns each momentum a copy of its variable, but
// under the TensorFlow backend fit builds the optimizer during its symbolic build, where the
// assignment does not reach the variable: the momentum starts at 0, which is what Keras's
// training computes (keras_optimizers_parity.py holds nnfit to it). nnfit's slot starts
// at 0 the same way; its weight decay is the usual decay_weights before the update. Likewise
// its "momentum_old = momentum.value" is, under TensorFlow, the variable itself, read after
// the momentum's assign_sub: x_old is recovered from the new momentum, as here.
// Updates element i of param and its slots s0 (and s1: null for the one-slot rules,
// Adagrad and Lion). Written to be inlined into a loop with `rule` a constant. NNFIT_HD:
// the CUDA kernel runs this very function on the device (backend/cuda/kernels).
NNFIT_HD void slot_update_element(SlotRule rule, const OptimizerParams& p, const SlotStep& s, float* param,
                                const float* grad, float* s0, float* s1, std::int64_t i) {
  const double g = grad[i];
  const double lr = s.lr;
  double w = param[i], a = s0[i], b = s1 ? s1[i] : 0.0;
  switch (rule) {
    case SlotRule::adagrad:
      a += g * g;
      w -= lr * g / std::sqrt(a + p.epsilon);
      break;
    case SlotRule::adamax:
      a += (g - a) * (1.0 - p.beta_1);
      b = std::max(p.beta_2 * b, std::fabs(g));
      w -= lr * a / ((1.0 - s.b1t) * (b + p.epsilon));
      break;
    case SlotRule::lion: {
      const double c = a * p.beta_1 + g * (1.0 - p.beta_1);
      w -= lr * (c > 0 ? 1.0 : (c < 0 ? -1.0 : 0.0));
      a = a * p.beta_2 + g * (1.0 - p.beta_2);
      break;
    }
    case SlotRule::nadam: {
      a += (g - a) * (1.0 - p.beta_1);
      b += (g * g - b) * (1.0 - p.beta_2);
      const double m_hat = s.u_next * a / (1.0 - s.u_prod_next) + (1.0 - s.u_t) * g / (1.0 - s.u_prod);
      const double v_hat = b / (1.0 - s.b2t);
      w -= m_hat * lr / (std::sqrt(v_hat) + p.epsilon);
      break;
    }
    case SlotRule::ftrl: {  // a: accumulator, b: linear
      const double l2 = p.l2 + p.beta / (2.0 * lr);
      const double g_used = g + 2.0 * p.l2_shrinkage * w;
      const double na = a + g * g;
      const double pa = std::pow(na, -p.learning_rate_power), pb = std::pow(a, -p.learning_rate_power);
      b += g_used - (pa - pb) / lr * w;
      const double quadratic = pa / lr + 2.0 * l2;
      w = (std::clamp(b, -p.l1, p.l1) - b) / quadratic;
      a = na;
      break;
    }
    case SlotRule::adadelta: {
      a = p.rho * a + (1.0 - p.rho) * g * g;
      const double d = -std::sqrt(b + p.epsilon) * g / std::sqrt(a + p.epsilon);
      b = p.rho * b + (1.0 - p.rho) * d * d;
      w += lr * d;
      break;
    }
    case SlotRule::lamb:  // two passes over the whole variable, not an element rule
      break;
    case SlotRule::schedule_free: {  // Keras's ScheduleFreeAdamW; a: momentum (z), b: velocity
      // Note [ScheduleFreeAdamW's momentum starts at 0]
      b += (g * g - b) * (1.0 - p.beta_2);
      a -= s.warm_lr * g / (std::sqrt(b / (1.0 - s.b2t)) + p.epsilon);
      const double x_old = (w - (1.0 - p.beta_1) * a) / p.beta_1;  // a, not the old momentum: Keras's
      const double x_new = (1.0 - s.inv_t) * x_old + s.inv_t * a;
      w = (1.0 - p.beta_1) * a + p.beta_1 * x_new;
      break;
    }
  }
  param[i] = static_cast<float>(w);
  s0[i] = static_cast<float>(a);
  if (s1) s1[i] = static_cast<float>(b);
}

// A slot-update kernel of either family: the rule, the op's params and Nadam's prefix, fixed
// at plan time; operands() reads a run's tensors and computes its step's scalars. The
// reference and OpenMP kernels are this plus their loop over slot_update_element.
struct SlotUpdateState {
  struct Run {
    float* param;
    const float* grad;
    float* s0;
    float* s1;  // null for the one-slot rules
    SlotStep step;
  };
  SlotUpdateState(SlotRule rule, OptimizerParams p, bool two_slots);
  Run operands(const KernelArgs& args) const;

  SlotRule rule;
  OptimizerParams params;
  bool two_slots;
  NadamPrefix nadam;  // a constant of beta_1 (Note [Nadam's schedule without state])
};

// Note [LAMB's trust ratio in two passes]
// Keras's Lamb scales each variable's Adam-like direction u = m̂/(√v̂ + ε) by the trust
// ratio |w|/|u| (1 where either norm is 0), so the update needs both norms over the whole
// variable before any element changes. Pass 1 updates m and v and sums w² and u² per
// fixed chunk of kLambChunk elements (partials[2k], partials[2k + 1]); the ratio adds the
// partials in chunk order; pass 2 recomputes u from the stored float m and v (the very
// values pass 1 summed) and steps w. The chunking depends on the size alone, so the
// reference (chunks in turn), the OpenMP kernel (chunks over threads) and the CUDA kernel
// (one index per chunk) give the same bits, as the other slot updates (Note [Bitwise slot
// updates]). w's norm is taken before the step (after Keras's weight decay, a node before).
inline constexpr std::int64_t kLambChunk = 4096;

NNFIT_HD std::int64_t lamb_chunks(std::int64_t n) { return (n + kLambChunk - 1) / kLambChunk; }

// Keras's m_t_hat / (sqrt(v / (1 − β2^t)) + ε) from the slots' stored values.
NNFIT_HD double lamb_direction(const OptimizerParams& p, const SlotStep& s, float m, float v) {
  return (m / (1.0 - s.b1t)) / (std::sqrt(v / (1.0 - s.b2t)) + p.epsilon);
}

// Pass 1 over chunk k of n elements: m += (g − m)(1 − β1), v += (g² − v)(1 − β2); the
// chunk's Σw² and Σu² into partials[2k] and partials[2k + 1].
NNFIT_HD void lamb_moments_chunk(const OptimizerParams& p, const SlotStep& s, const float* param,
                                        const float* grad, float* m, float* v, std::int64_t n, std::int64_t k,
                                        double* partials) {
  const std::int64_t end = (k + 1) * kLambChunk < n ? (k + 1) * kLambChunk : n;
  double w2 = 0.0, u2 = 0.0;
  for (std::int64_t i = k * kLambChunk; i < end; ++i) {
    const double g = grad[i];
    double a = m[i], b = v[i];
    a += (g - a) * (1.0 - p.beta_1);
    b += (g * g - b) * (1.0 - p.beta_2);
    m[i] = static_cast<float>(a);
    v[i] = static_cast<float>(b);
    const double u = lamb_direction(p, s, m[i], v[i]);
    w2 += static_cast<double>(param[i]) * param[i];
    u2 += u * u;
  }
  partials[2 * k] = w2;
  partials[2 * k + 1] = u2;
}

// The trust ratio from pass 1's partials, added in chunk order.
NNFIT_HD double lamb_ratio(const double* partials, std::int64_t chunks) {
  double w2 = 0.0, u2 = 0.0;
  for (std::int64_t k = 0; k < chunks; ++k) {
    w2 += partials[2 * k];
    u2 += partials[2 * k + 1];
  }
  const double w_norm = std::sqrt(w2), u_norm = std::sqrt(u2);
  return w_norm > 0.0 && u_norm > 0.0 ? w_norm / u_norm : 1.0;
}

// Pass 2, element i: w −= ratio · lr · u.
NNFIT_HD void lamb_apply_element(const OptimizerParams& p, const SlotStep& s, double ratio, float* param,
                                        const float* m, const float* v, std::int64_t i) {
  param[i] = static_cast<float>(param[i] - ratio * s.lr * lamb_direction(p, s, m[i], v[i]));
}

// The element functions of the other optimizer-side ops, in double as Keras's float64-free
// formulas evaluated by the reference: use_ema's average (m = 0 on the first step), weight
// decay's p − p·f (f = weight_decay·lr), clip_by_value, clip_by_norm (divisor max(|x|, c))
// and global_norm_scale's c·min(1/|all|, 1/c) (NaN with a NaN norm, as Keras's).
// use_ema's step: m = 0 on the first step (step 0), else momentum; every
// overwrite_frequency steps (step + 1 a multiple of it) the weights take the average.
struct EmaStep {
  double m = 0.0;
  bool overwrite = false;
};
EmaStep ema_step(const OptimizerParams& p, const StepContext& ctx);
inline float ema_average(double m, float avg, float param) { return static_cast<float>(m * avg + (1.0 - m) * param); }
inline float decayed_weight(float param, double f) { return static_cast<float>(param - param * f); }
inline float clip_by_value_element(float x, double limit) {
  return static_cast<float>(std::clamp(static_cast<double>(x), -limit, limit));
}
inline float clip_by_norm_element(float x, double limit, double divisor) { return static_cast<float>(x * limit / divisor); }
inline double global_norm_scale_of(double norm, double limit) { return limit * std::min(1.0 / norm, 1.0 / limit) + (norm - norm); }

}  // namespace nnfit
