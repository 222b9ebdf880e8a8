// The emitters of Keras 3's operations (Note [Keras operations] in operation.cpp): one
// function per operation class, listed in kEmitters by Keras's class name. Each turns the
// operation's config and arguments into engine ops on graph values whose shapes carry the
// batch axis: element-wise math through `unary` and the broadcasting `binary`, reductions
// through reduce_mean/reduce_max/`reduce`, shapes through reshape/transpose/slice/concat,
// activations through `activation` (Keras's own formulas). Same-shape arithmetic keeps the
// older same-shape ops (sub, mul, add_n), whose kernels are the fast ones.
#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include "nnfit/core/error.h"
#include "nnfit/nn/operation.h"

namespace nnfit {
namespace {

using Dims = std::vector<std::int64_t>;

// What an emitter reads: the operation, its graph and its arguments.
struct Emit {
  const Operation& op;
  Graph& g;
  const std::vector<OperationArg>& args;
  const std::vector<int>& inputs;
  const Operation::ConstantFn& constant;

  const Attrs& config() const { return op.config(); }
  std::string node(const std::string& what) const { return what.empty() ? op.name() : op.name() + "/" + what; }
  [[noreturn]] void invalid(const std::string& msg) const {
    throw InvalidArgument(op.name() + " (" + op.class_name() + "): " + msg,
                          "the arguments are checked as Keras 3 checks them; see docs/python.md (keras.ops)");
  }
  [[noreturn]] void unsupported(const std::string& msg) const {
    throw Unsupported(op.name() + " (" + op.class_name() + "): " + msg, "docs/python.md lists what keras.ops supports");
  }

  // Argument k as a graph value: a tensor, or a number or array as its constant.
  int value(std::size_t k) const {
    if (k >= args.size()) invalid("takes at least " + std::to_string(k + 1) + " arguments, got " + std::to_string(args.size()));
    const OperationArg& a = args[k];
    switch (a.kind) {
      case OperationArg::Kind::tensor: return inputs.at(static_cast<std::size_t>(a.tensors.at(0)));
      case OperationArg::Kind::number:
      case OperationArg::Kind::constant: return constant("arg" + std::to_string(k));
      default: invalid("argument " + std::to_string(k) + " must be a tensor or a number");
    }
  }
  std::vector<int> values(std::size_t k) const {
    if (k >= args.size() || args[k].kind != OperationArg::Kind::tensors) {
      if (k < args.size() && args[k].kind == OperationArg::Kind::tensor) return {value(k)};
      invalid("argument " + std::to_string(k) + " must be a list of tensors");
    }
    std::vector<int> out;
    for (int t : args[k].tensors) out.push_back(inputs.at(static_cast<std::size_t>(t)));
    return out;
  }
  bool is_number(std::size_t k) const { return k < args.size() && args[k].kind == OperationArg::Kind::number; }
  Shape shape(int v) const { return g.desc(v).shape; }  // a copy: adding nodes moves the graph's values
  int rank(int v) const { return shape(v).rank(); }
  std::int64_t axis(std::int64_t a, int rank_of) const {
    if (a < -rank_of || a >= rank_of) {
      invalid("axis " + std::to_string(a) + " is out of range for a tensor of rank " + std::to_string(rank_of));
    }
    return a < 0 ? a + rank_of : a;
  }
  // A config key holding an axis, a list of axes or null (absent): sorted, non-negative;
  // absent: every axis.
  Dims axes(const char* key, int rank_of) const {
    Dims out;
    const auto& items = config().items();
    auto it = items.find(key);
    if (it == items.end()) {
      out.resize(static_cast<std::size_t>(rank_of));
      std::iota(out.begin(), out.end(), 0);
      return out;
    }
    if (const auto* one = std::get_if<std::int64_t>(&it->second)) {
      out.push_back(axis(*one, rank_of));
    } else if (const auto* many = std::get_if<Dims>(&it->second)) {
      for (std::int64_t a : *many) out.push_back(axis(a, rank_of));
    } else {
      invalid(std::string("\"") + key + "\" must be an axis or a list of axes");
    }
    std::sort(out.begin(), out.end());
    if (std::adjacent_find(out.begin(), out.end()) != out.end()) invalid(std::string("\"") + key + "\" repeats an axis");
    return out;
  }
  bool flag(const char* key, bool fallback) const { return config().i_or(key, fallback ? 1 : 0) != 0; }

