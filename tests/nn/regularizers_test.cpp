// Regularizers and constraints (nnfit/nn/regularizers.h): the penalties' values against
// Keras's formulas worked by hand, the constraints applied after an update (the planner
// runs the two mutators of one variable in creation order), and bad values.
#include <gtest/gtest.h>

#include <cmath>

#include "nnfit/core/error.h"
#include "nnfit/graph/program.h"
#include "nnfit/memory/host_allocator.h"
#include "nnfit/nn/regularizers.h"

namespace nnfit {
namespace {

Tensor tensor(const Shape& s, std::vector<float> values) {
  Tensor t = Tensor::zeros(s);
  for (std::size_t i = 0; i < values.size(); ++i) t.data<float>()[i] = values[i];
  return t;
}

// Runs `g` once and returns value `v` (a scalar).
struct Runner {
  HostAllocator alloc;
  Tensor arena;
  Program program;
  void run(Graph g, std::vector<int> keep, float lr = 0.0f) {
    PlanOptions po;
    po.keep = std::move(keep);
    program = plan(std::move(g), po);
    arena = allocate_tensor(alloc, Shape{static_cast<std::int64_t>(std::max<std::size_t>(program.arena_bytes(), 1))}, DType::u8);
    program.bind(arena.raw());
    StepContext ctx;
    ctx.learning_rate = lr;
    program.run(ctx);
  }
  float scalar(int v) const { return *static_cast<const float*>(program.data(v)); }
};

float penalty(const Regularizer& r, const Tensor& x, double scale = 1.0) {
  Graph g;
  const int p = emit_penalty(g, g.add_variable("w", x), r, scale, "penalty");
  Runner run;
  run.run(std::move(g), {p});
  return run.scalar(p);
}

TEST(Regularizers, PenaltiesFollowKerasFormulas) {
  const Tensor w = tensor(Shape{2, 2}, {1.0f, -2.0f, 0.5f, 0.0f});
  Regularizer l1{"L1", 0.1, 0.0};
  EXPECT_FLOAT_EQ(penalty(l1, w), 0.1f * 3.5f);
  Regularizer l2{"L2", 0.0, 0.01};
  EXPECT_FLOAT_EQ(penalty(l2, w), 0.01f * 5.25f);
  Regularizer both{"L1L2", 0.1, 0.01};
  EXPECT_FLOAT_EQ(penalty(both, w, 0.25), 0.25f * (0.35f + 0.0525f));  // an activity penalty over batch 4
  // Orthogonal rows: (1, 0), (1, 1)/√2 and (0, 1): |cos| 1/√2, 0, 1/√2 per pair; mean over
  // the 3 pairs, times factor / 2 ... Keras sums both triangles, so 2·√2 / 3 · 0.5 · factor.
  const Tensor rows = tensor(Shape{3, 2}, {2.0f, 0.0f, 1.0f, 1.0f, 0.0f, 3.0f});
  Regularizer orth;
  orth.kind = "OrthogonalRegularizer";
  orth.factor = 0.3;
  EXPECT_NEAR(penalty(orth, rows), 0.3 * 0.5 * (4.0 / std::sqrt(2.0)) / 3.0, 1e-6);
  orth.mode = "columns";  // the 2 columns (2, 1, 0) and (0, 1, 3): cos = 1 / (√5·√10)
  EXPECT_NEAR(penalty(orth, rows), 0.3 * 0.5 * (2.0 / std::sqrt(50.0)) / 1.0, 1e-6);
}

// Constraint `c` applied to w after an SGD step with gradient `grad` at learning rate 1.
Tensor step_then_constrain(const Constraint& c, const Tensor& w, const Tensor& grad) {
  Graph g;
  const int var = g.add_variable("w", w);
  const int gv = g.add_variable("g", grad);
  g.add_node("sgd_update", {var, gv}, {}, "update");
  emit_constraint(g, var, c, "constraint");
  Runner run;
  run.run(std::move(g), {}, 1.0f);
  return w;
}

TEST(Constraints, ApplyAfterTheUpdate) {
  const Tensor zero = Tensor::zeros(Shape{2, 2});
  // Columns (3, 4) (norm 5) and (0.3, 0.4) (norm 0.5), over axis 0.
  auto w = [] { return tensor(Shape{2, 2}, {3.0f, 0.3f, 4.0f, 0.4f}); };
  Constraint max_norm{"MaxNorm", 2.0, 0.0, 1.0, {0}};
  Tensor m = step_then_constrain(max_norm, w(), zero);
  EXPECT_NEAR(m.data<float>()[0], 3.0 * 2.0 / (5.0 + 1e-7), 1e-6);
  EXPECT_NEAR(m.data<float>()[1], 0.3 * 0.5 / (0.5 + 1e-7), 1e-6);  // within the limit: kept
  Constraint unit{"UnitNorm", 2.0, 0.0, 1.0, {1}};                  // rows (3, 0.3) and (4, 0.4)
  Tensor u = step_then_constrain(unit, w(), zero);
  EXPECT_NEAR(u.data<float>()[0], 3.0 / std::sqrt(9.09), 1e-6);
  EXPECT_NEAR(u.data<float>()[3], 0.4 / std::sqrt(16.16), 1e-6);
  Constraint min_max{"MinMaxNorm", 1.0, 0.8, 0.5, {0}};  // desired 0.5·clip + 0.5·norm
  Tensor mm = step_then_constrain(min_max, w(), zero);
  EXPECT_NEAR(mm.data<float>()[0], 3.0 * (0.5 * 1.0 + 0.5 * 5.0) / 5.0, 1e-5);
  EXPECT_NEAR(mm.data<float>()[1], 0.3 * (0.5 * 0.8 + 0.5 * 0.5) / 0.5, 1e-5);
  // NonNeg after a step that makes an entry negative: the update runs first.
  Constraint non_neg{"NonNeg"};
  Tensor n = step_then_constrain(non_neg, w(), tensor(Shape{2, 2}, {4.0f, 0.0f, 0.0f, 1.0f}));
  EXPECT_EQ(n.data<float>()[0], 0.0f);
  EXPECT_EQ(n.data<float>()[2], 4.0f);
  EXPECT_EQ(n.data<float>()[3], 0.0f);  // 0.4 - 1 clipped
}

TEST(RegularizerErrors, BadValuesAreNamed) {
  Regularizer r{"L3", 0.1, 0.0};
  EXPECT_THROW(check_regularizer(r, "dense"), InvalidArgument);
  r = {"L2", 0.0, -1.0};
  EXPECT_THROW(check_regularizer(r, "dense"), InvalidArgument);
  Constraint c{"MinMaxNorm", 1.0, 2.0, 1.0, {0}};
  EXPECT_THROW(check_constraint(c, "dense"), InvalidArgument);
  // An orthogonal penalty needs a matrix with at least two rows.
  Regularizer orth;
  orth.kind = "OrthogonalRegularizer";
  Graph g;
  const int v = g.add_variable("w", Tensor::zeros(Shape{4}));
  EXPECT_THROW(emit_penalty(g, v, orth, 1.0, "p"), InvalidArgument);
  Constraint axis{"MaxNorm", 2.0, 0.0, 1.0, {3}};
  EXPECT_THROW(emit_constraint(g, v, axis, "c"), InvalidArgument);
}

}  // namespace
}  // namespace nnfit
