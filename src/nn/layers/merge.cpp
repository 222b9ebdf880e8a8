// The merge layers. Element-wise merges chain binary ops (add_n for Add and Average);
// inputs whose shapes differ broadcast as Keras's Merge does (NumPy's rules over the
// non-batch axes: squeeze-and-excite's (h, w, c) * (1, 1, c)) through the broadcasting
// `binary` op, which only such merges use; Concatenate is one concat op; Dot is a batch_matmul over 3-D views of its inputs, so
// every axes combination Keras allows for rank <= 2 maps to transposes of one kernel.
#include <algorithm>
#include <optional>

#include "nnfit/core/error.h"
#include "nnfit/nn/merge_layers.h"

namespace nnfit {

namespace {

const char* merge_class(MergeOp op) {
  switch (op) {
    case MergeOp::add: return "Add";
    case MergeOp::subtract: return "Subtract";
    case MergeOp::multiply: return "Multiply";
    case MergeOp::average: return "Average";
    case MergeOp::maximum: return "Maximum";
    case MergeOp::minimum: return "Minimum";
  }
  return "?";
}

}  // namespace

Merge::Merge(std::string name, MergeOp op) : Layer(std::move(name)), op_(op) {}

std::string Merge::class_name() const { return merge_class(op_); }

namespace {

// Keras's Merge._compute_elemwise_op_output_shape: axes aligned from the right, each pair
// equal or one of them 1 (unknown if either is); none if they do not broadcast.
std::optional<Shape> broadcast_pair(const Shape& a, const Shape& b) {
  const std::int64_t rank = std::max(a.rank(), b.rank());
  std::vector<std::int64_t> out(static_cast<std::size_t>(rank));
  for (std::int64_t i = 0; i < rank; ++i) {
    const std::int64_t da = i < rank - a.rank() ? 1 : a[i - (rank - a.rank())];
    const std::int64_t db = i < rank - b.rank() ? 1 : b[i - (rank - b.rank())];
    if (da < 0 || db < 0) {  // known per batch, as Keras's None (Note [Shapes known per batch])
      out[static_cast<std::size_t>(i)] = kUnknownDim;
      continue;
    }
    if (da != db && da != 1 && db != 1) return std::nullopt;
    out[static_cast<std::size_t>(i)] = da == 1 ? db : da;
  }
  return Shape(out);
}

}  // namespace

std::vector<Shape> Merge::compute_output_shapes(const std::vector<Shape>& in) const {
  if (op_ == MergeOp::subtract) {
    NNFIT_CHECK(in.size() == 2, InvalidArgument, name(), ": Subtract takes exactly 2 inputs, got ", in.size());
  } else {
    NNFIT_CHECK(in.size() >= 1, InvalidArgument, name(), ": ", class_name(), " needs at least one input");
  }
  Shape out = in[0];
  for (std::size_t i = 1; i < in.size(); ++i) {
    const std::optional<Shape> s = broadcast_pair(out, in[i]);
    NNFIT_CHECK(s.has_value(), InvalidArgument, name(), ": ", class_name(), " cannot combine inputs of shapes ",
                out.to_string(), " and ", in[i].to_string(), " (without the batch axis): each axis, aligned from the "
                "right, must be equal or 1 in one of them");
    out = *s;
  }
  return {out};
}

void Merge::build_for(const std::vector<Shape>& in, WeightFactory&) {
  compute_output_shapes(in);
  built_ = true;
}

std::vector<int> Merge::call_on(GraphBuilder& b, const std::vector<int>& xs) {
  Graph& g = b.graph();
  const std::string& n = name();
  bool same = true;
  for (int x : xs) same = same && g.desc(x).shape == g.desc(xs[0]).shape;
  if (!same) return {broadcast_merge(g, xs)};
  switch (op_) {
    case MergeOp::add: return {xs.size() == 1 ? xs[0] : g.add("add_n", xs, {}, n + "/add")};
    case MergeOp::average: {
      const int sum = xs.size() == 1 ? xs[0] : g.add("add_n", xs, {}, n + "/add");
      Attrs a;
      a.set("factor", 1.0 / static_cast<double>(xs.size()));
      return {g.add("scale", {sum}, a, n + "/scale")};
    }
    case MergeOp::subtract: return {g.add("sub", {xs[0], xs[1]}, {}, n + "/sub")};
    case MergeOp::multiply:
    case MergeOp::maximum:
    case MergeOp::minimum: {
      const char* op = op_ == MergeOp::multiply ? "mul" : op_ == MergeOp::maximum ? "maximum" : "minimum";
      int y = xs[0];
      for (std::size_t i = 1; i < xs.size(); ++i) y = g.add(op, {y, xs[i]}, {}, n + "/" + op + std::to_string(i));
      return {y};
    }
  }
  return {};
}

// Inputs of different shapes: a chain of broadcasting `binary` ops (Average: their sum, scaled).
int Merge::broadcast_merge(Graph& g, const std::vector<int>& xs) const {
  const std::string& n = name();
  const char* kind = op_ == MergeOp::subtract   ? "subtract"
                     : op_ == MergeOp::multiply ? "multiply"
                     : op_ == MergeOp::maximum  ? "maximum"
                     : op_ == MergeOp::minimum  ? "minimum"
                                                : "add";
  int y = xs[0];
  for (std::size_t i = 1; i < xs.size(); ++i) {
    y = g.add("binary", {y, xs[i]}, Attrs{{"kind", std::string(kind)}}, n + "/" + kind + std::to_string(i));
  }
  if (op_ == MergeOp::average) {
    Attrs a;
    a.set("factor", 1.0 / static_cast<double>(xs.size()));
    y = g.add("scale", {y}, a, n + "/scale");
  }
  return y;
}

namespace {

// Keras 3's compute_mask of the merge layers: the OR (maximum) of the masks when every
// input has one, else none (Concatenate's all-ones mask for an unmasked input makes the
// OR all ones too). tf.keras's Merge ANDed the masks present instead.
int or_of_masks(Graph& g, const std::vector<int>& masks, const std::string& name) {
  int out = -1;
  for (int m : masks) {
    if (m < 0) return -1;
    out = out < 0 ? m : g.add("maximum", {out, m}, {}, name + "/mask_or");
  }
  return out;
}

}  // namespace

std::vector<int> Merge::call_masked(GraphBuilder& b, const std::vector<int>& inputs, const std::vector<int>& masks,
                                    std::vector<int>& output_masks) {
  std::vector<int> out = call_on(b, inputs);
  output_masks = {or_of_masks(b.graph(), masks, name())};
  return out;
}

Concatenate::Concatenate(std::string name, std::int64_t axis) : Layer(std::move(name)), axis_(axis) {}

std::int64_t Concatenate::feature_axis(std::int64_t rank) const {
  const std::int64_t a = axis_ < 0 ? axis_ + rank + 1 : axis_;  // counting the batch axis
  NNFIT_CHECK(a >= 1 && a <= rank, InvalidArgument, name(), ": axis ", axis_, " is out of range for inputs of rank ",
              rank + 1, " (with the batch axis); concatenating along the batch axis is not supported");
  return a - 1;
}

std::vector<Shape> Concatenate::compute_output_shapes(const std::vector<Shape>& in) const {
  NNFIT_CHECK(in.size() >= 2, InvalidArgument, name(), ": Concatenate needs at least 2 inputs, got ", in.size());
  const std::int64_t rank = in[0].rank();
  const std::int64_t a = feature_axis(rank);
  std::vector<std::int64_t> out = in[0].dims();
  for (std::size_t i = 1; i < in.size(); ++i) {
    bool fits = in[i].rank() == rank;
    for (std::int64_t d = 0; fits && d < rank; ++d) fits = d == a || in[i][d] == in[0][d];
    NNFIT_CHECK(fits, InvalidArgument, name(), ": inputs of shapes ", in[0].to_string(), " and ", in[i].to_string(),
                " can only be concatenated along an axis where they differ (axis ", axis_, ")");
    std::int64_t& along = out[static_cast<std::size_t>(a)];
    along = along < 0 || in[i][a] < 0 ? kUnknownDim : along + in[i][a];  // Note [Shapes known per batch]
  }
  return {Shape(out)};
}

void Concatenate::build_for(const std::vector<Shape>& in, WeightFactory&) {
  compute_output_shapes(in);
  built_ = true;
}

std::vector<int> Concatenate::call_on(GraphBuilder& b, const std::vector<int>& xs) {
  const std::int64_t rank = b.graph().desc(xs[0]).shape.rank() - 1;
  Attrs a;
  a.set("axis", feature_axis(rank) + 1);
  return {b.graph().add("concat", xs, a, name() + "/concat")};
}

std::vector<int> Concatenate::call_masked(GraphBuilder& b, const std::vector<int>& inputs,
                                          const std::vector<int>& masks, std::vector<int>& output_masks) {
  std::vector<int> out = call_on(b, inputs);
  const int mask = or_of_masks(b.graph(), masks, name());
  if (mask >= 0) {
    const std::int64_t rank = b.graph().desc(inputs[0]).shape.rank() - 1;
    NNFIT_CHECK(feature_axis(rank) == rank - 1, Unsupported, name(),
                ": concatenating masked inputs along an axis other than the last is not supported");
  }
  output_masks = {mask};
  return out;
}

Dot::Dot(std::string name, std::array<std::int64_t, 2> axes, bool normalize)
    : Layer(std::move(name)), axes_(axes), normalize_(normalize) {}

std::int64_t Dot::axis(std::size_t i, const Shape& s) const {
  NNFIT_CHECK(s.rank() == 1 || s.rank() == 2, Unsupported, name(), ": Dot takes inputs of rank 2 or 3 (with the ",
              "batch axis), input ", i, " has shape ", s.to_string());
  const std::int64_t a = axes_[i] < 0 ? axes_[i] + s.rank() + 1 : axes_[i];
  NNFIT_CHECK(a >= 1 && a <= s.rank(), InvalidArgument, name(), ": axis ", axes_[i], " is out of range for input ", i,
              " of shape ", s.to_string(), " (the batch axis cannot be contracted)");
  return a;
}

std::vector<Shape> Dot::compute_output_shapes(const std::vector<Shape>& in) const {
  NNFIT_CHECK(in.size() == 2, InvalidArgument, name(), ": Dot takes exactly 2 inputs, got ", in.size());
  const std::int64_t a0 = axis(0, in[0]), a1 = axis(1, in[1]);
  NNFIT_CHECK(in[0][a0 - 1] == in[1][a1 - 1], InvalidArgument, name(), ": cannot contract axis ", a0, " of ",
              in[0].to_string(), " (size ", in[0][a0 - 1], ") with axis ", a1, " of ", in[1].to_string(), " (size ",
              in[1][a1 - 1], ")");
  std::vector<std::int64_t> out;
  for (std::int64_t d = 0; d < in[0].rank(); ++d) {
    if (d != a0 - 1) out.push_back(in[0][d]);
  }
  for (std::int64_t d = 0; d < in[1].rank(); ++d) {
    if (d != a1 - 1) out.push_back(in[1][d]);
  }
  if (out.empty()) out.push_back(1);  // Keras's batch_dot of two vectors: (batch, 1)
  return {Shape(out)};
}

void Dot::build_for(const std::vector<Shape>& in, WeightFactory&) {
  compute_output_shapes(in);
  built_ = true;
}

std::vector<int> Dot::call_on(GraphBuilder& b, const std::vector<int>& xs) {
  Graph& g = b.graph();
  std::vector<Shape> sample;
  for (int x : xs) {
    const Shape& s = g.desc(x).shape;
    sample.push_back(Shape(std::vector<std::int64_t>(s.dims().begin() + 1, s.dims().end())));
  }
  const Shape out = compute_output_shapes(sample)[0];
  const std::int64_t batch = g.desc(xs[0]).shape[0];
  int v[2];
  bool transpose[2];
  for (std::size_t i = 0; i < 2; ++i) {
    const std::int64_t a = axis(i, sample[i]);
    v[i] = xs[i];
    if (normalize_) {
      Attrs na;
      na.set("axis", a);
      v[i] = g.add("l2_normalize", {v[i]}, na, name() + "/l2_normalize" + std::to_string(i));
    }
    if (sample[i].rank() == 1) {
      // A vector is a [1, n] matrix on the left and an [n, 1] one on the right.
      const std::int64_t n = sample[i][0];
      v[i] = emit_reshape(b.graph(), v[i], i == 0 ? std::vector<std::int64_t>{batch, 1, n} : std::vector<std::int64_t>{batch, n, 1},
                        name() + "/as_matrix" + std::to_string(i));
      transpose[i] = false;
    } else {
      // Left operand contracts its last axis, right operand its first (of the two).
      transpose[i] = i == 0 ? a == 1 : a == 2;
    }
  }
  Attrs ma;
  ma.set("transpose_a", std::int64_t{transpose[0]});
  ma.set("transpose_b", std::int64_t{transpose[1]});
  const int y = g.add("batch_matmul", {v[0], v[1]}, ma, name() + "/batch_matmul");
  std::vector<std::int64_t> dims{batch};
  dims.insert(dims.end(), out.dims().begin(), out.dims().end());
  return {emit_reshape(b.graph(), y, dims, name() + "/reshape")};
}

}  // namespace nnfit
