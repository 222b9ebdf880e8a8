// Model: Keras's Model, a graph of layer calls (LayerGraph: the Functional API) with
// compile / fit / evaluate / predict / summary; Sequential is the chain built on it.
// compile() builds the weights; fit() plans one training Program per batch size it meets
// (the full batch and the last partial one), all sharing one arena, so the whole memory
// footprint is known before the first step and a step allocates nothing.
//
// Several inputs and outputs: tensors are given in the model's input and output order
// (Keras's lists); a dataset element is the flat tuple (x_1..x_n, y_1..y_m). Each output
// has its loss (CompileOptions::losses, or `loss` for all) weighted by loss_weights; the
// logs name per-output values as Keras does ("dense_1_loss", "dense_1_accuracy").
//
// What compile/fit/evaluate/predict take and give: nnfit/model/fit_options.h.
//
// Thread safety: none; one model is used from one thread.
#pragma once
#include <cstdint>
#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "nnfit/backend/backend.h"
#include "nnfit/data/autotune.h"
#include "nnfit/data/dataset.h"
#include "nnfit/dist/strategy.h"
#include "nnfit/model/callbacks.h"
#include "nnfit/model/fit_options.h"
#include "nnfit/nn/layer.h"
#include "nnfit/nn/layer_graph.h"
#include "nnfit/nn/loss.h"
#include "nnfit/nn/metrics.h"
#include "nnfit/nn/optimizer.h"

namespace nnfit {

struct StepContext;  // backend/kernel.h
class Program;      // graph/program.h

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
  // Shapes without the batch axis, in input / output order.
  std::vector<Shape> input_shapes() const;
  std::vector<Shape> output_shapes() const;
  // The single input's / output's shape. throws: InvalidArgument for a model with several.
  const Shape& input_shape() const;
  Shape output_shape() const;
  // Keras's model.output_names: the layer that makes each output.
  std::vector<std::string> output_names() const;

  // How the model's device memory is obtained (growth, preallocation, hard limit). The
  // default comes from NNFIT_MEMORY_LIMIT / NNFIT_MEMORY_PREALLOCATE; a policy set here
  // replaces it. requires: nothing allocated yet (call before compile()). throws:
  // InvalidArgument after compile() or for a contradictory policy (the model then keeps
  // the default policy), OutOfMemory when a preallocation cannot be made.
  void set_memory_policy(const MemoryPolicy& policy);
  const MemoryPolicy& memory_policy() const { return memory_policy_; }

  // The device the model trains on (docs/design/cuda.md, "Device placement"); the CPU
  // unless set. Choose it with place_device() (nnfit/model/device_placement.h), which
  // finds the default and says why. requires: before compile(). throws: InvalidArgument
  // after compile(); Unsupported for a device this build cannot use (no CUDA in it, no
  // driver or GPU), naming why; the model then stays on its device.
  void set_device(Device device);
  // A backend made elsewhere, in place of set_device's: a simulated device whose kernels
  // and memory are its own (tests/cuda_host/sim_device.h runs the CUDA backend's kernels on
  // the host over memory the host may not touch, so the model's device path is checked
  // without a GPU). requires: before build(), while nothing is allocated. throws:
  // InvalidArgument otherwise.
  void set_backend(std::unique_ptr<Backend> backend);
  // The distribution strategy (TensorFlow's tf.distribute; docs/design/distributed.md),
  // chosen before compile, as Keras builds a model in strategy.scope():
  // MultiWorkerMirroredStrategy trains one replica per process (set_communicator below
  // with its communicator and options), MirroredStrategy one replica on the model's device.
  // null: the default, one replica. throws: InvalidArgument after compile().
  void set_strategy(std::shared_ptr<dist::Strategy> strategy);
  const dist::Strategy* strategy() const { return strategy_.get(); }
  // Replicas each step's gradients are summed over: the global batch splits evenly
  // across them (Keras's strategy.num_replicas_in_sync; 1 without a strategy).
  int num_replicas_in_sync() const { return replica_count(); }

