// OpenMP kernels of the optimizer steps the fused f32 kernels (omp_optimizers.cpp) do not
// cover: the slot updates of Adagrad, Adamax, Lion, Adadelta, Nadam, Ftrl, Lamb and Adafactor (the
// reference's per-element double formulas, backend/common/slot_update.h, split over
// threads: bit-identical, Note [Bitwise slot updates]), Keras's weight decay and EMA,
// gradient clipping and loss scaling's unscale_gradient. Norms sum squares in double per
// thread over a static split, then add the partials in thread order: deterministic for a
// thread count, and within a few double ulps of the reference's one running sum (far
// below a float's ulp).
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "backend/common/adafactor_update.h"
#include "backend/common/slot_update.h"
#include "backend/common/train_op_checks.h"
#include "backend/cpu/omp_kernels.h"
#include "nnfit/core/error.h"

namespace nnfit {

namespace {

// The loop of one rule, with `rule` a constant so the switch in slot_update_element folds.
template <SlotRule kRule>
void slot_update_loop(const OptimizerParams& p, const SlotStep& s, float* param, const float* grad, float* s0,
                      float* s1) {
  const std::int64_t n = p.numel;
#pragma omp parallel for schedule(static) if (n >= kOmpMinParallelElements)
  for (std::int64_t i = 0; i < n; ++i) slot_update_element(kRule, p, s, param, grad, s0, s1, i);
}

class OmpSlotUpdate final : public Kernel {
 public:
  explicit OmpSlotUpdate(SlotUpdateState state) : s_(state) {}
  void run(const KernelArgs& args) override {
    const auto operands = s_.operands(args);  // named references, not a binding: clang 14 cannot capture one
    const auto& param = operands.param;
    const auto& grad = operands.grad;
    const auto& s0 = operands.s0;
    const auto& s1 = operands.s1;
    const auto& step = operands.step;
    const OptimizerParams& p = s_.params;
    switch (s_.rule) {
      case SlotRule::adagrad: return slot_update_loop<SlotRule::adagrad>(p, step, param, grad, s0, s1);
      case SlotRule::adamax: return slot_update_loop<SlotRule::adamax>(p, step, param, grad, s0, s1);
      case SlotRule::lion: return slot_update_loop<SlotRule::lion>(p, step, param, grad, s0, s1);
      case SlotRule::adadelta: return slot_update_loop<SlotRule::adadelta>(p, step, param, grad, s0, s1);
      case SlotRule::nadam: return slot_update_loop<SlotRule::nadam>(p, step, param, grad, s0, s1);
      case SlotRule::ftrl: return slot_update_loop<SlotRule::ftrl>(p, step, param, grad, s0, s1);
      case SlotRule::schedule_free:
        return slot_update_loop<SlotRule::schedule_free>(p, step, param, grad, s0, s1);
      case SlotRule::lamb: break;  // OmpLambUpdate's
    }
  }

 private:
  SlotUpdateState s_;
};

// Keras's Lamb as RefLambUpdate, the chunks of pass 1 and the elements of pass 2 split
// over threads: bit-identical (Note [LAMB's trust ratio in two passes]).
class OmpLambUpdate final : public Kernel {
 public:
  explicit OmpLambUpdate(SlotUpdateState state) : s_(state) {}
  std::size_t workspace_bytes() const override {
    return static_cast<std::size_t>(2 * lamb_chunks(s_.params.numel)) * sizeof(double);
  }
  void run(const KernelArgs& args) override {
    const auto operands = s_.operands(args);  // named references, not a binding: clang 14 cannot capture one
    float* param = operands.param;
    const float* grad = operands.grad;
    float* m = operands.s0;
    float* v = operands.s1;
    const SlotStep step = operands.step;
    const OptimizerParams p = s_.params;
    auto* partials = static_cast<double*>(args.workspace);
    const std::int64_t n = p.numel, chunks = lamb_chunks(n);
#pragma omp parallel for schedule(static) if (chunks > 1)
    for (std::int64_t k = 0; k < chunks; ++k) lamb_moments_chunk(p, step, param, grad, m, v, n, k, partials);
    const double ratio = lamb_ratio(partials, chunks);
#pragma omp parallel for schedule(static) if (n >= kOmpMinParallelElements)
    for (std::int64_t i = 0; i < n; ++i) lamb_apply_element(p, step, ratio, param, m, v, i);
  }

