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

double NadamSchedule::u_product(double beta_1, std::int64_t step) {
  if (step != step_ + 1) {
    step_ = -1;
    product_ = 1.0;
  }
  while (step_ < step) {
    ++step_;
    product_ *= beta_1 * (1.0 - 0.5 * std::pow(0.96, static_cast<double>(step_ + 1)));
  }
  return product_;
}

SlotStep slot_step(SlotRule rule, const OptimizerParams& p, const StepContext& ctx, NadamSchedule& nadam) {
  SlotStep s;
  s.lr = ctx.learning_rate;
  const double t = static_cast<double>(ctx.step + 1);  // Keras's local_step
  s.b1t = std::pow(p.beta_1, t);
  if (rule == SlotRule::nadam) {
    s.u_t = p.beta_1 * (1.0 - 0.5 * std::pow(0.96, t));
    s.u_next = p.beta_1 * (1.0 - 0.5 * std::pow(0.96, t + 1.0));
    s.u_prod = nadam.u_product(p.beta_1, ctx.step);
    s.u_prod_next = s.u_prod * s.u_next;
    s.b2t = std::pow(p.beta_2, t);
  }
  return s;
}

}  // namespace nnfit
