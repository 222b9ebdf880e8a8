// Keras's TensorBoard callback, for epoch scalars: every epoch writes each epoch-log key
// as `epoch_<key>` at step = epoch (0-based, as Keras's fit passes it) into
// LOG_DIR/train/, and each `val_<key>` as `epoch_<key>` into LOG_DIR/validation/, so the
// train and validation curves overlay under one tag (keras/src/callbacks/tensorboard.py,
// _log_epoch_metrics). nnfit's timing keys go the same way: samples_per_s ->
// epoch_samples_per_s, input_wait_fraction, memory_peak_bytes, train_seconds. NaN values
// are skipped. Tags and files are listed in docs/outputs.md.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "nnfit/model/callbacks.h"
#include "nnfit/nn/optimizer.h"

namespace nnfit {

namespace profile {
class EventFileWriter;
class Monitor;
}

struct TensorBoardOptions {
  // Keras also logs optimizer.learning_rate at each epoch end as epoch_learning_rate.
  // nnfit's epoch logs carry no learning rate, so pass the optimizer's schedule (after
  // compile: model.compile_options().optimizer.learning_rate); it is evaluated, as Keras
  // reads it, at the optimizer iterations done so far (initial_iteration plus the batches
  // this callback has seen). Null: epoch_learning_rate is written only when the epoch logs
  // carry a "learning_rate" key.
  std::shared_ptr<const LearningRateSchedule> learning_rate;
  std::int64_t initial_iteration = 0;  // iterations the model had run before this callback
  // Also log the machine each epoch, from the sampler behind `nnfit monitor`: to train/,
  // epoch_host_cpu_percent (all cores, averaged over the epoch), epoch_host_ram_used_bytes,
  // and per NVIDIA GPU i epoch_gpu<i>_utilization_percent and epoch_gpu<i>_memory_used_bytes.
  bool monitor = false;
  // Keras's histogram_freq: every that many epochs (0: never), a histogram of each layer's
  // weights to train/, tagged "<weight path>/histogram" (dense/kernel/histogram) at the epoch,
  // as Keras 3's _log_weights writes them with tf.summary.histogram.
  std::int64_t histogram_freq = 0;
};

// Owns its event files (one per run directory, opened on first use, closed by
// on_train_end(), so a second fit() starts new files as Keras does). Not thread-safe: fit
// calls it from one thread. Errors writing the logs throw DataError naming the file.
class TensorBoard final : public Callback {
 public:
  explicit TensorBoard(std::string log_dir, TensorBoardOptions options = {});
  ~TensorBoard() override;
  TensorBoard(const TensorBoard&) = delete;
  TensorBoard& operator=(const TensorBoard&) = delete;

  void on_train_begin(std::int64_t epochs, std::int64_t steps_per_epoch) override;
  void on_train_batch_end(std::int64_t batch, const Logs& logs) override;
  void on_epoch_end(std::int64_t epoch, const Logs& logs) override;
  void on_train_end() override;
  // After an evaluation (fit's validation or evaluate()): its logs as Keras 3 writes them
  // to the validation run, "evaluation_<name>_vs_iterations" at the optimizer's iterations.
  // Outside fit the file is closed at once, so a reader sees it complete.
  void on_test_end(const Logs& logs) override;

  const std::string& log_dir() const { return log_dir_; }
  std::string train_dir() const;       // LOG_DIR/train
  std::string validation_dir() const;  // LOG_DIR/validation
  // Event files this callback has written (train first), in the order opened.
  const std::vector<std::string>& event_files() const { return event_files_; }

 private:
  profile::EventFileWriter& writer(std::unique_ptr<profile::EventFileWriter>& w, const std::string& dir);
  std::string log_dir_;
  TensorBoardOptions options_;
  std::int64_t iterations_ = 0;  // batches seen, all fits
  bool in_fit_ = false;
  std::unique_ptr<profile::EventFileWriter> train_, validation_;
  std::unique_ptr<profile::Monitor> monitor_;
  std::vector<std::string> event_files_;
};

}  // namespace nnfit
