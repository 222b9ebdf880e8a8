// TracedLayer (Note [Traced layers]): a traced call `relu(matmul(x, w) + b) * count` over
// the layer's own weights: shapes, the weights it makes (Keras's names, order and
// trainable flags), one graph variable per weight in the emitted graph, Keras's file groups
// and the errors when a call or a weight does not fit the trace; values computed from the
// weights alone (Note [Weight-only values]), emitted once before the call's graph.
#include <gtest/gtest.h>

#include <memory>

#include "nnfit/core/error.h"
#include "nnfit/memory/host_allocator.h"
#include "nnfit/nn/operation.h"
#include "nnfit/nn/operation_graph.h"
#include "nnfit/nn/traced_layer.h"

namespace nnfit {
namespace {

OperationArg tensor_arg() {
  OperationArg a;
  a.kind = OperationArg::Kind::tensor;
  a.tensors = {0};
  return a;
}

OperationArg variable_arg(std::int64_t index, std::vector<std::int64_t> shape) {
  OperationArg a;
  a.kind = OperationArg::Kind::variable;
  a.variable = index;
  a.shape = std::move(shape);
  return a;
}

// The operation `cls` on the graph's tensor and `second` (a weight of the traced layer, or none).
TensorRef call_op(LayerGraph& g, const std::string& name, const std::string& cls, TensorRef x,
                  std::optional<OperationArg> second) {
  auto op = std::make_unique<Operation>(name, "keras.src.ops.numpy", cls, Attrs{}, "{}");
  CallArguments args;
  args.positional = 1;
  args.operation_args = {tensor_arg()};
  if (second) args.operation_args.push_back(*second);
  op->set_call_arguments(args);
  Layer& l = g.add_layer(std::move(op));
  return g.call(l, {x})[0];
}

// relu(matmul(x, w) + b) * count, for x of 4 features; `w_shape` as the trace recorded it.
TracedLayer affine(std::vector<std::int64_t> w_shape = {4, 3}) {
  LayerGraph g;
  TensorRef x = g.add_input("affine_input_0", Shape{4});
  TensorRef h = call_op(g, "matmul", "Matmul", x, variable_arg(0, w_shape));
  h = call_op(g, "add", "Add", h, variable_arg(1, {3}));
  h = call_op(g, "relu", "Relu", h, std::nullopt);
  h = call_op(g, "multiply", "Multiply", h, variable_arg(2, {3}));
  g.set_outputs({h});
  return TracedLayer("affine", "Affine", "{}",
                     {{"w", Shape{4, 3}, "glorot_uniform", true}, {"b", Shape{3}, "zeros", true},
                      {"count", Shape{3}, "ones", false}},
                     std::move(g), {});
}

TEST(TracedLayer, MakesItsWeightsAndEmitsOneVariablePerWeight) {
  HostAllocator alloc;  // outlives the weights
  WeightFactory factory(alloc, 7);
  TracedLayer layer = affine();
  EXPECT_EQ(layer.compute_output_shapes({Shape{4}}), std::vector<Shape>{Shape{3}});
  layer.build_for({Shape{4}}, factory);
  const std::vector<Weight*> saved = layer.saved_weights();
  ASSERT_EQ(saved.size(), 3u);
  EXPECT_EQ(saved[0]->name, "affine/w");
  EXPECT_EQ(saved[2]->name, "affine/count");
  EXPECT_TRUE(saved[1]->trainable);
  EXPECT_FALSE(saved[2]->trainable);
  EXPECT_EQ(saved[2]->value.data<float>()[0], 1.0f);
  EXPECT_EQ(layer.count_params(), 12 + 3 + 3);

  Graph graph;
  GraphBuilder builder(graph, true);
  const int x = graph.add_input("x", {Shape{2, 4}, DType::f32});
  const std::vector<int> out = layer.call_on(builder, {x});
  EXPECT_EQ(graph.desc(out[0]).shape, (Shape{2, 3}));
  std::vector<const Weight*> read;
  for (const auto& [id, w] : builder.variables()) read.push_back(w);
  EXPECT_EQ(read, (std::vector<const Weight*>{saved[0], saved[1], saved[2]}));  // the layer's own, once each

  const std::vector<WeightGroup> groups = layer.saved_weight_groups();
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].path, "");
  EXPECT_EQ(groups[0].weights.size(), 3u);
}

TEST(TracedLayer, ACallOrAWeightThatDoesNotFitTheTraceIsRefusedNamingIt) {
  HostAllocator alloc;
  WeightFactory factory(alloc, 7);
  TracedLayer layer = affine();
  try {
    layer.compute_output_shapes({Shape{5}});
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("affine (Affine): input 0 has shape (5,) but the layer was traced for (4,)"),
              std::string::npos)
        << e.what();
  }
  TracedLayer wrong = affine({5, 3});
  try {
    wrong.build_for({Shape{4}}, factory);
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("matmul (Matmul): argument 1 reads affine/w as (5, 3) but it is (4, 3)"),
              std::string::npos)
        << e.what();
  }
}

