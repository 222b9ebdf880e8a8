// Conformance of the oneDNN family's ops (matmul, convolution, activations, softmax;
// pooling is pool_test.cpp): every fast kernel against ref:<op> on random inputs, plus hand-computed cases
// that check the reference kernels themselves, so the oracle is not trusted blindly.
#include <cmath>
#include <cstring>

#include "backend/cpu/onednn_kernels.h"
#include "conformance/harness.h"
#include "nnfit/core/error.h"

namespace nnfit {
namespace {

using testing::expect_matches_reference;
using testing::random_tensor;
using Ints = std::vector<std::int64_t>;

// The harness's (harness.h), under this file's names.
using testing::expect_values;
constexpr auto make_desc = testing::f32_desc;
constexpr auto run_ref = testing::run_reference;
constexpr auto from_values = testing::tensor_of;

using testing::out_size;

// ---- Dense -------------------------------------------------------------------------------

TEST(OnednnMatmul, AllTransposeCombosOddSizes) {
  const std::int64_t m = 7, k = 13, n = 5;
  for (int ta = 0; ta < 2; ++ta) {
    for (int tb = 0; tb < 2; ++tb) {
      SCOPED_TRACE("transpose_a=" + std::to_string(ta) + " transpose_b=" + std::to_string(tb));
      Shape a = ta ? Shape{k, m} : Shape{m, k};
      Shape b = tb ? Shape{n, k} : Shape{k, n};
      auto d = make_desc("matmul", {{"transpose_a", ta}, {"transpose_b", tb}}, {a, b}, {{m, n}});
      expect_matches_reference(d, {random_tensor(a, 1), random_tensor(b, 2)});
    }
  }
}

TEST(OnednnMatmul, MlpSizes) {
  auto d = make_desc("matmul", {}, {{128, 784}, {784, 64}}, {{128, 64}});
  expect_matches_reference(d, {random_tensor({128, 784}, 3), random_tensor({784, 64}, 4)}, 5e-4f);
  auto dw = make_desc("matmul", {{"transpose_a", 1}}, {{128, 784}, {128, 64}}, {{784, 64}});
  expect_matches_reference(dw, {random_tensor({128, 784}, 5), random_tensor({128, 64}, 6)}, 5e-4f);
}

// batch_matmul (Dot's and the attention layers' scores and contexts): every transpose
// combination of [B, M, K]·[B, K, N] against the reference, at attention's sizes too.
TEST(OnednnBatchMatmul, AllTransposeCombosAndAttentionSizes) {
  const std::int64_t bt = 3, m = 7, k = 5, n = 4;
  for (int ta = 0; ta < 2; ++ta) {
    for (int tb = 0; tb < 2; ++tb) {
      SCOPED_TRACE("transpose_a=" + std::to_string(ta) + " transpose_b=" + std::to_string(tb));
      Shape a = ta ? Shape{bt, k, m} : Shape{bt, m, k};
      Shape b = tb ? Shape{bt, n, k} : Shape{bt, k, n};
      auto d = make_desc("batch_matmul", {{"transpose_a", ta}, {"transpose_b", tb}}, {a, b}, {{bt, m, n}});
      expect_matches_reference(d, {random_tensor(a, 11), random_tensor(b, 12)});
    }
  }
  auto scores = make_desc("batch_matmul", {{"transpose_b", 1}}, {{64, 32, 16}, {64, 32, 16}}, {{64, 32, 32}});
  expect_matches_reference(scores, {random_tensor({64, 32, 16}, 13), random_tensor({64, 32, 16}, 14)}, 1e-4f);
}

TEST(OnednnFusedMatmul, EachActivation) {
  for (const char* act : {"linear", "relu", "sigmoid", "tanh", "gelu"}) {
    SCOPED_TRACE(act);
    auto d = make_desc("fused_matmul", {{"activation", std::string(act)}},
                       {{9, 17}, {17, 11}, {11}}, {{9, 11}});
    expect_matches_reference(d, {random_tensor({9, 17}, 7), random_tensor({17, 11}, 8),
                                 random_tensor({11}, 9)});
  }
}

TEST(RefMatmul, HandComputed) {
  auto d = make_desc("matmul", {{"transpose_b", 1}}, {{2, 2}, {2, 2}}, {{2, 2}});
  // [1 2; 3 4] · [5 6; 7 8]^T = [17 23; 39 53]
  Tensor c = run_ref(d, {from_values({2, 2}, {1, 2, 3, 4}), from_values({2, 2}, {5, 6, 7, 8})});
  expect_values(c, {17, 23, 39, 53});
}

TEST(OnednnMatmul, MismatchedInnerDimThrowsNamingTheNode) {
  auto d = make_desc("matmul", {}, {{3, 4}, {5, 6}}, {{3, 6}});
  std::string why;
  try {
    kernel_registry().create("onednn:matmul", d, DeviceType::cpu, &why);
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("test/matmul"), std::string::npos) << e.what();
  }
}

// ---- Convolution -------------------------------------------------------------------------

struct ConvCase {
  std::int64_t n, h, w, c, kh, kw, o, s;
  std::string padding;
};

std::vector<ConvCase> conv_cases() {
  std::vector<ConvCase> cases;
  for (const char* pad : {"valid", "same"}) {
    for (std::int64_t s : {1, 2}) {
      cases.push_back({2, 7, 9, 1, 3, 3, 4, s, pad});    // C=1, odd spatial
      cases.push_back({3, 8, 5, 3, 3, 2, 5, s, pad});    // C=3, rectangular kernel
      cases.push_back({2, 6, 6, 8, 5, 5, 16, s, pad});   // wider channels, asymmetric same pad
      cases.push_back({1, 5, 5, 3, 1, 1, 2, s, pad});    // 1x1
    }
  }
  return cases;
}

std::string trace(const ConvCase& c) {
  return "x=[" + std::to_string(c.n) + "," + std::to_string(c.h) + "," + std::to_string(c.w) +
         "," + std::to_string(c.c) + "] k=" + std::to_string(c.kh) + "x" + std::to_string(c.kw) +
         " o=" + std::to_string(c.o) + " s=" + std::to_string(c.s) + " " + c.padding;
}

Attrs conv_attrs(const ConvCase& c) {
  return Attrs{{"strides", Ints{c.s, c.s}}, {"padding", c.padding}};
}

TEST(OnednnConv2d, ForwardValidAndSame) {
  for (const ConvCase& c : conv_cases()) {
    SCOPED_TRACE(trace(c));
    Shape x{c.n, c.h, c.w, c.c}, w{c.kh, c.kw, c.c, c.o};
    Shape y{c.n, out_size(c.h, c.kh, c.s, c.padding), out_size(c.w, c.kw, c.s, c.padding), c.o};
    expect_matches_reference(make_desc("conv2d", conv_attrs(c), {x, w}, {y}),
                             {random_tensor(x, 11), random_tensor(w, 12)});
  }
}

TEST(OnednnFusedConv2d, EachActivation) {
  for (const char* act : {"linear", "relu", "sigmoid", "tanh"}) {
    for (const ConvCase& c : conv_cases()) {
      SCOPED_TRACE(trace(c) + " " + act);
      Shape x{c.n, c.h, c.w, c.c}, w{c.kh, c.kw, c.c, c.o};
      Shape y{c.n, out_size(c.h, c.kh, c.s, c.padding), out_size(c.w, c.kw, c.s, c.padding), c.o};
      Attrs a = conv_attrs(c);
      a.set("activation", std::string(act));
      expect_matches_reference(make_desc("fused_conv2d", a, {x, w, {c.o}}, {y}),
                               {random_tensor(x, 13), random_tensor(w, 14), random_tensor({c.o}, 15)});
    }
  }
}

TEST(OnednnConv2dBackpropInput, ValidAndSame) {
  for (const ConvCase& c : conv_cases()) {
    SCOPED_TRACE(trace(c));
    Shape x{c.n, c.h, c.w, c.c}, w{c.kh, c.kw, c.c, c.o};
    Shape y{c.n, out_size(c.h, c.kh, c.s, c.padding), out_size(c.w, c.kw, c.s, c.padding), c.o};
    Attrs a = conv_attrs(c);
    a.set("input_shape", x.dims());
    expect_matches_reference(make_desc("conv2d_backprop_input", a, {y, w}, {x}),
                             {random_tensor(y, 16), random_tensor(w, 17)});
  }
}

TEST(OnednnConv2dBackpropFilter, ValidAndSame) {
  for (const ConvCase& c : conv_cases()) {
    SCOPED_TRACE(trace(c));
    Shape x{c.n, c.h, c.w, c.c}, w{c.kh, c.kw, c.c, c.o};
    Shape y{c.n, out_size(c.h, c.kh, c.s, c.padding), out_size(c.w, c.kw, c.s, c.padding), c.o};
    Attrs a = conv_attrs(c);
    a.set("filter_shape", w.dims());
    expect_matches_reference(make_desc("conv2d_backprop_filter", a, {x, y}, {w}),
                             {random_tensor(x, 18), random_tensor(y, 19)}, 2e-4f);
  }
}

TEST(OnednnConv2d, CnnSizes) {
  // The Fashion-MNIST CNN's first two layers at batch 32.
  Shape x{32, 28, 28, 1}, w{3, 3, 1, 32}, y{32, 26, 26, 32};
  Attrs a{{"strides", Ints{1, 1}}, {"padding", std::string("valid")}};
  expect_matches_reference(make_desc("conv2d", a, {x, w}, {y}), {random_tensor(x, 20), random_tensor(w, 21)});
  Shape x2{32, 13, 13, 32}, w2{3, 3, 32, 64}, y2{32, 11, 11, 64};
  Attrs af = a;
  af.set("filter_shape", w2.dims());
  expect_matches_reference(make_desc("conv2d_backprop_filter", af, {x2, y2}, {w2}),
                           {random_tensor(x2, 22), random_tensor(y2, 23)}, 2e-3f, 2e-4f);
  Attrs ai = a;
  ai.set("input_shape", x2.dims());
  expect_matches_reference(make_desc("conv2d_backprop_input", ai, {y2, w2}, {x2}),
                           {random_tensor(y2, 24), random_tensor(w2, 25)}, 5e-4f);
}

// Dilated and grouped convolutions (depthwise: groups = C) in all three passes, against the
// reference. `d` is the dilation, `g` the groups; the filter is [KH,KW,C/g,O].
struct GroupedCase {
  std::int64_t n, h, w, c, k, o, s, d, g;
  std::string padding;
};

TEST(OnednnConv2d, DilatedAndGroupedInEveryPass) {
  const GroupedCase cases[] = {
      {2, 9, 8, 3, 3, 4, 1, 2, 1, "valid"},  {2, 9, 8, 3, 3, 4, 1, 2, 1, "same"},
      {1, 10, 7, 2, 2, 3, 1, 3, 1, "same"},  {2, 7, 7, 4, 3, 6, 1, 1, 2, "same"},
      {2, 8, 6, 4, 3, 8, 2, 1, 4, "valid"},  {2, 8, 6, 5, 3, 5, 1, 1, 5, "same"},    // depthwise
      {2, 9, 9, 3, 3, 6, 2, 1, 3, "same"},   {1, 9, 9, 6, 3, 4, 1, 2, 2, "valid"},   // both
  };
  for (const GroupedCase& c : cases) {
    SCOPED_TRACE("x=[" + std::to_string(c.n) + "," + std::to_string(c.h) + "," + std::to_string(c.w) + "," +
                 std::to_string(c.c) + "] k=" + std::to_string(c.k) + " o=" + std::to_string(c.o) + " s=" +
                 std::to_string(c.s) + " d=" + std::to_string(c.d) + " g=" + std::to_string(c.g) + " " + c.padding);
    const std::int64_t keff = (c.k - 1) * c.d + 1;
    Shape x{c.n, c.h, c.w, c.c}, w{c.k, c.k, c.c / c.g, c.o};
    Shape y{c.n, out_size(c.h, keff, c.s, c.padding), out_size(c.w, keff, c.s, c.padding), c.o};
    Attrs a{{"strides", Ints{c.s, c.s}}, {"padding", c.padding}, {"dilations", Ints{c.d, c.d}}, {"groups", c.g}};
    expect_matches_reference(make_desc("conv2d", a, {x, w}, {y}), {random_tensor(x, 31), random_tensor(w, 32)});
    Attrs af = a;
    af.set("activation", std::string("relu"));
    expect_matches_reference(make_desc("fused_conv2d", af, {x, w, {c.o}}, {y}),
                             {random_tensor(x, 33), random_tensor(w, 34), random_tensor({c.o}, 35)});
    Attrs ai = a;
    ai.set("input_shape", x.dims());
    expect_matches_reference(make_desc("conv2d_backprop_input", ai, {y, w}, {x}),
                             {random_tensor(y, 36), random_tensor(w, 37)});
    Attrs aw = a;
    aw.set("filter_shape", w.dims());
    expect_matches_reference(make_desc("conv2d_backprop_filter", aw, {x, y}, {w}),
                             {random_tensor(x, 38), random_tensor(y, 39)}, 2e-4f);
  }
}

TEST(OnednnConv2d, GroupsThatDoNotDivideAreRefused) {
  Attrs a{{"strides", Ints{1, 1}}, {"padding", std::string("valid")}, {"groups", std::int64_t{2}}};
  auto d = make_desc("conv2d", a, {{1, 5, 5, 3}, {3, 3, 1, 4}}, {{1, 3, 3, 4}});
  try {
    std::string why;
    kernel_registry().create("onednn:conv2d", d, DeviceType::cpu, &why);
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("groups = 2 must divide the input's 3 channels"), std::string::npos)
        << e.what();
  }
}

