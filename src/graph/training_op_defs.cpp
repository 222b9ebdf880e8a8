// Shape inference and gradient rules of the training-only ops (docs/design/ops.md,
// "Dropout" and "Optimizer updates"): the updates that mutate variables and their slots
// (optimizers, batch norm's moving averages), Keras's gradient clipping between gradients
// and updates, loss scaling's unscale_gradient, and the random regularizers (dropout,
// the Gaussian and alpha-dropout noise).

#include "nnfit/core/error.h"
#include "nnfit/graph/graph.h"
#include "nnfit/graph/op_def.h"

namespace nnfit {

namespace op_rules::training {

using Descs = std::vector<TensorDesc>;

void expect_count(const Descs& in, std::size_t n) {
  NNFIT_CHECK(in.size() == n, InvalidArgument, "expected ", n, " inputs, got ", in.size());
}

void expect_same(const TensorDesc& a, const TensorDesc& b, const char* what) {
  NNFIT_CHECK(a.shape == b.shape, InvalidArgument, what, ": shapes ", a.shape.to_string(), " and ",
              b.shape.to_string(), " differ");
}

std::string grad_name(GradContext& c, const std::string& suffix) {
  return c.graph.node(c.node).name + "/grad_" + suffix;
}

Descs infer_update(const Descs& in, const Attrs&) {
  NNFIT_CHECK(in.size() >= 2, InvalidArgument, "an update needs the variable and its gradient");
  for (std::size_t i = 1; i < in.size(); ++i) expect_same(in[0], in[i], "variable and gradient/slot");
  return {};
}

// Keras's Adafactor: the variable, its gradient, r (the variable's shape without the last
// axis), c (without the one before it), v (like the variable); r and c are scalars for a
// variable of rank < 2 (Keras's placeholders).
Descs infer_adafactor(const Descs& in, const Attrs& a) {
  expect_count(in, 5);
  expect_same(in[0], in[1], "variable and gradient");
  expect_same(in[0], in[4], "variable and velocity");
  const std::vector<std::int64_t>& d = in[0].shape.dims();
  Shape r, c;
  if (d.size() >= 2) {
    r = Shape(std::vector<std::int64_t>(d.begin(), d.end() - 1));
    std::vector<std::int64_t> cd(d.begin(), d.end() - 2);
    cd.push_back(d.back());
    c = Shape(cd);
  }
  NNFIT_CHECK(in[2].shape == r && in[3].shape == c, InvalidArgument, "adafactor_update: a variable of shape ",
              in[0].shape.to_string(), " takes r of shape ", r.to_string(), " and c of shape ", c.to_string(), ", got ",
              in[2].shape.to_string(), " and ", in[3].shape.to_string());
  NNFIT_CHECK(a.f("clip_threshold") > 0.0 && a.f("epsilon_2") >= 0.0 && a.f("epsilon_1") >= 0.0, InvalidArgument,
              "adafactor_update: clip_threshold must be positive and the epsilons >= 0");
  return {};
}

// Keras's weight decay before an update: the variable alone, mutated.
Descs infer_decay(const Descs& in, const Attrs& a) {
  expect_count(in, 1);
  NNFIT_CHECK(a.f("weight_decay") >= 0.0, InvalidArgument, "decay_weights: weight_decay must not be negative");
  return {};
}

// Keras's use_ema: the variable and its average (both may change) -> nothing.
Descs infer_ema(const Descs& in, const Attrs& a) {
  expect_count(in, 2);
  expect_same(in[0], in[1], "variable and average");
  NNFIT_CHECK(a.f("momentum") >= 0.0 && a.f("momentum") <= 1.0 && a.i("overwrite_frequency") >= 0, InvalidArgument,
              "ema_update: momentum must be in [0, 1] and overwrite_frequency >= 0");
  return {};
}

// Gradient clipping (the optimizer's clipvalue, clipnorm, global_clipnorm): x -> y like x;
// global_norm_scale: every gradient -> the scalar each is multiplied by.
Descs infer_clip(const Descs& in, const Attrs&) {
  expect_count(in, 1);
  return {in[0]};
}

Descs infer_global_norm_scale(const Descs& in, const Attrs& a) {
  NNFIT_CHECK(!in.empty(), InvalidArgument, "global_norm_scale needs at least one tensor");
  NNFIT_CHECK(a.f("clipnorm") > 0.0, InvalidArgument, "global_norm_scale: clipnorm must be positive");
  return {{Shape{}, DType::f32}};
}

// Loss scaling on a device (Note [Loss scaling on the device]): a scaled gradient and the
// scale -> the gradient unscaled (like g) and whether any of its elements is not finite
// (a float32 scalar, 1 or 0).
Descs infer_unscale_gradient(const Descs& in, const Attrs&) {
  expect_count(in, 2);
  NNFIT_CHECK(in[0].dtype == DType::f32 && in[1].dtype == DType::f32, InvalidArgument,
              "unscale_gradient: the gradient and the scale must be float32, got ", dtype_name(in[0].dtype), " and ",
              dtype_name(in[1].dtype));
  NNFIT_CHECK(in[1].shape.rank() == 0, InvalidArgument, "unscale_gradient: the scale must be a scalar, got shape ",
              in[1].shape.to_string());
  return {in[0], {Shape{}, DType::f32}};
}

// A split step's micro-batch on a device (Note [Micro-batches on the device]): its gradient,
// the step's divisor and the gradient's sum, mutated: sum += g · (weight / divisor); the
// one output is whether any element of the sum is then not finite (a float32 scalar).
Descs infer_accumulate_gradient(const Descs& in, const Attrs& a) {
  expect_count(in, 3);
  NNFIT_CHECK(in[0].dtype == DType::f32 && in[1].dtype == DType::f32 && in[2].dtype == DType::f32, InvalidArgument,
              "accumulate_gradient: the gradient, the divisor and the sum must be float32");
  NNFIT_CHECK(in[1].shape.rank() == 0, InvalidArgument, "accumulate_gradient: the divisor must be a scalar, got shape ",
              in[1].shape.to_string());
  expect_same(in[0], in[2], "gradient and sum");
  NNFIT_CHECK(a.f("weight") > 0.0, InvalidArgument, "accumulate_gradient: weight must be positive");
  return {{Shape{}, DType::f32}};
}

Descs infer_dropout(const Descs& in, const Attrs& a) {
  expect_count(in, 1);
  double rate = a.f("rate");
  NNFIT_CHECK(rate >= 0.0 && rate < 1.0, InvalidArgument, "dropout rate must be in [0, 1), got ", rate);
  if (a.has("noise_shape")) {
    const std::vector<std::int64_t>& noise = a.ints("noise_shape");
    bool fits = static_cast<std::int64_t>(noise.size()) == in[0].shape.rank();
    for (std::size_t d = 0; fits && d < noise.size(); ++d) {
      fits = noise[d] == 1 || noise[d] == in[0].shape[static_cast<std::int64_t>(d)];
    }
    NNFIT_CHECK(fits, InvalidArgument, "dropout: noise_shape must be x's shape ", in[0].shape.to_string(),
                " with some axes 1");
  }
  return {in[0], {in[0].shape, DType::u8}};
}

// noise: x -> y, and for the multiplicative kinds the factor dy/dx (like x).
Descs infer_noise(const Descs& in, const Attrs& a) {
  expect_count(in, 1);
  const std::string& kind = a.s("kind");
  const double v = a.f("value");
  // The additive kinds (y = x + value·draw): gaussian_add (the GaussianNoise layer, and
  // keras.random.normal in a traced call), uniform_add (a draw in [0, 1): keras.random.uniform)
  // and truncated_normal_add (a normal draw within two standard deviations).
  // gamma_add: y = x + value·g, g a Gamma(rate, 1) draw (MixUp's and CutMix's Beta draws).
  const bool additive =
      kind == "gaussian_add" || kind == "uniform_add" || kind == "truncated_normal_add" || kind == "gamma_add";
  NNFIT_CHECK(additive || kind == "gaussian_mul" || kind == "alpha_dropout", InvalidArgument,
              "noise: kind must be gaussian_add, uniform_add, truncated_normal_add, gamma_add, gaussian_mul or "
              "alpha_dropout, got '", kind, "'");
  NNFIT_CHECK(kind != "gamma_add" || a.f_or("rate", 0.0) > 0.0, InvalidArgument,
              "noise: gamma_add needs a rate (the Gamma draw's alpha) above 0, got ", a.f_or("rate", 0.0));
  NNFIT_CHECK(v >= 0.0 && (additive || v < 1.0), InvalidArgument, "noise: ", kind, " value ", v,
              additive ? " must not be negative" : " must be in [0, 1)");
  if (additive) return {in[0]};
  return {in[0], in[0]};
}

Descs infer_dropout_grad(const Descs& in, const Attrs&) {
  expect_count(in, 2);
  expect_same(in[0], in[1], "dy and mask");
  return {in[0]};
}

// Additive noise passes dy on; the multiplicative kinds scale it by the saved factor.
std::vector<int> grad_noise(GradContext& c) {
  const Node n = c.graph.node(c.node);
  const int dy = c.output_grads[0];
  if (dy < 0 || !c.needs[0]) return {-1};
  if (n.outputs.size() == 1) return {dy};
  return {c.graph.add("mul", {dy, n.outputs[1]}, {}, grad_name(c, "x"))};
}

std::vector<int> grad_dropout(GradContext& c) {
  const Node n = c.graph.node(c.node);
  int dy = c.output_grads[0];
  if (dy < 0 || !c.needs[0]) return {-1};
  Attrs a;
  a.set("rate", n.attrs.f("rate"));
  return {c.graph.add("dropout_grad", {dy, n.outputs[1]}, a, grad_name(c, "x"))};
}

}  // namespace op_rules::training

}  // namespace nnfit
