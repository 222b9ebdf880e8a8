// Callbacks with Keras's hooks. Logs are ordered name→value maps ("loss", "accuracy",
// "val_loss", ...), plus nnfit's timing keys in epoch logs ("train_seconds",
// "samples_per_s").
#pragma once
#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "nnfit/core/tensor.h"

namespace nnfit {

using Logs = std::vector<std::pair<std::string, double>>;

double log_value(const Logs& logs, const std::string& key, double fallback = 0.0);
// The value under `key`, or nullopt.
std::optional<double> find_log(const Logs& logs, const std::string& key);

class Model;

// What a resumed run needs of a callback (BackupAndRestore saves it with the weights):
// JSON text ("" for none) and tensors (EarlyStopping's best weights).
struct CallbackState {
  std::string json;
  std::vector<Tensor> tensors;
};

// Keras's Callback: hooks called by Model::fit, which sets model() first (Keras's
// self.model) so a callback can stop training, change the learning rate, read or set the
// weights and save the model. Epochs and batches are 0-based, as Keras passes them.
class Callback {
 public:
  virtual ~Callback() = default;
  void set_model(Model* model) { model_ = model; }
  Model* model() const { return model_; }
  virtual void on_train_begin(std::int64_t /*epochs*/, std::int64_t /*steps_per_epoch*/) {}
  virtual void on_epoch_begin(std::int64_t /*epoch*/) {}
  // Before the step of a batch whose data has arrived (Keras calls it before the fetch).
  virtual void on_train_batch_begin(std::int64_t /*batch*/) {}
  virtual void on_train_batch_end(std::int64_t /*batch*/, const Logs& /*logs*/) {}
  virtual void on_epoch_end(std::int64_t /*epoch*/, const Logs& /*logs*/) {}
  // What the callback writes into the epoch's logs, before any on_epoch_end sees them and
  // the History keeps them (Keras's ReduceLROnPlateau writes "learning_rate" there).
  virtual void add_to_epoch_logs(Logs& /*logs*/) const {}
  virtual void on_train_end() {}
  // An evaluation: evaluate(), or fit's validation with fit's callbacks, as Keras calls
  // them. A batch's logs are the loss and metrics over the batches so far; the end's, all.
  virtual void on_test_begin() {}
  virtual void on_test_batch_begin(std::int64_t /*batch*/) {}
  virtual void on_test_batch_end(std::int64_t /*batch*/, const Logs& /*logs*/) {}
  virtual void on_test_end(const Logs& /*logs*/) {}
  // predict(): `outputs` are the batch's predictions, one tensor per model output (views
  // valid during the call).
  virtual void on_predict_begin() {}
  virtual void on_predict_batch_begin(std::int64_t /*batch*/) {}
  virtual void on_predict_batch_end(std::int64_t /*batch*/, const std::vector<Tensor>& /*outputs*/) {}
  virtual void on_predict_end() {}
  // State a resumed run needs; restore_state applies it and keeps it through the next
  // on_train_begin.
  virtual CallbackState state() const { return {}; }
  virtual void restore_state(CallbackState /*state*/) {}

 protected:
  Model* model_ = nullptr;
};

// Keras's progress bar: on a terminal it redraws one line in place per batch; otherwise
// it prints one line per epoch (so logs and CI output stay readable).
class ProgressBar final : public Callback {
 public:
  explicit ProgressBar(std::FILE* out = stdout, bool force_terminal = false);
  void on_train_begin(std::int64_t epochs, std::int64_t steps_per_epoch) override;
  void on_epoch_begin(std::int64_t epoch) override;
  void on_train_batch_end(std::int64_t batch, const Logs& logs) override;
  void on_epoch_end(std::int64_t epoch, const Logs& logs) override;

 private:
  std::string line(std::int64_t done, const Logs& logs, bool final) const;
  std::FILE* out_;
  bool terminal_;
  std::int64_t epochs_ = 0, steps_ = 0;
  double epoch_start_ = 0, last_draw_ = 0;
};

}  // namespace nnfit
