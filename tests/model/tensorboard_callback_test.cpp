// The TensorBoard callback: Keras's run split (train / validation) and tags, step = epoch,
// NaN skipped, the learning rate from the schedule at the iterations done, a real fit()
// whose logged values equal its History, and a new file per fit().
#include "nnfit/model/tensorboard_callback.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <random>

#include "nnfit/model/model.h"
#include "nnfit/nn/layers.h"
#include "nnfit/profile/event_file_reader.h"

namespace nnfit {
namespace {

namespace fs = std::filesystem;

fs::path temp_dir(const std::string& name) {
  fs::path d = fs::path(::testing::TempDir()) / ("nnfit_tensorboard_test_" + std::to_string(::getpid())) / name;
  fs::remove_all(d);
  return d;
}

// tag -> step -> value, over every event file in `dir`.
std::map<std::string, std::map<std::int64_t, float>> scalars(const fs::path& dir) {
  std::map<std::string, std::map<std::int64_t, float>> out;
  for (const auto& entry : fs::directory_iterator(dir)) {
    for (const auto& s : profile::read_event_file(entry.path().string()).scalars) out[s.tag][s.step] = s.value;
  }
  return out;
}

TEST(TensorBoardCallback, KerasRunsTagsAndSteps) {
  const fs::path log_dir = temp_dir("tags");
  TensorBoard tb(log_dir.string(), {.learning_rate = std::make_shared<ExponentialDecay>(0.1, 1, 0.5, true)});
  tb.on_train_begin(2, 3);
  for (std::int64_t epoch = 0; epoch < 2; ++epoch) {
    tb.on_epoch_begin(epoch);
    for (int b = 0; b < 3; ++b) tb.on_train_batch_end(b, {{"loss", 1.0}});
    const double e = static_cast<double>(epoch);
    tb.on_epoch_end(epoch, {{"accuracy", 0.5 + e / 10},
                            {"loss", 1.0 - e / 10},
                            {"val_accuracy", 0.4 + e / 10},
                            {"val_loss", 1.2 - e / 10},
                            {"train_seconds", 2.0},
                            {"samples_per_s", 1000 + e},
                            {"input_wait_fraction", NAN},
                            {"memory_peak_bytes", 4096}});
  }
  tb.on_train_end();
  ASSERT_EQ(tb.event_files().size(), 2u);
  EXPECT_EQ(fs::path(tb.event_files()[0]).parent_path(), log_dir / "train");
  EXPECT_EQ(fs::path(tb.event_files()[1]).parent_path(), log_dir / "validation");

  auto train = scalars(log_dir / "train");
  auto val = scalars(log_dir / "validation");
  std::vector<std::string> train_tags, val_tags;
  for (const auto& [tag, _] : train) train_tags.push_back(tag);
  for (const auto& [tag, _] : val) val_tags.push_back(tag);
  EXPECT_EQ(train_tags, (std::vector<std::string>{"epoch_accuracy", "epoch_learning_rate", "epoch_loss",
                                                  "epoch_memory_peak_bytes", "epoch_samples_per_s", "epoch_train_seconds"}));
  EXPECT_EQ(val_tags, (std::vector<std::string>{"epoch_accuracy", "epoch_loss"}));
  for (std::int64_t epoch : {0, 1}) {
    const double e = static_cast<double>(epoch);
    EXPECT_FLOAT_EQ(train["epoch_loss"].at(epoch), static_cast<float>(1.0 - e / 10));
    EXPECT_FLOAT_EQ(train["epoch_accuracy"].at(epoch), static_cast<float>(0.5 + e / 10));
    EXPECT_FLOAT_EQ(val["epoch_loss"].at(epoch), static_cast<float>(1.2 - e / 10));
    EXPECT_FLOAT_EQ(val["epoch_accuracy"].at(epoch), static_cast<float>(0.4 + e / 10));
    EXPECT_FLOAT_EQ(train["epoch_samples_per_s"].at(epoch), static_cast<float>(1000 + e));
    EXPECT_FLOAT_EQ(train["epoch_memory_peak_bytes"].at(epoch), 4096.0f);
    // Keras reads optimizer.learning_rate at epoch end: the schedule at iterations done.
    EXPECT_FLOAT_EQ(train["epoch_learning_rate"].at(epoch), static_cast<float>(0.1 * std::pow(0.5, 3 * (epoch + 1))));
  }
  EXPECT_EQ(train["epoch_loss"].size(), 2u);
}

TEST(TensorBoardCallback, LearningRateFromTheLogsWinsAndNoneWithoutASchedule) {
  const fs::path log_dir = temp_dir("lr");
  {
    TensorBoard tb(log_dir.string());
    tb.on_epoch_end(0, {{"loss", 1.0}});
    tb.on_train_end();
  }
  EXPECT_FALSE(scalars(log_dir / "train").count("epoch_learning_rate"));
  EXPECT_FALSE(fs::exists(log_dir / "validation"));  // no val_ keys, no validation run
  fs::remove_all(log_dir);
  TensorBoard tb(log_dir.string(), {.learning_rate = std::make_shared<ConstantLearningRate>(0.5)});
  tb.on_epoch_end(0, {{"loss", 1.0}, {"learning_rate", 0.25}});
  tb.on_train_end();
  EXPECT_FLOAT_EQ(scalars(log_dir / "train")["epoch_learning_rate"].at(0), 0.25f);
}

TEST(TensorBoardCallback, FitLogsItsHistoryAndEachFitStartsNewFiles) {
  auto model = std::make_unique<Sequential>("tb");
  model->set_input_shape(Shape{4});
  model->add(std::make_unique<Dense>("dense", DenseOptions{8, "relu"}));
  model->add(std::make_unique<Dense>("dense_1", DenseOptions{2}));
  CompileOptions co;
  co.optimizer.name = "sgd";
  co.loss = Loss::from_name("sparse_categorical_crossentropy", true);
  co.metrics = {"accuracy"};
  model->compile(co);
  Tensor x = Tensor::zeros(Shape{64, 4}, DType::f32);
  Tensor y = Tensor::zeros(Shape{64}, DType::i32);
  std::mt19937 rng(3);
  for (std::int64_t i = 0; i < 64 * 4; ++i) x.data<float>()[i] = static_cast<float>(rng() % 100) / 100.0f;
  for (std::int64_t i = 0; i < 64; ++i) y.data<std::int32_t>()[i] = x.data<float>()[i * 4] > 0.5f;

  const fs::path log_dir = temp_dir("fit");
  TensorBoard tb(log_dir.string(), {.learning_rate = model->compile_options().optimizer.learning_rate});
  FitOptions fo;
  fo.epochs = 3;
  fo.batch_size = 16;
  fo.validation_data = std::make_pair(x, y);
  fo.callbacks = {&tb};
  History h = model->fit(x, y, fo);
  auto train = scalars(log_dir / "train");
  auto val = scalars(log_dir / "validation");
  for (std::int64_t epoch = 0; epoch < 3; ++epoch) {
    const Logs& logs = h.epochs[static_cast<std::size_t>(epoch)];
    EXPECT_EQ(train["epoch_loss"].at(epoch), static_cast<float>(log_value(logs, "loss")));
    EXPECT_EQ(train["epoch_accuracy"].at(epoch), static_cast<float>(log_value(logs, "accuracy")));
    EXPECT_EQ(val["epoch_loss"].at(epoch), static_cast<float>(log_value(logs, "val_loss")));
    EXPECT_EQ(train["epoch_samples_per_s"].at(epoch), static_cast<float>(log_value(logs, "samples_per_s")));
    EXPECT_FLOAT_EQ(train["epoch_learning_rate"].at(epoch), 0.01f);  // SGD's default
    // Keras 3's on_test_end: the validation's logs at the optimizer's iterations (4 a epoch).
    EXPECT_EQ(val["evaluation_loss_vs_iterations"].at(4 * (epoch + 1)), static_cast<float>(log_value(logs, "val_loss")));
    EXPECT_EQ(val["evaluation_accuracy_vs_iterations"].at(4 * (epoch + 1)),
              static_cast<float>(log_value(logs, "val_accuracy")));
  }
  ASSERT_EQ(tb.event_files().size(), 2u);
  fo.epochs = 1;
  model->fit(x, y, fo);
  EXPECT_EQ(tb.event_files().size(), 4u);
  EXPECT_EQ(std::distance(fs::directory_iterator(log_dir / "train"), fs::directory_iterator()), 2);
  // A standalone evaluate with the callback: one more validation file, complete on return.
  InferenceOptions io;
  io.callbacks = {&tb};
  const Logs evaluated = model->evaluate(x, y, io);
  ASSERT_EQ(tb.event_files().size(), 5u);
  const auto last = profile::read_event_file(tb.event_files().back()).scalars;
  ASSERT_EQ(last.size(), 2u);  // accuracy and loss
  for (const auto& sc : last) {
    EXPECT_EQ(sc.step, 16);
    EXPECT_EQ(sc.value, static_cast<float>(log_value(evaluated, sc.tag.substr(11, sc.tag.size() - 11 - 14))))
        << sc.tag;
  }
}

}  // namespace
}  // namespace nnfit

