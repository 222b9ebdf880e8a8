// OpenMP kernels of the mask ops (sequence_mask, apply_mask, masked_mean and its gradient;
// graph/mask_op_defs.cpp) and of standardize (+grad) (Keras's Normalization). The
// reference kernels' expressions (ref_mask.cpp, ref_layer_norm.cpp), split over rows or
// (sample, feature) pairs; every output element is computed as the reference computes it,
// so the results are bit-identical. masked_mean counts each sample's steps once, in a
// workspace, before the features are split.
#include <algorithm>
#include <cmath>

#include "backend/common/nn_op_geometry.h"
#include "backend/common/norm_operands.h"
#include "backend/cpu/omp_kernels.h"
#include "nnfit/core/error.h"

namespace nnfit {

namespace {

class OmpSequenceMask final : public Kernel {
 public:
  OmpSequenceMask(DType dtype, double value, std::int64_t rows, std::int64_t width)
      : dtype_(dtype), value_(value), rows_(rows), width_(width) {}
  void run(const KernelArgs& args) override {
    auto* m = static_cast<float*>(args.outputs[0]);
    const void* x = args.inputs[0];
#pragma omp parallel for schedule(static) if (rows_ * width_ >= kOmpMinParallelElements)
    for (std::int64_t r = 0; r < rows_; ++r) {
      bool any = false;
      for (std::int64_t j = 0; j < width_ && !any; ++j) any = mask_value_at(x, dtype_, r * width_ + j) != value_;
      m[r] = any ? 1.0f : 0.0f;
    }
  }

 private:
  DType dtype_;
  double value_;
  std::int64_t rows_, width_;
};

class OmpApplyMask final : public Kernel {
 public:
  OmpApplyMask(std::int64_t rows, std::int64_t width) : rows_(rows), width_(width) {}
  void run(const KernelArgs& args) override {
    const auto* x = static_cast<const float*>(args.inputs[0]);
    const auto* m = static_cast<const float*>(args.inputs[1]);
    auto* y = static_cast<float*>(args.outputs[0]);
    const std::int64_t width = width_;
#pragma omp parallel for schedule(static) if (rows_ * width_ >= kOmpMinParallelElements)
    for (std::int64_t r = 0; r < rows_; ++r) {
      for (std::int64_t j = 0; j < width; ++j) y[r * width + j] = x[r * width + j] * m[r];
    }
  }

 private:
  std::int64_t rows_, width_;
};

// masked_mean: y[i, j] = Σ_t x·m / Σ_t m; grad: dx[i, s, j] = dy[i, j]·m[i, s] / Σ_t m.
class OmpMaskedMean final : public Kernel {
 public:
  OmpMaskedMean(bool grad, std::int64_t n, std::int64_t t, std::int64_t f) : grad_(grad), n_(n), t_(t), f_(f) {}
  std::size_t workspace_bytes() const override { return static_cast<std::size_t>(n_) * sizeof(double); }
  void run(const KernelArgs& args) override {
    const auto* m = static_cast<const float*>(args.inputs[grad_ ? 0 : 1]);
    auto* count = static_cast<double*>(args.workspace);
    const std::int64_t n = n_, t = t_, f = f_;
    const bool parallel = n * t * f >= kOmpMinParallelElements;
#pragma omp parallel if (parallel)
    {
#pragma omp for schedule(static)
      for (std::int64_t i = 0; i < n; ++i) {
        double c = 0.0;
        for (std::int64_t s = 0; s < t; ++s) c += m[i * t + s];
        count[i] = c;
      }
      if (grad_) {
        // 0 / 0 where every step is masked, as Keras's division gives.
        const auto* dy = static_cast<const float*>(args.inputs[1]);
        auto* dx = static_cast<float*>(args.outputs[0]);
#pragma omp for collapse(2) schedule(static)
        for (std::int64_t i = 0; i < n; ++i) {
          for (std::int64_t s = 0; s < t; ++s) {
            for (std::int64_t j = 0; j < f; ++j) {
              dx[(i * t + s) * f + j] = static_cast<float>(dy[i * f + j] * m[i * t + s] / count[i]);
            }
          }
        }
      } else {
        const auto* x = static_cast<const float*>(args.inputs[0]);
        auto* y = static_cast<float*>(args.outputs[0]);
#pragma omp for collapse(2) schedule(static)
        for (std::int64_t i = 0; i < n; ++i) {
          for (std::int64_t j = 0; j < f; ++j) {
            double sum = 0.0;
            for (std::int64_t s = 0; s < t; ++s) sum += static_cast<double>(x[(i * t + s) * f + j]) * m[i * t + s];
            y[i * f + j] = static_cast<float>(sum / count[i]);
          }
        }
      }
    }
  }

 private:
  bool grad_;
  std::int64_t n_, t_, f_;
};

// standardize: s = max(sqrt(var), 1e-7); y = (x − mean)/s, or x·s + mean with invert;
// standardize_grad: dx = dy/s (dy·s with invert).
class OmpStandardize final : public Kernel {
 public:
  OmpStandardize(bool grad, bool invert, std::int64_t rows, std::int64_t cols)
      : grad_(grad), invert_(invert), rows_(rows), cols_(cols) {}
  void run(const KernelArgs& args) override {
    const auto operands = StandardizeOperands(args, grad_);  // named references, not a binding: clang 14 cannot capture one
    const auto& x = operands.x;
    const auto& mean = operands.mean;
    const auto& var = operands.var;
    const auto& y = operands.y;
    const std::int64_t cols = cols_;
    const bool grad = grad_, invert = invert_;
#pragma omp parallel for schedule(static) if (rows_ * cols_ >= kOmpMinParallelElements)
    for (std::int64_t r = 0; r < rows_; ++r) {
      for (std::int64_t c = 0; c < cols; ++c) y[r * cols + c] = standardize_element(x[r * cols + c], grad ? 0.0f : mean[c], var[c], invert);
    }
  }

 private:
  bool grad_, invert_;
  std::int64_t rows_, cols_;
};

}  // namespace

std::unique_ptr<Kernel> make_omp_mask(const KernelDesc& d, std::string* /*why_not*/) {
  if (d.op == "sequence_mask") {
    const std::int64_t rows = d.outputs.at(0).shape.numel();
    const std::int64_t width = rows == 0 ? 0 : d.inputs.at(0).shape.numel() / rows;
    return std::make_unique<OmpSequenceMask>(d.inputs.at(0).dtype, d.attrs.f("value"), rows, width);
  }
  if (d.op == "masked_mean" || d.op == "masked_mean_grad") {
    const bool grad = d.op == "masked_mean_grad";
    const Shape& x = grad ? d.outputs.at(0).shape : d.inputs.at(0).shape;
    return std::make_unique<OmpMaskedMean>(grad, x[0], x[1], x[2]);
  }
  if (d.op == "apply_mask") {
    return std::make_unique<OmpApplyMask>(d.inputs.at(1).shape.numel(), d.inputs.at(0).shape.dim(-1));
  }
  throw InvalidArgument("internal: make_omp_mask has no kernel for op '" + d.op + "'");
}

std::unique_ptr<Kernel> make_omp_standardize(const KernelDesc& d, std::string* /*why_not*/) {
  const Shape& x = d.inputs.at(0).shape;
  const std::int64_t cols = x.dim(-1);
  return std::make_unique<OmpStandardize>(d.op == "standardize_grad", d.attrs.i_or("invert", 0) != 0,
                                          cols > 0 ? x.numel() / cols : 0, cols);
}

}  // namespace nnfit
