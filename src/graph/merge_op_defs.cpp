// Shape inference and gradient rules of the ops Keras's merge layers need (docs/design/ops.md):
// sub, mul, maximum, minimum (same-shape element-wise), scale (x · factor), concat and
// slice along one axis, batch_matmul ([B, M, K] · [B, K, N] with transposes) and
// l2_normalize along one axis. Axes count the batch axis.

#include "nnfit/core/error.h"
#include "nnfit/graph/graph.h"
#include "nnfit/graph/op_def.h"

namespace nnfit {

namespace op_rules::merge {

using Descs = std::vector<TensorDesc>;

TensorDesc f32(Shape s) { return {std::move(s), DType::f32}; }

void expect_inputs(const Descs& in, std::size_t n, const char* op) {
  NNFIT_CHECK(in.size() == n, InvalidArgument, op, " expects ", n, " inputs, got ", in.size());
}

Descs infer_same_binary(const Descs& in, const Attrs&) {
  expect_inputs(in, 2, "an element-wise op");
  NNFIT_CHECK(in[0].shape == in[1].shape, InvalidArgument, "shapes ", in[0].shape.to_string(), " and ",
              in[1].shape.to_string(), " differ");
  return {f32(in[0].shape)};
}

Descs infer_scale(const Descs& in, const Attrs& a) {
  expect_inputs(in, 1, "scale");
  a.f("factor");
  return {f32(in[0].shape)};
}

std::int64_t checked_axis(const Shape& s, const Attrs& a, const char* op) {
  const std::int64_t axis = a.i("axis");
  NNFIT_CHECK(axis >= 0 && axis < s.rank(), InvalidArgument, op, ": axis ", axis, " is out of range for shape ",
              s.to_string());
  return axis;
}

Descs infer_concat(const Descs& in, const Attrs& a) {
  NNFIT_CHECK(!in.empty(), InvalidArgument, "concat needs at least one input");
  const std::int64_t axis = checked_axis(in[0].shape, a, "concat");
  std::vector<std::int64_t> out = in[0].shape.dims();
  for (std::size_t i = 1; i < in.size(); ++i) {
    bool fits = in[i].shape.rank() == in[0].shape.rank();
    for (std::int64_t d = 0; fits && d < in[0].shape.rank(); ++d) fits = d == axis || in[i].shape[d] == in[0].shape[d];
    NNFIT_CHECK(fits, InvalidArgument, "concat: shapes ", in[0].shape.to_string(), " and ", in[i].shape.to_string(),
                " differ off axis ", axis);
    out[static_cast<std::size_t>(axis)] += in[i].shape[axis];
  }
  return {f32(Shape(out))};
}

Descs infer_slice(const Descs& in, const Attrs& a) {
  expect_inputs(in, 1, "slice");
  const std::int64_t axis = checked_axis(in[0].shape, a, "slice");
  const std::int64_t begin = a.i("begin"), size = a.i("size");
  NNFIT_CHECK(begin >= 0 && size >= 0 && begin + size <= in[0].shape[axis], InvalidArgument, "slice [", begin, ", ",
              begin + size, ") is outside axis ", axis, " of ", in[0].shape.to_string());
  std::vector<std::int64_t> out = in[0].shape.dims();
  out[static_cast<std::size_t>(axis)] = size;
  return {f32(Shape(out))};
}

Descs infer_batch_matmul(const Descs& in, const Attrs& a) {
  expect_inputs(in, 2, "batch_matmul");
  NNFIT_CHECK(in[0].shape.rank() == 3 && in[1].shape.rank() == 3 && in[0].shape[0] == in[1].shape[0], InvalidArgument,
              "batch_matmul takes [B, M, K] and [B, K, N], got ", in[0].shape.to_string(), " and ",
              in[1].shape.to_string());
  const bool ta = a.i_or("transpose_a", 0) != 0, tb = a.i_or("transpose_b", 0) != 0;
  const std::int64_t m = ta ? in[0].shape[2] : in[0].shape[1], k = ta ? in[0].shape[1] : in[0].shape[2];
  const std::int64_t k2 = tb ? in[1].shape[2] : in[1].shape[1], n = tb ? in[1].shape[1] : in[1].shape[2];
  NNFIT_CHECK(k == k2, InvalidArgument, "batch_matmul: inner dimensions differ: ", k, " vs ", k2);
  return {f32(Shape{in[0].shape[0], m, n})};
}

Descs infer_l2_normalize(const Descs& in, const Attrs& a) {
  expect_inputs(in, 1, "l2_normalize");
  checked_axis(in[0].shape, a, "l2_normalize");
  return {f32(in[0].shape)};
}

Descs infer_l2_normalize_grad(const Descs& in, const Attrs& a) {
  expect_inputs(in, 2, "l2_normalize_grad");
  checked_axis(in[0].shape, a, "l2_normalize_grad");
  return {f32(in[0].shape)};
}

Descs infer_minmax_grad(const Descs& in, const Attrs&) {
  expect_inputs(in, 3, "minmax_grad");
  return {f32(in[0].shape), f32(in[0].shape)};
}

std::string grad_name(GradContext& c, const std::string& suffix) { return c.graph.node(c.node).name + "/grad_" + suffix; }

int scaled(GradContext& c, int v, double factor, const std::string& suffix) {
  Attrs a;
  a.set("factor", factor);
  return c.graph.add("scale", {v}, a, grad_name(c, suffix));
}

std::vector<int> grad_sub(GradContext& c) {
  const int dy = c.output_grads[0];
  if (dy < 0) return {-1, -1};
  return {c.needs[0] ? dy : -1, c.needs[1] ? scaled(c, dy, -1.0, "b") : -1};
}

std::vector<int> grad_mul(GradContext& c) {
  const Node n = c.graph.node(c.node);
  const int dy = c.output_grads[0];
  if (dy < 0) return {-1, -1};
  return {c.needs[0] ? c.graph.add("mul", {dy, n.inputs[1]}, {}, grad_name(c, "a")) : -1,
          c.needs[1] ? c.graph.add("mul", {dy, n.inputs[0]}, {}, grad_name(c, "b")) : -1};
}

std::vector<int> grad_minmax(GradContext& c) {
  const Node n = c.graph.node(c.node);
  const int dy = c.output_grads[0];
  if (dy < 0) return {-1, -1};
  Attrs a;
  a.set("kind", n.op);
  const std::vector<int> g = c.graph.add_node("minmax_grad", {n.inputs[0], n.inputs[1], dy}, a, grad_name(c, "ab"));
  return {c.needs[0] ? g[0] : -1, c.needs[1] ? g[1] : -1};
}

std::vector<int> grad_scale(GradContext& c) {
  const Node n = c.graph.node(c.node);
  const int dy = c.output_grads[0];
  if (dy < 0 || !c.needs[0]) return {-1};
  return {scaled(c, dy, n.attrs.f("factor"), "x")};
}

std::vector<int> grad_concat(GradContext& c) {
  const Node n = c.graph.node(c.node);
  const int dy = c.output_grads[0];
  std::vector<int> out(n.inputs.size(), -1);
  if (dy < 0) return out;
  const std::int64_t axis = n.attrs.i("axis");
  std::int64_t begin = 0;
  for (std::size_t i = 0; i < n.inputs.size(); ++i) {
    const std::int64_t size = c.graph.desc(n.inputs[i]).shape[axis];
    if (c.needs[i]) {
      Attrs a;
      a.set("axis", axis);
      a.set("begin", begin);
      a.set("size", size);
      out[i] = c.graph.add("slice", {dy}, a, grad_name(c, std::to_string(i)));
    }
    begin += size;
  }
  return out;
}

std::vector<int> grad_batch_matmul(GradContext& c) {
  const Node n = c.graph.node(c.node);
  const int a = n.inputs[0], b = n.inputs[1], dy = c.output_grads[0];
  if (dy < 0) return {-1, -1};
  const std::int64_t ta = n.attrs.i_or("transpose_a", 0), tb = n.attrs.i_or("transpose_b", 0);
  auto bmm = [&](int x, int y, std::int64_t tx, std::int64_t ty, const char* suffix) {
    Attrs at;
    at.set("transpose_a", tx);
    at.set("transpose_b", ty);
    return c.graph.add("batch_matmul", {x, y}, at, grad_name(c, suffix));
  };
  // C = op(A) op(B): dop(A) = dC op(B)^T, dop(B) = op(A)^T dC, transposed back where op transposed.
  const int da = !c.needs[0] ? -1 : ta ? bmm(b, dy, tb, 1, "a") : bmm(dy, b, 0, 1 - tb, "a");
  const int db = !c.needs[1] ? -1 : tb ? bmm(dy, a, 1, ta, "b") : bmm(a, dy, 1 - ta, 0, "b");
  return {da, db};
}

std::vector<int> grad_l2_normalize(GradContext& c) {
  const Node n = c.graph.node(c.node);
  const int dy = c.output_grads[0];
  if (dy < 0 || !c.needs[0]) return {-1};
  Attrs a;
  a.set("axis", n.attrs.i("axis"));
  return {c.graph.add("l2_normalize_grad", {n.inputs[0], dy}, a, grad_name(c, "x"))};
}

}  // namespace op_rules::merge

}  // namespace nnfit
