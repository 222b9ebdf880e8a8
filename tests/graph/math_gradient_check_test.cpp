// Finite-difference checks of the tensor-algebra ops' gradient rules (graph/math_op_defs.cpp):
// every differentiable unary and binary kind (binary on broadcasting shapes, so the sums
// back over broadcast axes are checked), the reductions over several axis sets, where,
// cumulative, broadcast_to; and the same gradients at bfloat16 / float16 against float32.
// Inputs stay inside each kind's domain and away from its kinks (ties, integer ratios).
#include "graph/gradient_check_harness.h"

namespace nnfit {
namespace {

Attrs kind(const std::string& k) { return Attrs{{"kind", k}}; }

TEST(MathGradientCheck, Unary) {
  std::uint64_t seed = 1;
  for (const char* k : {"negative", "abs", "square", "sqrt", "rsqrt", "reciprocal", "exp", "expm1", "log", "log1p", "log2",
                        "log10", "sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "arcsinh", "arccosh",
                        "arctanh", "erf", "erfc"}) {
    const std::string s = k;
    float lo = -1.5f, hi = 1.5f;
    if (s == "sqrt" || s == "rsqrt" || s == "log" || s == "log2" || s == "log10" || s == "reciprocal") lo = 0.5f, hi = 2.0f;
    if (s == "arcsin" || s == "arccos" || s == "arctanh") lo = -0.8f, hi = 0.8f;
    if (s == "arccosh") lo = 1.3f, hi = 3.0f;
    if (s == "log1p") lo = -0.5f, hi = 1.5f;
    if (s == "tan") lo = -1.0f, hi = 1.0f;
    Tensor x = random(Shape{3, 5}, seed++, lo, hi);
    if (s == "abs") {  // away from the kink at 0
      for (std::int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] += x.data<float>()[i] < 0 ? -0.1f : 0.1f;
    }
    check({"unary", kind(k), {x}});
  }
}

TEST(MathGradientCheck, PiecewiseConstantKindsGiveNoGradient) {
  Graph g;
  const int x = g.add_variable("x", random(Shape{4}, 1));
  const int y = g.add("unary", {x}, kind("floor"), "floor");
  const int z = g.add("binary", {y, x}, kind("less"), "less");
  Tensor one = Tensor::zeros(Shape{});
  one.data<float>()[0] = 1.0f;
  const int loss = g.add("reduce", {z}, kind("sum"), "sum");
  EXPECT_EQ(gradients(g, loss, g.add_variable("one", one), {x})[0], -1);
}

TEST(MathGradientCheck, StopGradientPassesTheValueAndNoGradient) {
  Graph g;
  const int x = g.add_variable("x", random(Shape{4}, 2));
  const int y = g.add("binary", {g.add("unary", {x}, kind("stop_gradient"), "stop"), x}, kind("multiply"), "mul");
  Tensor one = Tensor::zeros(Shape{});
  one.data<float>()[0] = 1.0f;
  const int dx = gradients(g, g.add("reduce", {y}, kind("sum"), "sum"), g.add_variable("one", one), {x})[0];
  ASSERT_GE(dx, 0) << "x * stop_gradient(x) still depends on x through its second operand";
  EXPECT_EQ(g.node(g.value(dx).producer).op, "binary_grad") << "one path only: the multiply's, never the stopped one";
}

// Values computed after stop_gradient depend on nothing autodiff differentiates, so an op
// without a gradient rule may follow (Equalization's histogram: gather_grad's scatter-add of
// ones at bins derived from stop_gradient(x)), and x still gets the other path's gradient.
TEST(MathGradientCheck, OpsWithoutGradientRulesMayFollowStopGradient) {
  Graph g;
  const int x = g.add_variable("x", random(Shape{4}, 3));
  Tensor ones = Tensor::zeros(Shape{4, 1});
  for (int i = 0; i < 4; ++i) ones.data<float>()[i] = 1.0f;
  const int bins = g.add("unary", {g.add("unary", {x}, kind("stop_gradient"), "stop")}, kind("abs"), "abs");
  const int hist = g.add("gather_grad", {bins, g.add_variable("ones", ones)}, {{"rows", std::int64_t{8}}}, "hist");
  const int y = g.add("binary", {x, g.add("reduce", {hist}, kind("sum"), "count")}, kind("multiply"), "mul");
  Tensor one = Tensor::zeros(Shape{});
  one.data<float>()[0] = 1.0f;
  const int dx = gradients(g, g.add("reduce", {y}, kind("sum"), "sum"), g.add_variable("one", one), {x})[0];
  ASSERT_GE(dx, 0) << "x * count(...) depends on x through its first operand";
}

// nan_to_num passes dy through where x is finite (every point central differences can
// probe), and gives nothing where it replaced x.
TEST(MathGradientCheck, NanToNum) {
  const Attrs a{{"nan", 0.5}, {"posinf", 2.0}, {"neginf", -2.0}};
  check({"nan_to_num", a, {random(Shape{3, 5}, 77)}});
  Graph g;
  Tensor x = Tensor::zeros(Shape{4});
  float* p = x.data<float>();
  p[0] = NAN, p[1] = INFINITY, p[2] = -INFINITY, p[3] = 0.5f;
  const int v = g.add_variable("x", x);
  EXPECT_THROW(g.add("nan_to_num", {v}, {{"nan", 0.5}}, "no_posinf"), InvalidArgument) << "posinf and neginf are required";
  const int y = g.add("nan_to_num", {v}, a, "y");
  Tensor one = Tensor::zeros(Shape{});
  one.data<float>()[0] = 1.0f;
  const int dx = gradients(g, g.add("reduce", {y}, kind("sum"), "sum"), g.add_variable("one", one), {v})[0];
  ASSERT_GE(dx, 0);
  EXPECT_EQ(g.node(g.value(dx).producer).op, "mul") << "dy times isfinite(x)";
}

TEST(MathGradientCheck, BinaryWithBroadcasting) {
  std::uint64_t seed = 100;
  const std::vector<std::pair<Shape, Shape>> pairs = {{Shape{3, 1, 4}, Shape{4}}, {Shape{2, 3}, Shape{2, 3}}, {Shape{}, Shape{2, 3}},
                                                      {Shape{2, 1}, Shape{1, 3}}};
  for (const char* k : {"add", "subtract", "multiply", "divide", "power", "maximum", "minimum", "mod", "arctan2"}) {
    const std::string s = k;
    for (const auto& [sa, sb] : pairs) {
      Tensor a = random(sa, seed++), b = random(sb, seed++);
      if (s == "power") a = random(sa, seed++, 0.5f, 2.0f);
      if (s == "divide" || s == "arctan2") b = random(sb, seed++, 0.5f, 1.5f);
      if (s == "mod") a = random(sa, seed++, 1.5f, 2.0f), b = random(sb, seed++, 1.05f, 1.4f);  // floor(a/b) = 1 throughout
      if (s == "maximum" || s == "minimum") {  // a and b well apart
        b = random(sb, seed++, -0.3f, 0.3f);
        for (std::int64_t i = 0; i < a.numel(); ++i) a.data<float>()[i] = (i % 2 ? 0.6f : -0.6f) + 0.2f * a.data<float>()[i];
      }
      check({"binary", kind(k), {a, b}});
    }
  }
}

TEST(MathGradientCheck, Reductions) {
  std::uint64_t seed = 200;
  for (const char* k : {"sum", "min", "prod", "logsumexp", "max", "mean"}) {
    for (const auto& axes : {std::vector<std::int64_t>{}, std::vector<std::int64_t>{1}, std::vector<std::int64_t>{0, 2},
                             std::vector<std::int64_t>{-1}}) {
      for (std::int64_t keepdims : {0, 1}) {
        Attrs a = kind(k);
        if (!axes.empty()) a.set("axes", axes);
        a.set("keepdims", keepdims);
        Tensor x = random(Shape{2, 3, 4}, seed++, std::string(k) == "prod" ? 0.5f : -1.0f, 1.0f);
        if (std::string(k) == "min" || std::string(k) == "max") {  // distinct values 0.05 apart: no step changes an extreme
          for (std::int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = -1.0f + 0.05f * static_cast<float>((i * 7) % x.numel());
        }
        Case c{"reduce", a, {x}};
        c.output_is_loss = axes.empty() && keepdims == 0;  // a scalar: the loss itself
        check(c);
      }
    }
  }
}

TEST(MathGradientCheck, ProdGradientAtZeros) {
  // One zero in a group: its gradient is the product of the others; the others get 0.
  Tensor x = random(Shape{2, 3}, 300, 0.5f, 1.5f);
  x.data<float>()[1] = 0.0f;
  Case c{"reduce", kind("prod"), {x}};
  c.attrs.set("axes", std::vector<std::int64_t>{1});
  check(c);
}

TEST(MathGradientCheck, WhereCumulativeBroadcastTo) {
  Tensor cond = random(Shape{3, 1}, 400);
  for (std::int64_t i = 0; i < cond.numel(); ++i) cond.data<float>()[i] = i % 2 ? 1.0f : 0.0f;
  Case w{"where", {}, {cond, random(Shape{4}, 401), random(Shape{3, 4}, 402)}};
  w.constants = {0};
  check(w);
  for (const char* k : {"cumsum", "cumprod"}) {
    for (std::int64_t axis : {0, 1, -1}) {
      for (std::int64_t reverse : {0, 1}) {
        check({"cumulative", Attrs{{"kind", std::string(k)}, {"axis", axis}, {"reverse", reverse}}, {random(Shape{3, 4, 2}, 410, 0.5f, 1.5f)}});
      }
    }
  }
  check({"broadcast_to", Attrs{{"shape", std::vector<std::int64_t>{2, 3, 4}}}, {random(Shape{3, 1}, 420)}});
  check({"broadcast_to", Attrs{{"shape", std::vector<std::int64_t>{2, 3}}}, {random(Shape{}, 421)}});
}

TEST(MathGradientCheck, AtBfloat16AndFloat16) {
  for (const auto& [dtype, tol] : {std::pair{DType::bf16, 3e-2f}, std::pair{DType::f16, 4e-3f}}) {
    check_low_precision({"unary", kind("exp"), {random(Shape{3, 7}, 1)}}, dtype, tol);
    check_low_precision({"unary", kind("sin"), {random(Shape{3, 7}, 2)}}, dtype, tol);
    check_low_precision({"binary", kind("multiply"), {random(Shape{3, 1, 4}, 3), random(Shape{4}, 4)}}, dtype, tol);
    check_low_precision({"binary", kind("divide"), {random(Shape{2, 3}, 5), random(Shape{3}, 6, 0.5f, 1.5f)}}, dtype, tol);
    check_low_precision({"reduce", Attrs{{"kind", std::string("logsumexp")}, {"axes", std::vector<std::int64_t>{1}}},
                         {random(Shape{3, 5}, 7)}},
                        dtype, tol);
    Case sum{"reduce", kind("sum"), {random(Shape{3, 5}, 8)}};
    sum.output_is_loss = true;  // every axis: a scalar
    check_low_precision(sum, dtype, tol);
  }
}

}  // namespace
}  // namespace nnfit
