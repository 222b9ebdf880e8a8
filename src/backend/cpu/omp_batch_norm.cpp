// OpenMP kernels of batch_norm_train, batch_norm_grad, batch_norm_infer and
// moving_average_update (channels last, [rows, C]). The reductions give each thread a
// static block of rows and a slot of per-channel double partials in the workspace; the
// statistics are one pass of sums shifted by the first row (robust to a large mean), and
// the final pass applies per-channel coefficients kept in the workspace too, always to
// x − mean so a large mean does not cancel in f32. run() never allocates.
#include <omp.h>

#include <algorithm>
#include <cmath>

#include "backend/common/norm_operands.h"
#include "backend/common/train_op_checks.h"
#include "backend/cpu/omp_kernels.h"

namespace nnfit {

namespace {

// Workspace: `sums` slots of nt×C double partials, then `coefs` arrays of C floats.
struct BatchNormWorkspace {
  double* partial;
  float* coef;
};

std::size_t batch_norm_workspace_bytes(int threads, std::int64_t channels, int sums, int coefs) {
  const auto c = static_cast<std::size_t>(channels);
  return static_cast<std::size_t>(sums) * static_cast<std::size_t>(threads) * c * sizeof(double) +
         static_cast<std::size_t>(coefs) * c * sizeof(float);
}

BatchNormWorkspace split_workspace(void* ws, int threads, std::int64_t channels, int sums) {
  double* partial = static_cast<double*>(ws);
  return {partial, reinterpret_cast<float*>(partial + sums * threads * channels)};
}

// Fills `two` partial sums per thread over its rows: partial[(2·tid)·C + c] and
// partial[(2·tid + 1)·C + c]. Returns the team size actually used.
template <typename RowFn>
int reduce_rows(std::int64_t rows, std::int64_t C, int threads, double* partial, RowFn row_fn) {
  int team = std::min(omp_get_max_threads(), threads);
  if (rows * C < kOmpMinParallelElements) team = 1;
  int used = 1;
#pragma omp parallel num_threads(team)
  {
    const int tid = omp_get_thread_num();
    const int n = omp_get_num_threads();
#pragma omp single
    used = n;
    double* a = partial + 2 * static_cast<std::int64_t>(tid) * C;
    double* b = a + C;
    std::fill(a, a + 2 * C, 0.0);
    std::int64_t begin = 0, end = 0;
    omp_row_range(tid, n, rows, &begin, &end);
    for (std::int64_t r = begin; r < end; ++r) row_fn(r, a, b);
  }
  return used;
}

class OmpBatchNormTrain final : public Kernel {
 public:
  explicit OmpBatchNormTrain(BatchNormParams p) : p_(p), threads_(omp_get_max_threads()) {}
  std::size_t workspace_bytes() const override {
    return batch_norm_workspace_bytes(threads_, p_.geometry.channels, 2, 1);
  }
  void run(const KernelArgs& args) override {
    const auto operands = NormForwardOperands(args);  // named references, not a binding: clang 14 cannot capture one
    const auto& x = operands.x;
    const auto& gamma = operands.gamma;
    const auto& beta = operands.beta;
    const auto& y = operands.y;
    const auto& mean_out = operands.stat0;
    const auto& var_out = operands.stat1;
    const std::int64_t rows = p_.geometry.rows, C = p_.geometry.channels;
    BatchNormWorkspace ws = split_workspace(args.workspace, threads_, C, 2);
    const float* shift = x;  // the first row
    int used = reduce_rows(rows, C, threads_, ws.partial, [&](std::int64_t r, double* s1, double* s2) {
      const float* xr = x + r * C;
#pragma omp simd
      for (std::int64_t c = 0; c < C; ++c) {
        const double e = static_cast<double>(xr[c]) - shift[c];
        s1[c] += e;
        s2[c] += e * e;
      }
    });
    float* scale = ws.coef;
    const double m = static_cast<double>(rows);
    for (std::int64_t c = 0; c < C; ++c) {
      double s1 = 0.0, s2 = 0.0;
      for (int t = 0; t < used; ++t) {
        s1 += ws.partial[2 * t * C + c];
        s2 += ws.partial[(2 * t + 1) * C + c];
      }
      const double d = s1 / m;
      const double var = std::max(s2 / m - d * d, 0.0);
      const double mean = shift[c] + d;
      const double a = gamma[c] / std::sqrt(var + p_.epsilon);
      scale[c] = static_cast<float>(a);
      mean_out[c] = static_cast<float>(mean);
      var_out[c] = static_cast<float>(var);
    }
#pragma omp parallel for schedule(static) if (rows * C >= kOmpMinParallelElements)
    for (std::int64_t r = 0; r < rows; ++r) {
      const float* xr = x + r * C;
      float* yr = y + r * C;
#pragma omp simd
      for (std::int64_t c = 0; c < C; ++c) yr[c] = (xr[c] - mean_out[c]) * scale[c] + beta[c];
    }
  }