  // Data-parallel training, one replica per rank of `comm` (Keras's
  // MultiWorkerMirroredStrategy; docs/design/distributed.md): fit's batch_size is the
  // global batch, split evenly across the ranks (InvalidArgument naming both when it does
  // not divide); every rank sees the global batches one process would, in the same order,
  // and trains on its contiguous slice of each; the gradients are summed across ranks so
  // the update is the global batch's mean, and validation is sharded with its sums
  // reduced. fit broadcasts rank 0's weights and optimizer state when it starts (after a
  // callback's restore), and averages BatchNormalization's moving statistics across the
  // ranks at every epoch end. Logs and History hold the job's figures on every rank. A
  // communicator of one rank (or null) trains alone. Loss scaling skips the same steps on
  // every rank (Note [Loss scale across ranks]); under on_oom "reduce_batch" every rank
  // runs its slice as micro-batches when one rank's does not fit (Note [Micro-batches
  // across ranks]). requires: every rank makes the same fit calls, with the same options.
  void set_communicator(std::shared_ptr<dist::Communicator> comm, DataParallelOptions options = {});
  dist::Communicator* communicator() const { return comm_.get(); }

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
  bool built() const { return programs_ != nullptr; }
  // Before build: the weights build() makes may hold at most `elements` values in all, or
  // it throws InvalidArgument naming the layer and `source` (load_model: what the file's
  // datasets can fill, so a config asking for larger layers is refused before allocating).
  void limit_weight_elements(std::uint64_t elements, std::string source) {
    weight_budget_elements_ = elements;
    weight_budget_source_ = std::move(source);
  }
  // Builds the model and its optimizer for training; throws InvalidArgument naming the
  // layer whose shapes do not fit, or a loss list that does not match the outputs.
  void compile(CompileOptions options);
  bool compiled() const { return compiled_; }

  // requires: compiled. x: [N, input_shape...] f32; y: targets (class ids as any integer
  // or float type for sparse losses, f32 otherwise). The list forms take one tensor per
  // input and per output, in order.
  History fit(const Tensor& x, const Tensor& y, const FitOptions& options);
  History fit(const std::vector<Tensor>& x, const std::vector<Tensor>& y, const FitOptions& options);
  // requires: compiled. Trains on a dataset whose elements are (x, y) batches: x
  // [B, input_shape...] f32, y as above; one pass of the dataset is one epoch (tf.data's
  // model: shuffle and repeat belong to the pipeline). The pipeline runs its own threads
  // (prefetch, parallel map) beside the compute threads; the time the loop waits for a
  // batch is reported as "input_wait_fraction". throws: InvalidArgument naming the
  // element that does not fit the model, DataError from the pipeline.
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
  // Keras's summary table (with the "Connected to" column for a Functional model). Builds
  // the model first (its weights, as Keras's layers have them once called), so the
  // parameter counts are Keras's before compile too.
  std::string summary();

  std::int64_t count_params() const;
  // Every weight in Keras's order (layer by layer), trainable and not.
  std::vector<Weight*> weights() const { return graph_.weights(); }
  // Keras's get_weights / set_weights: copies of every weight's value, in weights() order.
  // throws: InvalidArgument naming the weight whose count or shape differs.
  std::vector<Tensor> get_weights() const;
  void set_weights(const std::vector<Tensor>& values);

  // Keras's model.stop_training: a callback sets it to end fit after the current batch
  // or epoch; fit clears it when it starts.
  void set_stop_training(bool stop) { stop_training_ = stop; }
  bool stop_training() const { return stop_training_; }
  // While fit runs (and in on_train_end): FitOptions::interrupt's value once it stopped
  // training, 0 otherwise; where it stopped (epochs complete, batches of the next done).
  int interrupted() const { return interrupted_; }
  std::int64_t interrupted_epoch() const { return interrupted_epoch_; }
  std::int64_t interrupted_step() const { return interrupted_step_; }
  // The optimizer's learning rate at the current iteration, and Keras's assignment of a
  // new constant rate (ReduceLROnPlateau). requires: compiled. throws: InvalidArgument
  // when the rate is a schedule (Keras refuses that too) or not positive.
  double learning_rate() const;
  void set_learning_rate(double learning_rate);
  // Resuming (BackupAndRestore calls these from on_train_begin): fit starts at `epoch`
  // (epochs complete), skips the first `step` batches of it, and continues the epoch's
  // running loss and metrics from `progress` (training_progress() of the interrupted run;
  // "" when resuming at an epoch boundary).
  void set_resume_point(std::int64_t epoch, std::int64_t step, const std::string& progress = "");
  // The running epoch's loss and metric sums as JSON, "" outside an epoch.
  std::string training_progress() const;
  // Where the running (or last) fit started: History::initial_epoch / initial_step.
  std::int64_t fit_initial_epoch() const { return fit_initial_epoch_; }
  std::int64_t fit_initial_step() const { return fit_initial_step_; }
  // The callbacks of the fit that is running (empty outside fit).
  const std::vector<Callback*>& fit_callbacks() const { return fit_callbacks_; }

