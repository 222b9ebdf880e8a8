// Graph: a DAG of op nodes over values. Values are graph inputs (fed per step), variables
// (persistent tensors bound at construction: weights, optimizer slots, constants) or the
// outputs of nodes. add_node runs the op's shape inference, so a graph is always
// shape-consistent and a bad layer is reported where it is built, with its name.
//
// Thread safety: none; a graph is built and planned on one thread.
#pragma once
#include <string>
#include <vector>

#include "nnfit/backend/attrs.h"
#include "nnfit/core/tensor.h"

namespace nnfit {

enum class ValueKind { input, variable, intermediate };

struct Value {
  TensorDesc desc;
  ValueKind kind = ValueKind::intermediate;
  int producer = -1;      // node id, for intermediates
  int output_index = 0;
  std::string name;
  Tensor bound;           // variables only
};

struct Node {
  std::string op;
  Attrs attrs;
  std::vector<int> inputs;
  std::vector<int> outputs;
  std::string name;       // "dense_1/matmul": layer name first, for messages
  bool removed = false;   // dropped by a rewrite; the planner skips it
};

class Graph {
 public:
  int add_input(const std::string& name, TensorDesc desc);
  int add_variable(const std::string& name, Tensor tensor);
  // Appends a node; returns its output value ids. Throws InvalidArgument (naming `name`)
  // when shape inference rejects the inputs.
  std::vector<int> add_node(const std::string& op, const std::vector<int>& inputs, Attrs attrs,
                            const std::string& name);
  // Rewrites node `id` as `op` over `inputs` (a fusion pass), running the op's shape
  // inference again: the node keeps its output values with their descs (shapes must not
  // change, their readers were built for them; a dtype stays as an earlier rewrite may
  // have left it, e.g. float32 where a cast was folded in), and the outputs the new op
  // adds become new values. Returns the node's output value ids; throws InvalidArgument
  // as add_node.
  std::vector<int> rewrite_node(int id, const std::string& op, const std::vector<int>& inputs, Attrs attrs,
                                const std::string& name);
  // add_node for single-output ops.
  int add(const std::string& op, const std::vector<int>& inputs, Attrs attrs, const std::string& name);

  const Value& value(int id) const { return values_.at(static_cast<std::size_t>(id)); }
  Value& value(int id) { return values_.at(static_cast<std::size_t>(id)); }
  const Node& node(int id) const { return nodes_.at(static_cast<std::size_t>(id)); }
  Node& node(int id) { return nodes_.at(static_cast<std::size_t>(id)); }
  int num_values() const { return static_cast<int>(values_.size()); }
  int num_nodes() const { return static_cast<int>(nodes_.size()); }
  const TensorDesc& desc(int id) const { return value(id).desc; }

  // Live (not removed) nodes reading each value, by value id.
  std::vector<std::vector<int>> consumers() const;

 private:
  std::vector<TensorDesc> infer_outputs(const std::string& op, const std::vector<int>& inputs, const Attrs& attrs,
                                        const std::string& name) const;
  // Appends out[k] for k past node_id's present outputs as values it produces.
  void add_outputs(int node_id, const std::vector<TensorDesc>& out);

  std::vector<Value> values_;
  std::vector<Node> nodes_;
};

}  // namespace nnfit
