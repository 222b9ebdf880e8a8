// OpDef: what the graph knows about an op: shape inference, the gradient rule and which
// inputs it mutates, built from the op table (src/graph/ops.yaml, Note [Op table]). Kernels
// are separate (backend's KernelRegistry); the exact semantics are docs/design/ops.md.
#pragma once
#include <string>
#include <vector>

#include "nnfit/backend/attrs.h"
#include "nnfit/core/tensor.h"

namespace nnfit {

class Graph;
struct Node;

struct GradContext {
  Graph& graph;
  int node;                              // the forward node's id
  std::vector<int> output_grads;         // per output: gradient value id, or -1 (zero)
  std::vector<bool> needs;               // per input: whether its gradient is wanted
};

// Throws InvalidArgument with a message (the caller prefixes the node name).
using InferFn = std::vector<TensorDesc> (*)(const std::vector<TensorDesc>& inputs, const Attrs& attrs);
// Returns one gradient value id per input, -1 where none is produced.
using GradFn = std::vector<int> (*)(GradContext& ctx);

struct OpDef {
  std::string name;
  InferFn infer = nullptr;
  GradFn grad = nullptr;                 // null: not differentiable (grad ops, updates)
  std::vector<int> mutated_inputs;       // optimizer updates, moving averages
  // Whether `infer` sets its outputs' dtypes itself (cast). Otherwise an output inferred as
  // float32 takes the node's compute dtype: the type of its first floating input (Note
  // [Compute dtype] in graph.cpp).
  bool own_output_dtypes = false;
  // With grad null: the output is piecewise constant in its inputs (a comparison, a mask),
  // so no gradient flows through it, as TensorFlow's NotDifferentiable ops: a weight
  // reached only through one gets none. Without it, a null grad on a path from a weight
  // to the loss is an error (a missing rule).
  bool zero_gradient = false;
};

// The op catalogue; throws InvalidArgument for an unknown op name.
const OpDef& op_def(const std::string& name);
bool has_op_def(const std::string& name);
// Every op name of the catalogue, sorted.
std::vector<std::string> op_names();

// TensorFlow's output size and padding for one spatial dimension.
struct Padding1d {
  std::int64_t out = 0, before = 0, after = 0;
};
Padding1d tf_padding(std::int64_t in, std::int64_t kernel, std::int64_t stride, const std::string& padding);

}  // namespace nnfit