  int add(const std::string& op_name, const std::vector<int>& in, Attrs a = {}, const std::string& what = "") const {
    return g.add(op_name, in, std::move(a), node(what.empty() ? op_name : what));
  }
  int reshape(int x, Dims dims) const { return emit_reshape(g, x, std::move(dims), node("reshape")); }
  // The two values in one floating dtype: the wider of the two (Keras's result_type).
  std::pair<int, int> same_dtype(int a, int b) const {
    const DType da = g.desc(a).dtype, db = g.desc(b).dtype;
    if (da == db) return {a, b};
    const auto to = [&](int v, DType d) { return add("cast", {v}, Attrs{{"dtype", std::string(dtype_name(d))}}, "cast"); };
    if (da == DType::f32) return {a, to(b, da)};
    if (db == DType::f32) return {to(a, db), b};
    return {a, to(b, da)};
  }
  int unary(const std::string& kind, int x) const { return add("unary", {x}, Attrs{{"kind", kind}}, kind); }
  int binary(const std::string& kind, int a, int b) const {
    auto [x, y] = same_dtype(a, b);
    return add("binary", {x, y}, Attrs{{"kind", kind}}, kind);
  }
};

using Emitter = std::vector<int> (*)(const Emit&);

// Element-wise, one input: `unary`'s kind of the same name as Keras's function.
template <const char* kKind>
std::vector<int> unary_op(const Emit& e) {
  return {e.unary(kKind, e.value(0))};
}

// Activations with Keras's formulas (the `activation` op's kinds).
template <const char* kKind>
std::vector<int> activation_op(const Emit& e) {
  Attrs a{{"kind", std::string(kKind)}};
  if (e.config().has("negative_slope")) a.set("alpha", e.config().f("negative_slope"));
  if (e.config().has("alpha")) a.set("alpha", e.config().f("alpha"));
  return {e.add("activation", {e.value(0)}, a, kKind)};
}

std::vector<int> gelu(const Emit& e) {
  const std::string kind = e.flag("approximate", true) ? "gelu_tanh" : "gelu";
  return {e.add("activation", {e.value(0)}, Attrs{{"kind", kind}}, kind)};
}

// Binary element-wise with NumPy broadcasting. Same-shape add, subtract, multiply,
// maximum and minimum use the older same-shape ops; a number on either side of add,
// subtract, multiply or divide is a `scale` (factor·x + offset) of the tensor.
template <const char* kKind>
std::vector<int> binary_op(const Emit& e) {
  const std::string kind = kKind;
  if (e.args.size() != 2) e.invalid("takes 2 arguments, got " + std::to_string(e.args.size()));
  const bool scalar_a = e.is_number(0), scalar_b = e.is_number(1);
  if (scalar_a != scalar_b && (kind == "add" || kind == "subtract" || kind == "multiply" || kind == "divide")) {
    const double c = e.args[scalar_a ? 0 : 1].number;
    const int x = e.value(scalar_a ? 1 : 0);
    double factor = 1.0, offset = 0.0;
    if (kind == "add") offset = c;
    if (kind == "multiply") factor = c;
    if (kind == "subtract") scalar_a ? (factor = -1.0, offset = c) : (offset = -c, 0.0);
    if (kind == "divide") {
      if (scalar_a) return {e.binary(kind, e.value(0), x)};
      factor = 1.0 / c;
    }
    return {e.add("scale", {x}, Attrs{{"factor", factor}, {"offset", offset}}, kind)};
  }
  auto [a, b] = e.same_dtype(e.value(0), e.value(1));
  if (e.shape(a) == e.shape(b)) {
    static const std::map<std::string, std::string> kSame{
        {"subtract", "sub"}, {"multiply", "mul"}, {"maximum", "maximum"}, {"minimum", "minimum"}, {"add", "add_n"}};
    if (auto it = kSame.find(kind); it != kSame.end()) return {e.add(it->second, {a, b}, {}, kind)};
  }
  return {e.binary(kind, a, b)};
}

// A reduction over sorted `axes`: the engine's reductions take adjacent axes, so each run of
// adjacent axes is reduced in turn, the last run first (the earlier axes keep their
// numbers). Exact for sum, max, min, prod and logsumexp, and for mean too: every group of
// a run holds the same count.
int reduce_axes(const Emit& e, int x, const std::string& kind, const Dims& axes, bool keepdims) {
  std::vector<Dims> runs;
  for (std::int64_t a : axes) {
    if (runs.empty() || runs.back().back() + 1 != a) runs.emplace_back();
    runs.back().push_back(a);
  }
  const std::int64_t keep = keepdims ? 1 : 0;
  for (auto run = runs.rbegin(); run != runs.rend(); ++run) {
    if (kind == "mean" || kind == "max") {
      x = e.add(kind == "mean" ? "reduce_mean" : "reduce_max", {x}, Attrs{{"axes", *run}, {"keepdims", keep}}, kind);
    } else {
      x = e.add("reduce", {x}, Attrs{{"axes", *run}, {"keepdims", keep}, {"kind", kind}}, kind);
    }
  }
  return x;
}

// Reductions: Keras's axis (an int, a list or null: every axis) and keepdims.
std::vector<int> reduce_with(const Emit& e, const std::string& kind) {
  const int x = e.value(0);
  return {reduce_axes(e, x, kind, e.axes("axis", e.rank(x)), e.flag("keepdims", false))};
}

template <const char* kKind>
std::vector<int> reduce_op(const Emit& e) {
  if (e.config().has("initial")) e.unsupported("\"initial\" is not supported");
  return reduce_with(e, kKind);
}

template <const char* kKind>
std::vector<int> arg_reduce_op(const Emit& e) {
  const int x = e.value(0);
  if (!e.config().has("axis")) e.unsupported("argmax/argmin over the flattened tensor is not supported: give an axis");
  const std::int64_t axis = e.axis(e.config().i("axis"), e.rank(x));
  return {e.add("arg_reduce", {x}, Attrs{{"axis", axis}, {"keepdims", e.flag("keepdims", false) ? 1 : 0}, {"kind", std::string(kKind)}}, kKind)};
}

std::vector<int> softmax_on(const Emit& e, bool log) {
  const int x = e.value(0);
  Dims axes = e.axes("axis", e.rank(x));
  if (!e.config().has("axis")) axes = {e.rank(x) - 1};
  const auto f = [&](int v) {
    if (!log) return e.add("softmax", {v});
    // log_softmax = x - logsumexp(x), the stable form Keras's backends use.
    const int lse = e.add("reduce", {v}, Attrs{{"axes", Dims{e.rank(v) - 1}}, {"keepdims", 1}, {"kind", std::string("logsumexp")}}, "logsumexp");
    return e.binary("subtract", v, lse);
  };
  return {emit_on_axes(e.g, x, axes, e.node(log ? "log_softmax" : "softmax"), f)};
}

std::vector<int> softmax(const Emit& e) { return softmax_on(e, false); }
std::vector<int> log_softmax(const Emit& e) { return softmax_on(e, true); }

std::vector<int> reshape(const Emit& e) {
  const int x = e.value(0);
  Dims dims = e.config().ints("newshape");
  const Shape s = e.shape(x);
  std::int64_t known = 1, unknown = -1;
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == -1) {
      if (unknown >= 0) e.invalid("\"newshape\" may hold one -1");
      unknown = static_cast<std::int64_t>(i);
    } else {
      known *= dims[i];
    }
  }
  if (unknown >= 0 && known > 0) dims[static_cast<std::size_t>(unknown)] = s.numel() / known;
  if (Shape(dims).numel() != s.numel()) e.invalid("cannot reshape " + s.to_string() + " to " + Shape(dims).to_string());
  return {e.reshape(x, dims)};
}