TEST(RefConv2d, HandComputed3x3) {
  // x = 1..9 in a 3x3 image; w = [[1,0],[0,-1]]: y[i,j] = x[i,j] - x[i+1,j+1] = -4 everywhere.
  Attrs a{{"strides", Ints{1, 1}}, {"padding", std::string("valid")}};
  auto d = make_desc("conv2d", a, {{1, 3, 3, 1}, {2, 2, 1, 1}}, {{1, 2, 2, 1}});
  Tensor x = from_values({1, 3, 3, 1}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  Tensor w = from_values({2, 2, 1, 1}, {1, 0, 0, -1});
  expect_values(run_ref(d, {x, w}), {-4, -4, -4, -4});
  // same, stride 1, 3x3 all-ones kernel: sums of the in-bounds 3x3 neighbourhood.
  Attrs s{{"strides", Ints{1, 1}}, {"padding", std::string("same")}};
  auto ds = make_desc("conv2d", s, {{1, 3, 3, 1}, {3, 3, 1, 1}}, {{1, 3, 3, 1}});
  Tensor ones = from_values({3, 3, 1, 1}, {1, 1, 1, 1, 1, 1, 1, 1, 1});
  expect_values(run_ref(ds, {x, ones}), {12, 21, 16, 27, 45, 33, 24, 39, 28});
  // same with an even kernel pads after (TF): 2x2 ones, pad_total 1 -> bottom/right only.
  auto de = make_desc("conv2d", s, {{1, 3, 3, 1}, {2, 2, 1, 1}}, {{1, 3, 3, 1}});
  Tensor ones2 = from_values({2, 2, 1, 1}, {1, 1, 1, 1});
  expect_values(run_ref(de, {x, ones2}), {12, 16, 9, 24, 28, 15, 15, 17, 9});
}

TEST(RefConv2d, HandComputedDilationAndGroups) {
  // x = 1..16 in a 4x4 image; a 2x2 kernel dilated by 2 reads x[i,j], x[i,j+2], x[i+2,j],
  // x[i+2,j+2]. w = [[1,0],[0,-1]]: y[i,j] = x[i,j] - x[i+2,j+2] = -10 at each of 2x2 outputs.
  Attrs a{{"strides", Ints{1, 1}}, {"padding", std::string("valid")}, {"dilations", Ints{2, 2}}};
  auto d = make_desc("conv2d", a, {{1, 4, 4, 1}, {2, 2, 1, 1}}, {{1, 2, 2, 1}});
  Tensor x = from_values({1, 4, 4, 1}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16});
  expect_values(run_ref(d, {x, from_values({2, 2, 1, 1}, {1, 0, 0, -1})}), {-10, -10, -10, -10});
  // groups = 2 on a 1x1 image of channels (1, 10), 1x1 kernel [1,1,1,4]: outputs 0 and 1
  // read channel 0 only, outputs 2 and 3 channel 1 only.
  Attrs g{{"strides", Ints{1, 1}}, {"padding", std::string("valid")}, {"groups", std::int64_t{2}}};
  auto dg = make_desc("conv2d", g, {{1, 1, 1, 2}, {1, 1, 1, 4}}, {{1, 1, 1, 4}});
  expect_values(run_ref(dg, {from_values({1, 1, 1, 2}, {1, 10}), from_values({1, 1, 1, 4}, {2, 3, 4, 5})}),
                {2, 3, 40, 50});
}

