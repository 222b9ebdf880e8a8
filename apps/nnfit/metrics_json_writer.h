// --metrics-json: a Callback that rewrites one JSON file after every epoch with the run's
// settings, memory figures and the epoch logs so far (schema: docs/cli.md). The file is
// written to PATH.tmp and renamed, so a reader never sees half a file.
#pragma once
#include <string>
#include <vector>

#include "nnfit/model/callbacks.h"
#include "nnfit/model/model.h"

namespace nnfit::cli {

// Holds a reference to the model (not owned; must outlive the writer). Not thread-safe.
class MetricsJsonWriter final : public Callback {
 public:
  // device_reason: why the model runs where it does (DevicePlacement::reason).
  MetricsJsonWriter(std::string path, const Model& model, std::int64_t batch_size, std::string device_reason = "");
  void on_train_begin(std::int64_t epochs, std::int64_t steps_per_epoch) override;
  void on_epoch_end(std::int64_t epoch, const Logs& logs) override;

 private:
  // throws: DataError naming the path when it cannot be written.
  void write() const;

  std::string path_;
  const Model& model_;
  std::int64_t batch_size_;
  std::int64_t steps_per_epoch_ = 0;  // fit's batches per epoch; 0: one pass of unknown length
  std::string device_reason_;
  std::vector<std::pair<std::int64_t, Logs>> epochs_;  // (0-based epoch, logs)
};

}  // namespace nnfit::cli
