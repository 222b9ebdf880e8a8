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

std::vector<TensorDesc> Graph::infer_outputs(const std::string& op, const std::vector<int>& inputs,
                                             const Attrs& attrs, const std::string& name) const {
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
  return out;
}

void Graph::add_outputs(int node_id, const std::vector<TensorDesc>& out) {
  Node& n = nodes_.at(static_cast<std::size_t>(node_id));
  for (std::size_t i = n.outputs.size(); i < out.size(); ++i) {
    Value v;
    v.desc = out[i];
    v.producer = node_id;
    v.output_index = static_cast<int>(i);
    v.name = n.name + (out.size() > 1 ? ":" + std::to_string(i) : std::string());
    values_.push_back(std::move(v));
    n.outputs.push_back(num_values() - 1);
  }
}

std::vector<int> Graph::add_node(const std::string& op, const std::vector<int>& inputs, Attrs attrs,
                                 const std::string& name) {
  std::vector<TensorDesc> out = infer_outputs(op, inputs, attrs, name);
  Node n;
  n.op = op;
  n.attrs = std::move(attrs);
  n.inputs = inputs;
  n.name = name;
  nodes_.push_back(std::move(n));
  add_outputs(num_nodes() - 1, out);
  return nodes_.back().outputs;
}

std::vector<int> Graph::rewrite_node(int id, const std::string& op, const std::vector<int>& inputs, Attrs attrs,
                                     const std::string& name) {
  std::vector<TensorDesc> out = infer_outputs(op, inputs, attrs, name);
  Node& n = node(id);
  NNFIT_CHECK(out.size() >= n.outputs.size(), InvalidArgument, name, ": op ", op, " has ", out.size(),
              " outputs, fewer than the ", n.outputs.size(), " of the node it rewrites (", n.op, ")");
  for (std::size_t i = 0; i < n.outputs.size(); ++i) {
    const Shape& kept = desc(n.outputs[i]).shape;
    NNFIT_CHECK(out[i].shape == kept, InvalidArgument, name, ": op ", op, "'s output ", i, " would have shape ",
                out[i].shape.to_string(), ", not the ", kept.to_string(), " its readers were built for");
  }
  n.op = op;
  n.attrs = std::move(attrs);
  n.inputs = inputs;
  n.name = name;
  add_outputs(id, out);
  return node(id).outputs;
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
