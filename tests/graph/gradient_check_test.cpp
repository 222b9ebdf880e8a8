// Finite-difference gradient checks: for every differentiable op, the gradient that
// autodiff builds from the op's rule (run through the kernels the planner selects) matches
// central differences of the loss L = mean((op(inputs) - target)^2).
#include "graph/gradient_check_harness.h"

namespace nnfit {
namespace {

Attrs spatial(std::vector<std::int64_t> strides, const char* padding) {
  Attrs a;
  a.set("strides", strides);
  a.set("padding", std::string(padding));
  return a;
}

TEST(GradientCheck, Matmul) {
  for (std::int64_t ta : {0, 1}) {
    for (std::int64_t tb : {0, 1}) {
      Attrs a{{"transpose_a", ta}, {"transpose_b", tb}};
      check({"matmul", a, {random(ta ? Shape{5, 4} : Shape{4, 5}, 1), random(tb ? Shape{3, 5} : Shape{5, 3}, 2)}});
    }
  }
}

TEST(GradientCheck, BiasAddAddNReshape) {
  check({"bias_add", {}, {random(Shape{2, 3, 4}, 3), random(Shape{4}, 4)}});
  check({"add_n", {}, {random(Shape{3, 4}, 5), random(Shape{3, 4}, 6), random(Shape{3, 4}, 7)}});
  Attrs r;
  r.set("shape", std::vector<std::int64_t>{4, 3});
  check({"reshape", r, {random(Shape{2, 6}, 8)}});
}

TEST(GradientCheck, Activations) {
  for (const char* kind : {"relu", "sigmoid", "tanh", "gelu", "gelu_tanh", "elu", "selu", "softplus", "softsign",
                           "hard_sigmoid", "exponential", "leaky_relu", "relu6", "silu", "mish", "hard_silu",
                           "hard_sigmoid_keras2"}) {
    Tensor x = random(Shape{3, 7}, 9, -2.0f, 2.0f);
    // Keep clear of the kinks at 0 (relu, leaky_relu, relu6, selu), where a central
    // difference straddles two slopes; the others (±3, 6) lie outside [-2.1, 2.1].
    for (std::int64_t i = 0; i < x.numel(); ++i) {
      float& v = x.data<float>()[i];
      v = v < 0 ? v - 0.1f : v + 0.1f;
    }
    check({"activation", {{"kind", std::string(kind)}}, {x}});
  }
  check({"softmax", {}, {random(Shape{4, 6}, 10, -2.0f, 2.0f)}});
  check({"log_softmax", {}, {random(Shape{4, 6}, 11, -2.0f, 2.0f)}});
}

TEST(GradientCheck, ActivationArguments) {
  Tensor x = random(Shape{3, 7}, 12, -2.0f, 2.0f);
  // Clear of every kink below: 0, the thresholds 0.5 and -1, the cap 1.5.
  for (std::int64_t i = 0; i < x.numel(); ++i) {
    float& v = x.data<float>()[i];
    for (float kink : {0.0f, 0.5f, -1.0f, 1.5f}) {
      if (std::fabs(v - kink) < 0.05f) v = kink + 0.1f;
    }
  }
  check({"activation", {{"kind", std::string("leaky_relu")}, {"alpha", 0.05}}, {x}});
  check({"activation", {{"kind", std::string("elu")}, {"alpha", 0.7}}, {x}});
  check({"activation", {{"kind", std::string("relu_keras")}, {"alpha", 0.1}, {"threshold", 0.5}, {"max_value", 1.5}}, {x}});
  check({"activation", {{"kind", std::string("relu_keras")}, {"alpha", 0.0}, {"threshold", -1.0}}, {x}});
}

TEST(GradientCheck, PRelu) {
  // alpha per position, and shared along axis 1 (Keras's shared_axes=[1]).
  Tensor x = random(Shape{3, 4, 5}, 13, -2.0f, 2.0f);
  for (std::int64_t i = 0; i < x.numel(); ++i) {
    float& v = x.data<float>()[i];
    v = v < 0 ? v - 0.1f : v + 0.1f;
  }
  check({"prelu", {}, {x, random(Shape{4, 5}, 14, 0.0f, 0.5f)}});
  check({"prelu", {}, {x, random(Shape{1, 5}, 15, 0.0f, 0.5f)}});
  check({"prelu", {}, {x, random(Shape{4, 1}, 16, 0.0f, 0.5f)}});
}

TEST(GradientCheck, MergeOps) {
  const Shape s{3, 5};
  for (const char* op : {"sub", "mul", "maximum", "minimum"}) {
    check({op, {}, {random(s, 1), random(s, 2)}});
  }
  Attrs scale;
  scale.set("factor", -0.75);
  check({"scale", scale, {random(s, 3)}});
  for (std::int64_t axis : {1, 2}) {
    Attrs cat;
    cat.set("axis", axis);
    check({"concat", cat, {random(Shape{2, 3, 4}, 4), random(Shape{2, 3, 4}, 5), random(Shape{2, 3, 4}, 6)}});
    Attrs l2;
    l2.set("axis", axis);
    check({"l2_normalize", l2, {random(Shape{2, 3, 4}, 7)}});
  }
  for (std::int64_t ta : {0, 1}) {
    for (std::int64_t tb : {0, 1}) {
      Attrs bm;
      bm.set("transpose_a", ta);
      bm.set("transpose_b", tb);
      check({"batch_matmul", bm, {random(ta ? Shape{2, 4, 3} : Shape{2, 3, 4}, 8), random(tb ? Shape{2, 5, 4} : Shape{2, 4, 5}, 9)}});
    }
  }
}

TEST(GradientCheck, Reductions) {
  // Global pooling's axes: channels last (1..rank) and first (2..), with and without keepdims.
  for (const auto& axes : {std::vector<std::int64_t>{1}, std::vector<std::int64_t>{1, 2}, std::vector<std::int64_t>{2, 3}}) {
    for (std::int64_t keepdims : {0, 1}) {
      Attrs a;
      a.set("axes", axes);
      a.set("keepdims", keepdims);
      check({"reduce_mean", a, {random(Shape{2, 3, 4, 5}, 21)}});
      // Distinct values 0.05 apart, so no finite-difference step changes a maximum.
      Tensor x = random(Shape{2, 3, 4, 5}, 22);
      std::vector<float> values(static_cast<std::size_t>(x.numel()));
      for (std::size_t i = 0; i < values.size(); ++i) values[i] = -3.0f + 0.05f * static_cast<float>((i * 37) % values.size());
      std::copy(values.begin(), values.end(), x.data<float>());
      check({"reduce_max", a, {x}});
    }
  }
}

TEST(GradientCheck, DataMovement) {
  Attrs pad;
  pad.set("before", std::vector<std::int64_t>{0, 1, 0, 2});
  pad.set("after", std::vector<std::int64_t>{0, 2, 1, 0});
  check({"pad", pad, {random(Shape{2, 3, 4, 2}, 31)}});
  pad.set("value", 1.5);  // a constant border (Resizing's pad_to_aspect_ratio) has no gradient
  check({"pad", pad, {random(Shape{2, 3, 4, 2}, 31)}});
  Attrs crop;
  crop.set("begin", std::vector<std::int64_t>{0, 1, 2, 0});
  crop.set("shape", std::vector<std::int64_t>{2, 2, 1, 3});
  check({"crop", crop, {random(Shape{2, 4, 4, 3}, 32)}});
  for (const auto& perm : {std::vector<std::int64_t>{0, 2, 1}, std::vector<std::int64_t>{2, 0, 1}}) {
    Attrs t;
    t.set("perm", perm);
    check({"transpose", t, {random(Shape{2, 3, 4}, 33)}});
  }
  for (std::int64_t axis : {0, 1, 2}) {
    Attrs r;
    r.set("axis", axis);
    r.set("repeats", std::int64_t{3});
    check({"repeat", r, {random(Shape{2, 3, 2}, 34)}});
  }
}

// resize is linear in x, so its gradient (resize_grad, the adjoint) must match central
// differences for every method; [4, 6] -> [5, 3] scales up one axis and down the other.
TEST(GradientCheck, Resize) {
  for (const char* method : {"nearest", "bilinear", "bicubic", "area", "lanczos3", "lanczos5"}) {
    for (std::int64_t antialias : {0, 1}) {
      Attrs a;
      a.set("size", std::vector<std::int64_t>{5, 3});
      a.set("method", std::string(method));
      a.set("antialias", antialias);
      check({"resize", a, {random(Shape{2, 4, 6, 3}, 61)}});
    }
  }
}

TEST(GradientCheck, Conv2D) {
  check({"conv2d", spatial({1, 1}, "valid"), {random(Shape{2, 6, 5, 3}, 11), random(Shape{3, 3, 3, 4}, 12)}});
  check({"conv2d", spatial({2, 2}, "same"), {random(Shape{2, 7, 6, 2}, 13), random(Shape{3, 2, 2, 3}, 14)}});
  Attrs dilated = spatial({1, 1}, "same");
  dilated.set("dilations", std::vector<std::int64_t>{2, 3});
  check({"conv2d", dilated, {random(Shape{2, 7, 8, 2}, 41), random(Shape{3, 2, 2, 3}, 42)}});
  Attrs grouped = spatial({2, 1}, "valid");
  grouped.set("groups", std::int64_t{2});
  check({"conv2d", grouped, {random(Shape{2, 6, 5, 4}, 43), random(Shape{3, 2, 2, 6}, 44)}});
}

TEST(GradientCheck, TransposedConvolution) {
  // conv2d_backprop_input as a layer (Conv2DTranspose): gradients in dy and in the kernel.
  for (const char* pad : {"valid", "same"}) {
    Attrs a = spatial({2, 2}, pad);
    const std::int64_t oh = std::string(pad) == "same" ? 6 : 7;
    a.set("input_shape", std::vector<std::int64_t>{2, oh, oh, 3});
    check({"conv2d_backprop_input", a, {random(Shape{2, 3, 3, 2}, 45), random(Shape{3, 3, 3, 2}, 46)}});
  }
}

TEST(GradientCheck, Pooling) {
  for (const char* pad : {"valid", "same"}) {
    Attrs a = spatial({2, 2}, pad);
    a.set("pool_size", std::vector<std::int64_t>{3, 3});
    check({"max_pool2d", a, {random(Shape{2, 7, 7, 3}, 15)}});
    check({"avg_pool2d", a, {random(Shape{2, 7, 7, 3}, 16)}});
  }
}

TEST(GradientCheck, Conv3D) {
  using Ints = std::vector<std::int64_t>;
  check({"conv3d", spatial({1, 1, 1}, "valid"), {random(Shape{2, 4, 5, 4, 2}, 51), random(Shape{2, 3, 2, 2, 3}, 52)}});
  check({"conv3d", spatial({2, 2, 1}, "same"), {random(Shape{2, 5, 4, 5, 2}, 53), random(Shape{3, 2, 3, 2, 2}, 54)}});
  Attrs dilated = spatial({1, 1, 1}, "same");
  dilated.set("dilations", Ints{2, 1, 2});
  check({"conv3d", dilated, {random(Shape{1, 5, 4, 6, 2}, 55), random(Shape{2, 2, 3, 2, 3}, 56)}});
  Attrs grouped = spatial({1, 2, 1}, "valid");
  grouped.set("groups", std::int64_t{2});
  check({"conv3d", grouped, {random(Shape{2, 3, 5, 4, 4}, 57), random(Shape{2, 2, 2, 2, 6}, 58)}});
  // conv3d_backprop_input as an op of its own: gradients in dy and in the kernel.
  Attrs t = spatial({2, 2, 2}, "same");
  t.set("input_shape", Ints{1, 4, 5, 4, 3});
  check({"conv3d_backprop_input", t, {random(Shape{1, 2, 3, 2, 2}, 59), random(Shape{3, 2, 3, 3, 2}, 60)}});
}

TEST(GradientCheck, Pooling3D) {
  for (const char* pad : {"valid", "same"}) {
    Attrs a = spatial({2, 2, 1}, pad);
    a.set("pool_size", std::vector<std::int64_t>{2, 3, 2});
    check({"max_pool3d", a, {random(Shape{2, 5, 5, 4, 3}, 61)}});
    check({"avg_pool3d", a, {random(Shape{2, 5, 5, 4, 3}, 62)}});
  }
}

TEST(GradientCheck, Losses) {
  Tensor labels = Tensor::zeros(Shape{5}, DType::i32);
  for (int i = 0; i < 5; ++i) labels.data<std::int32_t>()[i] = (i * 3) % 4;
  Tensor onehot = Tensor::zeros(Shape{5, 4});
  for (int i = 0; i < 5; ++i) onehot.data<float>()[i * 4 + (i * 3) % 4] = 1.0f;
  for (std::int64_t logits : {0, 1}) {
    auto attrs = [&](const char* kind) {
      Attrs a;
      a.set("kind", std::string(kind));
      a.set("from_logits", logits);
      return a;
    };
    // Probabilities stay away from the clipping bounds so the expression is smooth.
    Tensor pred = logits ? random(Shape{5, 4}, 17, -2.0f, 2.0f) : random(Shape{5, 4}, 17, 0.1f, 0.9f);
    check({"loss", attrs("sparse_categorical_crossentropy"), {pred, labels}, true});
    check({"loss", attrs("categorical_crossentropy"), {pred.clone(), onehot}, true, 1});
    Tensor targets = random(Shape{5, 4}, 18, 0.0f, 1.0f);
    check({"loss", attrs("binary_crossentropy"), {pred.clone(), targets}, true, 1});
    check({"loss", attrs("mean_squared_error"), {pred.clone(), targets}, true, 1});
  }
}

// Keras's row losses and the crossentropies' options (label smoothing, focal factors),
// from logits and probabilities where Keras takes both, on [N, C] and [N, T, C]
// predictions; predictions and targets stay away from kinks (|p - t| > 0.05, hinge margins
// off 0) so the expression is smooth where the finite differences look.
TEST(GradientCheck, RowLosses) {
  auto attrs = [](const char* kind, std::int64_t logits = 0) {
    Attrs a;
    a.set("kind", std::string(kind));
    a.set("from_logits", logits);
    return a;
  };
  for (const Shape& s : {Shape{5, 4}, Shape{2, 3, 4}}) {
    Tensor pred = random(s, 60, 0.2f, 0.8f), target = random(s, 61, 0.2f, 0.8f);
    for (std::int64_t i = 0; i < pred.numel(); ++i) {
      float& t = target.data<float>()[i];
      if (std::fabs(pred.data<float>()[i] - t) < 0.05f) t += 0.1f;
    }
    for (const char* kind : {"mean_absolute_error", "mean_absolute_percentage_error", "mean_squared_logarithmic_error",
                             "log_cosh", "poisson", "kl_divergence", "cosine_similarity"}) {
      SCOPED_TRACE(kind);
      check({"loss", attrs(kind), {pred.clone(), target}, true, 1});
    }
    Attrs huber = attrs("huber");
    huber.set("delta", 0.3);  // both branches: |p - t| spans 0.05 .. 0.7
    check({"loss", huber, {pred.clone(), target}, true, 1});
    Tensor signs = random(s, 62, -1.0f, 1.0f), onehot = Tensor::zeros(s), wide = random(s, 63, -3.0f, 3.0f);
    for (std::int64_t i = 0; i < signs.numel(); ++i) signs.data<float>()[i] = signs.data<float>()[i] < 0 ? -1.0f : 1.0f;
    for (std::int64_t r = 0; r < onehot.numel() / 4; ++r) onehot.data<float>()[r * 4 + r % 4] = 1.0f;
    for (std::int64_t i = 0; i < wide.numel(); ++i) {
      float& z = wide.data<float>()[i];
      if (std::fabs(std::fabs(z) - 1.0f) < 0.1f) z += 0.3f;  // off the hinge's kink at |z| = 1
    }
    for (const char* kind : {"hinge", "squared_hinge"}) {
      check({"loss", attrs(kind), {wide.clone(), signs}, true, 1});
      check({"loss", attrs(kind), {wide.clone(), onehot}, true, 1});  // 0/1 targets, converted
    }
    check({"loss", attrs("categorical_hinge"), {wide.clone(), onehot}, true, 1});
    for (std::int64_t logits : {0, 1}) {
      Tensor p = logits ? random(s, 64, -2.0f, 2.0f) : random(s, 64, 0.1f, 0.9f);
      for (const char* kind : {"binary_focal_crossentropy", "categorical_focal_crossentropy", "categorical_crossentropy",
                               "binary_crossentropy"}) {
        SCOPED_TRACE(std::string(kind) + (logits ? " from logits" : ""));
        if (s.rank() == 3 && std::string(kind) == "categorical_crossentropy") continue;  // [N, C] only
        Attrs a = attrs(kind, logits);
        a.set("label_smoothing", 0.1);
        a.set("alpha", 0.4);
        a.set("gamma", 1.5);
        a.set("apply_class_balancing", std::int64_t{1});
        check({"loss", a, {p.clone(), kind == std::string("binary_focal_crossentropy") ? target : onehot}, true, 1});
      }
    }
  }
}

// Keras's sample_weight: each sample's loss and gradient times its weight (a constant).
TEST(GradientCheck, WeightedLoss) {
  Tensor p = random(Shape{4, 3}, 60);
  Tensor w = random(Shape{4}, 61, 0.0f, 2.0f);
  Tensor real = random(Shape{4, 3}, 62);
  Tensor ids = Tensor::zeros(Shape{4}, DType::i32);
  for (int i = 0; i < 4; ++i) ids.data<std::int32_t>()[i] = i % 3;
  for (const char* kind : {"mean_squared_error", "huber", "sparse_categorical_crossentropy"}) {
    SCOPED_TRACE(kind);
    Attrs a;
    a.set("kind", std::string(kind));
    a.set("from_logits", std::int64_t{1});
    const bool sparse = kind == std::string("sparse_categorical_crossentropy");
    check({"loss", a, {p.clone(), sparse ? ids : real, w}, true, 1});
  }
}

TEST(GradientCheck, LayerNorm) {
  check({"layer_norm", {{"epsilon", 1e-3}}, {random(Shape{4, 6}, 23), random(Shape{6}, 24, 0.5f, 1.5f), random(Shape{6}, 25)}});
  check({"layer_norm", {{"epsilon", 1e-5}}, {random(Shape{2, 3, 5}, 26), random(Shape{5}, 27, 0.5f, 1.5f), random(Shape{5}, 28)}});
  std::uint64_t seed = 29;
  for (const char* mode : {"rms_scaling", "rms"}) {  // x * rstd * gamma: the row not centred
    SCOPED_TRACE(mode);
    Attrs a;
    a.set("epsilon", 1e-3);
    a.set("mode", std::string(mode));
    check({"layer_norm", a, {random(Shape{4, 6}, seed, 0.5f, 2.0f), random(Shape{6}, seed + 1, 0.5f, 1.5f), random(Shape{6}, seed + 2)}});
    seed += 3;
  }
}

// The regularizers' penalties (a scalar loss each): L1 away from its kink at 0, L2, and
// the orthogonal penalty over rows and over columns.
TEST(GradientCheck, WeightPenalty) {
  Attrs l1l2;
  l1l2.set("kind", std::string("l1l2"));
  l1l2.set("l1", 0.3);
  l1l2.set("l2", 0.7);
  check({"weight_penalty", l1l2, {random(Shape{3, 4}, 40, 0.2f, 1.0f)}, true});
  Attrs l2 = l1l2;
  l2.set("l1", 0.0);
  check({"weight_penalty", l2, {random(Shape{2, 3, 2}, 41)}, true});
  for (const char* mode : {"rows", "columns"}) {
    Attrs o;
    o.set("kind", std::string("orthogonal"));
    o.set("factor", 0.5);
    o.set("mode", std::string(mode));
    check({"weight_penalty", o, {random(Shape{4, 3}, 42)}, true});
  }
}

// Keras's Normalization: mean and variance are constants.
TEST(GradientCheck, Standardize) {
  for (std::int64_t invert : {0, 1}) {
    Attrs a;
    a.set("invert", invert);
    check({"standardize", a, {random(Shape{4, 3}, 50), random(Shape{3}, 51), random(Shape{3}, 52, 0.5f, 2.0f)}, false, 1});
  }
}

TEST(GradientCheck, GroupNorm) {
  Attrs a{{"epsilon", 1e-3}, {"groups", std::int64_t{2}}};
  check({"group_norm", a, {random(Shape{3, 4, 6}, 40), random(Shape{6}, 41, 0.5f, 1.5f), random(Shape{6}, 42)}});
  a.set("groups", std::int64_t{3});
  check({"group_norm", a, {random(Shape{2, 3}, 43), random(Shape{3}, 44, 0.5f, 1.5f), random(Shape{3}, 45)}});
}

TEST(GradientCheck, BatchNormAndDropout) {
  check({"batch_norm_train", {{"epsilon", 1e-3}}, {random(Shape{6, 2, 3}, 19), random(Shape{3}, 20, 0.5f, 1.5f), random(Shape{3}, 21)}});
  Attrs d;
  d.set("rate", 0.4);
  d.set("seed", std::int64_t{5});
  check({"dropout", d, {random(Shape{4, 9}, 22)}});
  d.set("noise_shape", std::vector<std::int64_t>{4, 1, 3});
  check({"dropout", d, {random(Shape{4, 5, 3}, 39)}});
}

// Inference-mode batch norm (a frozen BatchNormalization being trained through): x, gamma
// and beta; the moving statistics are constants.
TEST(GradientCheck, BatchNormInfer) {
  Case c{"batch_norm_infer", {{"epsilon", 1e-3}},
         {random(Shape{5, 2, 3}, 34), random(Shape{3}, 35, 0.5f, 1.5f), random(Shape{3}, 36), random(Shape{3}, 37),
          random(Shape{3}, 38, 0.5f, 2.0f)}};
  c.num_differentiated = 3;
  check(c);
}

// gather: repeated ids accumulate into one row; ids of either integer width or float32.
TEST(GradientCheck, Gather) {
  Tensor ids = Tensor::zeros(Shape{2, 3}, DType::i32);
  const std::int32_t v[] = {4, 0, 4, 2, 2, 4};
  std::copy(std::begin(v), std::end(v), ids.data<std::int32_t>());
  check({"gather", {}, {random(Shape{5, 3}, 30), ids}});
  Tensor fids = Tensor::zeros(Shape{4});
  const float f[] = {1.0f, 3.7f, 0.2f, 1.0f};  // truncated: 1, 3, 0, 1
  std::copy(std::begin(f), std::end(f), fids.data<float>());
  Case c{"gather", {}, {random(Shape{4, 2}, 31), fids}};
  c.constants = {1};
  check(c);
}

// apply_mask (Masking's output) and masked_mean (a masked GlobalAveragePooling1D): the
// gradient reaches x only, through the present steps.
TEST(GradientCheck, MaskOps) {
  Tensor mask = Tensor::zeros(Shape{2, 4});
  const float m[] = {1, 0, 1, 1, 0, 1, 1, 0};
  std::copy(std::begin(m), std::end(m), mask.data<float>());
  Case apply{"apply_mask", {}, {random(Shape{2, 4, 3}, 32), mask}};
  apply.constants = {1};
  check(apply);
  Case mean{"masked_mean", {}, {random(Shape{2, 4, 3}, 33), mask}};
  mean.constants = {1};
  check(mean);
}

// masked_softmax: the gradient reaches unmasked scores only, also in a row with no key
// left (uniform there, with no gradient) and with the heads sharing a sample's mask.
TEST(GradientCheck, MaskedSoftmax) {
  Tensor mask = Tensor::zeros(Shape{2, 3, 4});
  const float m[] = {1, 1, 0, 1, 0, 0, 0, 0, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 0, 1, 1, 0, 1};
  std::copy(std::begin(m), std::end(m), mask.data<float>());
  for (std::int64_t zero_rows : {0, 1}) {
    Case c{"masked_softmax", {{"zero_masked_rows", zero_rows}}, {random(Shape{4, 3, 4}, 34, -2.0f, 2.0f), mask}};
    c.constants = {1};
    check(c);
  }
}

// The Attention layers' scores: a tensor times a trainable scalar, and the additive
// (Bahdanau) scores with and without per-feature weights.
TEST(GradientCheck, AttentionScores) {
  Tensor s = Tensor::zeros(Shape{});
  s.data<float>()[0] = 0.7f;
  check({"scale_by", {}, {random(Shape{2, 3, 4}, 35), s}});
  check({"additive_scores", {}, {random(Shape{2, 3, 4}, 36), random(Shape{2, 5, 4}, 37), random(Shape{4}, 38)}});
  check({"additive_scores", {}, {random(Shape{2, 3, 4}, 39), random(Shape{2, 2, 4}, 40)}});
}

// The noise op's gradient: dy for additive noise, dy times the drawn factor otherwise (the
// draws repeat within the check's step, so finite differences see a fixed function).
TEST(GradientCheck, Noise) {
  for (const char* kind : {"gaussian_add", "gaussian_mul", "alpha_dropout"}) {
    SCOPED_TRACE(kind);
    check({"noise", {{"kind", std::string(kind)}, {"value", 0.3}, {"seed", std::int64_t{9}}}, {random(Shape{4, 5}, 70)}});
  }
}

// The recurrent scan: every cell, through each of its outputs (the sequence, the last h,
// LSTM's last c), backwards, masked (outputs kept or zeroed) and from initial states.
TEST(GradientCheck, RecurrentScan) {
  const std::int64_t n = 3, t = 4, h = 3;
  Tensor mask = Tensor::zeros(Shape{n, t});
  const float m[] = {1, 1, 0, 1, 0, 1, 1, 1, 1, 0, 0, 0};
  std::copy(std::begin(m), std::end(m), mask.data<float>());
  struct Cell {
    const char* name;
    std::int64_t gates;
    bool reset_after;
  };
  for (const Cell cell : {Cell{"simple_rnn", 1, false}, Cell{"lstm", 4, false}, Cell{"gru", 3, true}, Cell{"gru", 3, false}}) {
    const bool lstm = std::string(cell.name) == "lstm";
    const int outputs = lstm ? 3 : 2;
    for (int variant = 0; variant < 4; ++variant) {
      Attrs a;
      a.set("cell", std::string(cell.name));
      a.set("activation", std::string("tanh"));
      a.set("recurrent_activation", std::string("sigmoid"));
      a.set("reset_after", std::int64_t{cell.reset_after});
      a.set("go_backwards", std::int64_t{variant == 1 || variant == 3});
      a.set("time_order_output", std::int64_t{variant == 3});
      a.set("mask", std::int64_t{variant >= 2});
      a.set("zero_output_for_mask", std::int64_t{variant == 3});
      a.set("initial_state", std::int64_t{variant == 3});
      if (variant == 0 && std::string(cell.name) == "simple_rnn") a.set("activation", std::string("softsign"));
      if (variant >= 1) {  // Keras's recurrent_dropout: h_prev times fixed factors (the check's step)
        a.set("recurrent_dropout", 0.4);
        a.set("recurrent_seed", std::int64_t{11 + variant});
      }
      std::vector<Tensor> in{random(Shape{n, t, cell.gates * h}, 40 + variant), random(Shape{h, cell.gates * h}, 50 + variant)};
      if (cell.reset_after) in.push_back(random(Shape{cell.gates * h}, 60 + variant));
      std::vector<std::size_t> constants;
      if (variant >= 2) {
        constants.push_back(in.size());
        in.push_back(mask);
      }
      if (variant == 3) {
        for (int s = 0; s < (lstm ? 2 : 1); ++s) in.push_back(random(Shape{n, h}, 70 + s));
      }
      for (int out = 0; out < outputs; ++out) {
        SCOPED_TRACE(std::string(cell.name) + " variant " + std::to_string(variant) + " output " + std::to_string(out));
        Case c{"rnn", a, in};
        c.output = out;
        c.constants = constants;
        check(c);
      }
    }
  }
}

// The gradient check at bfloat16 and float16 (Note [Compute dtype]): autodiff's gradients
// with the op computing in the low type against the float32 ones on the same rounded inputs
// (held against central differences above), within a per-dtype tolerance of the largest
// gradient: bfloat16 3e-2 (8 significant bits, a few roundings), float16 4e-3 (11 bits).
TEST(GradientCheck, AtBfloat16AndFloat16) {
  for (const auto& [dtype, tol] : {std::pair{DType::bf16, 3e-2f}, std::pair{DType::f16, 4e-3f}}) {
    check_low_precision({"matmul", {}, {random(Shape{4, 5}, 1), random(Shape{5, 3}, 2)}}, dtype, tol);
    check_low_precision({"matmul", {{"transpose_a", std::int64_t{1}}}, {random(Shape{5, 4}, 3), random(Shape{5, 3}, 4)}},
                        dtype, tol);
    check_low_precision({"bias_add", {}, {random(Shape{2, 3, 4}, 5), random(Shape{4}, 6)}}, dtype, tol);
    for (const char* kind : {"relu", "sigmoid", "tanh", "gelu", "elu", "softplus", "silu"}) {
      check_low_precision({"activation", {{"kind", std::string(kind)}}, {random(Shape{3, 7}, 7, -2.0f, 2.0f)}}, dtype, tol);
    }
    check_low_precision({"softmax", {}, {random(Shape{4, 6}, 8, -2.0f, 2.0f)}}, dtype, tol);
    check_low_precision({"log_softmax", {}, {random(Shape{4, 6}, 9, -2.0f, 2.0f)}}, dtype, tol);
    for (const char* padding : {"valid", "same"}) {
      check_low_precision({"conv2d", spatial({1, 1}, padding), {random(Shape{2, 6, 5, 3}, 10), random(Shape{3, 3, 3, 4}, 11)}},
                          dtype, tol);
      Attrs pool = spatial({2, 2}, padding);
      pool.set("pool_size", std::vector<std::int64_t>{2, 2});
      check_low_precision({"max_pool2d", pool, {random(Shape{2, 6, 6, 3}, 12)}}, dtype, tol);
      check_low_precision({"avg_pool2d", pool, {random(Shape{2, 6, 6, 3}, 13)}}, dtype, tol);
    }
  }
}

}  // namespace
}  // namespace nnfit
