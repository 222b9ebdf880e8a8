// The OpenMP kernels of the element-wise tensor-algebra ops (omp_math.cpp) against ref:<op>
// bit for bit (the same element function in a parallel loop), every kind, on broadcasting
// shapes large enough to take the parallel path and small ones that do not.
#include <gtest/gtest.h>

#include "backend/common/math_fns.h"
#include "conformance/harness.h"

namespace nnfit::testing {
namespace {

const char* const kUnaryKinds[] = {"negative", "abs",    "sign",   "square", "sqrt",    "rsqrt",   "reciprocal", "exp",
                                   "expm1",    "log",    "log1p",  "log2",   "log10",   "sin",     "cos",        "tan",
                                   "arcsin",   "arccos", "arctan", "sinh",   "cosh",    "arcsinh", "arccosh",    "arctanh",
                                   "erf",      "floor",  "ceil",   "round",  "logical_not", "trunc", "isnan", "isinf", "isfinite"};

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
  const std::vector<std::pair<Shape, Shape>> pairs = {{Shape{3, 1, 5}, Shape{4, 5}}, {Shape{1}, Shape{150, 129}}, {Shape{200, 1}, Shape{1, 100}}};
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

}  // namespace
}  // namespace nnfit::testing
