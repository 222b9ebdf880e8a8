// Model's inference loops: evaluate (from tensors or a Dataset) and predict. Each
// batch runs the inference program of its size, or, under on_oom="reduce_batch" when that
// does not fit, its micro-batches (model_accumulate.cpp).
#include <cstring>

#include "model/fit_data.h"
#include "model/model_impl.h"
#include "nnfit/core/error.h"
#include "nnfit/data/in_memory_dataset.h"

namespace nnfit {

using namespace fit_data;

Logs Model::evaluate(const Tensor& x, const Tensor& y, std::int64_t batch_size) {
  InferenceOptions o;
  o.batch_size = batch_size;
  return evaluate(x, y, o);
}

Logs Model::evaluate(const Tensor& x, const Tensor& y, const InferenceOptions& options) {
  return evaluate(std::vector<Tensor>{x}, std::vector<Tensor>{y}, options);
}

Logs Model::evaluate(const std::vector<Tensor>& x, const std::vector<Tensor>& y, const InferenceOptions& options) {
  std::vector<std::string> notes;
  OomScope scope(*this, options.on_oom, &notes, options.on_note);
  return evaluate_tensors(x, y, options.batch_size, "evaluation");
}

Logs Model::evaluate_tensors(const std::vector<Tensor>& x_in, const std::vector<Tensor>& y_in,
                             std::int64_t batch_size, const char* what) {
  check_compiled();
  NNFIT_CHECK(batch_size > 0, InvalidArgument, "batch_size must be positive, got ", batch_size);
  PreparedData d = prepare_data(x_in, y_in, input_shapes(), output_shapes(), compile_options_, "no samples to evaluate");
  const std::int64_t n = d.n;
  Totals totals(*this);
  const std::int64_t bs = std::min(batch_size, n);
  std::vector<std::int64_t> order(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) order[static_cast<std::size_t>(i)] = i;
  StepContext ctx = step_context();
  ctx.training = false;
  // Inside a replicated fit each rank evaluates its slice of every batch, and the sums
  // are added across ranks (exact: sums and counts, not averages of averages).
  const bool shard = shard_validation_ && replicated();
  std::int64_t start = 0;
  const auto next = [&](Batch& b) {
    for (; start < n; start += bs) {
      const std::int64_t global_rows = std::min(bs, n - start);
      const auto [lo, hi] = shard ? replica_slice(global_rows) : std::pair<std::int64_t, std::int64_t>{0, global_rows};
      const std::int64_t rows = hi - lo;
      if (rows == 0) continue;
      Entry& e = entry_or_split(false, rows, what);
      const std::int64_t* idx = order.data() + start + lo;
      for (std::size_t i = 0; i < d.x.size(); ++i) gather_rows(d.x[i], idx, rows, e.x_data(i));
      for (std::size_t i = 0; i < d.y.size() && e.y_data(i); ++i) gather_rows(d.y[i], idx, rows, e.y_data(i));
      b.e = &e;
      b.rows = rows;
      start += bs;
      return true;
    }
    return false;
  };
  run_batches(next, [&](Batch& b) { totals.add(*b.e, b.rows); }, ctx);
  if (shard) reduce_totals(totals, "allreduce of the validation sums");
  return totals.logs();
}

Logs Model::evaluate(const data::Dataset& data) { return evaluate(data, InferenceOptions{}); }

Logs Model::evaluate(const data::Dataset& data, const InferenceOptions& options) {
  std::vector<std::string> notes;
  OomScope scope(*this, options.on_oom, &notes, options.on_note);
  return evaluate_dataset(data, nullptr, "evaluation");
}

Logs Model::evaluate_dataset(const data::Dataset& data, data::Autotuner* tuner, const char* what) {
  check_compiled();
  Totals totals(*this);
  StepContext ctx = step_context();
  ctx.training = false;
  std::int64_t index = 0;
  std::unique_ptr<data::Iterator> it;
  std::optional<data::Autotuner> own;
  if (!tuner) tuner = &own.emplace();
  it = tuner->make_iterator(data);
  const bool shard = shard_validation_ && replicated();  // as in evaluate_tensors
  const auto next = [&](Batch& b) {
    while (std::optional<data::Element> el = it->next()) {
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
  run_batches(next, [&](Batch& b) {
    for (std::size_t i = 0; i < num_inputs(); ++i) b.e->set_x(nullptr, i);  // its element goes with the batch
    totals.add(*b.e, b.rows);
  }, ctx);
  if (shard) reduce_totals(totals, "allreduce of the validation sums");
  NNFIT_CHECK(totals.seen > 0, InvalidArgument, "no samples to evaluate: the dataset is empty");
  return totals.logs();
}

Tensor Model::predict(const Tensor& x, std::int64_t batch_size) {
  InferenceOptions o;
  o.batch_size = batch_size;
  return predict(x, o);
}

Tensor Model::predict(const Tensor& x, const InferenceOptions& options) {
  NNFIT_CHECK(num_outputs() == 1, InvalidArgument, "model '", name(), "' has ", num_outputs(),
              " outputs; use the predict overload that returns one tensor per output");
  return predict(std::vector<Tensor>{x}, options)[0];
}

std::vector<Tensor> Model::predict(const std::vector<Tensor>& x_in, const InferenceOptions& options) {
  check_built();
  const std::int64_t batch_size = options.batch_size;
  NNFIT_CHECK(batch_size > 0, InvalidArgument, "batch_size must be positive, got ", batch_size);
  std::vector<std::string> notes;
  OomScope scope(*this, options.on_oom, &notes, options.on_note);
  const std::vector<Tensor> x = prepare_all_inputs(x_in, input_shapes());
  const std::int64_t n = x[0].shape()[0];
  std::vector<Tensor> result;
  std::vector<std::size_t> o_row;
  for (const Shape& out : output_shapes()) {
    std::vector<std::int64_t> od{n};
    od.insert(od.end(), out.dims().begin(), out.dims().end());
    result.push_back(Tensor::zeros(Shape(od), DType::f32));
    o_row.push_back(static_cast<std::size_t>(out.numel()) * sizeof(float));
  }
  StepContext ctx = step_context();
  ctx.training = false;
  std::int64_t start = 0;
  const auto next = [&](Batch& b) {
    if (start >= n) return false;
    const std::int64_t rows = std::min(batch_size, n - start);
    Entry& e = entry_or_split(false, rows, "prediction");
    for (std::size_t i = 0; i < x.size(); ++i) {
      const std::size_t x_row = n ? x[i].nbytes() / static_cast<std::size_t>(n) : 0;
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
  run_batches(next, [&](Batch& b) {
    for (std::size_t i = 0; i < result.size(); ++i) {
      std::memcpy(static_cast<char*>(result[i].raw()) + static_cast<std::size_t>(b.start) * o_row[i],
                  b.e->pred_data(i), static_cast<std::size_t>(b.rows) * o_row[i]);
    }
  }, ctx);
  return result;
}

// As fit's loop (Note [Input double buffer]), without the training: on a device with queues
// the next batch is taken and staged while the device runs the current one, whose results
// are read after; a batch staged ahead and not run (an error) is dropped.
void Model::run_batches(const std::function<bool(Batch&)>& next, const std::function<void(Batch&)>& done,
                        const StepContext& ctx) {
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
