// The `nnfit train` config file: one JSON object with `model` (a Keras model.to_json()
// object), `data`, `compile` and `fit`. Reading it resolves every path (relative to the
// config file, `${FASHION_MNIST_DIR}`-style variables from the env-flag registry) and
// checks every key, so a typo fails before any data is read. Format: docs/config.md.
// Read by `nnfit train`, `plan`, `export` and `data-bench`, and by the train_config fuzzer.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "nnfit/memory/memory_policy.h"
#include "nnfit/model/model.h"
#include "nnfit/config/pipeline.h"

namespace nnfit::config {

struct DataFiles {
  std::string images;  // IDX file, raw or .gz, resolved path
  std::string labels;
};

// One split: the IDX shorthand ({"images", "labels"}: loaded whole, scaled by 1/255,
// shuffled each epoch and batched, in memory) or a pipeline ({"source", "pipeline"}).
struct DataSpec {
  std::optional<DataFiles> files;
  std::optional<PipelineSpec> pipeline;
};

struct TrainConfig {
  std::string path;         // the config file, as given
  std::string model_json;   // the Keras model object as JSON text, or
  std::string model_file;   // a saved model (.keras / .h5) to fine-tune: architecture and weights
  std::string model_where;  // the file to name in model errors
  DataSpec train;
  std::optional<DataSpec> validation;
  // The compile section; without one a saved model keeps its file's compile config
  // (optimizer state included), so training continues where it stopped.
  std::optional<CompileOptions> compile;
  // fit.callbacks: Keras's serialized callbacks ([{"class_name", "config"}]) as JSON text.
  std::string callbacks_json;
  std::int64_t epochs = 1;
  std::int64_t steps_per_epoch = 0;  // fit.steps_per_epoch; 0: one pass over the data per epoch
  // fit.validation_freq: validate after every Nth epoch, or (a list) after those epochs
  // (from 1); fit.validation_steps: batches per validation (0: all); fit.validation_batch_size:
  // the validation batches' size (0: batch_size).
  std::int64_t validation_freq = 1;
  std::vector<std::int64_t> validation_epochs;
  std::int64_t validation_steps = 0;
  std::int64_t validation_batch_size = 0;
  std::int64_t batch_size = 32;  // Keras's defaults
  bool shuffle = true;
  std::uint64_t seed = 0;
  MemorySettings memory;  // fit.memory
  std::string on_oom = "fail";  // fit.on_oom: "fail" or "reduce_batch"
  std::string device;           // fit.device: "auto", "cpu", "cuda:N" ("" when absent: auto)
  bool deterministic = false;   // fit.deterministic: set_op_determinism (also --deterministic)
  std::map<std::int64_t, double> class_weight;  // fit.class_weight: {"0": 1.0, "1": 4.0}
};

// throws: InvalidArgument (unreadable file, JSON syntax with line/column, unknown or
//   ill-typed key named by its path such as `fit.epochz`) or Unsupported.
TrainConfig read_train_config(const std::string& path);

}  // namespace nnfit::config
