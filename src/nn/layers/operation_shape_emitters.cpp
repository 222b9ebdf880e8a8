// The emitters of Keras's shape-changing operations (Note [Keras operations] in
// operation.cpp): reshape, transpose, expand_dims/squeeze, concatenate/stack, tile,
// repeat, pad, GetItem's keys, matmul (one matmul over flattened rows, or batch_matmul)
// and image.resize; on graph shapes, whose axis 0 is a model's batch.
#include "nn/layers/operation_emit.h"

#include <algorithm>

namespace nnfit::operation_emit {

std::vector<int> reshape(const Emit& e) {
  const int x = e.value(0);
  Dims dims = e.config().ints("newshape");
  const Shape s = e.shape(x);
  std::int64_t known = 1, unknown = -1;
  // Two -1s, the first in front: the front one is axis 0's size (a model's batch, which a
  // reshape keeps in place), the other the rest. nnfit.keras writes this for a traced
  // call's reshape to a dimension known only per batch (Note [Dimensions known per batch]
  // in python/nnfit/keras/ops/_dims.py); Keras's own files hold at most one -1.
  if (dims.size() >= 2 && s.rank() >= 1 && dims[0] == -1 && std::count(dims.begin() + 1, dims.end(), -1) == 1) {
    dims[0] = s[0];
  }
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < -1) e.invalid("\"newshape\" holds " + std::to_string(dims[i]) + ": sizes are >= 0, or one -1");
    if (dims[i] == -1) {
      if (unknown >= 0) e.invalid("\"newshape\" may hold one -1");
      unknown = static_cast<std::int64_t>(i);
    } else if (__builtin_mul_overflow(known, dims[i], &known)) {
      e.invalid("\"newshape\" holds more elements than a tensor can");
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
  // Each axis a of size d repeated r times: a new axis of r before it, broadcast, then the
  // two merged (r·d): the copies in order, as NumPy's tile.
  for (std::size_t a = 0; a < reps.size(); ++a) {
    if (reps[a] < 1) e.invalid("\"repeats\" must be positive");
    if (reps[a] == 1) continue;
    Dims dims = e.shape(x).dims(), wide = dims, merged = dims;
    if (__builtin_mul_overflow(merged[a], reps[a], &merged[a]) || Shape(merged).numel() < 0) {
      e.invalid("\"repeats\" makes more elements than a tensor can hold");
    }
    dims.insert(dims.begin() + static_cast<std::ptrdiff_t>(a), 1);
    wide.insert(wide.begin() + static_cast<std::ptrdiff_t>(a), reps[a]);
    x = e.reshape(e.add("broadcast_to", {e.reshape(x, dims)}, Attrs{{"shape", wide}}, "tile"), merged);
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
  if (sa.numel() == 0 || sb.numel() == 0) e.unsupported("matmul of an empty tensor is not supported");
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

// keras.ops.image.resize, channels_last: the `resize` op (Keras's interpolations, antialias).
}  // namespace nnfit::operation_emit