std::vector<int> transpose(const Emit& e) {
  const int x = e.value(0);
  const int r = e.rank(x);
  Dims perm(static_cast<std::size_t>(r));
  if (e.config().has("axes")) {
    perm.clear();
    for (std::int64_t a : e.config().ints("axes")) perm.push_back(e.axis(a, r));
    Dims sorted = perm;
    std::sort(sorted.begin(), sorted.end());
    for (int i = 0; i < r; ++i) {
      if (static_cast<int>(sorted.size()) != r || sorted[static_cast<std::size_t>(i)] != i) e.invalid("\"axes\" must be a permutation");
    }
  } else {
    for (int i = 0; i < r; ++i) perm[static_cast<std::size_t>(i)] = r - 1 - i;
  }
  return {e.add("transpose", {x}, Attrs{{"perm", perm}})};
}

std::vector<int> expand_dims(const Emit& e) {
  const int x = e.value(0);
  Dims dims = e.shape(x).dims();
  const Dims axes = e.axes("axis", e.rank(x) + static_cast<int>(e.config().has("axis") ? 1 : 0));
  for (std::int64_t a : axes) dims.insert(dims.begin() + a, 1);
  return {e.reshape(x, dims)};
}

std::vector<int> squeeze(const Emit& e) {
  const int x = e.value(0);
  const Shape s = e.shape(x);
  Dims dims;
  if (!e.config().has("axis")) {
    for (std::int64_t d : s.dims()) if (d != 1) dims.push_back(d);
  } else {
    const Dims axes = e.axes("axis", s.rank());
    for (int i = 0; i < s.rank(); ++i) {
      const bool drop = std::find(axes.begin(), axes.end(), i) != axes.end();
      if (drop && s[i] != 1) e.invalid("cannot squeeze axis " + std::to_string(i) + " of size " + std::to_string(s[i]));
      if (!drop) dims.push_back(s[i]);
    }
  }
  return {e.reshape(x, dims)};
}

