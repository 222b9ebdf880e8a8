// Reference kernels of Keras's row losses (LossKind past the four fused kinds): each row of
// the last axis gives one value by Keras 3's formula (keras/src/losses/losses.py), written
// out in double; the loss is their mean over rows (Keras's sum_over_batch_size) and the
// gradient that of the expression as written (zero where a clip or max is inactive, the
// first maximum taking a max's gradient). epsilon is Keras's backend.epsilon(), 1e-7.
#include <algorithm>
#include <cmath>
#include <vector>

#include "backend/common/train_op_checks.h"
#include "backend/ref/ref_train_kernels.h"

namespace nnfit {

namespace {

constexpr double kEps = 1e-7;

double sign(double x) { return x > 0 ? 1.0 : (x < 0 ? -1.0 : 0.0); }
double softplus(double x) { return std::max(x, 0.0) + std::log1p(std::exp(-std::fabs(x))); }
double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// Hinge losses take -1/1 targets; Keras converts 0/1 ones when every target of the batch
// is 0 or 1.
bool binary_targets(const float* t, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) {
    if (t[i] != 0.0f && t[i] != 1.0f) return false;
  }
  return true;
}

// One row's loss and, with g, its gradient (dL/dp of this row, unscaled) into g. `scratch`
// holds 5 * d doubles, so a step allocates nothing.
class Row {
 public:
  Row(const LossParams& p, bool hinge_binary, double* scratch) : p_(p), hinge_binary_(hinge_binary), scratch_(scratch) {}

  double operator()(const float* z, const float* tr, std::int64_t d, double* g) const {
    double* t = scratch_;
    for (std::int64_t j = 0; j < d; ++j) t[j] = hinge_binary_ ? 2.0 * tr[j] - 1.0 : tr[j];
    switch (p_.kind) {
      case LossKind::mean_absolute_error: return mean(d, g, [&](std::int64_t j, double* dj) {
        const double e = z[j] - t[j];
        *dj = sign(e);
        return std::fabs(e);
      });
      case LossKind::mean_absolute_percentage_error: return mean(d, g, [&](std::int64_t j, double* dj) {
        const double den = std::max(std::fabs(t[j]), kEps), e = t[j] - z[j];
        *dj = -100.0 * sign(e) / den;
        return 100.0 * std::fabs(e) / den;
      });
      case LossKind::mean_squared_logarithmic_error: return mean(d, g, [&](std::int64_t j, double* dj) {
        const double pz = std::max(static_cast<double>(z[j]), kEps);
        const double e = std::log(pz + 1.0) - std::log(std::max(t[j], kEps) + 1.0);
        *dj = z[j] > kEps ? 2.0 * e / (pz + 1.0) : 0.0;
        return e * e;
      });
      case LossKind::huber: return mean(d, g, [&](std::int64_t j, double* dj) {
        const double e = z[j] - t[j], a = std::fabs(e), delta = p_.delta;
        *dj = a <= delta ? e : delta * sign(e);
        return a <= delta ? 0.5 * e * e : delta * a - 0.5 * delta * delta;
      });
      case LossKind::log_cosh: return mean(d, g, [&](std::int64_t j, double* dj) {
        const double x = z[j] - t[j];
        *dj = std::tanh(x);
        return x + softplus(-2.0 * x) - std::log(2.0);
      });
      case LossKind::poisson: return mean(d, g, [&](std::int64_t j, double* dj) {
        *dj = 1.0 - t[j] / (z[j] + kEps);
        return z[j] - t[j] * std::log(z[j] + kEps);
      });
      case LossKind::hinge: return mean(d, g, [&](std::int64_t j, double* dj) {
        const double m = 1.0 - t[j] * z[j];
        *dj = m > 0 ? -t[j] : 0.0;
        return std::max(m, 0.0);
      });
      case LossKind::squared_hinge: return mean(d, g, [&](std::int64_t j, double* dj) {
        const double m = std::max(1.0 - t[j] * z[j], 0.0);
        *dj = -2.0 * m * t[j];
        return m * m;
      });
      case LossKind::kl_divergence: {
        double sum = 0.0;
        for (std::int64_t j = 0; j < d; ++j) {
          const double tc = std::clamp(t[j], kEps, 1.0), pc = std::clamp(static_cast<double>(z[j]), kEps, 1.0);
          sum += tc * std::log(tc / pc);
          if (g) g[j] = z[j] > kEps && z[j] < 1.0 ? -tc / pc : 0.0;
        }
        return sum;
      }
      case LossKind::categorical_hinge: {
        double pos = 0.0, neg = -INFINITY;
        std::int64_t arg = 0;
        for (std::int64_t j = 0; j < d; ++j) {
          pos += t[j] * z[j];
          if ((1.0 - t[j]) * z[j] > neg) {
            neg = (1.0 - t[j]) * z[j];
            arg = j;
          }
        }
        const double v = neg - pos + 1.0;
        for (std::int64_t j = 0; g && j < d; ++j) g[j] = v > 0 ? (j == arg ? 1.0 - t[j] : 0.0) - t[j] : 0.0;
        return std::max(v, 0.0);
      }
      case LossKind::cosine_similarity: {
        double tt = 0.0, pp = 0.0, tp = 0.0;
        for (std::int64_t j = 0; j < d; ++j) {
          tt += t[j] * t[j];
          pp += static_cast<double>(z[j]) * z[j];
          tp += t[j] * z[j];
        }
        const double nt = std::sqrt(std::max(tt, 1e-12)), np = std::sqrt(std::max(pp, 1e-12));
        const double cos = tp / (nt * np);
        for (std::int64_t j = 0; g && j < d; ++j) {
          // d(-t̂·p̂)/dp = -(t̂ - p̂ (t̂·p̂)) / |p| while |p|² is above the floor, -t̂ / |p| on it.
          g[j] = pp > 1e-12 ? -(t[j] / nt - z[j] / np * cos) / np : -t[j] / nt / np;
        }
        return -cos;
      }
      case LossKind::binary_focal_crossentropy: return mean(d, g, [&](std::int64_t j, double* dj) {
        return binary_focal(z[j], t[j] * (1.0 - p_.label_smoothing) + 0.5 * p_.label_smoothing, dj);
      });
      case LossKind::categorical_focal_crossentropy: return categorical_focal(z, t, d, g);
      default: return 0.0;
    }
  }