TEST(RefConv2dBackprop, HandComputed) {
  // 1x2x2x1 x, 2x2 kernel, valid: a single output. dw = x * dy, dx = w * dy.
  Attrs a{{"strides", Ints{1, 1}}, {"padding", std::string("valid")}};
  Attrs af = a;
  af.set("filter_shape", Ints{2, 2, 1, 1});
  auto df = make_desc("conv2d_backprop_filter", af, {{1, 2, 2, 1}, {1, 1, 1, 1}}, {{2, 2, 1, 1}});
  expect_values(run_ref(df, {from_values({1, 2, 2, 1}, {1, 2, 3, 4}), from_values({1, 1, 1, 1}, {2})}),
                {2, 4, 6, 8});
  Attrs ai = a;
  ai.set("input_shape", Ints{1, 2, 2, 1});
  auto di = make_desc("conv2d_backprop_input", ai, {{1, 1, 1, 1}, {2, 2, 1, 1}}, {{1, 2, 2, 1}});
  expect_values(run_ref(di, {from_values({1, 1, 1, 1}, {-1}), from_values({2, 2, 1, 1}, {1, 2, 3, 4})}),
                {-1, -2, -3, -4});
}

// ---- Activations and softmax -------------------------------------------------------------

TEST(OnednnActivation, EachKindForwardAndGrad) {
  Shape s{6, 37};
  for (const char* kind : {"relu", "sigmoid", "tanh", "gelu", "linear", "gelu_tanh", "elu", "exponential",
                           "leaky_relu", "relu6", "silu", "mish", "hard_silu", "softplus"}) {
    SCOPED_TRACE(kind);
    Attrs a{{"kind", std::string(kind)}};
    Tensor x = random_tensor(s, 40, -3.0f, 3.0f);
    expect_matches_reference(make_desc("activation", a, {s}, {s}), {x});
    // t is y for relu/sigmoid/tanh and x for every other kind (ops.md).
    const std::string k = kind;
    bool t_is_x = k != "relu" && k != "sigmoid" && k != "tanh";
    Tensor t = t_is_x ? x : run_ref(make_desc("activation", a, {s}, {s}), {x});
    expect_matches_reference(make_desc("activation_grad", a, {s, s}, {s}),
                             {t, random_tensor(s, 41)});
  }
}

