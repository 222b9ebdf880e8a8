// OpenMP kernels of the optimizer updates (SGD, SGD with momentum / Nesterov, Adam and
// AdamW, with AMSGrad; RMSprop, with momentum and centered): Keras 3's formulas as one fused, vectorizable f32 pass over the
// parameter, with every per-step scalar (lr, Adam's bias-corrected α) computed once in
// double. Like the reference kernels they write param and slots in place through the
// const input pointers, as the op contract allows (docs/design/ops.md).
#include <algorithm>
#include <cmath>

#include "backend/common/train_op_checks.h"
#include "backend/cpu/omp_kernels.h"

namespace nnfit {

namespace {

class OmpSgdUpdate final : public Kernel {
 public:
  explicit OmpSgdUpdate(OptimizerParams p) : p_(p) {}
  void run(const KernelArgs& args) override {
    float* __restrict param = mutable_input(args, 0);
    const float* __restrict grad = input(args, 1);
    const float lr = args.ctx->learning_rate;
    const std::int64_t n = p_.numel;
#pragma omp parallel for simd schedule(static) if (n >= kOmpMinParallelElements)
    for (std::int64_t i = 0; i < n; ++i) param[i] -= lr * grad[i];
  }

 private:
  OptimizerParams p_;
};

class OmpSgdMomentumUpdate final : public Kernel {
 public:
  explicit OmpSgdMomentumUpdate(OptimizerParams p) : p_(p) {}
  void run(const KernelArgs& args) override {
    float* __restrict param = mutable_input(args, 0);
    const float* __restrict grad = input(args, 1);
    float* __restrict velocity = mutable_input(args, 2);
    const float lr = args.ctx->learning_rate;
    const float m = static_cast<float>(p_.momentum);
    const std::int64_t n = p_.numel;
    if (p_.nesterov) {
#pragma omp parallel for simd schedule(static) if (n >= kOmpMinParallelElements)
      for (std::int64_t i = 0; i < n; ++i) {
        const float v = m * velocity[i] - lr * grad[i];
        velocity[i] = v;
        param[i] += m * v - lr * grad[i];
      }
    } else {
#pragma omp parallel for simd schedule(static) if (n >= kOmpMinParallelElements)
      for (std::int64_t i = 0; i < n; ++i) {
        const float v = m * velocity[i] - lr * grad[i];
        velocity[i] = v;
        param[i] += v;
      }
    }
  }

 private:
  OptimizerParams p_;
};

class OmpAdamUpdate final : public Kernel {
 public:
  explicit OmpAdamUpdate(OptimizerParams p) : p_(p) {}
  void run(const KernelArgs& args) override {
    float* __restrict param = mutable_input(args, 0);
    const float* __restrict grad = input(args, 1);
    float* __restrict m = mutable_input(args, 2);
    float* __restrict v = mutable_input(args, 3);
    const double lr = args.ctx->learning_rate;
    const double t = static_cast<double>(args.ctx->step + 1);
    const float alpha = static_cast<float>(lr * std::sqrt(1.0 - std::pow(p_.beta_2, t)) /
                                           (1.0 - std::pow(p_.beta_1, t)));
    // AdamW's decoupled decay p −= lr·wd·p folded into one factor; 1 when wd = 0.
    const float decay = p_.weight_decay > 0.0 ? static_cast<float>(1.0 - lr * p_.weight_decay) : 1.0f;
    const float one_minus_b1 = static_cast<float>(1.0 - p_.beta_1);
    const float one_minus_b2 = static_cast<float>(1.0 - p_.beta_2);
    const float eps = static_cast<float>(p_.epsilon);
    const std::int64_t n = p_.numel;
    if (p_.amsgrad) {  // the step uses v_hat, the largest v so far
      float* __restrict v_hat = mutable_input(args, 4);
#pragma omp parallel for simd schedule(static) if (n >= kOmpMinParallelElements)
      for (std::int64_t i = 0; i < n; ++i) {
        const float g = grad[i];
        const float mi = m[i] + (g - m[i]) * one_minus_b1;
        const float vi = v[i] + (g * g - v[i]) * one_minus_b2;
        const float vh = std::max(v_hat[i], vi);
        m[i] = mi;
        v[i] = vi;
        v_hat[i] = vh;
        param[i] = param[i] * decay - alpha * mi / (std::sqrt(vh) + eps);
      }
      return;
    }
#pragma omp parallel for simd schedule(static) if (n >= kOmpMinParallelElements)
    for (std::int64_t i = 0; i < n; ++i) {
      const float g = grad[i];
      const float mi = m[i] + (g - m[i]) * one_minus_b1;
      const float vi = v[i] + (g * g - v[i]) * one_minus_b2;
      m[i] = mi;
      v[i] = vi;
      param[i] = param[i] * decay - alpha * mi / (std::sqrt(vi) + eps);
    }
  }

