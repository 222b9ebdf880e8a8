// Reference kernels of batch_norm_train, batch_norm_grad, batch_norm_infer and
// moving_average_update over a channels-last [rows, C] view. Statistics are two-pass
// (mean, then the biased variance about it) in double, one channel at a time.
#include <cmath>
#include <vector>

#include "backend/common/norm_operands.h"
#include "backend/common/train_op_checks.h"
#include "backend/ref/ref_train_kernels.h"

namespace nnfit {

namespace {

class RefBatchNormTrain final : public Kernel {
 public:
  explicit RefBatchNormTrain(BatchNormParams p) : p_(p) {}
  void run(const KernelArgs& args) override {
    const auto [x, gamma, beta, y, mean_out, var_out] = NormForwardOperands(args);
    const std::int64_t rows = p_.geometry.rows, C = p_.geometry.channels;
    for (std::int64_t c = 0; c < C; ++c) {
      double mean = 0.0;
      for (std::int64_t r = 0; r < rows; ++r) mean += x[r * C + c];
      mean /= static_cast<double>(rows);
      double var = 0.0;
      for (std::int64_t r = 0; r < rows; ++r) {
        double e = x[r * C + c] - mean;
        var += e * e;
      }
      var /= static_cast<double>(rows);
      double inv_std = 1.0 / std::sqrt(var + p_.epsilon);
      for (std::int64_t r = 0; r < rows; ++r) {
        y[r * C + c] = static_cast<float>(gamma[c] * (x[r * C + c] - mean) * inv_std + beta[c]);
      }
      mean_out[c] = static_cast<float>(mean);
      var_out[c] = static_cast<float>(var);
    }
  }

 private:
  BatchNormParams p_;
};

// With xhat = (x − mean)/√(var + ε) and M rows:
//   dbeta = Σ dy,  dgamma = Σ dy·xhat,  dx = gamma/√(var + ε) · (dy − dbeta/M − xhat·dgamma/M).
class RefBatchNormGrad final : public Kernel {
 public:
  explicit RefBatchNormGrad(BatchNormParams p) : p_(p) {}
  void run(const KernelArgs& args) override {
    const auto [x, dy, gamma, mean, var, dx, dgamma, dbeta] = NormBackwardOperands(args);
    const std::int64_t rows = p_.geometry.rows, C = p_.geometry.channels;
    const double m = static_cast<double>(rows);
    for (std::int64_t c = 0; c < C; ++c) {
      double inv_std = 1.0 / std::sqrt(static_cast<double>(var[c]) + p_.epsilon);
      double sum_dy = 0.0, sum_dy_xhat = 0.0;
      for (std::int64_t r = 0; r < rows; ++r) {
        double xhat = (x[r * C + c] - static_cast<double>(mean[c])) * inv_std;
        sum_dy += dy[r * C + c];
        sum_dy_xhat += dy[r * C + c] * xhat;
      }
      for (std::int64_t r = 0; r < rows; ++r) {
        double xhat = (x[r * C + c] - static_cast<double>(mean[c])) * inv_std;
        dx[r * C + c] = static_cast<float>(gamma[c] * inv_std *
                                           (dy[r * C + c] - sum_dy / m - xhat * sum_dy_xhat / m));
      }
      dgamma[c] = static_cast<float>(sum_dy_xhat);
      dbeta[c] = static_cast<float>(sum_dy);
    }
  }

 private:
  BatchNormParams p_;
};

class RefBatchNormInfer final : public Kernel {
 public:
  explicit RefBatchNormInfer(BatchNormParams p) : p_(p) {}
  void run(const KernelArgs& args) override {
    const auto [x, gamma, beta, moving_mean, moving_var, y] = BatchNormInferOperands(args);
    const std::int64_t rows = p_.geometry.rows, C = p_.geometry.channels;
    for (std::int64_t r = 0; r < rows; ++r) {
      for (std::int64_t c = 0; c < C; ++c) {
        double inv_std = 1.0 / std::sqrt(static_cast<double>(moving_var[c]) + p_.epsilon);
        y[r * C + c] = static_cast<float>(
            gamma[c] * (x[r * C + c] - static_cast<double>(moving_mean[c])) * inv_std + beta[c]);
      }
    }
  }