 private:
  // mean over the row of f(j, &dj), with g[j] = dj / d.
  template <typename F>
  static double mean(std::int64_t d, double* g, F f) {
    double sum = 0.0;
    for (std::int64_t j = 0; j < d; ++j) {
      double dj = 0.0;
      sum += f(j, &dj);
      if (g) g[j] = dj / static_cast<double>(d);
    }
    return sum / static_cast<double>(d);
  }

  // Keras's binary focal crossentropy of one element: w · (1 − p_t)^γ · bce.
  double binary_focal(double z, double t, double* dz) const {
    double p = 0.0, bce = 0.0, dbce = 0.0, dp_dz = 1.0;
    if (p_.from_logits) {
      // TensorFlow computes the crossentropy from the logits behind the sigmoid.
      p = sigmoid(z);
      bce = std::max(z, 0.0) - z * t + std::log1p(std::exp(-std::fabs(z)));
      dbce = p - t;  // per logit
      dp_dz = p * (1.0 - p);
    } else {
      p = z;
      const double pc = std::clamp(p, kEps, 1.0 - kEps);
      bce = -(t * std::log(pc) + (1.0 - t) * std::log(1.0 - pc));
      dbce = p > kEps && p < 1.0 - kEps ? -t / p + (1.0 - t) / (1.0 - p) : 0.0;
    }
    const double pt = t * p + (1.0 - t) * (1.0 - p), gamma = p_.gamma;
    const double factor = std::pow(1.0 - pt, gamma);
    const double dfactor = gamma == 0.0 ? 0.0 : -gamma * std::pow(1.0 - pt, gamma - 1.0) * (2.0 * t - 1.0);  // per p
    const double w = p_.class_balancing ? t * p_.alpha + (1.0 - t) * (1.0 - p_.alpha) : 1.0;
    *dz = w * (dfactor * dp_dz * bce + factor * dbce);
    return w * factor * bce;
  }

