// Reference kernels of sequence_mask, apply_mask, masked_mean and masked_mean_grad
// (graph/mask_op_defs.cpp).
#include "backend/common/norm_operands.h"
#include "backend/ref/ref_nn_kernel.h"
#include "backend/ref/ref_train_kernels.h"
#include "nnfit/core/error.h"

namespace nnfit {

std::unique_ptr<Kernel> make_ref_mask(const KernelDesc& d, std::string* /*why_not*/) {
  if (d.op == "sequence_mask") {
    const DType dtype = d.inputs.at(0).dtype;
    const double value = d.attrs.f("value");
    const std::int64_t rows = d.outputs.at(0).shape.numel();
    const std::int64_t width = rows == 0 ? 0 : d.inputs.at(0).shape.numel() / rows;  // 1 without reduce_last
    return std::make_unique<RefKernel>([=](const KernelArgs& args) {
      auto* m = static_cast<float*>(args.outputs[0]);
      for (std::int64_t r = 0; r < rows; ++r) {
        bool any = false;
        for (std::int64_t j = 0; j < width && !any; ++j) any = mask_value_at(args.inputs[0], dtype, r * width + j) != value;
        m[r] = any ? 1.0f : 0.0f;
      }
    });
  }
  if (d.op == "masked_mean" || d.op == "masked_mean_grad") {
    const bool grad = d.op == "masked_mean_grad";
    const Shape& x = grad ? d.outputs.at(0).shape : d.inputs.at(0).shape;
    const std::int64_t n = x[0], t = x[1], f = x[2];
    return std::make_unique<RefKernel>([=](const KernelArgs& args) {
      const auto* m = static_cast<const float*>(args.inputs[grad ? 0 : 1]);
      for (std::int64_t i = 0; i < n; ++i) {
        double count = 0.0;
        for (std::int64_t s = 0; s < t; ++s) count += m[i * t + s];
        if (grad) {
          // 0 / 0 where every step is masked, as Keras's division gives.
          const auto* dy = static_cast<const float*>(args.inputs[1]);
          auto* dx = static_cast<float*>(args.outputs[0]);
          for (std::int64_t s = 0; s < t; ++s) {
            for (std::int64_t j = 0; j < f; ++j) {
              dx[(i * t + s) * f + j] = static_cast<float>(dy[i * f + j] * m[i * t + s] / count);
            }
          }
          continue;
        }
        const auto* xs = static_cast<const float*>(args.inputs[0]);
        auto* y = static_cast<float*>(args.outputs[0]);
        for (std::int64_t j = 0; j < f; ++j) {
          double sum = 0.0;
          for (std::int64_t s = 0; s < t; ++s) sum += static_cast<double>(xs[(i * t + s) * f + j]) * m[i * t + s];
          y[i * f + j] = static_cast<float>(sum / count);
        }
      }
    });
  }
  const std::int64_t width = d.inputs.at(0).shape.dim(-1);
  const std::int64_t rows = d.inputs.at(1).shape.numel();
  return std::make_unique<RefKernel>([=](const KernelArgs& args) {
    const auto* x = static_cast<const float*>(args.inputs[0]);
    const auto* m = static_cast<const float*>(args.inputs[1]);
    auto* y = static_cast<float*>(args.outputs[0]);
    for (std::int64_t r = 0; r < rows; ++r) {
      for (std::int64_t j = 0; j < width; ++j) y[r * width + j] = x[r * width + j] * m[r];
    }
  });
}

}  // namespace nnfit
