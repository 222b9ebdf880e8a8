// OpenMP kernels of loss and loss_grad (all four kinds, from logits or probabilities).
// The categorical kinds run one row per iteration (max, Σexp with SIMD reductions); the
// elementwise kinds run one flat loop over every element, since their per-sample mean
// times the batch mean is the mean over all elements. Sums of the scalar loss are in
// double; sparse labels are validated serially first because an exception may not
// escape an OpenMP region.
#include <omp.h>

#include <algorithm>
#include <cmath>

#include "backend/common/train_op_checks.h"
#include "backend/cpu/omp_kernels.h"

namespace nnfit {

namespace {

float row_max(const float* z, std::int64_t n) {
  float m = z[0];
#pragma omp simd reduction(max : m)
  for (std::int64_t c = 1; c < n; ++c) m = std::max(m, z[c]);
  return m;
}

float row_log_sum_exp(const float* z, std::int64_t n) {
  const float m = row_max(z, n);
  float s = 0.0f;
#pragma omp simd reduction(+ : s)
  for (std::int64_t c = 0; c < n; ++c) s += std::exp(z[c] - m);
  return m + std::log(s);
}

bool is_categorical(LossKind kind) {
  return kind == LossKind::sparse_categorical_crossentropy ||
         kind == LossKind::categorical_crossentropy;
}

class OmpLoss final : public Kernel {
 public:
  OmpLoss(const KernelDesc& desc, LossParams p) : desc_(desc), p_(p) {}
  void run(const KernelArgs& args) override {
    const float* pred = static_cast<const float*>(args.inputs[0]);
    const std::int64_t n = p_.batch, d = p_.per_sample;
    const bool parallel = n * d >= kOmpMinParallelElements;
    const bool logits = p_.from_logits;
    double total = 0.0;
    switch (p_.kind) {
      case LossKind::sparse_categorical_crossentropy: {
        const std::int32_t* labels = static_cast<const std::int32_t*>(args.inputs[1]);
        check_sparse_labels(desc_, labels, n, d);
#pragma omp parallel for schedule(static) reduction(+ : total) if (parallel)
        for (std::int64_t i = 0; i < n; ++i) {
          const float* z = pred + i * d;
          const float zy = z[labels[i]];
          total += logits ? row_log_sum_exp(z, d) - zy : -std::log(clip_probability(zy));
        }
        break;
      }
      case LossKind::categorical_crossentropy: {
        const float* target = static_cast<const float*>(args.inputs[1]);
#pragma omp parallel for schedule(static) reduction(+ : total) if (parallel)
        for (std::int64_t i = 0; i < n; ++i) {
          const float* z = pred + i * d;
          const float* t = target + i * d;
          float s = 0.0f;
          if (logits) {
            const float lse = row_log_sum_exp(z, d);
#pragma omp simd reduction(+ : s)
            for (std::int64_t c = 0; c < d; ++c) s += t[c] * (z[c] - lse);
          } else {
#pragma omp simd reduction(+ : s)
            for (std::int64_t c = 0; c < d; ++c) s += t[c] * std::log(clip_probability(z[c]));
          }
          total -= s;
        }
        break;
      }
      case LossKind::binary_crossentropy: {
        const float* t = static_cast<const float*>(args.inputs[1]);
        const std::int64_t count = n * d;
#pragma omp parallel for simd schedule(static) reduction(+ : total) if (parallel)
        for (std::int64_t i = 0; i < count; ++i) {
          const float z = pred[i];
          float l;
          if (logits) {
            l = std::max(z, 0.0f) - z * t[i] + std::log1p(std::exp(-std::fabs(z)));
          } else {
            const float pc = clip_probability(z);
            l = -(t[i] * std::log(pc) + (1.0f - t[i]) * std::log(1.0f - pc));
          }
          total += l;
        }
        total /= static_cast<double>(d);
        break;
      }
      case LossKind::mean_squared_error: {
        const float* t = static_cast<const float*>(args.inputs[1]);
        const std::int64_t count = n * d;
#pragma omp parallel for simd schedule(static) reduction(+ : total) if (parallel)
        for (std::int64_t i = 0; i < count; ++i) {
          const float e = pred[i] - t[i];
          total += e * e;
        }
        total /= static_cast<double>(d);
        break;
      }
      default: break;  // row losses: declined by fused()
    }
    *static_cast<float*>(args.outputs[0]) = static_cast<float>(total / static_cast<double>(n));
  }

