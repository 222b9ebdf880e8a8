// Model: Keras's Model, a graph of layer calls (LayerGraph: the Functional API) with
// compile / fit / evaluate / predict / summary; Sequential is the chain built on it. The
// step engine runs the steps (programs, arena, loops: docs/design/step_engine.md).
// Several inputs and outputs are given in Keras's order; a dataset element is the flat
// tuple (x_1..x_n, y_1..y_m); logs name per-output values as Keras does ("dense_1_loss").
// What compile/fit/evaluate/predict take and give: nnfit/model/fit_options.h.
// Thread safety: none; one model is used from one thread.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "nnfit/backend/backend.h"
#include "nnfit/model/fit_options.h"  // with callbacks, datasets, strategies, losses, optimizers
#include "nnfit/nn/layer.h"
#include "nnfit/nn/layer_graph.h"

namespace nnfit {

class StepEngine;  // src/engine/step_engine.h (private)
struct SummaryOptions;  // nnfit/model/summary_options.h

class Model {
 public:
  // A Functional model over `graph` (its inputs and outputs set).
  Model(std::string name, LayerGraph graph);
  virtual ~Model();
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  const std::string& name() const { return name_; }
  // Keras's class name: "Functional" or "Sequential".
  virtual std::string class_name() const { return "Functional"; }
  const LayerGraph& graph() const { return graph_; }
  const std::vector<std::unique_ptr<Layer>>& layers() const { return graph_.layers(); }
  Layer* get_layer(const std::string& name) const { return graph_.find_layer(name); }
  std::size_t num_inputs() const { return graph_.inputs().size(); }
  std::size_t num_outputs() const { return graph_.outputs().size(); }
  // The targets fit and evaluate take: one per output, or none for a compute_loss that
  // reads no y (CompileOptions::takes_targets).
  std::size_t num_targets() const { return compile_options_.takes_targets() ? num_outputs() : 0; }
  // Shapes without the batch axis, in input / output order.
  std::vector<Shape> input_shapes() const;
  std::vector<Shape> output_shapes() const;
  // The single input's / output's shape. throws: InvalidArgument for a model with several.
  const Shape& input_shape() const;
  Shape output_shape() const;
  // The name of each output in losses, metrics and logs: its layer, or its key in a dict.
  std::vector<std::string> output_names() const;

  // How the model's device memory is obtained (growth, preallocation, hard limit). The
  // default comes from NNFIT_MEMORY_LIMIT / NNFIT_MEMORY_PREALLOCATE; a policy set here
  // replaces it. requires: nothing allocated yet (call before compile()). throws:
  // InvalidArgument after compile() or for a contradictory policy (the model then keeps
  // the default policy), OutOfMemory when a preallocation cannot be made.
  void set_memory_policy(const MemoryPolicy& policy);
  const MemoryPolicy& memory_policy() const;

  // The device the model trains on (docs/design/cuda.md, "Device placement"), the CPU
  // unless set (place_device() finds the default). requires: before compile(). throws:
  // InvalidArgument after compile(); Unsupported, naming why, for a device this build
  // cannot use (the model then stays on its device).
  void set_device(Device device);
  // A backend made elsewhere in place of set_device's (tests/cuda_host/sim_device.h's
  // simulated device). requires: before build(), nothing allocated; else InvalidArgument.
  void set_backend(std::unique_ptr<Backend> backend);
  // The distribution strategy (tf.distribute; docs/design/distributed.md), chosen before
  // compile as Keras builds a model in strategy.scope(); null: one replica (the default).
  // throws: InvalidArgument after compile().
  void set_strategy(std::shared_ptr<dist::Strategy> strategy);
  const dist::Strategy* strategy() const;
  // Replicas each step's gradients are summed over: the global batch splits evenly
  // across them (Keras's strategy.num_replicas_in_sync; 1 without a strategy).
  int num_replicas_in_sync() const;

  // Data-parallel training, one replica per rank of `comm` (MultiWorkerMirroredStrategy;
  // docs/design/distributed.md, "Batch semantics"): fit's batch_size is the global batch,
  // split evenly (InvalidArgument naming both when it does not divide), each rank training
  // its slice; rank 0's state is broadcast when fit starts. One rank (or null) trains alone.
  // requires: every rank makes the same fit calls.
  void set_communicator(std::shared_ptr<dist::Communicator> comm, DataParallelOptions options = {});
  dist::Communicator* communicator() const;

