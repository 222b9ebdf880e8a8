// Private to the CUDA backend: own kernels of the fused optimizer updates (Note
// [Kernel/launcher split]), float32 (variables and slots stay float32 under every dtype
// policy), each one index per parameter element writing param and slots in place:
// - SGD (+momentum, Nesterov), Adam/AdamW (+AMSGrad), RMSprop (+momentum, centered): the
//   OpenMP kernels' float32 expressions (omp_optimizers.cpp), with the per-step scalars
//   (Adam's bias-corrected alpha) computed once per step in double, as there, by a
//   one-index functor reading the step from device memory (UpdateFactorsFn);
// - Adagrad, Adamax, Lion, Adadelta, Nadam, Ftrl: backend/common/slot_update.h's
//   slot_step_at and slot_update_element themselves (NNFIT_HD), the functions the CPU
//   kernels call (Nadam's momentum product from the step alone: Note [Nadam's schedule
//   without state]); Lamb's two passes with the trust ratio between them (Note [LAMB's
//   trust ratio in two passes]), the same functions; Adafactor's passes (Note [Adafactor's
//   passes]), one launch each, the same functions;
// - ema_update, decay_weights (Keras's use_ema and weight decay) and moving_average_update
//   (the batch-norm statistics' moving average), in double as on the CPU.
// - clip_by_value, clip_by_norm and global_norm_scale: the reference's double expressions,
//   norms as ordered sums of fixed-chunk partials.
// - unscale_gradient (loss scaling on the device) and accumulate_gradient (micro-batches on
//   the device): the reference's float product (and sum), its "any element not finite" as
//   per-index flags ORed by one index.
// own_kernels.cu builds with --fmad=false, so the device does not contract a·b + c where
// the host does not (Note [Bitwise slot updates]).
#pragma once
#include <math.h>

#include <cmath>
#include <vector>

#include "backend/common/adafactor_update.h"
#include "backend/common/slot_update.h"
#include "backend/common/train_op_checks.h"
#include "backend/cuda/kernels/own_kernel.h"
#include "nnfit/core/error.h"