 private:
  BatchNormParams p_;
  int threads_;
};

// dx = k·dy + kx·(x − mean) + k0 per channel, with k = gamma/√(var + ε),
// kx = −k·dgamma/(M·√(var + ε)) and k0 = −k·dbeta/M: the batch-statistics gradient of
// ops.md with its per-channel factors hoisted out of the last pass.
class OmpBatchNormGrad final : public Kernel {
 public:
  explicit OmpBatchNormGrad(BatchNormParams p) : p_(p), threads_(omp_get_max_threads()) {}
  std::size_t workspace_bytes() const override {
    return batch_norm_workspace_bytes(threads_, p_.geometry.channels, 2, 3);
  }
  void run(const KernelArgs& args) override {
    const auto operands = NormBackwardOperands(args);  // named references, not a binding: clang 14 cannot capture one
    const auto& x = operands.x;
    const auto& dy = operands.dy;
    const auto& gamma = operands.gamma;
    const auto& mean = operands.stat0;
    const auto& var = operands.stat1;
    const auto& dx = operands.dx;
    const auto& dgamma = operands.dgamma;
    const auto& dbeta = operands.dbeta;
    const std::int64_t rows = p_.geometry.rows, C = p_.geometry.channels;
    BatchNormWorkspace ws = split_workspace(args.workspace, threads_, C, 2);
    int used = reduce_rows(rows, C, threads_, ws.partial, [&](std::int64_t r, double* sdy, double* sdyx) {
      const float* xr = x + r * C;
      const float* dyr = dy + r * C;
#pragma omp simd
      for (std::int64_t c = 0; c < C; ++c) {
        sdy[c] += dyr[c];
        sdyx[c] += static_cast<double>(dyr[c]) * (static_cast<double>(xr[c]) - mean[c]);
      }
    });
    float* k = ws.coef;
    float* kx = ws.coef + C;
    float* k0 = ws.coef + 2 * C;
    const double m = static_cast<double>(rows);
    for (std::int64_t c = 0; c < C; ++c) {
      double sum_dy = 0.0, sum_dyx = 0.0;
      for (int t = 0; t < used; ++t) {
        sum_dy += ws.partial[2 * t * C + c];
        sum_dyx += ws.partial[(2 * t + 1) * C + c];
      }
      const double inv_std = 1.0 / std::sqrt(static_cast<double>(var[c]) + p_.epsilon);
      const double dg = sum_dyx * inv_std;
      const double kc = gamma[c] * inv_std;
      const double kxc = -kc * dg * inv_std / m;
      k[c] = static_cast<float>(kc);
      kx[c] = static_cast<float>(kxc);
      k0[c] = static_cast<float>(-kc * sum_dy / m);
      dgamma[c] = static_cast<float>(dg);
      dbeta[c] = static_cast<float>(sum_dy);
    }
#pragma omp parallel for schedule(static) if (rows * C >= kOmpMinParallelElements)
    for (std::int64_t r = 0; r < rows; ++r) {
      const float* xr = x + r * C;
      const float* dyr = dy + r * C;
      float* dxr = dx + r * C;
#pragma omp simd
      for (std::int64_t c = 0; c < C; ++c) dxr[c] = k[c] * dyr[c] + kx[c] * (xr[c] - mean[c]) + k0[c];
    }
  }

