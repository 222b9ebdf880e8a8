// OpenMP kernels of layer_norm and layer_norm_grad (graph/layer_norm_op_defs.cpp): rows
// over x's last axis split statically over threads, row statistics in float with the
// two-pass variance; layer_norm_grad's dgamma and dbeta are summed per thread into
// workspace slots and added in thread order, so a thread count gives one result. The
// formulas (each mode) are ref_layer_norm.cpp's.
#include <omp.h>

#include <algorithm>
#include <cmath>

#include "backend/common/nn_op_geometry.h"
#include "backend/common/norm_operands.h"
#include "backend/cpu/omp_kernels.h"

namespace nnfit {

namespace {

class OmpLayerNorm final : public Kernel {
 public:
  OmpLayerNorm(bool grad, std::int64_t rows, std::int64_t cols, float epsilon, LayerNormMode mode)
      : grad_(grad), rms_(!mode.centred), zero_mean_(mode.zero_mean), rows_(rows), cols_(cols), epsilon_(epsilon), threads_(omp_get_max_threads()) {}

  std::size_t workspace_bytes() const override {
    return grad_ ? static_cast<std::size_t>(threads_) * 2 * static_cast<std::size_t>(cols_) * sizeof(float) : 0;
  }

  void run(const KernelArgs& args) override { grad_ ? backward(args) : forward(args); }

 private:
  bool parallel() const { return rows_ * cols_ >= kOmpMinParallelElements; }

  void forward(const KernelArgs& args) const {
    const auto operands = NormForwardOperands(args);  // named references, not a binding: clang 14 cannot capture one
    const auto& x = operands.x;
    const auto& gamma = operands.gamma;
    const auto& beta = operands.beta;
    const auto& y = operands.y;
    const auto& mean_out = operands.stat0;
    const auto& rstd_out = operands.stat1;
    const std::int64_t n = cols_;
    const float inv_n = 1.0f / static_cast<float>(n);
#pragma omp parallel for schedule(static) if (parallel())
    for (std::int64_t r = 0; r < rows_; ++r) {
      const float* xr = x + r * n;
      float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
      for (std::int64_t c = 0; c < n; ++c) sum += xr[c];
      const float mean = zero_mean_ ? 0.0f : sum * inv_n;
      float var = 0.0f;
#pragma omp simd reduction(+ : var)
      for (std::int64_t c = 0; c < n; ++c) var += (xr[c] - mean) * (xr[c] - mean);
      const float rstd = 1.0f / std::sqrt(var * inv_n + epsilon_);
      const float shift = rms_ ? 0.0f : mean;
      float* yr = y + r * n;
#pragma omp simd
      for (std::int64_t c = 0; c < n; ++c) yr[c] = (xr[c] - shift) * rstd * gamma[c] + beta[c];
      mean_out[r] = mean;
      rstd_out[r] = rstd;
    }
  }

  void backward(const KernelArgs& args) const {
    const auto operands = NormBackwardOperands(args);  // named references, not a binding: clang 14 cannot capture one
    const auto& x = operands.x;
    const auto& dy = operands.dy;
    const auto& gamma = operands.gamma;
    const auto& mean = operands.stat0;
    const auto& rstd = operands.stat1;
    const auto& dx = operands.dx;
    const auto& dgamma = operands.dgamma;
    const auto& dbeta = operands.dbeta;
    auto* partial = static_cast<float*>(args.workspace);  // [threads][2][cols]: dgamma, dbeta
    const std::int64_t n = cols_;
    const float inv_n = 1.0f / static_cast<float>(n);
    const int team = parallel() ? threads_ : 1;
    std::fill(partial, partial + static_cast<std::int64_t>(team) * 2 * n, 0.0f);
#pragma omp parallel num_threads(team)
    {
      const int tid = omp_get_thread_num();
      std::int64_t begin = 0, end = 0;
      omp_row_range(tid, omp_get_num_threads(), rows_, &begin, &end);
      float* dg = partial + static_cast<std::int64_t>(tid) * 2 * n;
      float* db = dg + n;
      for (std::int64_t r = begin; r < end; ++r) {
        const float* xr = x + r * n;
        const float* dyr = dy + r * n;
        const float mu = mean[r], rs = rstd[r];
        const float shift = rms_ ? 0.0f : mu;
        float mean_g = 0.0f, mean_gx = 0.0f;
#pragma omp simd reduction(+ : mean_g, mean_gx)
        for (std::int64_t c = 0; c < n; ++c) {
          const float z = (xr[c] - shift) * rs;
          const float g = dyr[c] * gamma[c];
          mean_g += g;
          mean_gx += g * z;
          dg[c] += dyr[c] * z;
          db[c] += dyr[c];
        }
        mean_g = rms_ ? 0.0f : mean_g * inv_n;
        mean_gx *= inv_n;
        float* dxr = dx + r * n;
#pragma omp simd
        for (std::int64_t c = 0; c < n; ++c) {
          const float xhat = (xr[c] - mu) * rs;
          dxr[c] = rs * (dyr[c] * gamma[c] - mean_g - xhat * mean_gx);
        }
      }
    }
    for (std::int64_t c = 0; c < n; ++c) {
      float g = 0.0f, b = 0.0f;
      for (int t = 0; t < team; ++t) {
        g += partial[static_cast<std::int64_t>(t) * 2 * n + c];
        b += partial[static_cast<std::int64_t>(t) * 2 * n + n + c];
      }
      dgamma[c] = g;
      dbeta[c] = b;
    }
  }

  bool grad_, rms_, zero_mean_;
  std::int64_t rows_, cols_;
  float epsilon_;
  int threads_;
};

}  // namespace

std::unique_ptr<Kernel> make_omp_layer_norm(const KernelDesc& d, std::string* why_not) {
  if (!all_float32(d, why_not)) return nullptr;
  const Shape& x = d.inputs.at(0).shape;
  const std::int64_t cols = x.rank() >= 1 ? x.dim(-1) : 0;
  if (cols == 0) {
    if (why_not) *why_not = d.op + ": empty rows";
    return nullptr;
  }
  return std::make_unique<OmpLayerNorm>(d.op == "layer_norm_grad", x.numel() / cols, cols,
                                        static_cast<float>(d.attrs.f("epsilon")), layer_norm_mode(d.attrs));
}

}  // namespace nnfit
