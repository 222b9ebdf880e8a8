// The emitters of keras.ops.nn's layer-sized operations (Note [Keras operations] in
// operation.cpp): convolutions (Conv, DepthwiseConv, SeparableConv, ConvTranspose) and
// poolings (MaxPool, AveragePool) on the engine's convolution and pooling ops, the very
// ops Conv2D and MaxPooling2D emit, so a model written with keras.ops.conv trains as fast
// as one written with Conv2D; the adaptive poolings, DotProductAttention, the
// normalizations, Moments, the crossentropies, MultiHot, DepthToSpace, SpaceToDepth and
// PSNR as exact compositions of the engine's element-wise, reduction and shape ops, each
// following Keras's TensorFlow backend formula. data_format="channels_first" runs as
// channels_last between two transposes (Keras's TensorFlow backend does the same on CPU).
#include <cmath>
#include <map>
#include <optional>

#include "nn/layers/conv_window.h"
#include "nn/layers/operation_nn_emit.h"
#include "nnfit/nn/layer.h"

namespace nnfit::operation_emit {
namespace {

// --- convolutions and poolings ----------------------------------------------------------

ConvWindow window_of(const Emit& e, const Shape& x, const Dims& kernel, int max_rank) {
  const std::size_t n = kernel.size();
  ConvWindow w{kernel, per_axis(e, "strides", n, Dims(n, 1)), per_axis(e, "dilation_rate", n, Dims(n, 1)),
               e.config().s_or("padding", "valid"), 1};
  if (x.rank() != static_cast<int>(n) + 2 || static_cast<int>(n) > max_rank) {
    e.invalid("takes inputs of rank " + std::to_string(n + 2) + " for a kernel of " + std::to_string(n) +
              " spatial axes (1 to " + std::to_string(max_rank) + "), got " + x.to_string());
  }
  w.check(e.node(""), 3);
  w.out(e.node(""), spatial_of(x));
  return w;
}

// The window op on x (channels last) with `w`'s 2-D form for 1 and 2 spatial axes.
int conv_on(const Emit& e, int x, int kernel, const ConvWindow& w) {
  if (w.rank() == 3) return e.add("conv3d", {x, kernel}, w.attrs(), "conv3d");
  const int y = e.add("conv2d", {w.to_2d(e.g, x, e.node("to_2d")), w.kernel_to_2d(e.g, kernel, e.node("kernel_2d"))},
                      w.attrs(), "conv2d");
  return w.from_2d(e.g, y, e.node("from_2d"));
}

Dims kernel_spatial(const Emit& e, int kernel, int x_rank) {
  const Shape k = e.shape(kernel);
  if (k.rank() != x_rank) {
    e.invalid("the kernel must have the inputs' rank " + std::to_string(x_rank) + " (spatial axes, then input and "
              "output channels), got " + k.to_string());
  }
  return Dims(k.dims().begin(), k.dims().end() - 2);
}

// conv(inputs, kernel): kernel (k..., C / groups, O), grouped when C is a multiple of the
// kernel's input channels (TensorFlow's rule).
std::vector<int> conv(const Emit& e) {
  const int kernel = e.value(1);
  return {channels_last_run(e, e.value(0), [&](int x) {
    const Shape xs = e.shape(x), ks = e.shape(kernel);
    ConvWindow w = window_of(e, xs, kernel_spatial(e, kernel, xs.rank()), 3);
    const std::int64_t c = xs.dim(-1), cin = ks.dim(-2), o = ks.dim(-1);
    if (cin <= 0 || c % cin != 0 || o % (c / cin) != 0) {
      e.invalid("the inputs' " + std::to_string(c) + " channels must be a multiple of the kernel's input channels (" +
                std::to_string(cin) + "), and the output channels (" + std::to_string(o) + ") of the groups");
    }
    w.groups = c / cin;
    return conv_on(e, x, kernel, w);
  })};
}

// The depthwise kernel (k..., C, M) as a grouped convolution's (k..., 1, C·M): the same bytes.
int depthwise_on(const Emit& e, int x, int kernel) {
  const Shape xs = e.shape(x), ks = e.shape(kernel);
  ConvWindow w = window_of(e, xs, kernel_spatial(e, kernel, xs.rank()), 2);
  if (ks.dim(-2) != xs.dim(-1)) {
    e.invalid("the depthwise kernel's input channels (" + std::to_string(ks.dim(-2)) + ") must equal the inputs' (" +
              std::to_string(xs.dim(-1)) + ")");
  }
  Dims grouped(ks.dims().begin(), ks.dims().end() - 2);
  grouped.push_back(1);
  grouped.push_back(ks.dim(-2) * ks.dim(-1));
  w.groups = xs.dim(-1);
  return conv_on(e, x, emit_reshape(e.g, kernel, grouped, e.node("grouped_kernel")), w);
}

std::vector<int> depthwise_conv(const Emit& e) {
  const int kernel = e.value(1);
  return {channels_last_run(e, e.value(0), [&](int x) { return depthwise_on(e, x, kernel); })};
}

// separable_conv: the depthwise convolution, then the pointwise kernel (1..., C·M, O) at
// stride 1, valid (tf.nn.separable_conv2d).
std::vector<int> separable_conv(const Emit& e) {
  const int depthwise = e.value(1), pointwise = e.value(2);
  return {channels_last_run(e, e.value(0), [&](int x) {
    const int h = depthwise_on(e, x, depthwise);
    const Shape ps = e.shape(pointwise);
    if (ps.rank() != e.rank(h) || ps.dim(-2) != e.shape(h).dim(-1)) {
      e.invalid("the pointwise kernel must be (1..., " + std::to_string(e.shape(h).dim(-1)) + ", filters), got " +
                ps.to_string());
    }
    const std::size_t n = static_cast<std::size_t>(ps.rank() - 2);
    ConvWindow w{Dims(ps.dims().begin(), ps.dims().end() - 2), Dims(n, 1), Dims(n, 1), "valid", 1};
    return conv_on(e, h, pointwise, w);
  })};
}

// conv_transpose(inputs, kernel (k..., O, C)): the gradient of the convolution from the
// output back to the input (what tf.nn.conv_transpose runs), with the output size of
// Keras's deconv_output_length.
std::vector<int> conv_transpose(const Emit& e) {
  const int kernel = e.value(1);
  return {channels_last_run(e, e.value(0), [&](int x) {
    const Shape xs = e.shape(x), ks = e.shape(kernel);
    const Dims k = kernel_spatial(e, kernel, xs.rank());
    const std::size_t n = k.size();
    ConvWindow w{k, per_axis(e, "strides", n, Dims(n, 1)), per_axis(e, "dilation_rate", n, Dims(n, 1)),
                 e.config().s_or("padding", "valid"), 1};
    w.check(e.node(""), 3);
    if (ks.dim(-1) != xs.dim(-1)) {
      e.invalid("the kernel's last axis (" + std::to_string(ks.dim(-1)) + ") must equal the inputs' channels (" +
                std::to_string(xs.dim(-1)) + ")");
    }
    const bool padded = e.config().has("output_padding");
    const Dims out_pad = per_axis(e, "output_padding", n, Dims(n, 0));
    Dims full{xs[0]};
    if (n == 1) full.push_back(1);
    Dims out;
    for (std::size_t i = 0; i < n; ++i) {
      const std::int64_t in = xs[static_cast<int>(i) + 1], st = w.strides[i];
      const std::int64_t ext = (k[i] - 1) * w.dilation[i] + 1;
      std::int64_t len;
      if (!padded) {
        len = w.padding == "valid" ? in * st + std::max<std::int64_t>(ext - st, 0) : in * st;
      } else {
        len = (in - 1) * st + ext - 2 * (w.padding == "same" ? ext / 2 : 0) + out_pad[i];
      }
      if (len <= 0) e.invalid("an input of " + std::to_string(in) + " along spatial axis " + std::to_string(i) + " gives an empty output");
      out.push_back(len);
    }
    const Dims back = w.out(e.node(""), out);
    for (std::size_t i = 0; i < n; ++i) {
      if (back[i] != xs[static_cast<int>(i) + 1]) {
        e.invalid("an output of " + std::to_string(out[i]) + " along spatial axis " + std::to_string(i) + " is not what a stride-" +
                  std::to_string(w.strides[i]) + " convolution maps to " + std::to_string(xs[static_cast<int>(i) + 1]) +
                  "; change output_padding");
      }
      full.push_back(out[i]);
    }
    full.push_back(ks.dim(-2));
    Attrs a = w.attrs();
    a.set("input_shape", full);
    if (n == 3) return e.add("conv3d_backprop_input", {x, kernel}, a, "conv_transpose");
    const int y = e.add("conv2d_backprop_input", {w.to_2d(e.g, x, e.node("to_2d")), w.kernel_to_2d(e.g, kernel, e.node("kernel_2d"))},
                        a, "conv_transpose");
    return w.from_2d(e.g, y, e.node("from_2d"));
  })};
}

template <bool kMax>
std::vector<int> pool(const Emit& e) {
  return {channels_last_run(e, e.value(0), [&](int x) {
    const Shape xs = e.shape(x);
    const std::size_t n = static_cast<std::size_t>(xs.rank() - 2);
    if (xs.rank() < 3 || n > 3) e.invalid("takes inputs of rank 3 to 5 (1 to 3 spatial axes), got " + xs.to_string());
    if (!e.config().has("pool_size")) e.invalid("\"pool_size\" is required");
    const Dims size = per_axis(e, "pool_size", n, {});
    ConvWindow w{size, per_axis(e, "strides", n, size), Dims(n, 1), e.config().s_or("padding", "valid"), 1};
    w.check(e.node(""), 3);
    w.out(e.node(""), spatial_of(xs));
    const bool one = n == 1;
    Attrs a{{"pool_size", one ? Dims{1, size[0]} : size}, {"strides", one ? Dims{1, w.strides[0]} : w.strides},
            {"padding", w.padding}};
    const std::string op = std::string(kMax ? "max_pool" : "avg_pool") + (n == 3 ? "3d" : "2d");
    if (n == 3) return e.add(op, {x}, a, op);
    return w.from_2d(e.g, e.add(op, {w.to_2d(e.g, x, e.node("to_2d"))}, a, op), e.node("from_2d"));
  })};
}

// Adaptive pooling: output cell i of an axis of length `in` pools [⌊i·in/out⌋, ⌈(i+1)·in/out⌉)
// (PyTorch's windows, which Keras's backends compute), one axis after the other (a
// rectangle's mean is the mean of its rows' means, its max the max of theirs). Each window
// is a crop (differentiable) reduced with keepdims, the cells concatenated.
template <bool kMax>
std::vector<int> adaptive_pool(const Emit& e) {
  return {channels_last_run(e, e.value(0), [&](int x) {
    const std::size_t n = static_cast<std::size_t>(e.rank(x) - 2);
    if (e.rank(x) < 3 || n > 3) e.invalid("takes inputs of rank 3 to 5 (1 to 3 spatial axes), got " + e.shape(x).to_string());
    if (!e.config().has("output_size")) e.invalid("\"output_size\" is required");
    const Dims out = per_axis(e, "output_size", n, {});
    for (std::size_t i = 0; i < n; ++i) {
      const int axis = static_cast<int>(i) + 1;
      const Shape s = e.shape(x);
      const std::int64_t in = s[axis], o = out[i];
      if (o <= 0) e.invalid("\"output_size\" entries must be positive");
      if (in == o) continue;
      std::vector<int> cells;
      for (std::int64_t c = 0; c < o; ++c) {
        const std::int64_t begin = std::min(c * in / o, in - 1), end = std::min((((c + 1) * in) + o - 1) / o, in);
        Dims b(static_cast<std::size_t>(s.rank()), 0), shape = s.dims();
        b[static_cast<std::size_t>(axis)] = begin;
        shape[static_cast<std::size_t>(axis)] = end - begin;
        const int window = e.add("crop", {x}, Attrs{{"begin", b}, {"shape", shape}}, "window");
        cells.push_back(reduce_on(e, window, kMax ? "max" : "mean", {axis}, true));
      }
      x = cells.size() == 1 ? cells[0] : e.add("concat", cells, Attrs{{"axis", std::int64_t{axis}}}, "cells");
    }
    return x;
  })};
}

// --- attention ---------------------------------------------------------------------------

// dot_product_attention(query (B,T,N,H), key (B,S,K,H), value (B,S,K,H'), bias, mask,
// scale=): Keras's TensorFlow formula: logits = q·kᵀ·scale (+ bias), masked positions (mask
// false, or above the diagonal with is_causal) set to -0.7·3.38953e38, a softmax over S in
// float32, then ·v. Heads of key and value repeat to the query's (grouped-query attention).
std::vector<int> dot_product_attention(const Emit& e) {
  if (e.flag("flash_attention", false)) e.unsupported("flash_attention=True is not supported (nor by Keras's TensorFlow backend)");
  if (e.config().has("attn_logits_soft_cap")) e.unsupported("attn_logits_soft_cap is only supported by Keras on JAX with TPUs");
  int q = e.value(0), k = e.value(1), v = e.value(2);
  if (e.rank(q) != 4 || e.rank(k) != 4 || e.rank(v) != 4) e.invalid("takes 4-D query, key and value (batch, length, heads, dim)");
  const Shape qs = e.shape(q), ks = e.shape(k);
  const std::int64_t b = qs[0], t = qs[1], heads = qs[2], s = ks[1], kv_heads = ks[2];
  if (heads != kv_heads) {
    if (kv_heads <= 0 || heads % kv_heads != 0) {
      e.invalid("the query's " + std::to_string(heads) + " heads must be a multiple of the key's " + std::to_string(kv_heads));
    }
    const Attrs rep{{"axis", std::int64_t{2}}, {"repeats", heads / kv_heads}};
    k = e.add("repeat", {k}, rep, "repeat_key");
    v = e.add("repeat", {v}, rep, "repeat_value");
  }
  const std::int64_t dim = e.shape(v).dim(-1);
  const auto heads_first = [&](int x) {
    const Shape xs = e.shape(x);
    return e.reshape(transpose_to(e, x, {0, 2, 1, 3}), {xs[0] * xs[2], xs[1], xs[3]});
  };
  int logits = e.add("batch_matmul", {heads_first(q), heads_first(k)}, Attrs{{"transpose_a", std::int64_t{0}}, {"transpose_b", std::int64_t{1}}}, "scores");
  const std::optional<double> scale = e.op.kwarg("scale");
  const double factor = scale ? *scale : static_cast<double>(1.0f / std::sqrt(static_cast<float>(qs[3])));
  logits = e.reshape(affine(e, logits, factor, 0.0, "scale"), {b, heads, t, s});
  if (!is_none(e, 3)) logits = e.binary("add", logits, e.value(3));
  const double large_negative = -0.7 * 3.38953e38;
  const auto masked = [&](int cond) {
    const auto [m, l] = e.same_dtype(cond, logits);
    return e.add("where", {m, l, fill_like(e, l, large_negative)}, {}, "masked");
  };
  if (e.flag("is_causal", false)) {
    const int causal = e.add("attention_mask", {}, Attrs{{"query_len", t}, {"key_len", s}, {"causal", std::int64_t{1}}}, "causal");
    logits = masked(e.reshape(causal, {1, 1, t, s}));
  }
  if (!is_none(e, 4)) logits = masked(e.value(4));
  const int probs = e.reshape(e.add("softmax", {logits}, {}, "softmax"), {b * heads, t, s});
  const int out = e.add("batch_matmul", {probs, heads_first(v)}, Attrs{{"transpose_a", std::int64_t{0}}, {"transpose_b", std::int64_t{0}}}, "weighted");
  return {transpose_to(e, e.reshape(out, {b, heads, t, dim}), {0, 2, 1, 3})};
}

}  // namespace

void add_nn_emitters(std::map<std::string, Emitter>& table) {
  table["Conv"] = conv;
  table["DepthwiseConv"] = depthwise_conv;
  table["SeparableConv"] = separable_conv;
  table["ConvTranspose"] = conv_transpose;
  table["MaxPool"] = pool<true>;
  table["AveragePool"] = pool<false>;
  table["AdaptiveMaxPool"] = adaptive_pool<true>;
  table["AdaptiveAveragePool"] = adaptive_pool<false>;
  table["DotProductAttention"] = dot_product_attention;
  add_nn_math_emitters(table);
}

}  // namespace nnfit::operation_emit
