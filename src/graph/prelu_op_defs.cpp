// Shape inference and gradient rule of prelu (docs/design/ops.md): y = x > 0 ? x : alpha * x,
// with alpha of x's shape past the batch axis, 1 on the axes it is shared along (Keras's
// PReLU weight).

#include "nnfit/core/error.h"
#include "nnfit/graph/graph.h"
#include "nnfit/graph/op_def.h"

namespace nnfit {

namespace op_rules::prelu {

using Descs = std::vector<TensorDesc>;

// alpha must be x's shape past the batch axis, with 1 where it is shared.
void check_alpha(const Shape& x, const Shape& alpha, const char* op) {
  bool fits = alpha.rank() == x.rank() - 1;
  for (std::int64_t d = 0; fits && d < alpha.rank(); ++d) fits = alpha[d] == x[d + 1] || alpha[d] == 1;
  NNFIT_CHECK(fits, InvalidArgument, op, ": alpha ", alpha.to_string(), " does not fit x ", x.to_string(),
              " (it must be x's shape past the batch axis, with 1 on shared axes)");
}

Descs infer_prelu(const Descs& in, const Attrs&) {
  NNFIT_CHECK(in.size() == 2, InvalidArgument, "prelu expects 2 inputs (x, alpha), got ", in.size());
  check_alpha(in[0].shape, in[1].shape, "prelu");
  return {{in[0].shape, DType::f32}};
}

// x, alpha, dy -> dx like x, dalpha like alpha.
Descs infer_prelu_grad(const Descs& in, const Attrs&) {
  NNFIT_CHECK(in.size() == 3, InvalidArgument, "prelu_grad expects 3 inputs (x, alpha, dy), got ", in.size());
  check_alpha(in[0].shape, in[1].shape, "prelu_grad");
  NNFIT_CHECK(in[2].shape == in[0].shape, InvalidArgument, "prelu_grad: dy ", in[2].shape.to_string(),
              " is not x's shape ", in[0].shape.to_string());
  return {{in[0].shape, DType::f32}, {in[1].shape, DType::f32}};
}

std::vector<int> grad_prelu(GradContext& c) {
  const Node n = c.graph.node(c.node);
  const int dy = c.output_grads[0];
  if (dy < 0 || (!c.needs[0] && !c.needs[1])) return {-1, -1};
  std::vector<int> g = c.graph.add_node("prelu_grad", {n.inputs[0], n.inputs[1], dy}, {}, n.name + "/grad");
  return {c.needs[0] ? g[0] : -1, c.needs[1] ? g[1] : -1};
}

}  // namespace op_rules::prelu

}  // namespace nnfit
