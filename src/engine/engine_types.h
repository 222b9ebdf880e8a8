// The step engine's types (StepEngine's nested structs): the per-(mode, batch) planned
// entries with their staging, the Programs that own them and the arena, the gradient
// buckets, the EpochFeed fit's loop takes its batches from (epoch_feed.cpp), the loops'
// scopes and loss/metric sums, and small helpers.
#pragma once
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <tuple>
#include <vector>

#include "engine/step_engine.h"
#include "model/fit_data.h"
#include "nnfit/backend/device_queues.h"
#include "nnfit/backend/pinned_double_buffer.h"
#include "nnfit/dist/buckets.h"
#include "nnfit/graph/program.h"

namespace nnfit {

inline std::int64_t round64(std::int64_t b) { return (b + 63) / 64 * 64; }

inline double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Everything planned for one model: programs by (training, batch size), the shared arena,
// optimizer slots and the constant that seeds autodiff.
// What an entry's program computes: inference, a training step (forward, backward and the
// optimizer update), only the weight gradients of a micro-batch, or only the update from
// given gradients (the last two make a batch that does not fit: fit(on_oom="reduce_batch")),
// or a loss-scaled batch's unscaled gradients and their finite check on a device, whose
// update is the apply program's (Note [Loss scaling on the device], micro_batches.cpp),
// or inference whose loss weighs each sample by a weight input (evaluate with sample
// weights; StepEngine::inference_mode).
// infer_training: predict's forward pass in training mode (InferenceOptions::training, Keras's
// model(x, training=True) on arrays): no update, the layers' training behaviour.
enum class Mode { infer = 0, train = 1, grads = 2, apply = 3, scaled = 4, accumulate = 5, infer_weighted = 6,
                  infer_training = 7 };
inline bool is_inference(Mode mode) {
  return mode == Mode::infer || mode == Mode::infer_weighted || mode == Mode::infer_training;
}

// A batch that does not fit, run as micro-batches (fit/evaluate/predict with
// on_oom="reduce_batch"; docs/design/memory.md). Rows are staged here (or read where the
// pipeline made them); each micro-batch runs the program of its size, its predictions
// land in `pred` and its loss is weighted by its rows. Training (Mode::grads) also sums
// each micro-batch's gradients weighted by its rows, and one update applies their mean,
// which is the full batch's gradient; inference (is_inference) needs nothing more.
struct StepEngine::MicroBatches {
  Mode mode = Mode::grads;            // the micro-batches' programs (accumulate: summed on the device)
  std::int64_t batch = 0, micro = 0;
  // Host staging for the whole batch: per model input, per output (ys: if a loss), and
  // the per-sample loss weights (training with class or sample weights).
  std::vector<Tensor> xs, ys, preds;
  Tensor sample_weight;
  std::vector<const void*> x_ext;     // the batch's inputs where they lie, for one run
  std::vector<Tensor> grad_sums;      // Mode::grads: per trainable weight (host memory)
  float nonfinite = 0;                // Mode::accumulate: the micro-batches' non-finite counts, summed
  float loss = 0;
  std::vector<float> output_losses;   // per output, for a model with several
  std::string cause;                  // the OutOfMemory message that made the split
  std::uint64_t noted_scope = 0;      // the OomScope that last noted the split
};

// The on_oom policy and where notes go, set on the model for the length of one fit,
// evaluate or predict call; the previous ones come back after (validation inside fit
// keeps fit's).
struct StepEngine::OomScope {
  // throws: InvalidArgument for an on_oom other than "fail" or "reduce_batch".
  OomScope(StepEngine& model, const std::string& on_oom, std::vector<std::string>* notes,
           std::function<void(const std::string&)> on_note);
  ~OomScope();
  OomScope(const OomScope&) = delete;
  OomScope& operator=(const OomScope&) = delete;
  StepEngine& model;
  bool reduce_on_oom;
  std::vector<std::string>* notes;
  std::function<void(const std::string&)> on_note;
  std::uint64_t scope;
};

// StepEngine::weighted_evaluation_ for an evaluation's length: its inference programs take
// sample weights (Mode::infer_weighted), or not.
struct StepEngine::WeightedEvaluation {
  WeightedEvaluation(StepEngine& m, bool weighted) : model(m), was(m.weighted_evaluation_) {
    m.weighted_evaluation_ = weighted;
  }
  ~WeightedEvaluation() { model.weighted_evaluation_ = was; }
  WeightedEvaluation(const WeightedEvaluation&) = delete;
  WeightedEvaluation& operator=(const WeightedEvaluation&) = delete;
  StepEngine& model;
  bool was;
};

// The device's side of the input double buffer (Note [Input double buffer], device_path.cpp):
// two device slots, each as large as the largest staged entry's batch, and the buffer that
// orders their copies. One per model; its batch count runs across every staged entry.
struct StepEngine::InputRing {
  Tensor device[2];
  std::unique_ptr<PinnedDoubleBuffer> buffer;
  Staging* pending = nullptr;  // whose batch is staged and not yet consumed
  // Forgets the batch staged ahead, if any (its entry stages it again when it runs).
  void drop_pending();
};

// Host copies of an entry's inputs and outputs, for a program whose arena is in device
// memory (Note [The model's device path]): the feeds write the batch into one of two
// pinned sets (the parity of the ring's next batch), stage() enqueues its copy to the
// device, consume() copies it into the program's input slots, download() brings the loss
// and predictions back. The metrics read the targets of the set the last run consumed.
struct StepEngine::Staging {
  struct Set {
    std::vector<Tensor> xs, ys;
    Tensor sample_weight;
  };
  Set in[2];
  std::vector<std::size_t> offsets;  // where each input, target and the weights lie in a ring slot
  std::size_t bytes = 0;             // a batch's bytes in a ring slot
  InputRing* ring = nullptr;         // null: copied in with Backend::copy (no queues)
  int read = 0;                      // the set the last run consumed
  bool pending = false;              // this entry's batch is staged (ahead of its step)
  std::vector<const void*> x_ext;    // an input read where the pipeline made it (set_x)
  std::vector<PinnedDoubleBuffer::In> in_parts;    // a batch's copies, reused each step
  std::vector<PinnedDoubleBuffer::Out> out_parts;
  std::vector<Tensor> preds;
  float loss = 0;
  std::vector<float> output_losses;
  float nonfinite = 0;  // Mode::scaled
  // The set the feeds write: the ring's next batch's, once the copies that read it before
  // have run.
  Set& write() {
    if (!ring) return in[0];
    ring->buffer->await_host(ring->buffer->staged());
    written = static_cast<int>(ring->buffer->staged() % 2);
    return in[written];
  }
  int written = -1;  // the set the feeds last wrote (another batch may have been staged since)
};

// A planned program and where its inputs and outputs live. A split entry (micro-batches)
// stages them in its MicroBatches instead; an entry on a device, in its Staging.
struct StepEngine::Entry {
  Program program;  // for a split entry: planned for the whole batch, never bound
  std::vector<int> xs, ys, preds;    // per model input, per output (ys: when there is a loss)
  int sample_weight = -1;            // training with class or sample weights: [batch] f32
  int loss = -1;                     // the total (weighted) loss
  std::vector<int> output_losses;    // per output, for a model with several
  std::vector<int> gradient_values;  // weight gradients, for the plan breakdown
  std::vector<std::size_t> gradient_weights;  // Mode::grads, scaled: trainable index of each gradient
  int nonfinite = -1;                // Mode::scaled: how many gradients hold a non-finite element (f32)
  std::vector<int> gradient_inputs;           // Mode::apply: the input of each trainable weight, or -1
  Mode mode = Mode::train;
  SampleShapes samples;              // the inputs' per-sample shapes it was planned for
  std::int64_t last_use = 0;         // Programs::uses when entry_mode last gave it (its batch's tick)
  bool bound = false;                // bound to the current arena
  std::unique_ptr<MicroBatches> split;  // set: this batch runs as micro-batches
  std::unique_ptr<Staging> staged;      // set: the program's arena is device memory
  // The program captured as a CUDA graph on the backend's queues (Note [Captured steps]):
  // its id, -1 before capture; `uncapturable` once a capture failed or cannot be made.
  struct Captured {
    DeviceQueues* queues = nullptr;
    int id = -1;
    bool uncapturable = false;
    void drop() {
      if (queues && id >= 0) queues->drop_graph(id);
      id = -1;
    }
    ~Captured() { drop(); }
  } graph;

