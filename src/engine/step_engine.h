// StepEngine: what runs a Model's steps. It owns the backend (device and memory policy),
// the optimizer, the planned programs by (mode, batch size, per-sample input shapes) with
// their shared arena (Note [Shapes known per batch]: StepEngine::entry_mode),
// and the loops of fit / evaluate / predict that stage batches into them. Model (the
// Keras-facing object: layers, compile options, dtype policy) forwards to it.
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

#include "nnfit/backend/backend.h"
#include "nnfit/data/autotune.h"
#include "nnfit/data/dataset.h"
#include "nnfit/dist/strategy.h"
#include "nnfit/model/callbacks.h"
#include "nnfit/model/fit_options.h"
#include "nnfit/model/model.h"
#include "nnfit/nn/optimizer.h"

namespace nnfit {

struct StepContext;  // backend/kernel.h
class Program;       // graph/program.h
// engine/step.h
class Step;
class PlainStep;
class CapturedStep;
class MicroBatchedStep;
class LossScaledStep;
class ReplicatedStep;
enum class StepKind;

// One per Model, made by its constructor and destroyed with it; `model_` (its owner)
// outlives it. The members are public to Model's forwarders and to the step classes
// (engine/step.h); this header is private to nnfit_model, so nothing outside src/ sees
// them. Model's fields it reads (name, layer graph, compile options, dtype policy, seed)
// it reads through model_ (StepEngine is Model's friend).
// Thread safety: none; as Model, used from one thread.
// The per-sample shapes of a batch's inputs, one per model input, without the batch axis
// (Note [Shapes known per batch]).
using SampleShapes = std::vector<Shape>;

class StepEngine {
 public:
  explicit StepEngine(Model& model);
  ~StepEngine();  // release(), then the backend
  // Waits for the device's queued work and drops the programs and their arena (the
  // model's destructor, before the layers' weights go).
  void release();
  StepEngine(const StepEngine&) = delete;
  StepEngine& operator=(const StepEngine&) = delete;

  // What Model's public API forwards to (documented in nnfit/model/model.h).
  void set_memory_policy(const MemoryPolicy& policy);
  const MemoryPolicy& memory_policy() const { return memory_policy_; }
  void set_device(Device device);
  void set_backend(std::unique_ptr<Backend> backend);
  void set_strategy(std::shared_ptr<dist::Strategy> strategy);
  void set_communicator(std::shared_ptr<dist::Communicator> comm, DataParallelOptions options = {});
  void set_num_threads(int threads);
  int num_threads() const;
  void build();
  bool built() const { return programs_ != nullptr; }
  void compile(CompileOptions options);
  History fit(const Tensor& x, const Tensor& y, const FitOptions& options);
  History fit(const std::vector<Tensor>& x, const std::vector<Tensor>& y, const FitOptions& options);
  History fit(const data::Dataset& train, const FitOptions& options);
  Logs evaluate(const Tensor& x, const Tensor& y, std::int64_t batch_size);
  Logs evaluate(const data::Dataset& data);
  Tensor predict(const Tensor& x, std::int64_t batch_size);
  Logs evaluate(const Tensor& x, const Tensor& y, const InferenceOptions& options);
  Logs evaluate(const std::vector<Tensor>& x, const std::vector<Tensor>& y, const InferenceOptions& options);
  Logs evaluate(const data::Dataset& data, const InferenceOptions& options);
  Tensor predict(const Tensor& x, const InferenceOptions& options);
  std::vector<Tensor> predict(const std::vector<Tensor>& x, const InferenceOptions& options);
  std::vector<Tensor> get_weights() const;
  void set_weights(const std::vector<Tensor>& values);
  double learning_rate() const;
  void set_learning_rate(double learning_rate);
  void set_resume_point(std::int64_t epoch, std::int64_t step, const std::string& progress);
  std::string training_progress() const;
  void set_iterations(std::int64_t iterations);
  void set_loss_scale_state(double scale, std::int64_t good_steps);
  std::vector<Tensor> optimizer_slots() const;
  Tensor host_view(const Tensor& t) const;
  void write_tensor(const Tensor& dst, const Tensor& src) const;
  // `samples`: the inputs' per-sample shapes to plan for (empty: the model's own, which
  // must then be static; Note [Shapes known per batch]).
  MemoryPlan plan_memory(std::int64_t batch_size, const SampleShapes& samples = {});
  MemoryStats memory_stats() const;
  std::int64_t largest_batch_size_within(std::int64_t limit_bytes, std::int64_t max_batch,
                                         const SampleShapes& samples = {});
  ProgramCacheStats program_cache_stats() const;
  Device device() const { return backend_->device(); }
  std::int64_t planned_peak_bytes() const;

