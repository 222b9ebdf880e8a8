// Shape inference and gradient rules of the data-movement ops (docs/design/ops.md): pad
// (zeros, or a constant `value`) and crop, each the other's gradient; transpose; repeat
// (NumPy's repeat along one axis) and repeat_grad. Keras's ZeroPadding, Cropping,
// UpSampling, Permute and RepeatVector layers are made of them. Axes count the batch axis.

#include "nnfit/core/error.h"
#include "nnfit/graph/graph.h"
#include "nnfit/graph/op_def.h"

namespace nnfit {

namespace op_rules::shape {

using Descs = std::vector<TensorDesc>;

void expect_one(const Descs& in, const char* op) {
  NNFIT_CHECK(in.size() == 1, InvalidArgument, op, " expects 1 input, got ", in.size());
}

std::vector<std::int64_t> per_axis(const Shape& s, const Attrs& a, const char* key, const char* op) {
  std::vector<std::int64_t> v = a.ints(key);
  NNFIT_CHECK(static_cast<std::int64_t>(v.size()) == s.rank(), InvalidArgument, op, ": ", key, " has ", v.size(),
              " entries for shape ", s.to_string());
  for (std::int64_t x : v) NNFIT_CHECK(x >= 0, InvalidArgument, op, ": ", key, " entries must be >= 0");
  return v;
}

Descs infer_pad(const Descs& in, const Attrs& a) {
  expect_one(in, "pad");
  const auto before = per_axis(in[0].shape, a, "before", "pad"), after = per_axis(in[0].shape, a, "after", "pad");
  std::vector<std::int64_t> out = in[0].shape.dims();
  for (std::size_t d = 0; d < out.size(); ++d) out[d] += before[d] + after[d];
  return {{Shape(out), DType::f32}};
}

Descs infer_crop(const Descs& in, const Attrs& a) {
  expect_one(in, "crop");
  const auto begin = per_axis(in[0].shape, a, "begin", "crop"), size = per_axis(in[0].shape, a, "shape", "crop");
  for (std::size_t d = 0; d < begin.size(); ++d) {
    NNFIT_CHECK(begin[d] + size[d] <= in[0].shape[static_cast<std::int64_t>(d)], InvalidArgument, "crop: [", begin[d],
                ", ", begin[d] + size[d], ") is outside axis ", d, " of ", in[0].shape.to_string());
  }
  return {{Shape(size), DType::f32}};
}

Descs infer_transpose(const Descs& in, const Attrs& a) {
  expect_one(in, "transpose");
  const std::vector<std::int64_t> perm = a.ints("perm");
  const Shape& s = in[0].shape;
  NNFIT_CHECK(static_cast<std::int64_t>(perm.size()) == s.rank(), InvalidArgument, "transpose: perm has ",
              perm.size(), " entries for shape ", s.to_string());
  std::vector<bool> seen(perm.size(), false);
  std::vector<std::int64_t> out;
  for (std::int64_t p : perm) {
    NNFIT_CHECK(p >= 0 && p < s.rank() && !seen[static_cast<std::size_t>(p)], InvalidArgument,
                "transpose: perm must be a permutation of 0..", s.rank() - 1);
    seen[static_cast<std::size_t>(p)] = true;
    out.push_back(s[p]);
  }
  return {{Shape(out), DType::f32}};
}

std::int64_t checked_repeat_axis(const Shape& s, const Attrs& a, const char* op) {
  const std::int64_t axis = a.i("axis");
  NNFIT_CHECK(axis >= 0 && axis < s.rank(), InvalidArgument, op, ": axis ", axis, " is out of range for shape ",
              s.to_string());
  NNFIT_CHECK(a.i("repeats") >= 1, InvalidArgument, op, ": repeats must be >= 1, got ", a.i("repeats"));
  return axis;
}

Descs infer_repeat(const Descs& in, const Attrs& a) {
  expect_one(in, "repeat");
  const std::int64_t axis = checked_repeat_axis(in[0].shape, a, "repeat");
  std::vector<std::int64_t> out = in[0].shape.dims();
  out[static_cast<std::size_t>(axis)] *= a.i("repeats");
  return {{Shape(out), DType::f32}};
}

Descs infer_repeat_grad(const Descs& in, const Attrs& a) {
  expect_one(in, "repeat_grad");
  const std::int64_t axis = checked_repeat_axis(in[0].shape, a, "repeat_grad");
  std::vector<std::int64_t> out = in[0].shape.dims();
  NNFIT_CHECK(out[static_cast<std::size_t>(axis)] % a.i("repeats") == 0, InvalidArgument,
              "repeat_grad: axis ", axis, " of ", in[0].shape.to_string(), " is not a multiple of ", a.i("repeats"));
  out[static_cast<std::size_t>(axis)] /= a.i("repeats");
  return {{Shape(out), DType::f32}};
}

std::string grad_name(GradContext& c) { return c.graph.node(c.node).name + "/grad_x"; }

std::vector<int> grad_pad(GradContext& c) {
  const Node n = c.graph.node(c.node);
  const int dy = c.output_grads[0];
  if (dy < 0 || !c.needs[0]) return {-1};
  Attrs a;
  a.set("begin", n.attrs.ints("before"));
  a.set("shape", c.graph.desc(n.inputs[0]).shape.dims());
  return {c.graph.add("crop", {dy}, a, grad_name(c))};
}

std::vector<int> grad_crop(GradContext& c) {
  const Node n = c.graph.node(c.node);
  const int dy = c.output_grads[0];
  if (dy < 0 || !c.needs[0]) return {-1};
  const Shape& x = c.graph.desc(n.inputs[0]).shape;
  const std::vector<std::int64_t> begin = n.attrs.ints("begin"), size = n.attrs.ints("shape");
  std::vector<std::int64_t> after;
  for (std::int64_t d = 0; d < x.rank(); ++d) {
    after.push_back(x[d] - begin[static_cast<std::size_t>(d)] - size[static_cast<std::size_t>(d)]);
  }
  Attrs a;
  a.set("before", begin);
  a.set("after", after);
  return {c.graph.add("pad", {dy}, a, grad_name(c))};
}

std::vector<int> grad_transpose(GradContext& c) {
  const Node n = c.graph.node(c.node);
  const int dy = c.output_grads[0];
  if (dy < 0 || !c.needs[0]) return {-1};
  const std::vector<std::int64_t> perm = n.attrs.ints("perm");
  std::vector<std::int64_t> inverse(perm.size());
  for (std::size_t i = 0; i < perm.size(); ++i) inverse[static_cast<std::size_t>(perm[i])] = static_cast<std::int64_t>(i);
  Attrs a;
  a.set("perm", inverse);
  return {c.graph.add("transpose", {dy}, a, grad_name(c))};
}

std::vector<int> grad_repeat(GradContext& c) {
  const Node n = c.graph.node(c.node);
  const int dy = c.output_grads[0];
  if (dy < 0 || !c.needs[0]) return {-1};
  Attrs a;
  a.set("axis", n.attrs.i("axis"));
  a.set("repeats", n.attrs.i("repeats"));
  return {c.graph.add("repeat_grad", {dy}, a, grad_name(c))};
}

}  // namespace op_rules::shape

}  // namespace nnfit
