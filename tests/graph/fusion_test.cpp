// The graph rewrites of nnfit/graph/fusion.h: each one's node count and shape, and, where
// it changes what the kernels compute, the step's loss and gradients against the plain
// program's (expect_same_step_as_unfused on ConvPoolGraph).
#include <gtest/gtest.h>

#include <cmath>

#include "graph_test_util.h"
#include "nnfit/graph/autodiff.h"
#include "nnfit/graph/fusion.h"
#include "nnfit/graph/program.h"
#include "nnfit/memory/host_allocator.h"

namespace nnfit {
namespace {

using graph_test::filled;

// The live nodes of g for which `is` holds.
template <typename Pred>
int count_nodes(const Graph& g, Pred is) {
  int count = 0;
  for (int n = 0; n < g.num_nodes(); ++n) count += !g.node(n).removed && is(g.node(n));
  return count;
}

TEST(Fusion, ReluGradientFoldsIntoMaxPoolGradient) {
  // conv -> relu -> max_pool -> mse; the relu gradient joins the pool gradient.
  Graph g;
  Tensor w = filled(Shape{3, 3, 2, 4}, 0.01f), one = filled(Shape{}, 1.0f), t = filled(Shape{2, 3, 3, 4}, 0.1f);
  int x = g.add_input("x", {Shape{2, 8, 8, 2}, DType::f32});
  int wv = g.add_variable("w", w);
  Attrs conv{{"strides", std::vector<std::int64_t>{1, 1}}, {"padding", std::string("valid")}};
  int c = g.add("conv2d", {x, wv}, conv, "conv");
  int r = g.add("activation", {c}, {{"kind", std::string("relu")}}, "relu");
  Attrs pool{{"pool_size", std::vector<std::int64_t>{2, 2}}, {"strides", std::vector<std::int64_t>{2, 2}}, {"padding", std::string("valid")}};
  int p = g.add("max_pool2d", {r}, pool, "pool");
  int loss = g.add("loss", {p, g.add_variable("t", t)}, {{"kind", std::string("mean_squared_error")}, {"from_logits", std::int64_t{0}}}, "loss");
  gradients(g, loss, g.add_variable("one", one), {wv});
  EXPECT_EQ(fuse_relu_into_max_pool_grad(g), 1);
  EXPECT_EQ(count_nodes(g, [](const Node& n) { return n.op == "activation_grad"; }), 0);
  EXPECT_EQ(count_nodes(g, [](const Node& n) { return n.op == "max_pool2d_grad" && n.attrs.i_or("relu", 0) == 1; }), 1);
}

// conv -> bias_add -> relu -> max_pool -> mse with the gradients of w and b kept: the
// graph of Keras's Conv2D(activation="relu") + MaxPooling2D.
struct ConvPoolGraph {
  Graph g;
  std::int64_t c = 2;  // input channels
  std::int64_t o = 4;  // filters
  int x = -1, loss = -1, dw = -1, db = -1;
  explicit ConvPoolGraph(std::int64_t channels = 2, std::int64_t filters = 4) : c(channels), o(filters) {
    using Ints = std::vector<std::int64_t>;
    Tensor w = filled(Shape{3, 3, c, o}, 0.0f), b = filled(Shape{o}, 0.05f), one = filled(Shape{}, 1.0f);
    for (std::int64_t i = 0; i < w.numel(); ++i) w.data<float>()[i] = 0.03f * static_cast<float>((i * 7) % 11) - 0.15f;
    Tensor t = filled(Shape{2, 3, 3, o}, 0.1f);
    x = g.add_input("x", {Shape{2, 8, 8, c}, DType::f32});
    int wv = g.add_variable("w", w), bv = g.add_variable("b", b);
    int c = g.add("conv2d", {x, wv}, {{"strides", Ints{1, 1}}, {"padding", std::string("valid")}}, "conv");
    int z = g.add("bias_add", {c, bv}, {}, "bias");
    int r = g.add("activation", {z}, {{"kind", std::string("relu")}}, "relu");
    Attrs pool{{"pool_size", Ints{2, 2}}, {"strides", Ints{2, 2}}, {"padding", std::string("valid")}};
    int p = g.add("max_pool2d", {r}, pool, "pool");
    loss = g.add("loss", {p, g.add_variable("t", t)},
                 {{"kind", std::string("mean_squared_error")}, {"from_logits", std::int64_t{0}}}, "loss");
    std::vector<int> grads = gradients(g, loss, g.add_variable("one", one), {wv, bv});
    dw = grads[0];
    db = grads[1];
  }
  // The loss and both gradients after one run on a fixed x.
  std::vector<std::vector<float>> run(const FusionOptions& options) {
    fuse_all(g, options);
    HostAllocator alloc;
    Program p = plan(std::move(g), {DeviceType::cpu, {loss, dw, db}, 64});
    Tensor arena = allocate_tensor(alloc, Shape{static_cast<std::int64_t>(p.arena_bytes())}, DType::u8);
    p.bind(arena.raw());
    float* xs = static_cast<float*>(p.data(x));
    // No two windows alike: with exact ties in real arithmetic, a pool's first maximum would
    // depend on the rounding of each implementation's sums (fuse_conv_into_pool_argmax
    // computes the convolution itself), and the step's dw with it.
    for (int i = 0; i < 2 * 8 * 8 * c; ++i) xs[i] = 0.6f * std::sin(0.7f * static_cast<float>(i) + 0.3f);
    p.run(StepContext{});
    std::vector<std::vector<float>> out;
    for (int v : {loss, dw, db}) {
      const float* d = static_cast<const float*>(p.data(v));
      out.emplace_back(d, d + (v == loss ? 1 : v == dw ? 3 * 3 * c * o : o));
    }
    return out;
  }
};

// The loss, dw and db of ConvPoolGraph's step with `options`' rewrites equal the unfused
// program's within 1e-6 (relative), and neither gradient is all zeros (so the check compares
// something).
void expect_same_step_as_unfused(const FusionOptions& options, std::int64_t channels = 2, std::int64_t filters = 4) {
  ConvPoolGraph a(channels, filters), b(channels, filters);
  const auto fused = a.run(options);
  const auto plain = b.run({});
  for (std::size_t k = 0; k < fused.size(); ++k) {
    ASSERT_EQ(fused[k].size(), plain[k].size());
    for (std::size_t i = 0; i < fused[k].size(); ++i) {
      EXPECT_NEAR(fused[k][i], plain[k][i], 1e-6f * (1.0f + std::fabs(plain[k][i]))) << "output " << k << " [" << i << "]";
    }
  }
  for (std::size_t k : {1u, 2u}) {
    float sum = 0.0f;
    for (float v : fused[k]) sum += std::fabs(v);
    EXPECT_GT(sum, 0.0f) << (k == 1 ? "dw" : "db") << " is all zeros: the check would compare nothing";
  }
}

TEST(Fusion, BiasGradientJoinsTheMaxPoolGradientWithTheSameValues) {
  ConvPoolGraph fused_graph;
  EXPECT_EQ(fuse_all(fused_graph.g, {.pool_bias_grad = true}), 3) << "conv+bias+relu, the relu gradient, the bias gradient";
  int bias_grads = 0, pool_bias = 0;
  for (int n = 0; n < fused_graph.g.num_nodes(); ++n) {
    const Node& node = fused_graph.g.node(n);
    if (node.removed) continue;
    bias_grads += node.op == "bias_add_grad";
    if (node.op == "max_pool2d_grad_bias") {
      ++pool_bias;
      EXPECT_EQ(node.attrs.i_or("relu", 0), 1);
      ASSERT_EQ(node.outputs.size(), 2u);
      EXPECT_EQ(node.outputs[1], fused_graph.db);
      EXPECT_EQ(fused_graph.g.value(fused_graph.db).producer, n);
    }
  }
  EXPECT_EQ(bias_grads, 0);
  EXPECT_EQ(pool_bias, 1);

  expect_same_step_as_unfused({.pool_bias_grad = true});
}

// Note [Pool argmax]: with the argmax rewrite the pool gradient reads dy and the forward's
// bytes instead of x, and the step's loss, dw and db are those of the plain program.
TEST(Fusion, PoolArgmaxTakesXOffTheGradientWithTheSameValues) {
  for (bool bias : {false, true}) {
    SCOPED_TRACE(bias ? "with the bias gradient fused" : "alone");
    ConvPoolGraph fused_graph;
    const FusionOptions options{.pool_bias_grad = bias, .pool_argmax = true};
    EXPECT_EQ(fuse_all(fused_graph.g, options), bias ? 4 : 3);
    const Graph& g = fused_graph.g;
    int forwards = 0, grads = 0, pool_input = -1;
    for (int n = 0; n < g.num_nodes(); ++n) {
      const Node& node = g.node(n);
      if (node.removed) continue;
      EXPECT_NE(node.op, "max_pool2d_grad");
      EXPECT_NE(node.op, "max_pool2d_grad_bias");
      if (node.op == "max_pool2d_argmax") {
        ++forwards;
        pool_input = node.inputs[0];
        ASSERT_EQ(node.outputs.size(), 2u);
        EXPECT_EQ(g.desc(node.outputs[1]).dtype, DType::u8);
        EXPECT_EQ(g.desc(node.outputs[1]).shape, g.desc(node.outputs[0]).shape);
      }
      if (node.op == (bias ? "max_pool2d_argmax_grad_bias" : "max_pool2d_argmax_grad")) {
        ++grads;
        EXPECT_EQ(node.attrs.i_or("relu", 0), 1);
        ASSERT_EQ(node.inputs.size(), 2u);
        EXPECT_EQ(g.desc(node.inputs[1]).dtype, DType::u8);
        EXPECT_EQ(node.attrs.ints("input_shape"), (std::vector<std::int64_t>{2, 6, 6, 4}));
        if (bias) EXPECT_EQ(node.outputs[1], fused_graph.db);
      }
    }
    EXPECT_EQ(forwards, 1);
    EXPECT_EQ(grads, 1);
    ASSERT_GE(pool_input, 0);
    EXPECT_EQ(g.consumers()[static_cast<std::size_t>(pool_input)].size(), 1u)
        << "the relu output is read by the forward pool alone";

    expect_same_step_as_unfused(options);
  }
}

TEST(Fusion, CastsToFloat32FoldIntoTheOpBefore) {
  // x, w cast to bfloat16 -> matmul -> cast to float32 -> mse, SGD on w: the output cast
  // and the weight gradient's cast back to float32 fold into their matmuls (which then
  // write float32); a cast whose input has another reader stays; a step runs.
  Graph g;
  Tensor w = filled(Shape{6, 3}, 0.05f), one = filled(Shape{}, 1.0f), t = filled(Shape{4, 3}, 0.2f);
  int x = g.add_input("x", {Shape{4, 6}, DType::f32});
  int wv = g.add_variable("w", w);
  const Attrs to_bf16{{"dtype", std::string("bfloat16")}}, to_f32{{"dtype", std::string("float32")}};
  int xb = g.add("cast", {x}, to_bf16, "x_bf16");
  int wb = g.add("cast", {wv}, to_bf16, "w_bf16");
  int y = g.add("matmul", {xb, wb}, {}, "matmul");
  int y32 = g.add("cast", {y}, to_f32, "y_f32");
  int again = g.add("cast", {xb}, to_f32, "x_back");  // xb is also the matmul's: stays
  int loss = g.add("loss", {y32, g.add_variable("t", t)},
                   {{"kind", std::string("mean_squared_error")}, {"from_logits", std::int64_t{0}}}, "loss");
  std::vector<int> grads = gradients(g, loss, g.add_variable("one", one), {wv});
  g.add_node("sgd_update", {wv, grads[0]}, {}, "update");
  EXPECT_EQ(fuse_output_casts(g), 2) << "y's cast and the weight gradient's";
  int casts_to_f32 = 0;
  for (int n = 0; n < g.num_nodes(); ++n) {
    const Node& node = g.node(n);
    if (node.removed) continue;
    if (node.op == "cast" && node.attrs.s("dtype") == "float32") ++casts_to_f32;
    if (node.op == "matmul" && g.desc(node.outputs[0]).dtype == DType::f32) {
      EXPECT_NE(node.name.find("+cast_float32"), std::string::npos) << node.name;
    }
  }
  EXPECT_EQ(casts_to_f32, 1) << "x_back stays";
  EXPECT_EQ(g.value(y32).producer, g.value(y).producer);
  HostAllocator alloc;
  Program p = plan(std::move(g), {DeviceType::cpu, {loss, again}, 64});
  Tensor arena = allocate_tensor(alloc, Shape{static_cast<std::int64_t>(p.arena_bytes())}, DType::u8);
  p.bind(arena.raw());
  float* xs = static_cast<float*>(p.data(x));
  for (int i = 0; i < 24; ++i) xs[i] = static_cast<float>(i % 5) * 0.25f;
  StepContext ctx;
  ctx.learning_rate = 0.1f;
  const float w0 = static_cast<const float*>(p.data(wv))[0];
  p.run(ctx);
  EXPECT_TRUE(std::isfinite(*static_cast<const float*>(p.data(loss))));
  EXPECT_NE(static_cast<const float*>(p.data(wv))[0], w0) << "the update ran on the float32 gradient";
}

TEST(Fusion, Conv3dBiasReluAndItsMaxPool3dGradient) {
  // Conv3D's conv3d -> bias_add -> relu -> max_pool3d -> mse: the relu gradient joins the
  // 3-D pool gradient; and the chain conv3d -> bias_add -> relu becomes one fused_conv3d.
  using Ints = std::vector<std::int64_t>;
  Graph g;
  Tensor w = filled(Shape{3, 3, 3, 2, 4}, 0.01f), b = filled(Shape{4}, 0.1f), one = filled(Shape{}, 1.0f);
  Tensor t = filled(Shape{2, 2, 2, 2, 4}, 0.1f);
  int x = g.add_input("x", {Shape{2, 6, 6, 6, 2}, DType::f32});
  int wv = g.add_variable("w", w), bv = g.add_variable("b", b);
  int c = g.add("conv3d", {x, wv}, {{"strides", Ints{1, 1, 1}}, {"padding", std::string("valid")}}, "conv");
  int z = g.add("bias_add", {c, bv}, {}, "bias");
  int r = g.add("activation", {z}, {{"kind", std::string("relu")}}, "relu");
  Attrs pool{{"pool_size", Ints{2, 2, 2}}, {"strides", Ints{2, 2, 2}}, {"padding", std::string("valid")}};
  int p = g.add("max_pool3d", {r}, pool, "pool");
  int loss = g.add("loss", {p, g.add_variable("t", t)}, {{"kind", std::string("mean_squared_error")}, {"from_logits", std::int64_t{0}}}, "loss");
  gradients(g, loss, g.add_variable("one", one), {wv, bv});
  EXPECT_EQ(fuse_relu_into_max_pool_grad(g), 1);
  EXPECT_EQ(count_nodes(g, [](const Node& n) { return n.op == "activation_grad"; }), 0);
  EXPECT_EQ(count_nodes(g, [](const Node& n) { return n.op == "max_pool3d_grad" && n.attrs.i_or("relu", 0) == 1; }), 1);
  Graph f;
  int fx = f.add_input("x", {Shape{1, 4, 4, 4, 2}, DType::f32});
  int fc = f.add("conv3d", {fx, f.add_variable("w", w)}, {{"strides", Ints{1, 1, 1}}, {"padding", std::string("same")}}, "conv");
  int fz = f.add("bias_add", {fc, f.add_variable("b", b)}, {}, "bias");
  f.add("activation", {fz}, {{"kind", std::string("relu")}}, "relu");
  EXPECT_EQ(fuse_bias_activation(f), 1);
  int fused = 0;
  for (int n = 0; n < f.num_nodes(); ++n) {
    const Node& node = f.node(n);
    if (node.removed) continue;
    EXPECT_NE(node.op, "conv3d");
    if (node.op == "fused_conv3d") {
      ++fused;
      EXPECT_EQ(node.attrs.s("activation"), "relu");
      EXPECT_EQ(node.inputs.size(), 3u);
    }
  }
  EXPECT_EQ(fused, 1);
}

// fuse_conv_into_pool_argmax: over one input channel the convolution joins the pool, its
// output is gone from the program, and the step's loss, dw and db are the plain program's;
// over two channels, or with the convolution's output kept, nothing is joined.
TEST(Fusion, OneChannelConvolutionJoinsThePoolWithTheSameValues) {
  const FusionOptions options{.pool_bias_grad = true, .pool_argmax = true, .conv_pool = true};
  ConvPoolGraph one(1);
  EXPECT_EQ(fuse_all(one.g, options), 5);
  int joined = 0, convs = 0;
  for (int n = 0; n < one.g.num_nodes(); ++n) {
    const Node& node = one.g.node(n);
    if (node.removed) continue;
    convs += node.op == "fused_conv2d";
    if (node.op == "fused_conv2d_max_pool_argmax") {
      ++joined;
      EXPECT_EQ(node.inputs[0], one.x);
      EXPECT_EQ(node.attrs.s("activation"), "relu");
      EXPECT_EQ(node.attrs.ints("pool_strides"), (std::vector<std::int64_t>{2, 2}));
      ASSERT_EQ(node.outputs.size(), 2u);
      EXPECT_EQ(one.g.desc(node.outputs[1]).dtype, DType::u8);
    }
  }
  EXPECT_EQ(joined, 1);
  EXPECT_EQ(convs, 0) << "the convolution's own node is gone";
  expect_same_step_as_unfused(options, 1);

  ConvPoolGraph two(2);
  EXPECT_EQ(fuse_all(two.g, options), 4) << "two input channels: oneDNN's convolution stays";

  ConvPoolGraph kept(1);
  FusionOptions keep = options;
  for (int n = 0; n < kept.g.num_nodes(); ++n) {
    if (kept.g.node(n).op == "activation") keep.keep.push_back(kept.g.node(n).outputs[0]);
  }
  ASSERT_EQ(keep.keep.size(), 1u);
  EXPECT_EQ(fuse_all(kept.g, keep), 4) << "a kept convolution output is still made";
}

// fuse_pool_grad_into_filter_grad: over one input channel the filter gradient joins the
// pool gradient, taking its db (same value id, now made by the joined node), the
// convolution's output gradient is gone from the program, and the step's loss, dw and db
// are the plain program's: with 4 filters (the two ops back to back inside the kernel) and
// with 16 (its 3x3 loop). Over two channels, or with the output gradient kept, nothing is
// joined.
TEST(Fusion, OneChannelFilterGradientJoinsThePoolGradientWithTheSameValues) {
  const FusionOptions options{.pool_bias_grad = true, .pool_argmax = true, .conv_pool = true, .conv_pool_grad = true};
  for (std::int64_t filters : {4, 16}) {
    SCOPED_TRACE(std::to_string(filters) + " filters");
    ConvPoolGraph one(1, filters);
    EXPECT_EQ(fuse_all(one.g, options), 6);
    int joined = 0, left = 0;
    for (int n = 0; n < one.g.num_nodes(); ++n) {
      const Node& node = one.g.node(n);
      if (node.removed) continue;
      left += node.op == "conv2d_backprop_filter" || node.op == "max_pool2d_argmax_grad_bias";
      if (node.op == "fused_conv2d_max_pool_argmax_grad") {
        ++joined;
        ASSERT_EQ(node.inputs.size(), 3u);
        EXPECT_EQ(node.inputs[0], one.x);
        EXPECT_EQ(one.g.node(one.g.value(node.inputs[2]).producer).op, "fused_conv2d_max_pool_argmax");
        EXPECT_EQ(node.attrs.i_or("relu", 0), 1);
        ASSERT_EQ(node.outputs.size(), 2u);
        EXPECT_EQ(node.outputs[0], one.dw);
        EXPECT_EQ(node.outputs[1], one.db);
        EXPECT_EQ(one.g.value(one.db).producer, n);
        EXPECT_EQ(one.g.value(one.db).output_index, 1);
      }
    }
    EXPECT_EQ(joined, 1);
    EXPECT_EQ(left, 0) << "the pool gradient and the filter gradient are gone";
    expect_same_step_as_unfused(options, 1, filters);
  }

  ConvPoolGraph two(2);
  EXPECT_EQ(fuse_all(two.g, options), 4) << "two input channels: nothing joined";

  ConvPoolGraph kept(1);
  FusionOptions keep = options;
  for (int n = 0; n < kept.g.num_nodes(); ++n) {
    if (kept.g.node(n).op == "conv2d_backprop_filter") keep.keep.push_back(kept.g.node(n).inputs[1]);
  }
  ASSERT_EQ(keep.keep.size(), 1u);
  EXPECT_EQ(fuse_all(kept.g, keep), 5) << "a kept output gradient is still made";
}

}  // namespace
}  // namespace nnfit
