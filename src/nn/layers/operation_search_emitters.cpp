// keras.ops' searching and sequence operations (Note [Array operations from the engine's
// ops] in operation_array_emit.h): searchsorted and digitize as counts of comparisons,
// unravel_index as floor divisions and remainders, vander as powers, trapezoid as a sum of
// neighbours' means, and correlate as a gather of windows times the filter, summed (the
// correlation TensorFlow's conv1d computes for Keras, with its padding for "full" and
// "same").
#include "nn/layers/operation_array_emit.h"

namespace nnfit::operation_emit {
namespace {

// How many of the 1-D `sequence`'s elements compare true against each value (`kind`:
// "less" counts sequence < value), as float counts of values' shape.
int count_compared(const Emit& e, int sequence, int values, const std::string& kind) {
  sequence = as_f32(e, sequence), values = as_f32(e, values);
  if (e.rank(sequence) != 1) e.invalid("the sorted sequence must be 1-D");
  Dims dims = e.shape(values).dims();
  dims.push_back(1);
  const int hits = e.binary(kind, sequence, e.reshape(values, dims));
  return e.add("reduce", {hits}, Attrs{{"axes", Dims{static_cast<std::int64_t>(dims.size()) - 1}},
                                        {"keepdims", std::int64_t{0}}, {"kind", std::string("sum")}}, "count");
}

int int32_of(const Emit& e, int v) { return e.add("cast", {v}, Attrs{{"dtype", std::string("int32")}}, "cast"); }

Dims shape_config(const Emit& e) {
  const auto& items = e.config().items();
  auto it = items.find("shape");
  if (it == items.end()) e.invalid("needs \"shape\"");
  if (const auto* one = std::get_if<std::int64_t>(&it->second)) return {*one};
  return e.config().ints("shape");
}

}  // namespace

// searchsorted(sorted_sequence, values, side): left, the count of elements < value; right,
// of elements <= value (NumPy's insertion points for a sorted sequence).
std::vector<int> searchsorted(const Emit& e) {
  const bool right = e.config().s_or("side", "left") == "right";
  return {int32_of(e, count_compared(e, e.value(0), e.value(1), right ? "less_equal" : "less"))};
}

// digitize(x, bins): the count of bins <= x (TensorFlow's Bucketize, NumPy's digitize for
// increasing bins).
std::vector<int> digitize(const Emit& e) {
  return {int32_of(e, count_compared(e, e.value(1), e.value(0), "less_equal"))};
}

// vander(x, N, increasing): x's powers N-1 .. 0 (or 0 .. N-1) as columns.
std::vector<int> vander(const Emit& e) {
  const int x = as_f32(e, e.value(0));
  if (e.rank(x) != 1) e.invalid("x must be 1-D");
  const std::int64_t n = e.shape(x)[0], cols = e.config().i_or("N", n);
  if (cols < 1) e.unsupported("N < 1 (an empty matrix) is not supported");
  int powers = iota(e, x, {1, cols}, 1);
  if (!e.flag("increasing", false)) {
    powers = e.add("scale", {powers}, Attrs{{"factor", -1.0}, {"offset", static_cast<double>(cols - 1)}}, "powers");
  }
  return {e.binary("power", e.reshape(x, {n, 1}), powers)};
}

// trapezoid(y, dx, axis): Σ (y[i] + y[i+1]) · dx / 2 along the axis (sample points x are
// taken on arrays only).
std::vector<int> trapezoid(const Emit& e) {
  if (e.config().has("x")) e.unsupported("sample points x are not supported in a model (give dx)");
  const int y = as_f32(e, e.value(0));
  const int axis = static_cast<int>(e.axis(e.config().i_or("axis", -1), e.rank(y)));
  const std::int64_t n = e.shape(y)[axis];
  if (n < 2) e.unsupported("an axis of fewer than 2 samples is not supported");
  const int pairs = e.binary("add", crop_axis(e, y, axis, 1, n - 1), crop_axis(e, y, axis, 0, n - 1));
  const int scaled = e.add("scale", {pairs}, Attrs{{"factor", e.config().f_or("dx", 1.0) / 2.0}}, "trapezoid");
  return {e.add("reduce", {scaled}, Attrs{{"axes", Dims{axis}}, {"keepdims", std::int64_t{0}}, {"kind", std::string("sum")}}, "trapezoid")};
}

// unravel_index(indices, shape): one output per axis, floor(i / stride) mod size.
std::vector<int> unravel_index(const Emit& e) {
  const int indices = as_f32(e, e.value(0));
  const Dims shape = shape_config(e);
  std::vector<int> out;
  std::int64_t stride = 1;
  for (std::int64_t d : shape) stride *= d;
  check_float_index(e, stride, "unravel_index");
  for (std::int64_t d : shape) {
    stride /= d;
    int v = indices;
    if (stride != 1) v = e.binary("floor_divide", v, fill(e, indices, {1}, static_cast<double>(stride)));
    out.push_back(e.binary("mod", v, fill(e, indices, {1}, static_cast<double>(d))));
  }
  return out;
}

// correlate(x1, x2, mode): out[k] = Σ_j x1p[k + j] · x2[j], x1p = x1 padded with m - 1
// zeros on both sides for "full" and "same" ("same" keeps max(n, m) of the middle).
std::vector<int> correlate(const Emit& e) {
  int a = as_f32(e, e.value(0));
  const int v = as_f32(e, e.value(1));
  if (e.rank(a) != 1 || e.rank(v) != 1) e.invalid("x1 and x2 must be 1-D");
  const std::int64_t n = e.shape(a)[0], m = e.shape(v)[0];
  const std::string mode = e.config().s_or("mode", "valid");
  if (mode != "valid" && mode != "same" && mode != "full") e.invalid("mode must be \"valid\", \"same\" or \"full\"");
  if (mode != "valid" && m > 1) a = e.add("pad", {a}, Attrs{{"before", Dims{m - 1}}, {"after", Dims{m - 1}}}, "correlate");
  const std::int64_t len = e.shape(a)[0] - m + 1;
  if (len < 1) e.invalid("x2 is longer than x1 (\"valid\" needs len(x1) >= len(x2))");
  const int windows = e.binary("add", iota(e, a, {len, 1}, 0), iota(e, a, {1, m}, 1));  // [len, m]
  const int picked = gather_axis(e, a, 0, windows);
  const int products = e.binary("multiply", picked, e.reshape(v, {1, m}));
  int y = e.add("reduce", {products}, Attrs{{"axes", Dims{1}}, {"keepdims", std::int64_t{0}}, {"kind", std::string("sum")}}, "correlate");
  if (mode == "same") {
    const std::int64_t keep = std::max(n, m);
    y = crop_axis(e, y, 0, (len - keep) / 2, keep);
  }
  return {y};
}

}  // namespace nnfit::operation_emit
