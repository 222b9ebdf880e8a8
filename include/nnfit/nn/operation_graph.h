// OperationGraph: a graph of Keras operations only (keras.ops calls, Note [Keras
// operations]) over inputs of any shape, emitted into a Graph as many times as needed: the
// traced body of a custom loss or metric (Note [Traced losses and metrics] in
// src/nn/traced_metric.cpp) and nnfit.keras's eager calls. Unlike a LayerGraph's, its values
// have no reserved batch axis: a loss reduces over axis 0 like any other.
// Thread safety: emit is const and may run on several graphs at once; the graph is
// immutable once built.
#pragma once
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "nnfit/core/tensor.h"
#include "nnfit/graph/graph.h"
#include "nnfit/nn/operation.h"

namespace nnfit {

class OperationGraph {
 public:
  // Where a node's input or a graph output comes from: input `index` of the graph
  // (node < 0), or output `index` of node `node`.
  struct Ref {
    int node = -1;
    int index = 0;
  };

  explicit OperationGraph(std::size_t num_inputs) : num_inputs_(num_inputs) {}
  // Adds `op` reading `inputs` (in its arguments' tensor order); nodes are added in an
  // order where each reads only earlier ones. Its constants are made now, as float32
  // host tensors owned by the graph.
  void add(std::unique_ptr<Operation> op, std::vector<Ref> inputs);
  void set_outputs(std::vector<Ref> outputs) { outputs_ = std::move(outputs); }

  std::size_t num_inputs() const { return num_inputs_; }
  std::size_t num_outputs() const { return outputs_.size(); }
  std::size_t size() const { return nodes_.size(); }
  // Whether an operation or an output reads graph input `index` (an input it does not
  // read may be emitted as -1: a compute_loss that never reads y takes no targets).
  bool reads_input(std::size_t index) const;
  // The operations' class names, for messages ("Mean, Square, Subtract").
  std::string describe() const;

  // Emits every operation into `g` on the values `inputs` (one per graph input), names
  // prefixed by `prefix`; the constants enter as variables bound to the graph's host
  // tensors (the step engine copies them to the model's device). Returns the outputs.
  // An input that is not read may be -1.
  // throws: InvalidArgument or Unsupported from an operation, naming it.
  std::vector<int> emit(Graph& g, const std::vector<int>& inputs, const std::string& prefix) const;

 private:
  struct Node {
    std::unique_ptr<Operation> op;
    std::vector<Ref> inputs;
    std::vector<std::pair<std::string, Tensor>> constants;  // by Operation::Constant key
  };
  std::size_t num_inputs_;
  std::vector<Node> nodes_;
  std::vector<Ref> outputs_;
};

// Keras's add_loss values computed by `losses` from `feeds` (Note [Traced losses and
// metrics]): each output, as float32 and summed to a scalar (Keras's
// _aggregate_additional_loss), is handed to builder.add_loss when the graph computes a loss.
class GraphBuilder;
void emit_added_losses(GraphBuilder& builder, const OperationGraph& losses, const std::vector<int>& feeds,
                       const std::string& prefix);
// One add_loss value `value` of `builder`'s graph, as float32 and summed to a scalar, handed
// to builder.add_loss. requires: builder.collect_losses().
void add_summed_loss(GraphBuilder& builder, int value, const std::string& prefix);

}  // namespace nnfit
