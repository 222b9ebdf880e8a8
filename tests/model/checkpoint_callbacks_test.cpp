// ModelCheckpoint (filepath templates, save_best_only, save_freq, weights only), the
// callbacks config reader, and BackupAndRestore within one process: the files appear as
// Keras's rules say, load back, and bad configs are errors naming the entry and key.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>

#include "nnfit/core/error.h"
#include "nnfit/model/checkpoint_callbacks.h"
#include "nnfit/model/keras_config.h"
#include "nnfit/model/saving.h"
#include "nnfit/model/training_callbacks.h"
#include "nnfit/nn/layers.h"
#include "nnfit/nn/lr_schedule.h"

namespace nnfit {
namespace {

namespace fs = std::filesystem;

class Checkpoints : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("nnfit_ckpt_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

std::unique_ptr<Sequential> small() {
  auto m = std::make_unique<Sequential>("small");
  m->set_input_shape(Shape{3});
  m->set_seed(2);
  m->add(std::make_unique<Dense>("d", DenseOptions{4, "relu"}));
  m->add(std::make_unique<Dense>("out", DenseOptions{1}));
  CompileOptions c;
  c.optimizer.name = "sgd";
  c.optimizer.learning_rate = std::make_shared<ConstantLearningRate>(0.05);
  c.loss = Loss::from_name("mse");
  m->compile(c);
  return m;
}

Tensor column(std::int64_t n, float scale) {
  Tensor t = Tensor::zeros(Shape{n, 3});
  for (std::int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = scale * static_cast<float>(i % 7) / 7.0f;
  return t;
}

TEST(CheckpointPath, FormatsEpochBatchAndLogsAsPythonDoes) {
  const Logs logs{{"loss", 0.123456}, {"val_loss", 2.5}};
  EXPECT_EQ(format_checkpoint_path("ckpt/{epoch:02d}-{val_loss:.2f}.keras", 4, std::nullopt, logs), "ckpt/05-2.50.keras");
  EXPECT_EQ(format_checkpoint_path("m_{epoch}_{batch:03d}_{loss:.4f}.keras", 0, 9, logs), "m_1_010_0.1235.keras");
  EXPECT_EQ(format_checkpoint_path("{{literal}}_{epoch}.h5", 1, std::nullopt, logs), "{literal}_2.h5");
  EXPECT_THROW(format_checkpoint_path("{val_accuracy:.2f}.keras", 0, std::nullopt, logs), InvalidArgument);
  EXPECT_THROW(format_checkpoint_path("{epoch:>5s}.keras", 0, std::nullopt, logs), InvalidArgument);
  EXPECT_THROW(format_checkpoint_path("{epoch.keras", 0, std::nullopt, logs), InvalidArgument);
}

TEST_F(Checkpoints, EveryEpochOrOnlyTheBestAsKerasSaves) {
  auto m = small();
  const Tensor x = column(32, 1.0f), y = Tensor::zeros(Shape{32, 1});
  FitOptions fo;
  fo.epochs = 4;
  fo.batch_size = 8;
  fo.validation_data = std::make_pair(x, y);
  ModelCheckpointOptions every;
  every.filepath = path("all/{epoch:02d}-{val_loss:.3f}.keras");
  ModelCheckpointOptions best;
  best.filepath = path("best.weights.h5");
  best.save_best_only = true;
  best.save_weights_only = true;
  best.initial_value_threshold = -1.0;  // nothing beats a negative mean squared error
  ModelCheckpoint a(every), b(best);
  fo.callbacks = {&a, &b};
  const History h = m->fit(x, y, fo);
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(dir_ / "all")) files.push_back(e.path().filename().string());
  std::sort(files.begin(), files.end());
  ASSERT_EQ(files.size(), 4u);
  char expected[64];
  std::snprintf(expected, sizeof expected, "04-%.3f.keras", log_value(h.epochs[3], "val_loss"));
  EXPECT_EQ(files.back(), expected);
  EXPECT_FALSE(fs::exists(path("best.weights.h5"))) << "the threshold was never beaten";
  // The last epoch's file is the model as training left it.
  auto back = load_model((dir_ / "all" / files.back()).string());
  InferenceOptions io;
  const Tensor pa = m->predict(x, io), pb = back->predict(x, io);
  for (std::int64_t i = 0; i < pa.numel(); ++i) EXPECT_EQ(pa.data<float>()[i], pb.data<float>()[i]);
}

TEST_F(Checkpoints, SaveFreqCountsBatches) {
  auto m = small();
  const Tensor x = column(40, 1.0f), y = Tensor::zeros(Shape{40, 1});
  ModelCheckpointOptions o;
  o.filepath = path("b{epoch}_{batch}.keras");
  o.save_freq = 3;
  ModelCheckpoint cb(o);
  FitOptions fo;
  fo.epochs = 2;
  fo.batch_size = 8;  // 5 batches an epoch: saves after batches 3 (epoch 1) and 1, 4 (epoch 2)
  fo.callbacks = {&cb};
  m->fit(x, y, fo);
  for (const char* f : {"b1_3.keras", "b2_1.keras", "b2_4.keras"}) EXPECT_TRUE(fs::exists(path(f))) << f;
  std::size_t n = 0;
  for (auto it = fs::directory_iterator(dir_); it != fs::directory_iterator(); ++it) ++n;
  EXPECT_EQ(n, 3u);
}

TEST_F(Checkpoints, ConfigReaderBuildsKerasCallbacksAndNamesBadEntries) {
  const std::string ok = R"([{"class_name": "ModelCheckpoint", "config": {"filepath": "c/{epoch}.keras", "save_freq": "epoch"}},
      {"module": "keras.callbacks", "class_name": "EarlyStopping", "config": {"monitor": "loss", "patience": 2}, "registered_name": null},
      {"class_name": "BackupAndRestore", "config": {"backup_dir": "bk", "save_freq": 10, "delete_checkpoint": false}},
      {"class_name": "ReduceLROnPlateau", "config": {"factor": 0.5}},
      {"class_name": "CSVLogger", "config": {"filename": "log.csv", "append": true}},
      {"class_name": "TerminateOnNaN"}])";
  const auto cbs = callbacks_from_keras_json(ok, "cfg.json: fit");
  ASSERT_EQ(cbs.size(), 6u);
  EXPECT_NE(dynamic_cast<ModelCheckpoint*>(cbs[0].get()), nullptr);
  EXPECT_NE(dynamic_cast<EarlyStopping*>(cbs[1].get()), nullptr);
  EXPECT_NE(dynamic_cast<BackupAndRestore*>(cbs[2].get()), nullptr);
  auto error_of = [](const std::string& json) {
    try {
      callbacks_from_keras_json(json, "cfg.json: fit");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error_of(R"([{"class_name": "EarlyStoping"}])").find("callbacks[0].config: unknown callback \"EarlyStoping\""),
            std::string::npos);
  EXPECT_NE(error_of(R"([{"class_name": "EarlyStopping", "config": {"patiense": 2}}])").find("unknown key \"patiense\""),
            std::string::npos);
  EXPECT_NE(error_of(R"([{"class_name": "ModelCheckpoint", "config": {"filepath": "m.onnx"}}])").find("must end in .keras"),
            std::string::npos);
  EXPECT_NE(error_of(R"([{"class_name": "ModelCheckpoint", "config": {"filepath": "m.keras", "save_freq": -3}}])")
                .find("\"save_freq\" must be \"epoch\" or a positive number"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"class_name": "TerminateOnNaN"})").find("callbacks must be a list"), std::string::npos);
  EXPECT_NE(error_of(R"([{"class_name": "EarlyStopping", "config": {"mode": "maximum"}}])").find("mode must be"),
            std::string::npos);
}

TEST_F(Checkpoints, BackupAndRestoreResumesAStoppedFitInProcess) {
  const Tensor x = column(48, 1.0f), y = Tensor::zeros(Shape{48, 1});
  FitOptions fo;
  fo.epochs = 3;
  fo.batch_size = 8;
  fo.seed = 5;
  auto ref = small();
  ref->fit(x, y, fo);
  // The same run, stopped by an exception after 2 epochs and 2 batches, then resumed.
  struct Interrupt final : Callback {
    std::int64_t epoch = 0;
    void on_epoch_begin(std::int64_t e) override { epoch = e; }
    void on_train_batch_end(std::int64_t batch, const Logs&) override {
      if (epoch == 2 && batch == 1) throw DataError("interrupt", -1, "stop here");
    }
  } interrupt;
  BackupAndRestoreOptions bo;
  bo.backup_dir = path("backup");
  bo.save_freq = 2;
  BackupAndRestore backup(bo);
  auto m = small();
  fo.callbacks = {&backup, &interrupt};
  EXPECT_THROW(m->fit(x, y, fo), DataError);
  EXPECT_TRUE(fs::exists(path("backup/latest.weights.h5"))) << "a failed run keeps its backup";
  auto resumed = small();
  BackupAndRestore again(bo);
  fo.callbacks = {&again};
  const History h = resumed->fit(x, y, fo);
  EXPECT_EQ(h.initial_epoch, 2);
  EXPECT_EQ(h.initial_step, 2);
  EXPECT_EQ(resumed->iterations(), ref->iterations());
  const auto wa = ref->get_weights(), wb = resumed->get_weights();
  for (std::size_t i = 0; i < wa.size(); ++i) {
    ASSERT_EQ(0, std::memcmp(wa[i].raw(), wb[i].raw(), wa[i].nbytes())) << "weight " << i;
  }
  EXPECT_FALSE(fs::exists(path("backup"))) << "a run that ends normally deletes its backup";
}

TEST_F(Checkpoints, EarlyStoppingsBestWeightsSurviveAResume) {
  // mode "max" on a falling loss makes the first epoch the best, so restoring the best
  // weights at the end undoes the later epochs; a resumed run must restore the same ones.
  const Tensor x = column(48, 1.0f), y = Tensor::zeros(Shape{48, 1});
  FitOptions fo;
  fo.epochs = 4;
  fo.batch_size = 8;
  fo.seed = 5;
  EarlyStoppingOptions eo;
  eo.monitor = "loss";
  eo.mode = "max";
  eo.patience = 10;
  eo.restore_best_weights = true;
  auto plain = small();
  plain->fit(x, y, fo);
  auto ref = small();
  EarlyStopping ref_stop(eo, nullptr);
  fo.callbacks = {&ref_stop};
  ref->fit(x, y, fo);
  EXPECT_EQ(ref_stop.best_epoch(), 0);
  struct Interrupt final : Callback {
    void on_epoch_end(std::int64_t e, const Logs&) override {
      if (e == 2) throw DataError("interrupt", -1, "stop here");
    }
  } interrupt;
  BackupAndRestoreOptions bo;
  bo.backup_dir = path("backup");
  BackupAndRestore backup(bo);
  EarlyStopping stop(eo, nullptr);
  auto m = small();
  fo.callbacks = {&backup, &stop, &interrupt};
  EXPECT_THROW(m->fit(x, y, fo), DataError);
  auto resumed = small();
  BackupAndRestore again(bo);
  EarlyStopping stop_again(eo, nullptr);
  fo.callbacks = {&again, &stop_again};
  EXPECT_EQ(resumed->fit(x, y, fo).initial_epoch, 2);
  EXPECT_EQ(stop_again.best_epoch(), 0);
  const auto wa = ref->get_weights(), wb = resumed->get_weights(), wp = plain->get_weights();
  bool restored_something = false;
  for (std::size_t i = 0; i < wa.size(); ++i) {
    ASSERT_EQ(0, std::memcmp(wa[i].raw(), wb[i].raw(), wa[i].nbytes())) << "weight " << i;
    restored_something |= std::memcmp(wa[i].raw(), wp[i].raw(), wa[i].nbytes()) != 0;
  }
  EXPECT_TRUE(restored_something) << "the best weights should differ from the last epoch's";
}

}  // namespace
}  // namespace nnfit
