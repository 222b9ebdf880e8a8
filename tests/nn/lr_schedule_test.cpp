// Learning-rate schedules against Keras's own values: every expected figure below was
// printed by Keras 3.15.1 (`float(schedule(step))`, tensorflow-cpu backend, float32), so the
// tolerance is float32's, not ours.
#include "nnfit/nn/lr_schedule.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <vector>

#include "nnfit/core/error.h"

namespace nnfit {
namespace {

constexpr std::int64_t kSteps[] = {0, 1, 99, 100, 101, 150, 250, 251, 299, 300, 301, 700, 1000, 1234, 5000};

struct Case {
  const char* keras;  // the Keras constructor call, for the failure message
  std::shared_ptr<LearningRateSchedule> schedule;
  std::vector<double> expected;  // at kSteps
};

TEST(LearningRateSchedule, MatchesKeras) {
  const Case cases[] = {
      {"CosineDecay(0.002, 1000, alpha=0.1)", std::make_shared<CosineDecay>(0.002, 1000, 0.1),
       {0.00200000009, 0.00199999567, 0.00195682026, 0.00195595087, 0.00195507286, 0.00190190587, 0.00173639623,
        0.00173439377, 0.00163129158, 0.00162900682, 0.00162671669, 0.000570993347, 0.000200000009, 0.000200000009,
        0.000200000009}},
      {"CosineDecay(0.0, 800, warmup_target=0.003, warmup_steps=200)",
       std::make_shared<CosineDecay>(0.0, 800, 0.0, 0.003, 200),
       {0, 1.49999996e-05, 0.00148500002, 0.00150000001, 0.00151500001, 0.0022499999, 0.00297117792, 0.00297001749,
        0.00288806297, 0.00288581918, 0.00288355444, 0.000925974746, 0, 0, 0}},
      {"CosineDecayRestarts(0.01, 100, t_mul=2.0, m_mul=0.5, alpha=0.05)",
       std::make_shared<CosineDecayRestarts>(0.01, 100, 2.0, 0.5, 0.05),
       {0.00999999978, 0.00999765564, 0.00050234393, 0.00524999946, 0.00524970703, 0.0045543788, 0.00119562144,
        0.00116945, 0.000500293041, 0.00287499977, 0.00287496345, 0.00168750004, 0.00132096827, 0.000795529748,
        0.000605348323}},
      {"CosineDecayRestarts(0.01, 100, t_mul=1.0, m_mul=0.9)",
       std::make_shared<CosineDecayRestarts>(0.01, 100, 1.0, 0.9, 0.0),
       {0.00999999978, 0.00999753177, 2.4673343e-06, 0.00899999961, 0.00899777841, 0.00449999934, 0.00404999917,
        0.00392278563, 1.99854071e-06, 0.00728999916, 0.00728820032, 0.0047829682, 0.00348678348, 0.00209245388,
        5.15376814e-05}},
      {"PolynomialDecay(0.1, 500, end_learning_rate=0.001, power=2.0)",
       std::make_shared<PolynomialDecay>(0.1, 500, 0.001, 2.0, false),
       {0.100000001, 0.0996044055, 0.0646771938, 0.0643600076, 0.0640435964, 0.0495099947, 0.02575, 0.0255523976,
        0.0169987958, 0.0168399978, 0.0166819971, 0.00100000005, 0.00100000005, 0.00100000005, 0.00100000005}},
      {"PolynomialDecay(0.1, 300, end_learning_rate=0.01, power=1.0, cycle=True)",
       std::make_shared<PolynomialDecay>(0.1, 300, 0.01, 1.0, true),
       {0.100000001, 0.0997000039, 0.0702999979, 0.0700000003, 0.0696999952, 0.0549999997, 0.0250000022,
        0.0247000027, 0.0102999993, 0.00999999978, 0.0548500046, 0.0299999993, 0.0250000022, 0.0259600021,
        0.0117647052}},
      {"InverseTimeDecay(0.1, 100, 0.5)", std::make_shared<InverseTimeDecay>(0.1, 100, 0.5, false),
       {0.100000001, 0.099502489, 0.0668896362, 0.0666666701, 0.0664451867, 0.0571428575, 0.0444444455, 0.0443458967,
        0.0400801636, 0.0399999991, 0.0399201587, 0.0222222228, 0.0166666675, 0.0139470017, 0.00384615385}},
      {"InverseTimeDecay(0.1, 100, 0.5, staircase=True)", std::make_shared<InverseTimeDecay>(0.1, 100, 0.5, true),
       {0.100000001, 0.100000001, 0.100000001, 0.0666666701, 0.0666666701, 0.0666666701, 0.0500000007, 0.0500000007,
        0.0500000007, 0.0399999991, 0.0399999991, 0.0222222228, 0.0166666675, 0.0142857144, 0.00384615385}},
      {"PiecewiseConstantDecay([100, 250], [0.1, 0.01, 0.001])",
       std::make_shared<PiecewiseConstantDecay>(std::vector<std::int64_t>{100, 250},
                                                std::vector<double>{0.1, 0.01, 0.001}),
       {0.100000001, 0.100000001, 0.100000001, 0.100000001, 0.00999999978, 0.00999999978, 0.00999999978,
        0.00100000005, 0.00100000005, 0.00100000005, 0.00100000005, 0.00100000005, 0.00100000005, 0.00100000005,
        0.00100000005}},
      {"ExponentialDecay(0.1, 100, 0.5, staircase=True)", std::make_shared<ExponentialDecay>(0.1, 100, 0.5, true),
       {0.100000001, 0.100000001, 0.100000001, 0.0500000007, 0.0500000007, 0.0500000007, 0.0250000004, 0.0250000004,
        0.0250000004, 0.0125000002, 0.0125000002, 0.000781250012, 9.76562515e-05, 2.44140629e-05, 8.88178433e-17}},
  };
  for (const Case& c : cases) {
    ASSERT_EQ(c.expected.size(), std::size(kSteps)) << c.keras;
    for (std::size_t i = 0; i < std::size(kSteps); ++i) {
      const double got = (*c.schedule)(kSteps[i]);
      EXPECT_NEAR(got, c.expected[i], 2e-6 * std::abs(c.expected[i]) + 1e-9)
          << c.keras << " at step " << kSteps[i] << " (" << c.schedule->describe() << ")";
    }
  }
}

TEST(LearningRateSchedule, RejectsBadArguments) {
  EXPECT_THROW(ConstantLearningRate(-0.1), InvalidArgument);
  EXPECT_THROW(ConstantLearningRate(std::nan("")), InvalidArgument);
  EXPECT_EQ(ConstantLearningRate(0.0)(5), 0.0);  // Keras's too: the weights stay
  EXPECT_THROW(CosineDecay(0.001, 0), InvalidArgument);
  EXPECT_THROW(CosineDecay(0.001, 100, 1.5), InvalidArgument);
  EXPECT_THROW(CosineDecay(0.0, 100), InvalidArgument);            // no warm-up: it would stay at 0
  EXPECT_THROW(CosineDecay(0.001, 100, 0.0, std::nullopt, 10), InvalidArgument);  // warmup_steps without a target
  EXPECT_THROW(CosineDecay(0.0, 100, 0.0, 0.01, 0), InvalidArgument);             // a target without warmup_steps
  EXPECT_THROW(CosineDecayRestarts(0.01, 100, 0.0), InvalidArgument);
  EXPECT_THROW(PolynomialDecay(0.1, 100, 0.01, 0.0, false), InvalidArgument);
  EXPECT_THROW(InverseTimeDecay(0.1, 100, -1.0, false), InvalidArgument);
  EXPECT_THROW(PiecewiseConstantDecay({100}, {0.1}), InvalidArgument);                 // one value short
  EXPECT_THROW(PiecewiseConstantDecay({200, 100}, {0.1, 0.01, 0.001}), InvalidArgument);  // not increasing
  try {
    PiecewiseConstantDecay({100}, {0.1});
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("one more entry than boundaries"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace nnfit
