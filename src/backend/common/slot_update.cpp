// The per-step scalars of the slot-update optimizers (slot_update.h), and Adafactor's
// geometry (adafactor_update.h).
#include "backend/common/slot_update.h"

#include "backend/common/adafactor_update.h"

#include <string>

namespace nnfit {

bool slot_rule_of(const std::string& op, SlotRule* out) {
  static const struct {
    const char* op;
    SlotRule rule;
  } kRules[] = {{"adagrad_update", SlotRule::adagrad}, {"adamax_update", SlotRule::adamax},
                {"lion_update", SlotRule::lion},       {"adadelta_update", SlotRule::adadelta},
                {"nadam_update", SlotRule::nadam},     {"ftrl_update", SlotRule::ftrl},
                {"lamb_update", SlotRule::lamb},       {"schedule_free_update", SlotRule::schedule_free}};
  for (const auto& r : kRules) {
    if (op == r.op) {
      *out = r.rule;
      return true;
    }
  }
  return false;
}

SlotStep slot_step(SlotRule rule, const OptimizerParams& p, const NadamPrefix& nadam, const StepContext& ctx) {
  return slot_step_at(rule, p.beta_1, p.beta_2, nadam, ctx.learning_rate, ctx.step, p.warmup_steps);
}

EmaStep ema_step(const OptimizerParams& p, const StepContext& ctx) {
  return {ctx.step == 0 ? 0.0 : p.momentum, p.overwrite_frequency > 0 && (ctx.step + 1) % p.overwrite_frequency == 0};
}

SlotUpdateState::SlotUpdateState(SlotRule r, OptimizerParams p, bool two)
    : rule(r), params(p), two_slots(two), nadam(nadam_prefix(p.beta_1)) {}

SlotUpdateState::Run SlotUpdateState::operands(const KernelArgs& args) const {
  return {mutable_input(args, 0), input(args, 1), mutable_input(args, 2), two_slots ? mutable_input(args, 3) : nullptr,
          slot_step(rule, params, nadam, *args.ctx)};
}

AdafactorState::Run AdafactorState::operands(const KernelArgs& args) const {
  return {mutable_input(args, 0),
          input(args, 1),
          mutable_input(args, 2),
          mutable_input(args, 3),
          mutable_input(args, 4),
          adafactor_workspace(shape, static_cast<double*>(args.workspace)),
          adafactor_step_at(params.beta_2_decay, args.ctx->learning_rate, args.ctx->step)};
}

AdafactorShape adafactor_shape_of(const Shape& v) {
  AdafactorShape sh;
  sh.n = v.numel();
  sh.factored = v.rank() >= 2;
  if (sh.factored) {
    sh.rows = v[v.rank() - 2];
    sh.cols = v[v.rank() - 1];
    sh.batch = sh.rows * sh.cols > 0 ? sh.n / (sh.rows * sh.cols) : 0;
  } else {
    sh.cols = sh.n;
  }
  return sh;
}

}  // namespace nnfit
