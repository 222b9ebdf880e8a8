// cuda-host cases of the tensor-algebra family (math_kernels.h): every op and every kind
// at float32, bfloat16 and float16 against its reference kernel, on broadcasting shapes
// (missing axes, size-1 axes, scalars, a shape past one block), inputs in each kind's
// domain, ties (min, maximum/minimum, argmax) and zeros (prod's gradient).
#include <array>
#include <cmath>
#include <limits>

#include "backend/common/math_fns.h"
#include "cuda_host/cuda_host_harness.h"

namespace nnfit::testing {
namespace {

KernelDesc desc(const std::string& op, Attrs attrs, std::vector<Shape> ins, std::vector<Shape> outs) {
  return f32_desc(op, std::move(attrs), std::move(ins), std::move(outs));
}

Attrs kind(const std::string& k) { return Attrs{{"kind", k}}; }

const char* const kUnaryKinds[] = {"negative", "abs",    "sign",   "square", "sqrt",    "rsqrt",   "reciprocal", "exp",
                                   "expm1",    "log",    "log1p",  "log2",   "log10",   "sin",     "cos",        "tan",
                                   "arcsin",   "arccos", "arctan", "sinh",   "cosh",    "arcsinh", "arccosh",    "arctanh",
                                   "erf", "erfc",      "floor",  "ceil",   "round",  "logical_not", "trunc", "isnan", "isinf", "isfinite",
                                   "stop_gradient"};
const char* const kBinaryKinds[] = {"add",     "subtract",  "multiply", "divide",     "power",   "maximum",       "minimum",
                                    "floor_divide", "mod",  "arctan2",  "equal",      "not_equal", "less",        "less_equal",
                                    "greater", "greater_equal", "logical_and", "logical_or", "logical_xor"};

// Inputs inside the kind's domain, away from its poles.
Tensor unary_input(const std::string& k, const Shape& s, std::uint64_t seed) {
  if (k == "sqrt" || k == "rsqrt" || k == "log" || k == "log2" || k == "log10" || k == "reciprocal") return random_tensor(s, seed, 0.2f, 3.0f);
  if (k == "arcsin" || k == "arccos" || k == "arctanh") return random_tensor(s, seed, -0.9f, 0.9f);
  if (k == "arccosh") return random_tensor(s, seed, 1.1f, 3.0f);
  if (k == "log1p") return random_tensor(s, seed, -0.8f, 2.0f);
  if (k == "tan") return random_tensor(s, seed, -1.2f, 1.2f);
  Tensor x = random_tensor(s, seed, -3.0f, 3.0f);
  if (k == "round" || k == "sign" || k == "logical_not" || k == "floor" || k == "trunc") {  // halves (ties to even) and zeros
    for (std::int64_t i = 0; i < s.numel(); i += 4) x.data<float>()[i] = static_cast<float>(i % 9) * 0.5f - 2.0f;
  }
  if (k == "isnan" || k == "isinf" || k == "isfinite") {  // NaN, ±inf among finite values
    const float special[] = {std::nanf(""), INFINITY, -INFINITY};
    for (std::int64_t i = 0; i < s.numel(); i += 5) x.data<float>()[i] = special[(i / 5) % 3];
  }
  return x;
}

void check_unary(bool grad) {
  const Shape s{3, 517};
  std::uint64_t seed = grad ? 300 : 200;
  for (const char* k : kUnaryKinds) {
    const Tensor x = unary_input(k, s, seed++), dy = random_tensor(s, seed++);
    for (DType dt : float_dtypes()) {
      if (grad) expect_cuda_host_matches_reference(desc("unary_grad", kind(k), {s, s}, {s}), {x, dy}, dt, 1e-6f, 1e-6f);
      else expect_cuda_host_matches_reference(desc("unary", kind(k), {s}, {s}), {x}, dt, 0.0f, 0.0f);
    }
  }
}

// Pairs that broadcast: missing axes, size-1 axes both sides, a scalar, equal shapes.
const std::vector<std::pair<Shape, Shape>> kPairs = {
    {Shape{3, 1, 5}, Shape{4, 5}}, {Shape{7}, Shape{2, 3, 7}}, {Shape{1}, Shape{37, 129}}, {Shape{2, 1, 4, 1}, Shape{3, 1, 5}},
    {Shape{}, Shape{5, 3}},        {Shape{300, 7}, Shape{300, 7}}};

std::pair<Tensor, Tensor> binary_inputs(const std::string& k, const Shape& sa, const Shape& sb, std::uint64_t seed) {
  Tensor a = random_tensor(sa, seed, -2.0f, 2.0f), b = random_tensor(sb, seed + 1, -2.0f, 2.0f);
  if (k == "power") a = random_tensor(sa, seed, 0.2f, 2.0f);
  if (k == "divide" || k == "floor_divide" || k == "mod" || k == "arctan2") {
    for (std::int64_t i = 0; i < b.numel(); ++i) {
      float& v = b.data<float>()[i];
      v = v < 0.0f ? v - 0.3f : v + 0.3f;
    }
  }
  // Ties and zeros where both have elements: equal, maximum's tie rule, the logical ops.
  for (std::int64_t i = 0; k != "power" && i < std::min(a.numel(), b.numel()); i += 3) a.data<float>()[i] = b.data<float>()[i];
  for (std::int64_t i = 1; i < b.numel(); i += 5) b.data<float>()[i] = 0.0f;
  if (k == "divide" || k == "floor_divide" || k == "mod" || k == "arctan2") {
    for (std::int64_t i = 1; i < b.numel(); i += 5) b.data<float>()[i] = 1.5f;
  }
  return {a, b};
}

void check_binary(bool grad) {
  std::uint64_t seed = grad ? 500 : 400;
  for (const char* k : kBinaryKinds) {
    if (grad && binary_is_constant(binary_kind(k))) continue;  // no gradient op is built for them
    for (const auto& [sa, sb] : kPairs) {
      const Shape y = *broadcast_shape(sa, sb);
      auto [a, b] = binary_inputs(k, sa, sb, seed);
      seed += 2;
      for (DType dt : float_dtypes()) {
        if (!grad) {
          expect_cuda_host_matches_reference(desc("binary", kind(k), {sa, sb}, {y}), {a, b}, dt, 0.0f, 0.0f);
        } else {
          const Tensor dy = random_tensor(y, seed++);
          expect_cuda_host_matches_reference(desc("binary_grad", kind(k), {sa, sb, y}, {sa, sb}), {a, b, dy}, dt, 1e-4f, 1e-4f);
        }
      }
    }
  }
}

struct ReduceCase {
  Shape x;
  std::vector<std::int64_t> axes;
  bool keepdims;
};

const std::vector<ReduceCase> kReduceCases = {
    {Shape{4, 5, 6}, {}, false},      {Shape{4, 5, 6}, {0}, false}, {Shape{4, 5, 6}, {1}, true}, {Shape{4, 5, 6}, {-1}, false},
    {Shape{4, 5, 6}, {0, 2}, true},  {Shape{3, 300}, {0}, false}, {Shape{3, 300}, {1}, false}, {Shape{7}, {0}, true}};

Attrs reduce_attrs(const std::string& k, const ReduceCase& c) {
  Attrs a = kind(k);
  if (!c.axes.empty()) a.set("axes", c.axes);
  a.set("keepdims", std::int64_t{c.keepdims});
  return a;
}

Tensor reduce_input(const std::string& k, const Shape& s, std::uint64_t seed) {
  Tensor x = random_tensor(s, seed, k == "prod" ? 0.6f : -2.0f, k == "prod" ? 1.4f : 2.0f);
  if (k == "min" || k == "max") {  // quarters: ties
    for (std::int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = std::round(x.data<float>()[i] * 2.0f) / 4.0f;
  }
  if (k == "prod" && x.numel() > 40) {  // one zero in some groups, two in others
    for (std::int64_t i : {std::int64_t{0}, std::int64_t{3}, std::int64_t{9}, std::int64_t{31}}) x.data<float>()[i] = 0.0f;
  }
  return x;
}

void check_reduce(bool grad) {
  std::uint64_t seed = grad ? 700 : 600;
  for (const char* k : {"sum", "min", "prod", "logsumexp", "max", "mean"}) {
    for (const ReduceCase& c : kReduceCases) {
      const Shape y = reduced_shape(c.x, reduce_axes(c.x, c.axes, "test"), c.keepdims);
      const Tensor x = reduce_input(k, c.x, seed++);
      const Attrs a = reduce_attrs(k, c);
      for (DType dt : float_dtypes()) {
        if (!grad) {
          expect_cuda_host_matches_reference(desc("reduce", a, {c.x}, {y}), {x}, dt, 1e-4f, 1e-4f);
          continue;
        }
        // y from the reference on the inputs as the dtype rounds them, so min's ties hold.
        const Tensor yv = run_reference(desc("reduce", a, {c.x}, {y}), {to_f32(to_dtype(x, dt))});
        const Tensor dy = random_tensor(y, seed++);
        expect_cuda_host_matches_reference(desc("reduce_grad", a, {c.x, y, y}, {c.x}), {x, yv, dy}, dt, 1e-5f, 1e-4f);
      }
    }
  }
}

const std::vector<std::array<Shape, 3>> kWhereShapes = {
    {Shape{4, 1}, Shape{3}, Shape{4, 3}}, {Shape{2, 3, 5}, Shape{1, 5}, Shape{}}, {Shape{300}, Shape{300}, Shape{1}}};

Tensor condition(const Shape& s, std::uint64_t seed) {
  Tensor c = random_tensor(s, seed);
  for (std::int64_t i = 0; i < c.numel(); ++i) c.data<float>()[i] = c.data<float>()[i] > 0.0f ? (i % 2 ? 1.0f : -0.5f) : 0.0f;
  return c;
}

}  // namespace

std::vector<OpCase> math_cases() {
  return {
      {"unary", [] { check_unary(false); }},
      {"unary_grad", [] { check_unary(true); }},
      {"binary", [] { check_binary(false); }},
      {"binary_grad", [] { check_binary(true); }},
      {"reduce", [] { check_reduce(false); }},
      {"reduce_grad", [] { check_reduce(true); }},
      {"where",
       [] {
         std::uint64_t seed = 800;
         for (const auto& s : kWhereShapes) {
           const Shape y = *broadcast_shape(*broadcast_shape(s[0], s[1]), s[2]);
           const Tensor c = condition(s[0], seed++), a = random_tensor(s[1], seed++), b = random_tensor(s[2], seed++);
           for (DType dt : float_dtypes()) expect_cuda_host_matches_reference(desc("where", {}, {s[0], s[1], s[2]}, {y}), {c, a, b}, dt, 0.0f, 0.0f);
         }
       }},
      {"where_grad",
       [] {
         std::uint64_t seed = 900;
         for (const auto& s : kWhereShapes) {
           const Shape y = *broadcast_shape(*broadcast_shape(s[0], s[1]), s[2]);
           const Tensor c = condition(s[0], seed++), dy = random_tensor(y, seed++);
           const Attrs a{{"a_shape", s[1].dims()}, {"b_shape", s[2].dims()}};
           for (DType dt : float_dtypes()) {
             expect_cuda_host_matches_reference(desc("where_grad", a, {s[0], y}, {s[1], s[2]}), {c, dy}, dt, 1e-5f, 1e-5f);
           }
         }
       }},
      {"arg_reduce",
       [] {
         std::uint64_t seed = 1000;
         for (const auto& [shape, axis] : std::vector<std::pair<Shape, std::int64_t>>{{Shape{4, 5, 6}, 1}, {Shape{4, 5, 6}, -1}, {Shape{300, 3}, 0}, {Shape{9}, 0}}) {
           Tensor x = random_tensor(shape, seed++);
           for (std::int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = std::round(x.data<float>()[i] * 3.0f);  // ties
           for (const char* k : {"argmax", "argmin"}) {
             for (std::int64_t keep : {0, 1}) {
               Attrs a = kind(k);
               a.set("axis", axis);
               a.set("keepdims", keep);
               const Shape y = reduced_shape(shape, {checked_axis(shape, axis, "test")}, keep != 0);
               const KernelDesc d{"arg_reduce", a, {f32(shape)}, {{y, DType::i32}}, "test/arg_reduce"};
               for (DType dt : float_dtypes()) expect_cuda_host_matches_reference(d, {x}, dt);
             }
           }
         }
       }},
      {"argsort",
       [] {
         std::uint64_t seed = 1050;
         for (const auto& [shape, axis] : std::vector<std::pair<Shape, std::int64_t>>{{Shape{4, 5, 6}, 1}, {Shape{4, 5, 6}, -1}, {Shape{300, 3}, 0}, {Shape{9}, 0}}) {
           Tensor x = random_tensor(shape, seed++);
           for (std::int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = std::round(x.data<float>()[i] * 3.0f);  // ties
           x.data<float>()[3] = std::numeric_limits<float>::quiet_NaN();
           for (std::int64_t descending : {0, 1}) {
             const Attrs a{{"axis", axis}, {"descending", descending}};
             const KernelDesc d{"argsort", a, {f32(shape)}, {{shape, DType::i32}}, "test/argsort"};
             for (DType dt : float_dtypes()) expect_cuda_host_matches_reference(d, {x}, dt);
           }
         }
       }},
      {"cumulative",
       [] {
         std::uint64_t seed = 1100;
         for (const char* k : {"cumsum", "cumprod"}) {
           for (std::int64_t axis : {0, 1, -1}) {
             for (std::int64_t reverse : {0, 1}) {
               const Shape s{6, 7, 300};
               const Tensor x = random_tensor(s, seed++, 0.7f, 1.3f);
               const Attrs a{{"kind", std::string(k)}, {"axis", axis}, {"reverse", reverse}};
               for (DType dt : float_dtypes()) expect_cuda_host_matches_reference(desc("cumulative", a, {s}, {s}), {x}, dt, 1e-5f, 1e-4f);
             }
           }
         }
       }},
      {"cumulative_grad",
       [] {
         std::uint64_t seed = 1200;
         for (const char* k : {"cumsum", "cumprod"}) {
           for (std::int64_t axis : {0, 2}) {
             for (std::int64_t reverse : {0, 1}) {
               const Shape s{6, 7, 31};
               const Tensor x = random_tensor(s, seed++, 0.7f, 1.3f), y = random_tensor(s, seed++, 0.5f, 1.5f), dy = random_tensor(s, seed++);
               const Attrs a{{"kind", std::string(k)}, {"axis", axis}, {"reverse", reverse}};
               for (DType dt : float_dtypes()) {
                 expect_cuda_host_matches_reference(desc("cumulative_grad", a, {s, s, s}, {s}), {x, y, dy}, dt, 1e-5f, 1e-4f);
               }
             }
           }
         }
       }},
      {"nan_to_num",
       [] {
         const Shape s{3, 517};
         const Tensor x = unary_input("isnan", s, 1400);  // NaN, ±inf among finite values
         for (DType dt : float_dtypes()) {
           expect_cuda_host_matches_reference(desc("nan_to_num", {{"nan", 1.5}, {"posinf", 9.0}, {"neginf", -9.0}}, {s}, {s}), {x}, dt,
                                              0.0f, 0.0f);
           // nan's default (0); replacements exact in bfloat16 and float16.
           expect_cuda_host_matches_reference(desc("nan_to_num", {{"posinf", 32768.0}, {"neginf", -1024.0}}, {s}, {s}), {x}, dt, 0.0f,
                                              0.0f);
         }
       }},
      {"broadcast_to",
       [] {
         std::uint64_t seed = 1300;
         for (const auto& [from, to] : std::vector<std::pair<Shape, Shape>>{
                  {Shape{3, 1}, Shape{2, 3, 5}}, {Shape{}, Shape{4, 4}}, {Shape{7}, Shape{300, 7}}, {Shape{2, 3}, Shape{2, 3}}}) {
           const Tensor x = random_tensor(from, seed++);
           for (DType dt : float_dtypes()) {
             expect_cuda_host_matches_reference(desc("broadcast_to", {{"shape", to.dims()}}, {from}, {to}), {x}, dt, 0.0f, 0.0f);
           }
         }
       }},
  };
}

}  // namespace nnfit::testing
