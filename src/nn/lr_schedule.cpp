// Learning-rate schedules: Keras 3's formulas (keras/src/optimizers/schedules/
// learning_rate_schedule.py), evaluated in double where Keras uses float32.
#include "nnfit/nn/lr_schedule.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numbers>

#include "nnfit/core/error.h"

namespace nnfit {

namespace {

std::string format(const char* fmt, auto... args) {
  char buf[256];
  std::snprintf(buf, sizeof buf, fmt, args...);
  return buf;
}

void check_steps(const char* schedule, const char* key, std::int64_t steps) {
  NNFIT_CHECK(steps > 0, InvalidArgument, schedule, ": ", key, " must be positive, got ", steps);
}

}  // namespace

ConstantLearningRate::ConstantLearningRate(double lr) : lr_(lr) {
  // 0 is Keras's too: the optimizer steps (its iterations, slots and EMA) and the weights stay.
  NNFIT_CHECK(lr >= 0, InvalidArgument, "learning_rate must not be negative, got ", lr);
}

std::string ConstantLearningRate::describe() const { return format("%g", lr_); }

ExponentialDecay::ExponentialDecay(double initial, std::int64_t decay_steps, double decay_rate, bool staircase)
    : initial_(initial), decay_steps_(decay_steps), decay_rate_(decay_rate), staircase_(staircase) {
  check_steps("ExponentialDecay", "decay_steps", decay_steps);
  NNFIT_CHECK(initial > 0, InvalidArgument, "ExponentialDecay: initial_learning_rate must be positive");
}

double ExponentialDecay::operator()(std::int64_t step) const {
  double p = static_cast<double>(step) / static_cast<double>(decay_steps_);
  if (staircase_) p = std::floor(p);
  return initial_ * std::pow(decay_rate_, p);
}

std::string ExponentialDecay::describe() const {
  return format("ExponentialDecay(%g, decay_steps=%lld, decay_rate=%g%s)", initial_,
                static_cast<long long>(decay_steps_), decay_rate_, staircase_ ? ", staircase" : "");
}

InverseTimeDecay::InverseTimeDecay(double initial, std::int64_t decay_steps, double decay_rate, bool staircase)
    : initial_(initial), decay_steps_(decay_steps), decay_rate_(decay_rate), staircase_(staircase) {
  check_steps("InverseTimeDecay", "decay_steps", decay_steps);
  NNFIT_CHECK(initial > 0, InvalidArgument, "InverseTimeDecay: initial_learning_rate must be positive");
  NNFIT_CHECK(decay_rate >= 0, InvalidArgument, "InverseTimeDecay: decay_rate must not be negative, got ",
              decay_rate);
}

double InverseTimeDecay::operator()(std::int64_t step) const {
  double p = static_cast<double>(step) / static_cast<double>(decay_steps_);
  if (staircase_) p = std::floor(p);
  return initial_ / (1.0 + decay_rate_ * p);
}

std::string InverseTimeDecay::describe() const {
  return format("InverseTimeDecay(%g, decay_steps=%lld, decay_rate=%g%s)", initial_,
                static_cast<long long>(decay_steps_), decay_rate_, staircase_ ? ", staircase" : "");
}

PolynomialDecay::PolynomialDecay(double initial, std::int64_t decay_steps, double end, double power, bool cycle)
    : initial_(initial), decay_steps_(decay_steps), end_(end), power_(power), cycle_(cycle) {
  check_steps("PolynomialDecay", "decay_steps", decay_steps);
  NNFIT_CHECK(initial > 0, InvalidArgument, "PolynomialDecay: initial_learning_rate must be positive");
  NNFIT_CHECK(end >= 0, InvalidArgument, "PolynomialDecay: end_learning_rate must not be negative, got ", end);
  NNFIT_CHECK(power > 0, InvalidArgument, "PolynomialDecay: power must be positive, got ", power);
}

double PolynomialDecay::operator()(std::int64_t step) const {
  double s = static_cast<double>(step);
  double steps = static_cast<double>(decay_steps_);
  if (cycle_) {
    steps *= step == 0 ? 1.0 : std::ceil(s / steps);
  } else {
    s = std::min(s, steps);
  }
  return (initial_ - end_) * std::pow(1.0 - s / steps, power_) + end_;
}

std::string PolynomialDecay::describe() const {
  return format("PolynomialDecay(%g, decay_steps=%lld, end_learning_rate=%g, power=%g%s)", initial_,
                static_cast<long long>(decay_steps_), end_, power_, cycle_ ? ", cycle" : "");
}

PiecewiseConstantDecay::PiecewiseConstantDecay(std::vector<std::int64_t> boundaries, std::vector<double> values)
    : boundaries_(std::move(boundaries)), values_(std::move(values)) {
  NNFIT_CHECK(values_.size() == boundaries_.size() + 1, InvalidArgument,
              "PiecewiseConstantDecay: values must have one more entry than boundaries, got ", values_.size(),
              " values for ", boundaries_.size(), " boundaries");
  NNFIT_CHECK(std::is_sorted(boundaries_.begin(), boundaries_.end()), InvalidArgument,
              "PiecewiseConstantDecay: boundaries must be increasing");
  for (double v : values_) {
    NNFIT_CHECK(v > 0, InvalidArgument, "PiecewiseConstantDecay: every value must be positive, got ", v);
  }
}

double PiecewiseConstantDecay::operator()(std::int64_t step) const {
  // The first boundary not below step: values_[i] covers (boundaries_[i-1], boundaries_[i]].
  auto it = std::lower_bound(boundaries_.begin(), boundaries_.end(), step);
  return values_[static_cast<std::size_t>(it - boundaries_.begin())];
}

std::string PiecewiseConstantDecay::describe() const {
  std::string s = "PiecewiseConstantDecay(";
  for (std::size_t i = 0; i < values_.size(); ++i) {
    s += format("%g", values_[i]);
    if (i < boundaries_.size()) s += format(" until %lld, then ", static_cast<long long>(boundaries_[i]));
  }
  return s + ")";
}

CosineDecay::CosineDecay(double initial, std::int64_t decay_steps, double alpha, std::optional<double> warmup_target,
                         std::int64_t warmup_steps)
    : initial_(initial),
      decay_steps_(decay_steps),
      alpha_(alpha),
      warmup_target_(warmup_target),
      warmup_steps_(warmup_steps) {
  check_steps("CosineDecay", "decay_steps", decay_steps);
  NNFIT_CHECK(alpha >= 0 && alpha <= 1, InvalidArgument, "CosineDecay: alpha must be in [0, 1], got ", alpha);
  NNFIT_CHECK(initial >= 0, InvalidArgument, "CosineDecay: initial_learning_rate must not be negative");
  if (warmup_target) {
    check_steps("CosineDecay", "warmup_steps (with warmup_target)", warmup_steps);
    NNFIT_CHECK(*warmup_target > 0, InvalidArgument, "CosineDecay: warmup_target must be positive");
  } else {
    NNFIT_CHECK(initial > 0, InvalidArgument,
                "CosineDecay: initial_learning_rate must be positive without a warmup_target");
    NNFIT_CHECK(warmup_steps == 0, InvalidArgument,
                "CosineDecay: warmup_steps needs a warmup_target (the rate to warm up to)");
  }
}

double CosineDecay::operator()(std::int64_t step) const {
  const double steps = static_cast<double>(decay_steps_);
  auto decay = [&](double s, double peak) {
    const double cosine = 0.5 * (1.0 + std::cos(std::numbers::pi * s / steps));
    return peak * ((1.0 - alpha_) * cosine + alpha_);
  };
  const double s = static_cast<double>(step);
  if (!warmup_target_) return decay(std::min(s, steps), initial_);
  const double warm = static_cast<double>(warmup_steps_);
  if (s < warm) return initial_ + (*warmup_target_ - initial_) * s / warm;
  return decay(std::min(s - warm, steps), *warmup_target_);
}

std::string CosineDecay::describe() const {
  std::string s = format("CosineDecay(%g, decay_steps=%lld, alpha=%g", initial_, static_cast<long long>(decay_steps_),
                         alpha_);
  if (warmup_target_) {
    s += format(", warmup to %g over %lld steps", *warmup_target_, static_cast<long long>(warmup_steps_));
  }
  return s + ")";
}

CosineDecayRestarts::CosineDecayRestarts(double initial, std::int64_t first_decay_steps, double t_mul, double m_mul,
                                         double alpha)
    : initial_(initial), first_decay_steps_(first_decay_steps), t_mul_(t_mul), m_mul_(m_mul), alpha_(alpha) {
  check_steps("CosineDecayRestarts", "first_decay_steps", first_decay_steps);
  NNFIT_CHECK(initial > 0, InvalidArgument, "CosineDecayRestarts: initial_learning_rate must be positive");
  NNFIT_CHECK(t_mul > 0, InvalidArgument, "CosineDecayRestarts: t_mul must be positive, got ", t_mul);
  NNFIT_CHECK(m_mul >= 0, InvalidArgument, "CosineDecayRestarts: m_mul must not be negative, got ", m_mul);
  NNFIT_CHECK(alpha >= 0 && alpha <= 1, InvalidArgument, "CosineDecayRestarts: alpha must be in [0, 1], got ",
              alpha);
}

double CosineDecayRestarts::operator()(std::int64_t step) const {
  double fraction = static_cast<double>(step) / static_cast<double>(first_decay_steps_);
  double restart;
  if (t_mul_ == 1.0) {
    restart = std::floor(fraction);
    fraction -= restart;
  } else {
    // Period i lasts t_mul^i first periods; the periods before i sum to (1 - t_mul^i) / (1 - t_mul).
    restart = std::floor(std::log(1.0 - fraction * (1.0 - t_mul_)) / std::log(t_mul_));
    const double before = (1.0 - std::pow(t_mul_, restart)) / (1.0 - t_mul_);
    fraction = (fraction - before) / std::pow(t_mul_, restart);
  }
  const double cosine = 0.5 * std::pow(m_mul_, restart) * (1.0 + std::cos(std::numbers::pi * fraction));
  return initial_ * ((1.0 - alpha_) * cosine + alpha_);
}

std::string CosineDecayRestarts::describe() const {
  return format("CosineDecayRestarts(%g, first_decay_steps=%lld, t_mul=%g, m_mul=%g, alpha=%g)", initial_,
                static_cast<long long>(first_decay_steps_), t_mul_, m_mul_, alpha_);
}

}  // namespace nnfit