std::vector<int> concatenate(const Emit& e) {
  std::vector<int> xs = e.values(0);
  if (xs.empty()) e.invalid("needs at least one tensor");
  const std::int64_t axis = e.axis(e.config().i_or("axis", 0), e.rank(xs[0]));
  for (int& v : xs) v = e.same_dtype(xs[0], v).second;
  return {e.add("concat", xs, Attrs{{"axis", axis}})};
}

std::vector<int> stack(const Emit& e) {
  std::vector<int> xs = e.values(0);
  if (xs.empty()) e.invalid("needs at least one tensor");
  const std::int64_t axis = e.axis(e.config().i_or("axis", 0), e.rank(xs[0]) + 1);
  for (int& v : xs) {
    Dims dims = e.shape(v).dims();
    dims.insert(dims.begin() + axis, 1);
    v = e.reshape(e.same_dtype(xs[0], v).second, dims);
  }
  return {e.add("concat", xs, Attrs{{"axis", axis}})};
}

std::vector<int> tile(const Emit& e) {
  int x = e.value(0);
  Dims reps = e.config().ints("repeats");
  if (static_cast<int>(reps.size()) > e.rank(x)) e.unsupported("\"repeats\" longer than the tensor's rank");
  reps.insert(reps.begin(), static_cast<std::size_t>(e.rank(x)) - reps.size(), 1);
  for (std::size_t a = 0; a < reps.size(); ++a) {
    if (reps[a] < 1) e.invalid("\"repeats\" must be positive");
    if (reps[a] > 1) x = e.add("concat", std::vector<int>(static_cast<std::size_t>(reps[a]), x), Attrs{{"axis", static_cast<std::int64_t>(a)}}, "tile");
  }
  return {x};
}

std::vector<int> repeat(const Emit& e) {
  const int x = e.value(0);
  if (!e.config().has("axis")) e.unsupported("repeat over the flattened tensor is not supported: give an axis");
  const std::int64_t axis = e.axis(e.config().i("axis"), e.rank(x));
  return {e.add("repeat", {x}, Attrs{{"axis", axis}, {"repeats", e.config().i("repeats")}})};
}

std::vector<int> pad(const Emit& e) {
  const int x = e.value(0);
  if (e.config().s_or("mode", "constant") != "constant") e.unsupported("only mode=\"constant\" is supported");
  const Dims w = e.config().ints("pad_width");
  const int r = e.rank(x);
  Dims before, after;
  if (static_cast<int>(w.size()) == 2 * r) {
    for (int i = 0; i < r; ++i) before.push_back(w[2 * i]), after.push_back(w[2 * i + 1]);
  } else if (w.size() == 2) {
    before.assign(static_cast<std::size_t>(r), w[0]), after.assign(static_cast<std::size_t>(r), w[1]);
  } else {
    e.invalid("\"pad_width\" must hold a (before, after) pair per axis");
  }
  Attrs a{{"before", before}, {"after", after}};
  if (auto v = e.op.kwarg("constant_values")) a.set("value", *v);
  return {e.add("pad", {x}, a)};
}