  // Where a feed writes the batch's input rows and targets; where the loops read the
  // outputs after the run.
  void* x_data(std::size_t i = 0) {
    if (split) return split->xs[i].raw();
    if (staged) {
      staged->x_ext[i] = nullptr;
      return staged->write().xs[i].raw();
    }
    program.set_input(xs[i], nullptr);
    return program.data(xs[i]);
  }
  // Reads input i from `data` for the next run (nullptr: from x_data() again).
  void set_x(const void* data, std::size_t i = 0) {
    if (split) split->x_ext[i] = data;
    else if (staged) staged->x_ext[i] = data;
    else program.set_input(xs[i], data);
  }
  void* y_data(std::size_t i = 0) {
    if (split) return i < split->ys.size() ? split->ys[i].raw() : nullptr;
    if (staged) return i < ys.size() ? staged->write().ys[i].raw() : nullptr;
    return i < ys.size() ? program.data(ys[i]) : nullptr;
  }
  // The targets of the batch last run (the metrics' reading; the feeds may have staged
  // the next batch's already).
  const void* y_result(std::size_t i) const {
    if (staged && !split) return i < ys.size() ? staged->in[staged->read].ys[i].raw() : nullptr;
    return const_cast<Entry*>(this)->y_data(i);
  }
  float* sample_weight_data() {
    if (split) return split->sample_weight.data<float>();
    if (staged) return staged->write().sample_weight.data<float>();
    return static_cast<float*>(program.data(sample_weight));
  }
  // The sample weights of the batch last run (as y_result).
  const float* sample_weight_result() const {
    if (staged && !split) return staged->in[staged->read].sample_weight.data<float>();
    return const_cast<Entry*>(this)->sample_weight_data();
  }
  const float* pred_data(std::size_t i = 0) const {
    if (split) return split->preds[i].data<float>();
    if (staged) return staged->preds[i].data<float>();
    return static_cast<const float*>(program.data(preds[i]));
  }
  const TensorDesc& pred_desc(std::size_t i = 0) const { return program.graph().desc(preds[i]); }
  float loss_value() const {
    if (split) return split->loss;
    if (staged) return staged->loss;
    return *static_cast<const float*>(program.data(loss));
  }
  // Output i's own loss (the total for a single-output model).
  float output_loss_value(std::size_t i) const {
    if (output_losses.empty()) return loss_value();
    if (split) return split->output_losses[i];
    if (staged) return staged->output_losses[i];
    return *static_cast<const float*>(program.data(output_losses[i]));
  }
  // A staged entry: its Staging made (two sets of host tensors of the program's shapes and
  // dtypes, from `pinned` when given, and their place in a ring slot); the caller sets
  // its ring.
  void make_staging(Allocator* pinned);
  // A staged entry's batch on its way in: stage() enqueues its copies to the ring's slot
  // (on the copy queue; done ahead of the step by fit's lookahead), upload() copies it into
  // the program's input slots (staging it first if need be), download() brings the
  // results back (enqueued; finish_download() waits for them).
  void stage(Backend& backend);
  void upload(Backend& backend);
  void download(Backend& backend);
  void finish_download(Backend& backend);
};

// A loop that stages batches ahead (fit's epoch, StepEngine::run_batches): a batch left staged
// when it ends, however it ends, is dropped (Note [Input double buffer]).
struct StepEngine::LookaheadScope {
  StepEngine& model;
  ~LookaheadScope() {
    try {
      model.drop_lookahead();
    } catch (const std::exception&) {  // unwinding from the device's own error
    }
  }
};

// One batch of an inference loop (StepEngine::run_batches): its entry, rows and first row, and
// the dataset element it came from (kept until the batch is staged and run: an input may
// be read where the element holds it).
struct StepEngine::Batch {
  Entry* e = nullptr;
  std::int64_t rows = 0, start = 0;
  std::optional<data::Element> element;
};

// Loss and metric sums over the batches of an epoch or an evaluation, and the logs they
// give in Keras's names: metrics, then (several outputs) "<output>_loss" each, then "loss".
struct StepEngine::Totals {
  std::vector<fit_data::OutputMetric> metrics;
  std::vector<std::string> output_names;  // for several outputs
  double loss_sum = 0;
  std::vector<double> output_loss_sums;
  std::int64_t seen = 0;

