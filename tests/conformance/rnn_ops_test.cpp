// Conformance of the recurrent scan (rnn, rnn_grad): oneDNN's GEMM under OpenMP against
// the reference's plain loops for every cell and option, and hand-computed sequences that
// check the reference itself (masking, go_backwards, zero_output_for_mask).
#include <cstring>

#include "conformance/harness.h"
#include "conformance/rnn_cases.h"

namespace nnfit {
namespace {

using testing::expect_matches_reference;
using testing::random_tensor;

using testing::rnn_desc;

// oneDNN's GEMM under OpenMP against the reference scan, every case of rnn_cases.h.
TEST(OnednnRnn, EveryCellAndOptionForwardAndBackward) {
  for (const testing::RnnCase& c : testing::rnn_conformance_cases(16, 7, 20)) {
    SCOPED_TRACE(c.name);
    expect_matches_reference(c.forward, c.forward_inputs, 1e-4f, 1e-4f);
    expect_matches_reference(c.grad, c.grad_inputs, 2e-4f, 2e-4f);
  }
}

// recurrent_dropout: a linear SimpleRNN with U = I and no input, started from h0 = 1, gives
// h = h0 · factor: each (sample, unit) kept (1 / (1 − rate)) or dropped (0), a rate's share
// dropped, the same factors at every step of a run (h after two steps is factor²), the same
// again for the same step and others at another step.
TEST(RefRnn, RecurrentDropoutDropsEachUnitOnceForTheSequence) {
  const std::int64_t n = 32, h = 32, t = 2;
  const double rate = 0.25;
  Tensor xw = Tensor::zeros(Shape{n, t, h}), u = Tensor::zeros(Shape{h, h}), h0 = Tensor::zeros(Shape{n, h});
  for (std::int64_t j = 0; j < h; ++j) u.data<float>()[j * h + j] = 1.0f;
  std::fill(h0.data<float>(), h0.data<float>() + n * h, 1.0f);
  Attrs a{{"cell", std::string("simple_rnn")}, {"activation", std::string("linear")},
          {"recurrent_activation", std::string("sigmoid")}, {"initial_state", std::int64_t{1}},
          {"recurrent_dropout", rate}, {"recurrent_seed", std::int64_t{3}}};
  const KernelDesc d = rnn_desc("rnn", a, {Shape{n, t, h}, Shape{h, h}, Shape{n, h}}, {Shape{n, t, h}, Shape{n, h}, Shape{n, t, 2 * h}});
  std::string why;
  auto k = kernel_registry().create("ref:rnn", d, DeviceType::cpu, &why);
  ASSERT_NE(k, nullptr) << why;
  StepContext ctx;
  ctx.seed = 1;
  ctx.step = 4;
  const std::vector<Tensor> out = testing::run_kernel(*k, d, {xw, u, h0}, ctx);
  const float keep = static_cast<float>(1.0 / (1.0 - rate));
  std::int64_t dropped = 0;
  for (std::int64_t i = 0; i < n * h; ++i) {
    const float f = out[0].data<float>()[(i / h) * t * h + i % h];  // step 0: h0 · factor
    ASSERT_TRUE(f == 0.0f || std::abs(f - keep) < 1e-6f) << f;
    dropped += f == 0.0f;
    EXPECT_FLOAT_EQ(out[1].data<float>()[i], f * f) << "the second step reuses the factors";
  }
  EXPECT_NEAR(static_cast<double>(dropped) / static_cast<double>(n * h), rate, 0.04);
  EXPECT_EQ(testing::run_kernel(*k, d, {xw, u, h0}, ctx)[1].data<float>()[5], out[1].data<float>()[5]);
  ctx.step = 5;
  const std::vector<Tensor> other = testing::run_kernel(*k, d, {xw, u, h0}, ctx);
  EXPECT_NE(0, std::memcmp(other[1].raw(), out[1].raw(), other[1].nbytes())) << "a new step draws anew";
}

// SimpleRNN, one unit, linear: h_s = xw_t + 0.5 h_{s-1}; a masked step keeps h and outputs
// the previous output (or zero).
TEST(RefRnn, HandComputedMaskAndDirection) {
  Tensor xw = Tensor::zeros(Shape{1, 3, 1}), u = Tensor::zeros(Shape{1, 1}), mask = Tensor::zeros(Shape{1, 3});
  const float xs[] = {1, 2, 3}, ms[] = {1, 0, 1};
  std::copy(std::begin(xs), std::end(xs), xw.data<float>());
  std::copy(std::begin(ms), std::end(ms), mask.data<float>());
  u.data<float>()[0] = 0.5f;
  struct Want {
    int go_backwards, zero_output;  // go_backwards 2: backwards with outputs in time order
    float y[3], h;
  };
  for (const Want& w : {Want{0, 0, {1, 1, 3.5f}, 3.5f}, Want{1, 0, {3, 3, 2.5f}, 2.5f}, Want{1, 1, {3, 0, 2.5f}, 2.5f},
                        Want{2, 0, {2.5f, 3, 3}, 2.5f}}) {
    Attrs a{{"cell", std::string("simple_rnn")}, {"activation", std::string("linear")},
            {"time_order_output", std::int64_t{w.go_backwards == 2}},
            {"recurrent_activation", std::string("sigmoid")}, {"mask", std::int64_t{1}},
            {"go_backwards", std::int64_t{w.go_backwards != 0}}, {"zero_output_for_mask", std::int64_t{w.zero_output}}};
    const KernelDesc d = rnn_desc("rnn", a, {Shape{1, 3, 1}, Shape{1, 1}, Shape{1, 3}}, {Shape{1, 3, 1}, Shape{1, 1}, Shape{1, 3, 2}});
    std::string why;
    auto k = kernel_registry().create("ref:rnn", d, DeviceType::cpu, &why);
    ASSERT_NE(k, nullptr) << why;
    const std::vector<Tensor> out = testing::run_kernel(*k, d, {xw, u, mask}, StepContext{});
    for (int s = 0; s < 3; ++s) EXPECT_FLOAT_EQ(out[0].data<float>()[s], w.y[s]) << "step " << s;
    EXPECT_FLOAT_EQ(out[1].data<float>()[0], w.h);
  }
}

// One LSTM step from zero states: c = sigmoid(i) tanh(c~), h = sigmoid(o) tanh(c).
TEST(RefRnn, HandComputedLstmStep) {
  Tensor xw = Tensor::zeros(Shape{1, 1, 4}), u = Tensor::zeros(Shape{1, 4});
  const float pre[] = {0.3f, -1.0f, 0.7f, 1.2f};
  std::copy(std::begin(pre), std::end(pre), xw.data<float>());
  Attrs a{{"cell", std::string("lstm")}, {"activation", std::string("tanh")}, {"recurrent_activation", std::string("sigmoid")}};
  const KernelDesc d = rnn_desc("rnn", a, {Shape{1, 1, 4}, Shape{1, 4}}, {Shape{1, 1, 1}, Shape{1, 1}, Shape{1, 1}, Shape{1, 1, 6}});
  std::string why;
  auto k = kernel_registry().create("ref:rnn", d, DeviceType::cpu, &why);
  ASSERT_NE(k, nullptr) << why;
  const std::vector<Tensor> out = testing::run_kernel(*k, d, {xw, u}, StepContext{});
  auto sigmoid = [](double x) { return 1.0 / (1.0 + std::exp(-x)); };
  const double c = sigmoid(0.3) * std::tanh(0.7), h = sigmoid(1.2) * std::tanh(c);
  EXPECT_NEAR(out[0].data<float>()[0], h, 1e-6);
  EXPECT_NEAR(out[1].data<float>()[0], h, 1e-6);
  EXPECT_NEAR(out[2].data<float>()[0], c, 1e-6);
}

}  // namespace
}  // namespace nnfit