// x[key]: integers (dropping their axis), slices of step 1, None (a new axis) and one
// Ellipsis, as Keras's GetItem takes them.
std::vector<int> get_item(const Emit& e) {
  int x = e.value(0);
  if (e.args.size() != 2) e.invalid("takes a tensor and a key");
  std::vector<IndexItem> key = e.args[1].index;
  if (e.args[1].kind == OperationArg::Kind::number && e.args[1].integer) {
    key = {IndexItem{IndexItem::Kind::integer, static_cast<std::int64_t>(e.args[1].number), {}, {}, {}}};
  } else if (e.args[1].kind == OperationArg::Kind::none) {
    key = {IndexItem{IndexItem::Kind::newaxis, 0, {}, {}, {}}};
  } else if (e.args[1].kind != OperationArg::Kind::index) {
    e.unsupported("a key that is not integers, slices, None and Ellipsis is not supported");
  }
  const Shape s = e.shape(x);
  std::size_t used = 0;
  for (const IndexItem& it : key) used += it.kind == IndexItem::Kind::integer || it.kind == IndexItem::Kind::slice;
  if (static_cast<int>(used) > s.rank()) e.invalid("too many indices for a tensor of rank " + std::to_string(s.rank()));
  Dims out_dims;
  int axis = 0;
  for (const IndexItem& it : key) {
    if (it.kind == IndexItem::Kind::ellipsis) {
      const int skip = s.rank() - static_cast<int>(used) - axis;
      for (int i = 0; i < skip; ++i) out_dims.push_back(e.shape(x)[axis++]);
      used += static_cast<std::size_t>(skip);
      continue;
    }
    if (it.kind == IndexItem::Kind::newaxis) {
      out_dims.push_back(1);
      continue;
    }
    const std::int64_t n = e.shape(x)[axis];
    std::int64_t begin = 0, size = n;
    if (it.kind == IndexItem::Kind::integer) {
      if (it.value < -n || it.value >= n) e.invalid("index " + std::to_string(it.value) + " is out of range for axis " + std::to_string(axis) + " of size " + std::to_string(n));
      begin = it.value < 0 ? it.value + n : it.value, size = 1;
    } else {
      if (it.step && *it.step != 1) e.unsupported("slices with a step other than 1 are not supported");
      const auto clamp = [n](std::int64_t v) { return std::clamp(v < 0 ? v + n : v, std::int64_t{0}, n); };
      begin = it.start ? clamp(*it.start) : 0;
      const std::int64_t end = it.stop ? clamp(*it.stop) : n;
      size = std::max<std::int64_t>(end - begin, 0);
      if (size == 0) e.unsupported("an empty slice is not supported");
    }
    if (begin != 0 || size != n) {
      // crop (whose gradient is pad) rather than slice, which has no gradient rule.
      Dims starts(static_cast<std::size_t>(e.rank(x)), 0), sizes = e.shape(x).dims();
      starts[static_cast<std::size_t>(axis)] = begin;
      sizes[static_cast<std::size_t>(axis)] = size;
      x = e.add("crop", {x}, Attrs{{"begin", starts}, {"shape", sizes}}, "slice");
    }
    if (it.kind == IndexItem::Kind::slice) out_dims.push_back(size);
    ++axis;
  }
  for (; axis < s.rank(); ++axis) out_dims.push_back(s[axis]);
  return {e.shape(x).dims() == out_dims ? x : e.reshape(x, out_dims)};
}

// matmul with NumPy's rules for the ranks models use: (..., M, K) @ (K, N) as one matmul
// over the flattened rows, (B..., M, K) @ (B..., K, N) as a batch_matmul.
std::vector<int> matmul(const Emit& e) {
  auto [a, b] = e.same_dtype(e.value(0), e.value(1));
  const Shape sa = e.shape(a), sb = e.shape(b);
  if (sa.rank() < 2 || sb.rank() < 2) e.unsupported("matmul of a vector is not supported: reshape it to a matrix");
  const std::int64_t k = sa[sa.rank() - 1];
  if (sb[sb.rank() - 2] != k) e.invalid("cannot multiply " + sa.to_string() + " by " + sb.to_string());
  if (sb.rank() == 2) {
    const int rows = e.reshape(a, {sa.numel() / k, k});
    const int y = e.add("matmul", {rows, b}, Attrs{{"transpose_a", std::int64_t{0}}, {"transpose_b", std::int64_t{0}}});
    Dims out = sa.dims();
    out.back() = sb[1];
    return {e.reshape(y, out)};
  }
  if (sa.rank() != sb.rank() || !std::equal(sa.dims().begin(), sa.dims().end() - 2, sb.dims().begin())) {
    e.unsupported("matmul broadcasting " + sa.to_string() + " against " + sb.to_string() + " is not supported");
  }
  const std::int64_t batch = sa.numel() / (sa[sa.rank() - 2] * k);
  const int a3 = e.reshape(a, {batch, sa[sa.rank() - 2], k});
  const int b3 = e.reshape(b, {batch, k, sb[sb.rank() - 1]});
  const int y = e.add("batch_matmul", {a3, b3}, Attrs{{"transpose_a", std::int64_t{0}}, {"transpose_b", std::int64_t{0}}});
  Dims out = sa.dims();
  out.back() = sb[sb.rank() - 1];
  return {e.reshape(y, out)};
}