  // Optimizer steps taken so far (Keras's optimizer.iterations); set when a saved
  // optimizer state is restored (it positions the schedule and Adam's bias correction).
  std::int64_t iterations() const { return iterations_; }
  void set_iterations(std::int64_t iterations);
  // The dynamic loss scale and the finite steps since it last changed (Keras's
  // LossScaleOptimizer dynamic_scale and step_counter); set when a saved state is restored.
  double loss_scale() const { return loss_scale_; }
  std::int64_t loss_scale_good_steps() const { return loss_scale_good_steps_; }
  void set_loss_scale_state(double scale, std::int64_t good_steps);
  // The optimizer's slots in the order Keras 3 lists them in optimizer.variables (after
  // the iteration count and a constant learning rate): per trainable weight for Adam and
  // AdamW (momentum, velocity), slot kind by slot kind for RMSprop (every velocity, then
  // every momentum), one momentum per weight for SGD. The tensors share the model's
  // buffers, so writing into them restores a state. requires: compiled.
  std::vector<Tensor> optimizer_slots() const;
  // A weight, optimizer slot or other tensor of this model as host memory: the tensor
  // itself where the model's memory is the host's (the CPU), else a host copy made with
  // Backend::copy (a GPU's). Writers use write_tensor.
  Tensor host_view(const Tensor& t) const;
  // Writes host tensor `src` into the model's tensor `dst` (same bytes): a memcpy on the
  // CPU, Backend::copy to a device. throws: InvalidArgument when the sizes differ.
  void write_tensor(const Tensor& dst, const Tensor& src) const;
  // The planner's memory figures for training at `batch_size` (plans; allocates nothing).
  MemoryPlan plan_memory(std::int64_t batch_size);
  // The allocator's figures for the model's device (device()).
  MemoryStats memory_stats() const;
  // The largest training batch size in [1, max_batch] whose planned peak fits
  // `limit_bytes`, or 0 if none does (plans only; allocates nothing).
  std::int64_t largest_batch_size_within(std::int64_t limit_bytes, std::int64_t max_batch);
  Device device() const { return backend_->device(); }
  // Largest `planned peak` over the programs planned so far.
  std::int64_t planned_peak_bytes() const;
  const CompileOptions& compile_options() const { return compile_options_; }

 protected:
  // A model whose graph a subclass fills (Sequential).
  explicit Model(std::string name);
  LayerGraph graph_;
  bool compiled_ = false;

