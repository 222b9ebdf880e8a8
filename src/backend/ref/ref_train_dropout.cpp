// Reference kernels of dropout and dropout_grad. The mask comes from dropout_keep()
// (backend/common/random.h), a pure function of (run seed, node seed, step, element), so
// every kernel of this op draws the same mask with no state carried between steps.
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
    for (std::int64_t i = 0; i < p_.numel; ++i) {
      bool keep = dropout_keep(args.ctx->seed, p_.seed, step, p_.noise_index(i), p_.rate);
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

}  // namespace

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
