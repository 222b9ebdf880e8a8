// backend/common/slot_update.h's step scalars: Nadam's momentum product from the step alone
// (Note [Nadam's schedule without state]) against the running product Keras keeps; Lamb's
// chunked passes against Keras's update.
#include "backend/common/slot_update.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

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

// Lamb's two chunked passes (Note [LAMB's trust ratio in two passes]) against Keras's
// update_step written out once over the whole variable, in float as Keras runs it: equal to
// float rounding, on a size of three chunks; and a zero variable takes the ratio 1.
void keras_lamb(const OptimizerParams& p, double lr, std::int64_t t, std::vector<float>& w, const std::vector<float>& g,
                std::vector<float>& m, std::vector<float>& v) {
  const float b1t = static_cast<float>(std::pow(p.beta_1, t)), b2t = static_cast<float>(std::pow(p.beta_2, t));
  std::vector<float> u(w.size());
  float w2 = 0, u2 = 0;
  for (std::size_t i = 0; i < w.size(); ++i) {
    m[i] += (g[i] - m[i]) * static_cast<float>(1 - p.beta_1);
    v[i] += (g[i] * g[i] - v[i]) * static_cast<float>(1 - p.beta_2);
    u[i] = (m[i] / (1 - b1t)) / (std::sqrt(v[i] / (1 - b2t)) + static_cast<float>(p.epsilon));
    w2 += w[i] * w[i];
    u2 += u[i] * u[i];
  }
  const float ratio = w2 > 0 && u2 > 0 ? std::sqrt(w2) / std::sqrt(u2) : 1.0f;
  for (std::size_t i = 0; i < w.size(); ++i) w[i] -= ratio * static_cast<float>(lr) * u[i];
}

TEST(SlotStep, LambsChunkedPassesMatchKerasUpdate) {
  OptimizerParams p;
  p.beta_1 = 0.9;
  p.beta_2 = 0.999;
  p.epsilon = 1e-7;
  for (const bool zero_weights : {false, true}) {
    const std::int64_t n = 2 * kLambChunk + 17;
    p.numel = n;
    std::vector<float> w(n), g(n), m(n), v(n);
    for (std::int64_t i = 0; i < n; ++i) {
      w[i] = zero_weights ? 0.0f : std::sin(0.1f * i);
      g[i] = std::cos(0.37f * i);
      m[i] = 0.01f * std::sin(0.05f * i);
      v[i] = 0.02f + 0.01f * std::cos(0.03f * i);
    }
    std::vector<float> kw = w, km = m, kv = v;
    const std::int64_t step = 3;
    keras_lamb(p, 0.01, step + 1, kw, g, km, kv);
    const SlotStep s = slot_step_at(SlotRule::lamb, p.beta_1, p.beta_2, NadamPrefix{}, 0.01, step);
    EXPECT_EQ(s.b2t, std::pow(0.999, 4.0));
    std::vector<double> partials(2 * lamb_chunks(n));
    ASSERT_EQ(lamb_chunks(n), 3);
    for (std::int64_t k = 0; k < lamb_chunks(n); ++k) lamb_moments_chunk(p, s, w.data(), g.data(), m.data(), v.data(), n, k, partials.data());
    const double ratio = lamb_ratio(partials.data(), lamb_chunks(n));
    if (zero_weights) EXPECT_EQ(ratio, 1.0);
    for (std::int64_t i = 0; i < n; ++i) lamb_apply_element(p, s, ratio, w.data(), m.data(), v.data(), i);
    for (std::int64_t i = 0; i < n; ++i) {
      ASSERT_NEAR(m[i], km[i], 1e-6f * (1 + std::fabs(km[i]))) << i;
      ASSERT_NEAR(v[i], kv[i], 1e-6f * (1 + std::fabs(kv[i]))) << i;
      ASSERT_NEAR(w[i], kw[i], 2e-5f * (1 + std::fabs(kw[i]))) << i;
      if (!zero_weights) ASSERT_NE(w[i], std::sin(0.1f * i)) << i;
    }
  }
}

}  // namespace
}  // namespace nnfit
