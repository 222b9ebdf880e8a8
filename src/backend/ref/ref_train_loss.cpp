// Reference kernels of loss and loss_grad for the four fused kinds, from logits or
// probabilities (label smoothing applied to the targets as Keras does): the formulas of
// docs/design/ops.md written out per sample in double, so each line can be checked
// against Keras by eye. Gradients of the probability forms are those of the clipped
// expression (zero where the clip is active). The row losses are ref_train_loss_rows.cpp's.
// With sample weights each sample's loss (and gradient) is multiplied by its weight; the
// sum is still divided by the batch, Keras's sum_over_batch_size.
#include <cmath>
#include <algorithm>
#include <vector>

#include "backend/common/train_op_checks.h"
#include "backend/ref/ref_train_kernels.h"

namespace nnfit {

namespace {

// log Σ exp(z_c) over one row, shifted by the max for stability.
double log_sum_exp(const float* z, std::int64_t n) {
  double m = z[0];
  for (std::int64_t c = 1; c < n; ++c) m = std::max(m, static_cast<double>(z[c]));
  double s = 0.0;
  for (std::int64_t c = 0; c < n; ++c) s += std::exp(z[c] - m);
  return m + std::log(s);
}

double clipped_log(float p) { return std::log(static_cast<double>(clip_probability(p))); }

class RefLoss final : public Kernel {
 public:
  RefLoss(const KernelDesc& desc, LossParams p) : desc_(desc), p_(p) {}
  void run(const KernelArgs& args) override {
    const float* pred = static_cast<const float*>(args.inputs[0]);
    const float* weights = p_.weighted ? static_cast<const float*>(args.inputs[2]) : nullptr;
    if (is_row_loss(p_.kind)) {
      *static_cast<float*>(args.outputs[0]) =
          static_cast<float>(ref_row_loss(p_, pred, static_cast<const float*>(args.inputs[1]), weights, scratch_));
      return;
    }
    const std::int64_t n = p_.batch, d = p_.per_sample;
    double total = 0.0;
    for (std::int64_t i = 0; i < n; ++i) {
      const float* z = pred + i * d;
      double sample = 0.0;
      switch (p_.kind) {
        case LossKind::sparse_categorical_crossentropy: {
          const std::int32_t* labels = static_cast<const std::int32_t*>(args.inputs[1]);
          if (i == 0) check_sparse_labels(desc_, labels, n, d);
          std::int32_t y = labels[i];
          sample = p_.from_logits ? log_sum_exp(z, d) - z[y] : -clipped_log(z[y]);
          break;
        }
        case LossKind::categorical_crossentropy: {
          const float* t = static_cast<const float*>(args.inputs[1]) + i * d;
          double lse = p_.from_logits ? log_sum_exp(z, d) : 0.0;
          for (std::int64_t c = 0; c < d; ++c) {
            sample -= smoothed(t[c], d) * (p_.from_logits ? z[c] - lse : clipped_log(z[c]));
          }
          break;
        }
        case LossKind::binary_crossentropy: {
          const float* t = static_cast<const float*>(args.inputs[1]) + i * d;
          for (std::int64_t j = 0; j < d; ++j) {
            double zj = z[j], tj = smoothed(t[j], 2);
            if (p_.from_logits) {
              sample += std::max(zj, 0.0) - zj * tj + std::log1p(std::exp(-std::fabs(zj)));
            } else {
              double pc = clip_probability(z[j]);
              sample -= tj * std::log(pc) + (1.0 - tj) * std::log(1.0 - pc);
            }
          }
          sample /= static_cast<double>(d);
          break;
        }
        case LossKind::mean_squared_error: {
          const float* t = static_cast<const float*>(args.inputs[1]) + i * d;
          for (std::int64_t j = 0; j < d; ++j) {
            double e = static_cast<double>(z[j]) - t[j];
            sample += e * e;
          }
          sample /= static_cast<double>(d);
          break;
        }
        default: break;
      }
      total += weights ? weights[i] * sample : sample;
    }
    *static_cast<float*>(args.outputs[0]) = static_cast<float>(total / static_cast<double>(n));
  }

 private:
  // Keras's label smoothing over `classes` (2 for the binary crossentropy's 0.5 shift).
  double smoothed(float t, std::int64_t classes) const {
    return t * (1.0 - p_.label_smoothing) + p_.label_smoothing / static_cast<double>(classes);
  }