 private:
  struct Programs;
  struct Entry;
  struct Staging;
  struct InputRing;
  struct Totals;
  struct MicroBatches;
  struct OomScope;
  struct EpochFeed;
  struct WeightingScope;
  struct Replicas;
  struct Batch;
  struct LookaheadScope;
  void check_built() const;     // built (predict)
  void check_compiled() const;  // compiled (fit, evaluate)
  // The epoch loop both fit() overloads share; `feed` hands out each epoch's batches.
  History train_loop(const FitOptions& options, std::int64_t steps_per_epoch, EpochFeed& feed,
                     data::Autotuner* validation_tuner);
  // `inner` cut into epochs of `steps` batches (Note [Steps per epoch]); a note where the
  // data runs out inside an epoch goes to *notes and on_note.
  static EpochFeed limit_steps(EpochFeed& inner, std::int64_t steps, std::vector<std::string>* notes,
                               const std::function<void(const std::string&)>& on_note);
  // The validation logs after epoch `epoch` (from 0), or none where validation_freq skips it.
  Logs validate(const FitOptions& options, std::int64_t epoch, data::Autotuner* tuner);
  // `what` names the batches in errors and notes: "validation" or "evaluation". With
  // `sample_weight` defined (or a dataset's third component) the loss weighs each sample;
  // `steps` > 0 stops after that many batches.
  // `callbacks` get Keras's on_test_* hooks.
  Logs evaluate_tensors(const std::vector<Tensor>& x, const std::vector<Tensor>& y, const Tensor& sample_weight,
                        std::int64_t batch_size, std::int64_t steps, const char* what,
                        const std::vector<Callback*>& callbacks);
  Logs evaluate_dataset(const data::Dataset& data, data::Autotuner* tuner, std::int64_t steps, const char* what,
                        const std::vector<Callback*>& callbacks);
  // An evaluation's batches run with the on_test_* hooks of `callbacks` around them, and
  // its logs (the sums added across ranks when `shard`).
  Logs run_evaluation(const std::function<bool(Batch&)>& next, Totals& totals, const StepContext& ctx, bool shard,
                      const std::vector<Callback*>& callbacks);
  // A note that `steps` batches were asked for and the data ended after `ran` (Keras warns).
  void note_short_steps(const char* what, std::int64_t steps, std::int64_t ran);
  // Copies a dataset element (x, y) into the inputs of the program for its batch size;
  // `what`: "training", "validation" or "evaluation".
  Entry& stage_element(const data::Element& element, const char* what, std::int64_t index);
  // The program for (training, batch), planned on first use; with `bind` the arena grows
  // to fit and the program is bound to it.
  Entry& entry(bool training, std::int64_t batch, bool bind = true);
  Entry& entry_mode(int mode, std::int64_t batch, bool bind = true);
  std::unique_ptr<Entry> plan_entry(int mode, std::int64_t batch);
  std::unique_ptr<Entry> plan_apply();
  // The training or inference entry for `batch`, bound to the arena; when it does not fit
  // and reduce_on_oom_ is set, an entry that runs as micro-batches (a note, once per
  // OomScope, goes to *notes_ and on_note_; `what` names the batch in it). Under "fail" a
  // split left by an earlier call is dropped, so the full batch fits or OutOfMemory says
  // why. throws: OutOfMemory.
  Entry& entry_or_split(bool training, std::int64_t batch, const char* what);
  // Whether the model runs on a device whose work goes through queues (a GPU's streams).
  bool queued_device() const { return !backend_->host_addressable() && backend_->queues() != nullptr; }
  // The Mode a training batch that fits runs as: a replica's gradients (data-parallel),
  // a loss-scaled step's gradients on a device with queues, else the training step.
  int training_mode() const;
  // The Mode an inference batch runs as: with a sample-weight input while an evaluation
  // weighs its loss by sample weights (WeightedEvaluation), else plain inference.
  int inference_mode() const;
  // Whether a dataset's elements bring sample weights: a component after x and y, as
  // (x, y, sample_weight).
  bool carries_sample_weights(const data::Dataset& data) const {
    return data.element_spec().size() > num_inputs() + num_outputs();
  }
  // Called before each program a step runs; `update_only`: the program is all optimizer
  // update (an accumulated step's last one), whatever its nodes' names say.
  using BeforeRun = std::function<void(Program& program, bool update_only)>;
  // Runs an entry's program, or its micro-batches for a split entry (rows: the batch's).
  // Returns whether the optimizer stepped (a loss-scaled step with non-finite gradients
  // is skipped).
  bool run_entry(Entry& e, std::int64_t rows, const StepContext& ctx, const BeforeRun& before_run = {});
  bool run_micro_batches(Entry& e, std::int64_t rows, const StepContext& ctx, const BeforeRun& before_run);
  // A loss-scaled step on a device (e: a Mode::scaled entry; Note [Loss scaling on the
  // device]): the scaled program, the decision, and when finite the update program fed by
  // device-to-device copies.
  bool run_scaled_step(Entry& e, const StepContext& ctx, const BeforeRun& before_run);
  // The memory that step's update needs beside the shared arena (Programs::update_arena,
  // and zero_gradient for a weight e has no gradient of). throws: OutOfMemory.
  void reserve_scaled_update(const Entry& e);
  // The update program's own arena (Programs::update_arena: a loss-scaled step on a device,
  // a data-parallel step), taken at its size; `why` names the user in an OutOfMemory.
  void reserve_update_arena(const char* why);
  // Takes `t` as `bytes` of the backend's memory (a vector of `dtype`) unless it holds
  // that much already (waiting for the device before freeing the old one); returns
  // whether it did. throws: OutOfMemory naming `what` and `why`.
  bool reserve_buffer(Tensor& t, std::size_t bytes, const char* what, const char* why, DType dtype = DType::u8);
  // The update program, bound to Programs::update_arena (rebound, its graph dropped, when
  // the shared arena's growth moved it there).
  Entry& update_in_own_arena();
  // The bytes of the largest trainable weight the loss of e does not reach (its update's
  // zero gradient, Programs::zero_gradient); 0 when the loss reaches them all.
  std::size_t zero_gradient_bytes(const Entry& e) const;
  // A bound entry's program: its staged batch copied in and its results out on a device;
  // on a backend whose queues capture graphs, captured at its first run and replayed after
  // (Note [Captured steps]); else run.
  void run_program(Entry& e, const StepContext& ctx);
  // Set by fit for one plain step on a device with queues: called once, by run_program,
  // after the step's work is enqueued and before the host waits for its results, to
  // stage the next batch while the device runs this one (Note [Input double buffer]).
  // fit owns the function; a pointer, so setting it each step allocates nothing.
  const std::function<void()>* lookahead_ = nullptr;
  // Calls and clears lookahead_ if set (run_program; a data-parallel step after its
  // backward pass and sums are enqueued).
  void run_lookahead();
  // The model's input double buffer with slots of at least `bytes` (made or grown on
  // first need; null without queues). Growing waits for the queues.
  InputRing* input_ring(std::size_t bytes);
  // Forgets a batch staged ahead that no step will run (fit stopped or failed after
  // staging it), so the ring's next batch is the next one run.
  void drop_lookahead();
  // The loop of evaluate and predict: next(b) stages the next batch into its entry and
  // fills b (false at the end), before(i) is called, the batch is run, then done(b) reads its
  // results; on a device the next batch is staged while the device runs the current one
  // (Note [Input double buffer]). `before` (may be empty) takes the batch's index from 0.
  void run_batches(const std::function<bool(Batch&)>& next, const std::function<void(Batch&)>& done,
                   const StepContext& ctx, const std::function<void(std::int64_t)>& before = {});
  // run_program's run on a device's queues: the step's values copied in, then the graph
  // launched (captured first if need be) or the program run kernel by kernel. `body`, if
  // given, is what runs (and is captured) instead of e.program.run: the program with what
  // must be enqueued between its kernels (a data-parallel step's gradient sums); it is
  // given the context whose step values are in device memory.
  void run_on_queues(Entry& e, const StepContext& ctx, DeviceQueues& queues,
                     const std::function<void(const StepContext&)>& body = {});
  // Loss scaling's decision after a step's gradients (Keras's LossScaleOptimizer): a
  // non-finite step is skipped and halves a dynamic scale, growth_steps finite steps in a
  // row double it. Returns whether the update runs. Data-parallel: `finite` must be the
  // ranks' agreed verdict, so the scale stays the same everywhere.
  bool update_loss_scale(bool finite);
  // The programs of a split entry's micro-batches: staged rows in, each micro-batch's
  // gradients (Mode::grads: summed into grad_sums, weighted by its rows), loss and outputs
  // out. The caller seeds the loss scale and applies the update.
  void run_micro_batch_programs(Entry& e, std::int64_t rows, const StepContext& ctx, const BeforeRun& before_run);
  // The Mode of a split training step's micro-batches: accumulate on a device with queues
  // (sums on the device, Note [Micro-batches on the device]), else grads.
  int split_training_mode() const;
  // Takes Programs::zero_gradient as at least `bytes` of zeros (none for 0); `why` names
  // its user in an OutOfMemory.
  void reserve_zero_gradient(std::size_t bytes, const char* why);
  // Takes Programs::device_grad_sums (and a zero buffer for them) if not yet taken.
  // throws: OutOfMemory.
  void reserve_device_grad_sums();
  // The split of a training or inference entry into micro-batches of `micro` rows.
  void make_split(Entry& e, bool training, std::int64_t batch, std::int64_t micro, std::string cause);
  std::int64_t persistent_bytes() const;  // weights, optimizer slots, constants
  // What a training step of `e` needs beside the weights, the slots and the shared arena
  // (MemoryPlan::staging_bytes): on a device with queues the input ring's slots and the
  // step's values; the update's own arena for a loss-scaled step on a device (with its
  // zero gradient) and a data-parallel step (with the gradient buckets). 0 for one CPU
  // process.
  std::int64_t staging_bytes(const Entry& e);
  // Copies between host memory and the model's buffers (Note [The model's device path]).
  void read_buffer(void* host, const void* buffer, std::size_t bytes) const;
  // Waits for the work enqueued on the device's queues (none on the CPU): before a copy
  // that must see a step's results, or must not overwrite what a queued kernel reads.
  void sync_device() const;
  // What a timed program calls after each kernel (Program::set_timing): on a device with
  // queues, a wait for them; nothing on the CPU.
  std::function<void()> timing_wait() const;
  // A StepContext for the model's steps: the compute queue's stream on a device.
  StepContext step_context() const;
  void write_buffer(void* buffer, const void* host, std::size_t bytes) const;
  // A host tensor in the model's memory: itself where that is the host's, else a copy.
  Tensor on_backend(const Tensor& host) const;
  // Host constants a graph holds as variables (a GRU's zero bias), on the model's memory.
  void place_constants(Graph& g) const;

