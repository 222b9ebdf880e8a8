// Shape inference and gradient rules of the reductions (docs/design/ops.md): reduce_mean
// and reduce_max over a run of adjacent axes (Keras's global poolings: the spatial axes,
// channels last or first), with keepdims. Kernels see a tensor as [outer, reduced, inner].

#include "nnfit/core/error.h"
#include "nnfit/graph/graph.h"
#include "nnfit/graph/op_def.h"

namespace nnfit {

namespace op_rules::reduce {

using Descs = std::vector<TensorDesc>;

// The axes attribute: ascending, adjacent, within the rank, not empty.
std::vector<std::int64_t> checked_axes(const Shape& s, const Attrs& a, const char* op) {
  const std::vector<std::int64_t> axes = a.ints("axes");
  NNFIT_CHECK(!axes.empty(), InvalidArgument, op, ": axes must not be empty");
  for (std::size_t i = 0; i < axes.size(); ++i) {
    NNFIT_CHECK(axes[i] >= 0 && axes[i] < s.rank(), InvalidArgument, op, ": axis ", axes[i],
                " is out of range for shape ", s.to_string());
    NNFIT_CHECK(i == 0 || axes[i] == axes[i - 1] + 1, InvalidArgument, op,
                ": axes must be adjacent and ascending, got axis ", axes[i], " after ", axes[i - 1]);
  }
  return axes;
}

Shape reduced_shape(const Shape& s, const std::vector<std::int64_t>& axes, bool keepdims) {
  std::vector<std::int64_t> out;
  for (std::int64_t d = 0; d < s.rank(); ++d) {
    const bool reduced = d >= axes.front() && d <= axes.back();
    if (!reduced) out.push_back(s[d]);
    else if (keepdims) out.push_back(1);
  }
  return Shape(out);
}

Descs infer_reduce(const Descs& in, const Attrs& a) {
  NNFIT_CHECK(in.size() == 1, InvalidArgument, "a reduction expects 1 input, got ", in.size());
  const auto axes = checked_axes(in[0].shape, a, "reduce");
  return {{reduced_shape(in[0].shape, axes, a.i_or("keepdims", 0) != 0), DType::f32}};
}

// dy (the reduced shape) -> dx of input_shape.
Descs infer_reduce_mean_grad(const Descs& in, const Attrs& a) {
  NNFIT_CHECK(in.size() == 1, InvalidArgument, "reduce_mean_grad expects 1 input, got ", in.size());
  const Shape x(a.ints("input_shape"));
  const Shape reduced = reduced_shape(x, checked_axes(x, a, "reduce_mean_grad"), false);
  NNFIT_CHECK(in[0].shape.numel() == reduced.numel(), InvalidArgument, "reduce_mean_grad: dy ",
              in[0].shape.to_string(), " does not match the reduction of ", x.to_string());
  return {{x, DType::f32}};
}

// x, y, dy -> dx like x.
Descs infer_reduce_max_grad(const Descs& in, const Attrs& a) {
  NNFIT_CHECK(in.size() == 3, InvalidArgument, "reduce_max_grad expects 3 inputs, got ", in.size());
  checked_axes(in[0].shape, a, "reduce_max_grad");
  return {{in[0].shape, DType::f32}};
}

std::string grad_name(GradContext& c) { return c.graph.node(c.node).name + "/grad_x"; }

std::vector<int> grad_reduce_mean(GradContext& c) {
  const Node n = c.graph.node(c.node);
  const int dy = c.output_grads[0];
  if (dy < 0 || !c.needs[0]) return {-1};
  Attrs a;
  a.set("axes", n.attrs.ints("axes"));
  a.set("input_shape", c.graph.desc(n.inputs[0]).shape.dims());
  return {c.graph.add("reduce_mean_grad", {dy}, a, grad_name(c))};
}

std::vector<int> grad_reduce_max(GradContext& c) {
  const Node n = c.graph.node(c.node);
  const int dy = c.output_grads[0];
  if (dy < 0 || !c.needs[0]) return {-1};
  Attrs a;
  a.set("axes", n.attrs.ints("axes"));
  return {c.graph.add("reduce_max_grad", {n.inputs[0], n.outputs[0], dy}, a, grad_name(c))};
}

}  // namespace op_rules::reduce

}  // namespace nnfit
