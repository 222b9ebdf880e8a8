// Shape inference and gradient rules of the regularizer and constraint ops
// (docs/design/ops.md, "Regularizers and constraints"): weight_penalty, the scalar a
// regularizer adds to the loss, and apply_constraint, which projects a variable in place
// after its update.

#include "nnfit/core/error.h"
#include "nnfit/graph/graph.h"
#include "nnfit/graph/op_def.h"

namespace nnfit {

namespace op_rules::regularizer {

using Descs = std::vector<TensorDesc>;

void check_penalty_attrs(const TensorDesc& x, const Attrs& a, const char* op) {
  const std::string kind = a.s("kind");
  if (kind == "l1l2") {
    NNFIT_CHECK(a.f("l1") >= 0.0 && a.f("l2") >= 0.0, InvalidArgument, op, ": l1 and l2 must be non-negative");
    return;
  }
  NNFIT_CHECK(kind == "orthogonal", InvalidArgument, op, ": kind \"", kind, "\" is not l1l2 or orthogonal");
  NNFIT_CHECK(a.f("factor") >= 0.0, InvalidArgument, op, ": factor must be non-negative");
  const std::string mode = a.s("mode");
  NNFIT_CHECK(mode == "rows" || mode == "columns", InvalidArgument, op, ": mode \"", mode, "\" is not rows or columns");
  NNFIT_CHECK(x.shape.rank() == 2, InvalidArgument, op, ": an orthogonal penalty needs a 2-D tensor, got ",
              x.shape.to_string());
  const std::int64_t size = x.shape[mode == "rows" ? 0 : 1];
  NNFIT_CHECK(size >= 2, InvalidArgument, op, ": an orthogonal penalty needs at least 2 ", mode, ", got ", size);
}

// x -> the scalar penalty.
Descs infer_weight_penalty(const Descs& in, const Attrs& a) {
  NNFIT_CHECK(in.size() == 1, InvalidArgument, "weight_penalty expects 1 input, got ", in.size());
  check_penalty_attrs(in[0], a, "weight_penalty");
  return {{Shape{}, DType::f32}};
}

// x, dloss [] -> dx like x.
Descs infer_weight_penalty_grad(const Descs& in, const Attrs& a) {
  NNFIT_CHECK(in.size() == 2 && in[1].shape == Shape{}, InvalidArgument,
              "weight_penalty_grad expects x and a scalar dloss");
  check_penalty_attrs(in[0], a, "weight_penalty_grad");
  return {in[0]};
}

std::vector<int> grad_weight_penalty(GradContext& c) {
  const Node n = c.graph.node(c.node);
  if (c.output_grads[0] < 0 || !c.needs[0]) return {-1};
  return {c.graph.add("weight_penalty_grad", {n.inputs[0], c.output_grads[0]}, n.attrs, n.name + "/grad")};
}

// The variable (mutated) -> nothing.
Descs infer_apply_constraint(const Descs& in, const Attrs& a) {
  NNFIT_CHECK(in.size() == 1, InvalidArgument, "apply_constraint expects the variable only, got ", in.size(), " inputs");
  const std::string kind = a.s("kind");
  NNFIT_CHECK(kind == "MaxNorm" || kind == "MinMaxNorm" || kind == "NonNeg" || kind == "UnitNorm", InvalidArgument,
              "apply_constraint: unknown kind \"", kind, "\"");
  const std::int64_t rank = in[0].shape.rank();
  if (kind != "NonNeg") {
    for (std::int64_t axis : a.ints("axes")) {
      NNFIT_CHECK(axis >= -rank && axis < rank, InvalidArgument, "apply_constraint: axis ", axis,
                  " is out of range for a weight of shape ", in[0].shape.to_string());
    }
  }
  return {};
}

}  // namespace op_rules::regularizer

}  // namespace nnfit
