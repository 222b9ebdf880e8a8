// The emitters of keras.ops' array operations (Note [Array operations from the engine's
// ops] in operation_array_emit.h): this file holds the shared building blocks, the
// operations that move data without computing (split and its kin, unstack, flip, roll,
// tril/triu, slice and slice_update, broadcast_to, the stacks, append, diff, select,
// meshgrid), the table of every array operation and their output counts; the
// contractions and the gathers are in operation_contraction_emitters.cpp and
// operation_gather_emitters.cpp.
#include <numeric>

#include "nn/layers/operation_array_emit.h"

namespace nnfit::operation_emit {

int as_f32(const Emit& e, int x) {
  return e.g.desc(x).dtype == DType::f32 ? x : e.add("cast", {x}, Attrs{{"dtype", std::string("float32")}}, "cast");
}

int fill(const Emit& e, int like, const Dims& dims, double value) {
  const Shape s = e.shape(like);
  if (s.numel() == 0) e.unsupported("an empty tensor is not supported");
  int one = like;
  if (s.rank() > 0) one = e.add("crop", {as_f32(e, like)}, Attrs{{"begin", Dims(static_cast<std::size_t>(s.rank()), 0)},
                                                               {"shape", Dims(static_cast<std::size_t>(s.rank()), 1)}}, "fill");
  one = e.reshape(as_f32(e, one), {1});
  // isnan(v) is 0 or 1, never NaN, so 0·isnan(v) + value is exactly value.
  one = e.add("scale", {e.unary("isnan", one)}, Attrs{{"factor", 0.0}, {"offset", value}}, "fill");
  if (dims.empty()) return e.reshape(one, {});
  if (dims == Dims{1}) return one;
  return e.add("broadcast_to", {one}, Attrs{{"shape", dims}}, "fill");
}

int iota(const Emit& e, int like, const Dims& dims, int axis) {
  const std::int64_t n = dims[static_cast<std::size_t>(axis)];
  check_float_index(e, n, "an index");
  int v = e.add("cumulative", {fill(e, like, {n}, 1.0)}, Attrs{{"axis", std::int64_t{0}}, {"kind", std::string("cumsum")}}, "iota");
  v = e.add("scale", {v}, Attrs{{"factor", 1.0}, {"offset", -1.0}}, "iota");
  Dims one(dims.size(), 1);
  one[static_cast<std::size_t>(axis)] = n;
  v = e.reshape(v, one);
  return one == dims ? v : e.add("broadcast_to", {v}, Attrs{{"shape", dims}}, "iota");
}

int move_axis(const Emit& e, int x, int from, int to) {
  if (from == to) return x;
  Dims perm(static_cast<std::size_t>(e.rank(x)));
  std::iota(perm.begin(), perm.end(), 0);
  perm.erase(perm.begin() + from);
  perm.insert(perm.begin() + to, from);
  return e.add("transpose", {as_f32(e, x)}, Attrs{{"perm", perm}}, "move_axis");
}

int crop_axis(const Emit& e, int x, int axis, std::int64_t begin, std::int64_t size) {
  const Shape s = e.shape(x);
  if (begin == 0 && size == s[axis]) return x;
  if (size <= 0) e.unsupported("an empty piece is not supported");
  Dims starts(static_cast<std::size_t>(s.rank()), 0), sizes = s.dims();
  starts[static_cast<std::size_t>(axis)] = begin;
  sizes[static_cast<std::size_t>(axis)] = size;
  return e.add("crop", {as_f32(e, x)}, Attrs{{"begin", starts}, {"shape", sizes}}, "slice");
}

void check_float_index(const Emit& e, std::int64_t numel, const std::string& what) {
  if (numel >= (std::int64_t{1} << 24)) {
    e.unsupported(what + " over " + std::to_string(numel) + " elements is not supported: nnfit indexes in float32, exact "
                  "below 2^24 elements");
  }
}

int gather_axis(const Emit& e, int x, int axis, int ids) {
  const Shape s = e.shape(x), si = e.shape(ids);
  const std::int64_t n = s[axis];
  if (s.numel() == 0) e.unsupported("an empty tensor is not supported");
  check_float_index(e, n, "a gather");
  const int table = e.reshape(as_f32(e, move_axis(e, x, axis, 0)), {n, s.numel() / n});
  const int y = e.add("gather", {table, as_f32(e, ids)}, {}, "gather");
  Dims dims = si.dims(), rest = s.dims();
  rest.erase(rest.begin() + axis);
  dims.insert(dims.end(), rest.begin(), rest.end());
  const int shaped = e.reshape(y, dims);
  const int k = si.rank();
  if (k == 0 || axis == 0) return shaped;
  Dims perm;
  for (int i = 0; i < axis; ++i) perm.push_back(k + i);
  for (int i = 0; i < k; ++i) perm.push_back(i);
  for (int i = k + axis; i < static_cast<int>(dims.size()); ++i) perm.push_back(i);
  return e.add("transpose", {shaped}, Attrs{{"perm", perm}}, "gather");
}

int wrap_negative(const Emit& e, int ids, std::int64_t n) {
  ids = as_f32(e, ids);
  const int negative = e.binary("less", ids, fill(e, ids, {1}, 0.0));
  return e.binary("add", ids, e.add("scale", {negative}, Attrs{{"factor", static_cast<double>(n)}}, "wrap"));
}

namespace {

// A config key holding an int or a list of ints.
Dims int_or_ints(const Emit& e, const char* key) {
  const auto& items = e.config().items();
  auto it = items.find(key);
  if (it == items.end()) e.invalid(std::string("needs \"") + key + "\"");
  if (const auto* one = std::get_if<std::int64_t>(&it->second)) return {*one};
  if (const auto* many = std::get_if<Dims>(&it->second)) return *many;
  e.invalid(std::string("\"") + key + "\" must be an int or a list of ints");
}

bool is_int(const Attrs& config, const char* key) {
  auto it = config.items().find(key);
  return it != config.items().end() && std::holds_alternative<std::int64_t>(it->second);
}

// The pieces' sizes of split / array_split along an axis of n.
Dims piece_sizes(const Emit& e, std::int64_t n, bool unequal) {
  const Dims v = int_or_ints(e, "indices_or_sections");
  Dims sizes;
  if (is_int(e.config(), "indices_or_sections")) {
    const std::int64_t k = v[0];
    if (k < 1) e.invalid("the number of sections must be positive");
    if (!unequal && n % k != 0) e.invalid("an axis of " + std::to_string(n) + " does not split into " + std::to_string(k) + " equal sections");
    for (std::int64_t i = 0; i < k; ++i) sizes.push_back(n / k + (i < n % k ? 1 : 0));
    return sizes;
  }
  std::int64_t at = 0;
  for (std::size_t i = 0; i <= v.size(); ++i) {
    std::int64_t end = i < v.size() ? v[i] : n;
    end = std::clamp(end < 0 ? end + n : end, at, n);
    sizes.push_back(end - at);
    at = end;
  }
  return sizes;
}

std::vector<int> split_along(const Emit& e, int axis_or_minus, bool unequal) {
  const int x = e.value(0);
  const int r = e.rank(x);
  const int axis = static_cast<int>(e.axis(axis_or_minus, r));
  std::vector<int> out;
  std::int64_t at = 0;
  for (std::int64_t size : piece_sizes(e, e.shape(x)[axis], unequal)) {
    out.push_back(crop_axis(e, x, axis, at, size));
    at += size;
  }
  return out;
}

std::vector<int> split(const Emit& e) { return split_along(e, static_cast<int>(e.config().i_or("axis", 0)), false); }
std::vector<int> array_split(const Emit& e) { return split_along(e, static_cast<int>(e.config().i_or("axis", 0)), true); }
std::vector<int> hsplit(const Emit& e) { return split_along(e, e.rank(e.value(0)) >= 2 ? 1 : 0, false); }
std::vector<int> vsplit(const Emit& e) {
  if (e.rank(e.value(0)) < 2) e.invalid("vsplit needs a tensor of rank >= 2");
  return split_along(e, 0, false);
}
std::vector<int> dsplit(const Emit& e) {
  if (e.rank(e.value(0)) < 3) e.invalid("dsplit needs a tensor of rank >= 3");
  return split_along(e, 2, false);
}

std::vector<int> unstack(const Emit& e) {
  const int x = e.value(0);
  const int axis = static_cast<int>(e.axis(e.config().i_or("axis", 0), e.rank(x)));
  const Shape s = e.shape(x);
  Dims dims = s.dims();
  dims.erase(dims.begin() + axis);
  std::vector<int> out;
  for (std::int64_t i = 0; i < s[axis]; ++i) out.push_back(e.reshape(crop_axis(e, x, axis, i, 1), dims));
  return out;
}

// The axes of a config key that may be absent (every axis), an int or a list.
Dims axes_or_all(const Emit& e, const char* key, int rank) { return e.axes(key, rank); }

int flip_axis(const Emit& e, int x, int axis) {
  const std::int64_t n = e.shape(x)[axis];
  if (n == 1) return x;
  const int reversed = e.add("scale", {iota(e, x, {n}, 0)}, Attrs{{"factor", -1.0}, {"offset", static_cast<double>(n - 1)}}, "flip");
  return gather_axis(e, x, axis, reversed);
}

std::vector<int> flip(const Emit& e) {
  int x = e.value(0);
  for (std::int64_t a : axes_or_all(e, "axis", e.rank(x))) x = flip_axis(e, x, static_cast<int>(a));
  return {x};
}
std::vector<int> fliplr(const Emit& e) {
  if (e.rank(e.value(0)) < 2) e.invalid("fliplr needs a tensor of rank >= 2");
  return {flip_axis(e, e.value(0), 1)};
}
std::vector<int> flipud(const Emit& e) { return {flip_axis(e, e.value(0), 0)}; }

// NumPy's rot90: k quarter turns from axes[0] towards axes[1].
std::vector<int> rot90(const Emit& e) {
  int x = e.value(0);
  const int r = e.rank(x);
  const Dims axes = e.config().has("axes") ? e.config().ints("axes") : Dims{0, 1};
  if (axes.size() != 2) e.invalid("\"axes\" must hold two axes");
  const int a0 = static_cast<int>(e.axis(axes[0], r)), a1 = static_cast<int>(e.axis(axes[1], r));
  if (a0 == a1) e.invalid("\"axes\" must be two different axes");
  const std::int64_t k = ((e.config().i_or("k", 1) % 4) + 4) % 4;
  if (k == 0) return {x};
  if (k == 2) return {flip_axis(e, flip_axis(e, x, a0), a1)};
  Dims perm(static_cast<std::size_t>(r));
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[static_cast<std::size_t>(a0)], perm[static_cast<std::size_t>(a1)]);
  if (k == 1) return {e.add("transpose", {flip_axis(e, x, a1)}, Attrs{{"perm", perm}}, "rot90")};
  return {flip_axis(e, e.add("transpose", {as_f32(e, x)}, Attrs{{"perm", perm}}, "rot90"), a1)};
}

int roll_axis(const Emit& e, int x, int axis, std::int64_t shift) {
  const std::int64_t n = e.shape(x)[axis];
  const std::int64_t s = ((shift % n) + n) % n;
  if (s == 0) return x;
  return e.add("concat", {crop_axis(e, x, axis, n - s, s), crop_axis(e, x, axis, 0, n - s)},
               Attrs{{"axis", std::int64_t{axis}}}, "roll");
}

std::vector<int> roll(const Emit& e) {
  int x = e.value(0);
  const Dims shifts = int_or_ints(e, "shift");
  if (!e.config().has("axis")) {
    if (shifts.size() != 1) e.invalid("several shifts need as many axes");
    const Dims dims = e.shape(x).dims();
    return {e.reshape(roll_axis(e, e.reshape(x, {e.shape(x).numel()}), 0, shifts[0]), dims)};
  }
  const Dims axes = int_or_ints(e, "axis");
  if (shifts.size() != axes.size() && shifts.size() != 1) e.invalid("\"shift\" and \"axis\" differ in length");
  for (std::size_t i = 0; i < axes.size(); ++i) {
    x = roll_axis(e, x, static_cast<int>(e.axis(axes[i], e.rank(x))), shifts[shifts.size() == 1 ? 0 : i]);
  }
  return {x};
}

// tril / triu: x where the last two axes' (column - row) is <= k (tril) or >= k (triu).
std::vector<int> triangle(const Emit& e, bool lower) {
  const int x = as_f32(e, e.value(0));
  const Shape s = e.shape(x);
  if (s.rank() < 2) e.invalid("needs a tensor of rank >= 2");
  const std::int64_t rows = s[s.rank() - 2], cols = s[s.rank() - 1];
  const int offset = e.binary("subtract", iota(e, x, {1, cols}, 1), iota(e, x, {rows, 1}, 0));
  const int k = fill(e, x, {1}, static_cast<double>(e.config().i_or("k", 0)));
  const int mask = e.binary(lower ? "less_equal" : "greater_equal", offset, k);
  return {e.add("where", {mask, x, fill(e, x, {1}, 0.0)})};
}
std::vector<int> tril(const Emit& e) { return triangle(e, true); }
std::vector<int> triu(const Emit& e) { return triangle(e, false); }

// The start indices of Slice / SliceUpdate: a list of ints (a tensor of them is refused).
Dims start_indices(const Emit& e, std::size_t k, int rank) {
  if (k >= e.args.size()) e.invalid("needs start_indices");
  const OperationArg& a = e.args[k];
  Dims out;
  if (a.kind == OperationArg::Kind::index) {
    for (const IndexItem& it : a.index) {
      if (it.kind != IndexItem::Kind::integer) e.invalid("start_indices must be integers");
      out.push_back(it.value);
    }
  } else if (a.kind == OperationArg::Kind::constant) {
    for (double v : a.values) out.push_back(static_cast<std::int64_t>(v));
  } else if (a.kind == OperationArg::Kind::number && rank == 1) {
    out.push_back(static_cast<std::int64_t>(a.number));
  } else {
    e.unsupported("start_indices held in a tensor are not supported: give a list of ints");
  }
  if (static_cast<int>(out.size()) != rank) e.invalid("start_indices must hold one index per axis (" + std::to_string(rank) + ")");
  return out;
}

std::vector<int> slice(const Emit& e) {
  const int x = e.value(0);
  const Shape s = e.shape(x);
  const Dims begin = start_indices(e, 1, s.rank());
  Dims shape = e.config().ints("shape");
  if (static_cast<int>(shape.size()) != s.rank()) e.invalid("\"shape\" must hold one size per axis");
  for (int i = 0; i < s.rank(); ++i) {
    const std::size_t u = static_cast<std::size_t>(i);
    if (shape[u] == -1) shape[u] = s[i] - begin[u];
    if (begin[u] < 0 || shape[u] < 1 || begin[u] + shape[u] > s[i]) {
      e.invalid("the slice [" + std::to_string(begin[u]) + ", " + std::to_string(begin[u] + shape[u]) + ") is outside axis " +
                std::to_string(i) + " of size " + std::to_string(s[i]));
    }
  }
  if (begin == Dims(begin.size(), 0) && shape == s.dims()) return {x};
  return {e.add("crop", {as_f32(e, x)}, Attrs{{"begin", begin}, {"shape", shape}}, "slice")};
}

std::vector<int> slice_update(const Emit& e) {
  const int x = as_f32(e, e.value(0));
  const int updates = as_f32(e, e.value(2));
  const Shape s = e.shape(x), su = e.shape(updates);
  if (su.rank() != s.rank()) e.invalid("updates must have the inputs' rank");
  const Dims begin = start_indices(e, 1, s.rank());
  Dims after;
  for (int i = 0; i < s.rank(); ++i) {
    const std::size_t u = static_cast<std::size_t>(i);
    if (begin[u] < 0 || begin[u] + su[i] > s[i]) e.invalid("the updates do not fit in the inputs at start_indices");
    after.push_back(s[i] - begin[u] - su[i]);
  }
  const Attrs place{{"before", begin}, {"after", after}};
  const int mask = e.add("pad", {fill(e, updates, su.dims(), 1.0)}, place, "mask");
  return {e.add("where", {mask, e.add("pad", {updates}, place, "place"), x})};
}

std::vector<int> broadcast_to(const Emit& e) {
  const int x = as_f32(e, e.value(0));
  const Dims shape = e.config().ints("shape");
  return {e.shape(x).dims() == shape ? x : e.add("broadcast_to", {x}, Attrs{{"shape", shape}})};
}

std::vector<int> ravel(const Emit& e) {
  const int x = e.value(0);
  return {e.reshape(x, {e.shape(x).numel()})};
}

// The stacks: each tensor raised to `rank` NumPy's way (atleast_3d: (n,) -> (1, n, 1),
// (m, n) -> (m, n, 1)), then concatenated. vstack of vectors concatenates them (Keras's
// shape for it, unlike NumPy's (2, n)).
std::vector<int> stack_on(const Emit& e, int axis_1d, int axis, int rank) {
  std::vector<int> xs = e.values(0);
  if (xs.empty()) e.invalid("needs at least one tensor");
  const bool one_d = e.rank(xs[0]) == 1;
  for (int& v : xs) {
    v = as_f32(e, v);
    Dims d = e.shape(v).dims();
    if (rank == 3 && d.size() == 1) d = {1, d[0], 1};
    if (rank == 3 && d.size() == 2) d.push_back(1);
    if (d != e.shape(v).dims()) v = e.reshape(v, d);
  }
  const std::int64_t at = one_d && rank == 1 ? axis_1d : axis;
  return {xs.size() == 1 ? xs[0] : e.add("concat", xs, Attrs{{"axis", at}})};
}
std::vector<int> hstack(const Emit& e) { return stack_on(e, 0, 1, 1); }
std::vector<int> vstack(const Emit& e) { return stack_on(e, 0, 0, 1); }
std::vector<int> dstack(const Emit& e) { return stack_on(e, 0, 2, 3); }

std::vector<int> append(const Emit& e) {
  int a = as_f32(e, e.value(0)), b = as_f32(e, e.value(1));
  if (!e.config().has("axis")) {
    a = e.reshape(a, {e.shape(a).numel()});
    b = e.reshape(b, {e.shape(b).numel()});
    return {e.add("concat", {a, b}, Attrs{{"axis", std::int64_t{0}}}, "append")};
  }
  return {e.add("concat", {a, b}, Attrs{{"axis", e.axis(e.config().i("axis"), e.rank(a))}}, "append")};
}

std::vector<int> diff(const Emit& e) {
  int x = as_f32(e, e.value(0));
  const int axis = static_cast<int>(e.axis(e.config().i_or("axis", -1), e.rank(x)));
  const std::int64_t n = e.config().i_or("n", 1);
  if (n < 0) e.invalid("\"n\" must be >= 0");
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int64_t len = e.shape(x)[axis];
    if (len < 2) e.unsupported("a difference that leaves an empty axis is not supported");
    x = e.binary("subtract", crop_axis(e, x, axis, 1, len - 1), crop_axis(e, x, axis, 0, len - 1));
  }
  return {x};
}