 private:
  BatchNormParams p_;
};

// x, dy, gamma, moving_mean, moving_var -> dx = dy gamma rstd, dgamma = sum dy (x - mean)
// rstd, dbeta = sum dy, with rstd = 1 / sqrt(moving_var + epsilon) per channel.
class RefBatchNormInferGrad final : public Kernel {
 public:
  explicit RefBatchNormInferGrad(BatchNormParams p) : p_(p) {}
  void run(const KernelArgs& args) override {
    const auto [x, dy, gamma, mean, var, dx, dgamma, dbeta] = NormBackwardOperands(args);
    const std::int64_t rows = p_.geometry.rows, C = p_.geometry.channels;
    std::vector<double> dg(static_cast<std::size_t>(C), 0.0), db(static_cast<std::size_t>(C), 0.0);
    for (std::int64_t r = 0; r < rows; ++r) {
      for (std::int64_t c = 0; c < C; ++c) {
        const double rstd = 1.0 / std::sqrt(static_cast<double>(var[c]) + p_.epsilon);
        const double g = dy[r * C + c];
        dx[r * C + c] = static_cast<float>(g * gamma[c] * rstd);
        dg[static_cast<std::size_t>(c)] += g * (x[r * C + c] - static_cast<double>(mean[c])) * rstd;
        db[static_cast<std::size_t>(c)] += g;
      }
    }
    for (std::int64_t c = 0; c < C; ++c) {
      dgamma[c] = static_cast<float>(dg[static_cast<std::size_t>(c)]);
      dbeta[c] = static_cast<float>(db[static_cast<std::size_t>(c)]);
    }
  }

 private:
  BatchNormParams p_;
};

// Mutates input 0 (the moving statistic) in place, as the op contract documents.
class RefMovingAverageUpdate final : public Kernel {
 public:
  RefMovingAverageUpdate(std::int64_t channels, double momentum)
      : channels_(channels), momentum_(momentum) {}
  void run(const KernelArgs& args) override {
    float* moving = static_cast<float*>(const_cast<void*>(args.inputs[0]));
    const float* value = static_cast<const float*>(args.inputs[1]);
    for (std::int64_t c = 0; c < channels_; ++c) {
      moving[c] = static_cast<float>(moving[c] * momentum_ + value[c] * (1.0 - momentum_));
    }
  }

 private:
  std::int64_t channels_;
  double momentum_;
};

}  // namespace

std::unique_ptr<Kernel> make_ref_batch_norm_train(const KernelDesc& desc, std::string* why_not) {
  BatchNormParams p;
  if (!check_batch_norm(desc, &p, why_not)) return nullptr;
  return std::make_unique<RefBatchNormTrain>(p);
}

std::unique_ptr<Kernel> make_ref_batch_norm_grad(const KernelDesc& desc, std::string* why_not) {
  BatchNormParams p;
  if (!check_batch_norm(desc, &p, why_not)) return nullptr;
  return std::make_unique<RefBatchNormGrad>(p);
}

std::unique_ptr<Kernel> make_ref_batch_norm_infer(const KernelDesc& desc, std::string* why_not) {
  BatchNormParams p;
  if (!check_batch_norm(desc, &p, why_not)) return nullptr;
  return std::make_unique<RefBatchNormInfer>(p);
}

std::unique_ptr<Kernel> make_ref_batch_norm_infer_grad(const KernelDesc& desc, std::string* why_not) {
  BatchNormParams p;
  if (!check_batch_norm(desc, &p, why_not)) return nullptr;
  return std::make_unique<RefBatchNormInferGrad>(p);
}

std::unique_ptr<Kernel> make_ref_moving_average_update(const KernelDesc& desc,
                                                       std::string* why_not) {
  std::int64_t channels = 0;
  double momentum = 0.0;
  if (!check_moving_average_update(desc, &channels, &momentum, why_not)) return nullptr;
  return std::make_unique<RefMovingAverageUpdate>(channels, momentum);
}

}  // namespace nnfit