  std::string name_;
  DTypePolicy dtype_policy_;
  MemoryPolicy memory_policy_;
  std::unique_ptr<Backend> backend_;
  std::uint64_t seed_ = 0;
  std::uint64_t weight_budget_elements_ = 0;  // limit_weight_elements; 0: none
  std::string weight_budget_source_;
  CompileOptions compile_options_;
  std::unique_ptr<Optimizer> optimizer_;
  std::unique_ptr<Programs> programs_;
  std::int64_t iterations_ = 0;
  bool stop_training_ = false;
  int interrupted_ = 0;
  std::int64_t interrupted_epoch_ = 0, interrupted_step_ = 0;
  const std::atomic<int>* fit_interrupt_ = nullptr;  // the running fit's FitOptions::interrupt
  int agreed_interrupt_ = 0;                         // data-parallel: the signal the ranks agreed on
  // Loss scaling (OptimizerOptions::loss_scale): the scale now, the finite steps since it
  // last changed, and the steps skipped in the running epoch. Training then runs as a
  // gradient program and an apply program (a split of one micro-batch; on a device with
  // queues a Mode::scaled program and the apply program), so a step with non-finite
  // gradients can be skipped.
  bool loss_scaling() const { return compile_options_.optimizer.loss_scale.enabled; }
  double loss_scale_ = 1.0;
  std::int64_t loss_scale_good_steps_ = 0, skipped_steps_ = 0;
  std::int64_t fit_skipped_steps_ = 0;  // over the running fit: varies the random streams (model_fit.cpp)
  struct ResumePoint {
    std::int64_t epoch = 0, step = 0;
    std::string progress;
  };
  std::optional<ResumePoint> resume_;
  std::vector<Callback*> fit_callbacks_;
  std::int64_t fit_initial_epoch_ = 0, fit_initial_step_ = 0;
  Totals* totals_ = nullptr;  // the running epoch's, during fit
  // Set by an OomScope (fit, evaluate and predict with options) for its length.
  bool reduce_on_oom_ = false;                       // on_oom == "reduce_batch"
  std::vector<std::string>* notes_ = nullptr;        // History::notes, or the call's own
  std::function<void(const std::string&)> on_note_;  // FitOptions/InferenceOptions::on_note
  std::uint64_t oom_scope_ = 0;                      // which scope: a split is noted once per scope
  std::uint64_t oom_scopes_made_ = 0;
  // During a fit with class or sample weights: the training programs take a per-sample
  // weight input (entries are re-planned when this changes).
  void set_sample_weighting(bool weighted, std::map<std::int64_t, double> class_weight);
  // Writes the batch's sample weights into `e`'s input: `given` (rows floats, or null for
  // ones) times, in training, the class weights of the targets already staged in `e`.
  void stage_sample_weights(Entry& e, std::int64_t rows, const float* given);
  bool weighted_ = false;
  std::map<std::int64_t, double> class_weight_;
  // While an evaluation (or fit's validation) has sample weights: its programs take them
  // and weigh the loss, as Keras's evaluate(sample_weight=...) does; set by a
  // WeightedEvaluation for its length. Class weights never apply to it.
  bool weighted_evaluation_ = false;
  struct WeightedEvaluation;

