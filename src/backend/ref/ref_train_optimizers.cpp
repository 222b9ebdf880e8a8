// Reference kernels of the optimizer updates (SGD, SGD with momentum / Nesterov, Adam and
// AdamW, RMSprop, Adagrad, Adamax, Lion, Adadelta, Lamb, Adafactor), Keras 3's formulas
// (keras/src/optimizers/*.py update_step) evaluated per element in double. They have no
// outputs: they write param and the slot variables in place through the const input
// pointers, which the op contract allows for exactly these inputs (docs/design/ops.md).
#include <algorithm>
#include <cmath>
#include <vector>

#include "backend/common/adafactor_update.h"
#include "backend/common/slot_update.h"
#include "backend/common/train_op_checks.h"
#include "backend/ref/ref_train_kernels.h"
#include "nnfit/core/error.h"

namespace nnfit {

namespace {

class RefSgdUpdate final : public Kernel {
 public:
  explicit RefSgdUpdate(OptimizerParams p) : p_(p) {}
  void run(const KernelArgs& args) override {
    float* param = mutable_input(args, 0);
    const float* grad = input(args, 1);
    const double lr = args.ctx->learning_rate;
    for (std::int64_t i = 0; i < p_.numel; ++i) param[i] = static_cast<float>(param[i] - lr * grad[i]);
  }

 private:
  OptimizerParams p_;
};

class RefSgdMomentumUpdate final : public Kernel {
 public:
  explicit RefSgdMomentumUpdate(OptimizerParams p) : p_(p) {}
  void run(const KernelArgs& args) override {
    float* param = mutable_input(args, 0);
    const float* grad = input(args, 1);
    float* velocity = mutable_input(args, 2);
    const double lr = args.ctx->learning_rate, m = p_.momentum;
    for (std::int64_t i = 0; i < p_.numel; ++i) {
      double v = m * velocity[i] - lr * grad[i];
      double step = p_.nesterov ? m * v - lr * grad[i] : v;
      velocity[i] = static_cast<float>(v);
      param[i] = static_cast<float>(param[i] + step);
    }
  }

 private:
  OptimizerParams p_;
};

class RefAdamUpdate final : public Kernel {
 public:
  explicit RefAdamUpdate(OptimizerParams p) : p_(p) {}
  void run(const KernelArgs& args) override {
    float* param = mutable_input(args, 0);
    const float* grad = input(args, 1);
    float* m = mutable_input(args, 2);
    float* v = mutable_input(args, 3);
    float* v_hat = p_.amsgrad ? mutable_input(args, 4) : nullptr;
    const double lr = args.ctx->learning_rate;
    const double t = static_cast<double>(args.ctx->step + 1);
    const double alpha =
        lr * std::sqrt(1.0 - std::pow(p_.beta_2, t)) / (1.0 - std::pow(p_.beta_1, t));
    for (std::int64_t i = 0; i < p_.numel; ++i) {
      double p = param[i];
      if (p_.weight_decay > 0.0) p -= lr * p_.weight_decay * p;  // AdamW: decoupled, first
      double g = grad[i];
      double mi = m[i] + (g - m[i]) * (1.0 - p_.beta_1);
      double vi = v[i] + (g * g - v[i]) * (1.0 - p_.beta_2);
      m[i] = static_cast<float>(mi);
      v[i] = static_cast<float>(vi);
      if (v_hat) {  // AMSGrad: the step uses the largest v so far (Keras keeps it in f32)
        v_hat[i] = std::max(v_hat[i], v[i]);
        vi = v_hat[i];
      }
      p -= alpha * mi / (std::sqrt(vi) + p_.epsilon);
      param[i] = static_cast<float>(p);
    }
  }

