// The training loop: StepEngine::fit (from tensors or from a Dataset) and FitLoop, the
// epoch loop both run. Each step stages a batch into the inputs of the program planned for
// its size and runs it with the engine's step for that entry (engine/step.h); the programs
// were planned before the first step where the batch sizes are known. Inference is in
// inference_loop.cpp, the profiler's records in fit_profile.cpp.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>

#include "model/fit_data.h"
#include "engine/fit_loop.h"
#include "model/step_profile.h"
#include "nnfit/core/env_flags.h"
#include "nnfit/core/error.h"
#include "nnfit/core/trace.h"
#include "nnfit/data/in_memory_dataset.h"
#include "nnfit/dist/communicator.h"
#include "nnfit/nn/metrics.h"
#include "nnfit/profile/chrome_trace.h"
#include "nnfit/profile/xplane.h"
#include "nnfit/profile/step_log.h"

namespace nnfit {

using namespace fit_data;
using namespace step_profile;

namespace {

std::int64_t checked_steps_per_epoch(const FitOptions& options, std::int64_t steps_per_epoch) {
  NNFIT_CHECK(options.steps_per_epoch >= 0, InvalidArgument, "steps_per_epoch must be positive (or 0: one pass), got ",
              options.steps_per_epoch);
  return options.steps_per_epoch > 0 ? options.steps_per_epoch : steps_per_epoch;
}

}  // namespace

History StepEngine::train_loop(const FitOptions& options, std::int64_t steps_per_epoch, EpochFeed& feed,
                               data::Autotuner* validation_tuner) {
  FitLoop loop(*this, options, steps_per_epoch, feed, validation_tuner);
  return loop.run();
}

FitLoop::FitLoop(StepEngine& engine, const FitOptions& options, std::int64_t steps_per_epoch,
                 StepEngine::EpochFeed& whole_passes, data::Autotuner* validation_tuner)
    : engine_(engine),
      options_(options),
      steps_per_epoch_(checked_steps_per_epoch(options, steps_per_epoch)),
      limited_(options.steps_per_epoch > 0 ? StepEngine::limit_steps(whole_passes, options.steps_per_epoch,
                                                                     &step_notes_, options.on_note)
                                           : StepEngine::EpochFeed{}),
      feed_(options.steps_per_epoch > 0 ? limited_ : whole_passes),
      validation_tuner_(validation_tuner),
      totals_(engine.model_),
      profile_(engine, options) {
  NNFIT_CHECK(options.initial_epoch >= 0 && options.initial_epoch <= options.epochs, InvalidArgument,
              "initial_epoch ", options.initial_epoch, " must lie in [0, epochs = ", options.epochs, "]");
  engine_.stop_training_ = false;
  engine_.interrupted_ = 0;
  engine_.resume_.reset();
  engine_.fit_callbacks_ = options.callbacks;
  engine_.totals_ = &totals_;
  take_next_ = [this] {
    const double a0 = now_s();
    {
      TraceRange wait_range("input_wait", "fit", next_step_);
      ahead_.e = feed_.next(ahead_.rows);
    }
    const double a1 = now_s();
    if (ahead_.e && ahead_.e->staged && !ahead_.e->split) ahead_.e->stage(*engine_.backend_);
    ahead_.input_wait = a1 - a0;
    ahead_.h2d = now_s() - a1;
    ahead_.taken = true;
  };
}

FitLoop::~FitLoop() {
  engine_.fit_callbacks_.clear();
  engine_.totals_ = nullptr;
  engine_.resume_.reset();
  engine_.shard_validation_ = false;
}

template <typename Hook>
void FitLoop::call_callbacks(Hook&& hook) {
  for (std::size_t i = 0; i < options_.callbacks.size(); ++i) {
    TraceRange r("callback", "callback", static_cast<std::int64_t>(i));
    hook(options_.callbacks[i]);
  }
}

History FitLoop::run() {
  begin();
  for (std::int64_t epoch = start_epoch_; epoch < options_.epochs && !engine_.stop_training_; ++epoch) {
    if (interrupt_at(epoch, skip_)) break;
    if (!run_epoch(epoch)) break;
    end_epoch(epoch);
  }
  finish();
  history_.notes = std::move(step_notes_);
  return std::move(history_);
}

void FitLoop::begin() {
  for (Callback* cb : options_.callbacks) cb->set_model(&engine_.model_);
  call_callbacks([&](Callback* cb) { cb->on_train_begin(options_.epochs, steps_per_epoch_); });
  // A callback may have restored a backup (BackupAndRestore): start where it ended.
  start_epoch_ = options_.initial_epoch;
  if (engine_.resume_) {
    start_epoch_ = engine_.resume_->epoch;
    skip_ = engine_.resume_->step;
    progress_ = engine_.resume_->progress;
    NNFIT_CHECK(start_epoch_ <= options_.epochs, InvalidArgument, "the backup is at epoch ", start_epoch_,
                ", past the ", options_.epochs, " epochs this run trains; raise epochs or start afresh");
  }
  // Replicated: every rank starts from rank 0's weights and resume point; the epoch's
  // sums a backup carried are rank 0's alone (the ranks' sums are added at epoch end).
  if (engine_.replicated()) {
    engine_.broadcast_state(start_epoch_, skip_);
    if (engine_.comm_->rank() != 0) progress_.clear();
    engine_.shard_validation_ = true;
  }
  history_.initial_epoch = engine_.fit_initial_epoch_ = start_epoch_;
  history_.initial_step = engine_.fit_initial_step_ = skip_;
  ctx_ = engine_.step_context();
  ctx_.seed = engine_.seed();
  ctx_.training = true;
  engine_.fit_skipped_steps_ = 0;
  // FitOptions::interrupt, looked at on each step boundary: set, training stops there.
  // Data-parallel: the signal the ranks agreed on at the last step (agree_on_callbacks), so
  // every rank stops at the same step (mpirun forwards a Ctrl-C to each at its own moment).
  engine_.fit_interrupt_ = options_.interrupt;
  engine_.agreed_interrupt_ = 0;
}

bool FitLoop::interrupt_at(std::int64_t epoch, std::int64_t done) {
  const int sig = engine_.replicated() ? engine_.agreed_interrupt_ : options_.interrupt ? options_.interrupt->load() : 0;
  if (sig == 0) return false;
  engine_.interrupted_ = sig;
  engine_.interrupted_epoch_ = epoch;
  engine_.interrupted_step_ = done;
  engine_.stop_training_ = true;
  return true;
}

bool FitLoop::run_epoch(std::int64_t epoch) {
  call_callbacks([&](Callback* cb) { cb->on_epoch_begin(epoch); });
  totals_.reset();
  feed_.begin(epoch);
  const std::int64_t first_step = skip_;
  if (skip_ > 0) {
    NNFIT_CHECK(feed_.skip, InvalidArgument, "internal: this feed cannot resume mid-epoch");
    feed_.skip(skip_);
    if (!progress_.empty()) totals_.restore(progress_);
    skip_ = 0;
  }
  train_seconds_ = wait_seconds_ = 0;
  ahead_ = Ahead{};
  {
    const StepEngine::LookaheadScope lookahead_scope{engine_};
    for (std::int64_t s = first_step;; ++s) {
      if (s > first_step && interrupt_at(epoch, s)) break;
      if (!run_step(epoch, s)) break;
    }
    // A batch staged ahead of a step that did not come (a stop or an interrupt mid-epoch)
    // goes before anything else runs: validation's batches are next on the ring.
    engine_.drop_lookahead();
  }
  if (engine_.interrupted_) {  // mid-epoch: no validation, no epoch end; on_train_end in finish
    profile_.flush();
    return false;
  }
  return true;
}

StepEngine::Entry* FitLoop::take_batch(std::int64_t global_step, std::int64_t& rows, double& input_wait, double& h2d) {
  if (ahead_.taken) {  // taken and staged while the last step ran
    StepEngine::Entry* e = ahead_.e;
    rows = ahead_.rows;
    input_wait = ahead_.input_wait;
    h2d = ahead_.h2d;
    ahead_ = Ahead{};
    return e;
  }
  const double t0 = now_s();
  StepEngine::Entry* e = nullptr;
  {
    TraceRange wait_range("input_wait", "fit", global_step);
    e = feed_.next(rows);
  }
  input_wait = now_s() - t0;
  if (e && e->staged && !e->split) {
    const double h0 = now_s();
    e->stage(*engine_.backend_);
    h2d = now_s() - h0;
  }
  return e;
}

bool FitLoop::run_step(std::int64_t epoch, std::int64_t s) {
  StepEngine& en = engine_;
  const std::int64_t global_step = en.iterations_ + 1;
  profile_.begin_step(global_step);
  profile::StepRecord rec;
  {
    TraceRange step_range("train_step", "fit", global_step);
    const double t0 = now_s();
    std::int64_t rows = 0;
    double input_wait = 0, h2d = 0;
    StepEngine::Entry* e = take_batch(global_step, rows, input_wait, h2d);
    wait_seconds_ += input_wait;
    if (!e) return false;
    // Keras's on_train_batch_begin, once the batch is here; its time is the callbacks'.
    double begin_hooks = 0;
    if (!options_.callbacks.empty()) {
      const double b0 = now_s();
      call_callbacks([&](Callback* cb) { cb->on_train_batch_begin(s); });
      begin_hooks = now_s() - b0;
    }
    // On a device with queues, the next batch is taken and staged while this step runs
    // (Note [Input double buffer]).
    if (e->staged && e->staged->ring && !e->split &&
        (e->mode == Mode::train || e->mode == Mode::scaled || e->mode == Mode::grads)) {
      next_step_ = global_step + 1;
      en.lookahead_ = &take_next_;
    }
    ctx_.step = en.iterations_;
    // The random ops' streams are keyed by (seed, step): after a skipped loss-scaled step
    // (iterations_ not advanced) the retry draws afresh, as Keras's seed generator does.
    ctx_.seed = en.seed() + static_cast<std::uint64_t>(en.fit_skipped_steps_) * 0x9e3779b97f4a7c15ull;
    ctx_.learning_rate = static_cast<float>(en.optimizer_->learning_rate(en.iterations_));
    // A loss-scaled step with non-finite gradients is skipped: the optimizer's
    // iterations (and the learning rate schedule) do not advance, as in Keras.
    const bool stepped = en.run_entry(*e, rows, ctx_, profile_.before_run());
    en.lookahead_ = nullptr;
    if (stepped) ++en.iterations_;
    profile_.count_step(*e, rows);
    train_seconds_ += now_s() - t0 - begin_hooks;
    const float loss = rows > 0 ? e->loss_value() : 0.0f;  // a replica may have no rows
    totals_.add(*e, rows);
    const double t2 = now_s();
    if (!options_.callbacks.empty()) {
      batch_logs_ = totals_.logs();
      call_callbacks([&](Callback* cb) { cb->on_train_batch_end(s, batch_logs_); });
    }
    // A callback (TerminateOnNaN) may end training on a bad loss; otherwise it is an error.
    NNFIT_CHECK(std::isfinite(loss) || en.stop_training_, InvalidArgument, "the loss became ", loss, " at epoch ",
                epoch + 1, ", step ", s + 1, "; lower the learning rate or check the data for NaN/inf");
    const double t3 = now_s();
    if (en.replicated()) en.agree_on_callbacks();  // every rank stops at the same step
    const double t4 = now_s();
    train_seconds_ += t4 - t3;  // the ranks' agreement on stopping is part of the step
    if (profile_.logging()) {
      rec.step = global_step;
      rec.input_wait_us = step_profile::to_us(input_wait);
      rec.h2d_us = step_profile::to_us(h2d);
      profile_.add_phases(rec);
      rec.allreduce_us = en.replicated() ? en.replica_allreduce_us_ + step_profile::to_us(t4 - t3) : 0;
      rec.callbacks_us = options_.callbacks.empty() ? 0 : step_profile::to_us(t3 - t2 + begin_hooks);
      rec.memory_in_use_bytes = en.memory_stats().in_use_bytes;
    }
  }
  profile_.end_step(rec, global_step);
  return !en.stop_training_;
}

void FitLoop::end_epoch(std::int64_t epoch) {
  engine_.reduce_totals(totals_, "allreduce of the epoch's loss and metric sums");
  engine_.average_moving_statistics();  // before validation reads them
  const std::int64_t seen = totals_.seen;
  NNFIT_CHECK(seen > 0, InvalidArgument, "epoch ", epoch + 1, " had no training batches; the dataset is empty",
              " (a pipeline that is not repeated is consumed once per epoch)");
  if (feed_.prepare && epoch + 1 < options_.epochs && !engine_.stop_training_) feed_.prepare(epoch + 1);
  Logs logs = totals_.logs();
  for (const auto& [k, val] : engine_.validate(options_, epoch, validation_tuner_)) logs.push_back({"val_" + k, val});
  logs.push_back({"train_seconds", train_seconds_});
  logs.push_back({"samples_per_s", static_cast<double>(seen) / train_seconds_});
  logs.push_back({"input_wait_fraction", train_seconds_ > 0 ? wait_seconds_ / train_seconds_ : 0.0});
  logs.push_back({"memory_peak_bytes", static_cast<double>(engine_.memory_stats().peak_bytes)});
  if (engine_.loss_scaling()) {
    logs.push_back({"loss_scale", engine_.loss_scale_});
    logs.push_back({"skipped_steps", static_cast<double>(engine_.skipped_steps_)});
    engine_.skipped_steps_ = 0;
  }
  call_callbacks([&](Callback* cb) { cb->add_to_epoch_logs(logs); });
  history_.epochs.push_back(logs);
  profile_.end_epoch(epoch);
  call_callbacks([&](Callback* cb) { cb->on_epoch_end(epoch, logs); });
  if (engine_.replicated()) engine_.agree_on_callbacks();
}

void FitLoop::finish() {
  StepEngine& en = engine_;
  // A loss-scaled step's update, or a replicated one's, may still be queued on the device:
  // done before fit returns, so nothing fit enqueued outlives it.
  en.sync_device();
  // Keras's finalize_variable_values: with use_ema the variables end on their averages.
  // (Not when interrupted: a backup then keeps the training variables, to go on from.)
  if (en.optimizer_->options().use_ema && options_.epochs > options_.initial_epoch && !en.interrupted_) {
    const std::size_t avg = static_cast<std::size_t>(en.optimizer_->num_slots());
    en.sync_device();  // the last step's updates are done before the copies read them
    for (std::size_t k = 0; k < en.programs_->trainable.size(); ++k) {
      Tensor& w = en.programs_->trainable[k]->value;
      en.backend_->copy(w.raw(), en.programs_->slots[k][avg].raw(), w.nbytes(), CopyKind::device_to_device);
    }
  }
  call_callbacks([&](Callback* cb) { cb->on_train_end(); });
  history_.interrupted = en.interrupted_;
  history_.stopped_epoch = en.interrupted_epoch_;
  history_.stopped_step = en.interrupted_step_;
  profile_.finish();
}


// A fit with class or sample weights: the training programs take a sample-weight input
// for its length. throws: InvalidArgument for class weights on several outputs or with
// sample weights, or a negative weight.
struct StepEngine::WeightingScope {
  StepEngine& model;
  WeightingScope(StepEngine& m, const FitOptions& options, bool sample_weights) : model(m) {
    const bool classes = !options.class_weight.empty();
    NNFIT_CHECK(!(classes && sample_weights), InvalidArgument,
                "give class_weight or sample weights, not both (Keras refuses the pair too)");
    NNFIT_CHECK(!classes || m.model_.num_outputs() == 1, InvalidArgument,
                "class_weight needs a model with one output; this one has ", m.model_.num_outputs(),
                " (give sample weights instead)");
    NNFIT_CHECK(!classes || m.model_.num_targets() == 1, InvalidArgument,
                "class_weight reads the classes of the targets, and this model's compute_loss takes none (give "
                "sample weights instead)");
    for (const auto& [cls, w] : options.class_weight) {
      NNFIT_CHECK(cls >= 0 && w >= 0.0, InvalidArgument, "class_weight: class ", cls, " has weight ", w,
                  "; classes and weights must be non-negative");
    }
    m.set_sample_weighting(classes || sample_weights, options.class_weight);
  }
  ~WeightingScope() { model.set_sample_weighting(false, {}); }
  WeightingScope(const WeightingScope&) = delete;
  WeightingScope& operator=(const WeightingScope&) = delete;
};

History StepEngine::fit(const Tensor& x, const Tensor& y, const FitOptions& options) {
  return fit(std::vector<Tensor>{x}, std::vector<Tensor>{y}, options);
}

History StepEngine::fit(const std::vector<Tensor>& x_in, const std::vector<Tensor>& y_in, const FitOptions& options) {
  check_compiled();
  NNFIT_CHECK(options.batch_size > 0, InvalidArgument, "batch_size must be positive, got ", options.batch_size);
  NNFIT_CHECK(options.epochs >= 0, InvalidArgument, "epochs must be >= 0, got ", options.epochs);
  check_validation_options(options);
  PreparedData d = prepare_data(x_in, y_in, model_, model_.compile_options_, "no training samples");
  const std::int64_t n = d.n;
  const bool given_weights = options.sample_weight.defined();
  if (given_weights) check_sample_weights(options.sample_weight, n, "sample_weight");
  WeightingScope weighting(*this, options, given_weights);
  // The dataset of the first input and target fixes each epoch's order; every tensor is
  // gathered in that order (the input alone orders a model that takes no targets).
  data::InMemoryDataset ds(d.x[0], d.y.empty() ? d.x[0] : d.y[0]);

  const std::int64_t bs = std::min(options.batch_size, n);
  const std::int64_t steps = (n + bs - 1) / bs;
  const std::int64_t last = n - (steps - 1) * bs;
  std::vector<std::string> notes;
  OomScope scope(*this, options.on_oom, &notes, options.on_note);
  check_replicable(bs);
  choose_gradient_sums();
  // This rank's rows of a global batch (all of them in one process).
  auto local = [&](std::int64_t rows) {
    const auto [lo, hi] = replica_slice(rows);
    return std::max<std::int64_t>(hi - lo, 1);
  };
  // Plan everything before the first step: the full batch, then the remainder.
  entry_or_split(true, local(bs), "training", d.samples);
  agree_on_micro_batches(bs, d.samples);
  if (last != bs) entry_or_split(true, local(last), "training", d.samples);
  FitOptions o = options;
  o.batch_size = bs;
  if (options.validation_data) {
    const WeightedEvaluation weighting(*this, options.validation_sample_weight.defined());
    std::int64_t vn = options.validation_data->first.shape()[0];
    if (vn > 0) {
      std::int64_t vb = std::min(validation_batch_size(o), vn);
      const SampleShapes vs = fit_data::samples_of(prepare_all_inputs({options.validation_data->first}, model_.input_shapes()));
      entry_or_split(false, local(vb), "validation", vs);
      if (vn % vb) entry_or_split(false, local(vn % vb), "validation", vs);
    }
  }
  std::vector<std::int64_t> order;
  std::int64_t step = 0;
  EpochFeed feed;
  feed.pass_steps = steps;
  feed.begin = [&](std::int64_t epoch) {
    order = ds.batches(bs, options.shuffle, options.seed, epoch).order();
    step = 0;
  };
  feed.skip = [&](std::int64_t n) { step = std::min(steps, step + n); };
  feed.next = [&](std::int64_t& rows) -> Entry* {
    if (step == steps) return nullptr;
    const std::int64_t* idx = order.data() + step * bs;
    rows = ++step < steps ? bs : last;
    // Replicated: this rank's contiguous slice of the global batch (Note [Replica slices]).
    replica_global_rows_ = rows;
    const auto [lo, hi] = replica_slice(rows);
    idx += lo;
    rows = hi - lo;
    Entry& e = entry_or_split(true, rows, "training", d.samples);
    // Rows are gathered straight into the programs' input slots.
    for (std::size_t i = 0; i < d.x.size(); ++i) gather_rows(d.x[i], idx, rows, e.x_data(i));
    for (std::size_t i = 0; i < d.y.size(); ++i) gather_rows(d.y[i], idx, rows, e.y_data(i));
    if (e.sample_weight >= 0) {
      if (given_weights) gather_rows(options.sample_weight, idx, rows, e.sample_weight_data());
      stage_sample_weights(e, rows, given_weights ? e.sample_weight_data() : nullptr);
    }
    return &e;
  };
  History h = train_loop(o, steps, feed, nullptr);
  h.notes.insert(h.notes.begin(), notes.begin(), notes.end());
  return h;
}

History StepEngine::fit(const data::Dataset& train, const FitOptions& options) {
  check_compiled();
  NNFIT_CHECK(options.batch_size > 0, InvalidArgument, "batch_size must be positive, got ", options.batch_size);
  NNFIT_CHECK(options.epochs >= 0, InvalidArgument, "epochs must be >= 0, got ", options.epochs);
  NNFIT_CHECK(train.cardinality() != data::kInfiniteCardinality || options.steps_per_epoch > 0, InvalidArgument,
              "the training dataset is infinite (repeat() without a count) and no steps_per_epoch is given; give "
              "steps_per_epoch (fit's steps_per_epoch, or \"steps_per_epoch\" in the config's fit section), or drop the "
              "repeat");
  NNFIT_CHECK(!options.sample_weight.defined(), InvalidArgument,
              "sample_weight is for fit(x, y); a dataset brings its weights as a third component (x, y, sample_weight)");
  check_validation_options(options);
  const bool dataset_weights = carries_sample_weights(train);
  WeightingScope weighting(*this, options, dataset_weights);
  std::vector<std::string> notes;
  OomScope scope(*this, options.on_oom, &notes, options.on_note);
  check_replicable(options.batch_size);
  choose_gradient_sums();
  // Plan the expected batch size now (this rank's slice of it), so the memory footprint is
  // known before the first step; a partial last batch is planned when it first arrives.
  // With inputs known per batch, only where the pipeline fixes their shapes (Note [Shapes
  // known per batch]); else each shape's program is planned when its first batch comes.
  const auto [first_row, end_row] = replica_slice(options.batch_size);
  if (const std::optional<SampleShapes> samples = fixed_samples(train)) {
    entry_or_split(true, end_row - first_row, "training", *samples);
    agree_on_micro_batches(options.batch_size, *samples);
  }
  if (options.validation_dataset) {
    const WeightedEvaluation weighting(*this, carries_sample_weights(*options.validation_dataset));
    if (const std::optional<SampleShapes> samples = fixed_samples(*options.validation_dataset)) {
      entry_or_split(false, end_row - first_row, "validation", *samples);
    }
  }
  data::AutotuneOptions ao = options.autotune;
  if (ao.compute_threads == 0) ao.compute_threads = num_threads();
  data::Autotuner tuner(ao);
  std::unique_ptr<data::Iterator> it;
  std::optional<data::Element> current;  // the batch being trained on (the program reads it)
  std::int64_t index = 0;
  EpochFeed feed;
  bool prepared = false;  // the next pass's iterator already exists
  bool first_pass = true;
  auto start_pass = [&](std::int64_t epoch) {
    current.reset();
    it.reset();  // join the previous pass's threads before starting the next
    // A run resumed at epoch E starts with the pipeline's pass E (Note [Resumed passes]).
    std::optional<data::PassScope> pass;
    if (first_pass && epoch > 0) pass.emplace(static_cast<std::uint64_t>(epoch));
    first_pass = false;
    it = tuner.make_iterator(train);
  };
  feed.begin = [&](std::int64_t epoch) {
    if (!prepared) start_pass(epoch);
    prepared = false;
    index = 0;
  };
  feed.prepare = [&](std::int64_t next_epoch) {
    start_pass(next_epoch);
    prepared = true;
  };
  feed.skip = [&](std::int64_t n) {
    for (std::int64_t i = 0; i < n && it->next(); ++i) ++index;
  };
  feed.next = [&](std::int64_t& rows) -> Entry* {
    current = it->next();
    if (!current) return nullptr;
    if (replicated()) {
      // Every rank reads the same global batch and trains on its slice (Note [Replica slices]).
      const data::Element& whole = *current;
      replica_global_rows_ = whole.empty() || whole[0].shape().rank() == 0 ? 0 : whole[0].shape()[0];
      const auto [lo, hi] = replica_slice(replica_global_rows_);
      if (hi == lo) {
        ++index;
        rows = 0;
        return &entry_or_split(true, 0, "training", element_samples(whole, "training", index - 1));
      }
      data::Element slice;
      for (const Tensor& t : whole) slice.push_back(t.shape().rank() >= 1 ? t.slice_rows(lo, hi) : t);
      current = std::move(slice);
    }
    Entry& e = stage_element(*current, "training", index++);
    rows = (*current)[0].shape()[0];
    return &e;
  };
  const std::int64_t steps = train.cardinality() >= 0 ? train.cardinality() : 0;
  feed.pass_steps = steps;
  // The validation pipeline gets its own tuner: its waits are not the training loop's.
  std::optional<data::Autotuner> val_tuner;
  if (options.validation_dataset) {
    data::AutotuneOptions vao = ao;
    if (ao.log) vao.log = [log = ao.log](const std::string& line) { log("validation: " + line); };
    val_tuner.emplace(vao);
  }
  History h = train_loop(options, steps, feed, val_tuner ? &*val_tuner : nullptr);
  current.reset();
  it.reset();
  h.autotune_summary = tuner.summary();
  h.autotune_decisions = tuner.decisions();
  h.notes.insert(h.notes.begin(), notes.begin(), notes.end());
  if (val_tuner && !val_tuner->summary().empty()) {
    h.autotune_summary += (h.autotune_summary.empty() ? "" : "; ") + std::string("validation: ") + val_tuner->summary();
    for (const std::string& d : val_tuner->decisions()) h.autotune_decisions.push_back("validation: " + d);
  }
  return h;
}

}  // namespace nnfit
