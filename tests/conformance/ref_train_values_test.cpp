// Hand-computed values for the reference kernels of the training ops (ref:<op>), which
// every fast kernel is compared against, so they must be right on their own: losses on
// small known inputs, one or two optimizer steps worked out by hand (Keras 3 formulas),
// batch norm statistics, dropout's mask statistics and determinism, bad labels; resize
// against the numbers TensorFlow's tf.image.resize gives.
#include <gtest/gtest.h>
#include <tuple>
#include <cstring>
#include <random>

#include <cmath>
#include <utility>

#include "conformance/harness.h"
#include "nnfit/core/error.h"

namespace nnfit {
namespace {

Tensor make(const Shape& shape, std::vector<float> values) {
  Tensor t = Tensor::zeros(shape, DType::f32);
  EXPECT_EQ(static_cast<std::int64_t>(values.size()), t.numel());
  for (std::size_t i = 0; i < values.size(); ++i) t.data<float>()[i] = values[i];
  return t;
}

Tensor labels(std::vector<std::int32_t> values) {
  Tensor t = Tensor::zeros(Shape{static_cast<std::int64_t>(values.size())}, DType::i32);
  for (std::size_t i = 0; i < values.size(); ++i) t.data<std::int32_t>()[i] = values[i];
  return t;
}

// Runs ref:<op>; returns its outputs followed by the inputs after the run.
std::vector<Tensor> run_ref(const std::string& op, Attrs attrs, const std::vector<Tensor>& inputs,
                            std::vector<TensorDesc> outputs, StepContext ctx = {}) {
  KernelDesc desc{op, std::move(attrs), {}, std::move(outputs), "values/" + op};
  for (const Tensor& t : inputs) desc.inputs.push_back(t.desc());
  std::string why;
  auto k = kernel_registry().create("ref:" + op, desc, DeviceType::cpu, &why);
  EXPECT_NE(k, nullptr) << why;
  if (!k) return {};
  return testing::run_kernel(*k, desc, inputs, ctx);
}

const TensorDesc kScalar{Shape{}, DType::f32};

float loss_of(const std::string& kind, int from_logits, const Tensor& pred, const Tensor& target) {
  Attrs a{{"kind", kind}, {"from_logits", std::int64_t{from_logits}}};
  return *run_ref("loss", a, {pred, target}, {kScalar})[0].data<float>();
}

Tensor loss_grad_of(const std::string& kind, int from_logits, const Tensor& pred, const Tensor& target,
                    float dloss) {
  Attrs a{{"kind", kind}, {"from_logits", std::int64_t{from_logits}}};
  return run_ref("loss_grad", a, {pred, target, make(Shape{}, {dloss})}, {pred.desc()})[0];
}

void expect_values(const Tensor& t, std::vector<float> want, float tol, const std::string& what) {
  ASSERT_EQ(t.numel(), static_cast<std::int64_t>(want.size())) << what;
  for (std::size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(t.data<float>()[i], want[i], tol) << what << " [" << i << "]";
}

TEST(RefTrainValues, SparseCrossentropy) {
  const float ln3 = std::log(3.0f);
  // Row 0: logsumexp(0, ln 3) − ln 3 = ln 4 − ln 3; row 1: ln 4 − 0.
  Tensor z = make(Shape{2, 2}, {0.0f, ln3, ln3, 0.0f});
  Tensor y = labels({1, 1});
  EXPECT_NEAR(loss_of("sparse_categorical_crossentropy", 1, z, y), 0.8369882f, 1e-6f);
  // (softmax − onehot)·dloss/N: row 0 [1/4, 3/4] − [0, 1], row 1 [3/4, 1/4] − [0, 1].
  expect_values(loss_grad_of("sparse_categorical_crossentropy", 1, z, y, 1.0f), {0.125f, -0.125f, 0.375f, -0.375f},
                1e-6f, "sparse logits grad");
  Tensor p = make(Shape{2, 2}, {0.2f, 0.8f, 1.0f, 0.0f});
  // −ln 0.8 and −ln clip(0) = −ln 1e-7, averaged; the clipped row has zero gradient.
  EXPECT_NEAR(loss_of("sparse_categorical_crossentropy", 0, p, y), (0.2231436f + 16.118096f) / 2, 1e-5f);
  expect_values(loss_grad_of("sparse_categorical_crossentropy", 0, p, y, 2.0f), {0.0f, -1.25f, 0.0f, 0.0f}, 1e-6f,
                "sparse probs grad");
}

TEST(RefTrainValues, SparseCrossentropyRejectsBadLabel) {
  Tensor z = make(Shape{3, 3}, {0, 0, 0, 0, 0, 0, 0, 0, 0});
  for (std::int32_t bad : {3, -1}) {
    try {
      loss_of("sparse_categorical_crossentropy", 1, z, labels({0, 2, bad}));
      ADD_FAILURE() << "label " << bad << " accepted";
    } catch (const InvalidArgument& e) {
      std::string msg = e.what();
      EXPECT_NE(msg.find("label " + std::to_string(bad) + " in row 2"), std::string::npos) << msg;
      EXPECT_NE(msg.find("3 classes"), std::string::npos) << msg;
      EXPECT_NE(msg.find("values/loss"), std::string::npos) << msg;
    }
  }
  EXPECT_THROW(loss_grad_of("sparse_categorical_crossentropy", 0, z, labels({0, 7, 1}), 1.0f), InvalidArgument);
}

TEST(RefTrainValues, CategoricalCrossentropy) {
  Tensor t = make(Shape{1, 3}, {0.0f, 1.0f, 0.0f});
  Tensor p = make(Shape{1, 3}, {0.2f, 0.5f, 0.3f});
  EXPECT_NEAR(loss_of("categorical_crossentropy", 0, p, t), 0.6931472f, 1e-6f);
  expect_values(loss_grad_of("categorical_crossentropy", 0, p, t, 1.0f), {0.0f, -2.0f, 0.0f}, 1e-6f, "probs grad");
  // Uniform logits, soft target: −Σ t·log(1/2) = ln 2; grad softmax·Σt − t = 0.
  Tensor z = make(Shape{1, 2}, {0.0f, 0.0f});
  Tensor soft = make(Shape{1, 2}, {0.5f, 0.5f});
  EXPECT_NEAR(loss_of("categorical_crossentropy", 1, z, soft), 0.6931472f, 1e-6f);
  expect_values(loss_grad_of("categorical_crossentropy", 1, z, soft, 1.0f), {0.0f, 0.0f}, 1e-7f, "logits grad");
}

TEST(RefTrainValues, BinaryCrossentropy) {
  // z = 0, t = 1: ln 2; z = 2, t = 0: 2 + ln(1 + e^−2). One sample, mean of the two.
  Tensor z = make(Shape{1, 2}, {0.0f, 2.0f});
  Tensor t = make(Shape{1, 2}, {1.0f, 0.0f});
  EXPECT_NEAR(loss_of("binary_crossentropy", 1, z, t), 1.4100376f, 1e-6f);
  // (sigmoid(z) − t)/2: (0.5 − 1)/2 and 0.8807971/2.
  expect_values(loss_grad_of("binary_crossentropy", 1, z, t, 1.0f), {-0.25f, 0.4403985f}, 1e-6f, "logits grad");
  Tensor p = make(Shape{2}, {0.5f, 0.25f});
  Tensor t2 = make(Shape{2}, {1.0f, 0.0f});
  // −ln 0.5 and −ln 0.75, averaged over the batch of 2.
  EXPECT_NEAR(loss_of("binary_crossentropy", 0, p, t2), (0.6931472f + 0.2876821f) / 2, 1e-6f);
  // (−t/p + (1−t)/(1−p))/N: −2/2 and (1/0.75)/2.
  expect_values(loss_grad_of("binary_crossentropy", 0, p, t2, 1.0f), {-1.0f, 0.6666667f}, 1e-6f, "probs grad");
}

TEST(RefTrainValues, MeanSquaredError) {
  Tensor p = make(Shape{2, 2}, {1, 2, 3, 4});
  Tensor t = make(Shape{2, 2}, {0, 2, 5, 4});
  // Per-sample means (1 + 0)/2 and (4 + 0)/2, then the batch mean: 1.25.
  EXPECT_NEAR(loss_of("mean_squared_error", 0, p, t), 1.25f, 1e-7f);
  // 2(p − t)·dloss/numel with dloss = 2.
  expect_values(loss_grad_of("mean_squared_error", 0, p, t, 2.0f), {1.0f, 0.0f, -2.0f, 0.0f}, 1e-7f, "grad");
}

TEST(RefTrainValues, AdamFirstStepMovesByLearningRate) {
  StepContext ctx;
  ctx.learning_rate = 0.001f;
  ctx.step = 0;
  Attrs a{{"beta_1", 0.9}, {"beta_2", 0.999}, {"epsilon", 1e-7}, {"weight_decay", 0.0}};
  Tensor zeros = make(Shape{2}, {0, 0});
  auto out = run_ref("adam_update", a, {make(Shape{2}, {1, 1}), make(Shape{2}, {0.5f, -2.0f}), zeros, zeros}, {}, ctx);
  // From zero state Keras's bias correction makes the step lr·sign(g) (less a hair for ε).
  expect_values(out[0], {0.99900001f, 1.00099999f}, 1e-7f, "param");
  expect_values(out[2], {0.05f, -0.2f}, 1e-7f, "m");
  expect_values(out[3], {0.00025f, 0.004f}, 1e-8f, "v");
}

TEST(RefTrainValues, AdamWDecaysDecoupledFromGradient) {
  StepContext ctx;
  ctx.learning_rate = 0.01f;
  ctx.step = 3;
  Attrs a{{"beta_1", 0.9}, {"beta_2", 0.999}, {"epsilon", 1e-7}, {"weight_decay", 0.1}};
  Tensor zeros = make(Shape{1}, {0});
  // g = 0 and zero moments: only the decay p −= lr·wd·p = 2 − 0.002 acts.
  auto out = run_ref("adam_update", a, {make(Shape{1}, {2.0f}), zeros, zeros, zeros}, {}, ctx);
  expect_values(out[0], {1.998f}, 1e-7f, "param");
}

TEST(RefTrainValues, AmsgradStepsWithTheLargestSecondMoment) {
  StepContext ctx;
  ctx.learning_rate = 0.01f;
  ctx.step = 0;
  Attrs a{{"beta_1", 0.9}, {"beta_2", 0.999}, {"epsilon", 1e-7}, {"weight_decay", 0.0}, {"amsgrad", std::int64_t{1}}};
  Tensor zeros = make(Shape{1}, {0});
  // m = 0.05, v = 0.00025 < v_hat 0.3, kept; α = 0.01·√0.001/0.1; p = 1 − α·0.05/√0.3.
  auto out = run_ref("adam_update", a, {make(Shape{1}, {1}), make(Shape{1}, {0.5f}), zeros, zeros, make(Shape{1}, {0.3f})},
                     {}, ctx);
  expect_values(out[0], {0.99971132f}, 1e-7f, "param");
  expect_values(out[3], {0.00025f}, 1e-9f, "v");
  expect_values(out[4], {0.3f}, 1e-9f, "v_hat");
  // A larger v replaces v_hat.
  out = run_ref("adam_update", a, {make(Shape{1}, {1}), make(Shape{1}, {0.5f}), zeros, zeros, zeros}, {}, ctx);
  expect_values(out[4], {0.00025f}, 1e-9f, "v_hat");
  EXPECT_THROW(run_ref("adam_update", a, {make(Shape{1}, {1}), zeros, zeros, zeros}, {}, ctx), InvalidArgument);
}

TEST(RefTrainValues, CenteredRmspropDividesByTheVariance) {
  StepContext ctx;
  ctx.learning_rate = 0.01f;
  // v = 0.4, average = 0.2: inc = 0.01·2/√(0.4 − 0.04 + 1e-7) = 0.0333333.
  Attrs centered{{"rho", 0.9}, {"momentum", 0.0}, {"epsilon", 1e-7}, {"centered", std::int64_t{1}}};
  Tensor zero = make(Shape{1}, {0});
  auto out = run_ref("rmsprop_update", centered, {make(Shape{1}, {1}), make(Shape{1}, {2}), zero, zero}, {}, ctx);
  expect_values(out[0], {0.96666667f}, 1e-7f, "param");
  expect_values(out[3], {0.2f}, 1e-7f, "average gradient");
  // With momentum the average gradient is the 5th input: mo = 0.5·0.2 + inc.
  Attrs both{{"rho", 0.9}, {"momentum", 0.5}, {"epsilon", 1e-7}, {"centered", std::int64_t{1}}};
  out = run_ref("rmsprop_update", both, {make(Shape{1}, {1}), make(Shape{1}, {2}), zero, make(Shape{1}, {0.2f}), zero},
                {}, ctx);
  expect_values(out[0], {0.86666667f}, 1e-7f, "param");
  expect_values(out[3], {0.13333333f}, 1e-7f, "momentum");
  expect_values(out[4], {0.2f}, 1e-7f, "average gradient");
}

TEST(RefTrainValues, SgdAndMomentumTwoSteps) {
  StepContext ctx;
  ctx.learning_rate = 0.1f;
  auto sgd = run_ref("sgd_update", {}, {make(Shape{2}, {1, 1}), make(Shape{2}, {1, -3})}, {}, ctx);
  expect_values(sgd[0], {0.9f, 1.3f}, 1e-7f, "sgd");
  for (std::int64_t nesterov : {0, 1}) {
    Attrs a{{"momentum", 0.9}, {"nesterov", nesterov}};
    Tensor p = make(Shape{1}, {0}), g = make(Shape{1}, {1}), v = make(Shape{1}, {0});
    for (int step = 0; step < 2; ++step) {
      auto out = run_ref("sgd_momentum_update", a, {p, g, v}, {}, ctx);
      p = out[0];
      v = out[2];
    }
    // v: −0.1 then −0.19. Plain: p = v1 + v2 = −0.29. Nesterov: p += m·v − lr·g each step:
    // −0.19 then −0.19 − 0.271.
    expect_values(v, {-0.19f}, 1e-6f, "velocity");
    expect_values(p, {nesterov ? -0.461f : -0.29f}, 1e-6f, nesterov ? "nesterov" : "momentum");
  }
}

TEST(RefTrainValues, RmspropOneStep) {
  StepContext ctx;
  ctx.learning_rate = 0.01f;
  // v = 0.1·2² = 0.4; inc = 0.01·2/√(0.4 + 1e-7).
  Attrs plain{{"rho", 0.9}, {"momentum", 0.0}, {"epsilon", 1e-7}};
  auto out = run_ref("rmsprop_update", plain, {make(Shape{1}, {1}), make(Shape{1}, {2}), make(Shape{1}, {0})}, {}, ctx);
  expect_values(out[0], {0.96837723f}, 1e-7f, "param");
  expect_values(out[2], {0.4f}, 1e-7f, "velocity");
  // With momentum 0.5 and a momentum slot of 0.2: mo = 0.1 + inc.
  Attrs with_momentum{{"rho", 0.9}, {"momentum", 0.5}, {"epsilon", 1e-7}};
  out = run_ref("rmsprop_update", with_momentum,
                {make(Shape{1}, {1}), make(Shape{1}, {2}), make(Shape{1}, {0}), make(Shape{1}, {0.2f})}, {}, ctx);
  expect_values(out[0], {0.86837723f}, 1e-7f, "param");
  expect_values(out[3], {0.13162277f}, 1e-7f, "momentum");
}

TEST(RefTrainValues, BatchNormTrainNormalizes) {
  // One channel [1, 3]: mean 2, biased var 1, so y = gamma·[−1, 1] + beta.
  auto small = run_ref("batch_norm_train", {{"epsilon", 0.0}},
                       {make(Shape{2, 1}, {1, 3}), make(Shape{1}, {2}), make(Shape{1}, {1})},
                       {TensorDesc{Shape{2, 1}}, TensorDesc{Shape{1}}, TensorDesc{Shape{1}}});
  expect_values(small[0], {-1.0f, 3.0f}, 1e-6f, "y");
  expect_values(small[1], {2.0f}, 1e-7f, "mean");
  expect_values(small[2], {1.0f}, 1e-7f, "var");

  const Shape s{6, 5, 5, 3};
  Tensor x = testing::random_tensor(s, 7, -4.0f, 10.0f);
  auto out = run_ref("batch_norm_train", {{"epsilon", 1e-6}},
                     {x, make(Shape{3}, {1, 1, 1}), make(Shape{3}, {0, 0, 0})},
                     {x.desc(), TensorDesc{Shape{3}}, TensorDesc{Shape{3}}});
  const std::int64_t rows = s.numel() / 3;
  for (int c = 0; c < 3; ++c) {
    double mean = 0, sq = 0;
    for (std::int64_t r = 0; r < rows; ++r) {
      double v = out[0].data<float>()[r * 3 + c];
      mean += v;
      sq += v * v;
    }
    EXPECT_NEAR(mean / rows, 0.0, 1e-5) << "channel " << c;
    EXPECT_NEAR(sq / rows, 1.0, 1e-4) << "channel " << c;
  }
}

TEST(RefTrainValues, BatchNormGradOfConstantDyIsZero) {
  // dy = c everywhere: dbeta = c·M, dgamma = c·Σ xhat = 0, dx = 0.
  Tensor x = make(Shape{4, 1}, {1, 2, 3, 6});
  auto out = run_ref("batch_norm_grad", {{"epsilon", 1e-3}},
                     {x, make(Shape{4, 1}, {0.5f, 0.5f, 0.5f, 0.5f}), make(Shape{1}, {3}), make(Shape{1}, {3}),
                      make(Shape{1}, {3.5f})},
                     {x.desc(), TensorDesc{Shape{1}}, TensorDesc{Shape{1}}});
  expect_values(out[0], {0, 0, 0, 0}, 1e-6f, "dx");
  expect_values(out[1], {0.0f}, 1e-6f, "dgamma");
  expect_values(out[2], {2.0f}, 1e-6f, "dbeta");
}

TEST(RefTrainValues, BatchNormInferAndMovingAverage) {
  // (4 − 2)/√(3.999 + 0.001)·2 + 1 = 3.
  auto y = run_ref("batch_norm_infer", {{"epsilon", 1e-3}},
                   {make(Shape{1, 1}, {4}), make(Shape{1}, {2}), make(Shape{1}, {1}), make(Shape{1}, {2}),
                    make(Shape{1}, {3.999f})},
                   {TensorDesc{Shape{1, 1}}});
  expect_values(y[0], {3.0f}, 1e-6f, "y");
  auto m = run_ref("moving_average_update", {{"momentum", 0.9}}, {make(Shape{2}, {1, 0}), make(Shape{2}, {3, 10})}, {});
  expect_values(m[0], {1.2f, 1.0f}, 1e-6f, "moving");
}

TEST(RefTrainValues, DropoutKeepsAboutOneMinusRateAndIsDeterministic) {
  const std::int64_t n = 20000;
  Tensor x = testing::random_tensor(Shape{n}, 3, 1.0f, 2.0f);
  Attrs a{{"rate", 0.3}, {"seed", std::int64_t{17}}};
  std::vector<TensorDesc> outs{x.desc(), TensorDesc{Shape{n}, DType::u8}};
  StepContext ctx;
  ctx.seed = 99;
  ctx.step = 5;
  auto first = run_ref("dropout", a, {x}, outs, ctx);
  std::int64_t kept = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    std::uint8_t keep = first[1].data<std::uint8_t>()[i];
    float want = keep ? x.data<float>()[i] / 0.7f : 0.0f;
    ASSERT_NEAR(first[0].data<float>()[i], want, 1e-6f) << i;
    kept += keep;
  }
  EXPECT_NEAR(static_cast<double>(kept) / n, 0.7, 0.02);
  auto again = run_ref("dropout", a, {x}, outs, ctx);
  testing::expect_close(first[1], again[1], 0, 0, "same seed and step");
  ctx.step = 6;
  auto next = run_ref("dropout", a, {x}, outs, ctx);
  EXPECT_NE(0, std::memcmp(first[1].raw(), next[1].raw(), static_cast<std::size_t>(n))) << "step 6 reused step 5's mask";
  auto none = run_ref("dropout", {{"rate", 0.0}, {"seed", std::int64_t{17}}}, {x}, outs, ctx);
  testing::expect_close(x, none[0], 0, 0, "rate 0 is identity");
  // dropout_grad: dy/(1 − rate) where the mask kept, else 0.
  auto dx = run_ref("dropout_grad", {{"rate", 0.5}}, {make(Shape{2}, {3, 4}), first[1].reshape(Shape{n}).slice_rows(0, 2)},
                    {TensorDesc{Shape{2}}});
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(dx[0].data<float>()[i], first[1].data<std::uint8_t>()[i] ? (3.0f + i) * 2.0f : 0.0f);
  }
  EXPECT_THROW(run_ref("dropout", {{"rate", 1.0}, {"seed", std::int64_t{1}}}, {x}, outs, ctx), InvalidArgument);
}

TEST(RefTrainValues, BiasAddGradAndAddN) {
  Tensor x = make(Shape{2, 3}, {1, 2, 3, 4, 5, 6});
  auto y = run_ref("bias_add", {}, {x, make(Shape{3}, {10, 20, 30})}, {x.desc()});
  expect_values(y[0], {11, 22, 33, 14, 25, 36}, 0, "bias_add");
  auto db = run_ref("bias_add_grad", {}, {x}, {TensorDesc{Shape{3}}});
  expect_values(db[0], {5, 7, 9}, 0, "bias_add_grad");
  auto sum = run_ref("add_n", {}, {x, x, make(Shape{2, 3}, {-1, -1, -1, -1, -1, -1})}, {x.desc()});
  expect_values(sum[0], {1, 3, 5, 7, 9, 11}, 0, "add_n");
}

// gather picks rows (float ids truncated, as Keras casts them); gather_grad adds repeated
// ids' rows; an id outside the table is a DataError naming the node and the id.
TEST(RefTrainValues, GatherAndItsGradient) {
  Tensor table = make(Shape{3, 2}, {1, 2, 3, 4, 5, 6});
  Tensor ids = labels({2, 0, 2});
  auto y = run_ref("gather", {}, {table, ids}, {TensorDesc{Shape{3, 2}}});
  expect_values(y[0], {5, 6, 1, 2, 5, 6}, 0, "gather");
  auto fy = run_ref("gather", {}, {table, make(Shape{2}, {1.9f, 0.0f})}, {TensorDesc{Shape{2, 2}}});
  expect_values(fy[0], {3, 4, 1, 2}, 0, "gather float ids");
  auto dt = run_ref("gather_grad", {{"rows", std::int64_t{3}}}, {ids, make(Shape{3, 2}, {1, 1, 2, 3, 10, 20})},
                    {TensorDesc{Shape{3, 2}}});
  expect_values(dt[0], {2, 3, 0, 0, 11, 21}, 0, "gather_grad");
  try {
    run_ref("gather", {}, {table, labels({1, 3})}, {TensorDesc{Shape{2, 2}}});
    ADD_FAILURE() << "an id past the table was accepted";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("values/gather: id 3 at position 1 of the batch is outside [0, 3)"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(run_ref("gather", {}, {table, make(Shape{1}, {-1.0f})}, {TensorDesc{Shape{1, 2}}}), DataError);
}

// sequence_mask from ids (id != 0) and from features (any != mask_value); masked_mean
// averages the present steps only.
TEST(RefTrainValues, MaskOps) {
  auto ids = run_ref("sequence_mask", {{"value", 0.0}}, {labels({3, 0, 7, 0})}, {TensorDesc{Shape{4}}});
  expect_values(ids[0], {1, 0, 1, 0}, 0, "sequence_mask ids");
  Tensor x = make(Shape{1, 3, 2}, {0, 0, 2, 0, 0, -1});
  auto steps = run_ref("sequence_mask", {{"value", 0.0}, {"reduce_last", std::int64_t{1}}}, {x}, {TensorDesc{Shape{1, 3}}});
  expect_values(steps[0], {0, 1, 1}, 0, "sequence_mask steps");
  auto y = run_ref("apply_mask", {}, {make(Shape{1, 3, 2}, {1, 2, 3, 4, 5, 6}), steps[0]}, {TensorDesc{Shape{1, 3, 2}}});
  expect_values(y[0], {0, 0, 3, 4, 5, 6}, 0, "apply_mask");
  auto mean = run_ref("masked_mean", {}, {make(Shape{1, 3, 2}, {100, 100, 3, 4, 5, 6}), steps[0]}, {TensorDesc{Shape{1, 2}}});
  expect_values(mean[0], {4, 5}, 1e-6f, "masked_mean");
}

// attention_mask ANDs the query and value masks, an explicit mask and the causal band;
// masked_softmax is Keras's Softmax with that mask: masked scores get nothing, a row with
// no key left is uniform (Keras's dot_product_attention) or zero (its Softmax layer, with
// zero_masked_rows), and each of the heads reads its sample's mask.
TEST(RefTrainValues, AttentionMaskAndMaskedSoftmax) {
  Attrs a{{"query_len", std::int64_t{2}}, {"key_len", std::int64_t{3}}, {"has_query_mask", std::int64_t{1}},
          {"has_value_mask", std::int64_t{1}}, {"has_attention_mask", std::int64_t{1}}, {"causal", std::int64_t{1}}};
  auto m = run_ref("attention_mask", a,
                   {make(Shape{1, 2}, {1, 1}), make(Shape{1, 3}, {1, 1, 0}), make(Shape{1, 2, 3}, {1, 1, 1, 0, 1, 1})},
                   {TensorDesc{Shape{1, 2, 3}}});
  expect_values(m[0], {1, 0, 0, 0, 1, 0}, 0, "attention_mask");
  auto band = run_ref("attention_mask", {{"query_len", std::int64_t{3}}, {"key_len", std::int64_t{3}}, {"window", std::int64_t{2}}},
                      {}, {TensorDesc{Shape{1, 3, 3}}});
  expect_values(band[0], {1, 1, 0, 1, 1, 1, 0, 1, 1}, 0, "window band");
  Tensor mask = make(Shape{1, 2, 3}, {1, 1, 0, 0, 0, 0});
  Tensor x = make(Shape{2, 2, 3}, {0, std::log(3.0f), 50, 1, 2, 3, 1, 1, 7, 0, 0, 0});
  auto y = run_ref("masked_softmax", {}, {x, mask}, {TensorDesc{Shape{2, 2, 3}}});
  const float third = 1.0f / 3.0f;
  expect_values(y[0], {0.25f, 0.75f, 0, third, third, third, 0.5f, 0.5f, 0, third, third, third}, 1e-6f,
                "masked_softmax");
  auto z = run_ref("masked_softmax", {{"zero_masked_rows", std::int64_t{1}}}, {x, mask}, {TensorDesc{Shape{2, 2, 3}}});
  expect_values(z[0], {0.25f, 0.75f, 0, 0, 0, 0, 0.5f, 0.5f, 0, 0, 0, 0}, 1e-6f, "masked_softmax zeroed rows");
}

// Keras's gradient clipping: a 3-4-0 gradient (norm 5) clipped to norm 1 is 0.6-0.8-0,
// one of norm 0.5 stays; clip_by_value clips each element; the global scale of gradients
// with norm 13 (5 and 12) for clipnorm 6.5 is 0.5, and 1 when under the limit.
TEST(RefTrainValues, GradientClipping) {
  Tensor g = make(Shape{3}, {3, 4, 0});
  expect_values(run_ref("clip_by_norm", {{"clipnorm", 1.0}}, {g}, {TensorDesc{Shape{3}}})[0], {0.6f, 0.8f, 0}, 1e-7f,
                "clip_by_norm");
  expect_values(run_ref("clip_by_norm", {{"clipnorm", 10.0}}, {g}, {TensorDesc{Shape{3}}})[0], {3, 4, 0}, 1e-7f,
                "clip_by_norm under the limit");
  expect_values(run_ref("clip_by_value", {{"clipvalue", 3.5}}, {make(Shape{3}, {-5, 2, 4})}, {TensorDesc{Shape{3}}})[0],
                {-3.5f, 2, 3.5f}, 0, "clip_by_value");
  Tensor a = make(Shape{2}, {3, 4}), b = make(Shape{1}, {12});
  expect_values(run_ref("global_norm_scale", {{"clipnorm", 6.5}}, {a, b}, {TensorDesc{Shape{}}})[0], {0.5f}, 1e-7f,
                "global_norm_scale");
  expect_values(run_ref("global_norm_scale", {{"clipnorm", 20.0}}, {a, b}, {TensorDesc{Shape{}}})[0], {1.0f}, 1e-7f,
                "global_norm_scale under the limit");
}

// Loss scaling's unscale: a gradient scaled by 4 comes back exact with the flag 0; one
// whose unscaled value overflows (1e38 / 0.25), or holds a NaN or an infinity, sets it.
TEST(RefTrainValues, UnscaleGradient) {
  const std::vector<TensorDesc> outs = {TensorDesc{Shape{3}}, TensorDesc{Shape{}}};
  auto clean = run_ref("unscale_gradient", {}, {make(Shape{3}, {3, -6, 1.5f}), make(Shape{}, {4})}, outs);
  expect_values(clean[0], {0.75f, -1.5f, 0.375f}, 0, "unscale_gradient");
  expect_values(clean[1], {0}, 0, "unscale_gradient's flag");
  auto over = run_ref("unscale_gradient", {}, {make(Shape{3}, {1, 1e38f, 2}), make(Shape{}, {0.25f})}, outs);
  EXPECT_TRUE(std::isinf(over[0].data<float>()[1]));
  expect_values(over[1], {1}, 0, "unscale_gradient's flag on an overflow");
  for (float bad : {std::nanf(""), -INFINITY}) {
    auto r = run_ref("unscale_gradient", {}, {make(Shape{3}, {1, 2, bad}), make(Shape{}, {2})}, outs);
    expect_values(r[1], {1}, 0, "unscale_gradient's flag on a non-finite gradient");
  }
}

// A micro-batch's accumulation: sum += g · (weight / divisor), here 2 · 3/12 = 0.5 of g
// onto 1; the flag is 0, and 1 once an element of the sum is not finite (a NaN in g, or a
// sum that overflows although each product does not).
TEST(RefTrainValues, AccumulateGradient) {
  const std::vector<TensorDesc> outs = {TensorDesc{Shape{}}};
  const Attrs w{{"weight", 3.0}};
  // run_ref gives the flag, then the inputs after the run: the sum is [3].
  auto r = run_ref("accumulate_gradient", w, {make(Shape{3}, {4, -2, 1}), make(Shape{}, {12}), make(Shape{3}, {1, 1, 1})},
                   outs);
  ASSERT_EQ(r.size(), 4u);
  expect_values(r[3], {2, 0.5f, 1.25f}, 0, "accumulate_gradient's sum");
  expect_values(r[0], {0}, 0, "accumulate_gradient's flag");
  r = run_ref("accumulate_gradient", w, {make(Shape{3}, {1, std::nanf(""), 1}), make(Shape{}, {3}), make(Shape{3}, {0, 0, 0})},
              outs);
  expect_values(r[0], {1}, 0, "the flag of a NaN");
  r = run_ref("accumulate_gradient", w, {make(Shape{2}, {3e38f, 1}), make(Shape{}, {3}), make(Shape{2}, {3e38f, 0})}, outs);
  expect_values(r[0], {1}, 0, "the flag of an overflowing sum");
}

// The noise op's draws have the moments Keras's layers promise: GaussianNoise adds N(0, σ),
// GaussianDropout multiplies by N(1, rate / (1 − rate)), AlphaDropout keeps 1 − rate of a
// standard normal input and keeps its mean 0 and variance 1; a step repeats its draws and
// the next step draws anew.
TEST(RefTrainValues, NoiseMoments) {
  const std::int64_t n = 200000;
  Tensor x = Tensor::zeros(Shape{n});
  std::mt19937_64 rng(5);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (std::int64_t i = 0; i < n; ++i) x.data<float>()[i] = normal(rng);
  const auto moments = [&](const Tensor& t) {
    double s = 0, q = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      s += t.data<float>()[i];
      q += static_cast<double>(t.data<float>()[i]) * t.data<float>()[i];
    }
    return std::pair<double, double>{s / n, q / n - (s / n) * (s / n)};
  };
  Attrs add{{"kind", std::string("gaussian_add")}, {"value", 0.5}, {"seed", std::int64_t{3}}};
  Tensor zero = Tensor::zeros(Shape{n});
  auto [m, v] = moments(run_ref("noise", add, {zero}, {TensorDesc{Shape{n}}})[0]);
  EXPECT_NEAR(m, 0.0, 0.01);
  EXPECT_NEAR(v, 0.25, 0.01);
  // keras.random.uniform and truncated_normal in a traced call: x + value·draw.
  Attrs uniform{{"kind", std::string("uniform_add")}, {"value", 2.0}, {"seed", std::int64_t{3}}};
  const Tensor u = run_ref("noise", uniform, {zero}, {TensorDesc{Shape{n}}})[0];
  std::tie(m, v) = moments(u);
  EXPECT_NEAR(m, 1.0, 0.01);
  EXPECT_NEAR(v, 4.0 / 12.0, 0.01);
  for (std::int64_t i = 0; i < n; ++i) ASSERT_TRUE(u.data<float>()[i] >= 0.0f && u.data<float>()[i] < 2.0f);
  Attrs truncated{{"kind", std::string("truncated_normal_add")}, {"value", 0.5}, {"seed", std::int64_t{3}}};
  const Tensor t = run_ref("noise", truncated, {zero}, {TensorDesc{Shape{n}}})[0];
  std::tie(m, v) = moments(t);
  EXPECT_NEAR(m, 0.0, 0.01);
  EXPECT_NEAR(v, 0.25 * 0.77374, 0.01);  // a standard normal within (-2, 2) has variance 0.77374
  for (std::int64_t i = 0; i < n; ++i) ASSERT_LT(std::abs(t.data<float>()[i]), 1.0f);
  // gamma_add (MixUp's and CutMix's Beta draws): a Gamma(rate, 1) draw has mean and
  // variance rate, on both sides of rate 1 (rate < 1 boosts a Gamma(rate + 1) draw).
  for (double rate : {0.2, 2.5}) {
    Attrs gamma{{"kind", std::string("gamma_add")}, {"value", 1.0}, {"rate", rate}, {"seed", std::int64_t{3}}};
    const Tensor g = run_ref("noise", gamma, {zero}, {TensorDesc{Shape{n}}})[0];
    std::tie(m, v) = moments(g);
    EXPECT_NEAR(m, rate, 0.02 * rate + 0.005) << rate;
    EXPECT_NEAR(v, rate, 0.05 * rate + 0.005) << rate;
    for (std::int64_t i = 0; i < n; ++i) ASSERT_GE(g.data<float>()[i], 0.0f);
  }
  Attrs mul{{"kind", std::string("gaussian_mul")}, {"value", 0.2}, {"seed", std::int64_t{3}}};
  const auto out = run_ref("noise", mul, {x}, {TensorDesc{Shape{n}}, TensorDesc{Shape{n}}});
  std::tie(m, v) = moments(out[1]);
  EXPECT_NEAR(m, 1.0, 0.01);
  EXPECT_NEAR(v, 0.25, 0.01);  // rate / (1 - rate)
  for (std::int64_t i = 0; i < 100; ++i) {
    EXPECT_FLOAT_EQ(out[0].data<float>()[i], x.data<float>()[i] * out[1].data<float>()[i]);
  }
  Attrs alpha{{"kind", std::string("alpha_dropout")}, {"value", 0.3}, {"seed", std::int64_t{3}}};
  const auto dropped = run_ref("noise", alpha, {x}, {TensorDesc{Shape{n}}, TensorDesc{Shape{n}}});
  std::tie(m, v) = moments(dropped[0]);
  EXPECT_NEAR(m, 0.0, 0.02);
  EXPECT_NEAR(v, 1.0, 0.03);
  std::int64_t kept = 0;
  for (std::int64_t i = 0; i < n; ++i) kept += dropped[1].data<float>()[i] != 0.0f;
  EXPECT_NEAR(static_cast<double>(kept) / n, 0.7, 0.01);
  const Tensor again = run_ref("noise", add, {zero}, {TensorDesc{Shape{n}}})[0];
  const Tensor first = run_ref("noise", add, {zero}, {TensorDesc{Shape{n}}})[0];
  EXPECT_EQ(std::memcmp(again.raw(), first.raw(), first.nbytes()), 0) << "one step's draws repeat";
}

// resize against tf.image.resize (TensorFlow 2.21, the values printed to 7 digits): a 5x4
// image to 3x7, down in height and up in width, for every method and the antialiased
// downscale of each kernel that has one.
TEST(RefTrainValues, ResizeMatchesTensorFlow) {
  const Tensor x = make(Shape{1, 5, 4, 1}, {0, 1, 4, 9, 2, -1, 3, 5, 7, 0, -2, 6, 1, 8, -3, 2, 4, 4, 0, -5});
  const struct {
    const char* method;
    std::int64_t antialias;
    std::vector<float> want;
  } kCases[] = {
      {"nearest", 0, {0, 0, 1, 4, 4, 9, 9, 7, 7, 0, -2, -2, 6, 6, 4, 4, 4, 0, 0, -5, -5}},
      {"bilinear", 0, {0.6666666f, 0.547619f, 0.3571429f, 2, 3.952382f, 6.238096f, 7.666667f, 7, 4.5f, 0.5f, -1,
       -1.42857f, 3.142859f, 6, 3, 3.833333f, 5.166667f, 2.166667f, -1.119048f, -2.071428f, -2.666666f}},
      {"bicubic", 0, {0.3760282f, 0.2565481f, 0.3061386f, 1.909903f, 4.182592f, 6.797193f, 8.177776f, 7.554514f,
       4.9599f, 0.3774537f, -1.9375f, -1.700072f, 3.504639f, 6.633731f, 2.775921f, 3.934223f, 5.459973f, 2.555693f,
       -1.158341f, -2.737615f, -3.395186f}},
      {"area", 0, {0.8f, 0.6499999f, 0.2f, 1.9f, 3.6f, 6.450003f, 7.399996f, 4.8f, 3.95f, 1.4f, 0.09999936f, -1.2f,
       3.450002f, 4.999998f, 2.8f, 3.5f, 5.6f, 2.199999f, -1.2f, -1.950001f, -2.199999f}},
      {"lanczos3", 0, {0.1903738f, -0.01340272f, 0.3600797f, 1.801304f, 4.456425f, 6.980243f, 8.103409f, 7.733973f,
       5.197591f, 0.6283017f, -3.142857f, -1.4785f, 3.580875f, 6.986213f, 2.134858f, 4.033797f, 5.684529f, 3.203386f,
       -1.284682f, -3.189084f, -3.483974f}},
      {"lanczos5", 0, {-0.2730638f, 0.0860104f, 0.63768f, 1.809236f, 4.437161f, 6.875232f, 8.259641f, 7.608182f,
       5.437698f, 0.7578021f, -4.076678f, -1.336516f, 3.794862f, 6.957195f, 1.911315f, 3.803605f, 5.642723f,
       3.711874f, -1.254688f, -3.347661f, -3.59262f}},
      {"bilinear", 1, {0.8571427f, 0.6020408f, 0.1938776f, 1.857143f, 3.836735f, 5.959185f, 7.285715f, 4.555555f,
       3.484127f, 1.769841f, 0.2222222f, -0.6825385f, 2.746033f, 4.888889f, 2.714285f, 3.785715f, 5.5f, 2.214286f,
       -1.336735f, -1.744898f, -1.999999f}},
      {"bicubic", 1, {0.9384247f, 0.4207547f, -0.1829264f, 1.541346f, 4.054076f, 6.472814f, 7.721228f, 4.90804f,
       3.826638f, 1.768394f, -0.4796517f, -1.11058f, 3.030141f, 5.570966f, 2.46801f, 3.975658f, 6.019314f, 2.501923f,
       -1.691289f, -2.238277f, -2.244416f}},
      {"lanczos3", 1, {1.228429f, 0.2533225f, -0.4207054f, 1.116486f, 4.369833f, 6.73586f, 7.636732f, 4.897782f,
       4.070046f, 1.989112f, -1.312056f, -1.105391f, 3.027575f, 6.034353f, 2.011081f, 4.29089f, 6.23831f, 2.906649f,
       -1.93191f, -2.653855f, -2.02128f}},
  };
  for (const auto& c : kCases) {
    Attrs a{{"size", std::vector<std::int64_t>{3, 7}}, {"method", std::string(c.method)}, {"antialias", c.antialias}};
    const std::vector<Tensor> out = run_ref("resize", a, {x}, {TensorDesc{Shape{1, 3, 7, 1}}});
    ASSERT_FALSE(out.empty());
    expect_values(out[0], c.want, 3e-6f, std::string(c.method) + (c.antialias ? " antialias" : ""));
  }
  // pad's optional value fills the border (Resizing's pad_to_aspect_ratio fill_value).
  Attrs pad{{"before", std::vector<std::int64_t>{0, 1}}, {"after", std::vector<std::int64_t>{0, 0}}, {"value", 2.5}};
  expect_values(run_ref("pad", pad, {make(Shape{1, 2}, {7, 8})}, {TensorDesc{Shape{1, 3}}})[0], {2.5f, 7, 8}, 0.0f,
                "pad value");
}

}  // namespace
}  // namespace nnfit
