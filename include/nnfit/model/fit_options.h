// What Model's compile, fit, evaluate and predict take and give (split from model.h):
// CompileOptions, FitOptions, InferenceOptions, DataParallelOptions, the History of a fit
// and the MemoryPlan of a batch size. Plain structs; Model (nnfit/model/model.h) runs them.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "nnfit/data/autotune.h"
#include "nnfit/data/dataset.h"
#include "nnfit/dist/strategy.h"
#include "nnfit/model/callbacks.h"
#include "nnfit/nn/dtype_policy.h"
#include "nnfit/nn/loss.h"
#include "nnfit/nn/metrics.h"
#include "nnfit/nn/optimizer.h"

namespace nnfit {

// Data-parallel training (Model::set_communicator; docs/design/distributed.md).
struct DataParallelOptions {
  // Gradients are summed across ranks in buckets of about this many bytes, in reverse
  // layer order; a bucket's sum starts as soon as the backward pass has produced all of
  // its gradients (Note [Gradient buckets] in replicas.cpp). 0: one bucket each.
  std::int64_t bucket_bytes = 256 << 10;  // chosen by measurement: docs/design/distributed.md
  // false: every bucket starts after the backward pass (for measuring the overlap).
  bool overlap = true;
  // How a model on a GPU sums its gradients (Note [Device gradient sums] in
  // replicas.cpp): automatic, ring (host memory over the host communicator) or nccl.
  dist::CommunicationImplementation implementation = dist::CommunicationImplementation::automatic;
  // Makes the device communicator; null: NCCL's (dist::make_nccl_communicator). A seam for
  // other device libraries and for tests on a simulated device.
  dist::DeviceCommunicatorFactory make_device_communicator;
  // The device communicator's watchdog deadline per collective (--collective-timeout).
  double collective_timeout_s = 300;
};

struct CompileOptions {
  OptimizerOptions optimizer;
  Loss loss;                           // every output's loss, unless `losses` is given
  std::vector<Loss> losses;            // one per output, in output order (Keras's list form)
  std::vector<double> loss_weights;    // one per output; empty: 1 each
  std::vector<MetricSpec> metrics;     // Keras names ("accuracy", ...) or objects; for every output
  // Keras's weighted_metrics: the same kinds, each row counted by its sample weight (the
  // sample_weight or class_weight of fit, the sample weights of evaluate or validation;
  // unweighted where there are none). Logged by their names, or "weighted_<name>" where a
  // metric of `metrics` has the name already, as Keras logs them.
  std::vector<MetricSpec> weighted_metrics;
  // Keras's per-output forms (a list per output, or a dict by output name, in output order
  // here): output i's metrics and weighted metrics. Empty: `metrics` / `weighted_metrics`
  // for every output; given, one list per output (empty lists allowed) and the shared
  // list empty.
  std::vector<std::vector<MetricSpec>> output_metrics, output_weighted_metrics;
  // The model's dtype policy (Keras's global policy: layers without their own take it);
  // unset: the model's (set_dtype_policy, default float32).
  std::optional<DTypePolicy> dtype_policy;
  // The loss of output i (of n).
  const Loss& loss_for(std::size_t i) const { return losses.empty() ? loss : losses.at(i); }
  double loss_weight(std::size_t i) const { return loss_weights.empty() ? 1.0 : loss_weights.at(i); }
  // A compute_loss override (Note [compute_loss in the step]): one loss for all outputs.
  bool computes_loss() const { return losses.empty() && loss.computes_loss(); }
  // Whether fit and evaluate take targets: unless a compute_loss that never reads y is the
  // loss and no metric reads them either.
  bool takes_targets() const {
    if (!computes_loss() || loss.reads_targets() || !output_metrics.empty() || !output_weighted_metrics.empty()) {
      return true;
    }
    return !metrics.empty() || !weighted_metrics.empty();
  }
  // The metrics (weighted: the weighted metrics) of output i.
  const std::vector<MetricSpec>& metrics_for(std::size_t i, bool weighted = false) const {
    const auto& per = weighted ? output_weighted_metrics : output_metrics;
    return per.empty() ? (weighted ? weighted_metrics : metrics) : per.at(i);
  }
};

struct FitOptions {
  std::int64_t epochs = 1;
  // Tensors: the batch size. A dataset brings its own batches (as in Keras); this is then
  // the batch size planned before the first step (other sizes are planned when met).
  std::int64_t batch_size = 32;      // Keras's default
  bool shuffle = true;               // tensors only; a dataset shuffles itself
  std::uint64_t seed = 0;
  // Validation data, evaluated after each epoch: tensors (x, y) in batches of batch_size,
  // or a dataset of (x, y) batches. At most one of the two.
  std::optional<std::pair<Tensor, Tensor>> validation_data;
  std::optional<data::Dataset> validation_dataset;
  // Keras's validation sample weights ((x, y, sample_weight) as validation_data): one per
  // validation sample, shape [N]; the validation loss weighs each sample by its weight, as
  // the training loss does. A validation dataset brings them as a third component.
  Tensor validation_sample_weight;
  // Keras's validation_batch_size: the batch size of validation_data tensors (0:
  // batch_size). Not with a validation dataset, which brings its own batches.
  std::int64_t validation_batch_size = 0;
  // Keras's validation_steps: each validation runs this many batches, the first of a new
  // pass (0: the whole validation data; a pass that ends first ends it, with a note). A
  // validation dataset that repeats forever needs it.
  std::int64_t validation_steps = 0;
  // Keras's validation_freq: validation runs after the epochs whose number (from 1, as
  // Keras counts them) is a multiple of validation_freq, or, when validation_epochs is
  // given (Keras's list form), after those epochs only. Epochs without it log no val_ keys.
  std::int64_t validation_freq = 1;
  std::vector<std::int64_t> validation_epochs;
  std::vector<Callback*> callbacks;  // not owned
  // Keras's class_weight: each training sample's loss is multiplied by its class's weight
  // (class ids; one-hot targets' argmax; a single column rounded), 1 for a class not listed.
  // Single-output models; not with sample weights.
  std::map<std::int64_t, double> class_weight;
  // Keras's sample_weight for fit(tensors): one weight per sample, shape [N] (undefined:
  // none). A dataset brings them as a third component (x, y, sample_weight). The weighted
  // loss is still averaged over the batch (Keras's sum_over_batch_size); metrics are not
  // weighted (Keras's `metrics`, not `weighted_metrics`).
  Tensor sample_weight;
  // Keras's initial_epoch: epochs already done (a resumed run); training runs epochs
  // initial_epoch .. epochs-1 and the logs number them from there.
  std::int64_t initial_epoch = 0;
  // Keras's steps_per_epoch: an epoch is this many batches (0: one pass over the data). The
  // pass goes on into the next epoch; where it ends inside an epoch, that epoch ends there
  // (a note says so) and the next starts a new pass. A dataset may then be infinite
  // (repeat()). Note [Steps per epoch] (fit_loop.cpp).
  std::int64_t steps_per_epoch = 0;
  // What to do when a batch does not fit the memory limit: "fail" (the default:
  // OutOfMemory, with the largest batch that fits) or "reduce_batch": run it as the
  // largest power-of-two fraction of it that fits. A training batch accumulates the
  // micro-batches' gradients so the effective batch stays batch_size (History::notes says
  // so, and whether Dropout or BatchNormalization make the result differ from a full
  // batch); a validation batch concatenates their outputs (the same results; noted too).
  std::string on_oom = "fail";
  // Called with each note as it is made (History::notes keeps them too); may be empty.
  std::function<void(const std::string&)> on_note;
  // How a dataset's AUTOTUNE knobs are tuned: budgets (default: the cores the compute
  // threads leave, at least one; half of the available RAM) and where decisions go.
  data::AutotuneOptions autotune;
  // Profiling (docs/design/profile.md). With a log dir, every training step appends its
  // breakdown to LOG_DIR/steps.jsonl (truncated when the model's first step is in this
  // fit, appended to when the model has trained before), and at each epoch end fit
  // rewrites LOG_DIR/ops.json (per-op kernel times and FLOPs) and, when pipeline_stages
  // are given, LOG_DIR/pipeline.json. The same directory the TensorBoard callback takes.
  std::string log_dir;
  // Global steps to trace, "10-20" (from 1, inclusive) or "15"; "" traces nothing. The
  // trace starts before the first step's input wait and stops after the last step's
  // callbacks (or at the end of training), then goes to
  // LOG_DIR/train/plugins/profile/<timestamp>/<host>.trace.json.gz. requires: log_dir.
  std::string profile_steps;
  // Named measure() points of the training pipeline (stage outputs, in pipeline order),
  // written to LOG_DIR/pipeline.json at each epoch end; `nnfit train` fills them.
  std::vector<std::pair<std::string, std::shared_ptr<data::StageStats>>> pipeline_stages;
  // Set (to a signal number, or any non-zero value) from anywhere, a signal handler
  // included: training stops at the next step boundary, runs the callbacks' on_train_end
  // (a BackupAndRestore then keeps a backup of exactly that step, so a restart with the
  // same backup dir continues from it) and fit returns with History::interrupted set.
  // Not owned; may be null.
  const std::atomic<int>* interrupt = nullptr;
};

// evaluate() and predict() beyond Keras's batch_size: what to do when an inference batch
// does not fit the memory limit, "fail" (the default: OutOfMemory) or "reduce_batch" (run
// it as the largest power-of-two fraction of it that fits and concatenate the outputs, so
// the results are the full batch's; inference needs no accumulation), and where the note
// saying so goes (called once per call that splits a batch; may be empty).
struct InferenceOptions {
  std::int64_t batch_size = 32;
  std::string on_oom = "fail";
  std::function<void(const std::string&)> on_note;
  // Keras's steps: evaluate or predict only the first `steps` batches (0: all of them). Data
  // that ends first ends the call, with a note; a dataset that repeats forever needs it.
  std::int64_t steps = 0;
  // Keras's callbacks of evaluate (on_test_*) and predict (on_predict_*); not owned.
  std::vector<Callback*> callbacks;
  // evaluate(x, y) only: Keras's sample_weight, one weight per sample (shape [N]); the loss
  // weighs each sample by it (the metrics do not, as Keras's `metrics`). A dataset brings
  // them as a third component (x, y, sample_weight).
  Tensor sample_weight;
  // predict only: Keras's training=True of a call on arrays (model(x, training=True), its
  // random augmentation layers' default): the forward pass with the layers in training mode
  // (Dropout drops, the augmentation layers augment, BatchNormalization normalizes with the
  // batch's statistics), no loss and no update.
  bool training = false;
};

// Epoch logs hold Keras's keys ("loss", "accuracy", "val_loss", ...) and nnfit's:
// "train_seconds" (wall time of the epoch's training steps, input waits included),
// "samples_per_s", "input_wait_fraction" (the share of train_seconds spent waiting for
// the next batch) and "memory_peak_bytes" (the allocator's peak so far).
struct History {
  std::vector<Logs> epochs;          // one per epoch
  // fit(Dataset): the AUTOTUNE choices at the end ("map(normalize) num_parallel_calls=1,
  // prefetch buffer_size=2") and every decision on the way; empty without AUTOTUNE.
  std::string autotune_summary;
  std::vector<std::string> autotune_decisions;
  // What fit changed on its own and why (on_oom="reduce_batch"), one line each.
  std::vector<std::string> notes;
  // Where this fit started: epochs already complete (Keras's initial_epoch, or the
  // epoch a resumed run picked up at) and batches of the next epoch already done.
  std::int64_t initial_epoch = 0;
  std::int64_t initial_step = 0;
  // FitOptions::interrupt's value when it stopped training (0: not interrupted), and where:
  // epochs complete and batches of the next one done.
  int interrupted = 0;
  std::int64_t stopped_epoch = 0, stopped_step = 0;
};

// The step engine's programs (Note [Shapes known per batch]): one per mode (training,
// inference, ...), batch size and per-sample input shapes, planned on a miss and reused
// on a hit; they share one arena, as large as the largest needs.
struct ProgramCacheStats {
  std::int64_t programs = 0;      // planned and kept now
  std::int64_t input_shapes = 0;  // distinct per-sample input shapes among them
  std::int64_t hits = 0;          // batches (and fit's planning ahead) whose program was there
  std::int64_t misses = 0;        // ... whose program was planned for them
  std::int64_t arena_bytes = 0;   // the shared arena
  // Programs dropped, least recently used first, to keep at most kMaxCachedPrograms
  // (Note [A bounded program cache]); a shape that comes back is planned again, a miss.
  std::int64_t evicted = 0;
};

// At most this many programs (by mode, batch size and input shapes; the update program
// aside) stay planned at once.
inline constexpr std::int64_t kMaxCachedPrograms = 64;

// What the planner knows about a model's memory for one batch size. The six parts add
// up to peak_bytes; the arena's share is split as it is at its fullest step
// (Note [Plan breakdown] in plan.cpp).
struct MemoryPlan {
  std::int64_t batch_size = 0;
  std::int64_t weights_bytes = 0;      // trainable and non-trainable weights
  std::int64_t gradients_bytes = 0;    // weight gradients live at the arena's fullest step
  std::int64_t optimizer_bytes = 0;    // optimizer slots
  std::int64_t activations_bytes = 0;  // the rest of the arena (activations, their gradients, inputs) and constants
  std::int64_t workspace_bytes = 0;    // kernel workspaces live at the arena's fullest step
  std::int64_t arena_bytes = 0;        // activations, gradients, workspace, input staging
  // Beside the shared arena: on a device the input double buffer's two slots and the
  // step's values; the update program's own arena of a loss-scaled step on a device (and
  // its zero gradient) or of a data-parallel step (and the gradient buckets' buffer)
  // (docs/design/cuda.md, distributed.md); 0 for one process on the CPU.
  std::int64_t staging_bytes = 0;
  std::int64_t peak_bytes = 0;         // everything nnfit allocates for training
};

}  // namespace nnfit
