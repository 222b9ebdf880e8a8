// Optimizers (Keras 3 names, defaults and formulas) and learning-rate schedules. An
// optimizer emits one fused update node per variable; its slots are model-owned tensors.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "nnfit/graph/graph.h"
#include "nnfit/nn/lr_schedule.h"

namespace nnfit {

struct OptimizerOptions {
  std::string name = "adam";  // sgd, adam, adamw, rmsprop, adagrad, adamax, lion, adadelta, nadam, ftrl, lamb, adafactor,
                              // schedulefreeadamw
  std::shared_ptr<LearningRateSchedule> learning_rate;  // null: the optimizer's default
  double momentum = 0.0;      // sgd, rmsprop
  bool nesterov = false;      // sgd
  double beta_1 = 0.9, beta_2 = 0.999;  // adam, adamw, adamax, nadam, lamb; lion's default beta_2 is 0.99
  double epsilon = 1e-7;
  // Keras's weight_decay (p -= p·weight_decay·lr before each update); -1: the default,
  // 0.004 for adamw and none for the others.
  double weight_decay = -1;
  double rho = 0.9;           // rmsprop; adadelta's default is 0.95
  bool centered = false;      // rmsprop: divide by the gradient's variance estimate (a third slot)
  bool amsgrad = false;       // adam, adamw: step with the largest second moment so far (a third slot)
  double initial_accumulator_value = 0.1;  // adagrad, ftrl
  // ftrl (Keras's names and defaults)
  double learning_rate_power = -0.5, l1_regularization_strength = 0.0, l2_regularization_strength = 0.0,
         l2_shrinkage_regularization_strength = 0.0, beta = 0.0;
  // adafactor (Keras's names and defaults; relative_step is kept for the config: Keras's
  // rho_t = min(lr, 1/√t) makes its clamp of the rate a no-op)
  double beta_2_decay = -0.8, epsilon_1 = 1e-30, epsilon_2 = 1e-3, clip_threshold = 1.0;
  bool relative_step = true;
  // schedulefreeadamw: the rate's linear warm-up over its first steps (0: none)
  std::int64_t warmup_steps = 0;
  // Keras's gradient clipping, one at most (0: off), in Keras's order of precedence:
  // clipnorm (each gradient to this L2 norm), global_clipnorm (all together), clipvalue.
  double clipnorm = 0.0, global_clipnorm = 0.0, clipvalue = 0.0;
  // Keras's use_ema: a moving average of each trained variable (the optimizer's first
  // variables in Keras's files), avg = m·avg + (1 − m)·var after each update (m = 0 on the
  // first step); every ema_overwrite_frequency steps (0: never) and at the end of fit the
  // variables take their averages.
  bool use_ema = false;
  // Keras's LossScaleOptimizer around this one (float16 training): the loss's gradient is
  // multiplied by the scale and the gradients divided by it before the update. Dynamic
  // (Keras 3): a step whose gradients are not all finite is skipped and halves the scale,
  // `growth_steps` finite steps in a row double it. Fixed (Keras 2's dynamic=False): the
  // scale stays; a non-finite step is still skipped. Off unless set, or applied by the
  // mixed_float16 policy as Keras's compile does.
  struct LossScale {
    bool enabled = false;
    bool dynamic = true;
    double initial_scale = 32768.0;  // 2^15
    std::int64_t growth_steps = 2000;
  } loss_scale;
  double ema_momentum = 0.99;
  std::int64_t ema_overwrite_frequency = 0;
};

class Optimizer {
 public:
  // Throws InvalidArgument for an unknown name or a bad value (naming it).
  explicit Optimizer(OptimizerOptions options);
  const std::string& name() const { return options_.name; }
  // Slots per variable (Adam: m and v; SGD with momentum: velocity).
  int num_slots() const;
  // The value slot `k` starts at (Adagrad's accumulator: initial_accumulator_value; 0 else).
  double slot_initial_value(int k) const;
  // The shape of slot `k` of a variable of shape `variable`: the variable's, but for
  // Adafactor's factored r (without the last axis) and c (without the one before it),
  // scalars for a variable of rank < 2 (Keras's placeholders, int32 zeros in its files).
  Shape slot_shape(int k, const Shape& variable) const;
  bool slot_is_placeholder(int k, const Shape& variable) const;
  // Keras's _clip_gradients on a step's gradients (-1 entries kept; `names` name the nodes,
  // one per gradient): returns the values the updates take; unchanged without clipping.
  std::vector<int> clip_gradients(Graph& graph, const std::vector<int>& grads, const std::vector<std::string>& names) const;
  // Appends the update of `variable` with gradient `grad` and slot values `slots` (the
  // num_slots() the update takes, then the EMA average when use_ema).
  void emit_update(Graph& graph, int variable, int grad, const std::vector<int>& slots,
                   const std::string& name) const;
  // With use_ema, the average's update after the variable's (and its constraint's): the
  // last of `slots`. Nothing without use_ema.
  void emit_average(Graph& graph, int variable, const std::vector<int>& slots, const std::string& name) const;
  // Slots per variable the model keeps: num_slots(), plus the average with use_ema.
  int num_kept_slots() const { return num_slots() + (options_.use_ema ? 1 : 0); }
  double learning_rate(std::int64_t step) const { return (*options_.learning_rate)(step); }
  const OptimizerOptions& options() const { return options_; }
  void set_learning_rate(std::shared_ptr<LearningRateSchedule> schedule) { options_.learning_rate = std::move(schedule); }

 private:
  // The update rule's node(s) on exactly num_slots() slots.
  void emit_rule(Graph& graph, int variable, int grad, const std::vector<int>& slots, const std::string& name) const;

  OptimizerOptions options_;
};

}  // namespace nnfit