 private:
  BatchNormParams p_;
  int threads_;
};

class OmpBatchNormInfer final : public Kernel {
 public:
  explicit OmpBatchNormInfer(BatchNormParams p) : p_(p) {}
  std::size_t workspace_bytes() const override {
    return batch_norm_workspace_bytes(0, p_.geometry.channels, 0, 1);
  }
  void run(const KernelArgs& args) override {
    const auto operands = BatchNormInferOperands(args);  // named references, not a binding: clang 14 cannot capture one
    const auto& x = operands.x;
    const auto& gamma = operands.gamma;
    const auto& beta = operands.beta;
    const auto& moving_mean = operands.moving_mean;
    const auto& moving_var = operands.moving_var;
    const auto& y = operands.y;
    const std::int64_t rows = p_.geometry.rows, C = p_.geometry.channels;
    float* scale = static_cast<float*>(args.workspace);
    for (std::int64_t c = 0; c < C; ++c) {
      scale[c] = static_cast<float>(gamma[c] / std::sqrt(static_cast<double>(moving_var[c]) + p_.epsilon));
    }
#pragma omp parallel for schedule(static) if (rows * C >= kOmpMinParallelElements)
    for (std::int64_t r = 0; r < rows; ++r) {
      const float* xr = x + r * C;
      float* yr = y + r * C;
#pragma omp simd
      for (std::int64_t c = 0; c < C; ++c) yr[c] = (xr[c] - moving_mean[c]) * scale[c] + beta[c];
    }
  }

 private:
  BatchNormParams p_;
};

// Mutates input 0 (the moving statistic) in place, as the op contract documents.
class OmpMovingAverageUpdate final : public Kernel {
 public:
  OmpMovingAverageUpdate(std::int64_t channels, double momentum)
      : channels_(channels), momentum_(static_cast<float>(momentum)) {}
  void run(const KernelArgs& args) override {
    float* moving = static_cast<float*>(const_cast<void*>(args.inputs[0]));
    const float* value = static_cast<const float*>(args.inputs[1]);
    const float m = momentum_, one_minus_m = 1.0f - momentum_;
#pragma omp parallel for simd schedule(static) if (channels_ >= kOmpMinParallelElements)
    for (std::int64_t c = 0; c < channels_; ++c) moving[c] = moving[c] * m + value[c] * one_minus_m;
  }

 private:
  std::int64_t channels_;
  float momentum_;
};

}  // namespace

std::unique_ptr<Kernel> make_omp_batch_norm_train(const KernelDesc& desc, std::string* why_not) {
  BatchNormParams p;
  if (!check_batch_norm(desc, &p, why_not)) return nullptr;
  return std::make_unique<OmpBatchNormTrain>(p);
}

std::unique_ptr<Kernel> make_omp_batch_norm_grad(const KernelDesc& desc, std::string* why_not) {
  BatchNormParams p;
  if (!check_batch_norm(desc, &p, why_not)) return nullptr;
  return std::make_unique<OmpBatchNormGrad>(p);
}

std::unique_ptr<Kernel> make_omp_batch_norm_infer(const KernelDesc& desc, std::string* why_not) {
  BatchNormParams p;
  if (!check_batch_norm(desc, &p, why_not)) return nullptr;
  return std::make_unique<OmpBatchNormInfer>(p);
}

std::unique_ptr<Kernel> make_omp_moving_average_update(const KernelDesc& desc,
                                                       std::string* why_not) {
  std::int64_t channels = 0;
  double momentum = 0.0;
  if (!check_moving_average_update(desc, &channels, &momentum, why_not)) return nullptr;
  return std::make_unique<OmpMovingAverageUpdate>(channels, momentum);
}

}  // namespace nnfit
