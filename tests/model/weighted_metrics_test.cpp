// CompileOptions::weighted_metrics (Keras's weighted_metrics): each row counts by its sample
// weight (fit's class or sample weights, evaluate's and validation's sample weights), the
// key is "weighted_<name>" where `metrics` has the name already, and the list survives a
// .keras and .h5 round trip. With a learning rate of 0 training leaves the weights alone,
// so an epoch's figures can be recomputed from predict().
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <filesystem>
#include <string>
#include <unistd.h>
#include <vector>

#include "nnfit/model/model.h"
#include "nnfit/model/saving.h"
#include "nnfit/nn/lr_schedule.h"
#include "small_models.h"

namespace nnfit {
namespace {

double get(const Logs& logs, const std::string& key) { return log_value(logs, key, NAN); }

std::unique_ptr<Sequential> frozen_mlp() {
  auto m = test::small_mlp();
  CompileOptions c = m->compile_options();
  c.optimizer = OptimizerOptions{};
  c.optimizer.name = "sgd";
  c.optimizer.learning_rate = std::make_shared<ConstantLearningRate>(0.0);
  c.metrics = {MetricSpec{"accuracy"}};
  c.weighted_metrics = {MetricSpec{"accuracy"}, MetricSpec{"sparse_top_k_categorical_accuracy"}};
  c.weighted_metrics[1].class_name = "SparseTopKCategoricalAccuracy";  // a Keras object: its k is kept
  c.weighted_metrics[1].k = 2;
  m->compile(c);
  return m;
}

// sum(w * [argmax(pred) == y]) / sum(w), from the model's predictions.
double weighted_accuracy(Model& m, const Tensor& x, const Tensor& y, const std::vector<float>& w) {
  const Tensor p = m.predict(x, 64);
  double right = 0, total = 0;
  for (std::int64_t i = 0; i < x.shape()[0]; ++i) {
    const float* row = p.data<float>() + i * 3;
    const std::int64_t arg = std::max_element(row, row + 3) - row;
    right += arg == y.data<std::uint8_t>()[i] ? w[static_cast<std::size_t>(i)] : 0.0;
    total += w[static_cast<std::size_t>(i)];
  }
  return right / total;
}

TEST(WeightedMetrics, CountEachRowByItsWeightInTrainingEvaluationAndValidation) {
  auto [x, y] = test::small_data(60, 1, /*learnable=*/false);
  auto [vx, vy] = test::small_data(30, 9, /*learnable=*/false);
  auto m = frozen_mlp();
  std::vector<float> vw(30), by_class(60), ones(60, 1.0f);
  Tensor vwt = Tensor::zeros(Shape{30});
  for (std::int64_t i = 0; i < 30; ++i) vwt.data<float>()[i] = vw[static_cast<std::size_t>(i)] = 0.25f * (i % 7);
  const std::map<std::int64_t, double> class_weight = {{0, 3.0}, {1, 0.5}};
  for (std::int64_t i = 0; i < 60; ++i) {
    const auto it = class_weight.find(y.data<std::uint8_t>()[i]);
    by_class[static_cast<std::size_t>(i)] = it == class_weight.end() ? 1.0f : static_cast<float>(it->second);
  }
  FitOptions fo;
  fo.epochs = 1;
  fo.batch_size = 16;
  fo.shuffle = false;
  fo.class_weight = class_weight;
  fo.validation_data = {vx, vy};
  fo.validation_sample_weight = vwt;
  const History h = m->fit(x, y, fo);
  const Logs& logs = h.epochs[0];
  EXPECT_NEAR(get(logs, "weighted_accuracy"), weighted_accuracy(*m, x, y, by_class), 1e-6);
  EXPECT_NEAR(get(logs, "accuracy"), weighted_accuracy(*m, x, y, ones), 1e-6);
  EXPECT_NEAR(get(logs, "val_weighted_accuracy"), weighted_accuracy(*m, vx, vy, vw), 1e-6);
  EXPECT_FALSE(std::isnan(get(logs, "sparse_top_k_categorical_accuracy"))) << "no conflict: its own name";
  EXPECT_NE(get(logs, "weighted_accuracy"), get(logs, "accuracy"));

  InferenceOptions io;
  io.sample_weight = vwt;
  const Logs weighted = m->evaluate(vx, vy, io);
  EXPECT_NEAR(get(weighted, "weighted_accuracy"), weighted_accuracy(*m, vx, vy, vw), 1e-6);
  const Logs plain = m->evaluate(vx, vy, 16);  // no weights: the weighted metrics count every row once
  EXPECT_EQ(get(plain, "weighted_accuracy"), get(plain, "accuracy"));
  // Keras's order: the metrics, then the weighted ones (loss last here, as nnfit logs it).
  std::vector<std::string> keys;
  for (const auto& [k, v] : plain) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"accuracy", "weighted_accuracy", "sparse_top_k_categorical_accuracy",
                                            "loss"}));
}

TEST(WeightedMetrics, SurviveKerasFiles) {
  auto m = frozen_mlp();
  const std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) / ("nnfit_weighted_metrics_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  for (const char* name : {"m.keras", "m.h5"}) {
    const std::string path = (dir / name).string();
    save_model(*m, path);
    const auto loaded = load_model(path);
    ASSERT_TRUE(loaded->compiled()) << name;
    const auto& wm = loaded->compile_options().weighted_metrics;
    ASSERT_EQ(wm.size(), 2u) << name;
    EXPECT_EQ(wm[0].name, "accuracy") << name;
    EXPECT_EQ(wm[1].k, 2) << name;
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace nnfit
