// Shape inference and gradient rules of the core ops (dense, element-wise, convolution,
// pooling, loss, batch norm; the op table's `core::` rules, src/graph/ops.yaml). Kernels live
// in the backend; this file only knows shapes and how to build backward nodes.
#include <algorithm>

#include "nnfit/core/error.h"
#include "nnfit/core/pool_argmax.h"
#include "nnfit/graph/graph.h"
#include "nnfit/graph/op_def.h"

namespace nnfit {

namespace op_rules::core {

using Descs = std::vector<TensorDesc>;

void expect_count(const Descs& in, std::size_t lo, std::size_t hi = 0) {
  if (hi == 0) hi = lo;
  NNFIT_CHECK(in.size() >= lo && in.size() <= hi, InvalidArgument, "expected ",
              lo == hi ? std::to_string(lo) : std::to_string(lo) + "-" + std::to_string(hi),
              " inputs, got ", in.size());
}

void expect_rank(const TensorDesc& d, int rank, const char* what) {
  NNFIT_CHECK(d.shape.rank() == rank, InvalidArgument, what, " must have rank ", rank, ", got shape ",
              d.shape.to_string());
}

void expect_same(const TensorDesc& a, const TensorDesc& b, const char* what) {
  NNFIT_CHECK(a.shape == b.shape, InvalidArgument, what, ": shapes ", a.shape.to_string(), " and ",
              b.shape.to_string(), " differ");
}

TensorDesc f32(Shape s) { return {std::move(s), DType::f32}; }

Shape shape_attr(const Attrs& attrs, const char* key) { return Shape(attrs.ints(key)); }

// --- dense and elementwise ---

Descs infer_matmul(const Descs& in, const Attrs& a) {
  expect_count(in, 2);
  expect_rank(in[0], 2, "matmul a");
  expect_rank(in[1], 2, "matmul b");
  bool ta = a.i_or("transpose_a", 0) != 0, tb = a.i_or("transpose_b", 0) != 0;
  std::int64_t m = ta ? in[0].shape[1] : in[0].shape[0];
  std::int64_t k = ta ? in[0].shape[0] : in[0].shape[1];
  std::int64_t k2 = tb ? in[1].shape[1] : in[1].shape[0];
  std::int64_t n = tb ? in[1].shape[0] : in[1].shape[1];
  NNFIT_CHECK(k == k2, InvalidArgument, "inner dimensions differ: ", k, " vs ", k2);
  return {f32(Shape{m, n})};
}

Descs infer_fused_matmul(const Descs& in, const Attrs& a) {
  expect_count(in, 3);
  Descs out = infer_matmul({in[0], in[1]}, a);
  NNFIT_CHECK(in[2].shape == Shape{out[0].shape[1]}, InvalidArgument, "bias must have shape (",
              out[0].shape[1], ",)");
  return out;
}

Descs infer_bias_add(const Descs& in, const Attrs&) {
  expect_count(in, 2);
  NNFIT_CHECK(in[0].shape.rank() >= 1 && in[1].shape == Shape{in[0].shape.dim(-1)}, InvalidArgument,
              "bias of shape ", in[1].shape.to_string(), " does not match the last axis of ",
              in[0].shape.to_string());
  return {in[0]};
}

Descs infer_bias_add_grad(const Descs& in, const Attrs&) {
  expect_count(in, 1);
  return {f32(Shape{in[0].shape.dim(-1)})};
}

Descs infer_unary(const Descs& in, const Attrs&) {
  expect_count(in, 1);
  return {in[0]};
}

Descs infer_binary_same(const Descs& in, const Attrs&) {
  expect_count(in, 2);
  expect_same(in[0], in[1], "inputs");
  return {in[1]};
}

Descs infer_add_n(const Descs& in, const Attrs&) {
  NNFIT_CHECK(!in.empty(), InvalidArgument, "add_n needs at least one input");
  for (const TensorDesc& d : in) expect_same(in[0], d, "add_n inputs");
  return {in[0]};
}

Descs infer_reshape(const Descs& in, const Attrs& a) {
  expect_count(in, 1);
  Shape s = shape_attr(a, "shape");
  NNFIT_CHECK(s.numel() == in[0].shape.numel(), InvalidArgument, "cannot reshape ",
              in[0].shape.to_string(), " (", in[0].shape.numel(), " elements) to ", s.to_string());
  return {{s, in[0].dtype}};
}

// --- convolution and pooling ---

void check_spatial_attrs(const Attrs& a) {
  const auto& st = a.ints("strides");
  NNFIT_CHECK(st.size() == 2 && st[0] > 0 && st[1] > 0, InvalidArgument, "strides must be two positive integers");
  const std::string& p = a.s("padding");
  NNFIT_CHECK(p == "valid" || p == "same", InvalidArgument, "padding must be \"valid\" or \"same\", got \"", p, "\"");
}

// The output [N,OH,OW,channels] of a kh x kw window over x [N,H,W,C] whose taps are
// `dilations` apart, under attrs strides and padding.
Shape window_out_shape(const Shape& x, std::int64_t kh, std::int64_t kw, const std::vector<std::int64_t>& dilations,
                       std::int64_t channels, const Attrs& a) {
  check_spatial_attrs(a);
  const auto& st = a.ints("strides");
  Padding1d ph = tf_padding(x[1], (kh - 1) * dilations[0] + 1, st[0], a.s("padding"));
  Padding1d pw = tf_padding(x[2], (kw - 1) * dilations[1] + 1, st[1], a.s("padding"));
  NNFIT_CHECK(ph.out > 0 && pw.out > 0, InvalidArgument, "a ", kh, "x", kw, " window",
              (dilations[0] * dilations[1] > 1 ? " (dilated " + std::to_string(dilations[0]) + "x" +
                                                     std::to_string(dilations[1]) + ")"
                                               : std::string()),
              " does not fit input ", x.to_string(), " with padding \"", a.s("padding"), "\"");
  return Shape{x[0], ph.out, pw.out, channels};
}

// A convolution's dilations (default [1,1]) and groups (default 1), checked.
std::vector<std::int64_t> conv_dilations(const Attrs& a) {
  if (!a.has("dilations")) return {1, 1};
  const auto& d = a.ints("dilations");
  NNFIT_CHECK(d.size() == 2 && d[0] > 0 && d[1] > 0, InvalidArgument, "dilations must be two positive integers");
  return d;
}

std::int64_t conv_groups(const Attrs& a) {
  const std::int64_t groups = a.i_or("groups", 1);
  NNFIT_CHECK(groups > 0, InvalidArgument, "groups must be positive, got ", groups);
  return groups;
}

// The output of convolving x [N,H,W,C] by a filter [KH,KW,C/groups,O] under attrs strides,
// padding, dilations and groups; the filter's shape is checked against x's channels.
Shape conv_out_shape(const Shape& x, const Shape& w, const Attrs& a) {
  NNFIT_CHECK(x.rank() == 4 && w.rank() == 4, InvalidArgument, "a convolution needs an NHWC input and an HWIO kernel, got ",
              x.to_string(), " and ", w.to_string());
  check_spatial_attrs(a);
  const std::int64_t groups = conv_groups(a);
  NNFIT_CHECK(x[3] % groups == 0 && w[3] % groups == 0 && w[2] * groups == x[3], InvalidArgument, "kernel ",
              w.to_string(), " with groups = ", groups, " does not fit an input of ", x[3], " channels (",
              x.to_string(), ")");
  return window_out_shape(x, w[0], w[1], conv_dilations(a), w[3], a);
}

Descs infer_conv2d(const Descs& in, const Attrs& a) {
  expect_count(in, 2, 3);
  expect_rank(in[0], 4, "conv2d input (NHWC)");
  expect_rank(in[1], 4, "conv2d kernel (HWIO)");
  if (in.size() == 3) {
    NNFIT_CHECK(in[2].shape == Shape{in[1].shape[3]}, InvalidArgument, "bias must have shape (", in[1].shape[3], ",)");
  }
  return {f32(conv_out_shape(in[0].shape, in[1].shape, a))};
}

Descs infer_conv2d_backprop_input(const Descs& in, const Attrs& a) {
  expect_count(in, 2);
  Shape xs = shape_attr(a, "input_shape");
  NNFIT_CHECK(conv_out_shape(xs, in[1].shape, a) == in[0].shape, InvalidArgument, "dy shape ",
              in[0].shape.to_string(), " does not match input_shape ", xs.to_string());
  return {f32(xs)};
}

Descs infer_conv2d_backprop_filter(const Descs& in, const Attrs& a) {
  expect_count(in, 2);
  Shape ws = shape_attr(a, "filter_shape");
  NNFIT_CHECK(conv_out_shape(in[0].shape, ws, a) == in[1].shape, InvalidArgument, "dy shape ",
              in[1].shape.to_string(), " does not match the convolution of ", in[0].shape.to_string(), " by ",
              ws.to_string());
  return {f32(ws)};
}

Descs infer_pool(const Descs& in, const Attrs& a) {
  expect_count(in, 1);
  expect_rank(in[0], 4, "pooling input (NHWC)");
  const auto& ps = a.ints("pool_size");
  NNFIT_CHECK(ps.size() == 2 && ps[0] > 0 && ps[1] > 0, InvalidArgument, "pool_size must be two positive integers");
  return {f32(window_out_shape(in[0].shape, ps[0], ps[1], {1, 1}, in[0].shape[3], a))};
}

Descs infer_max_pool_grad(const Descs& in, const Attrs&) {
  expect_count(in, 3);
  expect_same(in[1], in[2], "y and dy");
  return {in[0]};
}

// dx, and the bias gradient of the layer before the pool: dx summed over N, H, W
// (fuse_bias_grad_into_pool_grad).
Descs infer_max_pool_grad_bias(const Descs& in, const Attrs& a) {
  Descs out = infer_max_pool_grad(in, a);
  expect_rank(in[0], 4, "pooling input (NHWC)");
  out.push_back(f32(Shape{in[0].shape.dim(-1)}));
  return out;
}

// max_pool2d's y and, per element of y, where its window's maximum is
// (fuse_pool_argmax): a byte, the position of the first maximum in the row-major order of
// the whole window (padding included), with bit 7 set when that maximum is not > 0 (for a
// relu gradient folded into the pool's). So windows of up to kMaxArgmaxWindow positions.
Descs infer_max_pool_argmax(const Descs& in, const Attrs& a) {
  Descs out = infer_pool(in, a);
  const auto& ps = a.ints("pool_size");
  NNFIT_CHECK(ps[0] * ps[1] <= kMaxArgmaxWindow, InvalidArgument, "a ", ps[0], "x", ps[1],
              " window has more positions than the ", kMaxArgmaxWindow, " an argmax byte holds");
  out.push_back({out[0].shape, DType::u8});
  return out;
}

// fused_conv2d followed by max_pool2d_argmax as one op (fuse_conv_into_pool_argmax): the
// convolution's output is never written. Attrs: the convolution's (strides, padding,
// dilations, groups, activation), and the pool's pool_size, pool_strides, pool_padding.
Descs infer_conv_max_pool_argmax(const Descs& in, const Attrs& a) {
  expect_count(in, 3);
  const Descs conv = infer_conv2d(in, a);
  Attrs pool;
  pool.set("pool_size", a.ints("pool_size"));
  pool.set("strides", a.ints("pool_strides"));
  pool.set("padding", a.s("pool_padding"));
  return infer_max_pool_argmax(conv, pool);
}

// dx from dy and the argmax of max_pool2d_argmax; attr input_shape is x's.
Descs infer_max_pool_argmax_grad(const Descs& in, const Attrs& a) {
  expect_count(in, 2);
  NNFIT_CHECK(in[1].dtype == DType::u8, InvalidArgument, "the argmax must be uint8 (max_pool2d_argmax's), got ",
              dtype_name(in[1].dtype));
  NNFIT_CHECK(in[0].shape == in[1].shape, InvalidArgument, "dy ", in[0].shape.to_string(), " and the argmax ",
              in[1].shape.to_string(), " must have one shape");
  Shape xs = shape_attr(a, "input_shape");
  Descs pooled = infer_pool({f32(xs)}, a);
  NNFIT_CHECK(pooled[0].shape == in[0].shape, InvalidArgument, "dy ", in[0].shape.to_string(),
              " is not the pooling of input_shape ", xs.to_string());
  return {f32(xs)};
}

// ... and the bias gradient of the layer before the pool (fuse_bias_grad_into_pool_grad).
Descs infer_max_pool_argmax_grad_bias(const Descs& in, const Attrs& a) {
  Descs out = infer_max_pool_argmax_grad(in, a);
  out.push_back(f32(Shape{out[0].shape.dim(-1)}));
  return out;
}

// A one-channel convolution's filter and bias gradients joined to the gradient of the max
// pool after it (fuse_pool_grad_into_filter_grad): max_pool2d_argmax_grad_bias(dy, argmax)
// -> (dy1, db), then conv2d_backprop_filter(x, dy1) -> dw, as (x, dy, argmax) -> (dw, db);
// dy1, the convolution's output gradient, is never written. Attrs: the filter gradient's
// (strides, padding, dilations, groups, filter_shape) and the pool gradient's pool_size,
// relu and input_shape (the convolution's output), with its strides and padding as
// pool_strides and pool_padding.
Descs infer_conv_max_pool_argmax_grad(const Descs& in, const Attrs& a) {
  expect_count(in, 3);
  Attrs pool;
  pool.set("pool_size", a.ints("pool_size"));
  pool.set("strides", a.ints("pool_strides"));
  pool.set("padding", a.s("pool_padding"));
  pool.set("input_shape", a.ints("input_shape"));
  const Descs dy1 = infer_max_pool_argmax_grad({in[1], in[2]}, pool);
  Descs out = infer_conv2d_backprop_filter({in[0], dy1[0]}, a);
  out.push_back(f32(Shape{dy1[0].shape.dim(-1)}));
  return out;
}

Descs infer_avg_pool_grad(const Descs& in, const Attrs& a) {
  expect_count(in, 1);
  return {f32(shape_attr(a, "input_shape"))};
}

// --- losses ---

// pred, target and, optionally, one weight per sample [N] (Keras's sample_weight: each
// sample's loss times its weight, still averaged over the batch).
Descs infer_loss(const Descs& in, const Attrs& a) {
  NNFIT_CHECK(in.size() == 2 || in.size() == 3, InvalidArgument, "expected 2 inputs (pred, target) or 3 (and sample_weight), got ",
              in.size());
  if (in.size() == 3) {
    NNFIT_CHECK(in[0].shape.rank() >= 1 && in[2].shape == Shape{in[0].shape[0]} && in[2].dtype == DType::f32,
                InvalidArgument, "sample weights must be float32 of shape (", in[0].shape.rank() >= 1 ? in[0].shape[0] : 0,
                ",), one per sample, got ", in[2].shape.to_string());
  }
  const std::string& kind = a.s("kind");
  const Shape& p = in[0].shape;
  const Shape& t = in[1].shape;
  NNFIT_CHECK(p.rank() >= 1, InvalidArgument, "predictions must have a batch axis");
  if (kind == "sparse_categorical_crossentropy") {
    NNFIT_CHECK(p.rank() == 2, InvalidArgument, "sparse categorical crossentropy needs predictions of shape (batch, classes), got ", p.to_string());
    NNFIT_CHECK(t == Shape{p[0]} || t == (Shape{p[0], 1}), InvalidArgument, "labels of shape ", t.to_string(),
                " do not match predictions ", p.to_string(), "; expected integer class ids of shape (", p[0], ",)");
    NNFIT_CHECK(in[1].dtype == DType::i32, InvalidArgument, "sparse labels must be int32");
  } else if (kind == "categorical_crossentropy" || kind == "binary_crossentropy" || kind == "mean_squared_error" ||
             kind == "mean_absolute_error" || kind == "mean_absolute_percentage_error" ||
             kind == "mean_squared_logarithmic_error" || kind == "huber" || kind == "log_cosh" || kind == "poisson" ||
             kind == "kl_divergence" || kind == "hinge" || kind == "squared_hinge" || kind == "categorical_hinge" ||
             kind == "cosine_similarity" || kind == "binary_focal_crossentropy" ||
             kind == "categorical_focal_crossentropy") {
    NNFIT_CHECK(t == p, InvalidArgument, "targets of shape ", t.to_string(), " do not match predictions ",
                p.to_string(), kind == "categorical_crossentropy" ? " (categorical crossentropy wants one-hot targets; use sparse_categorical_crossentropy for class ids)" : "");
    NNFIT_CHECK(kind != "categorical_crossentropy" || p.rank() == 2, InvalidArgument, "categorical crossentropy needs shape (batch, classes)");
  } else {
    throw InvalidArgument("unknown loss kind '" + kind + "'");
  }
  return {f32(Shape{})};
}

Descs infer_loss_grad(const Descs& in, const Attrs& a) {
  NNFIT_CHECK(in.size() == 3 || in.size() == 4, InvalidArgument,
              "expected 3 inputs (pred, target, dloss) or 4 (and sample_weight), got ", in.size());
  if (in.size() == 4) infer_loss({in[0], in[1], in[3]}, a);
  else infer_loss({in[0], in[1]}, a);
  return {in[0]};
}

// --- batch norm ---

Descs infer_bn_train(const Descs& in, const Attrs&) {
  expect_count(in, 3);
  Shape c{in[0].shape.dim(-1)};
  NNFIT_CHECK(in[1].shape == c && in[2].shape == c, InvalidArgument, "gamma and beta must have shape ", c.to_string());
  return {in[0], f32(c), f32(c)};
}

Descs infer_bn_grad(const Descs& in, const Attrs&) {
  expect_count(in, 5);
  expect_same(in[0], in[1], "x and dy");
  Shape c{in[0].shape.dim(-1)};
  return {in[0], f32(c), f32(c)};
}

Descs infer_bn_infer(const Descs& in, const Attrs&) {
  expect_count(in, 5);
  Shape c{in[0].shape.dim(-1)};
  for (std::size_t i = 1; i < 5; ++i) {
    NNFIT_CHECK(in[i].shape == c, InvalidArgument, "batch norm parameters must have shape ", c.to_string());
  }
  return {in[0]};
}

// --- gradient rules ---

int need(GradContext& c, int i) { return c.needs[static_cast<std::size_t>(i)] ? 1 : 0; }

std::string grad_name(GradContext& c, const std::string& suffix) {
  return c.graph.node(c.node).name + "/grad_" + suffix;
}

std::vector<int> grad_matmul(GradContext& c) {
  const Node n = c.graph.node(c.node);
  int a = n.inputs[0], b = n.inputs[1], dc = c.output_grads[0];
  std::int64_t ta = n.attrs.i_or("transpose_a", 0), tb = n.attrs.i_or("transpose_b", 0);
  std::vector<int> out{-1, -1};
  if (dc < 0) return out;
  if (need(c, 0)) {
    out[0] = ta == 0 ? c.graph.add("matmul", {dc, b}, {{"transpose_a", std::int64_t{0}}, {"transpose_b", std::int64_t{!tb}}}, grad_name(c, "a"))
                     : c.graph.add("matmul", {b, dc}, {{"transpose_a", tb}, {"transpose_b", std::int64_t{1}}}, grad_name(c, "a"));
  }
  if (need(c, 1)) {
    out[1] = tb == 0 ? c.graph.add("matmul", {a, dc}, {{"transpose_a", std::int64_t{!ta}}, {"transpose_b", std::int64_t{0}}}, grad_name(c, "b"))
                     : c.graph.add("matmul", {dc, a}, {{"transpose_a", std::int64_t{1}}, {"transpose_b", ta}}, grad_name(c, "b"));
  }
  return out;
}

std::vector<int> grad_bias_add(GradContext& c) {
  int dy = c.output_grads[0];
  std::vector<int> out{-1, -1};
  if (dy < 0) return out;
  if (need(c, 0)) out[0] = dy;
  if (need(c, 1)) out[1] = c.graph.add("bias_add_grad", {dy}, {}, grad_name(c, "bias"));
  return out;
}

std::vector<int> grad_activation(GradContext& c) {
  const Node n = c.graph.node(c.node);
  int dy = c.output_grads[0];
  if (dy < 0 || !need(c, 0)) return {-1};
  const std::string& kind = n.attrs.s("kind");
  // relu, sigmoid and tanh differentiate from their output; every other kind from its input.
  const bool from_output = kind == "relu" || kind == "sigmoid" || kind == "tanh";
  int t = from_output ? n.outputs[0] : n.inputs[0];
  Attrs a;
  a.set("kind", kind);
  for (const char* arg : {"alpha", "max_value", "threshold"}) {
    if (n.attrs.has(arg)) a.set(arg, n.attrs.f(arg));
  }
  return {c.graph.add("activation_grad", {t, dy}, a, grad_name(c, "x"))};
}

std::vector<int> grad_softmax(GradContext& c) {
  const Node n = c.graph.node(c.node);
  int dy = c.output_grads[0];
  if (dy < 0 || !need(c, 0)) return {-1};
  return {c.graph.add("softmax_grad", {n.outputs[0], dy}, {}, grad_name(c, "x"))};
}

std::vector<int> grad_log_softmax(GradContext& c) {
  const Node n = c.graph.node(c.node);
  int dy = c.output_grads[0];
  if (dy < 0 || !need(c, 0)) return {-1};
  return {c.graph.add("log_softmax_grad", {n.outputs[0], dy}, {}, grad_name(c, "x"))};
}

std::vector<int> grad_add_n(GradContext& c) {
  const Node n = c.graph.node(c.node);
  std::vector<int> out(n.inputs.size(), -1);
  for (std::size_t i = 0; i < n.inputs.size(); ++i) {
    if (c.needs[i]) out[i] = c.output_grads[0];
  }
  return out;
}

std::vector<int> grad_reshape(GradContext& c) {
  const Node n = c.graph.node(c.node);
  int dy = c.output_grads[0];
  if (dy < 0 || !need(c, 0)) return {-1};
  Attrs a;
  a.set("shape", c.graph.desc(n.inputs[0]).shape.dims());
  return {c.graph.add("reshape", {dy}, a, grad_name(c, "x"))};
}

Attrs spatial_attrs(const Attrs& from) {
  Attrs a;
  a.set("strides", from.ints("strides"));
  a.set("padding", from.s("padding"));
  if (from.has("dilations")) a.set("dilations", from.ints("dilations"));
  if (from.has("groups")) a.set("groups", from.i("groups"));
  if (from.has("pool_size")) a.set("pool_size", from.ints("pool_size"));
  return a;
}

std::vector<int> grad_conv2d(GradContext& c) {
  const Node n = c.graph.node(c.node);
  int dy = c.output_grads[0];
  std::vector<int> out{-1, -1};
  if (dy < 0) return out;
  if (need(c, 0)) {
    Attrs a = spatial_attrs(n.attrs);
    a.set("input_shape", c.graph.desc(n.inputs[0]).shape.dims());
    out[0] = c.graph.add("conv2d_backprop_input", {dy, n.inputs[1]}, a, grad_name(c, "input"));
  }
  if (need(c, 1)) {
    Attrs a = spatial_attrs(n.attrs);
    a.set("filter_shape", c.graph.desc(n.inputs[1]).shape.dims());
    out[1] = c.graph.add("conv2d_backprop_filter", {n.inputs[0], dy}, a, grad_name(c, "kernel"));
  }
  return out;
}

// conv2d_backprop_input(dy, w) is linear in both: its adjoint in dy is the convolution it
// inverts, conv2d(g, w), and its filter gradient is conv2d_backprop_filter(g, dy). Keras's
// transposed convolutions are this op.
std::vector<int> grad_conv2d_backprop_input(GradContext& c) {
  const Node n = c.graph.node(c.node);
  int g = c.output_grads[0];
  std::vector<int> out{-1, -1};
  if (g < 0) return out;
  if (need(c, 0)) out[0] = c.graph.add("conv2d", {g, n.inputs[1]}, spatial_attrs(n.attrs), grad_name(c, "dy"));
  if (need(c, 1)) {
    Attrs a = spatial_attrs(n.attrs);
    a.set("filter_shape", c.graph.desc(n.inputs[1]).shape.dims());
    out[1] = c.graph.add("conv2d_backprop_filter", {g, n.inputs[0]}, a, grad_name(c, "kernel"));
  }
  return out;
}

std::vector<int> grad_max_pool(GradContext& c) {
  const Node n = c.graph.node(c.node);
  int dy = c.output_grads[0];
  if (dy < 0 || !need(c, 0)) return {-1};
  return {c.graph.add("max_pool2d_grad", {n.inputs[0], n.outputs[0], dy}, spatial_attrs(n.attrs), grad_name(c, "x"))};
}

std::vector<int> grad_avg_pool(GradContext& c) {
  const Node n = c.graph.node(c.node);
  int dy = c.output_grads[0];
  if (dy < 0 || !need(c, 0)) return {-1};
  Attrs a = spatial_attrs(n.attrs);
  a.set("input_shape", c.graph.desc(n.inputs[0]).shape.dims());
  return {c.graph.add("avg_pool2d_grad", {dy}, a, grad_name(c, "x"))};
}

std::vector<int> grad_loss(GradContext& c) {
  const Node n = c.graph.node(c.node);
  int dl = c.output_grads[0];
  std::vector<int> out(n.inputs.size(), -1);
  if (dl < 0) return out;
  NNFIT_CHECK(!need(c, 1), Unsupported, n.name, ": gradients with respect to loss targets are not supported");
  std::vector<int> in{n.inputs[0], n.inputs[1], dl};
  if (n.inputs.size() == 3) in.push_back(n.inputs[2]);  // the sample weights
  if (need(c, 0)) out[0] = c.graph.add("loss_grad", in, n.attrs, grad_name(c, "pred"));
  return out;
}

std::vector<int> grad_bn_train(GradContext& c) {
  const Node n = c.graph.node(c.node);
  int dy = c.output_grads[0];
  std::vector<int> out{-1, -1, -1};
  if (dy < 0) return out;
  // Note [Batch statistics gradients]: mean and var feed only the moving averages, whose
  // updates are not differentiated, so their incoming gradients are ignored here.
  Attrs a;
  a.set("epsilon", n.attrs.f("epsilon"));
  std::vector<int> g = c.graph.add_node("batch_norm_grad", {n.inputs[0], dy, n.inputs[1], n.outputs[1], n.outputs[2]},
                                        a, grad_name(c, "x"));
  for (int i = 0; i < 3; ++i) {
    if (c.needs[static_cast<std::size_t>(i)]) out[static_cast<std::size_t>(i)] = g[static_cast<std::size_t>(i)];
  }
  return out;
}

// Inference-mode batch norm (a frozen BatchNormalization inside a trained model): the
// moving statistics are constants, so y is affine in x per channel.
std::vector<int> grad_bn_infer(GradContext& c) {
  const Node n = c.graph.node(c.node);
  const int dy = c.output_grads[0];
  std::vector<int> out(5, -1);
  if (dy < 0) return out;
  Attrs a;
  a.set("epsilon", n.attrs.f("epsilon"));
  const std::vector<int> g = c.graph.add_node(
      "batch_norm_infer_grad", {n.inputs[0], dy, n.inputs[1], n.inputs[3], n.inputs[4]}, a, grad_name(c, "x"));
  for (std::size_t i = 0; i < 3; ++i) {
    if (c.needs[i]) out[i] = g[i];
  }
  return out;
}

}  // namespace op_rules::core

Padding1d tf_padding(std::int64_t in, std::int64_t kernel, std::int64_t stride, const std::string& padding) {
  Padding1d p;
  if (padding == "same") {
    p.out = (in + stride - 1) / stride;
    std::int64_t total = std::max<std::int64_t>((p.out - 1) * stride + kernel - in, 0);
    p.before = total / 2;
    p.after = total - p.before;
  } else {
    p.out = in >= kernel ? (in - kernel) / stride + 1 : 0;
  }
  return p;
}

}  // namespace nnfit
