// OpenMP kernels of weight_penalty (+grad) of kind l1l2 and of apply_constraint
// (graph/regularizer_op_defs.cpp), the ones that run on every regularized or constrained
// weight every step. The element-wise parts (the l1l2 gradient, NonNeg, the scaling by a
// norm's factor) use the reference's expressions (ref_regularizers.cpp): bit-identical.
// The sums (the l1l2 penalty, the constraint norms) are double partials per thread over a
// static split, added in thread order: deterministic for a thread count and within a few
// double ulps of the reference's running sums. The orthogonal penalty (O(s²·len), rare)
// is declined: the reference kernel runs it.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "backend/cpu/omp_kernels.h"

namespace nnfit {

namespace {

constexpr double kEpsilon = 1e-7;  // Keras's backend epsilon, as the reference

double sign(double v) { return v > 0 ? 1.0 : (v < 0 ? -1.0 : 0.0); }

class OmpL1L2Penalty final : public Kernel {
 public:
  OmpL1L2Penalty(bool grad, std::int64_t n, double l1, double l2)
      : grad_(grad), n_(n), l1_(l1), l2_(l2), threads_(std::max(1, omp_get_max_threads())) {}
  std::size_t workspace_bytes() const override { return grad_ ? 0 : static_cast<std::size_t>(threads_) * sizeof(double); }
  void run(const KernelArgs& args) override {
    const auto* x = static_cast<const float*>(args.inputs[0]);
    auto* out = static_cast<float*>(args.outputs[0]);
    const std::int64_t n = n_;
    const double l1 = l1_, l2 = l2_;
    if (grad_) {
      const double dloss = *static_cast<const float*>(args.inputs[1]);
#pragma omp parallel for schedule(static) if (n >= kOmpMinParallelElements)
      for (std::int64_t i = 0; i < n; ++i) out[i] = static_cast<float>(dloss * (l1 * sign(x[i]) + 2.0 * l2 * x[i]));
      return;
    }
    auto* partial = static_cast<double*>(args.workspace);
    const int team = n >= kOmpMinParallelElements ? threads_ : 1;
    std::fill(partial, partial + team, 0.0);
#pragma omp parallel num_threads(team)
    {
      std::int64_t begin = 0, end = 0;
      omp_row_range(omp_get_thread_num(), omp_get_num_threads(), n, &begin, &end);
      double sum = 0.0;
      for (std::int64_t i = begin; i < end; ++i) sum += l1 * std::abs(static_cast<double>(x[i])) + l2 * x[i] * static_cast<double>(x[i]);
      partial[omp_get_thread_num()] = sum;
    }
    double sum = 0.0;
    for (int t = 0; t < team; ++t) sum += partial[t];
    *out = static_cast<float>(sum);
  }

 private:
  bool grad_;
  std::int64_t n_;
  double l1_, l2_;
  int threads_;
};

// MaxNorm, MinMaxNorm, UnitNorm: w·desired(‖w‖)/(ε + ‖w‖) per norm over `axes`; NonNeg.
class OmpApplyConstraint final : public Kernel {
 public:
  explicit OmpApplyConstraint(const KernelDesc& d)
      : kind_(d.attrs.s("kind")), n_(d.inputs.at(0).shape.numel()), max_(d.attrs.f("max_value")),
        min_(d.attrs.f("min_value")), rate_(d.attrs.f("rate")), threads_(std::max(1, omp_get_max_threads())) {
    if (kind_ == "NonNeg") return;
    const Shape& shape = d.inputs.at(0).shape;
    const std::int64_t rank = shape.rank();
    std::vector<bool> reduced(static_cast<std::size_t>(rank), false);
    for (std::int64_t a : d.attrs.ints("axes")) reduced[static_cast<std::size_t>(a < 0 ? a + rank : a)] = true;
    // Each element's norm: its coordinates on the axes not reduced over.
    groups_ = 1;
    for (std::int64_t k = 0; k < rank; ++k) groups_ *= reduced[static_cast<std::size_t>(k)] ? 1 : shape[k];
    group_.resize(static_cast<std::size_t>(n_));
    for (std::size_t i = 0; i < group_.size(); ++i) {
      std::int64_t rest = static_cast<std::int64_t>(i), g = 0, stride = 1;
      for (std::int64_t k = rank - 1; k >= 0; --k) {
        const std::int64_t c = rest % shape[k];
        rest /= shape[k];
        if (!reduced[static_cast<std::size_t>(k)]) {
          g += c * stride;
          stride *= shape[k];
        }
      }
      group_[i] = g;
    }
  }
  // [threads][groups] partial Σw², then [groups] factors.
  std::size_t workspace_bytes() const override {
    return static_cast<std::size_t>((threads_ + 1) * groups_) * sizeof(double);
  }