 private:
  OptimizerParams p_;
};

class RefRmspropUpdate final : public Kernel {
 public:
  explicit RefRmspropUpdate(OptimizerParams p) : p_(p) {}
  void run(const KernelArgs& args) override {
    float* param = mutable_input(args, 0);
    const float* grad = input(args, 1);
    float* velocity = mutable_input(args, 2);
    float* momentum = p_.has_momentum_slot ? mutable_input(args, 3) : nullptr;
    float* average = p_.centered ? mutable_input(args, p_.has_momentum_slot ? 4 : 3) : nullptr;
    const double lr = args.ctx->learning_rate;
    for (std::int64_t i = 0; i < p_.numel; ++i) {
      double g = grad[i];
      double v = p_.rho * velocity[i] + (1.0 - p_.rho) * g * g;
      double denominator = v + p_.epsilon;
      if (average) {  // centered: the variance estimate v − E[g]², as Keras
        const double a = p_.rho * average[i] + (1.0 - p_.rho) * g;
        average[i] = static_cast<float>(a);
        denominator = v - a * a + p_.epsilon;
      }
      double inc = lr * g / std::sqrt(denominator);
      if (momentum) {
        double mo = p_.momentum * momentum[i] + inc;
        momentum[i] = static_cast<float>(mo);
        inc = mo;
      }
      velocity[i] = static_cast<float>(v);
      param[i] = static_cast<float>(param[i] - inc);
    }
  }

 private:
  OptimizerParams p_;
};

// Adagrad, Adamax, Lion, Adadelta, Nadam, Ftrl: slot_update_element (shared with the
// OpenMP kernel, backend/common/slot_update.h) over every element in order.
class RefSlotUpdate final : public Kernel {
 public:
  explicit RefSlotUpdate(SlotUpdateState state) : s_(state) {}
  void run(const KernelArgs& args) override {
    const auto [param, grad, s0, s1, step] = s_.operands(args);
    for (std::int64_t i = 0; i < s_.params.numel; ++i) slot_update_element(s_.rule, s_.params, step, param, grad, s0, s1, i);
  }

 private:
  SlotUpdateState s_;
};

// Keras's Lamb: lamb_moments_chunk over the chunks in turn, the trust ratio, then
// lamb_apply_element (Note [LAMB's trust ratio in two passes]).
class RefLambUpdate final : public Kernel {
 public:
  explicit RefLambUpdate(SlotUpdateState state) : s_(state) {}
  std::size_t workspace_bytes() const override {
    return static_cast<std::size_t>(2 * lamb_chunks(s_.params.numel)) * sizeof(double);
  }
  void run(const KernelArgs& args) override {
    const auto [param, grad, m, v, step] = s_.operands(args);
    auto* partials = static_cast<double*>(args.workspace);
    const std::int64_t n = s_.params.numel, chunks = lamb_chunks(n);
    for (std::int64_t k = 0; k < chunks; ++k) lamb_moments_chunk(s_.params, step, param, grad, m, v, n, k, partials);
    const double ratio = lamb_ratio(partials, chunks);
    for (std::int64_t i = 0; i < n; ++i) lamb_apply_element(s_.params, step, ratio, param, m, v, i);
  }

 private:
  SlotUpdateState s_;
};

// Keras's Adafactor: its passes in order (Note [Adafactor's passes]).
class RefAdafactorUpdate final : public Kernel {
 public:
  explicit RefAdafactorUpdate(AdafactorState state) : s_(state) {}
  std::size_t workspace_bytes() const override { return s_.workspace_bytes(); }
  void run(const KernelArgs& args) override {
    const auto [param, grad, r, c, v, ws, s] = s_.operands(args);
    const OptimizerParams& p = s_.params;
    const AdafactorShape& sh = s_.shape;
    const std::int64_t n = sh.n, chunks = adafactor_chunks(n);
    for (std::int64_t k = 0; k < chunks; ++k) adafactor_square_chunk(param, n, k, ws.w_partial);
    if (sh.factored) {
      for (std::int64_t q = 0; q < sh.batch * sh.rows; ++q) adafactor_row(p, sh, s, grad, r, q);
      for (std::int64_t q = 0; q < sh.batch * sh.cols; ++q) adafactor_col(p, sh, s, grad, c, q);
      for (std::int64_t b = 0; b < sh.batch; ++b) adafactor_row_mean(sh, r, b, ws.mean_r);
    }
    for (std::int64_t i = 0; i < n; ++i) adafactor_velocity(p, sh, s, grad, r, c, ws.mean_r, v, i);
    for (std::int64_t k = 0; k < chunks; ++k) adafactor_u_square_chunk(grad, v, n, k, ws.u_partial);
    adafactor_factors(p, s, ws.w_partial, ws.u_partial, n, ws.factors);
    for (std::int64_t i = 0; i < n; ++i) adafactor_apply(param, grad, v, ws.factors, i);
  }