// select(condlist, choicelist, default): the choice of the first true condition, from the
// last condition back to the first, each a `where`.
std::vector<int> select(const Emit& e) {
  const std::vector<int> conds = e.values(0), choices = e.values(1);
  if (conds.size() != choices.size() || conds.empty()) e.invalid("condlist and choicelist must be equally long, not empty");
  int out = e.args.size() > 2 && e.args[2].kind != OperationArg::Kind::none ? as_f32(e, e.value(2))
                                                                              : fill(e, choices[0], {1}, 0.0);
  for (std::size_t i = conds.size(); i-- > 0;) {
    auto [c, v] = e.same_dtype(as_f32(e, conds[i]), as_f32(e, choices[i]));
    out = e.add("where", {c, v, e.same_dtype(v, out).second}, {}, "select");
  }
  return {out};
}

std::vector<int> meshgrid(const Emit& e) {
  std::vector<int> xs;
  for (std::size_t k = 0; k < e.args.size(); ++k) xs.push_back(as_f32(e, e.value(k)));
  const bool xy = e.config().s_or("indexing", "xy") == "xy";
  Dims dims;
  for (int v : xs) {
    if (e.rank(v) != 1) e.unsupported("meshgrid of tensors that are not 1-D is not supported");
    dims.push_back(e.shape(v)[0]);
  }
  if (xy && dims.size() >= 2) std::swap(dims[0], dims[1]);
  std::vector<int> out;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    std::size_t at = i;
    if (xy && xs.size() >= 2 && i < 2) at = 1 - i;
    Dims one(dims.size(), 1);
    one[at] = dims[at];
    const int shaped = e.reshape(xs[i], one);
    out.push_back(one == dims ? shaped : e.add("broadcast_to", {shaped}, Attrs{{"shape", dims}}, "meshgrid"));
  }
  return out;
}

}  // namespace

