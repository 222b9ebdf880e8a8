// The indexing operations of keras.ops (Note [Array operations from the engine's ops] in
// operation_array_emit.h): take, take_along_axis, sort, argsort, top_k, in_top_k, the
// segment reductions, scatter and scatter_update. Reads go through `gather` (its gradient a
// scatter-add); sums into segments or scattered positions through a one-hot matmul
// (exact but for the order of additions, and differentiable); sorting through the engine's
// `argsort` (then a gather of the values) and top_k with small k through k argmaxes.
#include <cmath>
#include <limits>

#include "nn/layers/operation_array_emit.h"

namespace nnfit::operation_emit {
namespace {

// top_k with k up to this is k argmaxes (O(k·n) a line, fast on every device); a larger k
// sorts the line.
constexpr std::int64_t kIterativeTopK = 8;

int reduce_axis_of(const Emit& e, int v, const std::string& kind, std::int64_t axis, bool keepdims = false) {
  return e.add("reduce", {v}, Attrs{{"axes", Dims{axis}}, {"keepdims", std::int64_t{keepdims ? 1 : 0}}, {"kind", kind}}, kind);
}

// An index argument: a tensor, a number (a scalar index) or a list of ints (Keras writes
// `take(x, [0, 2])`'s list as it is), as a float tensor; `known_nonnegative` where its
// values are known and none is negative.
struct Ids {
  int value;
  bool known_nonnegative;
};

Ids index_arg(const Emit& e, std::size_t k, int like) {
  if (k >= e.args.size()) e.invalid("needs indices");
  const OperationArg& a = e.args[k];
  if (a.kind == OperationArg::Kind::index) {
    // Runs of consecutive ints as one iota each, concatenated.
    std::vector<int> parts;
    bool nonneg = true;
    for (std::size_t i = 0; i < a.index.size();) {
      if (a.index[i].kind != IndexItem::Kind::integer) e.invalid("indices must be integers");
      std::size_t j = i + 1;
      while (j < a.index.size() && a.index[j].kind == IndexItem::Kind::integer && a.index[j].value == a.index[j - 1].value + 1) ++j;
      const std::int64_t start = a.index[i].value, len = static_cast<std::int64_t>(j - i);
      nonneg = nonneg && start >= 0;
      parts.push_back(e.add("scale", {iota(e, like, {len}, 0)}, Attrs{{"factor", 1.0}, {"offset", static_cast<double>(start)}}, "ids"));
      i = j;
    }
    return {parts.size() == 1 ? parts[0] : e.add("concat", parts, Attrs{{"axis", std::int64_t{0}}}, "ids"), nonneg};
  }
  int v = as_f32(e, e.value(k));
  if (a.kind == OperationArg::Kind::number) return {e.reshape(v, {}), a.number >= 0};
  if (a.kind == OperationArg::Kind::constant) {
    return {v, std::all_of(a.values.begin(), a.values.end(), [](double x) { return x >= 0; })};
  }
  return {v, false};
}

// x's elements picked along `axis` by ids of x's rank (NumPy's take_along_axis; the other
// axes broadcast): one gather from x flattened, at row·n + id.
int gather_along(const Emit& e, int x, int ids, int axis, bool wrap) {
  x = as_f32(e, x), ids = as_f32(e, ids);
  const int r = e.rank(x);
  if (e.rank(ids) != r) e.invalid("indices must have the tensor's rank (" + std::to_string(r) + ")");
  Dims dx = e.shape(x).dims(), di = e.shape(ids).dims();
  for (int i = 0; i < r; ++i) {
    if (i == axis) continue;
    const std::size_t u = static_cast<std::size_t>(i);
    if (dx[u] != di[u] && dx[u] != 1 && di[u] != 1) e.invalid("indices of shape " + e.shape(ids).to_string() + " do not broadcast against " + e.shape(x).to_string());
    dx[u] = di[u] = std::max(dx[u], di[u]);
  }
  if (dx != e.shape(x).dims()) x = e.add("broadcast_to", {x}, Attrs{{"shape", dx}}, "broadcast");
  if (di != e.shape(ids).dims()) ids = e.add("broadcast_to", {ids}, Attrs{{"shape", di}}, "broadcast");
  const std::int64_t n = dx[static_cast<std::size_t>(axis)];
  if (wrap) ids = wrap_negative(e, ids, n);
  x = move_axis(e, x, axis, r - 1);
  ids = move_axis(e, ids, axis, r - 1);
  const Dims moved = e.shape(ids).dims();
  const std::int64_t numel = e.shape(x).numel(), rows = numel / n, k = moved.back();
  check_float_index(e, numel, "take_along_axis");
  const int row_start = e.add("scale", {iota(e, x, {rows, 1}, 0)}, Attrs{{"factor", static_cast<double>(n)}}, "rows");
  const int flat_ids = e.binary("add", e.reshape(ids, {rows, k}), row_start);
  const int y = e.add("gather", {e.reshape(x, {numel, 1}), flat_ids}, {}, "gather");
  return move_axis(e, e.reshape(y, moved), r - 1, axis);
}

int to_int32(const Emit& e, int v) { return e.add("cast", {v}, Attrs{{"dtype", std::string("int32")}}, "cast"); }

// The positions that sort x along `axis` (the engine's stable `argsort`), as floats.
int sort_indices(const Emit& e, int x, int axis, bool descending) {
  return as_f32(e, e.add("argsort", {as_f32(e, x)}, Attrs{{"axis", std::int64_t{axis}}, {"descending", std::int64_t{descending ? 1 : 0}}},
                         "argsort"));
}

// The k largest along the last axis, as float indices: k argmaxes, each found element
// masked with -inf for the next (an input holding -inf among its top k may repeat one).
int top_k_iterative(const Emit& e, int x, std::int64_t k) {
  const std::int64_t n = e.shape(x).dims().back();
  const int last = e.rank(x) - 1;
  const int positions = iota(e, x, {n}, 0);
  const int masked_value = fill(e, x, {1}, -std::numeric_limits<double>::infinity());
  std::vector<int> picks;
  int cur = x;
  for (std::int64_t t = 0; t < k; ++t) {
    const int pick = as_f32(e, e.add("arg_reduce", {cur}, Attrs{{"axis", std::int64_t{last}}, {"keepdims", std::int64_t{1}},
                                                               {"kind", std::string("argmax")}}, "argmax"));
    picks.push_back(pick);
    if (t + 1 < k) cur = e.add("where", {e.binary("equal", positions, pick), masked_value, cur}, {}, "mask");
  }
  return picks.size() == 1 ? picks[0] : e.add("concat", picks, Attrs{{"axis", std::int64_t{last}}}, "top_k");
}

}  // namespace

std::vector<int> take(const Emit& e) {
  int x = e.value(0);
  int axis = 0;
  if (e.config().has("axis")) {
    axis = static_cast<int>(e.axis(e.config().i("axis"), e.rank(x)));
  } else {
    x = e.reshape(x, {e.shape(x).numel()});
  }
  const Ids ids = index_arg(e, 1, x);
  const std::int64_t n = e.shape(x)[axis];
  return {gather_axis(e, x, axis, ids.known_nonnegative ? ids.value : wrap_negative(e, ids.value, n))};
}

std::vector<int> take_along_axis(const Emit& e) {
  int x = e.value(0);
  int ids = e.value(1);
  if (!e.config().has("axis")) {
    x = e.reshape(x, {e.shape(x).numel()});
    ids = e.reshape(ids, {e.shape(ids).numel()});
    return {gather_along(e, x, ids, 0, true)};
  }
  return {gather_along(e, x, ids, static_cast<int>(e.axis(e.config().i("axis"), e.rank(x))), true)};
}

std::vector<int> sort(const Emit& e) {
  const int x = as_f32(e, e.value(0));
  const int r = e.rank(x);
  if (r == 0) return {x};
  const int axis = static_cast<int>(e.axis(e.config().i_or("axis", -1), r));
  return {gather_along(e, x, sort_indices(e, x, axis, false), axis, false)};
}

std::vector<int> argsort(const Emit& e) {
  const int x = as_f32(e, e.value(0));
  const int r = e.rank(x);
  if (r == 0) e.unsupported("argsort of a scalar is not supported");
  const int axis = static_cast<int>(e.axis(e.config().i_or("axis", -1), r));
  return {e.add("argsort", {x}, Attrs{{"axis", std::int64_t{axis}}, {"descending", std::int64_t{0}}}, "argsort")};
}

std::vector<int> top_k(const Emit& e) {
  const int x = as_f32(e, e.value(0));
  if (e.rank(x) == 0) e.invalid("needs a tensor of rank >= 1");
  const std::int64_t n = e.shape(x).dims().back(), k = e.config().i("k");
  if (k < 1 || k > n) e.invalid("k = " + std::to_string(k) + " must be in [1, " + std::to_string(n) + "]");
  const int last = e.rank(x) - 1;
  const int ids = k <= kIterativeTopK ? top_k_iterative(e, x, k) : crop_axis(e, sort_indices(e, x, last, true), last, 0, k);
  return {gather_along(e, x, ids, last, false), to_int32(e, ids)};
}

// in_top_k(targets, predictions, k): fewer than k predictions exceed the target's (ties
// are in, as TensorFlow's).
std::vector<int> in_top_k(const Emit& e) {
  const int targets = as_f32(e, e.value(0)), predictions = as_f32(e, e.value(1));
  if (e.rank(predictions) != 2 || e.rank(targets) != 1) e.invalid("needs targets (batch,) and predictions (batch, classes)");
  const std::int64_t batch = e.shape(targets)[0];
  const int own = gather_along(e, predictions, e.reshape(targets, {batch, 1}), 1, false);
  const int above = reduce_axis_of(e, e.binary("greater", predictions, own), "sum", 1);
  return {e.binary("less", above, fill(e, above, {1}, static_cast<double>(e.config().i("k"))))};
}

namespace {

// [segments, n]: 1 where the n-th id is the segment's (ids outside [0, segments) match none).
int one_hot_rows(const Emit& e, int ids, std::int64_t segments) {
  const std::int64_t n = e.shape(ids).numel();
  check_float_index(e, segments * n, "a scatter");
  return e.binary("equal", iota(e, ids, {segments, 1}, 0), e.reshape(as_f32(e, ids), {1, n}));
}

std::int64_t num_segments(const Emit& e) {
  if (!e.config().has("num_segments")) {
    e.unsupported("num_segments is needed on symbolic tensors (it is inferred from the ids only on arrays)");
  }
  return e.config().i("num_segments");
}

}  // namespace

std::vector<int> segment_sum(const Emit& e) {
  const int data = as_f32(e, e.value(0)), ids = e.value(1);
  const Shape s = e.shape(data);
  const std::int64_t n = s[0], segments = num_segments(e);
  if (e.rank(ids) != 1 || e.shape(ids)[0] != n) e.invalid("segment_ids must be a vector of data's leading size");
  const int y = e.add("matmul", {one_hot_rows(e, ids, segments), e.reshape(data, {n, s.numel() / n})},
                      Attrs{{"transpose_a", std::int64_t{0}}, {"transpose_b", std::int64_t{0}}}, "segment_sum");
  Dims dims = s.dims();
  dims[0] = segments;
  return {e.reshape(y, dims)};
}

// segment_max / segment_min / segment_prod: each segment's rows picked by a one-hot mask
// (the others replaced by the reduction's identity), then reduced. An empty segment holds
// the identity: float32's lowest for max, its largest for min, 1 for prod (TensorFlow's
// unsorted_segment_*).
std::vector<int> segment_reduce(const Emit& e, const std::string& kind, double identity) {
  const int data = as_f32(e, e.value(0)), ids = e.value(1);
  const Shape s = e.shape(data);
  const std::int64_t n = s[0], segments = num_segments(e), width = s.numel() / n;
  if (e.rank(ids) != 1 || e.shape(ids)[0] != n) e.invalid("segment_ids must be a vector of data's leading size");
  const int mask = e.reshape(one_hot_rows(e, ids, segments), {segments, n, 1});
  const int picked = e.add("where", {mask, e.reshape(data, {1, n, width}), fill(e, data, {1}, identity)}, {}, "segment_" + kind);
  Dims dims = s.dims();
  dims[0] = segments;
  return {e.reshape(reduce_axis_of(e, picked, kind, 1), dims)};
}

std::vector<int> segment_max(const Emit& e) {
  return segment_reduce(e, "max", static_cast<double>(std::numeric_limits<float>::lowest()));
}
std::vector<int> segment_min(const Emit& e) {
  return segment_reduce(e, "min", static_cast<double>(std::numeric_limits<float>::max()));
}
std::vector<int> segment_prod(const Emit& e) { return segment_reduce(e, "prod", 1.0); }

namespace {

// The flat row (over the first k axes of `shape`) of each index row of `indices` [n, k].
int flat_rows(const Emit& e, int indices, const Dims& shape) {
  indices = as_f32(e, indices);
  if (e.rank(indices) == 1) indices = e.reshape(indices, {1, e.shape(indices)[0]});
  const std::int64_t k = e.shape(indices)[1];
  if (e.rank(indices) != 2 || k > static_cast<std::int64_t>(shape.size())) e.invalid("indices must be (updates, index depth)");
  std::vector<int> strides;
  std::int64_t stride = 1;
  for (std::int64_t j = k; j-- > 0;) {
    strides.insert(strides.begin(), fill(e, indices, {1}, static_cast<double>(stride)));
    stride *= shape[static_cast<std::size_t>(j)];
  }
  const int weights = strides.size() == 1 ? strides[0] : e.add("concat", strides, Attrs{{"axis", std::int64_t{0}}}, "strides");
  return reduce_axis_of(e, e.binary("multiply", indices, weights), "sum", 1);
}

struct Scattered {
  int one_hot;  // [rows, n]
  std::int64_t rows, width, n;
};

Scattered scatter_rows(const Emit& e, int indices, const Dims& shape) {
  const int flat = flat_rows(e, indices, shape);
  const std::int64_t n = e.shape(flat)[0];
  const std::int64_t k = e.shape(indices).dims().back();
  std::int64_t rows = 1, width = 1;
  for (std::size_t i = 0; i < shape.size(); ++i) (static_cast<std::int64_t>(i) < k ? rows : width) *= shape[i];
  return {one_hot_rows(e, flat, rows), rows, width, n};
}

}  // namespace

// scatter(indices, values, shape): zeros of `shape` with values added at the indices
// (repeated indices add, as TensorFlow's scatter_nd).
std::vector<int> scatter(const Emit& e) {
  const Dims shape = e.config().ints("shape");
  const int values = as_f32(e, e.value(1));
  const Scattered s = scatter_rows(e, e.value(0), shape);
  const int y = e.add("matmul", {s.one_hot, e.reshape(values, {s.n, s.width})},
                      Attrs{{"transpose_a", std::int64_t{0}}, {"transpose_b", std::int64_t{0}}}, "scatter");
  return {e.reshape(y, shape)};
}

// scatter_update(inputs, indices, updates): each indexed row replaced by its last update
// (NumPy's assignment), or with reduction "add" the updates added.
std::vector<int> scatter_update(const Emit& e) {
  const int inputs = as_f32(e, e.value(0)), updates = as_f32(e, e.value(2));
  const Dims shape = e.shape(inputs).dims();
  const std::string reduction = e.config().s_or("reduction", "");
  if (!reduction.empty() && reduction != "add") e.unsupported("reduction \"" + reduction + "\" is not supported (None, \"add\")");
  const Scattered s = scatter_rows(e, e.value(1), shape);
  const int flat_inputs = e.reshape(inputs, {s.rows, s.width});
  const int flat_updates = e.reshape(updates, {s.n, s.width});
  if (reduction == "add") {
    const int added = e.add("matmul", {s.one_hot, flat_updates}, Attrs{{"transpose_a", std::int64_t{0}}, {"transpose_b", std::int64_t{0}}}, "scatter");
    return {e.reshape(e.binary("add", flat_inputs, added), shape)};
  }
  // The last update of each row: max over n of one_hot·(n + 1), less 1 (-1: none).
  const int order = e.add("scale", {iota(e, flat_updates, {1, s.n}, 1)}, Attrs{{"factor", 1.0}, {"offset", 1.0}}, "order");
  const int last = reduce_axis_of(e, e.binary("multiply", s.one_hot, order), "max", 1, true);  // [rows, 1]
  const int hit = e.binary("greater", last, fill(e, last, {1}, 0.0));
  const int pick = e.reshape(e.binary("maximum", e.add("scale", {last}, Attrs{{"factor", 1.0}, {"offset", -1.0}}, "pick"),
                                      fill(e, last, {1}, 0.0)), {s.rows});
  const int picked = gather_axis(e, flat_updates, 0, pick);
  return {e.reshape(e.add("where", {hit, picked, flat_inputs}, {}, "scatter_update"), shape)};
}

}  // namespace nnfit::operation_emit
