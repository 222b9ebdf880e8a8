// Keras's built-in training callbacks, with its arguments, defaults and rules:
// EarlyStopping, ReduceLROnPlateau, CSVLogger, TerminateOnNaN. (ModelCheckpoint and
// BackupAndRestore, which write model files, are in checkpoint_callbacks.h.) Each keeps
// the state Keras keeps, and state()/restore_state() carry it across a resumed run.
//
// Thread safety: none; fit calls them on its own thread.
#pragma once
#include <cstdint>
#include <cstdio>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "nnfit/core/tensor.h"
#include "nnfit/model/callbacks.h"

namespace nnfit {

// Keras's monitor rule: mode "min", "max" or "auto" (a name with "loss" is minimized; one
// with "acc", "accuracy" or "auc" maximized). throws: InvalidArgument for an unknown mode
// or an "auto" that cannot be resolved.
bool monitor_maximizes(const std::string& monitor, const std::string& mode, const char* callback);

struct EarlyStoppingOptions {
  std::string monitor = "val_loss";
  double min_delta = 0.0;
  std::int64_t patience = 0;
  int verbose = 0;
  std::string mode = "auto";
  std::optional<double> baseline;
  bool restore_best_weights = false;
  std::int64_t start_from_epoch = 0;
};

class EarlyStopping final : public Callback {
 public:
  // throws: InvalidArgument for a bad mode or a negative patience.
  explicit EarlyStopping(EarlyStoppingOptions options = {}, std::FILE* out = stdout);
  void on_train_begin(std::int64_t epochs, std::int64_t steps_per_epoch) override;
  void on_epoch_end(std::int64_t epoch, const Logs& logs) override;
  void on_train_end() override;

  // Keras's attributes.
  std::int64_t wait() const { return wait_; }
  std::int64_t stopped_epoch() const { return stopped_epoch_; }
  std::int64_t best_epoch() const { return best_epoch_; }
  std::optional<double> best() const { return best_; }
  // (best, wait, best_epoch, stopped_epoch) as a JSON object and, with
  // restore_best_weights, the best weights as tensors; restoring also keeps the state
  // through the next on_train_begin (a resumed run continues the count).
  CallbackState state() const override;
  void restore_state(CallbackState state) override;

 private:
  bool improves(double value, double reference) const;
  EarlyStoppingOptions options_;
  std::FILE* out_;
  bool maximize_;
  std::int64_t wait_ = 0, stopped_epoch_ = 0, best_epoch_ = 0;
  std::optional<double> best_;
  std::vector<Tensor> best_weights_;
  bool restored_ = false;  // state came from a backup: keep it at on_train_begin
};

struct ReduceLROnPlateauOptions {
  std::string monitor = "val_loss";
  double factor = 0.1;
  std::int64_t patience = 10;
  int verbose = 0;
  std::string mode = "auto";
  double min_delta = 1e-4;
  std::int64_t cooldown = 0;
  double min_lr = 0.0;
};

class ReduceLROnPlateau final : public Callback {
 public:
  // throws: InvalidArgument for factor >= 1 (as Keras) or a bad mode.
  explicit ReduceLROnPlateau(ReduceLROnPlateauOptions options = {}, std::FILE* out = stdout);
  void on_train_begin(std::int64_t epochs, std::int64_t steps_per_epoch) override;
  void on_epoch_end(std::int64_t epoch, const Logs& logs) override;
  // "learning_rate": the rate the epoch trained at (float32, as Keras reads its variable).
  void add_to_epoch_logs(Logs& logs) const override;
  CallbackState state() const override;  // (best, wait, cooldown_counter)
  void restore_state(CallbackState state) override;
  void on_train_end() override { restored_ = false; }

 private:
  ReduceLROnPlateauOptions options_;
  std::FILE* out_;
  bool maximize_;
  double best_;
  std::int64_t wait_ = 0, cooldown_counter_ = 0;
  bool restored_ = false;
};

// One row per epoch: "epoch" then the log keys in sorted order, as Keras writes them;
// values in Python's shortest round-trip form. append: continue an existing file (a
// resumed run) without a second header.
class CSVLogger final : public Callback {
 public:
  CSVLogger(std::string filename, std::string separator = ",", bool append = false);
  ~CSVLogger() override;
  void on_train_begin(std::int64_t epochs, std::int64_t steps_per_epoch) override;
  void on_epoch_end(std::int64_t epoch, const Logs& logs) override;
  void on_train_end() override;

 private:
  std::string filename_, separator_;
  bool append_;
  std::FILE* file_ = nullptr;
  std::vector<std::string> keys_;
};

// Stops training at the first batch whose loss is NaN or infinite (Keras prints
// "Batch N: Invalid loss, terminating training").
class TerminateOnNaN final : public Callback {
 public:
  explicit TerminateOnNaN(std::FILE* out = stdout) : out_(out) {}
  void on_train_batch_end(std::int64_t batch, const Logs& logs) override;

 private:
  std::FILE* out_;
};

// Python's repr of a float: the shortest text that reads back to the same double.
std::string python_float(double v);

}  // namespace nnfit
