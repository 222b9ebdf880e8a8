// Padding follows TensorFlow (docs/design/ops.md): "same" may pad asymmetrically, with the
// odd pixel after; "valid" never pads. The 3-D ops (Window3d) apply the same rule per axis.
#include "backend/common/nn_op_geometry.h"

#include <algorithm>
#include <initializer_list>
#include <limits>
#include <utility>

#include "nnfit/core/error.h"
#include "nnfit/core/pool_argmax.h"
#include "backend/widened_kernel.h"

namespace nnfit {

namespace {

const AttrValue& attr(const KernelDesc& desc, const std::string& key) {
  auto it = desc.attrs.items().find(key);
  NNFIT_CHECK(it != desc.attrs.items().end(), InvalidArgument, desc.where(),
              ": missing attribute '", key, "'");
  return it->second;
}

const std::string& string_attr(const KernelDesc& desc, const std::string& key) {
  const auto* v = std::get_if<std::string>(&attr(desc, key));
  NNFIT_CHECK(v != nullptr, InvalidArgument, desc.where(), ": attribute '", key,
              "' must be a string");
  return *v;
}

const std::vector<std::int64_t>& ints_attr(const KernelDesc& desc, const std::string& key) {
  const auto* v = std::get_if<std::vector<std::int64_t>>(&attr(desc, key));
  NNFIT_CHECK(v != nullptr, InvalidArgument, desc.where(), ": attribute '", key,
              "' must be a list of integers");
  return *v;
}

// Two positive integers [a, b].
void pair_attr(const KernelDesc& desc, const std::string& key, std::int64_t* a, std::int64_t* b) {
  const auto& v = ints_attr(desc, key);
  NNFIT_CHECK(v.size() == 2 && v[0] > 0 && v[1] > 0, InvalidArgument, desc.where(), ": attribute '",
              key, "' must be two positive integers, got ", desc.attrs.to_string());
  *a = v[0];
  *b = v[1];
}

bool same_padding(const KernelDesc& desc) {
  const std::string& p = string_attr(desc, "padding");
  NNFIT_CHECK(p == "same" || p == "valid", InvalidArgument, desc.where(), ": padding '", p,
              "' is not 'same' or 'valid'");
  return p == "same";
}

// One spatial axis: output size and padding on each side.
void axis_geometry(const KernelDesc& desc, bool same, std::int64_t in, std::int64_t k,
                   std::int64_t s, std::int64_t* out, std::int64_t* before, std::int64_t* after) {
  if (same) {
    *out = (in + s - 1) / s;
    std::int64_t total = std::max<std::int64_t>((*out - 1) * s + k - in, 0);
    *before = total / 2;
    *after = total - *before;
  } else {
    NNFIT_CHECK(in >= k, InvalidArgument, desc.where(), ": window ", k,
                " is larger than the input size ", in, " with padding 'valid'");
    *out = (in - k) / s + 1;
    *before = *after = 0;
  }
  NNFIT_CHECK(*out > 0, InvalidArgument, desc.where(), ": empty output for input size ", in);
}

// The window's extent counts the gaps dilation puts between taps: (k - 1) * d + 1.
void finish(const KernelDesc& desc, bool same, Window2d* g) {
  axis_geometry(desc, same, g->h, (g->kh - 1) * g->dh + 1, g->sh, &g->oh, &g->pad_top, &g->pad_bottom);
  axis_geometry(desc, same, g->w, (g->kw - 1) * g->dw + 1, g->sw, &g->ow, &g->pad_left, &g->pad_right);
}

void expect_nhwc(const KernelDesc& desc, const Shape& x) {
  NNFIT_CHECK(x.rank() == 4, InvalidArgument, desc.where(), ": expected an NHWC tensor, got shape ",
              x.to_string());
  for (std::int64_t d : x.dims()) {
    NNFIT_CHECK(d >= 0, InvalidArgument, desc.where(), ": negative dimension in ", x.to_string());
  }
}

}  // namespace

namespace {
const std::pair<const char*, ActivationKind> kActivationNames[] = {
    {"linear", ActivationKind::linear},       {"relu", ActivationKind::relu},
    {"sigmoid", ActivationKind::sigmoid},     {"tanh", ActivationKind::tanh},
    {"gelu", ActivationKind::gelu},           {"elu", ActivationKind::elu},
    {"selu", ActivationKind::selu},           {"softplus", ActivationKind::softplus},
    {"softsign", ActivationKind::softsign},   {"hard_sigmoid", ActivationKind::hard_sigmoid},
    {"exponential", ActivationKind::exponential}, {"leaky_relu", ActivationKind::leaky_relu},
    {"relu6", ActivationKind::relu6},         {"silu", ActivationKind::silu},
    {"swish", ActivationKind::silu},          {"mish", ActivationKind::mish},
    {"hard_silu", ActivationKind::hard_silu}, {"hard_swish", ActivationKind::hard_silu},
    {"gelu_tanh", ActivationKind::gelu_tanh}, {"hard_sigmoid_keras2", ActivationKind::hard_sigmoid_keras2},
    {"relu_keras", ActivationKind::relu_keras},
};
}  // namespace

bool activation_grad_reads_output(ActivationKind kind) {
  return kind == ActivationKind::relu || kind == ActivationKind::sigmoid || kind == ActivationKind::tanh;
}

ActivationKind parse_activation_kind(const KernelDesc& desc, const std::string& key) {
  if (key == "activation" && !desc.attrs.has(key)) return ActivationKind::linear;
  const std::string& s = string_attr(desc, key);
  std::string known;
  for (const auto& [name, kind] : kActivationNames) {
    if (s == name) return kind;
    known += (known.empty() ? "" : ", ") + std::string(name);
  }
  throw InvalidArgument(desc.where() + ": unknown activation '" + s + "'; expected one of " + known);
}

ActivationArgs default_activation_args(ActivationKind kind) {
  ActivationArgs a;
  a.kind = kind;
  a.alpha = kind == ActivationKind::leaky_relu ? 0.2 : kind == ActivationKind::elu ? 1.0 : 0.0;
  a.max_value = std::numeric_limits<double>::infinity();
  return a;
}

ActivationArgs parse_activation_args(const KernelDesc& desc) {
  ActivationArgs a = default_activation_args(parse_activation_kind(desc, "kind"));
  a.alpha = desc.attrs.f_or("alpha", a.alpha);
  a.max_value = desc.attrs.f_or("max_value", a.max_value);
  a.threshold = desc.attrs.f_or("threshold", a.threshold);
  NNFIT_CHECK(!(a.max_value < 0.0), InvalidArgument, desc.where(), ": max_value must be >= 0, got ", a.max_value);
  return a;
}

std::string window_unsupported_reason(const KernelDesc& desc) {
  for (const char* key : {"dilations", "dilation_rate"}) {
    if (!desc.attrs.has(key)) continue;
    for (std::int64_t d : ints_attr(desc, key)) {
      if (d != 1) return "dilation unsupported";
    }
  }
  return {};
}

Window2d conv_window(const KernelDesc& desc, const Shape& x, const Shape& w) {
  expect_nhwc(desc, x);
  NNFIT_CHECK(w.rank() == 4, InvalidArgument, desc.where(),
              ": expected an HWIO filter [KH,KW,C/groups,O], got shape ", w.to_string());
  Window2d g;
  g.groups = desc.attrs.i_or("groups", 1);
  NNFIT_CHECK(g.groups > 0 && x[3] % g.groups == 0 && w[3] % g.groups == 0, InvalidArgument, desc.where(),
              ": groups = ", g.groups, " must divide the input's ", x[3], " channels and the filter's ", w[3],
              " outputs");
  NNFIT_CHECK(w[2] * g.groups == x[3], InvalidArgument, desc.where(), ": filter ", w.to_string(), " expects ",
              w[2] * g.groups, " input channels but the input ", x.to_string(), " has ", x[3]);
  NNFIT_CHECK(w[0] > 0 && w[1] > 0 && w[2] > 0 && w[3] > 0, InvalidArgument, desc.where(), ": empty filter ",
              w.to_string());
  g.n = x[0], g.h = x[1], g.w = x[2], g.c = x[3];
  g.kh = w[0], g.kw = w[1], g.o = w[3];
  pair_attr(desc, "strides", &g.sh, &g.sw);
  if (desc.attrs.has("dilations")) pair_attr(desc, "dilations", &g.dh, &g.dw);
  finish(desc, same_padding(desc), &g);
  return g;
}

Window2d pool_window(const KernelDesc& desc, const Shape& x) {
  expect_nhwc(desc, x);
  Window2d g;
  g.n = x[0], g.h = x[1], g.w = x[2], g.c = x[3], g.o = x[3];
  pair_attr(desc, "pool_size", &g.kh, &g.kw);
  pair_attr(desc, "strides", &g.sh, &g.sw);
  finish(desc, same_padding(desc), &g);
  return g;
}

void expect_shape(const KernelDesc& desc, const Shape& got, const Shape& want, const char* what) {
  NNFIT_CHECK(got == want, InvalidArgument, desc.where(), ": ", what, " has shape ",
              got.to_string(), " but ", want.to_string(), " is required");
}

void expect_arity_f32(const KernelDesc& desc, std::size_t inputs, std::size_t outputs) {
  NNFIT_CHECK(desc.inputs.size() == inputs && desc.outputs.size() == outputs, InvalidArgument,
              desc.where(), ": expected ", inputs, " inputs and ", outputs, " outputs, got ",
              desc.inputs.size(), " and ", desc.outputs.size());
  for (const TensorDesc& t : desc.inputs) {
    NNFIT_CHECK(t.dtype == DType::f32, InvalidArgument, desc.where(), ": every input must be f32");
  }
  for (const TensorDesc& t : desc.outputs) {
    NNFIT_CHECK(t.dtype == DType::f32, InvalidArgument, desc.where(), ": every output must be f32");
  }
}

Shape shape_attr(const KernelDesc& desc, const std::string& key) {
  return Shape(ints_attr(desc, key));
}

namespace {

// A conv-pool join's attrs split in two: the convolution's `conv_keys` as they are, and the
// pool's pool_size with pool_strides and pool_padding as strides and padding.
std::pair<Attrs, Attrs> split_join_attrs(const KernelDesc& fused, std::initializer_list<const char*> conv_keys) {
  Attrs conv, pool;
  for (const char* key : conv_keys) {
    if (fused.attrs.has(key)) conv.set(key, fused.attrs.items().at(key));
  }
  pool.set("pool_size", fused.attrs.ints("pool_size"));
  pool.set("strides", fused.attrs.ints("pool_strides"));
  pool.set("padding", fused.attrs.s("pool_padding"));
  return {std::move(conv), std::move(pool)};
}

}  // namespace

ConvPoolDescs split_conv_pool(const KernelDesc& fused) {
  NNFIT_CHECK(fused.inputs.size() == 3 && fused.outputs.size() == 2, InvalidArgument, fused.where(),
              ": expected 3 inputs (x, w, bias) and 2 outputs (y, argmax)");
  ConvPoolDescs d;
  const auto [conv, pool] = split_join_attrs(fused, {"strides", "padding", "dilations", "groups", "activation"});
  const DType y_dtype = fused.outputs[0].dtype;
  const Window2d cg = conv_window(fused, fused.inputs[0].shape, fused.inputs[1].shape);
  const TensorDesc y1{cg.output_shape(), y_dtype};
  d.conv = KernelDesc{"fused_conv2d", conv, fused.inputs, {y1}, fused.node_name};
  d.pool = KernelDesc{"max_pool2d_argmax", pool, {y1}, fused.outputs, fused.node_name};
  checked_window(widened(d.conv));
  checked_window(widened(d.pool));
  return d;
}

ConvPoolGradDescs split_conv_pool_grad(const KernelDesc& fused) {
  NNFIT_CHECK(fused.inputs.size() == 3 && fused.outputs.size() == 2, InvalidArgument, fused.where(),
              ": expected 3 inputs (x, dy, argmax) and 2 outputs (dw, db)");
  ConvPoolGradDescs d;
  auto [filter, pool] = split_join_attrs(fused, {"strides", "padding", "dilations", "groups", "filter_shape"});
  pool.set("relu", fused.attrs.i_or("relu", 0));
  pool.set("input_shape", fused.attrs.ints("input_shape"));
  const TensorDesc dy1{Shape(fused.attrs.ints("input_shape")), fused.inputs[1].dtype};
  d.pool = KernelDesc{"max_pool2d_argmax_grad_bias", pool, {fused.inputs[1], fused.inputs[2]}, {dy1, fused.outputs[1]},
                      fused.node_name};
  d.filter = KernelDesc{"conv2d_backprop_filter", filter, {fused.inputs[0], dy1}, {fused.outputs[0]}, fused.node_name};
  checked_window(widened(d.pool));
  checked_window(widened(d.filter));
  return d;
}

Window2d checked_window(const KernelDesc& desc) {
  const std::string& op = desc.op;
  Window2d g;
  if (op == "conv2d" || op == "fused_conv2d") {
    bool fused = op == "fused_conv2d";
    expect_arity_f32(desc, fused ? 3 : 2, 1);
    g = conv_window(desc, desc.inputs[0].shape, desc.inputs[1].shape);
    if (fused) expect_shape(desc, desc.inputs[2].shape, Shape{g.o}, "input 2 (bias)");
    expect_shape(desc, desc.outputs[0].shape, g.output_shape(), "output 0 (y)");
  } else if (op == "conv2d_backprop_input") {
    expect_arity_f32(desc, 2, 1);
    g = conv_window(desc, shape_attr(desc, "input_shape"), desc.inputs[1].shape);
    expect_shape(desc, desc.inputs[0].shape, g.output_shape(), "input 0 (dy)");
    expect_shape(desc, desc.outputs[0].shape, g.input_shape(), "output 0 (dx)");
  } else if (op == "conv2d_backprop_filter") {
    expect_arity_f32(desc, 2, 1);
    g = conv_window(desc, desc.inputs[0].shape, shape_attr(desc, "filter_shape"));
    expect_shape(desc, desc.inputs[1].shape, g.output_shape(), "input 1 (dy)");
    expect_shape(desc, desc.outputs[0].shape, g.filter_shape(), "output 0 (dw)");
  } else if (op == "max_pool2d" || op == "avg_pool2d") {
    expect_arity_f32(desc, 1, 1);
    g = pool_window(desc, desc.inputs[0].shape);
    expect_shape(desc, desc.outputs[0].shape, g.output_shape(), "output 0 (y)");
  } else if (op == "max_pool2d_grad" || op == "max_pool2d_grad_bias") {
    const bool bias = op == "max_pool2d_grad_bias";
    expect_arity_f32(desc, 3, bias ? 2 : 1);
    g = pool_window(desc, desc.inputs[0].shape);
    expect_shape(desc, desc.inputs[1].shape, g.output_shape(), "input 1 (y)");
    expect_shape(desc, desc.inputs[2].shape, g.output_shape(), "input 2 (dy)");
    expect_shape(desc, desc.outputs[0].shape, g.input_shape(), "output 0 (dx)");
    if (bias) expect_shape(desc, desc.outputs[1].shape, Shape{g.c}, "output 1 (db)");
  } else if (op == "max_pool2d_argmax") {
    NNFIT_CHECK(desc.inputs.size() == 1 && desc.inputs[0].dtype == DType::f32 && desc.outputs.size() == 2 &&
                    desc.outputs[0].dtype == DType::f32 && desc.outputs[1].dtype == DType::u8,
                InvalidArgument, desc.where(), ": expected x (f32) in and y (f32) and the argmax (u8) out");
    g = pool_window(desc, desc.inputs[0].shape);
    expect_shape(desc, desc.outputs[0].shape, g.output_shape(), "output 0 (y)");
    expect_shape(desc, desc.outputs[1].shape, g.output_shape(), "output 1 (argmax)");
    NNFIT_CHECK(g.kh * g.kw <= kMaxArgmaxWindow, InvalidArgument, desc.where(), ": a ", g.kh, "x", g.kw,
                " window has more positions than an argmax byte holds (", kMaxArgmaxWindow, ")");
  } else if (op == "max_pool2d_argmax_grad" || op == "max_pool2d_argmax_grad_bias") {
    const bool bias = op == "max_pool2d_argmax_grad_bias";
    NNFIT_CHECK(desc.inputs.size() == 2 && desc.outputs.size() == (bias ? 2u : 1u), InvalidArgument, desc.where(),
                ": expected 2 inputs (dy, argmax) and ", bias ? 2 : 1, " outputs, got ", desc.inputs.size(), " and ",
                desc.outputs.size());
    NNFIT_CHECK(desc.inputs[0].dtype == DType::f32 && desc.inputs[1].dtype == DType::u8, InvalidArgument,
                desc.where(), ": dy must be f32 and the argmax u8");
    for (const TensorDesc& t : desc.outputs) {
      NNFIT_CHECK(t.dtype == DType::f32, InvalidArgument, desc.where(), ": every output must be f32");
    }
    g = pool_window(desc, shape_attr(desc, "input_shape"));
    expect_shape(desc, desc.inputs[0].shape, g.output_shape(), "input 0 (dy)");
    expect_shape(desc, desc.inputs[1].shape, g.output_shape(), "input 1 (argmax)");
    expect_shape(desc, desc.outputs[0].shape, g.input_shape(), "output 0 (dx)");
    if (bias) expect_shape(desc, desc.outputs[1].shape, Shape{g.c}, "output 1 (db)");
    NNFIT_CHECK(g.kh * g.kw <= kMaxArgmaxWindow, InvalidArgument, desc.where(), ": a ", g.kh, "x", g.kw,
                " window has more positions than an argmax byte holds (", kMaxArgmaxWindow, ")");
  } else if (op == "avg_pool2d_grad") {
    expect_arity_f32(desc, 1, 1);
    g = pool_window(desc, shape_attr(desc, "input_shape"));
    expect_shape(desc, desc.inputs[0].shape, g.output_shape(), "input 0 (dy)");
    expect_shape(desc, desc.outputs[0].shape, g.input_shape(), "output 0 (dx)");
  } else {
    throw InvalidArgument(desc.where() + ": not a convolution or pooling op");
  }
  return g;
}

namespace {

// Three positive integers (depth, height, width).
std::array<std::int64_t, 3> triple_attr(const KernelDesc& desc, const std::string& key) {
  const auto& v = ints_attr(desc, key);
  NNFIT_CHECK(v.size() == 3 && v[0] > 0 && v[1] > 0 && v[2] > 0, InvalidArgument, desc.where(), ": attribute '",
              key, "' must be three positive integers, got ", desc.attrs.to_string());
  return {v[0], v[1], v[2]};
}

void expect_ndhwc(const KernelDesc& desc, const Shape& x) {
  NNFIT_CHECK(x.rank() == 5, InvalidArgument, desc.where(), ": expected an NDHWC tensor, got shape ",
              x.to_string());
  for (std::int64_t d : x.dims()) {
    NNFIT_CHECK(d >= 0, InvalidArgument, desc.where(), ": negative dimension in ", x.to_string());
  }
}

void finish3d(const KernelDesc& desc, Window3d* g) {
  const bool same = same_padding(desc);
  for (std::size_t i = 0; i < 3; ++i) {
    axis_geometry(desc, same, g->in[i], (g->k[i] - 1) * g->dilation[i] + 1, g->stride[i], &g->out[i],
                  &g->pad_before[i], &g->pad_after[i]);
  }
}

Window3d conv_window3d(const KernelDesc& desc, const Shape& x, const Shape& w) {
  expect_ndhwc(desc, x);
  NNFIT_CHECK(w.rank() == 5, InvalidArgument, desc.where(),
              ": expected a DHWIO filter [KD,KH,KW,C/groups,O], got shape ", w.to_string());
  Window3d g;
  g.groups = desc.attrs.i_or("groups", 1);
  NNFIT_CHECK(g.groups > 0 && x[4] % g.groups == 0 && w[4] % g.groups == 0, InvalidArgument, desc.where(),
              ": groups = ", g.groups, " must divide the input's ", x[4], " channels and the filter's ", w[4],
              " outputs");
  NNFIT_CHECK(w[3] * g.groups == x[4], InvalidArgument, desc.where(), ": filter ", w.to_string(), " expects ",
              w[3] * g.groups, " input channels but the input ", x.to_string(), " has ", x[4]);
  NNFIT_CHECK(w[0] > 0 && w[1] > 0 && w[2] > 0 && w[3] > 0 && w[4] > 0, InvalidArgument, desc.where(),
              ": empty filter ", w.to_string());
  g.n = x[0], g.c = x[4], g.o = w[4];
  g.in = {x[1], x[2], x[3]};
  g.k = {w[0], w[1], w[2]};
  g.stride = triple_attr(desc, "strides");
  if (desc.attrs.has("dilations")) g.dilation = triple_attr(desc, "dilations");
  finish3d(desc, &g);
  return g;
}

Window3d pool_window3d(const KernelDesc& desc, const Shape& x) {
  expect_ndhwc(desc, x);
  Window3d g;
  g.n = x[0], g.c = x[4], g.o = x[4];
  g.in = {x[1], x[2], x[3]};
  g.k = triple_attr(desc, "pool_size");
  g.stride = triple_attr(desc, "strides");
  finish3d(desc, &g);
  return g;
}

}  // namespace

Window3d checked_window3d(const KernelDesc& desc) {
  const std::string& op = desc.op;
  Window3d g;
  if (op == "conv3d" || op == "fused_conv3d") {
    const bool fused = op == "fused_conv3d";
    expect_arity_f32(desc, fused ? 3 : 2, 1);
    g = conv_window3d(desc, desc.inputs[0].shape, desc.inputs[1].shape);
    if (fused) expect_shape(desc, desc.inputs[2].shape, Shape{g.o}, "input 2 (bias)");
    expect_shape(desc, desc.outputs[0].shape, g.output_shape(), "output 0 (y)");
  } else if (op == "conv3d_backprop_input") {
    expect_arity_f32(desc, 2, 1);
    g = conv_window3d(desc, shape_attr(desc, "input_shape"), desc.inputs[1].shape);
    expect_shape(desc, desc.inputs[0].shape, g.output_shape(), "input 0 (dy)");
    expect_shape(desc, desc.outputs[0].shape, g.input_shape(), "output 0 (dx)");
  } else if (op == "conv3d_backprop_filter") {
    expect_arity_f32(desc, 2, 1);
    g = conv_window3d(desc, desc.inputs[0].shape, shape_attr(desc, "filter_shape"));
    expect_shape(desc, desc.inputs[1].shape, g.output_shape(), "input 1 (dy)");
    expect_shape(desc, desc.outputs[0].shape, g.filter_shape(), "output 0 (dw)");
  } else if (op == "max_pool3d" || op == "avg_pool3d") {
    expect_arity_f32(desc, 1, 1);
    g = pool_window3d(desc, desc.inputs[0].shape);
    expect_shape(desc, desc.outputs[0].shape, g.output_shape(), "output 0 (y)");
  } else if (op == "max_pool3d_grad") {
    expect_arity_f32(desc, 3, 1);
    g = pool_window3d(desc, desc.inputs[0].shape);
    expect_shape(desc, desc.inputs[1].shape, g.output_shape(), "input 1 (y)");
    expect_shape(desc, desc.inputs[2].shape, g.output_shape(), "input 2 (dy)");
    expect_shape(desc, desc.outputs[0].shape, g.input_shape(), "output 0 (dx)");
  } else if (op == "avg_pool3d_grad") {
    expect_arity_f32(desc, 1, 1);
    g = pool_window3d(desc, shape_attr(desc, "input_shape"));
    expect_shape(desc, desc.inputs[0].shape, g.output_shape(), "input 0 (dy)");
    expect_shape(desc, desc.outputs[0].shape, g.input_shape(), "output 0 (dx)");
  } else {
    throw InvalidArgument(desc.where() + ": not a 3-D convolution or pooling op");
  }
  return g;
}

MatmulGeometry checked_matmul(const KernelDesc& desc) {
  bool fused = desc.op == "fused_matmul";
  expect_arity_f32(desc, fused ? 3 : 2, 1);
  const Shape& a = desc.inputs[0].shape;
  const Shape& b = desc.inputs[1].shape;
  NNFIT_CHECK(a.rank() == 2 && b.rank() == 2, InvalidArgument, desc.where(),
              ": matmul needs two matrices, got ", a.to_string(), " and ", b.to_string());
  MatmulGeometry g;
  g.transpose_a = desc.attrs.i_or("transpose_a", 0) != 0;
  g.transpose_b = desc.attrs.i_or("transpose_b", 0) != 0;
  g.m = g.transpose_a ? a[1] : a[0];
  g.k = g.transpose_a ? a[0] : a[1];
  std::int64_t kb = g.transpose_b ? b[1] : b[0];
  g.n = g.transpose_b ? b[0] : b[1];
  NNFIT_CHECK(kb == g.k, InvalidArgument, desc.where(), ": inner dimensions differ: a ",
              a.to_string(), ", b ", b.to_string(), " ", desc.attrs.to_string());
  if (fused) expect_shape(desc, desc.inputs[2].shape, Shape{g.n}, "input 2 (bias)");
  expect_shape(desc, desc.outputs[0].shape, Shape{g.m, g.n}, "output 0");
  return g;
}

Shape checked_elementwise(const KernelDesc& desc) {
  bool grad = desc.op == "activation_grad" || desc.op == "softmax_grad" || desc.op == "log_softmax_grad";
  expect_arity_f32(desc, grad ? 2 : 1, 1);
  const Shape& s = desc.inputs[0].shape;
  if (grad) expect_shape(desc, desc.inputs[1].shape, s, "input 1 (dy)");
  expect_shape(desc, desc.outputs[0].shape, s, "output 0");
  if (desc.op != "activation" && desc.op != "activation_grad") {
    NNFIT_CHECK(s.rank() >= 1, InvalidArgument, desc.where(), ": softmax needs rank >= 1");
  }
  return s;
}

bool all_float32(const KernelDesc& d, std::string* why_not) {
  for (const auto* list : {&d.inputs, &d.outputs}) {
    for (const TensorDesc& t : *list) {
      if (t.dtype != DType::f32) {
        if (why_not) *why_not = d.op + ": only float32 is supported, got " + std::string(dtype_name(t.dtype));
        return false;
      }
    }
  }
  return true;
}

LayerNormMode layer_norm_mode(const Attrs& attrs) {
  const std::string mode = attrs.s_or("mode", "layer");
  if (mode == "layer") return {};
  if (mode == "rms_scaling") return {false, false};
  NNFIT_CHECK(mode == "rms", InvalidArgument, "layer_norm: mode \"", mode,
              "\" is not one of layer, rms_scaling, rms");
  return {false, true};
}

}  // namespace nnfit