  void run(const KernelArgs& args) override {
    float* w = static_cast<float*>(const_cast<void*>(args.inputs[0]));  // mutated in place
    const std::int64_t n = n_;
    const bool parallel = n >= kOmpMinParallelElements;
    if (kind_ == "NonNeg") {
#pragma omp parallel for simd schedule(static) if (parallel)
      for (std::int64_t i = 0; i < n; ++i) w[i] = std::max(w[i], 0.0f);
      return;
    }
    const std::int64_t groups = groups_;
    const int team = parallel ? threads_ : 1;
    auto* partial = static_cast<double*>(args.workspace);
    double* factor = partial + static_cast<std::int64_t>(threads_) * groups;
    const std::int64_t* group = group_.data();
    std::fill(partial, partial + static_cast<std::int64_t>(team) * groups, 0.0);
#pragma omp parallel num_threads(team)
    {
      const int tid = omp_get_thread_num();
      std::int64_t begin = 0, end = 0;
      omp_row_range(tid, omp_get_num_threads(), n, &begin, &end);
      double* sq = partial + static_cast<std::int64_t>(tid) * groups;
      for (std::int64_t i = begin; i < end; ++i) sq[group[i]] += static_cast<double>(w[i]) * w[i];
    }
    for (std::int64_t g = 0; g < groups; ++g) {
      double sq = 0.0;
      for (int t = 0; t < team; ++t) sq += partial[static_cast<std::int64_t>(t) * groups + g];
      const double norm = std::sqrt(sq);
      double desired = norm;
      if (kind_ == "MaxNorm") desired = std::clamp(norm, 0.0, max_);
      if (kind_ == "MinMaxNorm") desired = rate_ * std::clamp(norm, min_, max_) + (1.0 - rate_) * norm;
      if (kind_ == "UnitNorm") desired = 1.0;
      factor[g] = desired / (kEpsilon + norm);
    }
#pragma omp parallel for schedule(static) num_threads(team)
    for (std::int64_t i = 0; i < n; ++i) w[i] = static_cast<float>(w[i] * factor[group[i]]);
  }

 private:
  std::string kind_;
  std::int64_t n_;
  double max_, min_, rate_;
  int threads_;
  std::int64_t groups_ = 0;
  std::vector<std::int64_t> group_;  // per element, its norm's index
};

}  // namespace

std::unique_ptr<Kernel> make_omp_regularizer(const KernelDesc& desc, std::string* why_not) {
  if (desc.op == "apply_constraint") return std::make_unique<OmpApplyConstraint>(desc);
  if (desc.attrs.s("kind") == "orthogonal") {
    if (why_not) *why_not = desc.op + ": the orthogonal penalty runs on the reference kernel (O(s²·len), rare)";
    return nullptr;
  }
  return std::make_unique<OmpL1L2Penalty>(desc.op == "weight_penalty_grad", desc.inputs.at(0).shape.numel(),
                                          desc.attrs.f("l1"), desc.attrs.f("l2"));
}

}  // namespace nnfit