 private:
  OptimizerParams p_;
};

class OmpRmspropUpdate final : public Kernel {
 public:
  explicit OmpRmspropUpdate(OptimizerParams p) : p_(p) {}
  void run(const KernelArgs& args) override {
    float* __restrict param = mutable_input(args, 0);
    const float* __restrict grad = input(args, 1);
    float* __restrict velocity = mutable_input(args, 2);
    const float lr = args.ctx->learning_rate;
    const float rho = static_cast<float>(p_.rho);
    const float one_minus_rho = static_cast<float>(1.0 - p_.rho);
    const float eps = static_cast<float>(p_.epsilon);
    const std::int64_t n = p_.numel;
    if (p_.centered) {  // the variance estimate v − E[g]²; momentum optional
      float* __restrict momentum = p_.has_momentum_slot ? mutable_input(args, 3) : nullptr;
      float* __restrict average = mutable_input(args, p_.has_momentum_slot ? 4 : 3);
      const float mu = static_cast<float>(p_.momentum);
#pragma omp parallel for schedule(static) if (n >= kOmpMinParallelElements)
      for (std::int64_t i = 0; i < n; ++i) {
        const float g = grad[i];
        const float v = rho * velocity[i] + one_minus_rho * g * g;
        const float a = rho * average[i] + one_minus_rho * g;
        velocity[i] = v;
        average[i] = a;
        float inc = lr * g / std::sqrt(v - a * a + eps);
        if (momentum) inc = momentum[i] = mu * momentum[i] + inc;
        param[i] -= inc;
      }
      return;
    }
    if (p_.has_momentum_slot) {
      float* __restrict momentum = mutable_input(args, 3);
      const float mu = static_cast<float>(p_.momentum);
#pragma omp parallel for simd schedule(static) if (n >= kOmpMinParallelElements)
      for (std::int64_t i = 0; i < n; ++i) {
        const float g = grad[i];
        const float v = rho * velocity[i] + one_minus_rho * g * g;
        velocity[i] = v;
        const float mo = mu * momentum[i] + lr * g / std::sqrt(v + eps);
        momentum[i] = mo;
        param[i] -= mo;
      }
    } else {
#pragma omp parallel for simd schedule(static) if (n >= kOmpMinParallelElements)
      for (std::int64_t i = 0; i < n; ++i) {
        const float g = grad[i];
        const float v = rho * velocity[i] + one_minus_rho * g * g;
        velocity[i] = v;
        param[i] -= lr * g / std::sqrt(v + eps);
      }
    }
  }

 private:
  OptimizerParams p_;
};

}  // namespace

std::unique_ptr<Kernel> make_omp_sgd_update(const KernelDesc& desc, std::string* why_not) {
  OptimizerParams p;
  if (!check_optimizer(desc, &p, why_not)) return nullptr;
  return std::make_unique<OmpSgdUpdate>(p);
}

std::unique_ptr<Kernel> make_omp_sgd_momentum_update(const KernelDesc& desc, std::string* why_not) {
  OptimizerParams p;
  if (!check_optimizer(desc, &p, why_not)) return nullptr;
  return std::make_unique<OmpSgdMomentumUpdate>(p);
}

std::unique_ptr<Kernel> make_omp_adam_update(const KernelDesc& desc, std::string* why_not) {
  OptimizerParams p;
  if (!check_optimizer(desc, &p, why_not)) return nullptr;
  return std::make_unique<OmpAdamUpdate>(p);
}

std::unique_ptr<Kernel> make_omp_rmsprop_update(const KernelDesc& desc, std::string* why_not) {
  OptimizerParams p;
  if (!check_optimizer(desc, &p, why_not)) return nullptr;
  return std::make_unique<OmpRmspropUpdate>(p);
}

}  // namespace nnfit
