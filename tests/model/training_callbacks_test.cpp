// EarlyStopping, ReduceLROnPlateau, CSVLogger and TerminateOnNaN against Keras 3.15.1:
// the expected epochs, waits, bests and learning rates are what Keras's own callbacks
// gave for the same monitored values (driven by hand with on_epoch_end, as here), and the
// CSV text is byte for byte what Keras's CSVLogger wrote for the same logs.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "nnfit/core/error.h"
#include "nnfit/model/model.h"
#include "nnfit/model/training_callbacks.h"
#include "nnfit/nn/layers.h"
#include "nnfit/nn/lr_schedule.h"

namespace nnfit {
namespace {

std::unique_ptr<Sequential> tiny(double lr = 1.0) {
  auto m = std::make_unique<Sequential>("tiny");
  m->set_input_shape(Shape{1});
  m->add(std::make_unique<Dense>("d", DenseOptions{1}));
  CompileOptions c;
  c.optimizer.name = "sgd";
  c.optimizer.learning_rate = std::make_shared<ConstantLearningRate>(lr);
  c.loss = Loss::from_name("mse");
  m->compile(c);
  return m;
}

struct EsResult {
  std::optional<std::int64_t> stopped_at;
  std::int64_t wait;
  double best;
  std::int64_t best_epoch;
};

EsResult run_early_stopping(const std::vector<double>& values, EarlyStoppingOptions o) {
  auto m = tiny();
  std::FILE* null = std::fopen("/dev/null", "w");
  EarlyStopping cb(o, null);
  cb.set_model(m.get());
  cb.on_train_begin(100, 1);
  EsResult r{};
  for (std::size_t e = 0; e < values.size(); ++e) {
    m->set_stop_training(false);
    cb.on_epoch_end(static_cast<std::int64_t>(e), {{o.monitor, values[e]}});
    if (m->stop_training()) {
      r.stopped_at = static_cast<std::int64_t>(e);
      break;
    }
  }
  std::fclose(null);
  r.wait = cb.wait();
  r.best = *cb.best();
  r.best_epoch = cb.best_epoch();
  return r;
}

TEST(EarlyStopping, MatchesKerasOnTheSameValues) {
  struct Case {
    std::vector<double> values;
    EarlyStoppingOptions options;
    std::optional<std::int64_t> stopped_at;
    std::int64_t wait;
    double best;
    std::int64_t best_epoch;
  };
  auto opt = [](std::string monitor, std::int64_t patience) {
    EarlyStoppingOptions o;
    o.monitor = std::move(monitor);
    o.patience = patience;
    return o;
  };
  EarlyStoppingOptions delta = opt("loss", 2);
  delta.min_delta = 0.01;
  EarlyStoppingOptions acc = opt("val_accuracy", 2);
  EarlyStoppingOptions baseline = acc;
  baseline.baseline = 0.7;
  EarlyStoppingOptions late = opt("val_loss", 1);
  late.start_from_epoch = 2;
  const Case cases[] = {
      {{1.0, 0.9, 0.95, 0.93, 0.92, 0.91}, opt("loss", 3), 4, 3, 0.9, 1},
      {{1.0, 0.9, 0.899, 0.898, 0.897}, delta, 3, 2, 0.9, 1},
      {{0.5, 0.6, 0.62, 0.61, 0.60, 0.59}, acc, 4, 2, 0.62, 2},  // "auto" maximizes accuracy
      {{0.5, 0.6, 0.62, 0.61, 0.60, 0.59, 0.58}, baseline, 3, 4, 0.62, 2},
      {{1.0, 0.5, 0.6, 0.7, 0.8}, late, 3, 1, 0.6, 2},
      {{1.0, 0.9, 0.8}, opt("val_loss", 0), std::nullopt, 0, 0.8, 2},
      {{1.0, 1.0, 1.0}, opt("val_loss", 0), 1, 1, 1.0, 0},
  };
  for (const Case& c : cases) {
    const EsResult r = run_early_stopping(c.values, c.options);
    EXPECT_EQ(r.stopped_at, c.stopped_at) << c.options.monitor << " case with best " << c.best;
    EXPECT_EQ(r.wait, c.wait);
    EXPECT_DOUBLE_EQ(r.best, c.best);
    EXPECT_EQ(r.best_epoch, c.best_epoch);
  }
}

TEST(EarlyStopping, StopsFitAndRestoresTheBestWeights) {
  auto m = tiny(0.05);
  Tensor x = Tensor::zeros(Shape{16, 1}), y = Tensor::zeros(Shape{16, 1});
  for (int i = 0; i < 16; ++i) {
    x.data<float>()[i] = static_cast<float>(i) / 16;
    y.data<float>()[i] = 3.0f * x.data<float>()[i] + 1.0f;
  }
  // Validation data the model gets worse on as it fits the training data: the best
  // epoch is the first.
  Tensor yv = Tensor::zeros(Shape{16, 1});
  EarlyStoppingOptions o;
  o.patience = 2;
  o.restore_best_weights = true;
  std::FILE* null = std::fopen("/dev/null", "w");
  EarlyStopping es(o, null);
  FitOptions fo;
  fo.epochs = 50;
  fo.batch_size = 4;
  fo.shuffle = false;
  fo.validation_data = std::make_pair(x, yv);
  fo.callbacks = {&es};
  const History h = m->fit(x, y, fo);
  std::fclose(null);
  ASSERT_EQ(es.stopped_epoch(), 2) << "the validation loss rises from the first epoch on";
  EXPECT_EQ(h.epochs.size(), 3u);
  EXPECT_EQ(es.best_epoch(), 0);
  InferenceOptions io;
  EXPECT_NEAR(log_value(m->evaluate(x, yv, io), "loss"), log_value(h.epochs[0], "val_loss"), 1e-6)
      << "the weights of the best epoch are back";
}

TEST(ReduceLROnPlateau, MatchesKerasOnTheSameValues) {
  auto run = [](const std::vector<double>& values, ReduceLROnPlateauOptions o) {
    auto m = tiny(1.0);
    ReduceLROnPlateau cb(o);
    cb.set_model(m.get());
    cb.on_train_begin(100, 1);
    std::vector<double> lrs;
    for (std::size_t e = 0; e < values.size(); ++e) {
      cb.on_epoch_end(static_cast<std::int64_t>(e), {{o.monitor, values[e]}});
      lrs.push_back(m->learning_rate());
    }
    return lrs;
  };
  ReduceLROnPlateauOptions a;
  a.patience = 2;
  a.factor = 0.5;
  EXPECT_EQ(run(std::vector<double>(7, 1.0), a), (std::vector<double>{1.0, 1.0, 0.5, 0.5, 0.25, 0.25, 0.125}));
  ReduceLROnPlateauOptions b;
  b.patience = 1;
  b.factor = 0.5;
  b.cooldown = 2;
  b.min_lr = 0.2;
  EXPECT_EQ(run(std::vector<double>(9, 1.0), b), (std::vector<double>{1.0, 0.5, 0.5, 0.25, 0.25, 0.2, 0.2, 0.2, 0.2}));
  ReduceLROnPlateauOptions bad;
  bad.factor = 1.0;
  EXPECT_THROW(ReduceLROnPlateau{bad}, InvalidArgument);
  // A schedule cannot be reduced, as in Keras.
  auto m = tiny();
  CompileOptions c = m->compile_options();
  auto s = std::make_unique<Sequential>("s");
  s->set_input_shape(Shape{1});
  s->add(std::make_unique<Dense>("d", DenseOptions{1}));
  c.optimizer.learning_rate = std::make_shared<CosineDecay>(0.1, 100);
  s->compile(c);
  EXPECT_THROW(s->set_learning_rate(0.01), InvalidArgument);
}

TEST(CSVLogger, WritesWhatKerasWrites) {
  const auto dir = std::filesystem::temp_directory_path() / ("nnfit_csv_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "log.csv").string();
  CSVLogger csv(path);
  csv.on_train_begin(2, 1);
  csv.on_epoch_end(0, {{"loss", 0.5}, {"accuracy", 0.1}, {"val_loss", 1e-05}});
  csv.on_epoch_end(1, {{"loss", 0.25}, {"accuracy", 1.0 / 3}, {"val_loss", 12345678.9}});
  csv.on_train_end();
  auto slurp = [&] {
    std::ifstream f(path);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
  };
  EXPECT_EQ(slurp(), "epoch,accuracy,loss,val_loss\n0,0.1,0.5,1e-05\n1,0.3333333333333333,0.25,12345678.9\n");
  // A resumed run appends rows without a second header.
  CSVLogger more(path, ",", /*append=*/true);
  more.on_train_begin(3, 1);
  more.on_epoch_end(2, {{"loss", 0.125}, {"accuracy", 1.0}, {"val_loss", 2.0}});
  more.on_train_end();
  EXPECT_EQ(slurp(), "epoch,accuracy,loss,val_loss\n0,0.1,0.5,1e-05\n1,0.3333333333333333,0.25,12345678.9\n"
                     "2,1.0,0.125,2.0\n");
  EXPECT_EQ(python_float(1e-7), "1e-07");
  EXPECT_EQ(python_float(1e22), "1e+22");
  EXPECT_EQ(python_float(-0.0), "-0.0");
  std::filesystem::remove_all(dir);
}

TEST(TerminateOnNaN, EndsTrainingInsteadOfFailing) {
  auto m = tiny(1e30);  // a rate that makes the loss overflow within a few steps
  Tensor x = Tensor::zeros(Shape{64, 1}), y = Tensor::zeros(Shape{64, 1});
  for (int i = 0; i < 64; ++i) x.data<float>()[i] = y.data<float>()[i] = static_cast<float>(i);
  FitOptions fo;
  fo.epochs = 3;
  fo.batch_size = 4;
  EXPECT_THROW(m->fit(x, y, fo), InvalidArgument) << "without the callback a NaN loss is an error";
  auto m2 = tiny(1e30);
  std::FILE* null = std::fopen("/dev/null", "w");
  TerminateOnNaN stop(null);
  fo.callbacks = {&stop};
  const History h = m2->fit(x, y, fo);
  std::fclose(null);
  EXPECT_EQ(h.epochs.size(), 1u);
  EXPECT_TRUE(m2->stop_training());
}

}  // namespace
}  // namespace nnfit
