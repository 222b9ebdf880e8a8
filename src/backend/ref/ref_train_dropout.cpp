// Reference kernels of dropout, dropout_grad and noise. The mask comes from dropout_keep()
// (backend/common/random.h), a pure function of (run seed, node seed, step, element), so
// every kernel of this op draws the same mask with no state carried between steps; the
// element is its index in the global batch (Note [Random draws by global row]).
#include <cmath>

#include "backend/common/random.h"
#include "backend/common/train_op_checks.h"
#include "backend/ref/ref_train_kernels.h"

namespace nnfit {

namespace {

class RefDropout final : public Kernel {
 public:
  explicit RefDropout(DropoutParams p) : p_(p) {}
  void run(const KernelArgs& args) override {
    const float* x = static_cast<const float*>(args.inputs[0]);
    float* y = static_cast<float*>(args.outputs[0]);
    std::uint8_t* mask = static_cast<std::uint8_t*>(args.outputs[1]);
    const auto step = static_cast<std::uint64_t>(args.ctx->step);
    const std::uint64_t offset = p_.index_offset(args.ctx->row_offset, args.ctx->rows);
    for (std::int64_t i = 0; i < p_.numel; ++i) {
      bool keep = dropout_keep(args.ctx->seed, p_.seed, step, offset + p_.noise_index(i), p_.rate);
      y[i] = keep ? static_cast<float>(x[i] / (1.0 - p_.rate)) : 0.0f;
      mask[i] = keep ? 1 : 0;
    }
  }

 private:
  DropoutParams p_;
};

class RefDropoutGrad final : public Kernel {
 public:
  explicit RefDropoutGrad(DropoutParams p) : p_(p) {}
  void run(const KernelArgs& args) override {
    const float* dy = static_cast<const float*>(args.inputs[0]);
    const std::uint8_t* mask = static_cast<const std::uint8_t*>(args.inputs[1]);
    float* dx = static_cast<float*>(args.outputs[0]);
    for (std::int64_t i = 0; i < p_.numel; ++i) {
      dx[i] = mask[i] ? static_cast<float>(dy[i] / (1.0 - p_.rate)) : 0.0f;
    }
  }

 private:
  DropoutParams p_;
};

// The Gaussian and alpha-dropout layers' noise (Keras's formulas): gaussian_add y = x + σn
// (uniform_add and truncated_normal_add: x + value·u, u in [0, 1), and x + value·t, t normal
// within (-2, 2), keras.random's draws in a traced call; gamma_add: x + value·g, g a
// Gamma(rate, 1) draw, for the Beta draws of MixUp and CutMix);
// gaussian_mul y = x·f, f = 1 + σn, σ = sqrt(rate / (1 − rate)); alpha_dropout keeps an
// element with probability 1 − rate, y = a·(keep ? x : α') + b with Keras's SELU constants,
// f = keep ? a : 0. n is noise_normal of (run seed, node seed, step, element).
class RefNoise final : public Kernel {
 public:
  RefNoise(std::string kind, double value, double rate, std::uint64_t seed, std::int64_t numel)
      : kind_(std::move(kind)), value_(value), rate_(rate), seed_(seed), numel_(numel) {}
  void run(const KernelArgs& args) override {
    const float* x = static_cast<const float*>(args.inputs[0]);
    float* y = static_cast<float*>(args.outputs[0]);
    const bool additive =
        kind_ == "gaussian_add" || kind_ == "uniform_add" || kind_ == "truncated_normal_add" || kind_ == "gamma_add";
    float* f = additive ? nullptr : static_cast<float*>(args.outputs[1]);
    const std::uint64_t key = dropout_key(args.ctx->seed, seed_, static_cast<std::uint64_t>(args.ctx->step));
    const double alpha_p = -1.6732632423543772848170429916717 * 1.0507009873554804934193349852946;
    const double rate = value_;
    const double a = std::pow((1.0 - rate) * (1.0 + rate * alpha_p * alpha_p), -0.5), b = -a * alpha_p * rate;
    const double sigma = kind_ == "gaussian_mul" ? std::sqrt(rate / (1.0 - rate)) : value_;
    const std::uint64_t offset = random_index_offset(args.ctx->row_offset, args.ctx->rows, numel_);
    for (std::int64_t i = 0; i < numel_; ++i) {
      const auto idx = offset + static_cast<std::uint64_t>(i);
      if (kind_ == "gaussian_add") {
        y[i] = static_cast<float>(x[i] + sigma * noise_normal(key, idx));
      } else if (kind_ == "uniform_add") {
        y[i] = static_cast<float>(x[i] + value_ * noise_uniform_half_open(key, idx));
      } else if (kind_ == "truncated_normal_add") {
        y[i] = static_cast<float>(x[i] + value_ * noise_truncated_normal(key, idx));
      } else if (kind_ == "gamma_add") {
        y[i] = static_cast<float>(x[i] + value_ * noise_gamma(key, idx, rate_));
      } else if (kind_ == "gaussian_mul") {
        const double factor = 1.0 + sigma * noise_normal(key, idx);
        y[i] = static_cast<float>(x[i] * factor);
        f[i] = static_cast<float>(factor);
      } else {
        const bool keep = dropout_uniform_keyed(key, idx) >= rate;
        y[i] = static_cast<float>(a * (keep ? x[i] : alpha_p) + b);
        f[i] = keep ? static_cast<float>(a) : 0.0f;
      }
    }
  }

 private:
  std::string kind_;
  double value_;
  double rate_;  // gamma_add's alpha
  std::uint64_t seed_;
  std::int64_t numel_;
};

}  // namespace

std::unique_ptr<Kernel> make_ref_noise(const KernelDesc& desc, std::string* /*why_not*/) {
  return std::make_unique<RefNoise>(desc.attrs.s("kind"), desc.attrs.f("value"), desc.attrs.f_or("rate", 0.0),
                                    static_cast<std::uint64_t>(desc.attrs.i("seed")), desc.inputs.at(0).shape.numel());
}

std::unique_ptr<Kernel> make_ref_dropout(const KernelDesc& desc, std::string* why_not) {
  DropoutParams p;
  if (!check_dropout(desc, &p, why_not)) return nullptr;
  return std::make_unique<RefDropout>(p);
}

std::unique_ptr<Kernel> make_ref_dropout_grad(const KernelDesc& desc, std::string* why_not) {
  DropoutParams p;
  if (!check_dropout(desc, &p, why_not)) return nullptr;
  return std::make_unique<RefDropoutGrad>(p);
}

}  // namespace nnfit