std::vector<int> cast(const Emit& e) {
  const int x = e.value(0);
  const std::string to = e.config().s_or("dtype", "float32");
  if (to == "bool") return {x};  // nnfit's comparisons already give 0/1 floats
  if (to != "float32" && to != "float16" && to != "bfloat16" && to != "int32") {
    e.unsupported("cast to " + to + " is not supported (float32, float16, bfloat16, int32)");
  }
  return {e.g.desc(x).dtype == dtype_from_name(to) ? x : e.add("cast", {x}, Attrs{{"dtype", to}})};
}

std::vector<int> clip(const Emit& e) {
  int x = e.value(0);
  if (e.config().has("x_min")) x = e.binary("maximum", x, e.constant("x_min"));
  if (e.config().has("x_max")) x = e.binary("minimum", x, e.constant("x_max"));
  return {x};
}

std::vector<int> where(const Emit& e) {
  if (e.args.size() != 3) e.unsupported("where(condition) without x and y is not supported");
  const int cond = e.value(0);
  auto [a, b] = e.same_dtype(e.value(1), e.value(2));
  const int c = e.same_dtype(a, cond).second;
  return {e.add("where", {c, a, b})};
}

template <const char* kKind>
std::vector<int> cumulative_op(const Emit& e) {
  const int x = e.value(0);
  if (!e.config().has("axis")) e.unsupported("a cumulative sum over the flattened tensor is not supported: give an axis");
  if (e.config().has("dtype")) e.unsupported("\"dtype\" is not supported");
  return {e.add("cumulative", {x}, Attrs{{"axis", e.axis(e.config().i("axis"), e.rank(x))}, {"kind", std::string(kKind)}}, kKind)};
}

// one_hot(ids, num_classes): ids == arange(num_classes) along a new last axis, as 0/1
// floats (the ids are floats that hold integers, or an integer input cast).
std::vector<int> one_hot(const Emit& e) {
  if (e.config().i_or("axis", -1) != -1) e.unsupported("only axis=-1 is supported");
  if (e.flag("sparse", false)) e.unsupported("sparse=True is not supported");
  int ids = e.value(0);
  if (!is_floating(e.g.desc(ids).dtype)) e.unsupported("integer tensors are not supported yet: cast the ids to float32");
  Dims dims = e.shape(ids).dims();
  dims.push_back(1);
  return {e.binary("equal", e.reshape(ids, dims), e.constant("classes"))};
}

// normalize(x, axis, order=2, epsilon): x / max(norm, epsilon), Keras's formula (epsilon
// null: 1e-7, Keras's backend epsilon).
std::vector<int> normalize(const Emit& e) {
  const int x = e.value(0);
  if (e.config().i_or("order", 2) != 2) e.unsupported("only order=2 is supported");
  const Dims axes = e.axes("axis", e.rank(x));
  const int sum = reduce_axes(e, e.unary("square", x), "sum", axes, true);
  const int norm = e.unary("sqrt", sum);
  const double eps = e.config().f_or("epsilon", 1e-7);
  const int floor = e.add("scale", {norm}, Attrs{{"factor", 0.0}, {"offset", eps}}, "epsilon");
  return {e.binary("divide", x, e.binary("maximum", norm, floor))};
}

// var and std: the mean of the squared deviations from the mean (NumPy's ddof 0).
std::vector<int> variance_of(const Emit& e, bool std_dev) {
  const int x = e.value(0);
  const Dims axes = e.axes("axis", e.rank(x));
  const int mean = reduce_axes(e, x, "mean", axes, true);
  const int dev = e.unary("square", e.binary("subtract", x, mean));
  const int var = reduce_axes(e, dev, "mean", axes, e.flag("keepdims", false));
  return {std_dev ? e.unary("sqrt", var) : var};
}
std::vector<int> var(const Emit& e) { return variance_of(e, false); }
std::vector<int> std_op(const Emit& e) { return variance_of(e, true); }

std::vector<int> logsumexp(const Emit& e) { return reduce_with(e, "logsumexp"); }

