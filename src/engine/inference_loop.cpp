// The engine's inference loops: evaluate (from tensors or a Dataset), fit's validation after
// an epoch, and predict. Each batch runs the inference program of its size, or, under
// on_oom="reduce_batch" when that does not fit, its micro-batches (micro_batches.cpp).
#include <algorithm>
#include <cstring>

#include "model/fit_data.h"
#include "engine/engine_types.h"
#include "nnfit/core/error.h"
#include "nnfit/data/in_memory_dataset.h"

namespace nnfit {

using namespace fit_data;

Logs StepEngine::evaluate(const Tensor& x, const Tensor& y, std::int64_t batch_size) {
  InferenceOptions o;
  o.batch_size = batch_size;
  return evaluate(x, y, o);
}

Logs StepEngine::evaluate(const Tensor& x, const Tensor& y, const InferenceOptions& options) {
  return evaluate(std::vector<Tensor>{x}, std::vector<Tensor>{y}, options);
}

Logs StepEngine::evaluate(const std::vector<Tensor>& x, const std::vector<Tensor>& y, const InferenceOptions& options) {
  std::vector<std::string> notes;
  OomScope scope(*this, options.on_oom, &notes, options.on_note);
  return evaluate_tensors(x, y, options.sample_weight, options.batch_size, options.steps, "evaluation",
                          options.callbacks);
}

Logs StepEngine::evaluate_tensors(const std::vector<Tensor>& x_in, const std::vector<Tensor>& y_in,
                             const Tensor& sample_weight, std::int64_t batch_size, std::int64_t steps,
                             const char* what, const std::vector<Callback*>& callbacks) {
  check_compiled();
  NNFIT_CHECK(batch_size > 0, InvalidArgument, "batch_size must be positive, got ", batch_size);
  NNFIT_CHECK(steps >= 0, InvalidArgument, "steps must be positive (or 0: all batches), got ", steps);
  PreparedData d = prepare_data(x_in, y_in, model_, model_.compile_options_, "no samples to evaluate");
  const std::int64_t n = d.n;
  const bool weighted = sample_weight.defined();
  if (weighted) {
    check_sample_weights(sample_weight, n, std::strcmp(what, "validation") == 0 ? "the validation sample weights"
                                                                                : "sample_weight");
  }
  const WeightedEvaluation weighting(*this, weighted);
  Totals totals(model_);
  const std::int64_t bs = std::min(batch_size, n);
  // Keras's steps: the first `steps` batches (all of them when the data ends first).
  const std::int64_t batches = (n + bs - 1) / bs;
  if (steps > batches) note_short_steps(what, steps, batches);
  const std::int64_t end = steps > 0 ? std::min(n, steps * bs) : n;
  std::vector<std::int64_t> order(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) order[static_cast<std::size_t>(i)] = i;
  StepContext ctx = step_context();
  ctx.training = false;
  // Inside a replicated fit each rank evaluates its slice of every batch, and the sums
  // are added across ranks (exact: sums and counts, not averages of averages).
  const bool shard = shard_validation_ && replicated();
  std::int64_t start = 0;
  const auto next = [&](Batch& b) {
    for (; start < end; start += bs) {
      const std::int64_t global_rows = std::min(bs, end - start);
      const auto [lo, hi] = shard ? replica_slice(global_rows) : std::pair<std::int64_t, std::int64_t>{0, global_rows};
      const std::int64_t rows = hi - lo;
      if (rows == 0) continue;
      Entry& e = entry_or_split(false, rows, what, d.samples);
      const std::int64_t* idx = order.data() + start + lo;
      for (std::size_t i = 0; i < d.x.size(); ++i) gather_rows(d.x[i], idx, rows, e.x_data(i));
      for (std::size_t i = 0; i < d.y.size() && e.y_data(i); ++i) gather_rows(d.y[i], idx, rows, e.y_data(i));
      if (e.sample_weight >= 0) gather_rows(sample_weight, idx, rows, e.sample_weight_data());
      b.e = &e;
      b.rows = rows;
      start += bs;
      return true;
    }
    return false;
  };
  return run_evaluation(next, totals, ctx, shard, callbacks);
}

Logs StepEngine::run_evaluation(const std::function<bool(Batch&)>& next, Totals& totals, const StepContext& ctx,
                           bool shard, const std::vector<Callback*>& callbacks) {
  for (Callback* cb : callbacks) {
    cb->set_model(&model_);
    cb->on_test_begin();
  }
  std::int64_t index = 0;  // the batch done
  const auto before = [&](std::int64_t i) {
    for (Callback* cb : callbacks) cb->on_test_batch_begin(i);
  };
  run_batches(next, [&](Batch& b) {
    if (b.element) {  // a dataset's element goes with the batch
      for (std::size_t i = 0; i < model_.num_inputs(); ++i) b.e->set_x(nullptr, i);
    }
    totals.add(*b.e, b.rows);
    if (callbacks.empty()) return;
    const Logs so_far = totals.logs();
    for (Callback* cb : callbacks) cb->on_test_batch_end(index, so_far);
    ++index;
  }, ctx, callbacks.empty() ? std::function<void(std::int64_t)>{} : before);
  if (shard) reduce_totals(totals, "allreduce of the validation sums");
  const Logs logs = totals.logs();
  for (Callback* cb : callbacks) cb->on_test_end(logs);
  return logs;
}

void StepEngine::note_short_steps(const char* what, std::int64_t steps, std::int64_t ran) {
  if (!notes_) return;
  notes_->push_back(std::string(what) + ": steps " + std::to_string(steps) + " asked for, but the data ended after " +
                    std::to_string(ran) + " batch(es); give the data at least steps batches (repeat() a dataset)");
  if (on_note_) on_note_(notes_->back());
}

Logs StepEngine::evaluate(const data::Dataset& data) { return evaluate(data, InferenceOptions{}); }

Logs StepEngine::evaluate(const data::Dataset& data, const InferenceOptions& options) {
  NNFIT_CHECK(!options.sample_weight.defined(), InvalidArgument,
              "sample_weight is for evaluate(x, y); a dataset brings its weights as a third component "
              "(x, y, sample_weight)");
  std::vector<std::string> notes;
  OomScope scope(*this, options.on_oom, &notes, options.on_note);
  return evaluate_dataset(data, nullptr, options.steps, "evaluation", options.callbacks);
}

Logs StepEngine::evaluate_dataset(const data::Dataset& data, data::Autotuner* tuner, std::int64_t steps, const char* what,
                             const std::vector<Callback*>& callbacks) {
  check_compiled();
  NNFIT_CHECK(steps >= 0, InvalidArgument, "steps must be positive (or 0: all batches), got ", steps);
  NNFIT_CHECK(steps > 0 || data.cardinality() != data::kInfiniteCardinality, InvalidArgument, "the ", what,
              " dataset repeats forever (repeat() without a count) and no steps are given; give steps (",
              std::strcmp(what, "validation") == 0 ? "fit's validation_steps" : "evaluate's steps",
              "), or drop the repeat");
  // A third component (x, y, sample_weight): the loss weighs each sample by it.
  const WeightedEvaluation weighting(*this, carries_sample_weights(data));
  Totals totals(model_);
  StepContext ctx = step_context();
  ctx.training = false;
  std::int64_t index = 0;
  std::unique_ptr<data::Iterator> it;
  std::optional<data::Autotuner> own;
  if (!tuner) tuner = &own.emplace();
  it = tuner->make_iterator(data);
  const bool shard = shard_validation_ && replicated();  // as in evaluate_tensors
  bool ended = false;  // the data ended before `steps` batches
  const auto next = [&](Batch& b) {
    while (steps == 0 || index < steps) {
      std::optional<data::Element> el = it->next();
      if (!el) {
        ended = steps > 0;
        return false;
      }
      if (shard && !el->empty() && (*el)[0].shape().rank() >= 1) {
        const auto [lo, hi] = replica_slice((*el)[0].shape()[0]);
        if (hi == lo) {
          ++index;
          continue;
        }
        data::Element slice;
        for (const Tensor& t : *el) slice.push_back(t.shape().rank() >= 1 ? t.slice_rows(lo, hi) : t);
        el = std::move(slice);
      }
      b.element = std::move(el);  // the entry may read its inputs there until the batch is staged and run
      b.e = &stage_element(*b.element, what, index++);
      b.rows = (*b.element)[0].shape()[0];
      return true;
    }
    return false;
  };
  const Logs logs = run_evaluation(next, totals, ctx, shard, callbacks);
  if (ended) note_short_steps(what, steps, index);
  NNFIT_CHECK(totals.seen > 0, InvalidArgument, "no samples to evaluate: the dataset is empty");
  return logs;
}

Logs StepEngine::validate(const FitOptions& options, std::int64_t epoch, data::Autotuner* tuner) {
  // Keras's _should_eval: epochs counted from 1.
  const std::int64_t number = epoch + 1;
  const auto& listed = options.validation_epochs;
  if (listed.empty() ? number % options.validation_freq != 0
                     : std::find(listed.begin(), listed.end(), number) == listed.end()) {
    return {};
  }
  // Under fit's OomScope: a validation batch that does not fit is split like a training one.
  if (options.validation_dataset) {
    return evaluate_dataset(*options.validation_dataset, tuner, options.validation_steps, "validation",
                            options.callbacks);
  }
  if (options.validation_data) {
    return evaluate_tensors({options.validation_data->first}, {options.validation_data->second},
                            options.validation_sample_weight, validation_batch_size(options), options.validation_steps,
                            "validation", options.callbacks);
  }
  return {};
}

Tensor StepEngine::predict(const Tensor& x, std::int64_t batch_size) {
  InferenceOptions o;
  o.batch_size = batch_size;
  return predict(x, o);
}

Tensor StepEngine::predict(const Tensor& x, const InferenceOptions& options) {
  NNFIT_CHECK(model_.num_outputs() == 1, InvalidArgument, "model '", model_.name(), "' has ", model_.num_outputs(),
              " outputs; use the predict overload that returns one tensor per output");
  return predict(std::vector<Tensor>{x}, options)[0];
}

std::vector<Tensor> StepEngine::predict(const std::vector<Tensor>& x_in, const InferenceOptions& options) {
  check_built();
  const std::int64_t batch_size = options.batch_size;
  NNFIT_CHECK(batch_size > 0, InvalidArgument, "batch_size must be positive, got ", batch_size);
  NNFIT_CHECK(options.steps >= 0, InvalidArgument, "steps must be positive (or 0: all batches), got ", options.steps);
  NNFIT_CHECK(!options.sample_weight.defined(), InvalidArgument,
              "predict takes no sample_weight (it computes no loss); give it to evaluate");
  std::vector<std::string> notes;
  OomScope scope(*this, options.on_oom, &notes, options.on_note);
  struct TrainingForward {  // InferenceOptions::training for this call's programs
    StepEngine& engine;
    bool was;
    ~TrainingForward() { engine.training_forward_ = was; }
  } training_forward{*this, training_forward_};
  training_forward_ = options.training;
  const std::vector<Tensor> x = prepare_all_inputs(x_in, model_.input_shapes());
  const std::vector<Shape> samples = fit_data::samples_of(x);
  const std::int64_t all = x[0].shape()[0];
  // Keras's steps: the rows of the first `steps` batches.
  const std::int64_t batches = (all + batch_size - 1) / batch_size;
  if (options.steps > batches) note_short_steps("prediction", options.steps, batches);
  const std::int64_t n = options.steps > 0 ? std::min(all, options.steps * batch_size) : all;
  std::vector<Tensor> result;
  std::vector<std::size_t> o_row;
  for (const Shape& out : model_.output_shapes_for(samples)) {
    std::vector<std::int64_t> od{n};
    od.insert(od.end(), out.dims().begin(), out.dims().end());
    result.push_back(Tensor::zeros(Shape(od), DType::f32));
    o_row.push_back(static_cast<std::size_t>(out.numel()) * sizeof(float));
  }
  StepContext ctx = step_context();
  ctx.training = false;
  if (options.training) {  // random layers draw anew at each such call, as Keras's do per call
    ctx.seed = seed();
    ctx.step = static_cast<std::int64_t>((std::uint64_t{1} << 62) + training_forward_calls_++);
  }
  for (Callback* cb : options.callbacks) {
    cb->set_model(&model_);
    cb->on_predict_begin();
  }
  std::int64_t start = 0, index = 0;
  const auto next = [&](Batch& b) {
    if (start >= n) return false;
    const std::int64_t rows = std::min(batch_size, n - start);
    Entry& e = entry_or_split(false, rows, "prediction", samples);
    for (std::size_t i = 0; i < x.size(); ++i) {
      const std::size_t x_row = all ? x[i].nbytes() / static_cast<std::size_t>(all) : 0;
      std::memcpy(e.x_data(i), static_cast<const char*>(x[i].raw()) + static_cast<std::size_t>(start) * x_row,
                  static_cast<std::size_t>(rows) * x_row);
    }
    for (std::size_t i = 0; i < e.ys.size(); ++i) {
      if (void* y = e.y_data(i)) std::memset(y, 0, e.program.graph().desc(e.ys[i]).bytes());
    }
    b.e = &e;
    b.rows = rows;
    b.start = start;
    start += batch_size;
    return true;
  };
  const auto before = [&](std::int64_t i) {
    for (Callback* cb : options.callbacks) cb->on_predict_batch_begin(i);
  };
  run_batches(next, [&](Batch& b) {
    for (std::size_t i = 0; i < result.size(); ++i) {
      std::memcpy(static_cast<char*>(result[i].raw()) + static_cast<std::size_t>(b.start) * o_row[i],
                  b.e->pred_data(i), static_cast<std::size_t>(b.rows) * o_row[i]);
    }
    if (options.callbacks.empty()) return;
    std::vector<Tensor> outputs;
    for (const Tensor& r : result) outputs.push_back(r.slice_rows(b.start, b.start + b.rows));
    for (Callback* cb : options.callbacks) cb->on_predict_batch_end(index, outputs);
    ++index;
  }, ctx, options.callbacks.empty() ? std::function<void(std::int64_t)>{} : before);
  for (Callback* cb : options.callbacks) cb->on_predict_end();
  return result;
}

// As fit's loop (Note [Input double buffer]), without the training: on a device with queues
// the next batch is taken and staged while the device runs the current one, whose results
// are read after; a batch staged ahead and not run (an error) is dropped.
void StepEngine::run_batches(const std::function<bool(Batch&)>& next, const std::function<void(Batch&)>& done,
                        const StepContext& ctx, const std::function<void(std::int64_t)>& before) {
  std::int64_t index = 0;
  Batch cur, ahead;
  bool have = next(cur), took = false, ahead_ok = false;
  const std::function<void()> take = [&] {
    took = true;
    ahead_ok = next(ahead);
    if (ahead_ok && ahead.e->staged && !ahead.e->split) ahead.e->stage(*backend_);
  };
  const LookaheadScope lookahead_scope{*this};
  while (have) {
    took = false;
    if (before) before(index++);
    if (cur.e->staged && cur.e->staged->ring && !cur.e->split) lookahead_ = &take;
    run_entry(*cur.e, cur.rows, ctx);
    lookahead_ = nullptr;
    done(cur);
    if (took) {
      std::swap(cur, ahead);
      have = ahead_ok;
    } else {
      have = next(cur);
    }
  }
}

}  // namespace nnfit
