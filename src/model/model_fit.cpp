// Model's training loop: fit (from tensors or from a Dataset). Each step stages a
// batch into the inputs of the program planned for its size and runs it; the programs
// were planned before the first step where the batch sizes are known. Inference is in
// model_predict.cpp, micro-batch accumulation in model_accumulate.cpp.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>

#include "model/fit_data.h"
#include "model/model_impl.h"
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

History Model::train_loop(const FitOptions& options, std::int64_t steps_per_epoch, EpochFeed& whole_passes,
                               data::Autotuner* validation_tuner) {
  NNFIT_CHECK(options.steps_per_epoch >= 0, InvalidArgument, "steps_per_epoch must be positive (or 0: one pass), got ",
              options.steps_per_epoch);
  std::vector<std::string> step_notes;
  EpochFeed limited;
  if (options.steps_per_epoch > 0) limited = limit_steps(whole_passes, options.steps_per_epoch, &step_notes, options.on_note);
  EpochFeed& feed = options.steps_per_epoch > 0 ? limited : whole_passes;
  if (options.steps_per_epoch > 0) steps_per_epoch = options.steps_per_epoch;
  NNFIT_CHECK(options.profile_steps.empty() || !options.log_dir.empty(), InvalidArgument,
              "profile_steps \"", options.profile_steps, "\" needs a log_dir to write the trace to");
  Totals totals(*this);
  const bool kernel_times = env_flag_enabled("NNFIT_KERNEL_TIMES");
  const std::int64_t timed_batch = options.batch_size;
  if (kernel_times) entry(true, timed_batch).program.set_timing(true, timing_wait());
  std::int64_t timed_steps = 0;

  // Profiling (Note [Step breakdown]): with a log dir every step's parts go to steps.jsonl
  // and the training programs time their kernels; profile_steps brackets a trace session.
  const bool log_steps = !options.log_dir.empty();
  std::optional<profile::StepRange> trace_steps;
  if (!options.profile_steps.empty()) trace_steps = profile::parse_step_range(options.profile_steps);
  std::unique_ptr<profile::StepLogWriter> step_log;
  ProfileFiles files;
  if (log_steps) {
    files = ProfileFiles::open(options.log_dir);
    step_log = std::make_unique<profile::StepLogWriter>(files.steps, /*append=*/iterations_ > 0);
  }
  std::vector<TimedProgram> timed;  // the training programs whose kernels ops.json sums
  std::int64_t logged_steps = 0;
  // The programs the current step runs (one, or a split step's micro-batch programs and
  // its update-only one) and whether each is all update; each is timed from its first run.
  std::vector<std::pair<Program*, bool>> step_programs;
  BeforeRun time_program;  // set with a log dir
  if (log_steps) time_program = [&](Program& prog, bool update_only) {
    auto it = std::find_if(timed.begin(), timed.end(), [&](const TimedProgram& tp) { return tp.program == &prog; });
    if (it == timed.end()) {
      const bool ours = !prog.timing();
      if (ours) prog.set_timing(true, timing_wait());
      timed.push_back({&prog, 0, ours, update_only});
      it = timed.end() - 1;
    }
    ++it->runs;
    if (std::none_of(step_programs.begin(), step_programs.end(), [&](const auto& sp) { return sp.first == &prog; })) {
      step_programs.emplace_back(&prog, update_only);
    }
  };
  bool tracing = false;             // our trace session is running
  auto finish_trace = [&] {
    if (!tracing) return;
    tracing = false;
    trace::stop();
    // The Chrome trace (Perfetto, chrome://tracing, profile plugin <= 2.19) and beside it
    // the XSpace current profile plugins (XProf) read.
    const trace::Collected collected = trace::collect();
    const std::string chrome = profile::write_chrome_trace(collected, options.log_dir);
    profile::write_xplane(collected, std::filesystem::path(chrome).parent_path().string());
  };
  // When training throws (a NaN loss, bad data), the session and the kernel timers must
  // not outlive this fit: a later fit or evaluate would pay for them.
  struct ProfileCleanup {
    bool& tracing;
    std::vector<TimedProgram>& timed;
    ~ProfileCleanup() {
      if (tracing) trace::stop();
      for (const TimedProgram& tp : timed) {
        if (tp.ours) tp.program->set_timing(false);
      }
    }
  } cleanup{tracing, timed};

  auto call_callbacks = [&](auto&& hook) {
    for (std::size_t i = 0; i < options.callbacks.size(); ++i) {
      TraceRange r("callback", "callback", static_cast<std::int64_t>(i));
      hook(options.callbacks[i]);
    }
  };
  NNFIT_CHECK(options.initial_epoch >= 0 && options.initial_epoch <= options.epochs, InvalidArgument,
              "initial_epoch ", options.initial_epoch, " must lie in [0, epochs = ", options.epochs, "]");
  stop_training_ = false;
  interrupted_ = 0;
  resume_.reset();
  fit_callbacks_ = options.callbacks;
  totals_ = &totals;
  struct FitScope {
    Model& m;
    ~FitScope() {
      m.fit_callbacks_.clear();
      m.totals_ = nullptr;
      m.resume_.reset();
    }
  } fit_scope{*this};
  for (Callback* cb : options.callbacks) cb->set_model(this);
  call_callbacks([&](Callback* cb) { cb->on_train_begin(options.epochs, steps_per_epoch); });
  // A callback may have restored a backup (BackupAndRestore): start where it ended.
  std::int64_t start_epoch = options.initial_epoch, skip = 0;
  std::string progress;
  if (resume_) {
    start_epoch = resume_->epoch;
    skip = resume_->step;
    progress = resume_->progress;
    NNFIT_CHECK(start_epoch <= options.epochs, InvalidArgument, "the backup is at epoch ", start_epoch,
                ", past the ", options.epochs, " epochs this run trains; raise epochs or start afresh");
  }
  // Replicated: every rank starts from rank 0's weights and resume point; the epoch's
  // sums a backup carried are rank 0's alone (the ranks' sums are added at epoch end).
  struct ShardScope {
    bool& flag;
    ~ShardScope() { flag = false; }
  } shard_scope{shard_validation_};
  if (replicated()) {
    broadcast_state(start_epoch, skip);
    if (comm_->rank() != 0) progress.clear();
    shard_validation_ = true;
  }
  History history;
  history.initial_epoch = fit_initial_epoch_ = start_epoch;
  history.initial_step = fit_initial_step_ = skip;
  StepContext ctx = step_context();
  ctx.seed = seed_;
  ctx.training = true;
  fit_skipped_steps_ = 0;
  // FitOptions::interrupt, looked at on each step boundary: set, training stops there.
  // Data-parallel: the signal the ranks agreed on at the last step (agree_on_callbacks), so
  // every rank stops at the same step (mpirun forwards a Ctrl-C to each at its own moment).
  fit_interrupt_ = options.interrupt;
  agreed_interrupt_ = 0;
  const auto interrupt_at = [&](std::int64_t epoch, std::int64_t done) {
    const int sig = replicated() ? agreed_interrupt_ : options.interrupt ? options.interrupt->load() : 0;
    if (sig == 0) return false;
    interrupted_ = sig;
    interrupted_epoch_ = epoch;
    interrupted_step_ = done;
    stop_training_ = true;
    return true;
  };
  for (std::int64_t epoch = start_epoch; epoch < options.epochs && !stop_training_; ++epoch) {
    if (interrupt_at(epoch, skip)) break;
    call_callbacks([&](Callback* cb) { cb->on_epoch_begin(epoch); });
    totals.reset();
    feed.begin(epoch);
    const std::int64_t first_step = skip;
    if (skip > 0) {
      NNFIT_CHECK(feed.skip, InvalidArgument, "internal: this feed cannot resume mid-epoch");
      feed.skip(skip);
      if (!progress.empty()) totals.restore(progress);
      skip = 0;
    }
    double train_seconds = 0, wait_seconds = 0;
    Logs batch_logs;
    // The batch the last step's lookahead took (Note [Input double buffer]); a batch left
    // here when the epoch stops early is dropped.
    struct Ahead {
      Entry* e = nullptr;
      std::int64_t rows = 0;
      double input_wait = 0, h2d = 0;
      bool taken = false;
    } ahead;
    // The lookahead run_program calls (Model::lookahead_): batch next_step taken and staged.
    std::int64_t next_step = 0;
    const std::function<void()> take_next = [&] {
      const double a0 = now_s();
      {
        TraceRange wait_range("input_wait", "fit", next_step);
        ahead.e = feed.next(ahead.rows);
      }
      const double a1 = now_s();
      if (ahead.e && ahead.e->staged && !ahead.e->split) ahead.e->stage(*backend_);
      ahead.input_wait = a1 - a0;
      ahead.h2d = now_s() - a1;
      ahead.taken = true;
    };
    const LookaheadScope lookahead_scope{*this};
    for (std::int64_t s = first_step;; ++s) {
      if (s > first_step && interrupt_at(epoch, s)) break;
      const std::int64_t global_step = iterations_ + 1;
      if (trace_steps && global_step == trace_steps->first && !trace::running()) {
        trace::start();
        tracing = true;
      }
      profile::StepRecord rec;
      Entry* e = nullptr;
      std::int64_t rows = 0;
      {
        TraceRange step_range("train_step", "fit", global_step);
        const double t0 = now_s();
        double input_wait = 0, h2d = 0;
        if (ahead.taken) {  // taken and staged while the last step ran
          e = ahead.e;
          rows = ahead.rows;
          input_wait = ahead.input_wait;
          h2d = ahead.h2d;
          ahead = Ahead{};
        } else {
          {
            TraceRange wait_range("input_wait", "fit", global_step);
            e = feed.next(rows);
          }
          input_wait = now_s() - t0;
          if (e && e->staged && !e->split) {
            const double h0 = now_s();
            e->stage(*backend_);
            h2d = now_s() - h0;
          }
        }
        wait_seconds += input_wait;
        if (!e) break;
        // Keras's on_train_batch_begin, once the batch is here; its time is the callbacks'.
        double begin_hooks = 0;
        if (!options.callbacks.empty()) {
          const double b0 = now_s();
          call_callbacks([&](Callback* cb) { cb->on_train_batch_begin(s); });
          begin_hooks = now_s() - b0;
        }
        // On a device with queues, the next batch is taken and staged while this step runs
        // (Note [Input double buffer]).
        if (e->staged && e->staged->ring && !e->split &&
            (e->mode == Mode::train || e->mode == Mode::scaled || e->mode == Mode::grads)) {
          next_step = global_step + 1;
          lookahead_ = &take_next;
        }
        ctx.step = iterations_;
        // The random ops' streams are keyed by (seed, step): after a skipped loss-scaled step
        // (iterations_ not advanced) the retry draws afresh, as Keras's seed generator does.
        ctx.seed = seed_ + static_cast<std::uint64_t>(fit_skipped_steps_) * 0x9e3779b97f4a7c15ull;
        ctx.learning_rate = static_cast<float>(optimizer_->learning_rate(iterations_));
        step_programs.clear();
        // A loss-scaled step with non-finite gradients is skipped: the optimizer's
        // iterations (and the learning rate schedule) do not advance, as in Keras.
        const bool stepped = run_entry(*e, rows, ctx, time_program);
        lookahead_ = nullptr;
        if (stepped) ++iterations_;
        if (rows == timed_batch && !e->split) ++timed_steps;
        train_seconds += now_s() - t0 - begin_hooks;
        const float loss = rows > 0 ? e->loss_value() : 0.0f;  // a replica may have no rows
        totals.add(*e, rows);
        const double t2 = now_s();
        if (!options.callbacks.empty()) {
          batch_logs = totals.logs();
          call_callbacks([&](Callback* cb) { cb->on_train_batch_end(s, batch_logs); });
        }
        // A callback (TerminateOnNaN) may end training on a bad loss; otherwise it is an error.
        NNFIT_CHECK(std::isfinite(loss) || stop_training_, InvalidArgument, "the loss became ", loss, " at epoch ",
                    epoch + 1, ", step ", s + 1, "; lower the learning rate or check the data for NaN/inf");
        const double t3 = now_s();
        if (replicated()) agree_on_callbacks();  // every rank stops at the same step
        const double t4 = now_s();
        train_seconds += t4 - t3;  // the ranks' agreement on stopping is part of the step
        if (log_steps) {
          rec.step = global_step;
          rec.input_wait_us = to_us(input_wait);
          rec.h2d_us = to_us(h2d);
          std::array<std::int64_t, kNumStepPhases> ns{};
          for (const auto& [prog, update_only] : step_programs) {
            const auto phase_ns = prog->take_phase_ns();
            for (std::size_t i = 0; i < kNumStepPhases; ++i) {
              ns[update_only ? static_cast<std::size_t>(StepPhase::update) : i] += phase_ns[i];
            }
          }
          rec.forward_us = (ns[0] + 500) / 1000;
          rec.backward_us = (ns[1] + 500) / 1000;
          rec.update_us = (ns[2] + 500) / 1000;
          rec.allreduce_us = replicated() ? replica_allreduce_us_ + to_us(t4 - t3) : 0;
          rec.callbacks_us = options.callbacks.empty() ? 0 : to_us(t3 - t2 + begin_hooks);
          rec.memory_in_use_bytes = memory_stats().in_use_bytes;
          ++logged_steps;
        }
      }
      if (log_steps) step_log->add(rec);
      if (tracing && global_step >= trace_steps->last) finish_trace();
      if (stop_training_) break;
    }
    // A batch staged ahead of a step that did not come (a stop or an interrupt mid-epoch)
    // goes before anything else runs: validation's batches are next on the ring.
    drop_lookahead();
    if (interrupted_) {  // mid-epoch: no validation, no epoch end; on_train_end below
      if (log_steps) step_log->flush();
      break;
    }
    reduce_totals(totals, "allreduce of the epoch's loss and metric sums");
    average_moving_statistics();  // before validation reads them
    const std::int64_t seen = totals.seen;
    NNFIT_CHECK(seen > 0, InvalidArgument, "epoch ", epoch + 1, " had no training batches; the dataset is empty",
                " (a pipeline that is not repeated is consumed once per epoch)");
    if (feed.prepare && epoch + 1 < options.epochs && !stop_training_) feed.prepare(epoch + 1);
    Logs logs = totals.logs();
    for (const auto& [k, val] : validate(options, epoch, validation_tuner)) logs.push_back({"val_" + k, val});
    logs.push_back({"train_seconds", train_seconds});
    logs.push_back({"samples_per_s", static_cast<double>(seen) / train_seconds});
    logs.push_back({"input_wait_fraction", train_seconds > 0 ? wait_seconds / train_seconds : 0.0});
    logs.push_back({"memory_peak_bytes", static_cast<double>(memory_stats().peak_bytes)});
    if (loss_scaling()) {
      logs.push_back({"loss_scale", loss_scale_});
      logs.push_back({"skipped_steps", static_cast<double>(skipped_steps_)});
      skipped_steps_ = 0;
    }
    history.epochs.push_back(logs);
    if (log_steps) {
      step_log->flush();
      write_ops_json(files.ops, timed, logged_steps, num_threads(), device().to_string());
      if (!options.pipeline_stages.empty()) write_pipeline_json(files.pipeline, options.pipeline_stages, epoch);
    }
    call_callbacks([&](Callback* cb) { cb->on_epoch_end(epoch, logs); });
    if (replicated()) agree_on_callbacks();
  }
  // A loss-scaled step's update, or a replicated one's, may still be queued on the device:
  // done before fit returns, so nothing fit enqueued outlives it.
  sync_device();
  // Keras's finalize_variable_values: with use_ema the variables end on their averages.
  // (Not when interrupted: a backup then keeps the training variables, to go on from.)
  if (optimizer_->options().use_ema && options.epochs > options.initial_epoch && !interrupted_) {
    const std::size_t avg = static_cast<std::size_t>(optimizer_->num_slots());
    sync_device();  // the last step's updates are done before the copies read them
    for (std::size_t k = 0; k < programs_->trainable.size(); ++k) {
      Tensor& w = programs_->trainable[k]->value;
      backend_->copy(w.raw(), programs_->slots[k][avg].raw(), w.nbytes(), CopyKind::device_to_device);
    }
  }
  call_callbacks([&](Callback* cb) { cb->on_train_end(); });
  history.interrupted = interrupted_;
  history.stopped_epoch = interrupted_epoch_;
  history.stopped_step = interrupted_step_;
  finish_trace();  // a range past the last step ends with training
  if (kernel_times) {
    Program& prog = entry(true, timed_batch).program;
    double total = 0;
    for (double t : prog.step_seconds()) total += t;
    std::fprintf(stderr, "nnfit: kernel times over %lld steps of batch %lld (%.3f ms/step):\n",
                 static_cast<long long>(timed_steps), static_cast<long long>(timed_batch),
                 total * 1e3 / static_cast<double>(std::max<std::int64_t>(1, timed_steps)));
    for (std::size_t i = 0; i < prog.steps().size(); ++i) {
      const PlannedStep& st = prog.steps()[i];
      std::fprintf(stderr, "  %6.1f%%  %-45s %s\n", 100.0 * prog.step_seconds()[i] / std::max(total, 1e-12),
                   prog.graph().node(st.node).name.c_str(), st.impl.c_str());
    }
    prog.set_timing(false);
  }
  history.notes = std::move(step_notes);
  return history;
}