  explicit Totals(const Model& model)
      : metrics(fit_data::make_output_metrics(model.compile_options(), model.output_shapes(), model.output_names())) {
    // A compute_loss is one loss for the model: Keras logs no per-output losses with it.
    if (model.num_outputs() > 1 && !model.compile_options().computes_loss()) output_names = model.output_names();
    output_loss_sums.assign(output_names.size(), 0.0);
  }
  void reset() {
    for (auto& m : metrics) m.metric.reset();
    loss_sum = 0;
    output_loss_sums.assign(output_names.size(), 0.0);
    seen = 0;
  }
  // After a run of `e` on `rows` rows.
  void add(Entry& e, std::int64_t rows) {
    const double r = static_cast<double>(rows);
    loss_sum += static_cast<double>(e.loss_value()) * r;
    for (std::size_t i = 0; i < output_loss_sums.size(); ++i) {
      output_loss_sums[i] += static_cast<double>(e.output_loss_value(i)) * r;
    }
    // A weighted metric counts each row by its sample weight where the batch has them.
    const float* weights = e.sample_weight >= 0 ? e.sample_weight_result() : nullptr;
    for (auto& m : metrics) {
      m.metric.update(e.pred_data(m.output), e.y_result(m.output), rows, e.pred_desc(m.output),
                      m.weighted ? weights : nullptr);
    }
    seen += rows;
  }
  // The sums as JSON and back (training_progress.cpp): a resumed run continues a partly
  // done epoch's averages. restore throws InvalidArgument when the JSON does not fit.
  std::string state() const;
  void restore(const std::string& json);
  Logs logs() const {
    Logs out;
    for (const auto& m : metrics) {
      // One entry, or one per class ("f1_score_0", ...) for a per-class F-score.
      const std::vector<double> values = m.metric.results();
      const std::vector<std::string> keys = m.metric.keys(m.key);
      for (std::size_t i = 0; i < values.size(); ++i) out.push_back({keys[i], values[i]});
    }
    const double n = static_cast<double>(seen > 0 ? seen : 1);
    for (std::size_t i = 0; i < output_names.size(); ++i) out.push_back({output_names[i] + "_loss", output_loss_sums[i] / n});
    out.push_back({"loss", loss_sum / n});
    return out;
  }
};

// Data parallelism's gradient buckets (replicas.cpp, Note [Gradient buckets]): one
// flat buffer holds every trainable weight's gradient sum, laid out in reverse layer order
// (the order the backward pass produces them), so a bucket is a contiguous range.
struct StepEngine::Replicas {
  bool on_device = false;             // flat is device memory summed by device_comm_
  Tensor flat;                        // f32, every trainable weight's gradient
  std::vector<std::int64_t> offset;   // per trainable weight: where its gradient starts in flat
  std::vector<int> bucket_of;         // per trainable weight
  using Bucket = dist::BucketLayout::Bucket;
  std::vector<Bucket> buckets;  // dist::plan_buckets's
  // Per training program: for each of its steps, the entry's gradients (indices into
  // gradient_values) that step completes.
  std::map<const Program*, std::vector<std::vector<std::size_t>>> finals;
};

struct StepEngine::Programs {
  // By (mode, batch size, per-sample input shapes): Note [Shapes known per batch]. The
  // update-only program (Mode::apply) has batch 0 and no shapes.
  using Key = std::tuple<Mode, std::int64_t, std::vector<std::vector<std::int64_t>>>;
  static Key key(Mode mode, std::int64_t batch, const SampleShapes& samples) {
    std::vector<std::vector<std::int64_t>> dims;
    for (const Shape& s : samples) dims.push_back(s.dims());
    return {mode, batch, std::move(dims)};
  }
  std::map<Key, std::unique_ptr<Entry>> entries;
  // Batches (and fit's planning ahead) whose program entry_or_split found, or planned.
  std::int64_t hits = 0, misses = 0;
  // Batches fetched (entry_or_split), the clock of Entry::last_use; entries trim_programs dropped.
  std::int64_t uses = 0, evicted = 0;
  Tensor arena;
  std::size_t arena_bytes = 0;
  std::vector<Weight*> trainable;             // in layer order
  std::vector<std::vector<Tensor>> slots;     // per trainable weight
  Tensor one;                                 // scalar 1.0: dL/dL
  Tensor scale;  // Mode::scaled and accumulate programs: what their gradients are divided by (made with the first)
  // On a device with queues, a split step's gradient sums (Note [Micro-batches on the
  // device]): one float32 tensor per trainable weight, in device memory, made with the split.
  std::vector<Tensor> device_grad_sums;
  // On a device with queues: this step's StepScalars in device memory, and the host copy
  // it is written from (stable until the step's wait; Note [Step values in device memory]).
  Tensor step_buffer;
  StepScalars step_host;
  // The same for the update program of a loss-scaled step, which no host wait follows
  // before the next step's program writes step_host (Note [Loss scaling on the device]);
  // and the scale that step copies into `one`, stable until its results' wait.
  StepScalars update_step_host;
  float scale_host = 1.0f;
  float seed_host = 1.0f;  // a data-parallel step's seed, copied into `one` likewise
  // The update program's own arena, where the shared one still holds what the update
  // reads: a loss-scaled step's on a device (its gradients) and a data-parallel step's
  // (the loss and predictions the epoch's sums read after it). On a device a loss-scaled
  // step gives a weight the loss does not reach its zero gradient from zero_gradient
  // (device memory, the largest such weight).
  Tensor update_arena;
  Tensor zero_gradient;
  // On a device: host room for one gradient the host sums or unscales (micro-batches, loss
  // scaling, data-parallel), grown once to the largest, so a step allocates nothing.
  std::vector<float> host_scratch;
  std::unique_ptr<InputRing> ring;  // on a device with queues: the input double buffer
};

// How the epoch loop gets its batches: begin(epoch) starts a pass; next(rows) stages the
// next batch into its program's inputs and returns that entry and its rows (nullptr at
// the end of the pass). The loop counts the time next() takes as input wait. prepare
// (optional) is called as soon as an epoch's last batch is trained, before validation,
// when another epoch follows: a pipeline starts the next pass there, so its first
// batches are made while validation runs instead of at the start of the next epoch.
struct StepEngine::EpochFeed {
  std::function<void(std::int64_t epoch)> begin;
  std::function<Entry*(std::int64_t& rows)> next;
  std::function<void(std::int64_t next_epoch)> prepare;
  // Passes over the first n batches of the pass begun (a resumed run's done batches).
  std::function<void(std::int64_t n)> skip;
  std::int64_t pass_steps = 0;  // batches in one pass; 0: not known (a dataset of unknown size)
};

}  // namespace nnfit