void add_array_emitters(std::map<std::string, Emitter>& t) {
  const std::map<std::string, Emitter> mine{
      {"Split", split}, {"ArraySplit", array_split}, {"Hsplit", hsplit}, {"Vsplit", vsplit}, {"Dsplit", dsplit},
      {"Unstack", unstack}, {"Flip", flip}, {"Fliplr", fliplr}, {"Flipud", flipud}, {"Rot90", rot90}, {"Roll", roll},
      {"Tril", tril}, {"Triu", triu}, {"Slice", slice}, {"SliceUpdate", slice_update}, {"BroadcastTo", broadcast_to},
      {"Ravel", ravel}, {"Hstack", hstack}, {"Vstack", vstack}, {"Dstack", dstack}, {"Append", append}, {"Diff", diff},
      {"Select", select}, {"Meshgrid", meshgrid},
      // operation_contraction_emitters.cpp
      {"Einsum", einsum}, {"Tensordot", tensordot}, {"Dot", dot}, {"Inner", inner}, {"Vdot", vdot}, {"Outer", outer},
      {"Kron", kron}, {"Cross", cross}, {"Diagonal", diagonal}, {"Trace", trace}, {"Diag", diag},
      {"Diagflat", diagflat},
      // operation_gather_emitters.cpp
      {"Take", take}, {"TakeAlongAxis", take_along_axis}, {"TopK", top_k}, {"Sort", sort}, {"Argsort", argsort},
      {"InTopK", in_top_k}, {"SegmentSum", segment_sum}, {"SegmentMax", segment_max}, {"Scatter", scatter},
      {"ScatterUpdate", scatter_update}, {"SegmentMin", segment_min}, {"SegmentProd", segment_prod},
      // operation_search_emitters.cpp
      {"SearchSorted", searchsorted}, {"Digitize", digitize}, {"Vander", vander}, {"Trapezoid", trapezoid},
      {"UnravelIndex", unravel_index}, {"Correlate", correlate},
  };
  t.insert(mine.begin(), mine.end());
}