// The activation layers' arguments: LeakyReLU's and ELU's alpha, and Keras's ReLU layer
// where oneDNN has the form (a leaky relu without cap or threshold, a cap alone).
TEST(OnednnActivation, ArgumentsMatchTheReference) {
  Shape s{5, 41};
  Attrs leaky{{"kind", std::string("leaky_relu")}, {"alpha", 0.05}};
  Attrs elu{{"kind", std::string("elu")}, {"alpha", 0.7}};
  Attrs slope{{"kind", std::string("relu_keras")}, {"alpha", 0.1}, {"threshold", 0.0}};
  Attrs cap{{"kind", std::string("relu_keras")}, {"alpha", 0.0}, {"threshold", 0.0}, {"max_value", 1.5}};
  for (const Attrs& a : {leaky, elu, slope, cap}) {
    SCOPED_TRACE(a.to_string());
    Tensor x = random_tensor(s, 42, -3.0f, 3.0f);
    expect_matches_reference(make_desc("activation", a, {s}, {s}), {x});
    expect_matches_reference(make_desc("activation_grad", a, {s, s}, {s}), {x, random_tensor(s, 43)});
  }
  // A threshold, or a slope with a cap, has no oneDNN form: the reference runs it.
  std::string why;
  Attrs both{{"kind", std::string("relu_keras")}, {"alpha", 0.1}, {"threshold", 0.5}};
  EXPECT_EQ(make_onednn_activation(make_desc("activation", both, {s}, {s}), &why), nullptr);
  EXPECT_NE(why.find("no algorithm"), std::string::npos) << why;
}

