// The OpenMP kernels of the element-wise tensor-algebra ops (omp_math.cpp) against ref:<op>
// bit for bit (the same element function in a parallel loop), every kind, on broadcasting
// shapes large enough to take the parallel path and small ones that do not.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstring>

#include "backend/common/math_fns.h"
#include "conformance/harness.h"

namespace nnfit::testing {
namespace {

const char* const kUnaryKinds[] = {"negative", "abs",    "sign",   "square", "sqrt",    "rsqrt",   "reciprocal", "exp",
                                   "expm1",    "log",    "log1p",  "log2",   "log10",   "sin",     "cos",        "tan",
                                   "arcsin",   "arccos", "arctan", "sinh",   "cosh",    "arcsinh", "arccosh",    "arctanh",
                                   "erf", "erfc",      "floor",  "ceil",   "round",  "logical_not", "trunc", "isnan", "isinf", "isfinite",
                                   "stop_gradient"};

TEST(OmpMath, UnaryMatchesReferenceBitForBit) {
  std::uint64_t seed = 1;
  for (const Shape& s : {Shape{7}, Shape{130, 257}}) {
    for (const char* k : kUnaryKinds) {
      const std::string kind = k;
      float lo = -3.0f, hi = 3.0f;  // inside the kind's domain: NaN never compares equal
      if (kind == "sqrt" || kind == "rsqrt" || kind == "log" || kind == "log2" || kind == "log10" || kind == "reciprocal") lo = 0.1f;
      if (kind == "arcsin" || kind == "arccos" || kind == "arctanh") lo = -0.9f, hi = 0.9f;
      if (kind == "arccosh") lo = 1.1f;
      if (kind == "log1p") lo = -0.8f;
      const Tensor x = random_tensor(s, seed++, lo, hi), dy = random_tensor(s, seed++);
      expect_matches_reference(f32_desc("unary", {{"kind", kind}}, {s}, {s}), {x}, 0.0f, 0.0f);
      expect_matches_reference(f32_desc("unary_grad", {{"kind", kind}}, {s, s}, {s}), {x, dy}, 0.0f, 0.0f);
    }
  }
}

TEST(OmpMath, BroadcastingOpsMatchReferenceBitForBit) {
  std::uint64_t seed = 100;
  const std::vector<std::pair<Shape, Shape>> pairs = {{Shape{3, 1, 5}, Shape{4, 5}}, {Shape{1}, Shape{150, 129}}, {Shape{200, 1}, Shape{1, 100}},
                                                    {Shape{130, 257}, Shape{130, 257}}, {Shape{64, 33}, Shape{1}}};
  for (const char* k : {"add", "subtract", "multiply", "divide", "power", "maximum", "minimum", "floor_divide", "mod", "arctan2",
                        "equal", "not_equal", "less", "less_equal", "greater", "greater_equal", "logical_and", "logical_or",
                        "logical_xor"}) {
    for (const auto& [sa, sb] : pairs) {
      const Shape y = *broadcast_shape(sa, sb);
      const Tensor a = random_tensor(sa, seed++, 0.1f, 2.0f), b = random_tensor(sb, seed++, -2.0f, 2.0f);
      expect_matches_reference(f32_desc("binary", {{"kind", std::string(k)}}, {sa, sb}, {y}), {a, b}, 0.0f, 0.0f);
    }
  }
  for (const auto& [sa, sb] : pairs) {
    const Shape y = *broadcast_shape(sa, sb);
    Tensor c = random_tensor(sa, seed++);
    for (std::int64_t i = 0; i < c.numel(); i += 2) c.data<float>()[i] = 0.0f;
    expect_matches_reference(f32_desc("where", {}, {sa, sb, Shape{}}, {y}), {c, random_tensor(sb, seed++), random_tensor(Shape{}, seed++)},
                             0.0f, 0.0f);
    expect_matches_reference(f32_desc("broadcast_to", {{"shape", y.dims()}}, {sb}, {y}), {random_tensor(sb, seed++)}, 0.0f, 0.0f);
  }
}

// binary_grad and where_grad with operands of dy's shape run in parallel and equal the
// reference byte for byte (-0 terms included: both give +0); a broadcast operand's
// gradient sums, and the OpenMP kernel declines it naming why.
TEST(OmpMath, SameShapeGradientsMatchReferenceByteForByte) {
  std::uint64_t seed = 300;
  const auto same_bytes = [](const KernelDesc& d, const std::vector<Tensor>& in) {
    std::string why;
    const auto omp = kernel_registry().create("omp:" + d.op, d, DeviceType::cpu, &why);
    ASSERT_NE(omp, nullptr) << d.op << ": " << why;
    const std::vector<Tensor> want = run_kernel(*kernel_registry().create("ref:" + d.op, d, DeviceType::cpu, &why), d, in, StepContext{});
    const std::vector<Tensor> got = run_kernel(*omp, d, in, StepContext{});
    ASSERT_EQ(want.size(), got.size());
    for (std::size_t i = 0; i < want.size(); ++i) {
      EXPECT_EQ(0, std::memcmp(want[i].raw(), got[i].raw(), want[i].nbytes())) << d.op << " " << d.attrs.to_string() << " output " << i;
    }
  };
  for (const Shape& s : {Shape{7}, Shape{130, 257}}) {
    Tensor dy = random_tensor(s, seed++);
    for (std::int64_t i = 0; i < dy.numel(); i += 5) dy.data<float>()[i] = -0.0f;
    for (const char* k : {"add", "subtract", "multiply", "divide", "power", "maximum", "minimum", "arctan2", "mod", "floor_divide",
                          "less", "equal"}) {
      const Tensor a = random_tensor(s, seed++, 0.1f, 2.0f), b = random_tensor(s, seed++, 0.5f, 2.0f);
      same_bytes(f32_desc("binary_grad", {{"kind", std::string(k)}}, {s, s, s}, {s, s}), {a, b, dy});
    }
    Tensor c = random_tensor(s, seed++);
    for (std::int64_t i = 0; i < c.numel(); i += 3) c.data<float>()[i] = 0.0f;
    same_bytes(f32_desc("where_grad", {{"a_shape", s.dims()}, {"b_shape", s.dims()}}, {s, s}, {s, s}), {c, dy});
  }
  std::string why;
  const Shape y{4, 5}, one{1};
  EXPECT_EQ(kernel_registry().create("omp:binary_grad", f32_desc("binary_grad", {{"kind", std::string("add")}}, {y, one, y}, {y, one}),
                                     DeviceType::cpu, &why),
            nullptr);
  EXPECT_NE(why.find("broadcast"), std::string::npos) << why;
  expect_matches_reference(f32_desc("binary_grad", {{"kind", std::string("multiply")}}, {y, one, y}, {y, one}),
                           {random_tensor(y, 1), random_tensor(one, 2), random_tensor(y, 3)}, 0.0f, 0.0f, /*expect_fast=*/false);
}

// nan_to_num: NaN, +inf and -inf among finite values, large and small; the reference's
// values are NumPy's, with every replacement given and with nan's default (0). The OpenMP
// kernel equals the reference byte for byte.
TEST(OmpMath, NanToNumMatchesReferenceAndNumPy) {
  const Attrs given{{"nan", 1.5}, {"posinf", 9.0}, {"neginf", -9.0}}, nan_default{{"posinf", FLT_MAX}, {"neginf", -FLT_MAX}};
  for (const Shape& s : {Shape{7}, Shape{130, 257}}) {
    Tensor x = random_tensor(s, 41);
    float* p = x.data<float>();
    for (std::int64_t i = 0; i < x.numel(); i += 3) p[i] = i % 9 == 0 ? NAN : i % 9 == 3 ? INFINITY : -INFINITY;
    for (const Attrs& a : {given, nan_default}) {  // the harness's input check cannot take NaN: bytes compared here
      const KernelDesc d = f32_desc("nan_to_num", a, {s}, {s});
      std::string why;
      const auto omp = kernel_registry().create("omp:nan_to_num", d, DeviceType::cpu, &why);
      ASSERT_NE(omp, nullptr) << why;
      const Tensor want = run_reference(d, {x}), got = run_kernel(*omp, d, {x}, StepContext{})[0];
      EXPECT_EQ(0, std::memcmp(want.raw(), got.raw(), want.nbytes())) << s.to_string() << " " << a.to_string();
    }
  }
  const Tensor x = tensor_of(Shape{4}, {NAN, INFINITY, -INFINITY, 0.25f});
  const Tensor y = run_reference(f32_desc("nan_to_num", given, {Shape{4}}, {Shape{4}}), {x});
  EXPECT_EQ(std::vector<float>(y.data<float>(), y.data<float>() + 4), (std::vector<float>{1.5f, 9.0f, -9.0f, 0.25f}));
  const Tensor d = run_reference(f32_desc("nan_to_num", nan_default, {Shape{4}}, {Shape{4}}), {x});
  EXPECT_EQ(std::vector<float>(d.data<float>(), d.data<float>() + 4), (std::vector<float>{0.0f, FLT_MAX, -FLT_MAX, 0.25f}));
}

}  // namespace
}  // namespace nnfit::testing
