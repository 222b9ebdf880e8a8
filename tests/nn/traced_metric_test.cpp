// Traced losses and metrics (Note [Traced losses and metrics]): an OperationGraph emitted
// on values of any shape; a traced loss reduced as Keras's Loss reduces it, with and without
// sample weights; a compute_loss over (x, y, y_pred) that takes no targets; a traced metric's state
// accumulated by TracedMetricRunner over batches of different sizes, its result, integer targets,
// and the errors naming the metric.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "nnfit/core/error.h"
#include "nnfit/graph/program.h"
#include "nnfit/memory/host_allocator.h"
#include "nnfit/nn/loss.h"
#include "nnfit/nn/metrics.h"
#include "nnfit/nn/operation_graph.h"
#include "nnfit/nn/traced_metric.h"

namespace nnfit {
namespace {

OperationArg tensor(int input) {
  OperationArg a;
  a.tensors = {input};
  return a;
}

OperationArg number(double v) {
  OperationArg a;
  a.kind = OperationArg::Kind::number;
  a.number = v;
  return a;
}

// Adds keras.ops.<cls>(args...) reading `inputs` (in tensor order); returns its output's ref.
OperationGraph::Ref op(OperationGraph& g, const std::string& name, const std::string& cls,
                       std::vector<OperationArg> args, std::vector<OperationGraph::Ref> inputs, Attrs config = {}) {
  auto o = std::make_unique<Operation>(name, "keras.src.ops.numpy", cls, std::move(config), "{}");
  CallArguments call;
  call.positional = inputs.size();
  call.operation_args = std::move(args);
  o->set_call_arguments(call);
  g.add(std::move(o), std::move(inputs));
  return {static_cast<int>(g.size()) - 1, 0};
}

constexpr OperationGraph::Ref in(int i) { return {-1, i}; }

// mean(|y_true - y_pred|, axis=-1): the per-sample values of a loss function.
std::shared_ptr<OperationGraph> abs_error_graph() {
  auto g = std::make_shared<OperationGraph>(2);
  auto d = op(*g, "subtract", "Subtract", {tensor(0), tensor(1)}, {in(0), in(1)});
  auto a = op(*g, "absolute", "Absolute", {tensor(0)}, {d});
  Attrs axis;
  axis.set("axis", std::vector<std::int64_t>{-1});
  g->set_outputs({op(*g, "mean", "Mean", {tensor(0)}, {a}, axis)});
  return g;
}

// Runs `loss` on a batch and returns the reduced value.
double run_loss(const Loss& loss, const std::vector<float>& y, const std::vector<float>& p, std::int64_t rows,
                const std::vector<float>* weights) {
  const std::int64_t cols = static_cast<std::int64_t>(y.size()) / rows;
  Tensor ty = Tensor::zeros(Shape{rows, cols}), tp = Tensor::zeros(Shape{rows, cols}), tw = Tensor::zeros(Shape{rows});
  std::memcpy(ty.raw(), y.data(), ty.nbytes());
  std::memcpy(tp.raw(), p.data(), tp.nbytes());
  if (weights) std::memcpy(tw.raw(), weights->data(), tw.nbytes());
  Graph g;
  const int out = loss.emit(g, g.add_variable("pred", tp), g.add_variable("y", ty), weights ? g.add_variable("w", tw) : -1);
  PlanOptions po;
  po.keep = {out};
  Program program = plan(std::move(g), po);
  HostAllocator alloc;
  Tensor arena = allocate_tensor(alloc, Shape{static_cast<std::int64_t>(std::max<std::size_t>(program.arena_bytes(), 1))},
                                 DType::u8);
  program.bind(arena.raw());
  StepContext ctx;
  program.run(ctx);
  return *static_cast<const float*>(program.data(out));
}

TEST(TracedLoss, ReducesAsKerasLossWithAndWithoutSampleWeights) {
  Loss loss;
  loss.kind = "custom";
  loss.name = "abs_error";
  loss.traced = abs_error_graph();
  loss.target_shape = Shape{2};
  const std::vector<float> y{0, 0, 1, 1, 2, 2}, p{1, 3, 1, 2, 2, 2};  // per sample: 2, 0.5, 0
  const std::vector<float> w{1.0f, 2.0f, 4.0f};
  EXPECT_EQ(loss.target_desc({Shape{3, 2}, DType::f32}).shape, (Shape{3, 2}));
  EXPECT_NEAR(run_loss(loss, y, p, 3, nullptr), 2.5 / 3, 1e-6);
  EXPECT_NEAR(run_loss(loss, y, p, 3, &w), 3.0 / 3, 1e-6);  // (2*1 + 0.5*2 + 0*4) / 3
  loss.reduction = "sum";
  EXPECT_NEAR(run_loss(loss, y, p, 3, &w), 3.0, 1e-6);
  loss.reduction = "mean_with_sample_weight";
  EXPECT_NEAR(run_loss(loss, y, p, 3, &w), 3.0 / 7, 1e-6);
  loss.reduction = "none";
  EXPECT_THROW(run_loss(loss, y, p, 3, nullptr), Unsupported);
}

// Note [compute_loss in the step]: compute_loss's graph reads (x, y, y_pred); one reading x
// and y_pred only takes no targets, and is emitted with none.
TEST(TracedLoss, ComputeLossReadsTheModelsInputsAndMayTakeNoTargets) {
  auto g = std::make_shared<OperationGraph>(3);  // x, y, y_pred
  auto d = op(*g, "subtract", "Subtract", {tensor(0), tensor(1)}, {in(0), in(2)});
  g->set_outputs({op(*g, "mean", "Mean", {tensor(0)}, {op(*g, "absolute", "Absolute", {tensor(0)}, {d})})});
  Loss loss;
  loss.kind = "custom";
  loss.name = "AE.compute_loss";
  loss.reduction = "compute_loss";
  loss.traced = g;
  loss.compute_loss_inputs = 1;
  loss.target_shapes = {Shape{2}};
  EXPECT_TRUE(g->reads_input(0) && g->reads_input(2));
  EXPECT_FALSE(g->reads_input(1));
  EXPECT_FALSE(loss.reads_targets());
  Tensor x = Tensor::zeros(Shape{3, 2}), p = Tensor::zeros(Shape{3, 2});
  const float xs[] = {0, 0, 1, 1, 2, 2}, ps[] = {1, 3, 1, 2, 2, 2};  // |x - p| sums to 5 over 6 values
  std::memcpy(x.raw(), xs, sizeof xs);
  std::memcpy(p.raw(), ps, sizeof ps);
  Graph graph;
  const int out = loss.emit_compute_loss(graph, {graph.add_variable("x", x)}, {}, {graph.add_variable("p", p)});
  EXPECT_EQ(graph.desc(out).shape, Shape{});
  PlanOptions po;
  po.keep = {out};
  Program program = plan(std::move(graph), po);
  HostAllocator alloc;
  Tensor arena = allocate_tensor(alloc, Shape{static_cast<std::int64_t>(std::max<std::size_t>(program.arena_bytes(), 1))},
                                 DType::u8);
  program.bind(arena.raw());
  StepContext ctx;
  program.run(ctx);
  EXPECT_NEAR(*static_cast<const float*>(program.data(out)), 5.0 / 6, 1e-6);
  // Its target shape per output, and the counts it was traced for.
  EXPECT_EQ(loss.target_desc({Shape{3, 2}, DType::f32}, 0).shape, (Shape{3, 2}));
  Graph other;
  const int v = other.add_input("v", {Shape{3, 2}, DType::f32});
  EXPECT_THROW(loss.emit_compute_loss(other, {v, v}, {}, {v}), InvalidArgument);  // two inputs, traced for one
  EXPECT_THROW(loss.emit(other, v, v), InvalidArgument);  // one loss for the model, not per output
  auto reads_y = std::make_shared<OperationGraph>(3);
  reads_y->set_outputs({op(*reads_y, "mean", "Mean", {tensor(0)}, {in(1)})});
  loss.traced = reads_y;
  EXPECT_TRUE(loss.reads_targets());
}

// A metric like Keras's MeanAbsoluteError written as a Metric subclass: variables total and
// count; update: total += sum(|y_pred - y_true|), count += sum(y_true * 0 + 1); result:
// total / count.
std::shared_ptr<TracedMetric> mean_abs_metric(bool weighted) {
  auto m = std::make_shared<TracedMetric>();
  m->name = "total_abs";
  m->variable_names = {"total", "count"};
  m->variable_shapes = {Shape{}, Shape{}};
  m->initial = {{0.0}, {0.0}};
  m->target_shape = Shape{2};
  auto u = std::make_shared<OperationGraph>(4);  // y_true, y_pred, total, count
  auto d = op(*u, "subtract", "Subtract", {tensor(0), tensor(1)}, {in(1), in(0)});
  auto s = op(*u, "sum", "Sum", {tensor(0)}, {op(*u, "absolute", "Absolute", {tensor(0)}, {d})});
  auto total = op(*u, "add", "Add", {tensor(0), tensor(1)}, {in(2), s});
  auto ones = op(*u, "add_1", "Add", {tensor(0), number(1.0)},
                 {op(*u, "multiply", "Multiply", {tensor(0), number(0.0)}, {in(0)})});
  auto count = op(*u, "add_2", "Add", {tensor(0), tensor(1)}, {in(3), op(*u, "sum_1", "Sum", {tensor(0)}, {ones})});
  u->set_outputs({total, count});
  m->update = u;
  m->updated = {0, 1};
  if (weighted) {  // the same graph with an unused sample_weight input, to check the wiring
    auto uw = std::make_shared<OperationGraph>(5);
    auto dw = op(*uw, "subtract", "Subtract", {tensor(0), tensor(1)}, {in(1), in(0)});
    auto sw = op(*uw, "sum", "Sum", {tensor(0)}, {op(*uw, "absolute", "Absolute", {tensor(0)}, {dw})});
    uw->set_outputs({op(*uw, "add", "Add", {tensor(0), tensor(1)}, {in(3), sw})});
    m->update_weighted = uw;
    m->updated_weighted = {0};
  }
  auto r = std::make_shared<OperationGraph>(2);
  r->set_outputs({op(*r, "divide", "Divide", {tensor(0), tensor(1)}, {in(0), in(1)})});
  m->result = r;
  return m;
}

TEST(TracedMetric, AccumulatesOverBatchesOfAnySizeAndResets) {
  MetricSpec spec;
  spec.name = "total_abs";
  spec.traced = mean_abs_metric(false);
  Loss mse = Loss::from_name("mse");
  Metric metric(spec, mse, {Shape{1, 2}, DType::f32});
  const float y1[] = {0, 0, 1, 1}, p1[] = {1, 1, 1, 3};   // |err| sum 4 over 4 values
  const float y2[] = {5, 5}, p2[] = {4, 5};               // 1 over 2
  metric.update(p1, y1, 2, {Shape{2, 2}, DType::f32});
  metric.update(p2, y2, 1, {Shape{1, 2}, DType::f32});
  EXPECT_NEAR(metric.result(), 5.0 / 6.0, 1e-6);
  EXPECT_EQ(metric.sums(), (std::vector<double>{5.0, 6.0}));  // the state resumes as sums
  metric.reset();
  metric.update(p2, y2, 1, {Shape{1, 2}, DType::f32});
  EXPECT_NEAR(metric.result(), 0.5, 1e-6);
}

TEST(TracedMetric, IntegerTargetsAndWeightedUpdates) {
  auto traced = mean_abs_metric(true);
  TracedMetricRunner runner(traced, {Shape{1, 2}, DType::i32}, {Shape{1, 2}, DType::f32});
  std::vector<double> state = runner.initial_state();
  const std::int32_t y[] = {1, 2};
  const float p[] = {2, 2}, w[] = {3};
  runner.update(state, p, y, 1, nullptr);
  EXPECT_EQ(state, (std::vector<double>{1.0, 2.0}));
  runner.update(state, p, y, 1, w);  // the weighted graph updates total only
  EXPECT_EQ(state, (std::vector<double>{2.0, 2.0}));
  EXPECT_NEAR(runner.result(state), 1.0, 1e-6);
}

TEST(TracedMetric, ErrorsNameTheMetric) {
  auto traced = mean_abs_metric(false);
  try {  // targets of another shape than the trace's
    TracedMetricRunner(traced, {Shape{1, 3}, DType::f32}, {Shape{1, 3}, DType::f32});
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("metric 'total_abs' was traced for targets of shape"), std::string::npos)
        << e.what();
  }
  TracedMetricRunner runner(traced, {Shape{1, 2}, DType::f32}, {Shape{1, 2}, DType::f32});
  std::vector<double> state = runner.initial_state();
  const float y[] = {1, 2}, p[] = {2, 2}, w[] = {1};
  try {  // no weighted graph: update_state takes no sample_weight
    runner.update(state, p, y, 1, w);
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("'total_abs': its update_state takes no sample_weight"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace nnfit