 private:
  SlotUpdateState s_;
};

// Keras's Adafactor as RefAdafactorUpdate, each pass's indices split over threads:
// bit-identical (Note [Adafactor's passes]).
class OmpAdafactorUpdate final : public Kernel {
 public:
  explicit OmpAdafactorUpdate(AdafactorState state) : s_(state) {}
  std::size_t workspace_bytes() const override { return s_.workspace_bytes(); }
  void run(const KernelArgs& args) override {
    const auto operands = s_.operands(args);  // named references, not a binding: clang 14 cannot capture one
    float* param = operands.param;
    const float* grad = operands.grad;
    float* r = operands.r;
    float* c = operands.c;
    float* v = operands.v;
    const AdafactorWorkspace ws = operands.ws;
    const AdafactorStep s = operands.step;
    const OptimizerParams p = s_.params;
    const AdafactorShape sh = s_.shape;
    const std::int64_t n = sh.n, chunks = adafactor_chunks(n), rows = sh.batch * sh.rows, cols = sh.batch * sh.cols;
    const bool wide = n >= kOmpMinParallelElements;
#pragma omp parallel for schedule(static) if (chunks > 1)
    for (std::int64_t k = 0; k < chunks; ++k) adafactor_square_chunk(param, n, k, ws.w_partial);
    if (sh.factored) {
#pragma omp parallel for schedule(static) if (wide)
      for (std::int64_t q = 0; q < rows; ++q) adafactor_row(p, sh, s, grad, r, q);
#pragma omp parallel for schedule(static) if (wide)
      for (std::int64_t q = 0; q < cols; ++q) adafactor_col(p, sh, s, grad, c, q);
      for (std::int64_t b = 0; b < sh.batch; ++b) adafactor_row_mean(sh, r, b, ws.mean_r);
    }
#pragma omp parallel for schedule(static) if (wide)
    for (std::int64_t i = 0; i < n; ++i) adafactor_velocity(p, sh, s, grad, r, c, ws.mean_r, v, i);
#pragma omp parallel for schedule(static) if (chunks > 1)
    for (std::int64_t k = 0; k < chunks; ++k) adafactor_u_square_chunk(grad, v, n, k, ws.u_partial);
    adafactor_factors(p, s, ws.w_partial, ws.u_partial, n, ws.factors);
    const double* factors = ws.factors;
#pragma omp parallel for schedule(static) if (wide)
    for (std::int64_t i = 0; i < n; ++i) adafactor_apply(param, grad, v, factors, i);
  }

 private:
  AdafactorState s_;
};

// Keras's use_ema (ref_train_optimizers.cpp's RefEmaUpdate, the same expressions).
class OmpEmaUpdate final : public Kernel {
 public:
  explicit OmpEmaUpdate(OptimizerParams p) : p_(p) {}
  void run(const KernelArgs& args) override {
    float* param = mutable_input(args, 0);
    float* avg = mutable_input(args, 1);
    const auto operands = ema_step(p_, *args.ctx);  // named references, not a binding: clang 14 cannot capture one
    const auto& m = operands.m;
    const auto& overwrite = operands.overwrite;
    const std::int64_t n = p_.numel;
#pragma omp parallel for simd schedule(static) if (n >= kOmpMinParallelElements)
    for (std::int64_t i = 0; i < n; ++i) {
      const float a = ema_average(m, avg[i], param[i]);
      avg[i] = a;
      if (overwrite) param[i] = a;
    }
  }

 private:
  OptimizerParams p_;
};

class OmpDecayWeights final : public Kernel {
 public:
  explicit OmpDecayWeights(OptimizerParams p) : p_(p) {}
  void run(const KernelArgs& args) override {
    float* param = mutable_input(args, 0);
    const double f = p_.weight_decay * args.ctx->learning_rate;
    const std::int64_t n = p_.numel;
#pragma omp parallel for simd schedule(static) if (n >= kOmpMinParallelElements)
    for (std::int64_t i = 0; i < n; ++i) param[i] = decayed_weight(param[i], f);
  }