 private:
  AdafactorState s_;
};

// Keras's use_ema after an update: avg = m·avg + (1 − m)·p, m = 0 on the first step (step
// 0); every overwrite_frequency steps (step + 1 a multiple of it) p takes the average.
class RefEmaUpdate final : public Kernel {
 public:
  explicit RefEmaUpdate(OptimizerParams p) : p_(p) {}
  void run(const KernelArgs& args) override {
    float* param = mutable_input(args, 0);
    float* avg = mutable_input(args, 1);
    const auto [m, overwrite] = ema_step(p_, *args.ctx);
    for (std::int64_t i = 0; i < p_.numel; ++i) avg[i] = ema_average(m, avg[i], param[i]);
    if (overwrite) std::copy(avg, avg + p_.numel, param);
  }

 private:
  OptimizerParams p_;
};

// Keras's weight decay before an update: p -= p·weight_decay·lr.
class RefDecayWeights final : public Kernel {
 public:
  explicit RefDecayWeights(OptimizerParams p) : p_(p) {}
  void run(const KernelArgs& args) override {
    float* param = mutable_input(args, 0);
    const double f = p_.weight_decay * args.ctx->learning_rate;
    for (std::int64_t i = 0; i < p_.numel; ++i) param[i] = decayed_weight(param[i], f);
  }

 private:
  OptimizerParams p_;
};

// Keras's gradient clipping (base_optimizer._clip_gradients): clip_by_value clips each
// element to [-clipvalue, clipvalue]; clip_by_norm scales a tensor to an L2 norm of at
// most clipnorm (x·c / max(|x|, c)); global_norm_scale is c·min(1/|all|, 1/c) over every
// gradient (NaN when the norm is, as Keras's).
class RefClip final : public Kernel {
 public:
  RefClip(std::string op, double limit, std::vector<std::int64_t> sizes)
      : op_(std::move(op)), limit_(limit), sizes_(std::move(sizes)) {}
  void run(const KernelArgs& args) override {
    if (op_ == "global_norm_scale") {
      double sum = 0.0;
      for (std::size_t k = 0; k < sizes_.size(); ++k) {
        for (std::int64_t i = 0; i < sizes_[k]; ++i) sum += static_cast<double>(input(args, static_cast<int>(k))[i]) * input(args, static_cast<int>(k))[i];
      }
      const double norm = std::sqrt(sum);
      *static_cast<float*>(args.outputs[0]) = static_cast<float>(global_norm_scale_of(norm, limit_));
      return;
    }
    const float* x = input(args, 0);
    auto* y = static_cast<float*>(args.outputs[0]);
    const std::int64_t n = sizes_[0];
    if (op_ == "clip_by_value") {
      for (std::int64_t i = 0; i < n; ++i) y[i] = clip_by_value_element(x[i], limit_);
      return;
    }
    double sum = 0.0;
    for (std::int64_t i = 0; i < n; ++i) sum += static_cast<double>(x[i]) * x[i];
    const double norm = sum > 0 ? std::sqrt(sum) : 0.0;
    for (std::int64_t i = 0; i < n; ++i) y[i] = clip_by_norm_element(x[i], limit_, std::max(norm, limit_));
  }

 private:
  std::string op_;
  double limit_;
  std::vector<std::int64_t> sizes_;
};

// Loss scaling's unscale (Note [Loss scaling on the device]): u = g · f with f the float
// of 1/scale in double, and 1 when any element of u is not finite, else 0. With
// `accumulate` (accumulate_gradient, Note [Micro-batches on the device]) f is the float of
// weight/divisor and the products are added into the sum (input 2), whose elements the
// flag then checks.
class RefUnscaleGradient final : public Kernel {
 public:
  RefUnscaleGradient(std::int64_t numel, double weight, bool accumulate)
      : numel_(numel), weight_(weight), accumulate_(accumulate) {}
  void run(const KernelArgs& args) override {
    const float* g = input(args, 0);
    const float f = static_cast<float>(weight_ / static_cast<double>(*input(args, 1)));
    float* out = accumulate_ ? mutable_input(args, 2) : static_cast<float*>(args.outputs[0]);
    bool finite = true;
    for (std::int64_t i = 0; i < numel_; ++i) {
      out[i] = accumulate_ ? out[i] + g[i] * f : g[i] * f;
      finite = finite && std::isfinite(out[i]);
    }
    *static_cast<float*>(args.outputs[accumulate_ ? 0 : 1]) = finite ? 0.0f : 1.0f;
  }