// Keras 3.15.1's keras.layers.ReLU(negative_slope, max_value, threshold) at a few points
// (computed by Keras: x * (x > threshold), clipped when max_value is set, minus
// negative_slope * relu(threshold - x)).
TEST(RefActivation, KerasReLULayerValues) {
  Shape s{6};
  Tensor x = from_values(s, {-3, -0.5f, 0.25f, 1, 2.5f, 8});
  auto run = [&](double slope, double threshold, double max_value) {
    Attrs a{{"kind", std::string("relu_keras")}, {"alpha", slope}, {"threshold", threshold}};
    if (max_value > 0) a.set("max_value", max_value);
    return run_ref(make_desc("activation", a, {s}, {s}), {x});
  };
  expect_values(run(0.1, 0.0, 0), {-0.3f, -0.05f, 0.25f, 1, 2.5f, 8});
  expect_values(run(0.0, 1.0, 0), {0, 0, 0, 0, 2.5f, 8});
  expect_values(run(0.5, 1.0, 2), {-2, -0.75f, -0.375f, 0, 2, 2});
  expect_values(run(0.0, -1.0, 6), {0, 0, 0.25f, 1, 2.5f, 6});
  expect_values(run(0.0, -1.0, 0), {0, -0.5f, 0.25f, 1, 2.5f, 8});
}

