// Keras's hook order, as fit, evaluate and predict call it: on_train_batch_begin before
// each step, on_test_* around fit's validation (with fit's callbacks) and evaluate, and
// on_predict_* around predict with each batch's outputs. The test logs are the running
// loss and metrics; the last batch's and the end's are the evaluation's result.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "nnfit/model/model.h"
#include "small_models.h"

namespace nnfit {
namespace {

struct Recorder final : Callback {
  std::vector<std::string> events;
  std::vector<Logs> test_batch_logs;
  Logs test_end_logs, epoch_logs;
  std::vector<Tensor> predicted;  // each batch's outputs, copied
  void on_epoch_begin(std::int64_t e) override { events.push_back("epoch_begin " + std::to_string(e)); }
  void on_train_batch_begin(std::int64_t b) override { events.push_back("train_batch_begin " + std::to_string(b)); }
  void on_train_batch_end(std::int64_t b, const Logs&) override {
    events.push_back("train_batch_end " + std::to_string(b));
  }
  void on_epoch_end(std::int64_t e, const Logs& logs) override {
    events.push_back("epoch_end " + std::to_string(e));
    epoch_logs = logs;
  }
  void on_test_begin() override {
    events.push_back(std::string("test_begin") + (model() ? "" : " without a model"));
  }
  void on_test_batch_begin(std::int64_t b) override { events.push_back("test_batch_begin " + std::to_string(b)); }
  void on_test_batch_end(std::int64_t b, const Logs& logs) override {
    events.push_back("test_batch_end " + std::to_string(b));
    test_batch_logs.push_back(logs);
  }
  void on_test_end(const Logs& logs) override {
    events.push_back("test_end");
    test_end_logs = logs;
  }
  void on_predict_begin() override { events.push_back("predict_begin"); }
  void on_predict_batch_begin(std::int64_t b) override { events.push_back("predict_batch_begin " + std::to_string(b)); }
  void on_predict_batch_end(std::int64_t b, const std::vector<Tensor>& outputs) override {
    events.push_back("predict_batch_end " + std::to_string(b) + " rows " + std::to_string(outputs.at(0).shape()[0]));
    predicted.push_back(outputs.at(0).clone());
  }
  void on_predict_end() override { events.push_back("predict_end"); }
};

double get(const Logs& logs, const std::string& key) { return log_value(logs, key, -1.0); }

TEST(CallbackHooks, FitValidationEvaluateAndPredictCallThemInKerasOrder) {
  auto [x, y] = test::small_data(20);
  auto [vx, vy] = test::small_data(10, 9);
  auto m = test::small_mlp();
  Recorder r;
  FitOptions fo;
  fo.epochs = 1;
  fo.batch_size = 8;  // 3 training batches (8, 8, 4), 2 validation batches (8, 2)
  fo.shuffle = false;
  fo.validation_data = {vx, vy};
  fo.callbacks = {&r};
  m->fit(x, y, fo);
  EXPECT_EQ(r.events, (std::vector<std::string>{
                          "epoch_begin 0", "train_batch_begin 0", "train_batch_end 0", "train_batch_begin 1",
                          "train_batch_end 1", "train_batch_begin 2", "train_batch_end 2", "test_begin",
                          "test_batch_begin 0", "test_batch_end 0", "test_batch_begin 1", "test_batch_end 1",
                          "test_end", "epoch_end 0"}));
  ASSERT_EQ(r.test_batch_logs.size(), 2u);
  EXPECT_EQ(get(r.test_end_logs, "loss"), get(r.epoch_logs, "val_loss"));
  EXPECT_EQ(get(r.test_end_logs, "accuracy"), get(r.epoch_logs, "val_accuracy"));
  EXPECT_EQ(get(r.test_batch_logs[1], "loss"), get(r.test_end_logs, "loss"));  // running: the last is all of it
  EXPECT_NE(get(r.test_batch_logs[0], "loss"), get(r.test_batch_logs[1], "loss"));

  Recorder e;
  InferenceOptions io;
  io.batch_size = 4;
  io.callbacks = {&e};
  const Logs logs = m->evaluate(vx, vy, io);
  EXPECT_EQ(e.events, (std::vector<std::string>{"test_begin", "test_batch_begin 0", "test_batch_end 0",
                                                "test_batch_begin 1", "test_batch_end 1", "test_batch_begin 2",
                                                "test_batch_end 2", "test_end"}));
  EXPECT_EQ(get(e.test_end_logs, "loss"), get(logs, "loss"));
  Recorder d;
  io.callbacks = {&d};
  m->evaluate(data::Dataset::from_tensor_slices({vx, vy}).batch(4), io);
  EXPECT_EQ(d.events, e.events);
  EXPECT_EQ(get(d.test_end_logs, "loss"), get(logs, "loss"));

  Recorder p;
  io.callbacks = {&p};
  const Tensor out = m->predict(vx, io);
  EXPECT_EQ(p.events, (std::vector<std::string>{"predict_begin", "predict_batch_begin 0", "predict_batch_end 0 rows 4",
                                                "predict_batch_begin 1", "predict_batch_end 1 rows 4",
                                                "predict_batch_begin 2", "predict_batch_end 2 rows 2",
                                                "predict_end"}));
  std::size_t at = 0;
  for (const Tensor& t : p.predicted) {
    EXPECT_EQ(0, std::memcmp(t.raw(), static_cast<const char*>(out.raw()) + at, t.nbytes()));
    at += t.nbytes();
  }
  EXPECT_EQ(at, out.nbytes());
}

}  // namespace
}  // namespace nnfit
