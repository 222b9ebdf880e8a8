// The callbacks that write model files (saving.h), with Keras's arguments and defaults:
// ModelCheckpoint (filepath templates such as "ckpt/{epoch:02d}-{val_loss:.2f}.keras")
// and BackupAndRestore, which makes a killed run resume exactly: weights, optimizer slots
// and step count (hence the learning-rate schedule's position and the dropout stream),
// the epoch and batch reached, and the other callbacks' state (EarlyStopping's best and
// wait). Every file is replaced atomically, so a kill never leaves a half-written backup.
#pragma once
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

#include "nnfit/model/callbacks.h"

namespace nnfit {

struct ModelCheckpointOptions {
  std::string filepath;  // required; ends in .keras or .h5 (.weights.h5 with save_weights_only)
  std::string monitor = "val_loss";
  int verbose = 0;
  bool save_best_only = false;
  bool save_weights_only = false;
  std::string mode = "auto";
  std::int64_t save_freq = 0;  // 0: "epoch"; N: every N batches
  std::optional<double> initial_value_threshold;
};

class ModelCheckpoint final : public Callback {
 public:
  // throws: InvalidArgument for a filepath whose extension does not fit, a bad mode or
  // save_freq, or a template field that is not valid.
  explicit ModelCheckpoint(ModelCheckpointOptions options, std::FILE* out = stdout);
  void on_train_begin(std::int64_t epochs, std::int64_t steps_per_epoch) override;
  void on_epoch_begin(std::int64_t epoch) override;
  void on_train_batch_end(std::int64_t batch, const Logs& logs) override;
  void on_epoch_end(std::int64_t epoch, const Logs& logs) override;
  std::optional<double> best() const { return best_; }
  CallbackState state() const override;  // (best)
  void restore_state(CallbackState state) override;

 private:
  void save(std::int64_t epoch, std::optional<std::int64_t> batch, const Logs& logs);
  ModelCheckpointOptions options_;
  std::FILE* out_;
  bool maximize_;
  std::optional<double> best_;
  std::int64_t epoch_ = 0, batches_since_save_ = 0;
};

// Fills a Keras filepath template: {epoch} (1-based), {batch} and log keys, each with an
// optional Python format spec ({epoch:02d}, {val_loss:.4f}). throws: InvalidArgument
// naming a field the logs lack or a spec it cannot apply.
std::string format_checkpoint_path(const std::string& pattern, std::int64_t epoch, std::optional<std::int64_t> batch,
                                   const Logs& logs);

struct BackupAndRestoreOptions {
  std::string backup_dir;            // required
  std::int64_t save_freq = 0;        // 0: "epoch"; N: every N batches
  bool delete_checkpoint = true;     // remove the backup when training ends normally
};

class BackupAndRestore final : public Callback {
 public:
  // throws: InvalidArgument for an empty backup_dir or a negative save_freq.
  explicit BackupAndRestore(BackupAndRestoreOptions options);
  void on_train_begin(std::int64_t epochs, std::int64_t steps_per_epoch) override;
  void on_epoch_begin(std::int64_t epoch) override;
  void on_train_batch_end(std::int64_t batch, const Logs& logs) override;
  void on_epoch_end(std::int64_t epoch, const Logs& logs) override;
  void on_train_end() override;
  // Where a resumed run started: epochs complete and batches of the next one done.
  std::int64_t restored_epoch() const { return restored_epoch_; }
  std::int64_t restored_step() const { return restored_step_; }

 private:
  // Writes the backup: `epoch` epochs complete and `batch` batches of the next done;
  // mid_epoch carries the running epoch's sums too.
  void backup(std::int64_t epoch, std::int64_t batch, bool mid_epoch);
  BackupAndRestoreOptions options_;
  std::int64_t epoch_ = 0, batches_since_ = 0;
  std::int64_t restored_epoch_ = 0, restored_step_ = 0;
  std::optional<std::int64_t> pending_epoch_;  // an epoch ended; back up once all callbacks saw it
};

}  // namespace nnfit
