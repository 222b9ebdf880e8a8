// TracedMetric: a keras.metrics.Metric subclass (update_state, result, reset_state over
// variables made with add_variable / add_weight), or a metric function fn(y_true, y_pred)
// that Keras wraps in MeanMetricWrapper, written with keras.ops and traced once by
// nnfit.keras (Note [Traced losses and metrics] in src/nn/traced_metric.cpp). Its graphs
// run on the host beside nnfit's other metrics, planned once per batch size: no Python
// runs in a step.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "nnfit/core/tensor.h"
#include "nnfit/graph/program.h"
#include "nnfit/memory/host_allocator.h"
#include "nnfit/nn/operation_graph.h"

namespace nnfit {

struct TracedMetric {
  std::string name;         // the key in logs and history
  std::string object_json;  // Keras's serialization of the metric with the trace, written back unchanged
  std::vector<std::string> variable_names;
  std::vector<Shape> variable_shapes;
  std::vector<std::vector<double>> initial;  // each variable's value after reset_state
  // update_state on (y_true, y_pred, state...) and, weighted, on (y_true, y_pred,
  // sample_weight, state...): the new values of the variables listed in `updated`;
  // update_weighted is null when update_state takes no sample_weight.
  std::shared_ptr<const OperationGraph> update, update_weighted;
  std::vector<int> updated, updated_weighted;
  std::shared_ptr<const OperationGraph> result;  // (state...) -> one value
  Shape target_shape;                            // y_true's without the batch axis (float32)
};

// The host programs of one traced metric, planned on first use per (rows, weighted), and
// the conversion of a batch into their inputs. The metric's state is the caller's (a flat
// list of every variable's values), so a Metric stays a value. Thread safety: none.
class TracedMetricRunner {
 public:
  // `target` and `pred`: a batch's descriptions (any batch size), as the model gives them.
  // throws: InvalidArgument naming the metric when the targets cannot be its y_true or its
  // graphs do not fit the predictions and its variables.
  TracedMetricRunner(std::shared_ptr<const TracedMetric> metric, const TensorDesc& target, const TensorDesc& pred);
  std::vector<double> initial_state() const;
  // `target`: `rows` rows of the target dtype given at construction; `weights`: one per
  // row, or null (the unweighted update_state, Keras's sample_weight=None).
  void update(std::vector<double>& state, const float* pred, const void* target, std::int64_t rows,
              const float* weights);
  double result(const std::vector<double>& state);

 private:
  struct Run {
    Program program;
    Tensor arena, y_true, y_pred, sample_weight;
    std::vector<Tensor> state;
    std::vector<int> outputs;
  };
  Run& run_for(std::int64_t rows, bool weighted);
  void load_state(Run& run, const std::vector<double>& state) const;

  std::shared_ptr<const TracedMetric> metric_;
  TensorDesc target_, pred_;
  HostAllocator alloc_;  // the runs' arenas (declared before them: it outlives them)
  std::map<std::pair<std::int64_t, bool>, std::unique_ptr<Run>> runs_;
};

}  // namespace nnfit