 private:
  OptimizerParams p_;
};

// Σ x² in double over each of `tensors` (sizes[k] elements each): every thread sums its
// static share of each tensor into its slot of `partial` (one per thread), then the
// slots are added in thread order.
double sum_squares(const KernelArgs& args, const std::vector<std::int64_t>& sizes, double* partial, int threads) {
  std::int64_t total = 0;
  for (std::int64_t s : sizes) total += s;
  const int team = total >= kOmpMinParallelElements ? threads : 1;
  std::fill(partial, partial + team, 0.0);
#pragma omp parallel num_threads(team)
  {
    const int tid = omp_get_thread_num(), nt = omp_get_num_threads();
    double sum = 0.0;
    for (std::size_t k = 0; k < sizes.size(); ++k) {
      const float* x = input(args, static_cast<int>(k));
      std::int64_t begin = 0, end = 0;
      omp_row_range(tid, nt, sizes[k], &begin, &end);
      for (std::int64_t i = begin; i < end; ++i) sum += static_cast<double>(x[i]) * x[i];
    }
    partial[tid] = sum;
  }
  double sum = 0.0;
  for (int t = 0; t < team; ++t) sum += partial[t];
  return sum;
}

// clip_by_value, clip_by_norm and global_norm_scale, as RefClip (ref_train_optimizers.cpp).
class OmpClip final : public Kernel {
 public:
  OmpClip(std::string op, double limit, std::vector<std::int64_t> sizes)
      : op_(std::move(op)), limit_(limit), sizes_(std::move(sizes)), threads_(std::max(1, omp_get_max_threads())) {}
  std::size_t workspace_bytes() const override {
    return op_ == "clip_by_value" ? 0 : static_cast<std::size_t>(threads_) * sizeof(double);
  }
  void run(const KernelArgs& args) override {
    auto* partial = static_cast<double*>(args.workspace);
    if (op_ == "global_norm_scale") {
      const double norm = std::sqrt(sum_squares(args, sizes_, partial, threads_));
      *static_cast<float*>(args.outputs[0]) = static_cast<float>(global_norm_scale_of(norm, limit_));
      return;
    }
    const float* x = input(args, 0);
    auto* y = static_cast<float*>(args.outputs[0]);
    const std::int64_t n = sizes_[0];
    const double limit = limit_;
    if (op_ == "clip_by_value") {
#pragma omp parallel for simd schedule(static) if (n >= kOmpMinParallelElements)
      for (std::int64_t i = 0; i < n; ++i) y[i] = clip_by_value_element(x[i], limit);
      return;
    }
    const double sum = sum_squares(args, sizes_, partial, threads_);
    const double norm = sum > 0 ? std::sqrt(sum) : 0.0;
    const double divisor = std::max(norm, limit);
#pragma omp parallel for simd schedule(static) if (n >= kOmpMinParallelElements)
    for (std::int64_t i = 0; i < n; ++i) y[i] = clip_by_norm_element(x[i], limit, divisor);
  }

 private:
  std::string op_;
  double limit_;
  std::vector<std::int64_t> sizes_;
  int threads_;
};

// unscale_gradient, as RefUnscaleGradient (ref_train_optimizers.cpp): the same float
// products, so bit for bit; "any not finite" is an OR, so the threads' split cannot change it.
class OmpUnscaleGradient final : public Kernel {
 public:
  explicit OmpUnscaleGradient(std::int64_t numel) : numel_(numel) {}
  void run(const KernelArgs& args) override {
    const float* g = input(args, 0);
    const float inv = static_cast<float>(1.0 / static_cast<double>(*input(args, 1)));
    auto* u = static_cast<float*>(args.outputs[0]);
    const std::int64_t n = numel_;
    int bad = 0;
#pragma omp parallel for simd schedule(static) reduction(| : bad) if (n >= kOmpMinParallelElements)
    for (std::int64_t i = 0; i < n; ++i) {
      u[i] = g[i] * inv;
      bad |= std::isfinite(u[i]) ? 0 : 1;
    }
    *static_cast<float*>(args.outputs[1]) = bad ? 1.0f : 0.0f;
  }

 private:
  std::int64_t numel_;
};

}  // namespace

std::unique_ptr<Kernel> make_omp_unscale_gradient(const KernelDesc& desc, std::string* why_not) {
  std::int64_t numel = 0;
  if (!check_unscale_gradient(desc, &numel, why_not)) return nullptr;
  return std::make_unique<OmpUnscaleGradient>(numel);
}

std::unique_ptr<Kernel> make_omp_slot_update(const KernelDesc& desc, std::string* why_not) {
  OptimizerParams p;
  if (!check_optimizer(desc, &p, why_not)) return nullptr;
  if (desc.op == "decay_weights") return std::make_unique<OmpDecayWeights>(p);
  if (desc.op == "ema_update") return std::make_unique<OmpEmaUpdate>(p);
  if (desc.op == "adafactor_update") {
    return std::make_unique<OmpAdafactorUpdate>(AdafactorState(p, adafactor_shape_of(desc.inputs[0].shape)));
  }
  SlotRule rule = SlotRule::adagrad;
  NNFIT_CHECK(slot_rule_of(desc.op, &rule), InvalidArgument, "internal: make_omp_slot_update has no rule for op '",
              desc.op, "'");
  if (rule == SlotRule::lamb) return std::make_unique<OmpLambUpdate>(SlotUpdateState(rule, p, true));
  return std::make_unique<OmpSlotUpdate>(SlotUpdateState(rule, p, desc.inputs.size() == 4));
}

std::unique_ptr<Kernel> make_omp_clip(const KernelDesc& desc, std::string* /*why_not*/) {
  std::vector<std::int64_t> sizes;
  for (const TensorDesc& t : desc.inputs) sizes.push_back(t.shape.numel());
  const double limit = desc.attrs.f(desc.op == "clip_by_value" ? "clipvalue" : "clipnorm");
  NNFIT_CHECK(limit > 0, InvalidArgument, desc.node_name, ": the clipping limit must be positive, got ", limit);
  return std::make_unique<OmpClip>(desc.op, limit, std::move(sizes));
}

}  // namespace nnfit