  KernelDesc desc_;  // for the bad-label message
  LossParams p_;
  std::vector<double> scratch_;  // the row losses' (sized on the first run)
};

class RefLossGrad final : public Kernel {
 public:
  RefLossGrad(const KernelDesc& desc, LossParams p) : desc_(desc), p_(p) {}
  void run(const KernelArgs& args) override {
    const float* pred = static_cast<const float*>(args.inputs[0]);
    const double dloss = *static_cast<const float*>(args.inputs[2]);
    const float* weights = p_.weighted ? static_cast<const float*>(args.inputs[3]) : nullptr;
    float* dpred = static_cast<float*>(args.outputs[0]);
    if (is_row_loss(p_.kind)) {
      ref_row_loss_grad(p_, pred, static_cast<const float*>(args.inputs[1]), weights, dloss, dpred, scratch_);
      return;
    }
    const std::int64_t n = p_.batch, d = p_.per_sample;
    // The categorical kinds average over samples; the elementwise kinds over every element.
    const bool categorical = p_.kind == LossKind::sparse_categorical_crossentropy ||
                             p_.kind == LossKind::categorical_crossentropy;
    const double unweighted = dloss / static_cast<double>(categorical ? n : n * d);
    if (p_.kind == LossKind::sparse_categorical_crossentropy) {
      check_sparse_labels(desc_, static_cast<const std::int32_t*>(args.inputs[1]), n, d);
    }
    for (std::int64_t i = 0; i < n; ++i) {
      const double scale = weights ? unweighted * weights[i] : unweighted;
      const float* z = pred + i * d;
      float* dz = dpred + i * d;
      switch (p_.kind) {
        case LossKind::sparse_categorical_crossentropy: {
          std::int32_t y = static_cast<const std::int32_t*>(args.inputs[1])[i];
          double lse = p_.from_logits ? log_sum_exp(z, d) : 0.0;
          for (std::int64_t c = 0; c < d; ++c) {
            double g = 0.0;
            if (p_.from_logits) g = std::exp(z[c] - lse) - (c == y ? 1.0 : 0.0);
            else if (c == y && !probability_clipped(z[c])) g = -1.0 / z[c];
            dz[c] = static_cast<float>(scale * g);
          }
          break;
        }
        case LossKind::categorical_crossentropy: {
          const float* t = static_cast<const float*>(args.inputs[1]) + i * d;
          double lse = p_.from_logits ? log_sum_exp(z, d) : 0.0;
          double t_sum = 0.0;
          for (std::int64_t c = 0; c < d; ++c) t_sum += smoothed(t[c], d);
          for (std::int64_t c = 0; c < d; ++c) {
            double g = 0.0;
            if (p_.from_logits) g = std::exp(z[c] - lse) * t_sum - smoothed(t[c], d);
            else if (!probability_clipped(z[c])) g = -smoothed(t[c], d) / z[c];
            dz[c] = static_cast<float>(scale * g);
          }
          break;
        }
        case LossKind::binary_crossentropy: {
          const float* t = static_cast<const float*>(args.inputs[1]) + i * d;
          for (std::int64_t j = 0; j < d; ++j) {
            double zj = z[j], tj = smoothed(t[j], 2), g = 0.0;
            if (p_.from_logits) g = 1.0 / (1.0 + std::exp(-zj)) - tj;
            else if (!probability_clipped(z[j])) g = -tj / zj + (1.0 - tj) / (1.0 - zj);
            dz[j] = static_cast<float>(scale * g);
          }
          break;
        }
        case LossKind::mean_squared_error: {
          const float* t = static_cast<const float*>(args.inputs[1]) + i * d;
          for (std::int64_t j = 0; j < d; ++j) {
            dz[j] = static_cast<float>(scale * 2.0 * (static_cast<double>(z[j]) - t[j]));
          }
          break;
        }
        default: break;
      }
    }
  }

 private:
  double smoothed(float t, std::int64_t classes) const {
    return t * (1.0 - p_.label_smoothing) + p_.label_smoothing / static_cast<double>(classes);
  }

  KernelDesc desc_;
  LossParams p_;
  std::vector<double> scratch_;  // the row losses' (sized on the first run)
};

}  // namespace

std::unique_ptr<Kernel> make_ref_loss(const KernelDesc& desc, std::string* why_not) {
  LossParams p;
  if (!check_loss(desc, &p, why_not)) return nullptr;
  return std::make_unique<RefLoss>(desc, p);
}

std::unique_ptr<Kernel> make_ref_loss_grad(const KernelDesc& desc, std::string* why_not) {
  LossParams p;
  if (!check_loss(desc, &p, why_not)) return nullptr;
  return std::make_unique<RefLossGrad>(desc, p);
}

}  // namespace nnfit
