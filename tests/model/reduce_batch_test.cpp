// fit(on_oom="reduce_batch"): a limit below the plan for batch 256 makes fit train on
// micro-batches with gradient accumulation, and the loss curve is the unconstrained run's
// at the same effective batch (no Dropout or BatchNormalization: within float rounding);
// with Dropout the note says results differ; without the option the OOM stands. A
// validation, evaluate or predict batch that does not fit runs as micro-batches with the
// same results, noted once per call.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <unistd.h>

#include "nnfit/core/error.h"
#include "nnfit/model/model.h"
#include "nnfit/nn/layers.h"
#include "nnfit/profile/step_log.h"

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

// A limit that fits training batches of 64 but not the inference arena of a batch of 1024.
std::int64_t limit_for_validation(Sequential& probe) {
  const std::int64_t p64 = probe.plan_memory(64).peak_bytes, p128 = probe.plan_memory(128).peak_bytes;
  return (p64 + p128) / 2;
}

void expect_same_logs(const Logs& a, const Logs& b, const std::string& prefix) {
  for (const char* k : {"loss", "accuracy"}) {
    const std::string key = prefix + k;
    const double va = log_of(a, key.c_str()), vb = log_of(b, key.c_str());
    ASSERT_TRUE(std::isfinite(va)) << key;
    EXPECT_NEAR(va, vb, 1e-5 * std::max(1.0, std::fabs(va))) << key;
  }
}

TEST(ReduceBatch, ValidationBatchThatDoesNotFitRunsAsMicroBatches) {
  auto probe = mlp(0);
  const std::int64_t limit = limit_for_validation(*probe);
  auto [x, y] = data(512);
  auto [vx, vy] = data(2048 + 100);  // two validation batches of 1024 and one of 100
  FitOptions fo;
  fo.epochs = 3;
  fo.batch_size = 64;
  fo.validation_dataset = data::Dataset::from_tensor_slices({vx, vy}).batch(1024);
  const data::Dataset train = data::Dataset::from_tensor_slices({x, y}).batch(64);

  auto free_run = mlp(0);
  const History a = free_run->fit(train, fo);
  EXPECT_TRUE(a.notes.empty());

  auto strict = mlp(limit);
  EXPECT_THROW(strict->fit(train, fo), OutOfMemory);

  auto reduced = mlp(limit);
  fo.on_oom = "reduce_batch";
  std::vector<std::string> seen;
  fo.on_note = [&](const std::string& n) { seen.push_back(n); };
  const History b = reduced->fit(train, fo);
  // Training batches fit; the validation batch of 1024 is split, and that is said once.
  if (std::getenv("NNFIT_TEST_VERBOSE")) for (const std::string& n : b.notes) std::printf("note: %s\n", n.c_str());
  ASSERT_EQ(b.notes.size(), 1u);
  EXPECT_EQ(seen, b.notes);
  EXPECT_NE(b.notes[0].find("validation batch 1024 does not fit"), std::string::npos) << b.notes[0];
  EXPECT_NE(b.notes[0].find("micro-batches of"), std::string::npos) << b.notes[0];
  EXPECT_NE(b.notes[0].find("outputs concatenated"), std::string::npos) << b.notes[0];
  EXPECT_LE(reduced->memory_stats().peak_bytes, limit);
  ASSERT_EQ(a.epochs.size(), b.epochs.size());
  for (std::size_t e = 0; e < a.epochs.size(); ++e) {
    expect_same_logs(a.epochs[e], b.epochs[e], "");
    expect_same_logs(a.epochs[e], b.epochs[e], "val_");
  }
}

TEST(ReduceBatch, TensorValidationSplitsBesideTrainingBatches) {
  // fit(x, y) validates in batches of batch_size: both the training and the validation
  // batch of 1024 are split, each noted once.
  auto probe = mlp(0);
  const std::int64_t limit = limit_for_validation(*probe);
  auto [x, y] = data(2048);
  auto [vx, vy] = data(1024 + 64);
  FitOptions fo;
  fo.epochs = 2;
  fo.batch_size = 1024;
  fo.shuffle = false;
  fo.validation_data = std::make_pair(vx, vy);
  auto free_run = mlp(0);
  const History a = free_run->fit(x, y, fo);
  auto reduced = mlp(limit);
  fo.on_oom = "reduce_batch";
  const History b = reduced->fit(x, y, fo);
  ASSERT_EQ(b.notes.size(), 2u);
  EXPECT_NE(b.notes[0].find("training batch 1024"), std::string::npos) << b.notes[0];
  EXPECT_NE(b.notes[1].find("validation batch 1024"), std::string::npos) << b.notes[1];
  EXPECT_LE(reduced->memory_stats().peak_bytes, limit);
  for (std::size_t e = 0; e < a.epochs.size(); ++e) {
    for (const char* k : {"loss", "val_loss", "val_accuracy"}) {
      const double va = log_of(a.epochs[e], k), vb = log_of(b.epochs[e], k);
      EXPECT_NEAR(va, vb, 1e-4 * std::fabs(va)) << k << " epoch " << e + 1;
    }
  }
}