 private:
  KernelDesc desc_;  // for the bad-label message
  LossParams p_;
};

class OmpLossGrad final : public Kernel {
 public:
  OmpLossGrad(const KernelDesc& desc, LossParams p) : desc_(desc), p_(p) {}
  void run(const KernelArgs& args) override {
    const float* pred = static_cast<const float*>(args.inputs[0]);
    const float dloss = *static_cast<const float*>(args.inputs[2]);
    float* dpred = static_cast<float*>(args.outputs[0]);
    const std::int64_t n = p_.batch, d = p_.per_sample;
    const bool parallel = n * d >= kOmpMinParallelElements;
    const bool logits = p_.from_logits;
    const float scale = static_cast<float>(
        static_cast<double>(dloss) / static_cast<double>(is_categorical(p_.kind) ? n : n * d));
    switch (p_.kind) {
      case LossKind::sparse_categorical_crossentropy: {
        const std::int32_t* labels = static_cast<const std::int32_t*>(args.inputs[1]);
        check_sparse_labels(desc_, labels, n, d);
#pragma omp parallel for schedule(static) if (parallel)
        for (std::int64_t i = 0; i < n; ++i) {
          const float* z = pred + i * d;
          float* dz = dpred + i * d;
          const std::int32_t y = labels[i];
          if (logits) {
            softmax_row(z, dz, d, scale);
            dz[y] -= scale;
          } else {
            std::fill(dz, dz + d, 0.0f);
            if (!probability_clipped(z[y])) dz[y] = -scale / z[y];
          }
        }
        break;
      }
      case LossKind::categorical_crossentropy: {
        const float* target = static_cast<const float*>(args.inputs[1]);
#pragma omp parallel for schedule(static) if (parallel)
        for (std::int64_t i = 0; i < n; ++i) {
          const float* z = pred + i * d;
          const float* t = target + i * d;
          float* dz = dpred + i * d;
          if (logits) {
            float t_sum = 0.0f;
#pragma omp simd reduction(+ : t_sum)
            for (std::int64_t c = 0; c < d; ++c) t_sum += t[c];
            softmax_row(z, dz, d, scale * t_sum);
#pragma omp simd
            for (std::int64_t c = 0; c < d; ++c) dz[c] -= scale * t[c];
          } else {
#pragma omp simd
            for (std::int64_t c = 0; c < d; ++c) {
              dz[c] = probability_clipped(z[c]) ? 0.0f : -scale * t[c] / z[c];
            }
          }
        }
        break;
      }
      case LossKind::binary_crossentropy: {
        const float* t = static_cast<const float*>(args.inputs[1]);
        const std::int64_t count = n * d;
#pragma omp parallel for simd schedule(static) if (parallel)
        for (std::int64_t i = 0; i < count; ++i) {
          const float z = pred[i];
          float g;
          if (logits) g = 1.0f / (1.0f + std::exp(-z)) - t[i];
          else g = probability_clipped(z) ? 0.0f : -t[i] / z + (1.0f - t[i]) / (1.0f - z);
          dpred[i] = scale * g;
        }
        break;
      }
      case LossKind::mean_squared_error: {
        const float* t = static_cast<const float*>(args.inputs[1]);
        const std::int64_t count = n * d;
        const float two_scale = 2.0f * scale;
#pragma omp parallel for simd schedule(static) if (parallel)
        for (std::int64_t i = 0; i < count; ++i) dpred[i] = two_scale * (pred[i] - t[i]);
        break;
      }
      default: break;  // row losses: declined by fused()
    }
  }

 private:
  // dz = scale·softmax(z), using dz for the exponentials first.
  static void softmax_row(const float* z, float* dz, std::int64_t d, float scale) {
    const float m = row_max(z, d);
    float s = 0.0f;
#pragma omp simd reduction(+ : s)
    for (std::int64_t c = 0; c < d; ++c) {
      dz[c] = std::exp(z[c] - m);
      s += dz[c];
    }
    const float k = scale / s;
#pragma omp simd
    for (std::int64_t c = 0; c < d; ++c) dz[c] *= k;
  }

  KernelDesc desc_;
  LossParams p_;
};

}  // namespace

// The fused kinds without label smoothing or sample weights; the row losses, smoothed
// targets and weighted samples are the reference kernel's (a loss is a small part of a step).
static bool fused(const KernelDesc& desc, LossParams* p, std::string* why_not) {
  if (!check_loss(desc, p, why_not)) return false;
  if (is_row_loss(p->kind) || p->label_smoothing != 0.0 || p->weighted) {
    if (why_not) {
      *why_not = "loss kind '" + desc.attrs.s("kind") + "' (or label smoothing, or sample weights) runs on the reference kernel";
    }
    return false;
  }
  return true;
}

std::unique_ptr<Kernel> make_omp_loss(const KernelDesc& desc, std::string* why_not) {
  LossParams p;
  if (!fused(desc, &p, why_not)) return nullptr;
  return std::make_unique<OmpLoss>(desc, p);
}

std::unique_ptr<Kernel> make_omp_loss_grad(const KernelDesc& desc, std::string* why_not) {
  LossParams p;
  if (!fused(desc, &p, why_not)) return nullptr;
  return std::make_unique<OmpLossGrad>(desc, p);
}

}  // namespace nnfit
