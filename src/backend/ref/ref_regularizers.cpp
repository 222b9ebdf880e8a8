// Reference kernels of the regularizer and constraint ops (graph/regularizer_op_defs.cpp),
// in double, with Keras 3's formulas (epsilon 1e-7, Keras's backend epsilon):
//   weight_penalty l1l2: l1·Σ|x| + l2·Σx²; its gradient dloss·(l1·sign(x) + 2·l2·x)
//   weight_penalty orthogonal: n_i = v_i·min(1/‖v_i‖, 1/ε) over the rows v_i of x (or its
//     columns), p_ij = n_i·n_j, penalty = factor·0.5·Σ_{i≠j}|p_ij| / (s·(s−1)/2); gradient
//     through the normalization (the clamped branch passes dn·(1/ε) through)
//   apply_constraint: norms over `axes`; MaxNorm w·clip(‖w‖, 0, max)/(ε + ‖w‖), MinMaxNorm
//     w·(rate·clip(‖w‖, min, max) + (1 − rate)·‖w‖)/(ε + ‖w‖), UnitNorm w/(ε + ‖w‖),
//     NonNeg max(w, 0).
#include <algorithm>
#include <cmath>
#include <vector>

#include "backend/ref/ref_train_kernels.h"
#include "nnfit/core/error.h"

namespace nnfit {

namespace {

constexpr double kEpsilon = 1e-7;

double sign(double v) { return v > 0 ? 1.0 : (v < 0 ? -1.0 : 0.0); }

class RefWeightPenalty final : public Kernel {
 public:
  RefWeightPenalty(const KernelDesc& d) : grad_(d.op == "weight_penalty_grad"), shape_(d.inputs.at(0).shape) {
    orthogonal_ = d.attrs.s("kind") == "orthogonal";
    if (orthogonal_) {
      factor_ = d.attrs.f("factor");
      rows_ = d.attrs.s("mode") == "rows";
    } else {
      l1_ = d.attrs.f("l1");
      l2_ = d.attrs.f("l2");
    }
  }

  void run(const KernelArgs& args) override {
    const auto* x = static_cast<const float*>(args.inputs[0]);
    const std::int64_t n = shape_.numel();
    const double dloss = grad_ ? *static_cast<const float*>(args.inputs[1]) : 0.0;
    auto* out = static_cast<float*>(args.outputs[0]);
    if (orthogonal_) return orthogonal(x, dloss, out);
    if (!grad_) {
      double sum = 0.0;
      for (std::int64_t i = 0; i < n; ++i) sum += l1_ * std::abs(static_cast<double>(x[i])) + l2_ * x[i] * static_cast<double>(x[i]);
      *out = static_cast<float>(sum);
      return;
    }
    for (std::int64_t i = 0; i < n; ++i) out[i] = static_cast<float>(dloss * (l1_ * sign(x[i]) + 2.0 * l2_ * x[i]));
  }

 private:
  // Vector i of the orthogonal penalty, element k: x[i][k] for rows, x[k][i] for columns.
  std::int64_t at(std::int64_t i, std::int64_t k) const { return rows_ ? i * shape_[1] + k : k * shape_[1] + i; }

  void orthogonal(const float* x, double dloss, float* out) {
    const std::int64_t s = shape_[rows_ ? 0 : 1], len = shape_[rows_ ? 1 : 0];
    std::vector<double>& nrm = nrm_;
    std::vector<double>& inv = inv_;
    std::vector<bool>& clamped = clamped_;
    nrm.resize(static_cast<std::size_t>(s * len));
    inv.resize(static_cast<std::size_t>(s));
    clamped.resize(static_cast<std::size_t>(s));
    for (std::int64_t i = 0; i < s; ++i) {
      double sq = 0.0;
      for (std::int64_t k = 0; k < len; ++k) sq += static_cast<double>(x[at(i, k)]) * x[at(i, k)];
      const double r = sq > 0 ? 1.0 / std::sqrt(sq) : INFINITY;
      clamped[static_cast<std::size_t>(i)] = r >= 1.0 / kEpsilon;
      inv[static_cast<std::size_t>(i)] = std::min(r, 1.0 / kEpsilon);
      for (std::int64_t k = 0; k < len; ++k) nrm[static_cast<std::size_t>(i * len + k)] = x[at(i, k)] * inv[static_cast<std::size_t>(i)];
    }
    auto dot = [&](std::int64_t i, std::int64_t j) {
      double d = 0.0;
      for (std::int64_t k = 0; k < len; ++k) d += nrm[static_cast<std::size_t>(i * len + k)] * nrm[static_cast<std::size_t>(j * len + k)];
      return d;
    };
    const double coef = factor_ * 0.5 / (static_cast<double>(s) * (static_cast<double>(s) - 1.0) / 2.0);
    if (!grad_) {
      double sum = 0.0;
      for (std::int64_t i = 0; i < s; ++i) {
        for (std::int64_t j = 0; j < s; ++j) sum += i == j ? 0.0 : std::abs(dot(i, j));
      }
      *out = static_cast<float>(coef * sum);
      return;
    }
    std::vector<double>& dn = dn_;
    dn.resize(static_cast<std::size_t>(len));
    for (std::int64_t i = 0; i < s; ++i) {
      std::fill(dn.begin(), dn.end(), 0.0);
      for (std::int64_t j = 0; j < s; ++j) {
        if (j == i) continue;
        const double g = 2.0 * coef * sign(dot(i, j));  // |p_ij| and |p_ji| both hold n_i
        for (std::int64_t k = 0; k < len; ++k) dn[static_cast<std::size_t>(k)] += g * nrm[static_cast<std::size_t>(j * len + k)];
      }
      double ndn = 0.0;
      for (std::int64_t k = 0; k < len; ++k) ndn += nrm[static_cast<std::size_t>(i * len + k)] * dn[static_cast<std::size_t>(k)];
      const double r = inv[static_cast<std::size_t>(i)];
      for (std::int64_t k = 0; k < len; ++k) {
        const double dv = clamped[static_cast<std::size_t>(i)]
                              ? dn[static_cast<std::size_t>(k)] * r
                              : r * (dn[static_cast<std::size_t>(k)] - nrm[static_cast<std::size_t>(i * len + k)] * ndn);
        out[at(i, k)] = static_cast<float>(dloss * dv);
      }
    }
  }

