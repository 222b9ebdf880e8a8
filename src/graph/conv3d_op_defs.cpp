// Shape inference and gradient rules of the 3-D window ops (docs/design/ops.md): conv3d,
// fused_conv3d, conv3d_backprop_input, conv3d_backprop_filter, max_pool3d(_grad) and
// avg_pool3d(_grad), over x [N,D,H,W,C] and w [KD,KH,KW,C/G,O]. They are core_op_defs.cpp's 2-D
// rules with a depth axis: TensorFlow's padding per axis (tf_padding) on the dilated extent.

#include "nnfit/core/error.h"
#include "nnfit/graph/graph.h"
#include "nnfit/graph/op_def.h"

namespace nnfit {

namespace op_rules::conv3d {

using Descs = std::vector<TensorDesc>;
using Ints = std::vector<std::int64_t>;

void expect_count(const Descs& in, std::size_t n, const char* op) {
  NNFIT_CHECK(in.size() == n, InvalidArgument, op, " expects ", n, " inputs, got ", in.size());
}

// Attribute `key` as three positive integers; `fallback` when absent and not empty.
Ints triple(const Attrs& a, const char* key, const Ints& fallback = {}) {
  if (!a.has(key) && !fallback.empty()) return fallback;
  const Ints& v = a.ints(key);
  NNFIT_CHECK(v.size() == 3 && v[0] > 0 && v[1] > 0 && v[2] > 0, InvalidArgument, key,
              " must be three positive integers (depth, height, width), got ", a.to_string());
  return v;
}

// The output [N,OD,OH,OW,channels] of a window k (taps `dilation` apart) over x [N,D,H,W,C]
// under attrs strides and padding.
Shape window_out_shape(const Shape& x, const Ints& k, const Ints& dilation, std::int64_t channels, const Attrs& a) {
  NNFIT_CHECK(x.rank() == 5, InvalidArgument, "a 3-D window op needs an NDHWC input, got ", x.to_string());
  const Ints st = triple(a, "strides");
  const std::string& padding = a.s("padding");
  NNFIT_CHECK(padding == "valid" || padding == "same", InvalidArgument,
              "padding must be \"valid\" or \"same\", got \"", padding, "\"");
  Ints out{x[0]};
  for (std::size_t i = 0; i < 3; ++i) {
    const Padding1d p = tf_padding(x[static_cast<int>(i) + 1], (k[i] - 1) * dilation[i] + 1, st[i], padding);
    NNFIT_CHECK(p.out > 0, InvalidArgument, "a ", k[0], "x", k[1], "x", k[2], " window",
                (dilation != Ints{1, 1, 1} ? " (dilated " + std::to_string(dilation[0]) + "x" +
                                                 std::to_string(dilation[1]) + "x" + std::to_string(dilation[2]) + ")"
                                           : std::string()),
                " does not fit input ", x.to_string(), " with padding \"", padding, "\"");
    out.push_back(p.out);
  }
  out.push_back(channels);
  return Shape(out);
}

// The output of convolving x [N,D,H,W,C] by w [KD,KH,KW,C/groups,O] under attrs strides,
// padding, dilations (default [1,1,1]) and groups (default 1).
Shape conv_out_shape(const Shape& x, const Shape& w, const Attrs& a) {
  NNFIT_CHECK(x.rank() == 5 && w.rank() == 5, InvalidArgument,
              "a 3-D convolution needs an NDHWC input and a DHWIO kernel, got ", x.to_string(), " and ", w.to_string());
  const std::int64_t groups = a.i_or("groups", 1);
  NNFIT_CHECK(groups > 0, InvalidArgument, "groups must be positive, got ", groups);
  NNFIT_CHECK(x[4] % groups == 0 && w[4] % groups == 0 && w[3] * groups == x[4], InvalidArgument, "kernel ",
              w.to_string(), " with groups = ", groups, " does not fit an input of ", x[4], " channels (",
              x.to_string(), ")");
  return window_out_shape(x, {w[0], w[1], w[2]}, triple(a, "dilations", {1, 1, 1}), w[4], a);
}

Descs infer_conv3d(const Descs& in, const Attrs& a) {
  NNFIT_CHECK(in.size() == 2 || in.size() == 3, InvalidArgument, "conv3d expects 2 or 3 inputs, got ", in.size());
  if (in.size() == 3) {
    NNFIT_CHECK(in[1].shape.rank() == 5 && in[2].shape == Shape{in[1].shape[4]}, InvalidArgument,
                "bias of shape ", in[2].shape.to_string(), " does not match the kernel's outputs ",
                in[1].shape.to_string());
  }
  return {{conv_out_shape(in[0].shape, in[1].shape, a), DType::f32}};
}

Descs infer_conv3d_backprop_input(const Descs& in, const Attrs& a) {
  expect_count(in, 2, "conv3d_backprop_input");
  const Shape xs(a.ints("input_shape"));
  NNFIT_CHECK(conv_out_shape(xs, in[1].shape, a) == in[0].shape, InvalidArgument, "dy shape ",
              in[0].shape.to_string(), " does not match input_shape ", xs.to_string());
  return {{xs, DType::f32}};
}

Descs infer_conv3d_backprop_filter(const Descs& in, const Attrs& a) {
  expect_count(in, 2, "conv3d_backprop_filter");
  const Shape ws(a.ints("filter_shape"));
  NNFIT_CHECK(conv_out_shape(in[0].shape, ws, a) == in[1].shape, InvalidArgument, "dy shape ",
              in[1].shape.to_string(), " does not match the convolution of ", in[0].shape.to_string(), " by ",
              ws.to_string());
  return {{ws, DType::f32}};
}

Descs infer_pool3d(const Descs& in, const Attrs& a) {
  expect_count(in, 1, "3-D pooling");
  const Shape& x = in[0].shape;
  NNFIT_CHECK(x.rank() == 5, InvalidArgument, "3-D pooling needs an NDHWC input, got ", x.to_string());
  return {{window_out_shape(x, triple(a, "pool_size"), {1, 1, 1}, x[4], a), DType::f32}};
}

Descs infer_max_pool3d_grad(const Descs& in, const Attrs& a) {
  expect_count(in, 3, "max_pool3d_grad");
  const Shape y = infer_pool3d({in[0]}, a)[0].shape;
  NNFIT_CHECK(in[1].shape == y && in[2].shape == y, InvalidArgument, "max_pool3d_grad: y ", in[1].shape.to_string(),
              " and dy ", in[2].shape.to_string(), " must both be the pooled shape ", y.to_string());
  return {in[0]};
}

Descs infer_avg_pool3d_grad(const Descs& in, const Attrs& a) {
  expect_count(in, 1, "avg_pool3d_grad");
  const Shape xs(a.ints("input_shape"));
  const Shape y = infer_pool3d({{xs, DType::f32}}, a)[0].shape;
  NNFIT_CHECK(in[0].shape == y, InvalidArgument, "avg_pool3d_grad: dy ", in[0].shape.to_string(),
              " is not the pooled shape ", y.to_string(), " of input_shape ", xs.to_string());
  return {{xs, DType::f32}};
}

// --- gradient rules ---

std::string grad_name(GradContext& c, const std::string& suffix) {
  return c.graph.node(c.node).name + "/grad_" + suffix;
}

// The window attributes a gradient op carries over from its forward op.
Attrs window_attrs(const Attrs& from) {
  Attrs a;
  for (const char* key : {"strides", "dilations", "pool_size"}) {
    if (from.has(key)) a.set(key, from.ints(key));
  }
  a.set("padding", from.s("padding"));
  if (from.has("groups")) a.set("groups", from.i("groups"));
  return a;
}

std::vector<int> grad_conv3d(GradContext& c) {
  const Node n = c.graph.node(c.node);
  const int dy = c.output_grads[0];
  std::vector<int> out{-1, -1};
  if (dy < 0) return out;
  if (c.needs[0]) {
    Attrs a = window_attrs(n.attrs);
    a.set("input_shape", c.graph.desc(n.inputs[0]).shape.dims());
    out[0] = c.graph.add("conv3d_backprop_input", {dy, n.inputs[1]}, a, grad_name(c, "input"));
  }
  if (c.needs[1]) {
    Attrs a = window_attrs(n.attrs);
    a.set("filter_shape", c.graph.desc(n.inputs[1]).shape.dims());
    out[1] = c.graph.add("conv3d_backprop_filter", {n.inputs[0], dy}, a, grad_name(c, "kernel"));
  }
  return out;
}

// conv3d_backprop_input(dy, w) is linear in both (as its 2-D form): the adjoint in dy is
// conv3d(g, w), the filter gradient conv3d_backprop_filter(g, dy).
std::vector<int> grad_conv3d_backprop_input(GradContext& c) {
  const Node n = c.graph.node(c.node);
  const int g = c.output_grads[0];
  std::vector<int> out{-1, -1};
  if (g < 0) return out;
  if (c.needs[0]) out[0] = c.graph.add("conv3d", {g, n.inputs[1]}, window_attrs(n.attrs), grad_name(c, "dy"));
  if (c.needs[1]) {
    Attrs a = window_attrs(n.attrs);
    a.set("filter_shape", c.graph.desc(n.inputs[1]).shape.dims());
    out[1] = c.graph.add("conv3d_backprop_filter", {g, n.inputs[0]}, a, grad_name(c, "kernel"));
  }
  return out;
}

std::vector<int> grad_max_pool3d(GradContext& c) {
  const Node n = c.graph.node(c.node);
  const int dy = c.output_grads[0];
  if (dy < 0 || !c.needs[0]) return {-1};
  return {c.graph.add("max_pool3d_grad", {n.inputs[0], n.outputs[0], dy}, window_attrs(n.attrs), grad_name(c, "x"))};
}

std::vector<int> grad_avg_pool3d(GradContext& c) {
  const Node n = c.graph.node(c.node);
  const int dy = c.output_grads[0];
  if (dy < 0 || !c.needs[0]) return {-1};
  Attrs a = window_attrs(n.attrs);
  a.set("input_shape", c.graph.desc(n.inputs[0]).shape.dims());
  return {c.graph.add("avg_pool3d_grad", {dy}, a, grad_name(c, "x"))};
}

}  // namespace op_rules::conv3d

}  // namespace nnfit
