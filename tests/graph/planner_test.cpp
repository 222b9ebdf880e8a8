// Planner and executor: no two simultaneously live buffers overlap, the arena is exactly
// the planned peak, reshape aliases, mutators run after readers, and steps allocate no
// tensor memory.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <thread>

#include "nnfit/core/error.h"
#include "nnfit/graph/autodiff.h"
#include "nnfit/graph/fusion.h"
#include "nnfit/graph/program.h"
#include "nnfit/memory/host_allocator.h"

namespace nnfit {
namespace {

Tensor filled(Shape s, float v) {
  Tensor t = Tensor::zeros(std::move(s));
  for (std::int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = v + 0.01f * static_cast<float>(i % 7);
  return t;
}

// A two-layer MLP training graph with an SGD update: x -> dense -> relu -> dense -> loss.
struct Mlp {
  Graph g;
  int x, y, loss, logits, w1, w2, b1;
  Tensor tw1 = filled(Shape{12, 16}, 0.01f), tb1 = filled(Shape{16}, 0.0f), tw2 = filled(Shape{16, 5}, 0.02f);
  Tensor one = filled(Shape{}, 1.0f);

  explicit Mlp(std::int64_t batch) {
    x = g.add_input("x", {Shape{batch, 3, 4}, DType::f32});
    y = g.add_input("y", {Shape{batch}, DType::i32});
    w1 = g.add_variable("w1", tw1);
    b1 = g.add_variable("b1", tb1);
    w2 = g.add_variable("w2", tw2);
    Attrs flat;
    flat.set("shape", std::vector<std::int64_t>{batch, 12});
    int f = g.add("reshape", {x}, flat, "flatten");
    int h = g.add("matmul", {f, w1}, {}, "dense/matmul");
    h = g.add("bias_add", {h, b1}, {}, "dense/bias");
    h = g.add("activation", {h}, {{"kind", std::string("relu")}}, "dense/relu");
    logits = g.add("matmul", {h, w2}, {}, "dense_1/matmul");
    Attrs la;
    la.set("kind", std::string("sparse_categorical_crossentropy"));
    la.set("from_logits", std::int64_t{1});
    loss = g.add("loss", {logits, y}, la, "loss");
    int seed = g.add_variable("one", one);
    std::vector<int> grads = gradients(g, loss, seed, {w1, b1, w2});
    for (std::size_t i = 0; i < grads.size(); ++i) {
      EXPECT_GE(grads[i], 0);
      g.add_node("sgd_update", {std::vector<int>{w1, b1, w2}[i], grads[i]}, {}, "update" + std::to_string(i));
    }
  }
};

TEST(Planner, LiveBuffersNeverOverlapAndArenaIsThePeak) {
  Mlp m(8);
  Program p = plan(std::move(m.g), {DeviceType::cpu, {m.loss, m.logits}, 64});
  std::size_t max_end = 0;
  const auto& slots = p.slots();
  for (std::size_t i = 0; i < slots.size(); ++i) {
    max_end = std::max(max_end, slots[i].offset + slots[i].bytes);
    EXPECT_EQ(slots[i].offset % 64, 0u);
    for (std::size_t j = i + 1; j < slots.size(); ++j) {
      bool live_together = slots[i].first_step <= slots[j].last_step && slots[j].first_step <= slots[i].last_step;
      bool overlap = slots[i].offset < slots[j].offset + slots[j].bytes && slots[j].offset < slots[i].offset + slots[i].bytes;
      EXPECT_FALSE(live_together && overlap) << "slots " << i << " and " << j;
    }
  }
  EXPECT_EQ(max_end, p.arena_bytes());
  // Reuse happened: the arena is smaller than the sum of all slots.
  std::size_t sum = 0;
  for (const ArenaSlot& s : slots) sum += s.bytes;
  EXPECT_LT(p.arena_bytes(), sum);
}

TEST(Planner, ReshapeAliasesItsInput) {
  Mlp m(4);
  int x = m.x;
  Program p = plan(std::move(m.g), {DeviceType::cpu, {m.loss}, 64});
  HostAllocator alloc;
  Tensor arena = allocate_tensor(alloc, Shape{static_cast<std::int64_t>(p.arena_bytes())}, DType::u8);
  p.bind(arena.raw());
  int flat = -1;
  for (const PlannedStep& s : p.steps()) {
    if (p.graph().node(s.node).op == "reshape") flat = s.outputs[0];
  }
  ASSERT_GE(flat, 0);
  EXPECT_EQ(p.data(flat), p.data(x));
}

TEST(Planner, UpdatesRunAfterEveryReaderOfTheirVariable) {
  Mlp m(4);
  Program p = plan(std::move(m.g), {DeviceType::cpu, {m.loss}, 64});
  const Graph& g = p.graph();
  std::vector<int> pos(static_cast<std::size_t>(g.num_nodes()), -1);
  for (std::size_t i = 0; i < p.steps().size(); ++i) pos[static_cast<std::size_t>(p.steps()[i].node)] = static_cast<int>(i);
  auto readers = g.consumers();
  for (std::size_t i = 0; i < p.steps().size(); ++i) {
    const Node& n = g.node(p.steps()[i].node);
    if (n.op != "sgd_update") continue;
    for (int r : readers[static_cast<std::size_t>(n.inputs[0])]) {
      EXPECT_LE(pos[static_cast<std::size_t>(r)], static_cast<int>(i)) << g.node(r).name << " after " << n.name;
    }
  }
}

TEST(Fusion, MatmulBiasReluBecomesOneNode) {
  Mlp m(4);
  EXPECT_EQ(fuse_bias_activation(m.g), 1);
  int fused = 0;
  for (int n = 0; n < m.g.num_nodes(); ++n) {
    const Node& node = m.g.node(n);
    if (node.removed) continue;
    if (node.op == "fused_matmul") {
      ++fused;
      EXPECT_EQ(node.attrs.s("activation"), "relu");
    }
  }
  EXPECT_EQ(fused, 1);
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
  int relu_grads = 0, fused_pool_grads = 0;
  for (int n = 0; n < g.num_nodes(); ++n) {
    const Node& node = g.node(n);
    if (node.removed) continue;
    relu_grads += node.op == "activation_grad";
    fused_pool_grads += node.op == "max_pool2d_grad" && node.attrs.i_or("relu", 0) == 1;
  }
  EXPECT_EQ(relu_grads, 0);
  EXPECT_EQ(fused_pool_grads, 1);
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

TEST(Graph, RewriteNodeKeepsItsOutputsAndRefusesANewShape) {
  Graph g;
  int x = g.add_input("x", {Shape{2, 8, 8, 3}, DType::f32});
  using Ints = std::vector<std::int64_t>;
  Attrs pool{{"pool_size", Ints{2, 2}}, {"strides", Ints{2, 2}}, {"padding", std::string("valid")}};
  int y = g.add("max_pool2d", {x}, pool, "pool");
  const int node = g.value(y).producer;
  const std::vector<int> outs = g.rewrite_node(node, "max_pool2d_argmax", {x}, pool, "pool+argmax");
  ASSERT_EQ(outs.size(), 2u);
  EXPECT_EQ(outs[0], y) << "the kept output keeps its value id";
  EXPECT_EQ(g.value(outs[1]).producer, node);
  EXPECT_EQ(g.value(outs[1]).output_index, 1);
  Attrs bigger = pool;
  bigger.set("strides", Ints{1, 1});
  try {
    g.rewrite_node(node, "max_pool2d_argmax", {x}, bigger, "pool+argmax");
    ADD_FAILURE() << "a rewrite that changes y's shape was accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("would have shape (2, 7, 7, 3), not the (2, 4, 4, 3)"), std::string::npos)
        << e.what();
  }
  Attrs huge = pool;
  huge.set("pool_size", Ints{9, 8});
  huge.set("strides", Ints{9, 8});
  const int wide = g.add_input("wide", {Shape{1, 18, 16, 1}, DType::f32});
  EXPECT_NO_THROW(g.add("max_pool2d", {wide}, huge, "plain_pool")) << "the window itself is fine";
  try {
    g.add_node("max_pool2d_argmax", {wide}, huge, "too_big");
    ADD_FAILURE() << "a 9x8 window (72 positions) got an argmax byte";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("more positions than the 64 an argmax byte holds"), std::string::npos)
        << e.what();
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
  int relu_grads = 0, fused_pool_grads = 0;
  for (int n = 0; n < g.num_nodes(); ++n) {
    const Node& node = g.node(n);
    if (node.removed) continue;
    relu_grads += node.op == "activation_grad";
    fused_pool_grads += node.op == "max_pool3d_grad" && node.attrs.i_or("relu", 0) == 1;
  }
  EXPECT_EQ(relu_grads, 0);
  EXPECT_EQ(fused_pool_grads, 1);
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

TEST(Executor, TrainingStepsLowerTheLossAndAllocateNothing) {
  Mlp m(8);
  int x = m.x, y = m.y, loss = m.loss;
  HostAllocator alloc;
  fuse_bias_activation(m.g);
  Program p = plan(std::move(m.g), {DeviceType::cpu, {loss}, 64});
  Tensor arena = allocate_tensor(alloc, Shape{static_cast<std::int64_t>(p.arena_bytes())}, DType::u8);
  p.bind(arena.raw());
  float* xs = static_cast<float*>(p.data(x));
  for (int i = 0; i < 8 * 12; ++i) xs[i] = static_cast<float>((i * 37) % 11) / 11.0f;
  auto* ys = static_cast<std::int32_t*>(p.data(y));
  for (int i = 0; i < 8; ++i) ys[i] = i % 5;
  StepContext ctx;
  ctx.learning_rate = 0.5f;
  MemoryStats before = alloc.stats();
  float first = 0, last = 0;
  for (int s = 0; s < 50; ++s) {
    ctx.step = s;
    p.run(ctx);
    float l = *static_cast<float*>(p.data(loss));
    if (s == 0) first = l;
    last = l;
  }
  MemoryStats after = alloc.stats();
  EXPECT_EQ(after.allocations, before.allocations);
  EXPECT_LT(last, first * 0.5f);
}

// On a device whose kernels run asynchronously, a timed run waits for each kernel before
// reading the clock, so the wait (the kernel's run on the device) is that kernel's time.
TEST(Executor, ATimedRunWaitsForEachKernelInsideItsTime) {
  Mlp m(8);
  HostAllocator alloc;
  Program p = plan(std::move(m.g), {DeviceType::cpu, {m.loss}, 64});
  Tensor arena = allocate_tensor(alloc, Shape{static_cast<std::int64_t>(p.arena_bytes())}, DType::u8);
  p.bind(arena.raw());
  std::memset(arena.raw(), 0, arena.nbytes());
  int waits = 0;
  p.set_timing(true, [&waits] {
    ++waits;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));  // the "device" finishing the kernel
  });
  StepContext ctx;
  p.run(ctx);
  // One wait before the first kernel (earlier work is not its time), one after each.
  EXPECT_EQ(waits, static_cast<int>(p.steps().size()) + 1);
  for (std::size_t i = 0; i < p.steps().size(); ++i) EXPECT_GE(p.step_seconds()[i], 2e-3) << p.steps()[i].impl;
  p.set_timing(false);
  p.run(ctx);
  EXPECT_EQ(waits, static_cast<int>(p.steps().size()) + 1) << "an untimed run waited";
}

// An input read where it lies (set_input) gives the same step as one copied into its
// slot, through the reshape aliased onto it; nullptr goes back to the slot.
TEST(Executor, SetInputReadsTheBatchWhereItLies) {
  auto run_once = [](bool external) {
    Mlp m(8);
    int x = m.x, y = m.y, logits = m.logits;
    HostAllocator alloc;
    Program p = plan(std::move(m.g), {DeviceType::cpu, {m.loss, logits}, 64});
    Tensor arena = allocate_tensor(alloc, Shape{static_cast<std::int64_t>(p.arena_bytes())}, DType::u8);
    p.bind(arena.raw());
    Tensor batch = Tensor::zeros(Shape{8, 3, 4}, DType::f32);
    for (int i = 0; i < 8 * 12; ++i) batch.data<float>()[i] = static_cast<float>((i * 37) % 11) / 11.0f;
    std::memset(p.data(x), 0, batch.nbytes());
    if (external) {
      p.set_input(x, batch.raw());
    } else {
      std::memcpy(p.data(x), batch.raw(), batch.nbytes());
    }
    for (int i = 0; i < 8; ++i) static_cast<std::int32_t*>(p.data(y))[i] = i % 5;
    StepContext ctx;
    ctx.learning_rate = 0.1f;
    p.run(ctx);
    std::vector<float> out(static_cast<const float*>(p.data(logits)), static_cast<const float*>(p.data(logits)) + 40);
    if (external) {
      // The slot was never written: it still holds zeros, and reading it again works.
      EXPECT_EQ(static_cast<const float*>(p.data(x))[5], 0.0f);
      p.set_input(x, nullptr);
      p.run(ctx);
    }
    return out;
  };
  const std::vector<float> copied = run_once(false), external = run_once(true);
  ASSERT_EQ(copied.size(), external.size());
  for (std::size_t i = 0; i < copied.size(); ++i) EXPECT_EQ(copied[i], external[i]) << i;
  EXPECT_NE(copied[0], 0.0f);
  Mlp m(2);
  const int w1 = m.w1;
  Program p = plan(std::move(m.g), {DeviceType::cpu, {m.loss}, 64});
  HostAllocator alloc;
  Tensor arena = allocate_tensor(alloc, Shape{static_cast<std::int64_t>(p.arena_bytes())}, DType::u8);
  p.bind(arena.raw());
  EXPECT_THROW(p.set_input(w1, nullptr), InvalidArgument);
}

TEST(Autodiff, FanOutGradientsAreSummed) {
  // y = x·w + x·w  (w read twice) -> dL/dw is twice the single-path gradient.
  Graph g;
  Tensor tw = filled(Shape{3, 2}, 0.1f), one = filled(Shape{}, 1.0f);
  int x = g.add_input("x", {Shape{4, 3}, DType::f32});
  int w = g.add_variable("w", tw);
  int a = g.add("matmul", {x, w}, {}, "a");
  int b = g.add("matmul", {x, w}, {}, "b");
  int s = g.add("add_n", {a, b}, {}, "sum");
  int t = g.add_input("t", {Shape{4, 2}, DType::f32});
  Attrs la;
  la.set("kind", std::string("mean_squared_error"));
  la.set("from_logits", std::int64_t{0});
  int loss = g.add("loss", {s, t}, la, "loss");
  std::vector<int> grads = gradients(g, loss, g.add_variable("one", one), {w});
  ASSERT_GE(grads[0], 0);
  EXPECT_EQ(g.node(g.value(grads[0]).producer).op, "add_n");
  EXPECT_THROW(g.add("matmul", {x, t}, {}, "bad"), InvalidArgument);
}

// A comparison (sequence_mask: OpDef::zero_gradient) passes no gradient: a weight reached
// only through one gets none, as TensorFlow's NotDifferentiable ops, while the other
// weight trains. An op without a rule that is not marked so ("slice") on a weight's path
// is an error naming it, not a silent zero.
TEST(Autodiff, AComparisonPassesNoGradientAndAMissingRuleIsAnError) {
  const auto build = [](const char* gate_op, std::vector<int>* grads) {
    Graph g;
    Tensor tw = filled(Shape{3, 3}, 0.1f), tv = filled(Shape{3, 2}, 0.2f), one = filled(Shape{}, 1.0f);
    int x = g.add_input("x", {Shape{4, 3}, DType::f32});
    int w = g.add_variable("gate_w", tw);
    int v = g.add_variable("v", tv);
    Attrs ga;
    if (std::string(gate_op) == "sequence_mask") {
      ga.set("value", 0.0);
    } else {
      ga.set("axis", std::int64_t{1});
      ga.set("begin", std::int64_t{0});
      ga.set("size", std::int64_t{3});
    }
    int gate = g.add(gate_op, {g.add("matmul", {x, w}, {}, "gate")}, ga, "mask");
    int kept = g.add("mul", {x, gate}, {}, "kept");
    int t = g.add_input("t", {Shape{4, 2}, DType::f32});
    Attrs la;
    la.set("kind", std::string("mean_squared_error"));
    la.set("from_logits", std::int64_t{0});
    int loss = g.add("loss", {g.add("matmul", {kept, v}, {}, "out"), t}, la, "loss");
    *grads = gradients(g, loss, g.add_variable("one", one), {w, v});
  };
  std::vector<int> grads;
  build("sequence_mask", &grads);
  ASSERT_EQ(grads.size(), 2u);
  EXPECT_LT(grads[0], 0) << "a gradient through a comparison";
  EXPECT_GE(grads[1], 0);
  try {
    build("slice", &grads);
    ADD_FAILURE() << "a path through an op without a gradient rule was accepted";
  } catch (const Unsupported& e) {
    EXPECT_NE(std::string(e.what()).find("'slice' has no gradient rule"), std::string::npos) << e.what();
  }
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
