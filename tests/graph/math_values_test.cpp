// Hand-computed values for the reference kernels of the tensor-algebra ops (ref_math.cpp),
// which the CUDA kernels are held to, and their shape inference: NumPy's broadcasting,
// rounding half to even, Python's sign rule for mod, first index on ties, the zero cases
// of prod's gradient, logsumexp at -inf, and clear errors naming the shapes.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "conformance/harness.h"
#include "nnfit/core/error.h"
#include "nnfit/graph/op_def.h"
#include "nnfit/graph/program.h"
#include "nnfit/memory/host_allocator.h"

namespace nnfit {
namespace {

Tensor make(const Shape& shape, std::vector<float> values) {
  Tensor t = Tensor::zeros(shape, DType::f32);
  EXPECT_EQ(static_cast<std::int64_t>(values.size()), t.numel());
  for (std::size_t i = 0; i < values.size(); ++i) t.data<float>()[i] = values[i];
  return t;
}

// ref:<op> with the outputs shape inference gives; returns the outputs.
std::vector<Tensor> run_ref(const std::string& op, Attrs attrs, const std::vector<Tensor>& inputs) {
  std::vector<TensorDesc> in;
  for (const Tensor& t : inputs) in.push_back(t.desc());
  KernelDesc desc{op, attrs, in, op_def(op).infer(in, attrs), "values/" + op};
  if (op == "arg_reduce" || op == "argsort") desc.outputs[0].dtype = DType::i32;
  std::string why;
  auto k = kernel_registry().create("ref:" + op, desc, DeviceType::cpu, &why);
  EXPECT_NE(k, nullptr) << why;
  if (!k) return {};
  std::vector<Tensor> out = testing::run_kernel(*k, desc, inputs, {});
  out.resize(desc.outputs.size());
  return out;
}

void expect_values(const Tensor& t, const Shape& shape, std::vector<float> want, const std::string& what) {
  ASSERT_EQ(t.shape(), shape) << what;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const float got = t.data<float>()[i];
    if (std::isnan(want[i])) EXPECT_TRUE(std::isnan(got)) << what << " [" << i << "]";
    else if (std::isinf(want[i])) EXPECT_EQ(got, want[i]) << what << " [" << i << "]";
    else EXPECT_NEAR(got, want[i], 1e-6f * (1.0f + std::fabs(want[i]))) << what << " [" << i << "]";
  }
}

Attrs kind(const std::string& k) { return Attrs{{"kind", k}}; }
const float kNaN = std::numeric_limits<float>::quiet_NaN();
const float kInf = std::numeric_limits<float>::infinity();

TEST(RefMathValues, Unary) {
  const Tensor x = make(Shape{6}, {0.5f, 1.5f, 2.5f, -0.5f, -2.5f, 0.0f});
  expect_values(run_ref("unary", kind("round"), {x})[0], Shape{6}, {0, 2, 2, -0.0f, -2, 0}, "round half to even");
  expect_values(run_ref("unary", kind("floor"), {x})[0], Shape{6}, {0, 1, 2, -1, -3, 0}, "floor");
  expect_values(run_ref("unary", kind("sign"), {x})[0], Shape{6}, {1, 1, 1, -1, -1, 0}, "sign");
  expect_values(run_ref("unary", kind("logical_not"), {x})[0], Shape{6}, {0, 0, 0, 0, 0, 1}, "logical_not");
  expect_values(run_ref("unary", kind("trunc"), {x})[0], Shape{6}, {0, 1, 2, -0.0f, -2, 0}, "trunc");
  const Tensor special = make(Shape{4}, {kNaN, kInf, -kInf, -3});
  expect_values(run_ref("unary", kind("isnan"), {special})[0], Shape{4}, {1, 0, 0, 0}, "isnan");
  expect_values(run_ref("unary", kind("isinf"), {special})[0], Shape{4}, {0, 1, 1, 0}, "isinf");
  expect_values(run_ref("unary", kind("isfinite"), {special})[0], Shape{4}, {0, 0, 0, 1}, "isfinite");
  expect_values(run_ref("unary", kind("stop_gradient"), {special})[0], Shape{4}, {kNaN, kInf, -kInf, -3}, "stop_gradient");
  // erfc far in the tail, where 1 - erf(x) in float32 is 0 (C's erfc, as TensorFlow's).
  const Tensor tail = make(Shape{3}, {0.0f, 4.0f, -1.0f});
  expect_values(run_ref("unary", kind("erfc"), {tail})[0], Shape{3}, {1.0f, 1.541725790e-08f, 1.842700793f}, "erfc");
  const Tensor p = make(Shape{3}, {4.0f, 1.0f, 0.25f});
  expect_values(run_ref("unary", kind("sqrt"), {p})[0], Shape{3}, {2, 1, 0.5f}, "sqrt");
  expect_values(run_ref("unary", kind("rsqrt"), {p})[0], Shape{3}, {0.5f, 1, 2}, "rsqrt");
  expect_values(run_ref("unary", kind("log2"), {p})[0], Shape{3}, {2, 0, -2}, "log2");
  expect_values(run_ref("unary_grad", kind("sqrt"), {p, make(Shape{3}, {1, 1, 1})})[0], Shape{3}, {0.25f, 0.5f, 1.0f}, "sqrt'");
  expect_values(run_ref("unary_grad", kind("abs"), {x, make(Shape{6}, {1, 1, 1, 1, 1, 1})})[0], Shape{6}, {1, 1, 1, -1, -1, 0},
                "abs' (0 at 0)");
}

TEST(RefMathValues, BinaryBroadcastsAsNumPy) {
  const Tensor a = make(Shape{2, 1}, {1, 2}), b = make(Shape{3}, {10, 20, 30});
  expect_values(run_ref("binary", kind("add"), {a, b})[0], Shape{2, 3}, {11, 21, 31, 12, 22, 32}, "add");
  expect_values(run_ref("binary", kind("less"), {make(Shape{}, {15}), b})[0], Shape{3}, {0, 1, 1}, "scalar less");
  // Python's sign rule: the remainder takes the divisor's sign; floor division rounds down.
  const Tensor n = make(Shape{4}, {-7, 7, 7.5f, -7}), d = make(Shape{4}, {3, -3, 2, -2});
  expect_values(run_ref("binary", kind("mod"), {n, d})[0], Shape{4}, {2, -2, 1.5f, -1}, "mod");
  expect_values(run_ref("binary", kind("floor_divide"), {n, d})[0], Shape{4}, {-3, -3, 3, 3}, "floor_divide");
  expect_values(run_ref("binary", kind("maximum"), {make(Shape{2}, {kNaN, 1}), make(Shape{2}, {0, kNaN})})[0], Shape{2},
                {kNaN, kNaN}, "maximum propagates NaN");
  expect_values(run_ref("binary", kind("logical_xor"), {make(Shape{3}, {0, 2, -1}), make(Shape{3}, {0, 0, 3})})[0], Shape{3},
                {0, 1, 0}, "logical_xor");
}

TEST(RefMathValues, BinaryGradSumsOverBroadcastAxes) {
  const Tensor a = make(Shape{2, 1}, {1, 2}), b = make(Shape{3}, {10, 20, 30}), dy = make(Shape{2, 3}, {1, 1, 1, 1, 1, 1});
  std::vector<Tensor> g = run_ref("binary_grad", kind("multiply"), {a, b, dy});
  expect_values(g[0], Shape{2, 1}, {60, 60}, "da = Σ b");
  expect_values(g[1], Shape{3}, {3, 3, 3}, "db = Σ a");
  g = run_ref("binary_grad", kind("maximum"), {make(Shape{3}, {1, 2, 3}), make(Shape{3}, {1, 1, 4}), make(Shape{3}, {1, 1, 1})});
  expect_values(g[0], Shape{3}, {1, 1, 0}, "maximum: to a on ties");
  expect_values(g[1], Shape{3}, {0, 0, 1}, "maximum: to b");
  g = run_ref("binary_grad", kind("power"), {make(Shape{2}, {-2, 2}), make(Shape{2}, {2, 3}), make(Shape{2}, {1, 1})});
  expect_values(g[0], Shape{2}, {-4, 12}, "power da = b·a^(b-1)");
  expect_values(g[1], Shape{2}, {0, 8 * std::log(2.0f)}, "power db = y·log a, 0 where a <= 0");
}

TEST(RefMathValues, Reductions) {
  const Tensor x = make(Shape{2, 3}, {1, 2, 3, 4, 5, 6});
  Attrs a = kind("sum");
  a.set("axes", std::vector<std::int64_t>{-1});
  expect_values(run_ref("reduce", a, {x})[0], Shape{2}, {6, 15}, "sum axis -1");
  a.set("keepdims", std::int64_t{1});
  expect_values(run_ref("reduce", a, {x})[0], Shape{2, 1}, {6, 15}, "keepdims");
  expect_values(run_ref("reduce", kind("prod"), {x})[0], Shape{}, {720}, "prod of all");
  Attrs mean = kind("mean");
  mean.set("axes", std::vector<std::int64_t>{0});
  expect_values(run_ref("reduce", mean, {x})[0], Shape{3}, {2.5f, 3.5f, 4.5f}, "mean over axis 0");
  expect_values(run_ref("reduce_grad", mean, {x, make(Shape{3}, {0, 0, 0}), make(Shape{3}, {2, 4, 6})})[0], Shape{2, 3},
                {1, 2, 3, 1, 2, 3}, "mean: dy / count");
  expect_values(run_ref("reduce", kind("max"), {make(Shape{3}, {2, 7, -1})})[0], Shape{}, {7}, "max");
  expect_values(run_ref("reduce_grad", kind("max"), {make(Shape{3}, {7, 7, 2}), make(Shape{}, {7}), make(Shape{}, {1})})[0],
                Shape{3}, {0.5f, 0.5f, 0}, "max: ties share dy");
  expect_values(run_ref("reduce", kind("min"), {make(Shape{3}, {2, kNaN, 1})})[0], Shape{}, {kNaN}, "min with NaN");
  expect_values(run_ref("reduce", kind("logsumexp"), {make(Shape{2}, {0, 0})})[0], Shape{}, {std::log(2.0f)}, "logsumexp");
  expect_values(run_ref("reduce", kind("logsumexp"), {make(Shape{2}, {-kInf, -kInf})})[0], Shape{}, {-kInf}, "logsumexp -inf");
  const Tensor one = make(Shape{}, {1});
  expect_values(run_ref("reduce_grad", kind("min"), {make(Shape{3}, {1, 1, 2}), make(Shape{}, {1}), one})[0], Shape{3},
                {0.5f, 0.5f, 0}, "min: ties share dy");
  expect_values(run_ref("reduce_grad", kind("prod"), {make(Shape{3}, {2, 0, 3}), make(Shape{}, {0}), one})[0], Shape{3},
                {0, 6, 0}, "prod: one zero");
  expect_values(run_ref("reduce_grad", kind("prod"), {make(Shape{3}, {0, 0, 3}), make(Shape{}, {0}), one})[0], Shape{3},
                {0, 0, 0}, "prod: two zeros");
}

TEST(RefMathValues, WhereArgReduceCumulativeBroadcastTo) {
  const Tensor cond = make(Shape{2, 1}, {1, 0}), a = make(Shape{3}, {1, 2, 3}), b = make(Shape{}, {-1});
  expect_values(run_ref("where", {}, {cond, a, b})[0], Shape{2, 3}, {1, 2, 3, -1, -1, -1}, "where");
  const Attrs wg{{"a_shape", std::vector<std::int64_t>{3}}, {"b_shape", std::vector<std::int64_t>{}}};
  const std::vector<Tensor> g = run_ref("where_grad", wg, {cond, make(Shape{2, 3}, {1, 2, 3, 4, 5, 6})});
  expect_values(g[0], Shape{3}, {1, 2, 3}, "where_grad da");
  expect_values(g[1], Shape{}, {15}, "where_grad db");

  Attrs am = kind("argmax");
  am.set("axis", std::int64_t{1});
  const Tensor am_out = run_ref("arg_reduce", am, {make(Shape{2, 4}, {1, 3, 3, 2, 1, kNaN, 5, kNaN})})[0];
  ASSERT_EQ(am_out.shape(), Shape{2});
  EXPECT_EQ(am_out.data<std::int32_t>()[0], 1) << "first index on ties";
  EXPECT_EQ(am_out.data<std::int32_t>()[1], 1) << "the first NaN";

  const Tensor c = make(Shape{3}, {1, 2, 3});
  expect_values(run_ref("cumulative", Attrs{{"kind", std::string("cumsum")}, {"axis", std::int64_t{0}}}, {c})[0], Shape{3},
                {1, 3, 6}, "cumsum");
  expect_values(run_ref("cumulative", Attrs{{"kind", std::string("cumsum")}, {"axis", std::int64_t{0}}, {"reverse", std::int64_t{1}}},
                        {c})[0],
                Shape{3}, {6, 5, 3}, "reverse cumsum");
  expect_values(run_ref("cumulative", Attrs{{"kind", std::string("cumprod")}, {"axis", std::int64_t{-1}}}, {c})[0], Shape{3},
                {1, 2, 6}, "cumprod");
  expect_values(run_ref("cumulative_grad", Attrs{{"kind", std::string("cumsum")}, {"axis", std::int64_t{0}}},
                        {c, c, make(Shape{3}, {1, 1, 1})})[0],
                Shape{3}, {3, 2, 1}, "cumsum grad");
  // y = [1, 2, 6]: dx_k = Σ_{j ≥ k} y_j / x_k = [9, 4, 2].
  expect_values(run_ref("cumulative_grad", Attrs{{"kind", std::string("cumprod")}, {"axis", std::int64_t{0}}},
                        {c, make(Shape{3}, {1, 2, 6}), make(Shape{3}, {1, 1, 1})})[0],
                Shape{3}, {9, 4, 2}, "cumprod grad");
  expect_values(run_ref("broadcast_to", Attrs{{"shape", std::vector<std::int64_t>{2, 2, 2}}}, {make(Shape{2, 1}, {7, 8})})[0],
                Shape{2, 2, 2}, {7, 7, 8, 8, 7, 7, 8, 8}, "broadcast_to");
}

// argsort: a stable order (ties keep their positions' order), NaNs last in both orders, any
// axis, and its shape inference (x's shape, int32).
TEST(RefMathValues, Argsort) {
  const Tensor x = make(Shape{2, 5}, {3, 1, kNaN, 1, -2, 0, 5, 5, -kInf, kNaN});
  const auto order = [](const Tensor& t) {
    std::vector<int> v;
    for (std::int64_t i = 0; i < t.numel(); ++i) v.push_back(t.data<std::int32_t>()[i]);
    return v;
  };
  Attrs up{{"axis", std::int64_t{1}}};
  EXPECT_EQ(order(run_ref("argsort", up, {x})[0]), (std::vector<int>{4, 1, 3, 0, 2, 3, 0, 1, 2, 4})) << "ascending";
  Attrs down{{"axis", std::int64_t{-1}}, {"descending", std::int64_t{1}}};
  EXPECT_EQ(order(run_ref("argsort", down, {x})[0]), (std::vector<int>{0, 1, 3, 4, 2, 1, 2, 0, 3, 4})) << "descending";
  const Tensor cols = make(Shape{3, 2}, {2, 0, 1, 0, 3, -1});
  EXPECT_EQ(order(run_ref("argsort", Attrs{{"axis", std::int64_t{0}}}, {cols})[0]), (std::vector<int>{1, 2, 0, 0, 2, 1}))
      << "axis 0, a tie in column 1";
  const auto inferred = op_def("argsort").infer({TensorDesc{Shape{4, 3}, DType::f32}}, Attrs{{"axis", std::int64_t{-1}}});
  EXPECT_EQ(inferred[0].shape, (Shape{4, 3}));
  EXPECT_EQ(inferred[0].dtype, DType::i32);
  EXPECT_THROW(op_def("argsort").infer({TensorDesc{Shape{4, 3}, DType::f32}}, Attrs{{"axis", std::int64_t{2}}}), InvalidArgument);
}

// Through the planner and executor at each float dtype: broadcasting, a reduction, and
// arg_reduce's int32 output beside low-precision values (small integers, exact in bf16).
TEST(RefMathValues, RunThroughThePlannerAtEachDtype) {
  for (DType dtype : {DType::f32, DType::bf16, DType::f16}) {
    SCOPED_TRACE(dtype_name(dtype));
    Graph g;
    int x = g.add_variable("x", make(Shape{2, 3}, {1, 5, 3, 4, -2, 4}));
    int b = g.add_variable("b", make(Shape{3}, {0, -4, 1}));
    if (dtype != DType::f32) {
      x = g.add("cast", {x}, {{"dtype", std::string(dtype_name(dtype))}}, "cast_x");
      b = g.add("cast", {b}, {{"dtype", std::string(dtype_name(dtype))}}, "cast_b");
    }
    const int s = g.add("binary", {x, b}, kind("add"), "s");  // [[1, 1, 4], [4, -6, 5]]
    EXPECT_EQ(g.desc(s).dtype, dtype);
    const int am = g.add("arg_reduce", {s}, {{"kind", std::string("argmax")}, {"axis", std::int64_t{1}}}, "am");
    const int an = g.add("arg_reduce", {s}, {{"kind", std::string("argmin")}, {"axis", std::int64_t{-1}}}, "an");
    EXPECT_EQ(g.desc(am).dtype, DType::i32);
    Attrs ra = kind("sum");
    ra.set("axes", std::vector<std::int64_t>{0});
    int r = g.add("reduce", {s}, ra, "r");  // [5, -5, 9]
    if (dtype != DType::f32) r = g.add("cast", {r}, {{"dtype", std::string("float32")}}, "back");
    PlanOptions po;
    po.keep = {am, an, r};
    Program p = plan(std::move(g), po);
    HostAllocator alloc;
    Tensor arena = allocate_tensor(alloc, Shape{static_cast<std::int64_t>(std::max<std::size_t>(p.arena_bytes(), 1))}, DType::u8);
    p.bind(arena.raw());
    p.run(StepContext{});
    const auto* ids = static_cast<const std::int32_t*>(p.data(am));
    const auto* mins = static_cast<const std::int32_t*>(p.data(an));
    EXPECT_EQ(ids[0], 2);
    EXPECT_EQ(ids[1], 2);
    EXPECT_EQ(mins[0], 0) << "the first on ties";
    EXPECT_EQ(mins[1], 1);
    const auto* sums = static_cast<const float*>(p.data(r));
    EXPECT_EQ(sums[0], 5.0f);
    EXPECT_EQ(sums[1], -5.0f);
    EXPECT_EQ(sums[2], 9.0f);
  }
}

TEST(RefMathValues, ShapeInferenceNamesTheShapes) {
  const TensorDesc x{Shape{2, 3}, DType::f32}, y{Shape{4}, DType::f32}, h{Shape{2, 3}, DType::f16};
  try {
    op_def("binary").infer({x, y}, kind("add"));
    FAIL() << "no error";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("(2, 3) and " + Shape{4}.to_string()), std::string::npos) << e.what();
  }
  EXPECT_THROW(op_def("binary").infer({x, h}, kind("add")), InvalidArgument);
  EXPECT_THROW(op_def("binary").infer({x, x}, kind("bogus")), InvalidArgument);
  EXPECT_THROW(op_def("unary").infer({x}, kind("tanh")), InvalidArgument);
  EXPECT_THROW(op_def("reduce").infer({x}, Attrs{{"kind", std::string("sum")}, {"axes", std::vector<std::int64_t>{2}}}),
               InvalidArgument);
  EXPECT_THROW(op_def("broadcast_to").infer({x}, Attrs{{"shape", std::vector<std::int64_t>{3, 3}}}), InvalidArgument);
  EXPECT_THROW(op_def("arg_reduce").infer({x}, Attrs{{"kind", std::string("argmax")}, {"axis", std::int64_t{-3}}}),
               InvalidArgument);
  EXPECT_EQ(op_def("binary").infer({x, TensorDesc{Shape{3}, DType::f32}}, kind("equal"))[0].shape, (Shape{2, 3}));
  EXPECT_EQ(op_def("arg_reduce").infer({x}, Attrs{{"kind", std::string("argmin")}, {"axis", std::int64_t{0}}})[0].dtype, DType::i32);
}

}  // namespace
}  // namespace nnfit