  // Compute threads (OpenMP); 0 keeps the default.
  void set_num_threads(int threads);
  int num_threads() const;
  // Seeds weight initialization (call before compile) and dropout.
  void set_seed(std::uint64_t seed) { seed_ = seed; }
  // Keras's global dtype policy (keras.mixed_precision.set_global_policy) for this model:
  // the policy of every layer that has none of its own. Before compile.
  // throws: InvalidArgument once compiled.
  void set_dtype_policy(const DTypePolicy& policy);
  const DTypePolicy& dtype_policy() const { return dtype_policy_; }

  // Creates every layer's weights (Keras's model.build): enough to predict and to load
  // weights into. compile() builds too. throws: InvalidArgument naming the layer whose
  // shapes do not fit.
  void build();
  bool built() const;
  // Before build: the weights build() makes may hold at most `elements` values in all, or
  // it throws InvalidArgument naming the layer and `source` (load_model: what the file's
  // datasets can fill, so a config asking for larger layers is refused before allocating).
  void limit_weight_elements(std::uint64_t elements, std::string source);
  // Builds the model and its optimizer for training; throws InvalidArgument naming the
  // layer whose shapes do not fit, or a loss list that does not match the outputs.
  void compile(CompileOptions options);
  bool compiled() const { return compiled_; }

  // requires: compiled. x: [N, input_shape...] f32; y: targets (class ids as any integer
  // or float type for sparse losses, f32 otherwise). The list forms take one tensor per
  // input and per output, in order.
  History fit(const Tensor& x, const Tensor& y, const FitOptions& options);
  History fit(const std::vector<Tensor>& x, const std::vector<Tensor>& y, const FitOptions& options);
  // requires: compiled. Trains on a dataset of (x, y) batches (x [B, input_shape...] f32, y
  // as above), one pass an epoch (shuffle and repeat belong to the pipeline, as in tf.data).
  // The pipeline's threads run beside the compute threads; the loop's wait for batches is
  // "input_wait_fraction". throws: InvalidArgument naming the element that does not fit
  // the model, DataError from the pipeline.
  History fit(const data::Dataset& train, const FitOptions& options);
  // Loss and metrics over (x, y), like Keras's evaluate(return_dict=True).
  Logs evaluate(const Tensor& x, const Tensor& y, std::int64_t batch_size = 32);
  Logs evaluate(const data::Dataset& data);
  Tensor predict(const Tensor& x, std::int64_t batch_size = 32);
  // The same with an on_oom policy, steps and sample weights (InferenceOptions; the
  // overloads above "fail"). throws: InvalidArgument for an on_oom other than "fail" or
  // "reduce_batch", sample weights that are not one float32 per sample (or given to
  // predict or with a dataset), a dataset that repeats forever without steps.
  Logs evaluate(const Tensor& x, const Tensor& y, const InferenceOptions& options);
  Logs evaluate(const std::vector<Tensor>& x, const std::vector<Tensor>& y, const InferenceOptions& options);
  Logs evaluate(const data::Dataset& data, const InferenceOptions& options);
  Tensor predict(const Tensor& x, const InferenceOptions& options);
  // One output per model output, in order.
  std::vector<Tensor> predict(const std::vector<Tensor>& x, const InferenceOptions& options);
  // Keras's summary table ("Connected to" for a Functional model) as rich lays it out for
  // a terminal of `columns`. Builds the model first, so the counts are Keras's before
  // compile too. throws: InvalidArgument when a column would be narrower than 4, as Keras.
  std::string summary(int columns = 80);
  std::string summary(int columns, const SummaryOptions& options);

  std::int64_t count_params() const;
  // Every weight in Keras's order (layer by layer), trainable and not.
  std::vector<Weight*> weights() const { return graph_.weights(); }
  // Keras's get_weights / set_weights: copies of every weight's value, in weights() order.
  // throws: InvalidArgument naming the weight whose count or shape differs.
  std::vector<Tensor> get_weights() const;
  void set_weights(const std::vector<Tensor>& values);

  // Keras's model.stop_training: a callback sets it to end fit after the current batch
  // or epoch; fit clears it when it starts.
  void set_stop_training(bool stop);
  bool stop_training() const;
  // While fit runs (and in on_train_end): FitOptions::interrupt's value once it stopped
  // training, 0 otherwise; where it stopped (epochs complete, batches of the next done).
  int interrupted() const;
  std::int64_t interrupted_epoch() const;
  std::int64_t interrupted_step() const;
  // The optimizer's learning rate at the current iteration, and Keras's assignment of a
  // new constant rate (ReduceLROnPlateau). requires: compiled. throws: InvalidArgument
  // when the rate is a schedule (Keras refuses that too) or not positive.
  double learning_rate() const;
  void set_learning_rate(double learning_rate);
  // Resuming (BackupAndRestore, in on_train_begin): fit starts at `epoch` (epochs
  // complete), skips the epoch's first `step` batches and continues its running loss and
  // metrics from `progress` (training_progress() of the interrupted run; "" at an epoch end).
  void set_resume_point(std::int64_t epoch, std::int64_t step, const std::string& progress = "");
  // The running epoch's loss and metric sums as JSON, "" outside an epoch.
  std::string training_progress() const;
  // Where the running (or last) fit started: History::initial_epoch / initial_step.
  std::int64_t fit_initial_epoch() const;
  std::int64_t fit_initial_step() const;
  // The callbacks of the fit that is running (empty outside fit).
  const std::vector<Callback*>& fit_callbacks() const;

