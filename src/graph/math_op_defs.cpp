// Shape inference and gradient rules of the tensor-algebra ops keras.ops needs
// (docs/design/ops.md, "Tensor algebra"): unary and binary element-wise ops with a `kind`,
// NumPy broadcasting (binary, where, broadcast_to), reductions over any axes, arg_reduce, argsort,
// cumulative sums and products. Floating dtypes only, all inputs of one dtype (the front
// end casts first); comparisons and logical ops give 0/1 in that dtype. Gradients that
// reach a broadcast operand are summed over the axes it was broadcast along.

#include "backend/common/math_fns.h"
#include "nnfit/core/error.h"
#include "nnfit/graph/graph.h"
#include "nnfit/graph/op_def.h"

namespace nnfit {

namespace op_rules::math {

using Descs = std::vector<TensorDesc>;

void expect_inputs(const Descs& in, std::size_t n, const char* op) {
  NNFIT_CHECK(in.size() == n, InvalidArgument, op, " expects ", n, " inputs, got ", in.size());
}

// Every input floating and of one dtype.
void expect_one_float_dtype(const Descs& in, const char* op) {
  for (const TensorDesc& t : in) {
    NNFIT_CHECK(is_floating(t.dtype), InvalidArgument, op, " takes float32, float16 or bfloat16 tensors, got ",
                dtype_name(t.dtype));
    NNFIT_CHECK(t.dtype == in[0].dtype, InvalidArgument, op, ": inputs of dtypes ", dtype_name(in[0].dtype), " and ",
                dtype_name(t.dtype), " (cast them to one dtype first)");
  }
}

Shape broadcast_all(const std::vector<Shape>& shapes, const char* op) {
  Shape out = shapes[0];
  for (std::size_t i = 1; i < shapes.size(); ++i) {
    const std::optional<Shape> s = broadcast_shape(out, shapes[i]);
    if (!s) {
      std::string all;
      for (const Shape& x : shapes) all += (all.empty() ? "" : " and ") + x.to_string();
      throw InvalidArgument(std::string(op) + ": shapes " + all + " do not broadcast together (NumPy's rules)");
    }
    out = *s;
  }
  NNFIT_CHECK(out.rank() <= kMathMaxRank, InvalidArgument, op, ": shape ", out.to_string(), " has more than ",
              kMathMaxRank, " axes");
  return out;
}

Descs infer_unary(const Descs& in, const Attrs& a) {
  expect_inputs(in, 1, "unary");
  expect_one_float_dtype(in, "unary");
  unary_kind(a.s("kind"));
  return {{in[0].shape, DType::f32}};
}

Descs infer_unary_grad(const Descs& in, const Attrs& a) {
  expect_inputs(in, 2, "unary_grad");
  unary_kind(a.s("kind"));
  NNFIT_CHECK(in[0].shape == in[1].shape, InvalidArgument, "unary_grad: x ", in[0].shape.to_string(), " and dy ",
              in[1].shape.to_string(), " differ");
  return {{in[0].shape, DType::f32}};
}

Descs infer_binary(const Descs& in, const Attrs& a) {
  expect_inputs(in, 2, "binary");
  expect_one_float_dtype(in, "binary");
  binary_kind(a.s("kind"));
  return {{broadcast_all({in[0].shape, in[1].shape}, "binary"), DType::f32}};
}

Descs infer_binary_grad(const Descs& in, const Attrs& a) {
  expect_inputs(in, 3, "binary_grad");
  binary_kind(a.s("kind"));
  const Shape y = broadcast_all({in[0].shape, in[1].shape}, "binary_grad");
  NNFIT_CHECK(in[2].shape == y, InvalidArgument, "binary_grad: dy ", in[2].shape.to_string(), " is not the broadcast shape ",
              y.to_string());
  return {{in[0].shape, DType::f32}, {in[1].shape, DType::f32}};
}

Descs infer_reduce(const Descs& in, const Attrs& a) {
  expect_inputs(in, 1, "reduce");
  expect_one_float_dtype(in, "reduce");
  reduce_kind(a.s("kind"));
  const auto axes = reduce_axes(in[0].shape, a.has("axes") ? a.ints("axes") : std::vector<std::int64_t>{}, "reduce");
  return {{reduced_shape(in[0].shape, axes, a.i_or("keepdims", 0) != 0), DType::f32}};
}

// x, y, dy -> dx like x.
Descs infer_reduce_grad(const Descs& in, const Attrs& a) {
  expect_inputs(in, 3, "reduce_grad");
  reduce_kind(a.s("kind"));
  const auto axes = reduce_axes(in[0].shape, a.has("axes") ? a.ints("axes") : std::vector<std::int64_t>{}, "reduce_grad");
  const std::int64_t n = reduced_shape(in[0].shape, axes, true).numel();
  NNFIT_CHECK(in[1].shape.numel() == n && in[2].shape.numel() == n, InvalidArgument, "reduce_grad: y ",
              in[1].shape.to_string(), " and dy ", in[2].shape.to_string(), " do not match the reduction of ",
              in[0].shape.to_string());
  return {{in[0].shape, DType::f32}};
}

Descs infer_where(const Descs& in, const Attrs&) {
  expect_inputs(in, 3, "where");
  expect_one_float_dtype(in, "where");
  return {{broadcast_all({in[0].shape, in[1].shape, in[2].shape}, "where"), DType::f32}};
}

// cond, dy -> da of a_shape, db of b_shape.
Descs infer_where_grad(const Descs& in, const Attrs& a) {
  expect_inputs(in, 2, "where_grad");
  const Shape sa(a.ints("a_shape")), sb(a.ints("b_shape"));
  const Shape y = broadcast_all({in[0].shape, sa, sb}, "where_grad");
  NNFIT_CHECK(in[1].shape == y, InvalidArgument, "where_grad: dy ", in[1].shape.to_string(), " is not the broadcast shape ",
              y.to_string());
  return {{sa, DType::f32}, {sb, DType::f32}};
}

Descs infer_arg_reduce(const Descs& in, const Attrs& a) {
  expect_inputs(in, 1, "arg_reduce");
  expect_one_float_dtype(in, "arg_reduce");
  const std::string& kind = a.s("kind");
  NNFIT_CHECK(kind == "argmax" || kind == "argmin", InvalidArgument, "arg_reduce: kind must be argmax or argmin, got '",
              kind, "'");
  NNFIT_CHECK(in[0].shape.rank() > 0, InvalidArgument, "arg_reduce: x must have an axis, got shape ", in[0].shape.to_string());
  const std::int64_t axis = checked_axis(in[0].shape, a.i("axis"), "arg_reduce");
  NNFIT_CHECK(in[0].shape[static_cast<int>(axis)] > 0, InvalidArgument, "arg_reduce: axis ", axis, " of ",
              in[0].shape.to_string(), " is empty");
  return {{reduced_shape(in[0].shape, {axis}, a.i_or("keepdims", 0) != 0), DType::i32}};
}

// x -> i32 indices of x's shape: the order that sorts each line along the axis.
Descs infer_argsort(const Descs& in, const Attrs& a) {
  expect_inputs(in, 1, "argsort");
  expect_one_float_dtype(in, "argsort");
  NNFIT_CHECK(in[0].shape.rank() > 0, InvalidArgument, "argsort: x must have an axis, got shape ", in[0].shape.to_string());
  checked_axis(in[0].shape, a.i("axis"), "argsort");
  NNFIT_CHECK(in[0].shape.dim(static_cast<int>(checked_axis(in[0].shape, a.i("axis"), "argsort"))) <= (std::int64_t{1} << 31) - 1,
              InvalidArgument, "argsort: the axis is longer than int32 indices can hold");
  return {{in[0].shape, DType::i32}};
}

void check_cumulative(const Shape& x, const Attrs& a, const char* op) {
  const std::string& kind = a.s("kind");
  NNFIT_CHECK(kind == "cumsum" || kind == "cumprod", InvalidArgument, op, ": kind must be cumsum or cumprod, got '", kind,
              "'");
  checked_axis(x, a.i("axis"), op);
}

Descs infer_cumulative(const Descs& in, const Attrs& a) {
  expect_inputs(in, 1, "cumulative");
  expect_one_float_dtype(in, "cumulative");
  check_cumulative(in[0].shape, a, "cumulative");
  return {{in[0].shape, DType::f32}};
}

// x, y, dy -> dx like x.
Descs infer_cumulative_grad(const Descs& in, const Attrs& a) {
  expect_inputs(in, 3, "cumulative_grad");
  check_cumulative(in[0].shape, a, "cumulative_grad");
  NNFIT_CHECK(in[1].shape == in[0].shape && in[2].shape == in[0].shape, InvalidArgument, "cumulative_grad: x ",
              in[0].shape.to_string(), ", y ", in[1].shape.to_string(), " and dy ", in[2].shape.to_string(), " differ");
  return {{in[0].shape, DType::f32}};
}

Descs infer_nan_to_num(const Descs& in, const Attrs& a) {
  expect_inputs(in, 1, "nan_to_num");
  expect_one_float_dtype(in, "nan_to_num");
  nan_to_num_values(a);  // the attrs, when given, are floats
  return {{in[0].shape, DType::f32}};
}

Descs infer_broadcast_to(const Descs& in, const Attrs& a) {
  expect_inputs(in, 1, "broadcast_to");
  expect_one_float_dtype(in, "broadcast_to");
  const Shape out(a.ints("shape"));
  const std::optional<Shape> s = broadcast_shape(in[0].shape, out);
  NNFIT_CHECK(in[0].shape.rank() <= out.rank() && s && *s == out && out.rank() <= kMathMaxRank, InvalidArgument,
              "broadcast_to: shape ", in[0].shape.to_string(), " does not broadcast to ", out.to_string(),
              " (NumPy's rules, at most ", kMathMaxRank, " axes)");
  return {{out, DType::f32}};
}

std::string grad_name(GradContext& c, const std::string& suffix) { return c.graph.node(c.node).name + "/grad_" + suffix; }

Attrs kind_attr(const Node& n) {
  Attrs a;
  a.set("kind", n.attrs.s("kind"));
  return a;
}

std::vector<int> grad_unary(GradContext& c) {
  const Node n = c.graph.node(c.node);
  const int dy = c.output_grads[0];
  if (dy < 0 || !c.needs[0] || unary_is_constant(unary_kind(n.attrs.s("kind")))) return {-1};
  return {c.graph.add("unary_grad", {n.inputs[0], dy}, kind_attr(n), grad_name(c, "x"))};
}

std::vector<int> grad_binary(GradContext& c) {
  const Node n = c.graph.node(c.node);
  const int dy = c.output_grads[0];
  if (dy < 0 || binary_is_constant(binary_kind(n.attrs.s("kind")))) return {-1, -1};
  const std::vector<int> g = c.graph.add_node("binary_grad", {n.inputs[0], n.inputs[1], dy}, kind_attr(n), grad_name(c, "ab"));
  return {c.needs[0] ? g[0] : -1, c.needs[1] ? g[1] : -1};
}

// dy summed back to `to` from its broadcast shape: a reduce sum keeping dims, then a
// reshape where `to` has fewer axes; dy itself where nothing was broadcast.
int sum_to(GradContext& c, int dy, const Shape& to, const std::string& suffix) {
  const Shape from = c.graph.desc(dy).shape;
  if (from == to) return dy;
  std::vector<std::int64_t> axes;
  for (int d = 0; d < from.rank(); ++d) {
    const int td = d - (from.rank() - to.rank());
    if (td < 0 || (to[td] == 1 && from[d] != 1)) axes.push_back(d);
  }
  int v = dy;
  if (!axes.empty()) {
    Attrs a;
    a.set("kind", std::string("sum"));
    a.set("axes", axes);
    a.set("keepdims", std::int64_t{1});
    v = c.graph.add("reduce", {v}, a, grad_name(c, suffix + "_sum"));
  }
  if (c.graph.desc(v).shape != to) {
    Attrs a;
    a.set("shape", to.dims());
    v = c.graph.add("reshape", {v}, a, grad_name(c, suffix));
  }
  return v;
}

std::vector<int> grad_reduce(GradContext& c) {
  const Node n = c.graph.node(c.node);
  const int dy = c.output_grads[0];
  if (dy < 0 || !c.needs[0]) return {-1};
  const Shape x = c.graph.desc(n.inputs[0]).shape;
  Attrs a = kind_attr(n);
  if (n.attrs.has("axes")) a.set("axes", n.attrs.ints("axes"));
  if (reduce_kind(n.attrs.s("kind")) != ReduceKind::sum) {
    return {c.graph.add("reduce_grad", {n.inputs[0], n.outputs[0], dy}, a, grad_name(c, "x"))};
  }
  const Shape kept = reduced_shape(x, reduce_axes(x, n.attrs.has("axes") ? n.attrs.ints("axes") : std::vector<std::int64_t>{}, "reduce"), true);
  int v = dy;
  if (c.graph.desc(v).shape != kept) {
    Attrs r;
    r.set("shape", kept.dims());
    v = c.graph.add("reshape", {v}, r, grad_name(c, "kept"));
  }
  Attrs b;
  b.set("shape", x.dims());
  return {c.graph.add("broadcast_to", {v}, b, grad_name(c, "x"))};
}

std::vector<int> grad_where(GradContext& c) {
  const Node n = c.graph.node(c.node);
  const int dy = c.output_grads[0];
  if (dy < 0 || (!c.needs[1] && !c.needs[2])) return {-1, -1, -1};
  Attrs a;
  a.set("a_shape", c.graph.desc(n.inputs[1]).shape.dims());
  a.set("b_shape", c.graph.desc(n.inputs[2]).shape.dims());
  const std::vector<int> g = c.graph.add_node("where_grad", {n.inputs[0], dy}, a, grad_name(c, "ab"));
  return {-1, c.needs[1] ? g[0] : -1, c.needs[2] ? g[1] : -1};  // none to cond
}

std::vector<int> grad_cumulative(GradContext& c) {
  const Node n = c.graph.node(c.node);
  const int dy = c.output_grads[0];
  if (dy < 0 || !c.needs[0]) return {-1};
  Attrs a = kind_attr(n);
  a.set("axis", n.attrs.i("axis"));
  a.set("reverse", n.attrs.i_or("reverse", 0));
  return {c.graph.add("cumulative_grad", {n.inputs[0], n.outputs[0], dy}, a, grad_name(c, "x"))};
}

// dx = dy where x is finite; 0 where nan_to_num replaced it (a constant there).
std::vector<int> grad_nan_to_num(GradContext& c) {
  const Node n = c.graph.node(c.node);
  const int dy = c.output_grads[0];
  if (dy < 0 || !c.needs[0]) return {-1};
  Attrs finite;
  finite.set("kind", std::string("isfinite"));
  const int mask = c.graph.add("unary", {n.inputs[0]}, finite, grad_name(c, "finite"));
  return {c.graph.add("mul", {dy, mask}, {}, grad_name(c, "x"))};
}

std::vector<int> grad_broadcast_to(GradContext& c) {
  const Node n = c.graph.node(c.node);
  const int dy = c.output_grads[0];
  if (dy < 0 || !c.needs[0]) return {-1};
  return {sum_to(c, dy, c.graph.desc(n.inputs[0]).shape, "x")};
}

}  // namespace op_rules::math

}  // namespace nnfit