 private:
  std::int64_t numel_;
  double weight_;
  bool accumulate_;
};

}  // namespace

std::unique_ptr<Kernel> make_ref_unscale_gradient(const KernelDesc& desc, std::string* why_not) {
  std::int64_t numel = 0;
  if (desc.op == "accumulate_gradient") {
    float weight = 0;
    if (!check_accumulate_gradient(desc, &numel, &weight, why_not)) return nullptr;
    return std::make_unique<RefUnscaleGradient>(numel, weight, true);
  }
  if (!check_unscale_gradient(desc, &numel, why_not)) return nullptr;
  return std::make_unique<RefUnscaleGradient>(numel, 1.0, false);
}

std::unique_ptr<Kernel> make_ref_clip(const KernelDesc& desc, std::string* /*why_not*/) {
  std::vector<std::int64_t> sizes;
  for (const TensorDesc& t : desc.inputs) sizes.push_back(t.shape.numel());
  const double limit = desc.attrs.f(desc.op == "clip_by_value" ? "clipvalue" : "clipnorm");
  NNFIT_CHECK(limit > 0, InvalidArgument, desc.node_name, ": the clipping limit must be positive, got ", limit);
  return std::make_unique<RefClip>(desc.op, limit, std::move(sizes));
}

std::unique_ptr<Kernel> make_ref_slot_update(const KernelDesc& desc, std::string* why_not) {
  OptimizerParams p;
  if (!check_optimizer(desc, &p, why_not)) return nullptr;
  if (desc.op == "decay_weights") return std::make_unique<RefDecayWeights>(p);
  if (desc.op == "ema_update") return std::make_unique<RefEmaUpdate>(p);
  if (desc.op == "adafactor_update") {
    return std::make_unique<RefAdafactorUpdate>(AdafactorState(p, adafactor_shape_of(desc.inputs[0].shape)));
  }
  SlotRule rule = SlotRule::adagrad;
  NNFIT_CHECK(slot_rule_of(desc.op, &rule), InvalidArgument, "internal: make_ref_slot_update has no rule for op '",
              desc.op, "'");
  if (rule == SlotRule::lamb) return std::make_unique<RefLambUpdate>(SlotUpdateState(rule, p, true));
  return std::make_unique<RefSlotUpdate>(SlotUpdateState(rule, p, desc.inputs.size() == 4));
}

std::unique_ptr<Kernel> make_ref_sgd_update(const KernelDesc& desc, std::string* why_not) {
  OptimizerParams p;
  if (!check_optimizer(desc, &p, why_not)) return nullptr;
  return std::make_unique<RefSgdUpdate>(p);
}

std::unique_ptr<Kernel> make_ref_sgd_momentum_update(const KernelDesc& desc, std::string* why_not) {
  OptimizerParams p;
  if (!check_optimizer(desc, &p, why_not)) return nullptr;
  return std::make_unique<RefSgdMomentumUpdate>(p);
}

std::unique_ptr<Kernel> make_ref_adam_update(const KernelDesc& desc, std::string* why_not) {
  OptimizerParams p;
  if (!check_optimizer(desc, &p, why_not)) return nullptr;
  return std::make_unique<RefAdamUpdate>(p);
}

std::unique_ptr<Kernel> make_ref_rmsprop_update(const KernelDesc& desc, std::string* why_not) {
  OptimizerParams p;
  if (!check_optimizer(desc, &p, why_not)) return nullptr;
  return std::make_unique<RefRmspropUpdate>(p);
}

}  // namespace nnfit