  // The engine's machinery.
  std::uint64_t seed() const { return model_.seed_; }  // Model::set_seed's
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
  // Copies a dataset element (x, y) into the inputs of the program for its batch size and
  // input shapes; `what`: "training", "validation" or "evaluation".
  Entry& stage_element(const data::Element& element, const char* what, std::int64_t index);
  // The program for (training, batch, samples), planned on first use (the cache of
  // Note [Shapes known per batch]: one program per mode, batch size and per-sample input
  // shapes, sharing one arena); with `bind` the arena grows to fit and the program is
  // bound to it. `samples` as for plan_memory: empty is the model's own input shapes.
  Entry& entry(bool training, std::int64_t batch, bool bind = true, const SampleShapes& samples = {});
  Entry& entry_mode(int mode, std::int64_t batch, bool bind = true, const SampleShapes& samples = {});
  std::unique_ptr<Entry> plan_entry(int mode, std::int64_t batch, const SampleShapes& samples);
  // `samples`, checked against the model's inputs; empty: the model's input shapes, which
  // must be static (InvalidArgument naming the input otherwise).
  SampleShapes samples_or_model(const SampleShapes& samples) const;
  // The per-sample shapes of a dataset element's inputs as the model's programs take them
  // (Keras's trailing axis of 1 added or removed, unknown dimensions filled), checked as
  // stage_element checks them (`what`, `index` name the batch in errors).
  SampleShapes element_samples(const data::Element& element, const char* what, std::int64_t index) const;
  std::unique_ptr<Entry> plan_apply();
  // The training or inference entry for `batch`, bound to the arena; when it does not fit
  // and reduce_on_oom_ is set, an entry that runs as micro-batches (a note, once per
  // OomScope, goes to *notes_ and on_note_; `what` names the batch in it). Under "fail" a
  // split left by an earlier call is dropped, so the full batch fits or OutOfMemory says
  // why. throws: OutOfMemory.
  Entry& entry_or_split(bool training, std::int64_t batch, const char* what, const SampleShapes& samples = {});
  // Drops the least recently used programs past kMaxCachedPrograms, never the update
  // program nor one used in the last kRecentPrograms fetches (Note [A bounded program cache]);
  // `planning` leaves room for the one the fetch is about to plan.
  void trim_programs(bool planning);
  // Whether the model runs on a device whose work goes through queues (a GPU's streams).
  bool queued_device() const { return !backend_->host_addressable() && backend_->queues() != nullptr; }
  // The Mode a training batch that fits runs as: a replica's gradients (data-parallel),
  // a loss-scaled step's gradients on a device with queues, else the training step.
  int training_mode() const;
  // The Mode an inference batch runs as: with a sample-weight input while an evaluation
  // weighs its loss by sample weights (WeightedEvaluation), else plain inference.
  int inference_mode() const;
  // The per-sample input shapes of every batch of `data`: the model's own when they are
  // static; else those of its element spec when it fixes them (a pipeline padding to one
  // length); none when they vary per batch (Note [Shapes known per batch]).
  std::optional<SampleShapes> fixed_samples(const data::Dataset& data) const;
  // Whether a dataset's elements bring sample weights: a component after x and y, as
  // (x, y, sample_weight). A model that takes no targets (a compute_loss reading no y)
  // takes (x), or (x, y) and (x, y, sample_weight) with y unread, as Keras reads a batch.
  bool carries_sample_weights(const data::Dataset& data) const {
    return data.element_spec().size() > model_.num_inputs() + model_.num_outputs();
  }
  // Called before each program a step runs; `update_only`: the program is all optimizer
  // update (an accumulated step's last one), whatever its nodes' names say.
  using BeforeRun = std::function<void(Program& program, bool update_only)>;
  // Runs an entry's step the way choose_step picks for it (Note [Step kinds]; rows: the
  // batch's). Returns whether the optimizer stepped (a loss-scaled step with non-finite
  // gradients is skipped).
  bool run_entry(Entry& e, std::int64_t rows, const StepContext& ctx, const BeforeRun& before_run = {});
  // The ways of running a step (engine/step.h), one of each, made with the engine.
  std::unique_ptr<PlainStep> plain_step_;
  std::unique_ptr<CapturedStep> captured_step_;
  std::unique_ptr<MicroBatchedStep> micro_batched_step_;
  std::unique_ptr<LossScaledStep> loss_scaled_step_;
  std::unique_ptr<ReplicatedStep> replicated_step_;
  Step& step(StepKind kind);
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
  // A bound entry's program alone: CapturedStep's on a backend with queues (captured at
  // its first run and replayed after: Note [Captured steps]), else PlainStep's.
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

  MemoryPolicy memory_policy_;
  std::unique_ptr<Backend> backend_;
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
  bool loss_scaling() const { return model_.compile_options_.optimizer.loss_scale.enabled; }
  double loss_scale_ = 1.0;
  std::int64_t loss_scale_good_steps_ = 0, skipped_steps_ = 0;
  std::int64_t fit_skipped_steps_ = 0;  // over the running fit: varies the random streams (fit_loop.cpp)
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
  // predict with InferenceOptions::training: its programs run the layers in training mode.
  bool training_forward_ = false;
  std::uint64_t training_forward_calls_ = 0;  // its draws' step, apart from fit's

  // Data parallelism (replicas.cpp). replicated(): more than one rank.
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
  void agree_on_micro_batches(std::int64_t batch_size, const SampleShapes& samples);

  // The model this engine runs: its owner, which outlives it.
  Model& model_;
};

}  // namespace nnfit