std::vector<int> round_op(const Emit& e) {
  if (e.config().i_or("decimals", 0) != 0) e.unsupported("only decimals=0 is supported");
  return {e.unary("round", e.value(0))};
}

// keras.ops.image.resize, channels_last: the `resize` op (Keras's interpolations, antialias).
std::vector<int> image_resize(const Emit& e) {
  const int x = e.value(0);
  if (e.rank(x) != 4) e.unsupported("only a batch of images (rank 4) is supported");
  if (e.config().s_or("data_format", "channels_last") != "channels_last") e.unsupported("only channels_last is supported");
  if (e.flag("crop_to_aspect_ratio", false) || e.flag("pad_to_aspect_ratio", false)) {
    e.unsupported("crop_to_aspect_ratio and pad_to_aspect_ratio are not supported");
  }
  const Dims size = e.config().ints("size");
  if (size.size() != 2 || size[0] < 1 || size[1] < 1) e.invalid("\"size\" must be two positive ints");
  return {e.add("resize", {x}, Attrs{{"size", size}, {"method", e.config().s_or("interpolation", "bilinear")},
                                     {"antialias", e.flag("antialias", false) ? std::int64_t{1} : std::int64_t{0}}})};
}

// Names of the engine kinds, for the templates.
constexpr char kNegative[] = "negative", kAbs[] = "abs", kSign[] = "sign", kSquare[] = "square", kSqrt[] = "sqrt",
               kRsqrt[] = "rsqrt", kReciprocal[] = "reciprocal", kExp[] = "exp", kExpm1[] = "expm1", kLog[] = "log",
               kLog1p[] = "log1p", kLog2[] = "log2", kLog10[] = "log10", kSin[] = "sin", kCos[] = "cos", kTan[] = "tan",
               kArcsin[] = "arcsin", kArccos[] = "arccos", kArctan[] = "arctan", kSinh[] = "sinh", kCosh[] = "cosh",
               kArcsinh[] = "arcsinh", kArctanh[] = "arctanh", kErf[] = "erf", kFloor[] = "floor", kCeil[] = "ceil",
               kLogicalNot[] = "logical_not";
constexpr char kAdd[] = "add", kSubtract[] = "subtract", kMultiply[] = "multiply", kDivide[] = "divide",
               kPower[] = "power", kMaximum[] = "maximum", kMinimum[] = "minimum", kFloorDivide[] = "floor_divide",
               kMod[] = "mod", kArctan2[] = "arctan2", kEqual[] = "equal", kLess[] = "less", kLessEqual[] = "less_equal",
               kGreater[] = "greater", kGreaterEqual[] = "greater_equal", kLogicalXor[] = "logical_xor";
constexpr char kSum[] = "sum", kMean[] = "mean", kMax[] = "max", kMin[] = "min", kProd[] = "prod", kArgmax[] = "argmax",
               kArgmin[] = "argmin", kCumsum[] = "cumsum", kCumprod[] = "cumprod";
constexpr char kRelu[] = "relu", kRelu6[] = "relu6", kSigmoid[] = "sigmoid", kTanh[] = "tanh", kSilu[] = "silu",
               kElu[] = "elu", kSelu[] = "selu", kSoftplus[] = "softplus", kSoftsign[] = "softsign",
               kLeakyRelu[] = "leaky_relu", kHardSigmoid[] = "hard_sigmoid", kHardSilu[] = "hard_silu",
               kMish[] = "mish";

