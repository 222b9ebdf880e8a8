// TracedMetricRunner (include/nnfit/nn/traced_metric.h).
//
// Note [Traced losses and metrics]: Keras calls a custom loss or metric in Python on every
// step; nnfit traces it once. nnfit.keras calls the loss function (or Loss.call) on
// symbolic y_true and y_pred whose shapes come from the model's outputs, and
// Metric.update_state / result on symbolic targets, predictions, sample weights and one
// symbolic input per variable (add_variable / add_weight): each keras.ops call records an
// operation node, an assign / assign_add records the variable's new value
// (python/nnfit/keras/_custom_objects.py). Unlike a layer's trace, these graphs may reduce
// over the batch axis (a loss's ops.mean over everything, a metric's running sum), so their
// shapes are found by running the ops on zeros at two batch sizes, and they become an
// OperationGraph (no batch axis reserved), not a LayerGraph. The trace goes into the
// object's Keras serialization under "nnfit_trace", beside Keras's own keys, which
// compile_config keeps as read, so a saved model's loss and metrics train again in the CLI
// and load in Keras with custom_objects.
// A loss's graph is emitted in the training graph (Loss::emit) and reduced there as Keras's
// Loss reduces (values times the sample weights broadcast on the batch axis, summed, divided
// by their count): it is differentiated and fused with the rest of the step. A metric's
// graphs run on the host after each step, where nnfit computes every metric, from the
// step's predictions and targets: one small program per batch size, planned once.
#include "nnfit/nn/traced_metric.h"

#include <algorithm>
#include <cstring>

#include "nnfit/core/error.h"
#include "nnfit/memory/host_allocator.h"

