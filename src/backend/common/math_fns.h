// The element functions of the tensor-algebra ops (graph/math_op_defs.cpp: unary, binary,
// reduce, where, arg_reduce, argsort, cumulative, broadcast_to and their gradients) and NumPy's
// broadcasting as index maps, shared by the reference kernels (ref_math.cpp) and the CUDA
// functors (cuda/kernels/math_kernels.h), so the host oracle and the device compute each
// element with the same float32 code (compiled NNFIT_HD). Reductions over broadcast axes
// (gradients, reduce) differ only in the order they add (the reference in double).
#pragma once
#include <math.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "backend/common/hd.h"
#include "nnfit/core/shape.h"

namespace nnfit {

class Attrs;

enum class UnaryKind {
  negative, abs, sign, square, sqrt, rsqrt, reciprocal, exp, expm1, log, log1p, log2, log10, sin, cos, tan,
  arcsin, arccos, arctan, sinh, cosh, arcsinh, arccosh, arctanh, erf, erfc, floor, ceil, round, logical_not,
  trunc, isnan, isinf, isfinite, stop_gradient
};

enum class BinaryKind {
  add, subtract, multiply, divide, power, maximum, minimum, floor_divide, mod, arctan2,
  equal, not_equal, less, less_equal, greater, greater_equal, logical_and, logical_or, logical_xor
};

enum class ReduceKind { sum, min, prod, logsumexp, max, mean };

// Parsers of the `kind` attribute; throw InvalidArgument naming the kinds there are.
UnaryKind unary_kind(const std::string& kind);
BinaryKind binary_kind(const std::string& kind);
ReduceKind reduce_kind(const std::string& kind);
// Whether the kind is piecewise constant (sign, floor, ceil, round, logical_not, trunc and
// the isnan/isinf/isfinite tests; floor_divide, the comparisons and the logical ops) or
// stop_gradient (the identity, keras.ops.stop_gradient): no gradient flows through it.
bool unary_is_constant(UnaryKind k);
bool binary_is_constant(BinaryKind k);

// nan_to_num's replacements (NumPy's): NaN by `nan` (attr, default 0), +inf by `posinf` and
// −inf by `neginf` (attrs, required: NumPy's default is the largest finite value of the
// dtype, which the front end knows and a float32 kernel widened for bfloat16 would not).
struct NanToNumValues {
  float nan = 0.0f, posinf = 0.0f, neginf = 0.0f;
};
NanToNumValues nan_to_num_values(const Attrs& attrs);

NNFIT_HD float nan_to_num_fn(float x, const NanToNumValues& v) {
  return x != x ? v.nan : x == INFINITY ? v.posinf : x == -INFINITY ? v.neginf : x;
}

inline constexpr float kLn2 = 0.69314718055994531f;
inline constexpr float kLn10 = 2.30258509299404568f;
inline constexpr float kTwoOverSqrtPi = 1.12837916709551257f;

NNFIT_HD float unary_fn(UnaryKind k, float x) {
  switch (k) {
    case UnaryKind::negative: return -x;
    case UnaryKind::abs: return fabsf(x);
    case UnaryKind::sign: return x > 0.0f ? 1.0f : x < 0.0f ? -1.0f : x;  // ±0 and NaN stay
    case UnaryKind::square: return x * x;
    case UnaryKind::sqrt: return sqrtf(x);
    case UnaryKind::rsqrt: return 1.0f / sqrtf(x);
    case UnaryKind::reciprocal: return 1.0f / x;
    case UnaryKind::exp: return expf(x);
    case UnaryKind::expm1: return expm1f(x);
    case UnaryKind::log: return logf(x);
    case UnaryKind::log1p: return log1pf(x);
    case UnaryKind::log2: return log2f(x);
    case UnaryKind::log10: return log10f(x);
    case UnaryKind::sin: return sinf(x);
    case UnaryKind::cos: return cosf(x);
    case UnaryKind::tan: return tanf(x);
    case UnaryKind::arcsin: return asinf(x);
    case UnaryKind::arccos: return acosf(x);
    case UnaryKind::arctan: return atanf(x);
    case UnaryKind::sinh: return sinhf(x);
    case UnaryKind::cosh: return coshf(x);
    case UnaryKind::arcsinh: return asinhf(x);
    case UnaryKind::arccosh: return acoshf(x);
    case UnaryKind::arctanh: return atanhf(x);
    case UnaryKind::erf: return erff(x);
    case UnaryKind::erfc: return erfcf(x);  // not 1 - erf(x), which loses every digit past x ≈ 3
    case UnaryKind::floor: return floorf(x);
    case UnaryKind::ceil: return ceilf(x);
    case UnaryKind::round: return rintf(x);  // the default rounding mode: half to even, as NumPy
    case UnaryKind::logical_not: return x == 0.0f ? 1.0f : 0.0f;
    case UnaryKind::trunc: return truncf(x);
    case UnaryKind::isnan: return x != x ? 1.0f : 0.0f;
    case UnaryKind::isinf: return fabsf(x) == INFINITY ? 1.0f : 0.0f;
    case UnaryKind::isfinite: return x - x == 0.0f ? 1.0f : 0.0f;
    case UnaryKind::stop_gradient: return x;
  }
  return x;
}

// dx of y = unary_fn(k, x); zero for the piecewise-constant kinds.
NNFIT_HD float unary_grad_fn(UnaryKind k, float x, float dy) {
  switch (k) {
    case UnaryKind::negative: return -dy;
    case UnaryKind::abs: return x > 0.0f ? dy : x < 0.0f ? -dy : 0.0f;
    case UnaryKind::square: return 2.0f * x * dy;
    case UnaryKind::sqrt: return dy * 0.5f / sqrtf(x);
    case UnaryKind::rsqrt: return -0.5f * dy / (x * sqrtf(x));
    case UnaryKind::reciprocal: return -dy / (x * x);
    case UnaryKind::exp: return dy * expf(x);
    case UnaryKind::expm1: return dy * expf(x);
    case UnaryKind::log: return dy / x;
    case UnaryKind::log1p: return dy / (1.0f + x);
    case UnaryKind::log2: return dy / (x * kLn2);
    case UnaryKind::log10: return dy / (x * kLn10);
    case UnaryKind::sin: return dy * cosf(x);
    case UnaryKind::cos: return -dy * sinf(x);
    case UnaryKind::tan: {
      const float c = cosf(x);
      return dy / (c * c);
    }
    case UnaryKind::arcsin: return dy / sqrtf(1.0f - x * x);
    case UnaryKind::arccos: return -dy / sqrtf(1.0f - x * x);
    case UnaryKind::arctan: return dy / (1.0f + x * x);
    case UnaryKind::sinh: return dy * coshf(x);
    case UnaryKind::cosh: return dy * sinhf(x);
    case UnaryKind::arcsinh: return dy / sqrtf(x * x + 1.0f);
    case UnaryKind::arccosh: return dy / sqrtf(x * x - 1.0f);
    case UnaryKind::arctanh: return dy / (1.0f - x * x);
    case UnaryKind::erf: return dy * kTwoOverSqrtPi * expf(-x * x);
    case UnaryKind::erfc: return -dy * kTwoOverSqrtPi * expf(-x * x);
    case UnaryKind::sign:
    case UnaryKind::floor:
    case UnaryKind::ceil:
    case UnaryKind::round:
    case UnaryKind::logical_not:
    case UnaryKind::trunc:
    case UnaryKind::isnan:
    case UnaryKind::isinf:
    case UnaryKind::isfinite:
    case UnaryKind::stop_gradient: return 0.0f;
  }
  return 0.0f;
}

NNFIT_HD float truth(bool b) { return b ? 1.0f : 0.0f; }

NNFIT_HD float binary_fn(BinaryKind k, float a, float b) {
  switch (k) {
    case BinaryKind::add: return a + b;
    case BinaryKind::subtract: return a - b;
    case BinaryKind::multiply: return a * b;
    case BinaryKind::divide: return a / b;
    case BinaryKind::power: return powf(a, b);
    case BinaryKind::maximum: return a != a || a >= b ? a : b;  // NaN propagates
    case BinaryKind::minimum: return a != a || a <= b ? a : b;
    case BinaryKind::floor_divide: return floorf(a / b);
    case BinaryKind::mod: {  // Python's sign rule: the result takes b's sign
      float r = fmodf(a, b);
      if (r != 0.0f && ((r < 0.0f) != (b < 0.0f))) r += b;
      return r;
    }
    case BinaryKind::arctan2: return atan2f(a, b);
    case BinaryKind::equal: return truth(a == b);
    case BinaryKind::not_equal: return truth(a != b);
    case BinaryKind::less: return truth(a < b);
    case BinaryKind::less_equal: return truth(a <= b);
    case BinaryKind::greater: return truth(a > b);
    case BinaryKind::greater_equal: return truth(a >= b);
    case BinaryKind::logical_and: return truth(a != 0.0f && b != 0.0f);
    case BinaryKind::logical_or: return truth(a != 0.0f || b != 0.0f);
    case BinaryKind::logical_xor: return truth((a != 0.0f) != (b != 0.0f));
  }
  return a;
}

struct GradPair {
  float a = 0.0f, b = 0.0f;
};

// d/da and d/db of y = binary_fn(k, a, b) times dy, at one element (before the sums over
// broadcast axes). maximum/minimum: dy to the input chosen, to a on ties (TensorFlow's
// rule, as minmax_grad); power: d/db = dy·y·log(a) where a > 0, else 0; mod: TensorFlow's
// FloorMod rule, d/db = -dy·floor(a/b).
NNFIT_HD GradPair binary_grad_fn(BinaryKind k, float a, float b, float dy) {
  switch (k) {
    case BinaryKind::add: return {dy, dy};
    case BinaryKind::subtract: return {dy, -dy};
    case BinaryKind::multiply: return {dy * b, dy * a};
    case BinaryKind::divide: return {dy / b, -dy * a / (b * b)};
    case BinaryKind::power: {
      const float y = powf(a, b);
      return {dy * b * powf(a, b - 1.0f), a > 0.0f ? dy * y * logf(a) : 0.0f};
    }
    case BinaryKind::maximum: return a >= b ? GradPair{dy, 0.0f} : GradPair{0.0f, dy};
    case BinaryKind::minimum: return a <= b ? GradPair{dy, 0.0f} : GradPair{0.0f, dy};
    case BinaryKind::mod: return {dy, -dy * floorf(a / b)};
    case BinaryKind::arctan2: {
      const float r = a * a + b * b;
      return {dy * b / r, -dy * a / r};
    }
    default: return {};  // floor_divide, the comparisons and the logical ops
  }
}

NNFIT_HD float min_step(float m, float x) { return x < m || x != x ? x : m; }  // NaN wins
NNFIT_HD float max_step(float m, float x) { return x > m || x != x ? x : m; }

// dx of one element x of a reduction y = reduce(k, ...) times dy. min, max: `extra` is how
// many elements of the group equal y (dy split evenly among them, reduce_max_grad's rule);
// mean: `extra` is the group's size;
// prod: `extra` is the product of the group's other elements, read only where x == 0
// (dy·y/x elsewhere), so zeros get their exact gradient; logsumexp: dy·exp(x − y).
NNFIT_HD float reduce_grad_fn(ReduceKind k, float x, float y, float dy, float extra) {
  switch (k) {
    case ReduceKind::sum: return dy;
    case ReduceKind::min:
    case ReduceKind::max: return x == y ? dy / extra : 0.0f;
    case ReduceKind::mean: return dy / extra;
    case ReduceKind::prod: return x != 0.0f ? dy * y / x : dy * extra;
    case ReduceKind::logsumexp: return dy * expf(x - y);
  }
  return 0.0f;
}

// logsumexp of a group from its maximum m and Σ exp(x − m): m itself where m is ±inf
// (every element -inf, or one +inf), NaN where one is.
NNFIT_HD float logsumexp_finish(float m, float sum_exp) { return m - m == 0.0f ? m + logf(sum_exp) : m; }

// ---- broadcasting ----

inline constexpr int kMathMaxRank = 8;

// One operand of a broadcasting op read at a flat index of the output: its offset.
struct BroadcastIndex {
  int rank = 0;
  std::int64_t dims[kMathMaxRank] = {};     // the output's
  std::int64_t strides[kMathMaxRank] = {};  // the operand's, per output axis; 0 where it broadcasts
  NNFIT_HD std::int64_t operator()(std::int64_t o) const {
    std::int64_t off = 0;
    for (int d = rank - 1; d >= 0; --d) {
      off += (o % dims[d]) * strides[d];
      o /= dims[d];
    }
    return off;
  }
};

// The output elements one element j of a broadcast operand went to, r in [0, size): what
// the gradients (and reduce, x seen as y broadcast) sum over, one element at a time.
struct BroadcastGroup {
  int rank = 0;
  std::int64_t kept[kMathMaxRank] = {};    // the operand's dims aligned to the output (1 where it broadcasts)
  std::int64_t spread[kMathMaxRank] = {};  // the output's dim where the operand broadcasts, else 1
  std::int64_t out_strides[kMathMaxRank] = {};
  std::int64_t size = 1;                   // Π spread
  NNFIT_HD std::int64_t operator()(std::int64_t j, std::int64_t r) const {
    std::int64_t o = 0;
    for (int d = rank - 1; d >= 0; --d) {
      o += (j % kept[d] + r % spread[d]) * out_strides[d];  // one of the two terms is 0
      j /= kept[d];
      r /= spread[d];
    }
    return o;
  }
};

// NumPy's broadcast shape of a and b, or nothing where they do not broadcast.
std::optional<Shape> broadcast_shape(const Shape& a, const Shape& b);
// requires: `operand` broadcasts to `out` (throws InvalidArgument otherwise, or past
// kMathMaxRank axes).
BroadcastIndex broadcast_index(const Shape& operand, const Shape& out);
BroadcastGroup broadcast_group(const Shape& operand, const Shape& out);

// The reduce attributes: `axes` (negative count from the end; absent or empty: every
// axis), sorted and unique, checked against x; throws InvalidArgument naming the shape.
std::vector<std::int64_t> reduce_axes(const Shape& x, const std::vector<std::int64_t>& axes, const char* op);
// x with the reduced axes set to 1 (keepdims), or dropped.
Shape reduced_shape(const Shape& x, const std::vector<std::int64_t>& axes, bool keepdims);

// argsort's order: element a (at position ia of its line) goes before b (at ib) when its
// value is smaller (larger when descending), ties and NaNs keeping their positions' order,
// NaNs after every number in both orders (NumPy's place for them in an ascending sort).
NNFIT_HD bool argsort_before(float a, std::int64_t ia, float b, std::int64_t ib, bool descending) {
  const bool na = a != a, nb = b != b;
  if (na || nb) return na == nb ? ia < ib : nb;
  if (a == b) return ia < ib;
  return descending ? a > b : a < b;
}

// The [outer, axis, inner] view of arg_reduce, argsort and cumulative; axis in [-rank, rank).
struct AxisSplit {
  std::int64_t outer = 1, axis = 1, inner = 1;
};
AxisSplit axis_split(const Shape& x, std::int64_t axis);
// The axis attribute made non-negative; throws InvalidArgument naming the shape.
std::int64_t checked_axis(const Shape& x, std::int64_t axis, const char* op);

}  // namespace nnfit