int array_operation_outputs(const Operation& op) {
  const std::string& c = op.class_name();
  const Attrs& config = op.config();
  if (c == "Split" || c == "ArraySplit" || c == "Hsplit" || c == "Vsplit" || c == "Dsplit") {
    if (is_int(config, "indices_or_sections")) return static_cast<int>(config.i("indices_or_sections"));
    return config.has("indices_or_sections") ? static_cast<int>(config.ints("indices_or_sections").size()) + 1 : 1;
  }
  if (c == "TopK") return 2;
  if (c == "UnravelIndex") {
    return !config.has("shape") || is_int(config, "shape") ? 1 : static_cast<int>(config.ints("shape").size());
  }
  const std::vector<OperationArg> args = op.call_arguments().operation_args;
  if (c == "Meshgrid") return static_cast<int>(args.size());
  if (c == "Unstack") {
    if (config.has("num")) return static_cast<int>(config.i("num"));
    if (args.empty()) return 1;
    const Dims& shape = args[0].shape;  // the tensor's shape as recorded
    const std::int64_t r = static_cast<std::int64_t>(shape.size());
    std::int64_t axis = config.i_or("axis", 0);
    if (axis < 0) axis += r;
    if (axis < 0 || axis >= r || shape[static_cast<std::size_t>(axis)] < 1) {
      throw Unsupported(op.name() + " (Unstack): the unstacked axis's size must be known (give \"num\")",
                        "keras.ops.unstack(x, num=..., axis=...)");
    }
    return static_cast<int>(shape[static_cast<std::size_t>(axis)]);
  }
  return 0;
}

}  // namespace nnfit::operation_emit