  bool grad_;
  Shape shape_;
  bool orthogonal_ = false, rows_ = true;
  double l1_ = 0.0, l2_ = 0.0, factor_ = 0.0;
  std::vector<double> nrm_, inv_, dn_;  // scratch, sized on the first run
  std::vector<bool> clamped_;
};

class RefApplyConstraint final : public Kernel {
 public:
  explicit RefApplyConstraint(const KernelDesc& d)
      : kind_(d.attrs.s("kind")), shape_(d.inputs.at(0).shape), max_(d.attrs.f("max_value")),
        min_(d.attrs.f("min_value")), rate_(d.attrs.f("rate")) {
    const std::int64_t rank = shape_.rank();
    reduced_.assign(static_cast<std::size_t>(rank), false);
    if (kind_ != "NonNeg") {
      for (std::int64_t a : d.attrs.ints("axes")) reduced_[static_cast<std::size_t>(a < 0 ? a + rank : a)] = true;
    }
    // Each element's group: its coordinates on the axes not reduced over.
    const std::int64_t n = shape_.numel();
    group_.resize(kind_ == "NonNeg" ? 0 : static_cast<std::size_t>(n));
    std::int64_t groups = 1;
    for (std::int64_t d = 0; d < rank; ++d) groups *= reduced_[static_cast<std::size_t>(d)] ? 1 : shape_[d];
    for (std::size_t i = 0; i < group_.size(); ++i) {
      std::int64_t rest = static_cast<std::int64_t>(i), g = 0, stride = 1;
      for (std::int64_t d = rank - 1; d >= 0; --d) {
        const std::int64_t c = rest % shape_[d];
        rest /= shape_[d];
        if (!reduced_[static_cast<std::size_t>(d)]) {
          g += c * stride;
          stride *= shape_[d];
        }
      }
      group_[i] = g;
    }
    sq_.resize(static_cast<std::size_t>(groups));
    factor_.resize(static_cast<std::size_t>(groups));
  }

  void run(const KernelArgs& args) override {
    float* w = static_cast<float*>(const_cast<void*>(args.inputs[0]));  // mutated in place
    const std::int64_t n = shape_.numel();
    if (kind_ == "NonNeg") {
      for (std::int64_t i = 0; i < n; ++i) w[i] = std::max(w[i], 0.0f);
      return;
    }
    std::vector<double>& sq = sq_;
    std::vector<double>& factor = factor_;
    const std::vector<std::int64_t>& group = group_;
    std::fill(sq.begin(), sq.end(), 0.0);
    for (std::int64_t i = 0; i < n; ++i) sq[static_cast<std::size_t>(group[static_cast<std::size_t>(i)])] += static_cast<double>(w[i]) * w[i];
    for (std::size_t g = 0; g < sq.size(); ++g) {
      const double norm = std::sqrt(sq[g]);
      double desired = norm;
      if (kind_ == "MaxNorm") desired = std::clamp(norm, 0.0, max_);
      if (kind_ == "MinMaxNorm") desired = rate_ * std::clamp(norm, min_, max_) + (1.0 - rate_) * norm;
      if (kind_ == "UnitNorm") desired = 1.0;
      factor[g] = desired / (kEpsilon + norm);
    }
    for (std::int64_t i = 0; i < n; ++i) w[i] = static_cast<float>(w[i] * factor[static_cast<std::size_t>(group[static_cast<std::size_t>(i)])]);
  }

 private:
  std::string kind_;
  Shape shape_;
  double max_, min_, rate_;
  std::vector<bool> reduced_;
  std::vector<std::int64_t> group_;      // per element, its norm's index
  std::vector<double> sq_, factor_;      // per norm: Σw², then the factor w is scaled by
};

}  // namespace

std::unique_ptr<Kernel> make_ref_regularizer(const KernelDesc& desc, std::string* /*why_not*/) {
  if (desc.op == "apply_constraint") return std::make_unique<RefApplyConstraint>(desc);
  return std::make_unique<RefWeightPenalty>(desc);
}

}  // namespace nnfit
