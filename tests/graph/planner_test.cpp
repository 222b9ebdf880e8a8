// Planner and executor: no two simultaneously live buffers overlap, the arena is exactly
// the planned peak, reshape aliases, mutators run after readers, and steps allocate no
// tensor memory; the fusion pass's first rewrite on the MLP (the others: fusion_test.cpp).
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <thread>

#include "graph_test_util.h"
#include "nnfit/core/error.h"
#include "nnfit/graph/autodiff.h"
#include "nnfit/graph/fusion.h"
#include "nnfit/graph/program.h"
#include "nnfit/memory/host_allocator.h"

namespace nnfit {
namespace {

using graph_test::filled;

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

}  // namespace
}  // namespace nnfit
