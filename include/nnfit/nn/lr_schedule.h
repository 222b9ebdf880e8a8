// Learning-rate schedules: Keras 3's keras.optimizers.schedules, same names, arguments and
// formulas (checked against Keras 3.15.1's values in tests/nn/lr_schedule_test.cpp). A
// schedule maps the optimizer's iteration (0-based, Keras's `optimizer.iterations`) to a
// learning rate; it is evaluated on the host once per step.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace nnfit {

class LearningRateSchedule {
 public:
  virtual ~LearningRateSchedule() = default;
  // The learning rate of optimizer iteration `step` (0-based).
  virtual double operator()(std::int64_t step) const = 0;
  virtual std::string describe() const = 0;
  // Keras's serialization: a number for a constant rate, else the schedule object
  // {"module": "keras.optimizers.schedules", "class_name": ..., "config": {...}} as JSON
  // text, with every value exact (%.17g), so reading it back gives the same schedule.
  virtual std::string keras_json() const = 0;
};

class ConstantLearningRate final : public LearningRateSchedule {
 public:
  // Throws InvalidArgument unless lr > 0.
  explicit ConstantLearningRate(double lr);
  double operator()(std::int64_t) const override { return lr_; }
  std::string describe() const override;
  std::string keras_json() const override;

 private:
  double lr_;
};

// lr · decay_rate^(step / decay_steps), the exponent floored when staircase.
class ExponentialDecay final : public LearningRateSchedule {
 public:
  ExponentialDecay(double initial, std::int64_t decay_steps, double decay_rate, bool staircase);
  double operator()(std::int64_t step) const override;
  std::string describe() const override;
  std::string keras_json() const override;

 private:
  double initial_;
  std::int64_t decay_steps_;
  double decay_rate_;
  bool staircase_;
};

// lr / (1 + decay_rate · step / decay_steps), the ratio floored when staircase.
class InverseTimeDecay final : public LearningRateSchedule {
 public:
  InverseTimeDecay(double initial, std::int64_t decay_steps, double decay_rate, bool staircase);
  double operator()(std::int64_t step) const override;
  std::string describe() const override;
  std::string keras_json() const override;

 private:
  double initial_;
  std::int64_t decay_steps_;
  double decay_rate_;
  bool staircase_;
};

// (lr - end) · (1 - step / decay_steps)^power + end, step clamped to decay_steps; with
// cycle, decay_steps grows to the next multiple of itself past step instead.
class PolynomialDecay final : public LearningRateSchedule {
 public:
  PolynomialDecay(double initial, std::int64_t decay_steps, double end, double power, bool cycle);
  double operator()(std::int64_t step) const override;
  std::string describe() const override;
  std::string keras_json() const override;

 private:
  double initial_;
  std::int64_t decay_steps_;
  double end_, power_;
  bool cycle_;
};

// values[0] while step <= boundaries[0], values[i] while boundaries[i-1] < step <=
// boundaries[i], values.back() after the last boundary.
class PiecewiseConstantDecay final : public LearningRateSchedule {
 public:
  PiecewiseConstantDecay(std::vector<std::int64_t> boundaries, std::vector<double> values);
  double operator()(std::int64_t step) const override;
  std::string describe() const override;
  std::string keras_json() const override;

 private:
  std::vector<std::int64_t> boundaries_;
  std::vector<double> values_;
};

// Optional linear warm-up from `initial` to `warmup_target` over warmup_steps, then a
// half cosine from the peak (warmup_target, or initial without warm-up) down to
// alpha · peak over decay_steps, flat after that.
class CosineDecay final : public LearningRateSchedule {
 public:
  CosineDecay(double initial, std::int64_t decay_steps, double alpha = 0.0,
              std::optional<double> warmup_target = std::nullopt, std::int64_t warmup_steps = 0);
  double operator()(std::int64_t step) const override;
  std::string describe() const override;
  std::string keras_json() const override;

 private:
  double initial_;
  std::int64_t decay_steps_;
  double alpha_;
  std::optional<double> warmup_target_;
  std::int64_t warmup_steps_;
};

// SGDR: cosine periods from first_decay_steps, each t_mul times longer and starting at
// m_mul times the previous period's peak; alpha is the floor as a fraction of the peak.
class CosineDecayRestarts final : public LearningRateSchedule {
 public:
  CosineDecayRestarts(double initial, std::int64_t first_decay_steps, double t_mul = 2.0, double m_mul = 1.0,
                      double alpha = 0.0);
  double operator()(std::int64_t step) const override;
  std::string describe() const override;
  std::string keras_json() const override;

 private:
  double initial_;
  std::int64_t first_decay_steps_;
  double t_mul_, m_mul_, alpha_;
};

}  // namespace nnfit