  // Data parallelism (model_replicas.cpp). replicated(): more than one rank.
  std::shared_ptr<dist::Strategy> strategy_;
  std::shared_ptr<dist::Communicator> comm_;
  DataParallelOptions data_parallel_;
  std::unique_ptr<Replicas> replicas_;
  bool replicated() const;
  int replica_count() const;  // the ranks (1 alone)
  // Set by fit while it runs replicated: validation is sharded too.
  bool shard_validation_ = false;
  // The rows of the global batch the running step trains on (this rank has a slice).
  std::int64_t replica_global_rows_ = 0;
  // The last replicated step's wait for its gradient sums after the backward pass.
  std::int64_t replica_allreduce_us_ = 0;
  // This rank's rows [first, second) of a global batch of `rows` (all of them alone).
  std::pair<std::int64_t, std::int64_t> replica_slice(std::int64_t rows) const;
  // throws: InvalidArgument when batch_size does not split evenly across the ranks.
  void check_replicable(std::int64_t batch_size) const;
  // The gradient buckets (made on first use), and the update program's own arena
  // (allocated when a slice that fits is planned, so its memory is known before the
  // first step; throws OutOfMemory).
  Replicas& replica_state();
  // At the start of a replicated fit, a collective: whether this model's gradients are
  // summed on its device (device_comm_, NCCL's) or in host memory over comm_ (Note
  // [Device gradient sums]); every rank decides alike. throws: Unsupported when
  // implementation is nccl and a rank cannot use it.
  void choose_gradient_sums();
  std::shared_ptr<dist::Communicator> device_comm_;  // set: the gradient sums' communicator
  Device device_comm_device_;                        // the device it was made for
  void reserve_replica_update();
  // The bytes of the gradient buckets' buffer (Replicas::flat) where it is the backend's
  // memory (the CPU, or a device whose sums NCCL runs), else 0; for the memory plan.
  std::int64_t gradient_buckets_bytes() const;
  // One replicated step on this rank's slice (e: a Mode::grads entry; rows may be 0).
  bool run_replica_step(Entry& e, std::int64_t rows, const StepContext& ctx, const BeforeRun& before_run);
  // Rank 0's weights, optimizer slots, iteration count, loss scale and resume point (the
  // epoch fit starts at and the batches of it to skip) to every rank.
  void broadcast_state(std::int64_t& start_epoch, std::int64_t& skip);
  // Sums every rank's loss and metric sums into `totals`.
  void reduce_totals(Totals& totals, const char* what);
  // After a step's or an epoch's callbacks: every rank stops if any rank's set
  // stop_training, and takes rank 0's constant learning rate (ReduceLROnPlateau, or a
  // restored backup, changed it there), so the replicas never drift apart.
  void agree_on_callbacks();
  // Averages BatchNormalization's moving statistics across ranks (at each epoch end).
  void average_moving_statistics();
  // on_oom="reduce_batch": the ranks agree on the micro-batches their slices of the
  // global batch `batch_size` run as (the smallest any rank needs), so every rank splits
  // when one runs out of memory (Note [Micro-batches across ranks]). A collective: every
  // rank calls it at the same point of fit, with the same on_oom.
  void agree_on_micro_batches(std::int64_t batch_size);
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