// Keras's operation classes (keras.src.ops.numpy, .nn, .math, .core) nnfit emits.
const std::map<std::string, Emitter>& emitters() {
  static const std::map<std::string, Emitter> table{
      // keras.src.ops.numpy: element-wise, one input
      {"Negative", unary_op<kNegative>}, {"Absolute", unary_op<kAbs>}, {"Abs", unary_op<kAbs>},
      {"Sign", unary_op<kSign>}, {"Square", unary_op<kSquare>}, {"Sqrt", unary_op<kSqrt>},
      {"Reciprocal", unary_op<kReciprocal>}, {"Exp", unary_op<kExp>}, {"Expm1", unary_op<kExpm1>},
      {"Log", unary_op<kLog>}, {"Log1p", unary_op<kLog1p>}, {"Log2", unary_op<kLog2>}, {"Log10", unary_op<kLog10>},
      {"Sin", unary_op<kSin>}, {"Cos", unary_op<kCos>}, {"Tan", unary_op<kTan>}, {"Arcsin", unary_op<kArcsin>},
      {"Arccos", unary_op<kArccos>}, {"Arctan", unary_op<kArctan>}, {"Sinh", unary_op<kSinh>},
      {"Cosh", unary_op<kCosh>}, {"Arcsinh", unary_op<kArcsinh>}, {"Arctanh", unary_op<kArctanh>},
      {"Floor", unary_op<kFloor>}, {"Ceil", unary_op<kCeil>}, {"LogicalNot", unary_op<kLogicalNot>}, {"Round", round_op},
      {"Tanh", activation_op<kTanh>},
      // two inputs, broadcasting
      {"Add", binary_op<kAdd>}, {"Subtract", binary_op<kSubtract>}, {"Multiply", binary_op<kMultiply>},
      {"Divide", binary_op<kDivide>}, {"TrueDivide", binary_op<kDivide>}, {"Power", binary_op<kPower>},
      {"Maximum", binary_op<kMaximum>}, {"Minimum", binary_op<kMinimum>}, {"FloorDivide", binary_op<kFloorDivide>},
      {"Mod", binary_op<kMod>}, {"Arctan2", binary_op<kArctan2>}, {"Equal", binary_op<kEqual>},
      {"Less", binary_op<kLess>}, {"LessEqual", binary_op<kLessEqual>}, {"Greater", binary_op<kGreater>},
      {"GreaterEqual", binary_op<kGreaterEqual>}, {"LogicalXor", binary_op<kLogicalXor>}, {"Where", where},
      {"Clip", clip},
      // reductions
      {"Sum", reduce_op<kSum>}, {"Mean", reduce_op<kMean>}, {"Max", reduce_op<kMax>}, {"Min", reduce_op<kMin>},
      {"Prod", reduce_op<kProd>}, {"Argmax", arg_reduce_op<kArgmax>}, {"Argmin", arg_reduce_op<kArgmin>},
      {"Var", var}, {"Std", std_op}, {"Cumsum", cumulative_op<kCumsum>}, {"Cumprod", cumulative_op<kCumprod>},
      // shapes
      {"Reshape", reshape}, {"Transpose", transpose}, {"ExpandDims", expand_dims}, {"Squeeze", squeeze},
      {"Concatenate", concatenate}, {"Stack", stack}, {"Tile", tile}, {"Repeat", repeat}, {"Pad", pad},
      {"GetItem", get_item}, {"Matmul", matmul},
      // keras.src.ops.core
      {"Cast", cast},
      // keras.src.ops.nn
      {"Relu", activation_op<kRelu>}, {"Relu6", activation_op<kRelu6>}, {"Sigmoid", activation_op<kSigmoid>},
      {"Silu", activation_op<kSilu>}, {"Elu", activation_op<kElu>}, {"Selu", activation_op<kSelu>},
      {"Softplus", activation_op<kSoftplus>}, {"Softsign", activation_op<kSoftsign>},
      {"LeakyRelu", activation_op<kLeakyRelu>}, {"HardSigmoid", activation_op<kHardSigmoid>},
      {"HardSilu", activation_op<kHardSilu>}, {"Mish", activation_op<kMish>}, {"Gelu", gelu}, {"Softmax", softmax},
      {"LogSoftmax", log_softmax}, {"OneHot", one_hot}, {"Normalize", normalize},
      // keras.src.ops.math
      {"Erf", unary_op<kErf>}, {"Rsqrt", unary_op<kRsqrt>}, {"Logsumexp", logsumexp},
      // keras.src.ops.image
      {"Resize", image_resize},
  };
  return table;
}

}  // namespace

std::vector<int> emit_operation(const Operation& op, Graph& graph, const std::vector<OperationArg>& args,
                                const std::vector<int>& inputs, const Operation::ConstantFn& constant) {
  auto it = emitters().find(op.class_name());
  NNFIT_CHECK(it != emitters().end(), Unsupported, op.name(), ": Keras's operation ", op.class_name(),
              " is not supported by nnfit");
  return it->second(Emit{op, graph, args, inputs, constant});
}

int operation_outputs(const Operation&) { return 1; }

bool has_operation(const std::string& class_name) { return emitters().count(class_name) != 0; }

std::vector<std::string> operation_classes() {
  std::vector<std::string> out;
  for (const auto& [name, f] : emitters()) out.push_back(name);
  return out;
}

}  // namespace nnfit