TEST(TracedLayer, AnOperationReadingAWeightOutsideItsLayerSaysSo) {
  HostAllocator alloc;
  WeightFactory factory(alloc, 1);
  LayerGraph g;
  TensorRef x = g.add_input("x", Shape{3});
  g.set_outputs({call_op(g, "add", "Add", x, variable_arg(0, {3}))});
  Layer& op = *g.layers()[0];
  op.build_for({Shape{3}}, factory);
  Graph graph;
  GraphBuilder builder(graph, false);
  EXPECT_THROW(op.call_on(builder, {graph.add_input("x", {Shape{2, 3}, DType::f32})}), InvalidArgument);
}

// One-argument operation `cls` of the weight-only graph.
std::unique_ptr<Operation> unary(const std::string& name, const std::string& cls) {
  auto op = std::make_unique<Operation>(name, "keras.src.ops.numpy", cls, Attrs{}, "{}");
  CallArguments args;
  args.positional = 1;
  args.operation_args = {tensor_arg()};
  op->set_call_arguments(args);
  return op;
}

// matmul(x, w) * exp(t), with add_loss(square(w)): w (4, 3) and t () are the weights; exp(t)
// is the weight-only value the call's Multiply reads as variable 2 (past the 2 weights).
TracedLayer tempered(std::int64_t value_index = 2) {
  LayerGraph g;
  TensorRef x = g.add_input("tempered_input_0", Shape{4});
  TensorRef h = call_op(g, "matmul", "Matmul", x, variable_arg(0, {4, 3}));
  h = call_op(g, "multiply", "Multiply", h, variable_arg(value_index, {}));
  g.set_outputs({h});
  TracedLayer layer("tempered", "Tempered", "{}", {{"w", Shape{4, 3}, "glorot_uniform", true}, {"t", Shape{}, "zeros", true}},
                    std::move(g), {});
  auto values = std::make_shared<OperationGraph>(2);
  values->add(unary("exp", "Exp"), {OperationGraph::Ref{-1, 1}});
  values->add(unary("square", "Square"), {OperationGraph::Ref{-1, 0}});
  values->set_outputs({OperationGraph::Ref{0, 0}, OperationGraph::Ref{1, 0}});
  layer.set_weight_values(values, 1);
  return layer;
}

TEST(TracedLayer, WeightOnlyValuesAreEmittedOnceOnTheWeightsBeforeTheCall) {
  HostAllocator alloc;
  WeightFactory factory(alloc, 3);
  TracedLayer layer = tempered();
  EXPECT_EQ(layer.compute_output_shapes({Shape{4}}), std::vector<Shape>{Shape{3}});
  layer.build_for({Shape{4}}, factory);
  ASSERT_EQ(layer.saved_weights().size(), 2u);  // the values are no weights of their own

  Graph graph;
  GraphBuilder builder(graph, true);
  builder.set_collect_losses(true);
  const int x = graph.add_input("x", {Shape{2, 4}, DType::f32});
  const std::vector<int> out = layer.call_on(builder, {x});
  EXPECT_EQ(graph.desc(out[0]).shape, (Shape{2, 3}));
  std::vector<const Weight*> read;
  for (const auto& [id, w] : builder.variables()) read.push_back(w);
  const std::vector<Weight*> saved = layer.saved_weights();
  EXPECT_EQ(read, (std::vector<const Weight*>{saved[0], saved[1]}));  // the weights, once each
  ASSERT_EQ(builder.losses().size(), 1u);  // add_loss(square(w)), summed to a scalar
  EXPECT_EQ(graph.desc(builder.losses()[0]).shape.rank(), 0);

  Graph inference;
  GraphBuilder predicting(inference, false);  // no loss collected: the values only
  layer.call_on(predicting, {inference.add_input("x", {Shape{2, 4}, DType::f32})});
  EXPECT_TRUE(predicting.losses().empty());
}

TEST(TracedLayer, AWeightOnlyValueThatDoesNotFitIsRefusedNamingIt) {
  HostAllocator alloc;
  WeightFactory factory(alloc, 3);
  TracedLayer layer = tempered(3);  // values: exp(t) only (square(w) is a loss)
  try {
    layer.build_for({Shape{4}}, factory);
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("multiply (Multiply): argument 1 reads weight 3 of a traced layer that has 2 "
                                         "weights and 1 weight-only values"),
              std::string::npos)
        << e.what();
  }
  TracedLayer other = tempered();
  EXPECT_THROW(other.set_weight_values(std::make_shared<OperationGraph>(3), 0), InvalidArgument);  // 3 inputs, 2 weights
}

}  // namespace
}  // namespace nnfit