  // Optimizer steps taken so far (Keras's optimizer.iterations); set when a saved
  // optimizer state is restored (it positions the schedule and Adam's bias correction).
  std::int64_t iterations() const;
  void set_iterations(std::int64_t iterations);
  // The dynamic loss scale and the finite steps since it last changed (Keras's
  // LossScaleOptimizer dynamic_scale and step_counter); set when a saved state is restored.
  double loss_scale() const;
  std::int64_t loss_scale_good_steps() const;
  void set_loss_scale_state(double scale, std::int64_t good_steps);
  // The optimizer's slots in Keras 3's optimizer.variables order (after the iteration count
  // and a constant rate): per weight for Adam and AdamW (momentum, velocity), kind by kind
  // for RMSprop (every velocity, then every momentum), one momentum per weight for SGD.
  // They share the model's buffers: writing into them restores a state. requires: compiled.
  std::vector<Tensor> optimizer_slots() const;
  // A tensor of this model (weight, slot) as host memory: itself on the CPU, else a host
  // copy (Backend::copy). Writers use write_tensor.
  Tensor host_view(const Tensor& t) const;
  // Writes host tensor `src` into the model's `dst` (a memcpy on the CPU, Backend::copy to
  // a device). throws: InvalidArgument when the sizes differ.
  void write_tensor(const Tensor& dst, const Tensor& src) const;
  // The planner's memory figures for training at `batch_size` (plans; allocates nothing).
  // `samples`: the inputs' per-sample shapes (empty: input_shapes(), which must then be
  // static; a model with dimensions known per batch plans one shape at a time).
  MemoryPlan plan_memory(std::int64_t batch_size, const std::vector<Shape>& samples = {});
  // The allocator's figures for the model's device (device()).
  MemoryStats memory_stats() const;
  // The largest training batch size in [1, max_batch] whose planned peak fits
  // `limit_bytes`, or 0 if none does (plans only; allocates nothing).
  std::int64_t largest_batch_size_within(std::int64_t limit_bytes, std::int64_t max_batch,
                                         const std::vector<Shape>& samples = {});
  // The step engine's programs by input shape: how many, hits and misses, the arena.
  ProgramCacheStats program_cache_stats() const;
  // The output shapes (without the batch axis) for inputs of per-sample shapes `samples`
  // (each admitted by input_shapes()'s).
  std::vector<Shape> output_shapes_for(const std::vector<Shape>& samples) const;
  Device device() const;
  // Largest `planned peak` over the programs planned so far.
  std::int64_t planned_peak_bytes() const;
  const CompileOptions& compile_options() const { return compile_options_; }

 protected:
  // A model whose graph a subclass fills (Sequential).
  explicit Model(std::string name);
  LayerGraph graph_;
  bool compiled_ = false;

 private:
  friend class StepEngine;
  std::string name_;
  DTypePolicy dtype_policy_;
  std::uint64_t seed_ = 0;
  std::uint64_t weight_budget_elements_ = 0;  // limit_weight_elements; 0: none
  std::string weight_budget_source_;
  CompileOptions compile_options_;
  // The step engine (src/engine/step_engine.h): backend, optimizer, programs, arena and
  // the loops that run them; made by the constructor, destroyed after the layers' weights.
  std::unique_ptr<StepEngine> engine_;
};

// Keras's Sequential: a chain of single-input layers, each called on the previous one's
// output. The input shape may come before or after the layers (set_input_shape).
class Sequential final : public Model {
 public:
  explicit Sequential(std::string name = "sequential");
  std::string class_name() const override { return "Sequential"; }
  // The input shape without the batch axis (from an Input layer or batch_shape).
  void set_input_shape(Shape shape);
  // The whole Input: its name (Keras's InputLayer name), shape and dtype (an integer dtype
  // is recorded for writing back; the values reach the layers as float32). Before any layer.
  void set_input(const InputSpec& input);
  // throws: InvalidArgument after compile() or for a name already used.
  void add(std::unique_ptr<Layer> layer);
};

}  // namespace nnfit
