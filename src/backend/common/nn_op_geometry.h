// Attribute parsing and shape checking shared by the reference and oneDNN kernels of the
// dense, convolution, pooling and activation ops (docs/design/ops.md), so both families
// agree on TensorFlow's padding rule and reject the same malformed descs the same way.
// Malformed descs throw InvalidArgument naming the node; valid-but-unsupported ones are
// the caller's business (they decline).
#pragma once
#include <array>
#include <cstdint>
#include <string>

#include "nnfit/backend/kernel.h"

namespace nnfit {

// Keras's activations with its default arguments: elu (alpha 1), selu, softplus, softsign,
// hard_sigmoid (Keras 3: relu6(x + 3) / 6), exponential, leaky_relu (negative slope 0.2),
// relu6, silu (= swish), mish, hard_silu (= hard_swish: x * hard_sigmoid(x)), gelu (erf)
// and gelu_tanh (the tanh approximation, Keras's gelu(approximate=True)).
// hard_sigmoid_keras2 is Keras 2's (tf.keras) hard_sigmoid, clip(0.2 x + 0.5, 0, 1): what
// "hard_sigmoid" means in a file Keras 2 wrote.
// relu_keras is the Keras ReLU layer with arguments (below).
enum class ActivationKind {
  linear, relu, sigmoid, tanh, gelu, elu, selu, softplus, softsign, hard_sigmoid, exponential,
  leaky_relu, relu6, silu, mish, hard_silu, gelu_tanh, hard_sigmoid_keras2, relu_keras
};
// The activation op's optional float attributes: alpha is leaky_relu's negative slope
// (default 0.2, the activation function's; the LeakyReLU layer passes its own), elu's
// alpha (default 1) and relu_keras's negative_slope (default 0); max_value (default +inf,
// "none") and threshold (default 0) are relu_keras's: Keras's
//   y = (threshold != 0 ? x * (x > threshold) : relu(x)), clipped to [0, max_value] when
//   max_value is given, minus negative_slope * relu(threshold - x).
struct ActivationArgs {
  ActivationKind kind = ActivationKind::linear;
  double alpha = 0.0;
  double max_value = 0.0;  // +inf when absent
  double threshold = 0.0;
};
// The kind's defaults (what fused ops, which take a kind only, compute).
ActivationArgs default_activation_args(ActivationKind kind);
// The kind (attribute "kind") with the op's alpha, max_value and threshold attributes.
ActivationArgs parse_activation_args(const KernelDesc& desc);
// Whether activation_grad's first input is the forward output y (relu, sigmoid, tanh) or
// the input x (every other kind); graph/core_op_defs.cpp builds it the same way.
bool activation_grad_reads_output(ActivationKind kind);

// Parses attribute `key` ("kind" or "activation"); a missing "activation" means linear.
ActivationKind parse_activation_kind(const KernelDesc& desc, const std::string& key);

// Geometry of a 2-D window op in NHWC. For convolutions `c` is the input channel count and
// `o` the output one; for pooling o == c. A convolution's taps are `dh`/`dw` apart
// (dilation) and its channels split into `groups` independent convolutions of c / groups
// inputs and o / groups outputs each (output channel j belongs to group j / (o / groups)).
struct Window2d {
  std::int64_t n = 0, h = 0, w = 0, c = 0;     // input
  std::int64_t kh = 0, kw = 0, o = 0;          // window and output channels
  std::int64_t sh = 1, sw = 1;                 // strides
  std::int64_t dh = 1, dw = 1;                 // dilations (1: adjacent taps)
  std::int64_t groups = 1;
  std::int64_t oh = 0, ow = 0;                 // output spatial size
  std::int64_t pad_top = 0, pad_bottom = 0, pad_left = 0, pad_right = 0;

