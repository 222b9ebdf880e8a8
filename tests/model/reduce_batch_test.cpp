// fit(on_oom="reduce_batch"): a limit below the plan for batch 256 makes fit train on
// micro-batches with gradient accumulation, and the loss curve is the unconstrained run's
// at the same effective batch (no Dropout or BatchNormalization: within float rounding);
// with Dropout the note says results differ; without the option the OOM stands.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>

#include "nnfit/core/error.h"
#include "nnfit/model/sequential.h"
#include "nnfit/nn/layers.h"

namespace nnfit {
namespace {

std::unique_ptr<Sequential> mlp(std::int64_t limit_bytes, bool dropout = false) {
  auto m = std::make_unique<Sequential>("mlp");
  if (limit_bytes > 0) {
    MemoryPolicy p;
    p.limit_bytes = limit_bytes;
    m->set_memory_policy(p);
  }
  m->set_seed(5);
  m->set_input_shape(Shape{32});
  m->add(std::make_unique<Dense>("dense", DenseOptions{64, "relu"}));
  if (dropout) m->add(std::make_unique<Dropout>("dropout", 0.25));
  m->add(std::make_unique<Dense>("dense_1", DenseOptions{4}));
  CompileOptions c;
  c.optimizer.name = "adam";
  c.loss = Loss::from_name("sparse_categorical_crossentropy", true);
  c.metrics = {"accuracy"};
  m->compile(c);
  return m;
}

std::pair<Tensor, Tensor> data(std::int64_t n) {
  Tensor x = Tensor::zeros(Shape{n, 32}, DType::f32);
  Tensor y = Tensor::zeros(Shape{n}, DType::i32);
  std::mt19937 rng(3);
  for (std::int64_t i = 0; i < n; ++i) {
    float s = 0;
    for (int j = 0; j < 32; ++j) s += x.data<float>()[i * 32 + j] = static_cast<float>(rng() % 1000) / 1000.0f - 0.5f;
    y.data<std::int32_t>()[i] = static_cast<std::int32_t>(std::fabs(s) * 2) % 4;
  }
  return {x, y};
}

double log_of(const Logs& l, const char* k) { return log_value(l, k, NAN); }

TEST(ReduceBatch, SameLossCurveAsTheUnconstrainedRun) {
  // A limit between the plans for batch 128 and 256.
  auto probe = mlp(0);
  const std::int64_t p256 = probe->plan_memory(256).peak_bytes, p128 = probe->plan_memory(128).peak_bytes;
  ASSERT_LT(p128, p256);
  const std::int64_t limit = (p128 + p256) / 2;
  auto [x, y] = data(1024 + 100);  // 4 full batches and a partial one of 100
  FitOptions fo;
  fo.epochs = 3;
  fo.batch_size = 256;
  fo.shuffle = false;

  auto free_run = mlp(0);
  const History a = free_run->fit(x, y, fo);
  EXPECT_TRUE(a.notes.empty());

  auto limited = mlp(limit);
  FitOptions strict = fo;
  try {
    limited->fit(x, y, strict);
    ADD_FAILURE() << "batch 256 should not fit " << limit << " bytes";
  } catch (const OutOfMemory& e) {
    EXPECT_NE(e.hint().find("batch size"), std::string::npos) << e.hint();
  }

  auto reduced = mlp(limit);
  fo.on_oom = "reduce_batch";
  const History b = reduced->fit(x, y, fo);
  ASSERT_EQ(b.notes.size(), 1u);
  EXPECT_NE(b.notes[0].find("micro-batches of 128"), std::string::npos) << b.notes[0];
  EXPECT_NE(b.notes[0].find("effective batch stays 256"), std::string::npos) << b.notes[0];
  EXPECT_NE(b.notes[0].find("match a full batch"), std::string::npos) << b.notes[0];
  EXPECT_LE(reduced->memory_stats().peak_bytes, limit);
  ASSERT_EQ(a.epochs.size(), b.epochs.size());
  for (std::size_t e = 0; e < a.epochs.size(); ++e) {
    const double la = log_of(a.epochs[e], "loss"), lb = log_of(b.epochs[e], "loss");
    EXPECT_NEAR(la, lb, 1e-4 * std::fabs(la)) << "epoch " << e + 1;
    if (std::getenv("NNFIT_TEST_VERBOSE")) std::printf("epoch %zu loss %.7f vs %.7f\n", e + 1, la, lb);
    EXPECT_NEAR(log_of(a.epochs[e], "accuracy"), log_of(b.epochs[e], "accuracy"), 2.0 / 1124) << "epoch " << e + 1;
  }
  EXPECT_LT(log_of(b.epochs.back(), "loss"), log_of(b.epochs.front(), "loss"));
  // The trained weights agree too: the same predictions.
  auto [vx, vy] = data(64);
  const Tensor pa = free_run->predict(vx), pb = reduced->predict(vx);
  for (std::int64_t i = 0; i < pa.numel(); ++i) EXPECT_NEAR(pa.data<float>()[i], pb.data<float>()[i], 1e-3) << i;
}

TEST(ReduceBatch, DropoutMakesTheNoteSayResultsDiffer) {
  auto probe = mlp(0, true);
  const std::int64_t limit = (probe->plan_memory(64).peak_bytes + probe->plan_memory(256).peak_bytes) / 2;
  auto [x, y] = data(512);
  auto m = mlp(limit, true);
  FitOptions fo;
  fo.epochs = 1;
  fo.batch_size = 256;
  fo.on_oom = "reduce_batch";
  const History h = m->fit(data::Dataset::from_tensor_slices({x, y}).batch(256), fo);
  ASSERT_EQ(h.notes.size(), 1u);
  EXPECT_NE(h.notes[0].find("differ from a full batch"), std::string::npos) << h.notes[0];
  EXPECT_TRUE(std::isfinite(log_of(h.epochs[0], "loss")));
}

TEST(ReduceBatch, UnknownPolicyIsRejected) {
  auto m = mlp(0);
  auto [x, y] = data(8);
  FitOptions fo;
  fo.on_oom = "shrink";
  EXPECT_THROW(m->fit(x, y, fo), InvalidArgument);
}

}  // namespace
}  // namespace nnfit
