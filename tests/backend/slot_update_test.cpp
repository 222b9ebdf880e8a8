// backend/common/slot_update.h's step scalars: Nadam's momentum product from the step alone
// (Note [Nadam's schedule without state]) against the running product Keras keeps.
#include "backend/common/slot_update.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

namespace nnfit {
namespace {

// Keras's u_t and its _u_product, multiplied in step by step (in double).
double keras_u(double beta_1, std::int64_t t) {
  return beta_1 * (1.0 - 0.5 * std::pow(0.96, static_cast<double>(t)));
}

TEST(SlotStep, NadamProductMatchesTheRunningProductToRounding) {
  for (double beta_1 : {0.8, 0.9, 0.99, 0.999}) {
    double running = 1.0;
    for (std::int64_t t = 1; t <= 20000; ++t) {
      running *= keras_u(beta_1, t);
      const SlotStep s = slot_step_at(SlotRule::nadam, beta_1, 0.999, nadam_prefix(beta_1), 0.01, t - 1);
      SCOPED_TRACE("beta_1 " + std::to_string(beta_1) + " t " + std::to_string(t));
      if (running < 1e-290) {  // subnormal territory: both are 0 to 1 − u_prod
        ASSERT_LT(s.u_prod, 1e-280);
        break;
      }
      ASSERT_NEAR(s.u_prod, running, 1e-13 * running);
      ASSERT_NEAR(s.u_t, keras_u(beta_1, t), 1e-15);
      ASSERT_NEAR(s.u_next, keras_u(beta_1, t + 1), 1e-15);
      ASSERT_EQ(s.u_prod_next, s.u_prod * s.u_next);
      ASSERT_EQ(s.b2t, std::pow(0.999, static_cast<double>(t)));
      ASSERT_EQ(s.lr, 0.01);
    }
  }
}

TEST(SlotStep, NadamFactorsAreExactlyBeta1PastStep900) {
  // 0.5·0.96^s ≤ 2^-54 from s = 900 on, so u_t is β1 to the last bit and the product's
  // tail is a power of β1.
  for (double beta_1 : {0.5, 0.9, 0.999}) EXPECT_EQ(nadam_prefix(beta_1).unit_step, 900) << beta_1;
  const SlotStep before = slot_step_at(SlotRule::nadam, 0.9, 0.999, nadam_prefix(0.9), 0.01, 897);  // t = 898
  EXPECT_NE(before.u_t, 0.9);
  for (std::int64_t step : {899, 900, 5000}) {
    const SlotStep s = slot_step_at(SlotRule::nadam, 0.9, 0.999, nadam_prefix(0.9), 0.01, step);
    EXPECT_EQ(s.u_t, 0.9) << step;
    EXPECT_EQ(s.u_next, 0.9) << step;
  }
  const SlotStep at = slot_step_at(SlotRule::nadam, 0.999, 0.999, nadam_prefix(0.999), 0.01, 999);
  const SlotStep later = slot_step_at(SlotRule::nadam, 0.999, 0.999, nadam_prefix(0.999), 0.01, 1999);
  EXPECT_NEAR(later.u_prod, at.u_prod * std::pow(0.999, 1000.0), 1e-14 * later.u_prod);
}

TEST(SlotStep, NadamAtAFarStepIsComputedInBoundedWork) {
  // A resumed run at step 10^12: at most 900 factors are multiplied (a loop over every step
  // would not finish), and the product has underflowed as Keras's does.
  const SlotStep s = slot_step_at(SlotRule::nadam, 0.9, 0.999, nadam_prefix(0.9), 0.01, 1'000'000'000'000);
  EXPECT_EQ(s.u_prod, 0.0);
  EXPECT_EQ(s.u_t, 0.9);
  // β1 near 1 keeps it away from 0: Π_{s=1..900} (1 − 0.5·0.96^s) ≈ 9.0102e-7 (in
  // Python) times β1^t.
  const SlotStep near_one = slot_step_at(SlotRule::nadam, 0.999999, 0.999, nadam_prefix(0.999999), 0.01, 1'000'000);
  EXPECT_NEAR(near_one.u_prod, 9.010185919997418e-07 * std::pow(0.999999, 1'000'001.0), 1e-12 * near_one.u_prod);
}

TEST(SlotStep, OtherRulesLeaveNadamsFieldsAtZero) {
  const SlotStep s = slot_step_at(SlotRule::adamax, 0.9, 0.999, nadam_prefix(0.9), 0.5, 4);
  EXPECT_EQ(s.lr, 0.5);
  EXPECT_EQ(s.b1t, std::pow(0.9, 5.0));
  EXPECT_EQ(s.u_prod, 0.0);
  EXPECT_EQ(s.b2t, 0.0);
}

}  // namespace
}  // namespace nnfit