// A fit with class or sample weights: the training programs take a sample-weight input
// for its length. throws: InvalidArgument for class weights on several outputs or with
// sample weights, or a negative weight.
struct Model::WeightingScope {
  Model& model;
  WeightingScope(Model& m, const FitOptions& options, bool sample_weights) : model(m) {
    const bool classes = !options.class_weight.empty();
    NNFIT_CHECK(!(classes && sample_weights), InvalidArgument,
                "give class_weight or sample weights, not both (Keras refuses the pair too)");
    NNFIT_CHECK(!classes || m.num_outputs() == 1, InvalidArgument,
                "class_weight needs a model with one output; this one has ", m.num_outputs(),
                " (give sample weights instead)");
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

History Model::fit(const Tensor& x, const Tensor& y, const FitOptions& options) {
  return fit(std::vector<Tensor>{x}, std::vector<Tensor>{y}, options);
}

History Model::fit(const std::vector<Tensor>& x_in, const std::vector<Tensor>& y_in, const FitOptions& options) {
  check_compiled();
  NNFIT_CHECK(options.batch_size > 0, InvalidArgument, "batch_size must be positive, got ", options.batch_size);
  NNFIT_CHECK(options.epochs >= 0, InvalidArgument, "epochs must be >= 0, got ", options.epochs);
  check_validation_options(options);
  PreparedData d = prepare_data(x_in, y_in, input_shapes(), output_shapes(), compile_options_, "no training samples");
  const std::int64_t n = d.n;
  const bool given_weights = options.sample_weight.defined();
  if (given_weights) check_sample_weights(options.sample_weight, n, "sample_weight");
  WeightingScope weighting(*this, options, given_weights);
  // The dataset of the first input and target fixes each epoch's order; every tensor is
  // gathered in that order.
  data::InMemoryDataset ds(d.x[0], d.y[0]);

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
  entry_or_split(true, local(bs), "training");
  agree_on_micro_batches(bs);
  if (last != bs) entry_or_split(true, local(last), "training");
  FitOptions o = options;
  o.batch_size = bs;
  if (options.validation_data) {
    const WeightedEvaluation weighting(*this, options.validation_sample_weight.defined());
    std::int64_t vn = options.validation_data->first.shape()[0];
    if (vn > 0) {
      std::int64_t vb = std::min(validation_batch_size(o), vn);
      entry_or_split(false, local(vb), "validation");
      if (vn % vb) entry_or_split(false, local(vn % vb), "validation");
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
    Entry& e = entry_or_split(true, rows, "training");
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

History Model::fit(const data::Dataset& train, const FitOptions& options) {
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
  const auto [first_row, end_row] = replica_slice(options.batch_size);
  entry_or_split(true, end_row - first_row, "training");
  agree_on_micro_batches(options.batch_size);
  if (options.validation_dataset) {
    const WeightedEvaluation weighting(*this, carries_sample_weights(*options.validation_dataset));
    entry_or_split(false, end_row - first_row, "validation");
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
        return &entry_or_split(true, 0, "training");
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
