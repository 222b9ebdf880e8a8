// The emitters of keras.ops.nn's normalizations, statistics, losses and encodings
// (Note [Keras operations] in operation.cpp): BatchNorm, LayerNorm, RMSNorm, Moments, the
// three crossentropies, MultiHot, DepthToSpace, SpaceToDepth, PSNR and the activations Keras 3
// added (Celu ... Threshold: composed_activations.h, shared with layers' activation=), each Keras's
// TensorFlow formula written with the engine's element-wise, reduction and shape ops (so
// autodiff differentiates them as TensorFlow's tape does), except LayerNorm over the last
// axis with both gamma and beta, which is the fused `layer_norm` op LayerNormalization emits.
#include <algorithm>
#include <cmath>
#include <map>

#include "nn/composed_activations.h"
#include "nn/layers/operation_nn_emit.h"

namespace nnfit::operation_emit {
namespace {

constexpr double kEpsilon = 1e-7;  // Keras's backend.epsilon()

int mul(const Emit& e, int a, int b) { return e.binary("multiply", a, b); }
int add(const Emit& e, int a, int b) { return e.binary("add", a, b); }
int rsqrt_plus(const Emit& e, int var, double eps) { return e.unary("rsqrt", affine(e, var, 1.0, eps, "epsilon")); }
Dims without(const Shape& s, const Dims& axes) {
  Dims out;
  for (int i = 0; i < s.rank(); ++i) {
    if (std::find(axes.begin(), axes.end(), i) == axes.end()) out.push_back(s[i]);
  }
  return out;
}

// A vector argument reshaped to broadcast against x of rank `rank` along `axes` (Keras's
// _broadcast: only when its rank differs from x's and the axes are not just the last).
int broadcast_along(const Emit& e, int v, int rank, const Dims& axes) {
  if (e.rank(v) == rank || (axes.size() == 1 && axes[0] == rank - 1)) return v;
  const Shape vs = e.shape(v);
  Dims dims(static_cast<std::size_t>(rank), 1);
  std::size_t k = 0;
  for (std::int64_t a : axes) {
    if (k >= static_cast<std::size_t>(vs.rank())) e.invalid("a scale or offset of shape " + vs.to_string() + " does not fit the axes");
    dims[static_cast<std::size_t>(a)] = vs[static_cast<int>(k++)];
  }
  return e.reshape(v, dims);
}

// moments(x, axes, keepdims): tf.nn.moments, the mean and the mean squared deviation.
std::vector<int> moments(const Emit& e) {
  const int x = e.value(0);
  const Dims axes = e.axes("axes", e.rank(x));
  const bool keep = e.flag("keepdims", false);
  const int mean = reduce_on(e, x, "mean", axes, true);
  const int var = reduce_on(e, e.unary("square", e.binary("subtract", x, mean)), "mean", axes, keep);
  return {keep ? mean : e.reshape(mean, without(e.shape(x), axes)), var};
}

// batch_normalization(x, mean, variance, offset, scale; axis, epsilon): tf.nn.batch_normalization,
// inv = rsqrt(variance + ε)·scale, y = x·inv + (offset − mean·inv).
std::vector<int> batch_norm(const Emit& e) {
  const int x = e.value(0), r = e.rank(x);
  if (!e.config().has("axis")) e.invalid("\"axis\" is required");
  const std::int64_t axis = e.axis(e.config().i("axis"), r);
  const auto vec = [&](std::size_t k) {
    const int v = e.value(k);
    if (e.rank(v) != 1 || e.shape(v)[0] != e.shape(x)[static_cast<int>(axis)]) {
      e.invalid("argument " + std::to_string(k) + " must be a vector of x.shape[axis] = " +
                std::to_string(e.shape(x)[static_cast<int>(axis)]) + " values, got " + e.shape(v).to_string());
    }
    if (axis == r - 1) return v;
    Dims dims(static_cast<std::size_t>(r - axis), 1);
    dims[0] = e.shape(v)[0];
    return e.reshape(v, dims);
  };
  int inv = rsqrt_plus(e, vec(2), e.config().f_or("epsilon", 1e-3));
  if (!is_none(e, 4)) inv = mul(e, inv, vec(4));
  const int mean_inv = mul(e, vec(1), inv);
  const int shift = is_none(e, 3) ? e.unary("negative", mean_inv) : e.binary("subtract", vec(3), mean_inv);
  return {add(e, mul(e, x, inv), shift)};
}

// layer_normalization(x, gamma, beta; axis, epsilon, rms_scaling): Keras's _layer_normalization.
std::vector<int> layer_norm(const Emit& e) {
  const int x = e.value(0), r = e.rank(x);
  const Dims axes = e.axes("axis", r);
  const double eps = e.config().f_or("epsilon", kEpsilon);
  const bool last = axes.size() == 1 && axes[0] == r - 1;
  const bool gamma = !is_none(e, 1), beta = !is_none(e, 2);
  if (e.flag("rms_scaling", false)) {
    const int mean = reduce_on(e, x, "mean", axes, true);
    const int var = reduce_on(e, e.unary("square", e.binary("subtract", x, mean)), "mean", axes, true);
    const int y = mul(e, x, rsqrt_plus(e, var, eps));
    return {gamma ? mul(e, y, broadcast_along(e, e.value(1), r, axes)) : y};
  }
  if (last && gamma && beta && e.rank(e.value(1)) == 1 && e.rank(e.value(2)) == 1) {
    return {e.g.add_node("layer_norm", {x, e.value(1), e.value(2)}, Attrs{{"epsilon", eps}}, e.node("layer_norm"))[0]};
  }
  const int mean = reduce_on(e, x, "mean", axes, true);
  const int var = reduce_on(e, e.unary("square", e.binary("subtract", x, mean)), "mean", axes, true);
  int inv = rsqrt_plus(e, var, eps);
  if (gamma) inv = mul(e, inv, broadcast_along(e, e.value(1), r, axes));
  int res = e.unary("negative", mul(e, mean, inv));
  if (beta) res = add(e, res, broadcast_along(e, e.value(2), r, axes));
  return {add(e, mul(e, x, inv), res)};
}

// rms_normalization(x, scale; axis, epsilon): x·rsqrt(mean(x²) + ε)·scale.
std::vector<int> rms_norm(const Emit& e) {
  const int x = e.value(0);
  const Dims axes = e.axes("axis", e.rank(x));
  const int rrms = rsqrt_plus(e, reduce_on(e, e.unary("square", x), "mean", axes, true), e.config().f_or("epsilon", kEpsilon));
  const int y = mul(e, x, rrms);
  return {is_none(e, 1) ? y : mul(e, y, e.value(1))};
}

int clipped(const Emit& e, int p) {
  const int lo = e.add("maximum", {p, fill_like(e, p, kEpsilon)}, {}, "clip_low");
  return e.add("minimum", {lo, fill_like(e, lo, 1.0 - kEpsilon)}, {}, "clip_high");
}

void same_shapes(const Emit& e, int target, int output) {
  if (e.shape(target) != e.shape(output)) {
    e.invalid("target " + e.shape(target).to_string() + " and output " + e.shape(output).to_string() + " must have the same shape");
  }
}

// binary_crossentropy(target, output; from_logits), element-wise: from logits
// tf.nn.sigmoid_cross_entropy_with_logits (relu(z) − z·t + log1p(exp(−|z|))); else
// −(t·log p + (1 − t)·log(1 − p)) with p clipped to [ε, 1 − ε].
std::vector<int> binary_crossentropy(const Emit& e) {
  const int t = e.value(0), z = e.value(1);
  same_shapes(e, t, z);
  if (e.flag("from_logits", false)) {
    const int relu = e.add("activation", {z}, Attrs{{"kind", std::string("relu")}}, "relu");
    const int soft = e.unary("log1p", e.unary("exp", e.unary("negative", e.unary("abs", z))));
    return {add(e, e.binary("subtract", relu, mul(e, z, t)), soft)};
  }
  const int p = clipped(e, z);
  const int pos = mul(e, t, e.unary("log", p));
  const int neg = mul(e, affine(e, t, -1.0, 1.0, "one_minus_target"), e.unary("log", affine(e, p, -1.0, 1.0, "one_minus_output")));
  return {e.unary("negative", add(e, pos, neg))};
}

int log_softmax_on(const Emit& e, int z, std::int64_t axis) {
  return e.binary("subtract", z, reduce_on(e, z, "logsumexp", {axis}, true));
}

// categorical_crossentropy(target, output; from_logits, axis): −Σ t·log_softmax(z) from
// logits (tf.nn.softmax_cross_entropy_with_logits); else −Σ t·log(clip(p / Σp)).
std::vector<int> categorical_crossentropy(const Emit& e) {
  const int t = e.value(0), out = e.value(1);
  same_shapes(e, t, out);
  const std::int64_t axis = e.axis(e.config().i_or("axis", -1), e.rank(out));
  int logp;
  if (e.flag("from_logits", false)) {
    logp = log_softmax_on(e, out, axis);
  } else {
    const int norm = e.binary("divide", out, reduce_on(e, out, "sum", {axis}, true));
    logp = e.unary("log", clipped(e, norm));
  }
  return {e.unary("negative", reduce_on(e, mul(e, t, logp), "sum", {axis}, false))};
}

// sparse_categorical_crossentropy(target, output; from_logits, axis=-1): TensorFlow's
// sparse_softmax_cross_entropy_with_logits on the logits, or on log(clip(p)) (so p is
// renormalized, as there). The target's one-hot row compares it with the class ids 0..C−1,
// a running sum of ones along the class axis.
std::vector<int> sparse_categorical_crossentropy(const Emit& e) {
  int t = e.value(0);
  const int out = e.value(1), r = e.rank(out);
  if (e.axis(e.config().i_or("axis", -1), r) != r - 1) e.invalid("only axis=-1 is supported (as Keras's TensorFlow backend)");
  Dims ts = e.shape(t).dims();
  if (static_cast<int>(ts.size()) == r && ts.back() == 1) ts.pop_back();
  const Dims os = e.shape(out).dims();
  if (ts != Dims(os.begin(), os.end() - 1)) {
    e.invalid("target " + e.shape(t).to_string() + " must have the output's shape " + e.shape(out).to_string() + " without its last axis");
  }
  ts.push_back(1);
  t = e.reshape(t, ts);
  const int z = e.flag("from_logits", false) ? out : e.unary("log", clipped(e, out));
  const int ones = fill_like(e, z, 1.0);
  const int ids = affine(e, e.add("cumulative", {ones}, Attrs{{"axis", std::int64_t{r - 1}}, {"kind", std::string("cumsum")}}, "count"),
                         1.0, -1.0, "class_ids");
  const int onehot = e.binary("equal", t, ids);
  const auto [hot, logp] = e.same_dtype(onehot, log_softmax_on(e, z, r - 1));
  return {e.unary("negative", reduce_on(e, mul(e, hot, logp), "sum", {r - 1}, false))};
}

// multi_hot(inputs, num_classes; axis=-1): the one-hot rows (ids == 0..K−1, the "classes"
// constant) reduced with max over axis 1 (axis 0 for a vector), as Keras's TensorFlow backend.
std::vector<int> multi_hot(const Emit& e) {
  if (e.config().i_or("axis", -1) != -1) e.unsupported("only axis=-1 is supported");
  if (e.flag("sparse", false)) e.unsupported("sparse=True is not supported");
  int ids = e.value(0);
  if (!is_floating(e.g.desc(ids).dtype)) ids = e.add("cast", {ids}, Attrs{{"dtype", std::string("float32")}}, "cast");
  Dims dims = e.shape(ids).dims();
  const std::int64_t reduction = dims.size() > 1 ? 1 : 0;
  dims.push_back(1);
  const int onehot = e.binary("equal", e.reshape(ids, dims), e.constant("classes"));
  return {reduce_on(e, onehot, "max", {reduction}, false)};
}

// depth_to_space / space_to_depth (NHWC, TensorFlow's order): (B, H, W, r·r·C) ↔ (B, H·r, W·r, C)
// through (B, H, W, r, r, C) ↔ (B, H, r, W, r, C).
template <bool kToSpace>
std::vector<int> depth_space(const Emit& e) {
  const std::int64_t r = e.config().i_or("block_size", 0);
  if (r < 2) e.invalid("\"block_size\" must be an integer >= 2");
  return {channels_last_run(e, e.value(0), [&](int x) {
    const Shape s = e.shape(x);
    if (s.rank() != 4) e.invalid("takes a 4-D input, got " + s.to_string());
    const std::int64_t b = s[0], h = s[1], w = s[2], c = s[3];
    const Dims perm{0, 1, 3, 2, 4, 5};
    if (kToSpace) {
      if (c % (r * r) != 0) e.invalid("the channels (" + std::to_string(c) + ") must be a multiple of block_size² (" + std::to_string(r * r) + ")");
      const int y = transpose_to(e, e.reshape(x, {b, h, w, r, r, c / (r * r)}), perm);
      return e.reshape(y, {b, h * r, w * r, c / (r * r)});
    }
    if (h % r != 0 || w % r != 0) e.invalid("the height and width " + s.to_string() + " must be multiples of block_size " + std::to_string(r));
    const int y = transpose_to(e, e.reshape(x, {b, h / r, r, w / r, r, c}), perm);
    return e.reshape(y, {b, h / r, w / r, r * r * c});
  })};
}

// psnr(x1, x2; max_val): 20·log10(max_val) − 10·log10(mean((x1 − x2)²)) over every axis.
std::vector<int> psnr(const Emit& e) {
  const int a = e.value(0), b = e.value(1);
  same_shapes(e, a, b);
  if (!e.config().has("max_val")) e.invalid("\"max_val\" is required");
  const double max_val = e.config().f("max_val");
  Dims all(static_cast<std::size_t>(e.rank(a)));
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<std::int64_t>(i);
  const int mse = reduce_on(e, e.unary("square", e.binary("subtract", a, b)), "mean", all, false);
  return {affine(e, e.unary("log10", mse), -10.0, 20.0 * std::log10(max_val), "psnr")};
}

// The activations Keras 3 added (composed_activations.h) with their config's arguments.
template <const char* kName>
std::vector<int> composed_activation(const Emit& e) {
  ComposedActivationArgs a;
  a.alpha = e.config().f_or("alpha", a.alpha);
  a.threshold = e.config().f_or("threshold", a.threshold);
  a.default_value = e.config().f_or("default_value", a.default_value);
  a.b = e.config().f_or("b", a.b);
  a.axis = e.config().i_or("axis", a.axis);
  int x = e.value(0);
  if (!is_floating(e.g.desc(x).dtype)) x = e.add("cast", {x}, Attrs{{"dtype", std::string("float32")}}, "cast");
  return {emit_composed_activation(e.g, x, kName, a, e.node(""))};
}

constexpr char kCelu[] = "celu", kGlu[] = "glu", kHardShrink[] = "hard_shrink", kHardTanh[] = "hard_tanh",
               kLogSigmoid[] = "log_sigmoid", kSoftShrink[] = "soft_shrink", kSparsePlus[] = "sparse_plus",
               kSparseSigmoid[] = "sparse_sigmoid", kSparsemax[] = "sparsemax", kSquareplus[] = "squareplus",
               kTanhShrink[] = "tanh_shrink", kThreshold[] = "threshold";

}  // namespace

void add_nn_math_emitters(std::map<std::string, Emitter>& table) {
  table["Moments"] = moments;
  table["BatchNorm"] = batch_norm;
  table["LayerNorm"] = layer_norm;
  table["RMSNorm"] = rms_norm;
  table["BinaryCrossentropy"] = binary_crossentropy;
  table["CategoricalCrossentropy"] = categorical_crossentropy;
  table["SparseCategoricalCrossentropy"] = sparse_categorical_crossentropy;
  table["MultiHot"] = multi_hot;
  table["DepthToSpace"] = depth_space<true>;
  table["SpaceToDepth"] = depth_space<false>;
  table["PSNR"] = psnr;
  table["Celu"] = composed_activation<kCelu>;
  table["Glu"] = composed_activation<kGlu>;
  table["HardShrink"] = composed_activation<kHardShrink>;
  table["HardTanh"] = composed_activation<kHardTanh>;
  table["LogSigmoid"] = composed_activation<kLogSigmoid>;
  table["SoftShrink"] = composed_activation<kSoftShrink>;
  table["SparsePlus"] = composed_activation<kSparsePlus>;
  table["SparseSigmoid"] = composed_activation<kSparseSigmoid>;
  table["Sparsemax"] = composed_activation<kSparsemax>;
  table["Squareplus"] = composed_activation<kSquareplus>;
  table["TanhShrink"] = composed_activation<kTanhShrink>;
  table["Threshold"] = composed_activation<kThreshold>;
}

int nn_operation_outputs(const std::string& class_name) { return class_name == "Moments" ? 2 : 1; }

}  // namespace nnfit::operation_emit