namespace nnfit {

namespace {

Shape with_rows(std::int64_t rows, const Shape& sample) {
  std::vector<std::int64_t> dims{rows};
  dims.insert(dims.end(), sample.dims().begin(), sample.dims().end());
  return Shape(dims);
}

Shape sample_of(const Shape& s) { return Shape(std::vector<std::int64_t>(s.dims().begin() + 1, s.dims().end())); }

}  // namespace

TracedMetricRunner::TracedMetricRunner(std::shared_ptr<const TracedMetric> metric, const TensorDesc& target,
                                       const TensorDesc& pred)
    : metric_(std::move(metric)), target_(target), pred_(pred) {
  const TracedMetric& m = *metric_;
  NNFIT_CHECK(sample_of(target.shape).numel() == m.target_shape.numel(), InvalidArgument, "metric '", m.name,
              "' was traced for targets of shape ", m.target_shape.to_string(), " per sample, but the model's are ",
              sample_of(target.shape).to_string(), "; compile the model again after changing its loss or outputs");
  NNFIT_CHECK(target.dtype == DType::f32 || target.dtype == DType::i32 || target.dtype == DType::i64, InvalidArgument,
              "metric '", m.name, "': targets of dtype ", dtype_name(target.dtype), " cannot be its y_true");
  // Plan once now, so a graph that does not fit fails at compile, naming the metric.
  run_for(std::max<std::int64_t>(pred.shape[0], 1), false);
}

std::vector<double> TracedMetricRunner::initial_state() const {
  std::vector<double> out;
  for (const auto& v : metric_->initial) out.insert(out.end(), v.begin(), v.end());
  return out;
}

TracedMetricRunner::Run& TracedMetricRunner::run_for(std::int64_t rows, bool weighted) {
  auto& slot = runs_[{rows, weighted}];
  if (slot) return *slot;
  const TracedMetric& m = *metric_;
  NNFIT_CHECK(!weighted || m.update_weighted, InvalidArgument, "metric '", m.name, "': its update_state takes no ",
              "sample_weight, and it is given sample weights (weighted_metrics); add a sample_weight=None argument ",
              "or list it in metrics");
  auto run = std::make_unique<Run>();
  Graph g;
  std::vector<int> in;
  run->y_true = Tensor::zeros(with_rows(rows, m.target_shape));
  run->y_pred = Tensor::zeros(with_rows(rows, sample_of(pred_.shape)));
  in.push_back(g.add_variable("y_true", run->y_true));
  in.push_back(g.add_variable("y_pred", run->y_pred));
  if (weighted) {
    run->sample_weight = Tensor::zeros(Shape{rows});
    in.push_back(g.add_variable("sample_weight", run->sample_weight));
  }
  for (std::size_t i = 0; i < m.variable_shapes.size(); ++i) {
    run->state.push_back(Tensor::zeros(m.variable_shapes[i]));
    in.push_back(g.add_variable(m.variable_names[i], run->state.back()));
  }
  const OperationGraph& update = weighted ? *m.update_weighted : *m.update;
  const std::vector<int>& updated = weighted ? m.updated_weighted : m.updated;
  std::vector<int> out = update.emit(g, in, "metric/" + m.name);
  NNFIT_CHECK(out.size() == updated.size(), InvalidArgument, "metric '", m.name, "': update_state's trace gives ",
              out.size(), " values for ", updated.size(), " variables");
  for (std::size_t k = 0; k < out.size(); ++k) {
    const Shape& want = m.variable_shapes.at(static_cast<std::size_t>(updated[k]));
    NNFIT_CHECK(g.desc(out[k]).shape.numel() == want.numel(), InvalidArgument, "metric '", m.name,
                "': update_state assigns variable '", m.variable_names[updated[k]], "' (shape ", want.to_string(),
                ") a value of shape ", g.desc(out[k]).shape.to_string(), " for a batch of ", rows);
    if (g.desc(out[k]).dtype != DType::f32) {
      out[k] = g.add("cast", {out[k]}, Attrs{{"dtype", std::string("float32")}}, "metric/" + m.name + "/cast");
    }
  }
  PlanOptions po;
  po.keep = out;
  run->outputs = out;
  run->program = plan(std::move(g), po);
  run->arena = allocate_tensor(alloc_, Shape{static_cast<std::int64_t>(std::max<std::size_t>(run->program.arena_bytes(), 1))},
                               DType::u8);
  run->program.bind(run->arena.raw());
  slot = std::move(run);
  return *slot;
}

void TracedMetricRunner::load_state(Run& run, const std::vector<double>& state) const {
  std::size_t at = 0;
  for (Tensor& t : run.state) {
    float* dst = t.data<float>();
    for (std::int64_t j = 0; j < t.numel(); ++j) dst[j] = static_cast<float>(state.at(at++));
  }
}

void TracedMetricRunner::update(std::vector<double>& state, const float* pred, const void* target, std::int64_t rows,
                                const float* weights) {
  Run& run = run_for(rows, weights != nullptr);
  std::memcpy(run.y_pred.raw(), pred, run.y_pred.nbytes());
  float* y = run.y_true.data<float>();
  const std::int64_t n = run.y_true.numel();
  switch (target_.dtype) {
    case DType::f32: std::memcpy(y, target, run.y_true.nbytes()); break;
    case DType::i32: std::copy_n(static_cast<const std::int32_t*>(target), n, y); break;
    default:
      for (std::int64_t j = 0; j < n; ++j) y[j] = static_cast<float>(static_cast<const std::int64_t*>(target)[j]);
  }
  if (weights) std::memcpy(run.sample_weight.raw(), weights, run.sample_weight.nbytes());
  load_state(run, state);
  StepContext ctx;
  ctx.training = false;
  run.program.run(ctx);
  // Each assigned variable's new value, at its place in the flat state.
  const std::vector<int>& updated = weights ? metric_->updated_weighted : metric_->updated;
  for (std::size_t k = 0; k < updated.size(); ++k) {
    std::size_t at = 0;
    for (int i = 0; i < updated[k]; ++i) at += static_cast<std::size_t>(metric_->variable_shapes[i].numel());
    const float* src = static_cast<const float*>(run.program.data(run.outputs[k]));
    const std::int64_t count = metric_->variable_shapes[updated[k]].numel();
    for (std::int64_t j = 0; j < count; ++j) state.at(at + j) = src[j];
  }
}

double TracedMetricRunner::result(const std::vector<double>& state) {
  const TracedMetric& m = *metric_;
  auto& slot = runs_[{-1, false}];  // the result program (rows -1)
  if (!slot) {
    auto run = std::make_unique<Run>();
    Graph g;
    std::vector<int> in;
    for (std::size_t i = 0; i < m.variable_shapes.size(); ++i) {
      run->state.push_back(Tensor::zeros(m.variable_shapes[i]));
      in.push_back(g.add_variable(m.variable_names[i], run->state.back()));
    }
    std::vector<int> out = m.result->emit(g, in, "metric/" + m.name + "/result");
    NNFIT_CHECK(out.size() == 1 && g.desc(out[0]).shape.numel() == 1, InvalidArgument, "metric '", m.name,
                "': result() must return one number, got shape ",
                out.empty() ? std::string("(none)") : g.desc(out[0]).shape.to_string());
    if (g.desc(out[0]).dtype != DType::f32) {
      out[0] = g.add("cast", {out[0]}, Attrs{{"dtype", std::string("float32")}}, "metric/" + m.name + "/cast");
    }
    PlanOptions po;
    po.keep = out;
    run->outputs = out;
    run->program = plan(std::move(g), po);
      run->arena = allocate_tensor(alloc_, Shape{static_cast<std::int64_t>(std::max<std::size_t>(run->program.arena_bytes(), 1))},
                                 DType::u8);
    run->program.bind(run->arena.raw());
    slot = std::move(run);
  }
  load_state(*slot, state);
  StepContext ctx;
  ctx.training = false;
  slot->program.run(ctx);
  return static_cast<double>(*static_cast<const float*>(slot->program.data(slot->outputs[0])));
}

}  // namespace nnfit