  std::int64_t group_c() const { return c / groups; }
  std::int64_t group_o() const { return o / groups; }
  Shape input_shape() const { return Shape{n, h, w, c}; }
  Shape output_shape() const { return Shape{n, oh, ow, o}; }
  Shape filter_shape() const { return Shape{kh, kw, c / groups, o}; }
};

// Empty when the desc has no dilation attribute or all dilations are 1; otherwise a reason
// to decline ("dilation unsupported"). For the pooling ops, which have no dilation.
std::string window_unsupported_reason(const KernelDesc& desc);

// x `[N,H,W,C]` and w `[KH,KW,C/groups,O]`, with attrs strides, padding and the optional
// dilations (two positive integers, default [1,1]) and groups (dividing C and O, default 1).
Window2d conv_window(const KernelDesc& desc, const Shape& x, const Shape& w);
// x `[N,H,W,C]`, with attrs pool_size, strides and padding.
Window2d pool_window(const KernelDesc& desc, const Shape& x);

// Throws InvalidArgument unless `got` equals `want`; `what` names the tensor ("input 1 (w)").
void expect_shape(const KernelDesc& desc, const Shape& got, const Shape& want, const char* what);
// Whether every input and output is float32; if not, false with *why_not naming the first
// other dtype (a kernel factory declines).
bool all_float32(const KernelDesc& desc, std::string* why_not);
// Throws InvalidArgument unless desc has exactly this many inputs and outputs, all f32.
void expect_arity_f32(const KernelDesc& desc, std::size_t inputs, std::size_t outputs);
// The `key` attribute as a Shape (input_shape, filter_shape); InvalidArgument if absent.
Shape shape_attr(const KernelDesc& desc, const std::string& key);

// Checks a window op's whole desc (arity, dtypes, every input and output shape) and returns
// its geometry. Ops: conv2d, fused_conv2d, conv2d_backprop_input, conv2d_backprop_filter,
// max_pool2d, max_pool2d_grad, avg_pool2d, avg_pool2d_grad.
Window2d checked_window(const KernelDesc& desc);

// fused_conv2d_max_pool_argmax (fuse_conv_into_pool_argmax) as the two ops it stands for:
// the convolution fused_conv2d(x, w, bias) -> y1 (attrs strides, padding, dilations,
// groups, activation) and max_pool2d_argmax(y1) -> (y, argmax) (attrs pool_size and the
// fused op's pool_strides and pool_padding as strides and padding). y1 has the type of y.
// Both descs are checked (checked_window on their float32 forms); InvalidArgument names
// the fused node.
struct ConvPoolDescs {
  KernelDesc conv, pool;
};
ConvPoolDescs split_conv_pool(const KernelDesc& fused);

// fused_conv2d_max_pool_argmax_grad(x, dy, argmax) -> (dw, db) as the two ops it joins:
// max_pool2d_argmax_grad_bias(dy, argmax) -> (dy1, db) (attrs pool_size, relu, input_shape
// and the fused op's pool_strides and pool_padding as strides and padding; dy1 of dy's
// type) and conv2d_backprop_filter(x, dy1) -> dw (attrs strides, padding, dilations,
// groups, filter_shape). Both descs are checked; InvalidArgument names the fused node.
struct ConvPoolGradDescs {
  KernelDesc pool, filter;
};
ConvPoolGradDescs split_conv_pool_grad(const KernelDesc& fused);

// Geometry of a 3-D window op in NDHWC: Window2d with a depth axis. The spatial arrays hold
// depth, height and width in that order; `c`, `o`, dilation and groups mean what they mean
// in Window2d (pooling: o == c, no dilation, one group).
struct Window3d {
  std::int64_t n = 0, c = 0, o = 0, groups = 1;
  std::array<std::int64_t, 3> in{}, k{}, out{};   // input, window and output sizes
  std::array<std::int64_t, 3> stride{1, 1, 1}, dilation{1, 1, 1};
  std::array<std::int64_t, 3> pad_before{}, pad_after{};  // front/top/left, back/bottom/right

  std::int64_t group_c() const { return c / groups; }
  std::int64_t group_o() const { return o / groups; }
  Shape input_shape() const { return Shape{n, in[0], in[1], in[2], c}; }
  Shape output_shape() const { return Shape{n, out[0], out[1], out[2], o}; }
  Shape filter_shape() const { return Shape{k[0], k[1], k[2], c / groups, o}; }
};

// checked_window for the 3-D ops: conv3d, fused_conv3d, conv3d_backprop_input,
// conv3d_backprop_filter (x [N,D,H,W,C], w [KD,KH,KW,C/groups,O], attrs strides, padding
// and the optional dilations and groups), max_pool3d, max_pool3d_grad, avg_pool3d,
// avg_pool3d_grad (attrs pool_size, strides, padding). Every list has three entries.
Window3d checked_window3d(const KernelDesc& desc);

// matmul / fused_matmul: c[M,N] = op(a)[M,K] · op(b)[K,N] (+ bias[N]).
struct MatmulGeometry {
  std::int64_t m = 0, k = 0, n = 0;
  bool transpose_a = false, transpose_b = false;
};
MatmulGeometry checked_matmul(const KernelDesc& desc);

// activation, activation_grad, softmax, softmax_grad: every tensor has the first input's
// shape (softmax needs rank >= 1). Returns that shape.
Shape checked_elementwise(const KernelDesc& desc);

// layer_norm's and layer_norm_grad's `mode` attribute (docs/design/ops.md): "layer"
// (default) centres the row and takes the variance about its mean; "rms_scaling" (Keras's
// LayerNormalization(rms_scaling=True)) takes the variance about the mean but scales x
// itself; "rms" (Keras's RMSNormalization) takes mean(x²), about zero, and scales x.
// InvalidArgument for another value.
struct LayerNormMode {
  bool centred = true;     // y from x - mean (else from x)
  bool zero_mean = false;  // statistics about 0 (the mean output is 0)
};
LayerNormMode layer_norm_mode(const Attrs& attrs);

}  // namespace nnfit