// Keras's definitions at a few points (keras.activations in Keras 3.15.1).
TEST(RefActivation, KerasValues) {
  Shape s{4};
  Tensor x = from_values(s, {-4, -1, 0.5f, 7});
  auto run = [&](const char* kind) { return run_ref(make_desc("activation", {{"kind", std::string(kind)}}, {s}, {s}), {x}); };
  expect_values(run("selu"), {-1.7258986f, -1.1113307f, 0.52535051f, 7.3549070f});
  expect_values(run("softsign"), {-0.8f, -0.5f, 0.33333334f, 0.875f});
  expect_values(run("hard_sigmoid"), {0, 0.33333334f, 0.58333331f, 1});
  expect_values(run("relu6"), {0, 0, 0.5f, 6});
  expect_values(run("leaky_relu"), {-0.8f, -0.2f, 0.5f, 7});
  expect_values(run("hard_silu"), {0, -0.33333334f, 0.29166666f, 7});
  // oneDNN has none of selu, softsign, hard_sigmoid: the registry falls back to ref.
  for (const char* kind : {"selu", "softsign", "hard_sigmoid"}) {
    std::string why;
    EXPECT_EQ(make_onednn_activation(make_desc("activation", {{"kind", std::string(kind)}}, {s}, {s}), &why), nullptr);
    EXPECT_NE(why.find("no algorithm"), std::string::npos) << why;
  }
}

TEST(RefActivation, HandComputed) {
  Shape s{4};
  Tensor x = from_values(s, {-1, 0, 0.5f, 2});
  expect_values(run_ref(make_desc("activation", {{"kind", std::string("relu")}}, {s}, {s}), {x}),
                {0, 0, 0.5f, 2});
  expect_values(run_ref(make_desc("activation", {{"kind", std::string("gelu")}}, {s}, {s}), {x}),
                {-0.15865526f, 0, 0.34573123f, 1.9544997f});
  // relu grad keys on y > 0: y = 0 passes no gradient.
  Tensor y = from_values(s, {0, 0, 0.5f, 2});
  Tensor dy = from_values(s, {1, 1, 1, 1});
  expect_values(run_ref(make_desc("activation_grad", {{"kind", std::string("relu")}}, {s, s}, {s}), {y, dy}),
                {0, 0, 1, 1});
  expect_values(run_ref(make_desc("activation_grad", {{"kind", std::string("sigmoid")}}, {s, s}, {s}),
                        {from_values(s, {0.5f, 0.25f, 1, 0}), dy}),
                {0.25f, 0.1875f, 0, 0});
}

TEST(OnednnSoftmax, ForwardAndGrad) {
  for (Shape s : {Shape{7, 10}, Shape{128, 10}, Shape{2, 3, 5}, Shape{1, 1}}) {
    SCOPED_TRACE(s.to_string());
    Tensor x = random_tensor(s, 50, -4.0f, 4.0f);
    expect_matches_reference(make_desc("softmax", {}, {s}, {s}), {x});
    Tensor y = run_ref(make_desc("softmax", {}, {s}, {s}), {x});
    expect_matches_reference(make_desc("softmax_grad", {}, {s, s}, {s}), {y, random_tensor(s, 51)});
  }
}

TEST(RefSoftmax, HandComputed) {
  Shape s{1, 3};
  Tensor y = run_ref(make_desc("softmax", {}, {s}, {s}), {from_values(s, {0, std::log(2.0f), std::log(5.0f)})});
  expect_values(y, {0.125f, 0.25f, 0.625f});
  // dx = y·(dy − Σ dy·y): with dy = one-hot on class 0, Σ = 0.125.
  Tensor dx = run_ref(make_desc("softmax_grad", {}, {s, s}, {s}), {y, from_values(s, {1, 0, 0})});
  expect_values(dx, {0.125f * 0.875f, -0.25f * 0.125f, -0.625f * 0.125f});
}

}  // namespace
}  // namespace nnfit
