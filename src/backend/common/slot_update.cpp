// The per-step scalars of the slot-update optimizers (slot_update.h).
#include "backend/common/slot_update.h"

#include <string>

namespace nnfit {

bool slot_rule_of(const std::string& op, SlotRule* out) {
  static const struct {
    const char* op;
    SlotRule rule;
  } kRules[] = {{"adagrad_update", SlotRule::adagrad}, {"adamax_update", SlotRule::adamax},
                {"lion_update", SlotRule::lion},       {"adadelta_update", SlotRule::adadelta},
                {"nadam_update", SlotRule::nadam},     {"ftrl_update", SlotRule::ftrl}};
  for (const auto& r : kRules) {
    if (op == r.op) {
      *out = r.rule;
      return true;
    }
  }
  return false;
}

SlotStep slot_step(SlotRule rule, const OptimizerParams& p, const NadamPrefix& nadam, const StepContext& ctx) {
  return slot_step_at(rule, p.beta_1, p.beta_2, nadam, ctx.learning_rate, ctx.step);
}

}  // namespace nnfit
