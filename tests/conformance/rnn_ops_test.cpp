// Conformance of the recurrent scan (rnn, rnn_grad): oneDNN's GEMM under OpenMP against
// the reference's plain loops for every cell and option, and hand-computed sequences that
// check the reference itself (masking, go_backwards, zero_output_for_mask).
#include <cstring>

#include "conformance/harness.h"

namespace nnfit {
namespace {

using testing::expect_matches_reference;
using testing::random_tensor;

struct Cell {
  const char* name;
  std::int64_t gates;
  bool reset_after;
  std::int64_t saved;  // per step, in units
};

const Cell kCells[] = {{"simple_rnn", 1, false, 2}, {"lstm", 4, false, 6}, {"gru", 3, true, 5}, {"gru", 3, false, 5}};

KernelDesc desc(const std::string& op, Attrs attrs, const std::vector<Shape>& ins, const std::vector<Shape>& outs) {
  KernelDesc d;
  d.op = op;
  d.attrs = std::move(attrs);
  for (const Shape& s : ins) d.inputs.push_back({s, DType::f32});
  for (const Shape& s : outs) d.outputs.push_back({s, DType::f32});
  d.node_name = "test/" + op;
  return d;
}

Tensor mask_of(std::int64_t n, std::int64_t t, std::uint64_t seed) {
  Tensor m = random_tensor(Shape{n, t}, seed);
  for (std::int64_t i = 0; i < m.numel(); ++i) m.data<float>()[i] = m.data<float>()[i] > -0.4f ? 1.0f : 0.0f;
  return m;
}

TEST(OnednnRnn, EveryCellAndOptionForwardAndBackward) {
  const std::int64_t n = 16, t = 7, h = 20;
  for (const Cell& cell : kCells) {
    const bool lstm = std::string(cell.name) == "lstm";
    const std::int64_t g = cell.gates * h, states = lstm ? 2 : 1;
    for (int variant = 0; variant < 3; ++variant) {
      SCOPED_TRACE(std::string(cell.name) + (cell.reset_after ? " reset_after" : "") + " variant " +
                   std::to_string(variant));
      const bool masked = variant >= 1, initial = variant == 2;
      Attrs a{{"cell", std::string(cell.name)},
              {"activation", std::string(variant == 1 ? "relu" : "tanh")},
              {"recurrent_activation", std::string(variant == 2 ? "hard_sigmoid" : "sigmoid")},
              {"reset_after", std::int64_t{cell.reset_after}},
              {"go_backwards", std::int64_t{variant == 1}},
              {"time_order_output", std::int64_t{variant == 1}},
              {"mask", std::int64_t{masked}},
              {"zero_output_for_mask", std::int64_t{variant == 2}},
              {"initial_state", std::int64_t{initial}},
              {"recurrent_dropout", variant == 2 ? 0.3 : 0.0},
              {"recurrent_seed", std::int64_t{9}}};
      std::vector<Shape> ins{Shape{n, t, g}, Shape{h, g}};
      std::vector<Tensor> vals{random_tensor(ins[0], 1), random_tensor(ins[1], 2, -0.3f, 0.3f)};
      if (cell.reset_after) {
        ins.push_back(Shape{g});
        vals.push_back(random_tensor(ins.back(), 3));
      }
      if (masked) {
        ins.push_back(Shape{n, t});
        vals.push_back(mask_of(n, t, 4));
      }
      for (std::int64_t s = 0; initial && s < states; ++s) {
        ins.push_back(Shape{n, h});
        vals.push_back(random_tensor(ins.back(), 5 + static_cast<std::uint64_t>(s)));
      }
      std::vector<Shape> outs{Shape{n, t, h}, Shape{n, h}};
      if (lstm) outs.push_back(Shape{n, h});
      outs.push_back(Shape{n, t, cell.saved * h});
      expect_matches_reference(desc("rnn", a, ins, outs), vals, 1e-4f, 1e-4f);

      // Backward from every output gradient: U, [mask], [initial states], saved, dy, dh, [dc].
      Attrs ga = a;
      ga.set("has_dy", std::int64_t{1});
      ga.set("has_dh", std::int64_t{1});
      ga.set("has_dc", std::int64_t{lstm});
      std::vector<Shape> gins{Shape{h, g}};
      std::vector<Tensor> gvals{vals[1]};
      for (std::size_t i = cell.reset_after ? 3 : 2; i < vals.size(); ++i) {
        gins.push_back(ins[i]);
        gvals.push_back(vals[i]);
      }
      gins.push_back(outs.back());
      gvals.push_back(random_tensor(outs.back(), 6, -0.8f, 0.8f));
      for (std::int64_t k = 0; k < 1 + states; ++k) {
        gins.push_back(outs[static_cast<std::size_t>(k)]);
        gvals.push_back(random_tensor(gins.back(), 7 + static_cast<std::uint64_t>(k)));
      }
      std::vector<Shape> gouts{Shape{n, t, g}, Shape{h, g}};
      if (cell.reset_after) gouts.push_back(Shape{g});
      for (std::int64_t s = 0; initial && s < states; ++s) gouts.push_back(Shape{n, h});
      expect_matches_reference(desc("rnn_grad", ga, gins, gouts), gvals, 2e-4f, 2e-4f);
    }
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
  const KernelDesc d = desc("rnn", a, {Shape{n, t, h}, Shape{h, h}, Shape{n, h}}, {Shape{n, t, h}, Shape{n, h}, Shape{n, t, 2 * h}});
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
    const KernelDesc d = desc("rnn", a, {Shape{1, 3, 1}, Shape{1, 1}, Shape{1, 3}}, {Shape{1, 3, 1}, Shape{1, 1}, Shape{1, 3, 2}});
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
  const KernelDesc d = desc("rnn", a, {Shape{1, 1, 4}, Shape{1, 4}}, {Shape{1, 1, 1}, Shape{1, 1}, Shape{1, 1}, Shape{1, 1, 6}});
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