namespace nnfit {
namespace {

// With monitor, every epoch also logs the machine (the sampler behind `nnfit monitor`).
TEST(TensorBoardCallback, MonitorLogsHostFiguresEachEpoch) {
  Sequential model("tbm");
  model.set_input_shape(Shape{4});
  model.add(std::make_unique<Dense>("dense", DenseOptions{2}));
  CompileOptions co;
  co.optimizer.name = "sgd";
  co.loss = Loss::from_name("sparse_categorical_crossentropy", true);
  model.compile(co);
  const fs::path log_dir = temp_dir("monitor");
  TensorBoard tb(log_dir.string(), {.monitor = true});
  FitOptions fo;
  fo.epochs = 2;
  fo.batch_size = 8;
  fo.callbacks = {&tb};
  model.fit(Tensor::zeros(Shape{32, 4}, DType::f32), Tensor::zeros(Shape{32}, DType::i32), fo);
  auto train = scalars(log_dir / "train");
  ASSERT_EQ(train.count("epoch_host_cpu_percent"), 1u);
  ASSERT_EQ(train.count("epoch_host_ram_used_bytes"), 1u);
  for (std::int64_t step : {0, 1}) {
    const float cpu = train["epoch_host_cpu_percent"].at(step);
    EXPECT_GE(cpu, 0.0f);
    EXPECT_LE(cpu, 100.0f);
    EXPECT_GT(train["epoch_host_ram_used_bytes"].at(step), 0.0f);
  }
  // No NVIDIA driver here: no GPU tags (a machine with one gets epoch_gpu0_...).
  for (const auto& [tag, _] : train) {
    if (tag.starts_with("epoch_gpu")) EXPECT_EQ(std::system("test -e /proc/driver/nvidia/version"), 0) << tag;
  }
}

}  // namespace
}  // namespace nnfit
