// Shape inference and gradient rule of gather (docs/design/ops.md, "Embedding"): rows of a
// table picked by integer ids (float32 ids are truncated toward zero, as Keras casts them),
// and gather_grad, which adds each dy row into its id's row of a zero table.

#include "nnfit/core/error.h"
#include "nnfit/graph/graph.h"
#include "nnfit/graph/op_def.h"

namespace nnfit {

namespace op_rules::gather {

using Descs = std::vector<TensorDesc>;

void check_ids(const TensorDesc& ids, const char* op) {
  NNFIT_CHECK(is_floating(ids.dtype) || ids.dtype == DType::i32 || ids.dtype == DType::i64, InvalidArgument, op,
              ": ids must be int32, int64 or float32, got ", dtype_name(ids.dtype));
}

Shape with_row(const Shape& ids, std::int64_t d) {
  std::vector<std::int64_t> dims = ids.dims();
  dims.push_back(d);
  return Shape(dims);
}

// table [V, D], ids [...] -> y [..., D].
Descs infer_gather(const Descs& in, const Attrs&) {
  NNFIT_CHECK(in.size() == 2, InvalidArgument, "gather expects 2 inputs (table, ids), got ", in.size());
  NNFIT_CHECK(in[0].shape.rank() == 2 && is_floating(in[0].dtype), InvalidArgument,
              "gather: the table must be a floating [rows, width], got ", in[0].shape.to_string(), " ",
              dtype_name(in[0].dtype));
  check_ids(in[1], "gather");
  return {{with_row(in[1].shape, in[0].shape[1]), DType::f32}};
}

// ids [...], dy [..., D] -> dtable [rows, D].
Descs infer_gather_grad(const Descs& in, const Attrs& a) {
  NNFIT_CHECK(in.size() == 2, InvalidArgument, "gather_grad expects 2 inputs (ids, dy), got ", in.size());
  check_ids(in[0], "gather_grad");
  NNFIT_CHECK(in[1].shape.rank() == in[0].shape.rank() + 1, InvalidArgument, "gather_grad: dy ",
              in[1].shape.to_string(), " must be the ids' shape ", in[0].shape.to_string(), " plus a row axis");
  NNFIT_CHECK(with_row(in[0].shape, in[1].shape.dim(-1)) == in[1].shape, InvalidArgument, "gather_grad: dy ",
              in[1].shape.to_string(), " does not match the ids ", in[0].shape.to_string());
  NNFIT_CHECK(a.i("rows") > 0, InvalidArgument, "gather_grad: rows must be positive");
  return {{Shape{a.i("rows"), in[1].shape.dim(-1)}, DType::f32}};
}

std::vector<int> grad_gather(GradContext& c) {
  const Node n = c.graph.node(c.node);
  const int dy = c.output_grads[0];
  if (dy < 0 || !c.needs[0]) return {-1, -1};
  Attrs a;
  a.set("rows", c.graph.desc(n.inputs[0]).shape[0]);
  return {c.graph.add("gather_grad", {n.inputs[1], dy}, a, n.name + "/grad"), -1};
}

}  // namespace op_rules::gather

}  // namespace nnfit