  // Keras's categorical focal crossentropy of one row: Σ_c α (1 − o_c)^γ (−t_c log o_c), o the
  // renormalized (and clipped) probabilities.
  double categorical_focal(const float* z, double* t, std::int64_t d, double* g) const {
    double* p = scratch_ + d;
    double* go = scratch_ + 2 * d;  // dL/do
    double* gp = scratch_ + 3 * d;  // dL/dp
    for (std::int64_t c = 0; c < d; ++c) t[c] = t[c] * (1.0 - p_.label_smoothing) + p_.label_smoothing / static_cast<double>(d);
    if (p_.from_logits) {
      double m = z[0], s = 0.0;
      for (std::int64_t c = 1; c < d; ++c) m = std::max(m, static_cast<double>(z[c]));
      for (std::int64_t c = 0; c < d; ++c) s += (p[c] = std::exp(z[c] - m));
      for (std::int64_t c = 0; c < d; ++c) p[c] /= s;
    } else {
      for (std::int64_t c = 0; c < d; ++c) p[c] = z[c];
    }
    double sum_p = 0.0;
    for (std::int64_t c = 0; c < d; ++c) sum_p += p[c];
    double loss = 0.0, go_dot = 0.0;
    for (std::int64_t c = 0; c < d; ++c) {
      const double o = p[c] / sum_p, oc = std::clamp(o, kEps, 1.0 - kEps);
      const double m = std::pow(1.0 - oc, p_.gamma);
      loss += p_.alpha * m * (-t[c] * std::log(oc));
      const double dm = p_.gamma == 0.0 ? 0.0 : -p_.gamma * std::pow(1.0 - oc, p_.gamma - 1.0);
      go[c] = o > kEps && o < 1.0 - kEps ? p_.alpha * (dm * (-t[c] * std::log(oc)) - m * t[c] / oc) : 0.0;
      go_dot += go[c] * o;
    }
    if (g) {
      // o = p / Σp: dL/dp_k = (go_k − Σ_c go_c o_c) / Σp; through the softmax from logits.
      double gp_dot = 0.0;
      for (std::int64_t c = 0; c < d; ++c) {
        gp[c] = (go[c] - go_dot) / sum_p;
        gp_dot += gp[c] * p[c];
      }
      for (std::int64_t c = 0; c < d; ++c) g[c] = p_.from_logits ? p[c] * (gp[c] - gp_dot) : gp[c];
    }
    return loss;
  }

  const LossParams& p_;
  bool hinge_binary_;
  double* scratch_;
};

bool converts_hinge_targets(const LossParams& p, const float* target) {
  return (p.kind == LossKind::hinge || p.kind == LossKind::squared_hinge) && binary_targets(target, p.rows * p.cols);
}

}  // namespace

namespace {

// Row r's sample weight (a sample has rows / batch rows), 1 without weights.
double row_weight(const LossParams& p, const float* weights, std::int64_t r) {
  return weights ? weights[r / std::max<std::int64_t>(p.rows / p.batch, 1)] : 1.0;
}

}  // namespace

double ref_row_loss(const LossParams& p, const float* pred, const float* target, const float* weights,
                    std::vector<double>& scratch) {
  scratch.resize(static_cast<std::size_t>(5 * p.cols));  // sized once: the kernel keeps it
  const Row row(p, converts_hinge_targets(p, target), scratch.data());
  double total = 0.0;
  for (std::int64_t r = 0; r < p.rows; ++r) {
    total += row_weight(p, weights, r) * row(pred + r * p.cols, target + r * p.cols, p.cols, nullptr);
  }
  return total / static_cast<double>(p.rows);
}

void ref_row_loss_grad(const LossParams& p, const float* pred, const float* target, const float* weights, double dloss,
                       float* dpred, std::vector<double>& scratch) {
  scratch.resize(static_cast<std::size_t>(6 * p.cols));  // sized once: the kernel keeps it
  const Row row(p, converts_hinge_targets(p, target), scratch.data());
  double* g = scratch.data() + 5 * p.cols;
  const double unweighted = dloss / static_cast<double>(p.rows);
  for (std::int64_t r = 0; r < p.rows; ++r) {
    row(pred + r * p.cols, target + r * p.cols, p.cols, g);
    const double scale = unweighted * row_weight(p, weights, r);
    for (std::int64_t c = 0; c < p.cols; ++c) dpred[r * p.cols + c] = static_cast<float>(scale * g[c]);
  }
}

}  // namespace nnfit
