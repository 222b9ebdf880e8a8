// Keras's validation and inference arguments beyond the data: validation_freq (every Nth
// epoch, or a list), validation_batch_size, validation_steps, validation sample weights
// (tensors or a dataset's third component), and evaluate/predict's steps and sample_weight.
// Validation runs after an epoch's training, so the last epoch's val_ logs are the final
// model's evaluate() of the same data: most cases compare the two.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "nnfit/core/error.h"
#include "nnfit/model/model.h"
#include "small_models.h"

namespace nnfit {
namespace {

using test::small_data;
using test::small_mlp;

double get(const Logs& logs, const std::string& key) { return log_value(logs, key, NAN); }
bool has(const Logs& logs, const std::string& key) { return !std::isnan(get(logs, key)); }

Tensor weights_for(std::int64_t n) {
  Tensor w = Tensor::zeros(Shape{n});
  for (std::int64_t i = 0; i < n; ++i) w.data<float>()[i] = static_cast<float>(i % 5) * 0.5f;  // 0 .. 2, zeros too
  return w;
}

// The first `rows` rows of a tensor, as a tensor of its own.
Tensor head(const Tensor& t, std::int64_t rows) { return t.slice_rows(0, rows).clone(); }

FitOptions options(std::int64_t epochs) {
  FitOptions fo;
  fo.epochs = epochs;
  fo.batch_size = 16;
  fo.shuffle = false;
  return fo;
}

TEST(ValidationFreq, ValidatesAfterEveryNthEpochOrTheListedOnesAndLeavesTrainingAlone) {
  auto [x, y] = small_data(48);
  auto [vx, vy] = small_data(20, 9);
  FitOptions every = options(4);
  every.validation_data = {vx, vy};
  auto a = small_mlp();
  const History ha = a->fit(x, y, every);

  FitOptions second = every;
  second.validation_freq = 2;
  auto b = small_mlp();
  const History hb = b->fit(x, y, second);
  FitOptions listed = every;
  listed.validation_epochs = {1, 4};
  auto c = small_mlp();
  const History hc = c->fit(x, y, listed);
  for (std::size_t e = 0; e < 4; ++e) {
    const std::int64_t number = static_cast<std::int64_t>(e) + 1;
    EXPECT_EQ(has(hb.epochs[e], "val_loss"), number % 2 == 0) << "epoch " << number;
    EXPECT_EQ(has(hb.epochs[e], "val_accuracy"), number % 2 == 0) << "epoch " << number;
    EXPECT_EQ(has(hc.epochs[e], "val_loss"), number == 1 || number == 4) << "epoch " << number;
    // Training is the same whether or not an epoch validated; so are the values it gives.
    EXPECT_EQ(get(hb.epochs[e], "loss"), get(ha.epochs[e], "loss"));
    if (has(hb.epochs[e], "val_loss")) EXPECT_EQ(get(hb.epochs[e], "val_loss"), get(ha.epochs[e], "val_loss"));
    if (has(hc.epochs[e], "val_loss")) EXPECT_EQ(get(hc.epochs[e], "val_loss"), get(ha.epochs[e], "val_loss"));
  }
  // Keras counts from the absolute epoch: resumed at epoch 3 of 4, freq 2 validates epoch 4 only.
  FitOptions resumed = second;
  resumed.initial_epoch = 2;
  auto d = small_mlp();
  const History hd = d->fit(x, y, resumed);
  ASSERT_EQ(hd.epochs.size(), 2u);
  EXPECT_FALSE(has(hd.epochs[0], "val_loss"));
  EXPECT_TRUE(has(hd.epochs[1], "val_loss"));
}

TEST(ValidationBatches, BatchSizeAndStepsChooseTheRowsValidated) {
  auto [x, y] = small_data(48);
  auto [vx, vy] = small_data(20, 9);
  // Batches of 6 and 2 steps: the first 12 validation rows, each epoch anew.
  FitOptions fo = options(2);
  fo.validation_data = {vx, vy};
  fo.validation_batch_size = 6;
  fo.validation_steps = 2;
  auto a = small_mlp();
  const History h = a->fit(x, y, fo);
  const Logs first12 = a->evaluate(head(vx, 12), head(vy, 12), 12);
  const Logs all = a->evaluate(vx, vy, 20);
  EXPECT_NEAR(get(h.epochs[1], "val_loss"), get(first12, "loss"), 1e-6);
  EXPECT_NEAR(get(h.epochs[1], "val_accuracy"), get(first12, "accuracy"), 1e-12);
  EXPECT_GT(std::fabs(get(first12, "loss") - get(all, "loss")), 1e-4);  // the steps made a difference

  // A validation dataset: its first 2 batches each time (a new pass, as Keras's evaluate).
  FitOptions fd = options(2);
  fd.validation_dataset = data::Dataset::from_tensor_slices({vx, vy}).batch(6);
  fd.validation_steps = 2;
  auto b = small_mlp();
  const History hb = b->fit(x, y, fd);
  EXPECT_NEAR(get(hb.epochs[0], "val_loss"), get(h.epochs[0], "val_loss"), 1e-6);
  EXPECT_NEAR(get(hb.epochs[1], "val_loss"), get(h.epochs[1], "val_loss"), 1e-6);
  // ... and one that repeats forever is validated on validation_steps batches.
  fd.validation_dataset = data::Dataset::from_tensor_slices({vx, vy}).batch(6).repeat();
  auto c = small_mlp();
  const History hc = c->fit(x, y, fd);
  EXPECT_NEAR(get(hc.epochs[1], "val_loss"), get(h.epochs[1], "val_loss"), 1e-6);
}

// Keras's loss with sample weights: sum(w_i * loss_i) / N (sum_over_batch_size), from the
// per-sample losses of batch-1 evaluations; metrics are not weighted.
double weighted_loss(Model& m, const Tensor& x, const Tensor& y, const Tensor& w) {
  double sum = 0;
  const std::int64_t n = x.shape()[0];
  for (std::int64_t i = 0; i < n; ++i) {
    const Logs one = m.evaluate(x.slice_rows(i, i + 1).clone(), y.slice_rows(i, i + 1).clone(), 1);
    sum += static_cast<double>(w.data<float>()[i]) * get(one, "loss");
  }
  return sum / static_cast<double>(n);
}

TEST(WeightedEvaluation, EvaluateAndValidationWeighTheLossAsKerasDoes) {
  auto [x, y] = small_data(48);
  auto [vx, vy] = small_data(20, 9);
  const Tensor vw = weights_for(20);
  auto m = small_mlp();
  m->fit(x, y, options(2));
  InferenceOptions io;
  io.batch_size = 8;
  io.sample_weight = vw;
  const Logs weighted = m->evaluate(vx, vy, io);
  const Logs plain = m->evaluate(vx, vy, 8);
  EXPECT_NEAR(get(weighted, "loss"), weighted_loss(*m, vx, vy, vw), 1e-6);
  EXPECT_GT(std::fabs(get(weighted, "loss") - get(plain, "loss")), 1e-3);
  EXPECT_EQ(get(weighted, "accuracy"), get(plain, "accuracy"));
  // A dataset's third component weighs it the same; predict and plain evaluate stay unweighted.
  const Logs from_dataset = m->evaluate(data::Dataset::from_tensor_slices({vx, vy, vw}).batch(8));
  EXPECT_NEAR(get(from_dataset, "loss"), get(weighted, "loss"), 1e-6);
  EXPECT_EQ(get(m->evaluate(vx, vy, 8), "loss"), get(plain, "loss"));

  // fit's validation: tensors with weights, or a dataset of (x, y, w). Class weights and
  // training sample weights do not reach it (Keras weighs validation by its own only).
  FitOptions fo = options(2);
  fo.validation_data = {vx, vy};
  fo.validation_sample_weight = vw;
  auto a = small_mlp();
  const History ha = a->fit(x, y, fo);
  EXPECT_NEAR(get(ha.epochs[1], "val_loss"), weighted_loss(*a, vx, vy, vw), 1e-6);
  FitOptions fd = options(2);
  fd.validation_dataset = data::Dataset::from_tensor_slices({vx, vy, vw}).batch(8);
  auto b = small_mlp();
  const History hb = b->fit(x, y, fd);
  EXPECT_NEAR(get(hb.epochs[1], "val_loss"), get(ha.epochs[1], "val_loss"), 1e-6);
  FitOptions classes = options(2);
  classes.validation_data = {vx, vy};
  classes.class_weight = {{0, 3.0}, {1, 0.25}};
  auto c = small_mlp();
  const History hc = c->fit(x, y, classes);
  EXPECT_NEAR(get(hc.epochs[1], "val_loss"), get(c->evaluate(vx, vy, 16), "loss"), 1e-6);
  classes.validation_data.reset();
  classes.validation_dataset = fd.validation_dataset;  // weighted by its own weights alone
  auto d = small_mlp();
  const History hd = d->fit(x, y, classes);
  EXPECT_NEAR(get(hd.epochs[1], "val_loss"), weighted_loss(*d, vx, vy, vw), 1e-6);
}

TEST(InferenceSteps, EvaluateAndPredictRunTheFirstStepsBatches) {
  auto [x, y] = small_data(20, 9);
  auto m = small_mlp();
  InferenceOptions io;
  io.batch_size = 6;
  io.steps = 2;
  std::vector<std::string> notes;
  io.on_note = [&](const std::string& n) { notes.push_back(n); };
  EXPECT_NEAR(get(m->evaluate(x, y, io), "loss"), get(m->evaluate(head(x, 12), head(y, 12), 12), "loss"), 1e-6);
  const Tensor all = m->predict(x, 6);
  const Tensor first = m->predict(x, io);
  ASSERT_EQ(first.shape(), (Shape{12, 3}));
  for (std::int64_t i = 0; i < first.numel(); ++i) EXPECT_EQ(first.data<float>()[i], all.data<float>()[i]) << i;
  const data::Dataset forever = data::Dataset::from_tensor_slices({x, y}).batch(6).repeat();
  EXPECT_NEAR(get(m->evaluate(forever, io), "loss"), get(m->evaluate(head(x, 12), head(y, 12), 12), "loss"), 1e-6);
  EXPECT_TRUE(notes.empty());
  // More steps than the data has: all of it, and a note (Keras warns).
  io.steps = 9;
  EXPECT_NEAR(get(m->evaluate(x, y, io), "loss"), get(m->evaluate(x, y, 20), "loss"), 1e-6);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("steps 9 asked for, but the data ended after 4 batch(es)"), std::string::npos) << notes[0];
  m->evaluate(data::Dataset::from_tensor_slices({x, y}).batch(6), io);
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_NE(notes[1].find("ended after 4 batch(es)"), std::string::npos) << notes[1];
  EXPECT_EQ(m->predict(x, io).shape(), (Shape{20, 3}));
  EXPECT_EQ(notes.size(), 3u);
}

TEST(ValidationOptionsBadInput, EachIsNamedBeforeTraining) {
  const auto xy = small_data(32);  // a pair, not a binding: the lambda captures x and y (clang 14)
  const Tensor &x = xy.first, &y = xy.second;
  auto [vx, vy] = small_data(12, 9);
  auto m = small_mlp();
  const std::vector<Tensor> before = m->get_weights();
  const auto fails = [&](const FitOptions& fo, const std::string& says) {
    try {
      m->fit(x, y, fo);
      ADD_FAILURE() << "no error; expected one saying " << says;
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
    }
  };
  FitOptions fo = options(1);
  fo.validation_data = {vx, vy};
  FitOptions bad = fo;
  bad.validation_freq = 0;
  fails(bad, "validation_freq must be a positive number of epochs, got 0");
  bad = fo;
  bad.validation_epochs = {2, 0};
  fails(bad, "validation_freq's epochs are counted from 1, got 0");
  bad = fo;
  bad.validation_steps = -1;
  fails(bad, "validation_steps must be positive");
  bad = fo;
  bad.validation_sample_weight = Tensor::zeros(Shape{11});
  fails(bad, "the validation sample weights must be float32 with one weight per sample (12), got float32 (11,)");
  bad = fo;
  bad.validation_sample_weight = Tensor::zeros(Shape{12}, DType::i32);
  fails(bad, "the validation sample weights must be float32");
  FitOptions ds = options(1);
  ds.validation_dataset = data::Dataset::from_tensor_slices({vx, vy}).batch(4);
  bad = ds;
  bad.validation_batch_size = 4;
  fails(bad, "validation_batch_size is for validation_data tensors");
  bad = ds;
  bad.validation_sample_weight = weights_for(12);
  fails(bad, "validation sample weights go with validation_data tensors");
  bad = ds;
  bad.validation_dataset = data::Dataset::from_tensor_slices({vx, vy}).batch(4).repeat();
  fails(bad, "the validation dataset repeats forever");
  EXPECT_THROW(m->fit(data::Dataset::from_tensor_slices({x, y}).batch(8), bad), InvalidArgument);
  // Nothing trained.
  const std::vector<Tensor> after = m->get_weights();
  for (std::size_t i = 0; i < before.size(); ++i) {
    EXPECT_EQ(0, std::memcmp(before[i].raw(), after[i].raw(), before[i].nbytes())) << "weight " << i;
  }

  InferenceOptions io;
  io.sample_weight = weights_for(5);
  EXPECT_THROW(m->evaluate(vx, vy, io), InvalidArgument);  // 5 weights for 12 samples
  EXPECT_THROW(m->predict(vx, io), InvalidArgument);        // predict computes no loss
  io.sample_weight = weights_for(12);
  EXPECT_THROW(m->evaluate(data::Dataset::from_tensor_slices({vx, vy}).batch(4), io), InvalidArgument);
  io = InferenceOptions{};
  io.steps = -2;
  EXPECT_THROW(m->evaluate(vx, vy, io), InvalidArgument);
  EXPECT_THROW(m->predict(vx, io), InvalidArgument);
  try {
    m->evaluate(data::Dataset::from_tensor_slices({vx, vy}).batch(4).repeat());
    ADD_FAILURE() << "an endless evaluation";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("evaluation dataset repeats forever"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("give steps (evaluate's steps)"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace nnfit
