// Reverse-mode autodiff: walk the nodes that lead to the loss in reverse creation order
// (creation order is topological), sum each value's incoming gradients, apply the rule.
#include "nnfit/graph/autodiff.h"

#include <set>

#include "backend/common/math_fns.h"
#include "nnfit/core/error.h"
#include "nnfit/graph/op_def.h"

namespace nnfit {

namespace {

// Whether nothing flows back through the node: an element-wise op of a piecewise-constant
// kind or stop_gradient. Values computed from its output then depend on no wrt value, so an
// op without a gradient rule may follow it (Equalization's histogram, gather_grad of bins
// derived from stop_gradient(x)).
bool stops_gradient(const Node& node) {
  if (node.op == "unary") return unary_is_constant(unary_kind(node.attrs.s("kind")));
  if (node.op == "binary") return binary_is_constant(binary_kind(node.attrs.s("kind")));
  return false;
}

}  // namespace

std::vector<int> gradients(Graph& graph, int loss, int seed, const std::vector<int>& wrt) {
  NNFIT_CHECK(graph.desc(loss).shape.numel() == 1, InvalidArgument, "the loss must be a scalar, got ",
              graph.desc(loss).shape.to_string());
  const int num_forward_nodes = graph.num_nodes();
  const std::size_t nv = static_cast<std::size_t>(graph.num_values());

  // Which values depend on a wrt value (forward pass over the nodes).
  std::vector<bool> depends(nv, false);
  for (int v : wrt) depends[static_cast<std::size_t>(v)] = true;
  for (int n = 0; n < num_forward_nodes; ++n) {
    const Node& node = graph.node(n);
    if (node.removed) continue;
    bool any = false;
    for (int v : node.inputs) any = any || depends[static_cast<std::size_t>(v)];
    if (any && op_def(node.op).grad != nullptr && !stops_gradient(node)) {
      for (int v : node.outputs) depends[static_cast<std::size_t>(v)] = true;
    }
  }
  // Which values the loss depends on (backward pass).
  std::vector<bool> reaches(nv, false);
  reaches[static_cast<std::size_t>(loss)] = true;
  for (int n = num_forward_nodes - 1; n >= 0; --n) {
    const Node& node = graph.node(n);
    if (node.removed) continue;
    bool any = false;
    for (int v : node.outputs) any = any || reaches[static_cast<std::size_t>(v)];
    if (any) {
      for (int v : node.inputs) reaches[static_cast<std::size_t>(v)] = true;
    }
  }

  std::vector<std::vector<int>> contributions(nv);
  contributions[static_cast<std::size_t>(loss)].push_back(seed);
  auto total = [&](int v) -> int {
    auto& list = contributions[static_cast<std::size_t>(v)];
    if (list.empty()) return -1;
    if (list.size() == 1) return list[0];
    int sum = graph.add("add_n", list, {}, graph.value(v).name + "/grad_sum");
    contributions[static_cast<std::size_t>(v)] = {sum};
    return sum;
  };

  for (int n = num_forward_nodes - 1; n >= 0; --n) {
    const Node node = graph.node(n);
    if (node.removed) continue;
    bool useful = false;
    for (int v : node.outputs) useful = useful || reaches[static_cast<std::size_t>(v)];
    std::vector<bool> needs;
    bool any_need = false;
    for (int v : node.inputs) {
      bool nd = depends[static_cast<std::size_t>(v)] && reaches[static_cast<std::size_t>(v)];
      needs.push_back(nd);
      any_need = any_need || nd;
    }
    if (!useful || !any_need) continue;
    const OpDef& def = op_def(node.op);
    if (def.zero_gradient) continue;  // a comparison: nothing flows back through it
    NNFIT_CHECK(def.grad != nullptr, Unsupported, node.name, ": op '", node.op, "' has no gradient rule");
    GradContext ctx{graph, n, {}, needs};
    bool any_grad = false;
    for (int v : node.outputs) {
      int g = total(v);
      ctx.output_grads.push_back(g);
      any_grad = any_grad || g >= 0;
    }
    if (!any_grad) continue;
    std::vector<int> in_grads = def.grad(ctx);
    for (std::size_t i = 0; i < node.inputs.size() && i < in_grads.size(); ++i) {
      if (in_grads[i] >= 0 && needs[i]) contributions[static_cast<std::size_t>(node.inputs[i])].push_back(in_grads[i]);
    }
  }

  std::vector<int> out;
  for (int v : wrt) out.push_back(total(v));
  return out;
}

}  // namespace nnfit
