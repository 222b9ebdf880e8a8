// Graph construction with shape inference at every node.
#include "nnfit/graph/graph.h"

#include "nnfit/core/error.h"
#include "nnfit/graph/op_def.h"

namespace nnfit {

int Graph::add_input(const std::string& name, TensorDesc desc) {
  Value v;
  v.desc = std::move(desc);
  v.kind = ValueKind::input;
  v.name = name;
  values_.push_back(std::move(v));
  return num_values() - 1;
}

int Graph::add_variable(const std::string& name, Tensor tensor) {
  Value v;
  v.desc = tensor.desc();
  v.kind = ValueKind::variable;
  v.name = name;
  v.bound = std::move(tensor);
  values_.push_back(std::move(v));
  return num_values() - 1;
}

std::vector<int> Graph::add_node(const std::string& op, const std::vector<int>& inputs, Attrs attrs,
                                 const std::string& name) {
  const OpDef& def = op_def(op);
  std::vector<TensorDesc> in;
  for (int id : inputs) {
    NNFIT_CHECK(id >= 0 && id < num_values(), InvalidArgument, name, ": input value ", id,
                " does not exist");
    in.push_back(values_[static_cast<std::size_t>(id)].desc);
  }
  std::vector<TensorDesc> out;
  try {
    out = def.infer(in, attrs);
  } catch (const InvalidArgument& e) {
    std::string shapes;
    for (std::size_t i = 0; i < in.size(); ++i) shapes += (i ? ", " : "") + in[i].shape.to_string();
    throw InvalidArgument(name + " (" + op + "): " + e.what() + " [inputs: " + shapes + "]");
  }
  // Note [Compute dtype]: the catalogue's shape inference speaks float32; a node computes
  // in the type of its first floating input, and its float outputs are of that type. So a
  // layer under a bfloat16 policy, whose inputs and weights are cast to bfloat16, emits
  // bfloat16 nodes, their gradients follow, and nothing but the casts names a dtype.
  // Kernels that lack a low-precision version compute in float32 and round their outputs
  // (backend/widened_kernel.cpp).
  if (!def.own_output_dtypes) {
    DType compute = DType::f32;
    for (const TensorDesc& d : in) {
      if (is_floating(d.dtype)) {
        compute = d.dtype;
        break;
      }
    }
    if (compute != DType::f32) {
      for (TensorDesc& d : out) {
        if (d.dtype == DType::f32) d.dtype = compute;
      }
    }
  }
  Node n;
  n.op = op;
  n.attrs = std::move(attrs);
  n.inputs = inputs;
  n.name = name;
  int node_id = num_nodes();
  for (std::size_t i = 0; i < out.size(); ++i) {
    Value v;
    v.desc = out[i];
    v.producer = node_id;
    v.output_index = static_cast<int>(i);
    v.name = name + (out.size() > 1 ? ":" + std::to_string(i) : std::string());
    values_.push_back(std::move(v));
    n.outputs.push_back(num_values() - 1);
  }
  nodes_.push_back(std::move(n));
  return nodes_.back().outputs;
}

int Graph::add(const std::string& op, const std::vector<int>& inputs, Attrs attrs,
               const std::string& name) {
  std::vector<int> outs = add_node(op, inputs, std::move(attrs), name);
  NNFIT_CHECK(outs.size() == 1, InvalidArgument, name, ": op ", op, " has ", outs.size(),
              " outputs, expected 1");
  return outs[0];
}

std::vector<std::vector<int>> Graph::consumers() const {
  std::vector<std::vector<int>> out(values_.size());
  for (int n = 0; n < num_nodes(); ++n) {
    if (nodes_[static_cast<std::size_t>(n)].removed) continue;
    for (int v : nodes_[static_cast<std::size_t>(n)].inputs) out[static_cast<std::size_t>(v)].push_back(n);
  }
  return out;
}

}  // namespace nnfit