TEST(ReduceBatch, EvaluateAndPredictSplitWithTheOptionAndFailWithout) {
  auto probe = mlp(0);
  const std::int64_t limit = limit_for_validation(*probe);
  auto [x, y] = data(2048 + 7);
  auto free_run = mlp(0);
  auto limited = mlp(limit);  // the same seed: the same weights
  InferenceOptions io;
  io.batch_size = 1024;
  const Logs ea = free_run->evaluate(x, y, io);
  const Tensor pa = free_run->predict(x, io);

  EXPECT_THROW(limited->evaluate(x, y, 1024), OutOfMemory);
  EXPECT_THROW(limited->predict(x, 1024), OutOfMemory);
  EXPECT_THROW(limited->evaluate(data::Dataset::from_tensor_slices({x, y}).batch(1024)), OutOfMemory);

  io.on_oom = "reduce_batch";
  std::vector<std::string> notes;
  io.on_note = [&](const std::string& n) { notes.push_back(n); };
  const Logs eb = limited->evaluate(x, y, io);
  ASSERT_EQ(notes.size(), 1u);  // once for the call, though two batches were split
  EXPECT_NE(notes[0].find("evaluation batch 1024 does not fit"), std::string::npos) << notes[0];
  expect_same_logs(ea, eb, "");
  const Logs ec = limited->evaluate(data::Dataset::from_tensor_slices({x, y}).batch(1024), io);
  expect_same_logs(ea, ec, "");
  EXPECT_EQ(notes.size(), 2u);  // a new call notes the split again

  const Tensor pb = limited->predict(x, io);
  EXPECT_EQ(notes.size(), 3u);
  ASSERT_EQ(pa.shape(), pb.shape());
  for (std::int64_t i = 0; i < pa.numel(); ++i) EXPECT_NEAR(pa.data<float>()[i], pb.data<float>()[i], 1e-5) << i;
  EXPECT_LE(limited->memory_stats().peak_bytes, limit);

  // Sample weights reach every micro-batch: the weighted loss is the full batch's.
  Tensor w = Tensor::zeros(Shape{x.shape()[0]});
  for (std::int64_t i = 0; i < w.numel(); ++i) w.data<float>()[i] = static_cast<float>(i % 3 + 1);  // mean 2: twice the loss
  InferenceOptions weighted = io;
  weighted.sample_weight = w;
  InferenceOptions free_weighted = weighted;
  free_weighted.on_oom = "fail";
  const Logs wa = free_run->evaluate(x, y, free_weighted);
  const Logs wb = limited->evaluate(x, y, weighted);
  EXPECT_EQ(notes.size(), 4u);
  expect_same_logs(wa, wb, "");
  EXPECT_GT(std::fabs(log_of(wa, "loss") - log_of(ea, "loss")), 1e-3);  // the weights count
  EXPECT_LE(limited->memory_stats().peak_bytes, limit);

  // Without the option again, the split made earlier does not stand in for the full batch.
  EXPECT_THROW(limited->predict(x, 1024), OutOfMemory);
  io.on_oom = "shrink";
  EXPECT_THROW(limited->predict(x, io), InvalidArgument);
}

TEST(ReduceBatch, AccumulatedStepsAreTimedByPhase) {
  // steps.jsonl: a step on micro-batches has its forward, backward and update times like
  // any other; ops.json counts every micro-batch's kernels and one update per step.
  auto probe = mlp(0);
  const std::int64_t limit = (probe->plan_memory(128).peak_bytes + probe->plan_memory(256).peak_bytes) / 2;
  auto [x, y] = data(1024 + 100);  // per epoch 4 steps of 2 micro-batches, one of 100 rows that fits
  const std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) / ("nnfit_reduce_batch_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  auto m = mlp(limit);
  FitOptions fo;
  fo.epochs = 2;
  fo.batch_size = 256;
  fo.on_oom = "reduce_batch";
  fo.log_dir = dir.string();
  const History h = m->fit(x, y, fo);
  ASSERT_EQ(h.notes.size(), 1u);

  const std::vector<profile::StepRecord> steps = profile::read_step_log((dir / "steps.jsonl").string());
  ASSERT_EQ(steps.size(), 10u);
  double parts_us = 0, train_us = 0;
  for (const profile::StepRecord& r : steps) {
    EXPECT_GT(r.forward_us, 0) << "step " << r.step;
    EXPECT_GT(r.backward_us, 0) << "step " << r.step;
    EXPECT_GT(r.update_us, 0) << "step " << r.step;
    parts_us += static_cast<double>(r.forward_us + r.backward_us + r.update_us);
  }
  for (const Logs& l : h.epochs) train_us += log_of(l, "train_seconds") * 1e6;
  if (std::getenv("NNFIT_TEST_VERBOSE")) {
    for (const profile::StepRecord& r : steps) std::printf("%s\n", profile::step_json(r).c_str());
    std::printf("kernels %.0f us of %.0f us\n", parts_us, train_us);
  }
  // Kernel times are a part of the steps' wall time (rounding adds at most 1.5 us a step).
  EXPECT_LE(parts_us, train_us + 15) << parts_us << " us of kernels in " << train_us << " us of steps";

  std::ifstream in(dir / "ops.json");
  const nlohmann::json ops = nlohmann::json::parse(in);
  EXPECT_EQ(ops.at("steps").get<int>(), 10);
  int updates = 0, forwards = 0;
  for (const nlohmann::json& op : ops.at("ops")) {
    const std::string name = op.at("name"), phase = op.at("phase");
    if (op.at("op").get<std::string>().find("adam") != std::string::npos) {
      ++updates;
      EXPECT_EQ(phase, "update") << name;
      EXPECT_EQ(op.at("calls").get<int>(), 10) << name;  // once per step, split or not
    } else if (phase == "forward" && name.rfind("dense_1/", 0) == 0 && op.at("op") != "input") {
      ++forwards;
      EXPECT_EQ(op.at("calls").get<int>(), 2 * (4 * 2 + 1)) << name;  // per epoch: 4 steps of 2, one of 1
    }
  }
  EXPECT_EQ(updates, 4);  // two kernels and two biases
  EXPECT_GT(forwards, 0);
  std::filesystem::remove_all(dir);
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