namespace nnfit::cuda {

// This step's factors of an update (Note [Step values in device memory]), one index:
// out[0] the learning rate (SGD, RMSprop), or Adam's bias-corrected rate and out[1] its
// decoupled weight decay, or decay_weights' weight_decay * learning rate; in double, as the
// host computed them.
enum class Factors { rate, adam, decay };
struct UpdateFactorsFn {
  const StepScalars* s;
  Factors kind;
  double beta_1, beta_2, weight_decay;
  double* out;
  NNFIT_HD void operator()(std::int64_t) const {
    const double lr = s->learning_rate;
    if (kind == Factors::rate) {
      out[0] = lr;
    } else if (kind == Factors::decay) {
      out[0] = weight_decay * lr;
    } else {
      const double t = static_cast<double>(s->step + 1);
      out[0] = static_cast<float>(lr * ::sqrt(1.0 - ::pow(beta_2, t)) / (1.0 - ::pow(beta_1, t)));
      out[1] = weight_decay > 0.0 ? static_cast<float>(1.0 - lr * weight_decay) : 1.0f;
    }
  }
};

// The factors' place in an update kernel's workspace, after the step slot.
inline constexpr std::size_t kFactorsWorkspace = kStepSlot + 64;
template <class Launch>
const double* update_factors(const KernelArgs& a, Factors kind, double beta_1, double beta_2, double weight_decay) {
  char* ws = static_cast<char*>(a.workspace);
  auto* out = reinterpret_cast<double*>(ws + kStepSlot);
  Launch::run(UpdateFactorsFn{step_scalars<Launch>(a, ws), kind, beta_1, beta_2, weight_decay, out}, 1, a.ctx);
  return out;
}

struct SgdFn {
  float* param;
  const float* grad;
  float* velocity;  // null: plain SGD
  const double* rate;  // UpdateFactorsFn's
  float momentum;
  bool nesterov;
  NNFIT_HD void operator()(std::int64_t i) const {
    const float lr = static_cast<float>(rate[0]);
    if (!velocity) {
      param[i] -= lr * grad[i];
      return;
    }
    const float v = momentum * velocity[i] - lr * grad[i];
    velocity[i] = v;
    param[i] += nesterov ? momentum * v - lr * grad[i] : v;
  }
};

struct AdamFn {
  float* param;
  const float* grad;
  float* m;
  float* v;
  float* v_hat;  // null without AMSGrad
  const double* factors;  // UpdateFactorsFn's: the bias-corrected rate, the decay
  float one_minus_b1, one_minus_b2, eps;
  NNFIT_HD void operator()(std::int64_t i) const {
    const float alpha = static_cast<float>(factors[0]), decay = static_cast<float>(factors[1]);
    const float g = grad[i];
    const float mi = m[i] + (g - m[i]) * one_minus_b1;
    const float vi = v[i] + (g * g - v[i]) * one_minus_b2;
    m[i] = mi;
    v[i] = vi;
    float denom = vi;
    if (v_hat) {
      denom = v_hat[i] > vi ? v_hat[i] : vi;
      v_hat[i] = denom;
    }
    param[i] = param[i] * decay - alpha * mi / (sqrtf(denom) + eps);
  }
};

struct RmspropFn {
  float* param;
  const float* grad;
  float* velocity;
  float* momentum;  // null without momentum
  float* average;   // null unless centered
  const double* rate;  // UpdateFactorsFn's
  float rho, one_minus_rho, eps, mu;
  NNFIT_HD void operator()(std::int64_t i) const {
    const float lr = static_cast<float>(rate[0]);
    const float g = grad[i];
    const float v = rho * velocity[i] + one_minus_rho * g * g;
    velocity[i] = v;
    float inc = 0.0f;
    if (average) {
      const float a = rho * average[i] + one_minus_rho * g;
      average[i] = a;
      inc = lr * g / sqrtf(v - a * a + eps);
      if (momentum) inc = momentum[i] = mu * momentum[i] + inc;
    } else if (momentum) {
      inc = momentum[i] = mu * momentum[i] + lr * g / sqrtf(v + eps);
    } else {
      inc = lr * g / sqrtf(v + eps);
    }
    param[i] -= inc;
  }
};

// This step's SlotStep (slot_step_at, the CPU kernels' function: Nadam's momentum product
// from the step alone, Note [Nadam's schedule without state]), one index, from the
// StepScalars (Note [Step values in device memory]).
struct SlotStepFn {
  const StepScalars* s;
  SlotRule rule;
  double beta_1, beta_2;
  NadamPrefix nadam;  // a constant of beta_1
  SlotStep* out;
  std::int64_t warmup_steps = 0;  // ScheduleFreeAdamW's
  NNFIT_HD void operator()(std::int64_t) const {
    *out = slot_step_at(rule, beta_1, beta_2, nadam, s->learning_rate, s->step, warmup_steps);
  }
};

struct SlotUpdateFn {
  SlotRule rule;
  OptimizerParams p;
  const SlotStep* s;  // SlotStepFn's
  float* param;
  const float* grad;
  float* s0;
  float* s1;
  NNFIT_HD void operator()(std::int64_t i) const { slot_update_element(rule, p, *s, param, grad, s0, s1, i); }
};

// Keras's Lamb (Note [LAMB's trust ratio in two passes]): one index per chunk runs pass 1,
// one index the ratio, one index per element pass 2; the CPU kernels' functions.
struct LambMomentsFn {
  OptimizerParams p;
  const SlotStep* s;  // SlotStepFn's
  const float* param;
  const float* grad;
  float* m;
  float* v;
  double* partials;
  NNFIT_HD void operator()(std::int64_t k) const { lamb_moments_chunk(p, *s, param, grad, m, v, p.numel, k, partials); }
};

struct LambRatioFn {
  const double* partials;
  std::int64_t chunks;
  double* ratio;
  NNFIT_HD void operator()(std::int64_t) const { *ratio = lamb_ratio(partials, chunks); }
};

struct LambApplyFn {
  OptimizerParams p;
  const SlotStep* s;
  const double* ratio;
  float* param;
  const float* m;
  const float* v;
  NNFIT_HD void operator()(std::int64_t i) const { lamb_apply_element(p, *s, *ratio, param, m, v, i); }
};

// Keras's Adafactor (Note [Adafactor's passes]): one launch per pass, each index the CPU
// kernels' function; the step's scalars by one index from the StepScalars.
struct AdafactorStepFn {
  const StepScalars* s;
  double beta_2_decay;
  AdafactorStep* out;
  NNFIT_HD void operator()(std::int64_t) const { *out = adafactor_step_at(beta_2_decay, s->learning_rate, s->step); }
};

enum class AdafactorPass { w_squares, rows, cols, row_means, velocity, u_squares, factors, apply };
struct AdafactorFn {
  AdafactorPass pass;
  OptimizerParams p;
  AdafactorShape sh;
  const AdafactorStep* s;
  AdafactorWorkspace ws;
  float* param;
  const float* grad;
  float* r;
  float* c;
  float* v;
  NNFIT_HD void operator()(std::int64_t i) const {
    switch (pass) {
      case AdafactorPass::w_squares: return adafactor_square_chunk(param, sh.n, i, ws.w_partial);
      case AdafactorPass::rows: return adafactor_row(p, sh, *s, grad, r, i);
      case AdafactorPass::cols: return adafactor_col(p, sh, *s, grad, c, i);
      case AdafactorPass::row_means: return adafactor_row_mean(sh, r, i, ws.mean_r);
      case AdafactorPass::velocity: return adafactor_velocity(p, sh, *s, grad, r, c, ws.mean_r, v, i);
      case AdafactorPass::u_squares: return adafactor_u_square_chunk(grad, v, sh.n, i, ws.u_partial);
      case AdafactorPass::factors: return adafactor_factors(p, *s, ws.w_partial, ws.u_partial, sh.n, ws.factors);
      case AdafactorPass::apply: return adafactor_apply(param, grad, v, ws.factors, i);
    }
  }
};

template <class Launch>
std::unique_ptr<Kernel> make_adafactor(const OptimizerParams& p, const AdafactorShape sh) {
  const std::size_t step_bytes = aligned_bytes(sizeof(AdafactorStep));
  return launch_kernel(
      [p, sh, step_bytes](const KernelArgs& a) {
        char* ws = static_cast<char*>(a.workspace);
        auto* step = reinterpret_cast<AdafactorStep*>(ws + kStepSlot);
        Launch::run(AdafactorStepFn{step_scalars<Launch>(a, ws), p.beta_2_decay, step}, 1, a.ctx);
        AdafactorFn f{AdafactorPass::w_squares, p, sh, step,
                      adafactor_workspace(sh, reinterpret_cast<double*>(ws + kStepSlot + step_bytes)),
                      mutable_input(a, 0), input(a, 1), mutable_input(a, 2), mutable_input(a, 3), mutable_input(a, 4)};
        const std::int64_t chunks = adafactor_chunks(sh.n);
        const auto pass = [&](AdafactorPass which, std::int64_t count) {
          f.pass = which;
          if (count > 0) Launch::run(f, count, a.ctx);
        };
        pass(AdafactorPass::w_squares, chunks);
        if (sh.factored) {
          pass(AdafactorPass::rows, sh.batch * sh.rows);
          pass(AdafactorPass::cols, sh.batch * sh.cols);
          pass(AdafactorPass::row_means, sh.batch);
        }
        pass(AdafactorPass::velocity, sh.n);
        pass(AdafactorPass::u_squares, chunks);
        pass(AdafactorPass::factors, 1);
        pass(AdafactorPass::apply, sh.n);
      },
      kStepSlot + step_bytes + aligned_bytes(static_cast<std::size_t>(adafactor_workspace_doubles(sh)) * sizeof(double)));
}

// Keras's use_ema and weight decay (omp_slot_updates.cpp's expressions); the step from the
// StepScalars.
struct EmaFn {
  float* param;
  float* avg;
  const StepScalars* s;
  double ema_momentum;
  std::int64_t overwrite_frequency;
  NNFIT_HD void operator()(std::int64_t i) const {
    const double momentum = s->step == 0 ? 0.0 : ema_momentum;
    const bool overwrite = overwrite_frequency > 0 && (s->step + 1) % overwrite_frequency == 0;
    const float a = static_cast<float>(momentum * avg[i] + (1.0 - momentum) * param[i]);
    avg[i] = a;
    if (overwrite) param[i] = a;
  }
};

struct DecayFn {
  float* param;
  const double* factor;  // UpdateFactorsFn's
  NNFIT_HD void operator()(std::int64_t i) const { param[i] = static_cast<float>(param[i] - param[i] * factor[0]); }
};

// Gradient clipping: sums of squares in double as partials over fixed 4096-element chunks,
// added in order by one index (launch-shape independent), then the elementwise scale.
inline constexpr std::int64_t kNormChunk = 4096;

struct SquarePartialFn {
  const float* x;
  double* partial;
  std::int64_t n;
  NNFIT_HD void operator()(std::int64_t k) const {
    const std::int64_t end = (k + 1) * kNormChunk < n ? (k + 1) * kNormChunk : n;
    double s = 0.0;
    for (std::int64_t i = k * kNormChunk; i < end; ++i) s += static_cast<double>(x[i]) * x[i];
    partial[k] = s;
  }
};

// One index: the norm's factor. clip_by_norm: limit / max(norm, limit) into factor[0];
// global_norm_scale: Keras's limit · min(1/norm, 1/limit) (+ (norm − norm): NaN stays NaN)
// into the op's scalar output.
struct NormFactorFn {
  const double* partial;
  std::int64_t chunks;
  double limit;
  bool global;
  double* factor;
  float* out;
  NNFIT_HD void operator()(std::int64_t) const {
    double sum = 0.0;
    for (std::int64_t k = 0; k < chunks; ++k) sum += partial[k];
    if (global) {
      const double norm = sqrt(sum);
      *out = static_cast<float>(limit * fmin(1.0 / norm, 1.0 / limit) + (norm - norm));
      return;
    }
    const double norm = sum > 0 ? sqrt(sum) : 0.0;
    *factor = norm > limit ? norm : limit;
  }
};

struct ClipFn {
  const float* x;
  float* y;
  double limit;
  const double* max_norm;  // clip_by_norm: max(norm, limit); null: clip_by_value
  NNFIT_HD void operator()(std::int64_t i) const {
    if (max_norm) {
      y[i] = static_cast<float>(x[i] * limit / *max_norm);
      return;
    }
    const double v = x[i];
    y[i] = static_cast<float>(v < -limit ? -limit : (v > limit ? limit : v));
  }
};

template <class Launch>
std::unique_ptr<Kernel> make_clip(const KernelDesc& desc, std::string* why_not) {
  for (const TensorDesc& t : desc.inputs) {
    if (t.dtype != DType::f32) {
      if (why_not) *why_not = "cuda:" + desc.op + " clips float32 gradients";
      return nullptr;
    }
  }
  NNFIT_CHECK(!desc.inputs.empty() && desc.outputs.size() == 1, InvalidArgument, desc.op, " at node '", desc.node_name,
              "': expected inputs and one output");
  const double limit = desc.attrs.f(desc.op == "clip_by_value" ? "clipvalue" : "clipnorm");
  NNFIT_CHECK(limit > 0, InvalidArgument, desc.node_name, ": the clipping limit must be positive, got ", limit);
  std::vector<std::int64_t> sizes, first_chunk;
  std::int64_t chunks = 0;
  for (const TensorDesc& t : desc.inputs) {
    sizes.push_back(t.shape.numel());
    first_chunk.push_back(chunks);
    chunks += (t.shape.numel() + kNormChunk - 1) / kNormChunk;
  }
  const std::string op = desc.op;
  return launch_kernel(
      [op, limit, sizes, first_chunk, chunks](const KernelArgs& a) {
        auto* partial = static_cast<double*>(a.workspace);
        const auto* x = static_cast<const float*>(a.inputs[0]);
        if (op == "clip_by_value") {
          Launch::run(ClipFn{x, static_cast<float*>(a.outputs[0]), limit, nullptr}, sizes[0], a.ctx);
          return;
        }
        for (std::size_t k = 0; k < sizes.size(); ++k) {
          Launch::run(SquarePartialFn{static_cast<const float*>(a.inputs[k]), partial + first_chunk[k], sizes[k]},
                      (sizes[k] + kNormChunk - 1) / kNormChunk, a.ctx);
        }
        double* factor = partial + chunks;
        const bool global = op == "global_norm_scale";
        Launch::run(NormFactorFn{partial, chunks, limit, global, factor, static_cast<float*>(a.outputs[0])}, 1, a.ctx);
        if (!global) Launch::run(ClipFn{x, static_cast<float*>(a.outputs[0]), limit, factor}, sizes[0], a.ctx);
      },
      aligned_bytes(static_cast<std::size_t>(chunks + 1) * sizeof(double)));
}

// Loss scaling's unscale (Note [Loss scaling on the device]): index k of the C = ⌈n /
// kUnscaleChunk⌉ indices unscales elements k, k + C, k + 2C, … (neighbouring indices read
// neighbouring elements) and writes whether any of them is not finite to flag[k]; one
// index then ORs the C flags into the op's scalar. C depends on n alone, so the result
// does not depend on the launch shape (and an OR on no order at all).
inline constexpr std::int64_t kUnscaleChunk = 4096;

// With `accumulate` (accumulate_gradient, Note [Micro-batches on the device]) the factor is
// weight/divisor and the products are added into out, the sum, whose elements are checked.
struct UnscaleFn {
  const float* g;
  const float* scale;  // the op's scalar input, in device memory
  float* out;          // u, or the sum
  float* flag;         // C floats of the workspace
  std::int64_t n, stride;
  double weight;  // 1 for unscale_gradient
  bool accumulate;
  NNFIT_HD void operator()(std::int64_t k) const {
    const float f = static_cast<float>(weight / static_cast<double>(*scale));
    bool bad = false;
    for (std::int64_t i = k; i < n; i += stride) {
      const float v = accumulate ? out[i] + g[i] * f : g[i] * f;
      out[i] = v;
      bad = bad || !isfinite(v);
    }
    flag[k] = bad ? 1.0f : 0.0f;
  }
};

struct AnyFlagFn {
  const float* flag;
  std::int64_t count;
  float* out;
  NNFIT_HD void operator()(std::int64_t) const {
    float any = 0.0f;
    for (std::int64_t k = 0; k < count; ++k) any = flag[k] != 0.0f ? 1.0f : any;
    *out = any;
  }
};

template <class Launch>
std::unique_ptr<Kernel> make_unscale_gradient(const KernelDesc& desc, std::string* why_not) {
  std::int64_t n = 0;
  float weight = 1.0f;
  const bool accumulate = desc.op == "accumulate_gradient";
  if (accumulate ? !check_accumulate_gradient(desc, &n, &weight, why_not) : !check_unscale_gradient(desc, &n, why_not)) {
    return nullptr;
  }
  const std::int64_t chunks = (n + kUnscaleChunk - 1) / kUnscaleChunk;
  return launch_kernel(
      [n, chunks, weight, accumulate](const KernelArgs& a) {
        auto* flag = static_cast<float*>(a.workspace);
        float* out = accumulate ? mutable_input(a, 2) : static_cast<float*>(a.outputs[0]);
        Launch::run(UnscaleFn{input(a, 0), input(a, 1), out, flag, n, chunks, weight, accumulate}, chunks, a.ctx);
        Launch::run(AnyFlagFn{flag, chunks, static_cast<float*>(a.outputs[accumulate ? 0 : 1])}, 1, a.ctx);
      },
      aligned_bytes(static_cast<std::size_t>(std::max<std::int64_t>(chunks, 1)) * sizeof(float)));
}

struct MovingAverageFn {
  float* moving;
  const float* value;
  double momentum;
  NNFIT_HD void operator()(std::int64_t c) const {
    moving[c] = static_cast<float>(moving[c] * momentum + value[c] * (1.0 - momentum));
  }
};

template <class Launch>
std::unique_ptr<Kernel> make_optimizer(const KernelDesc& desc, std::string* why_not) {
  OptimizerParams p;
  if (!check_optimizer(desc, &p, why_not)) return nullptr;
  const std::int64_t n = p.numel;
  if (desc.op == "sgd_update" || desc.op == "sgd_momentum_update") {
    const bool momentum = desc.op == "sgd_momentum_update";
    return launch_kernel(
        [p, n, momentum](const KernelArgs& a) {
          const double* rate = update_factors<Launch>(a, Factors::rate, 0, 0, 0);
          Launch::run(SgdFn{mutable_input(a, 0), input(a, 1), momentum ? mutable_input(a, 2) : nullptr, rate,
                            static_cast<float>(p.momentum), p.nesterov},
                      n, a.ctx);
        },
        kFactorsWorkspace);
  }
  if (desc.op == "adam_update") {
    return launch_kernel(
        [p, n](const KernelArgs& a) {
          const double* f = update_factors<Launch>(a, Factors::adam, p.beta_1, p.beta_2, p.weight_decay);
          Launch::run(AdamFn{mutable_input(a, 0), input(a, 1), mutable_input(a, 2), mutable_input(a, 3),
                             p.amsgrad ? mutable_input(a, 4) : nullptr, f, static_cast<float>(1.0 - p.beta_1),
                             static_cast<float>(1.0 - p.beta_2), static_cast<float>(p.epsilon)},
                      n, a.ctx);
        },
        kFactorsWorkspace);
  }
  if (desc.op == "rmsprop_update") {
    return launch_kernel(
        [p, n](const KernelArgs& a) {
          float* momentum = p.has_momentum_slot ? mutable_input(a, 3) : nullptr;
          float* average = p.centered ? mutable_input(a, p.has_momentum_slot ? 4 : 3) : nullptr;
          const double* rate = update_factors<Launch>(a, Factors::rate, 0, 0, 0);
          Launch::run(RmspropFn{mutable_input(a, 0), input(a, 1), mutable_input(a, 2), momentum, average, rate,
                                static_cast<float>(p.rho), static_cast<float>(1.0 - p.rho), static_cast<float>(p.epsilon),
                                static_cast<float>(p.momentum)},
                      n, a.ctx);
        },
        kFactorsWorkspace);
  }
  if (desc.op == "ema_update") {
    return launch_kernel(
        [p, n](const KernelArgs& a) {
          Launch::run(EmaFn{mutable_input(a, 0), mutable_input(a, 1), step_scalars<Launch>(a, a.workspace), p.momentum,
                            p.overwrite_frequency},
                      n, a.ctx);
        },
        kStepSlot);
  }
  if (desc.op == "decay_weights") {
    return launch_kernel(
        [p, n](const KernelArgs& a) {
          Launch::run(DecayFn{mutable_input(a, 0), update_factors<Launch>(a, Factors::decay, 0, 0, p.weight_decay)}, n,
                      a.ctx);
        },
        kFactorsWorkspace);
  }
  if (desc.op == "adafactor_update") return make_adafactor<Launch>(p, adafactor_shape_of(desc.inputs[0].shape));
  SlotRule rule = SlotRule::adagrad;
  NNFIT_CHECK(slot_rule_of(desc.op, &rule), InvalidArgument, "internal: cuda:", desc.op, " has no update rule");
  if (rule == SlotRule::lamb) {
    const std::int64_t chunks = lamb_chunks(n);
    return launch_kernel(
        [p, n, chunks](const KernelArgs& a) {
          char* ws = static_cast<char*>(a.workspace);
          auto* step = reinterpret_cast<SlotStep*>(ws + kStepSlot);
          auto* ratio = reinterpret_cast<double*>(ws + kStepSlot + aligned_bytes(sizeof(SlotStep)));
          double* partials = ratio + 1;
          Launch::run(SlotStepFn{step_scalars<Launch>(a, ws), SlotRule::lamb, p.beta_1, p.beta_2, NadamPrefix{}, step},
                      1, a.ctx);
          float* param = mutable_input(a, 0);
          float* m = mutable_input(a, 2);
          float* v = mutable_input(a, 3);
          Launch::run(LambMomentsFn{p, step, param, input(a, 1), m, v, partials}, chunks, a.ctx);
          Launch::run(LambRatioFn{partials, chunks, ratio}, 1, a.ctx);
          Launch::run(LambApplyFn{p, step, ratio, param, m, v}, n, a.ctx);
        },
        kStepSlot + aligned_bytes(sizeof(SlotStep)) + aligned_bytes(static_cast<std::size_t>(1 + 2 * chunks) * sizeof(double)));
  }
  const bool two_slots = desc.inputs.size() == 4;
  const NadamPrefix nadam = rule == SlotRule::nadam ? nadam_prefix(p.beta_1) : NadamPrefix{};
  return launch_kernel(
      [p, n, rule, two_slots, nadam](const KernelArgs& a) {
        char* ws = static_cast<char*>(a.workspace);
        auto* step = reinterpret_cast<SlotStep*>(ws + kStepSlot);
        Launch::run(SlotStepFn{step_scalars<Launch>(a, ws), rule, p.beta_1, p.beta_2, nadam, step, p.warmup_steps}, 1,
                    a.ctx);
        Launch::run(SlotUpdateFn{rule, p, step, mutable_input(a, 0), input(a, 1), mutable_input(a, 2),
                                 two_slots ? mutable_input(a, 3) : nullptr},
                    n, a.ctx);
      },
      kStepSlot + aligned_bytes(sizeof(SlotStep)));
}

template <class Launch>
std::unique_ptr<Kernel> make_moving_average(const KernelDesc& desc, std::string* why_not) {
  std::int64_t channels = 0;
  double momentum = 0.0;
  if (!check_moving_average_update(desc, &channels, &momentum, why_not)) return nullptr;
  return launch_kernel([channels, momentum](const KernelArgs& a) {
    Launch::run(MovingAverageFn{mutable_input(a, 0), input(a, 1), momentum}, channels, a.ctx);
  });
}

template <class Launch>
void register_optimizer_kernels(KernelRegistry& r) {
  for (const char* op : {"sgd_update", "sgd_momentum_update", "adam_update", "rmsprop_update", "adagrad_update",
                         "adamax_update", "lion_update", "adadelta_update", "nadam_update", "ftrl_update", "lamb_update",
                         "adafactor_update", "schedule_free_update", "ema_update", "decay_weights"}) {
    r.add(op, DeviceType::cuda, DType::f32, {std::string("cuda:") + op, make_optimizer<Launch>});
  }
  r.add("moving_average_update", DeviceType::cuda, DType::f32, {"cuda:moving_average_update", make_moving_average<Launch>});
  for (const char* op : {"clip_by_value", "clip_by_norm", "global_norm_scale"}) {
    r.add(op, DeviceType::cuda, DType::f32, {std::string("cuda:") + op, make_clip<Launch>});
  }
  r.add("unscale_gradient", DeviceType::cuda, DType::f32, {"cuda:unscale_gradient", make_unscale_gradient<Launch>});
  r.add("accumulate_gradient", DeviceType::cuda, DType::f32, {"cuda:accumulate_gradient", make_unscale_gradient<Launch>});
}

}  // namespace nnfit::cuda
