// The host halves of math_fns.h: the `kind` parsers, NumPy's broadcast shape and the index
// maps built from it, and the axis attributes of reduce, arg_reduce and cumulative.
#include "backend/common/math_fns.h"

#include <algorithm>
#include <iterator>

#include "nnfit/backend/attrs.h"
#include "nnfit/core/error.h"

namespace nnfit {

namespace {

template <class E, std::size_t N>
E parse(const std::string& kind, const char* const (&names)[N], const char* what) {
  for (std::size_t i = 0; i < N; ++i) {
    if (kind == names[i]) return static_cast<E>(i);
  }
  std::string all;
  for (std::size_t i = 0; i < N; ++i) all += std::string(i ? ", " : "") + names[i];
  throw InvalidArgument(std::string(what) + ": unknown kind '" + kind + "'; the kinds are " + all);
}

// In the order of the enums.
const char* const kUnaryNames[] = {"negative", "abs",     "sign",    "square",  "sqrt",    "rsqrt",  "reciprocal", "exp",
                                   "expm1",    "log",     "log1p",   "log2",    "log10",   "sin",    "cos",        "tan",
                                   "arcsin",   "arccos",  "arctan",  "sinh",    "cosh",    "arcsinh", "arccosh",   "arctanh",
                                   "erf",      "erfc",    "floor",   "ceil",    "round",   "logical_not", "trunc", "isnan", "isinf",
                                   "isfinite", "stop_gradient"};
const char* const kBinaryNames[] = {"add",       "subtract",   "multiply",    "divide",      "power",
                                    "maximum",   "minimum",    "floor_divide", "mod",        "arctan2",
                                    "equal",     "not_equal",  "less",        "less_equal",  "greater",
                                    "greater_equal", "logical_and", "logical_or", "logical_xor"};
const char* const kReduceNames[] = {"sum", "min", "prod", "logsumexp", "max", "mean"};

void check_rank(const Shape& s) {
  NNFIT_CHECK(s.rank() <= kMathMaxRank, InvalidArgument, "shape ", s.to_string(), " has more than ", kMathMaxRank,
              " axes, the most the broadcasting kernels take");
}

}  // namespace

UnaryKind unary_kind(const std::string& kind) { return parse<UnaryKind>(kind, kUnaryNames, "unary"); }
BinaryKind binary_kind(const std::string& kind) { return parse<BinaryKind>(kind, kBinaryNames, "binary"); }
ReduceKind reduce_kind(const std::string& kind) { return parse<ReduceKind>(kind, kReduceNames, "reduce"); }

bool unary_is_constant(UnaryKind k) {
  return k == UnaryKind::sign || k == UnaryKind::floor || k == UnaryKind::ceil || k == UnaryKind::round ||
         static_cast<int>(k) >= static_cast<int>(UnaryKind::logical_not);
}

NanToNumValues nan_to_num_values(const Attrs& a) {
  return {static_cast<float>(a.f_or("nan", 0.0)), static_cast<float>(a.f("posinf")), static_cast<float>(a.f("neginf"))};
}

bool binary_is_constant(BinaryKind k) {
  return k == BinaryKind::floor_divide || static_cast<int>(k) >= static_cast<int>(BinaryKind::equal);
}

std::optional<Shape> broadcast_shape(const Shape& a, const Shape& b) {
  const int rank = std::max(a.rank(), b.rank());
  std::vector<std::int64_t> out(static_cast<std::size_t>(rank));
  for (int d = 0; d < rank; ++d) {
    const int da = d - (rank - a.rank()), db = d - (rank - b.rank());
    const std::int64_t x = da >= 0 ? a[da] : 1, y = db >= 0 ? b[db] : 1;
    if (x != y && x != 1 && y != 1) return std::nullopt;
    out[static_cast<std::size_t>(d)] = x == 1 ? y : x;
  }
  return Shape(out);
}

BroadcastIndex broadcast_index(const Shape& operand, const Shape& out) {
  check_rank(out);
  const std::optional<Shape> s = broadcast_shape(operand, out);
  NNFIT_CHECK(operand.rank() <= out.rank() && s && *s == out, InvalidArgument, "shape ", operand.to_string(),
              " does not broadcast to ", out.to_string());
  BroadcastIndex m;
  m.rank = out.rank();
  std::int64_t stride = 1;
  for (int d = out.rank() - 1; d >= 0; --d) {
    const int od = d - (out.rank() - operand.rank());
    const std::int64_t dim = od >= 0 ? operand[od] : 1;
    m.dims[d] = out[d];
    m.strides[d] = dim == out[d] ? stride : 0;
    stride *= dim;
  }
  return m;
}

BroadcastGroup broadcast_group(const Shape& operand, const Shape& out) {
  const BroadcastIndex idx = broadcast_index(operand, out);
  BroadcastGroup g;
  g.rank = out.rank();
  std::int64_t stride = 1;
  for (int d = out.rank() - 1; d >= 0; --d) {
    const bool spread = idx.strides[d] == 0 && out[d] != 1;
    g.kept[d] = spread ? 1 : out[d];
    g.spread[d] = spread ? out[d] : 1;
    g.out_strides[d] = stride;
    g.size *= g.spread[d];
    stride *= out[d];
  }
  return g;
}

std::vector<std::int64_t> reduce_axes(const Shape& x, const std::vector<std::int64_t>& axes, const char* op) {
  std::vector<std::int64_t> out;
  for (std::int64_t a : axes) out.push_back(checked_axis(x, a, op));
  if (axes.empty()) {
    for (std::int64_t d = 0; d < x.rank(); ++d) out.push_back(d);
  }
  std::sort(out.begin(), out.end());
  NNFIT_CHECK(std::adjacent_find(out.begin(), out.end()) == out.end(), InvalidArgument, op,
              ": an axis is listed twice for shape ", x.to_string());
  return out;
}

Shape reduced_shape(const Shape& x, const std::vector<std::int64_t>& axes, bool keepdims) {
  std::vector<std::int64_t> out;
  for (std::int64_t d = 0; d < x.rank(); ++d) {
    const bool reduced = std::find(axes.begin(), axes.end(), d) != axes.end();
    if (!reduced) out.push_back(x[static_cast<int>(d)]);
    else if (keepdims) out.push_back(1);
  }
  return Shape(out);
}

std::int64_t checked_axis(const Shape& x, std::int64_t axis, const char* op) {
  NNFIT_CHECK(axis >= -x.rank() && axis < x.rank(), InvalidArgument, op, ": axis ", axis, " is out of range for shape ",
              x.to_string());
  return axis < 0 ? axis + x.rank() : axis;
}

AxisSplit axis_split(const Shape& x, std::int64_t axis) {
  const std::int64_t a = checked_axis(x, axis, "axis");
  AxisSplit v;
  for (int d = 0; d < x.rank(); ++d) (d < a ? v.outer : d == a ? v.axis : v.inner) *= x[d];
  return v;
}

}  // namespace nnfit
