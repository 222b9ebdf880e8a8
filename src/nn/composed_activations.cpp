// The activations Keras 3 added, composed of engine ops (composed_activations.h). Each
// follows keras/src/backend/tensorflow/nn.py line for line; the comparisons and `where`
// pass no gradient to their condition, as TensorFlow's do. sparsemax is Keras's formula
// (which sums the cumulative sums over the support, not the standard sparsemax's
// threshold): the sort it starts with is replaced by pairwise comparisons, rank_i = #{j:
// z_j ≥ z_i} and cumsum_i = Σ_{z_j ≥ z_i} z_j, equal to the sorted form wherever the
// values differ (tied values count together), O(C²) along the axis.
#include "nn/composed_activations.h"

#include <cmath>
#include <set>

#include "nnfit/core/error.h"
#include "nnfit/nn/layer.h"

namespace nnfit {
namespace {

// The ops of one activation, named under its prefix.
struct Ops {
  Graph& g;
  std::string prefix;

  int add(const std::string& op, const std::vector<int>& in, Attrs a, const std::string& what) const {
    return g.add(op, in, std::move(a), prefix + "/" + what);
  }
  int unary(const std::string& kind, int x) const { return add("unary", {x}, Attrs{{"kind", kind}}, kind); }
  int binary(const std::string& kind, int a, int b) const { return add("binary", {a, b}, Attrs{{"kind", kind}}, kind); }
  int act(const std::string& kind, int x) const { return add("activation", {x}, Attrs{{"kind", kind}}, kind); }
  int scale(int x, double factor, double offset) const {
    return add("scale", {x}, Attrs{{"factor", factor}, {"offset", offset}}, "scale");
  }
  int fill(int like, double v) const { return scale(like, 0.0, v); }  // `like` is finite where it is used
  int where(int cond, int a, int b) const { return add("where", {cond, a, b}, {}, "where"); }
  int sum(int x, std::int64_t axis, bool keep) const {
    return add("reduce", {x}, Attrs{{"axes", std::vector<std::int64_t>{axis}}, {"keepdims", std::int64_t{keep ? 1 : 0}},
                                    {"kind", std::string("sum")}}, "sum");
  }
};

const std::set<std::string>& names() {
  static const std::set<std::string> kNames{"celu", "glu", "hard_shrink", "hard_tanh", "log_sigmoid", "soft_shrink",
                                            "sparse_plus", "sparse_sigmoid", "sparsemax", "squareplus", "tanh_shrink",
                                            "threshold"};
  return kNames;
}

std::int64_t axis_of(const Graph& g, int x, std::int64_t axis, const std::string& prefix) {
  const int r = g.desc(x).shape.rank();
  NNFIT_CHECK(axis >= -r && axis < r, InvalidArgument, prefix, ": axis ", axis, " is out of range for a tensor of rank ", r);
  return axis < 0 ? axis + r : axis;
}

// glu: the first half along the axis times the sigmoid of the second (crops: differentiable).
int glu(const Ops& o, int x, std::int64_t axis) {
  const Shape s = o.g.desc(x).shape;
  const std::int64_t n = s[static_cast<int>(axis)];
  NNFIT_CHECK(n % 2 == 0, InvalidArgument, o.prefix, ": axis size must be divisible by 2. Received: x.shape=", s.to_string(),
              " with axis=", axis);
  std::vector<std::int64_t> begin(static_cast<std::size_t>(s.rank()), 0), half = s.dims();
  half[static_cast<std::size_t>(axis)] = n / 2;
  const int a = o.add("crop", {x}, Attrs{{"begin", begin}, {"shape", half}}, "first_half");
  begin[static_cast<std::size_t>(axis)] = n / 2;
  const int b = o.add("crop", {x}, Attrs{{"begin", begin}, {"shape", half}}, "second_half");
  return o.add("mul", {a, o.act("sigmoid", b)}, {}, "glu");
}

// sparsemax on rows [R, C] (the axis moved last by emit_on_axes).
int sparsemax_rows(const Ops& o, int z) {
  const Shape s = o.g.desc(z).shape;
  const std::int64_t rows = s[0], c = s[1];
  const int zi = emit_reshape(o.g, z, {rows, c, 1}, o.prefix + "/z_i");
  const int zj = emit_reshape(o.g, z, {rows, 1, c}, o.prefix + "/z_j");
  const int ge = o.binary("greater_equal", zj, zi);  // [R, C, C]: z_j >= z_i
  const int rank = o.sum(ge, 2, false);
  const int cumsum = o.sum(o.binary("multiply", ge, zj), 2, false);
  const int bound = o.binary("divide", o.scale(cumsum, 1.0, -1.0), rank);
  const int support = o.binary("greater", o.add("sub", {z, bound}, {}, "margin"), o.fill(z, 0.0));
  const int k = o.sum(support, 1, true);
  const int total = o.sum(o.add("mul", {support, cumsum}, {}, "support_cumsum"), 1, true);
  const int tau = o.binary("divide", o.scale(total, 1.0, -1.0), k);
  const int shifted = o.binary("subtract", z, tau);
  return o.add("maximum", {shifted, o.fill(shifted, 0.0)}, {}, "sparsemax");
}

}  // namespace

bool is_composed_activation(const std::string& name) { return names().count(name) != 0; }

int emit_composed_activation(Graph& g, int x, const std::string& name, const ComposedActivationArgs& args,
                             const std::string& prefix) {
  const Ops o{g, prefix + "/" + name};
  if (name == "celu") {
    const int zero = o.fill(x, 0.0);
    const int neg = o.scale(o.unary("expm1", o.scale(o.add("minimum", {x, zero}, {}, "negative_part"), 1.0 / args.alpha, 0.0)),
                            args.alpha, 0.0);
    return o.add("add_n", {o.add("maximum", {x, zero}, {}, "positive_part"), neg}, {}, "celu");
  }
  if (name == "glu") return glu(o, x, axis_of(g, x, args.axis, prefix));
  if (name == "hard_tanh") {
    return o.add("minimum", {o.add("maximum", {x, o.fill(x, -1.0)}, {}, "low"), o.fill(x, 1.0)}, {}, "high");
  }
  if (name == "hard_shrink") return o.where(o.binary("greater", o.unary("abs", x), o.fill(x, args.threshold)), x, o.fill(x, 0.0));
  if (name == "soft_shrink") {
    const double t = args.threshold;
    const int inner = o.where(o.binary("less", x, o.fill(x, -t)), o.scale(x, 1.0, t), o.fill(x, 0.0));
    return o.where(o.binary("greater", x, o.fill(x, t)), o.scale(x, 1.0, -t), inner);
  }
  if (name == "log_sigmoid") return o.scale(o.act("softplus", o.scale(x, -1.0, 0.0)), -1.0, 0.0);
  if (name == "sparse_plus") {
    const int inner = o.where(o.binary("less", x, o.fill(x, 1.0)), o.scale(o.unary("square", o.scale(x, 1.0, 1.0)), 0.25, 0.0), x);
    return o.where(o.binary("less_equal", x, o.fill(x, -1.0)), o.fill(x, 0.0), inner);
  }
  if (name == "sparse_sigmoid") {
    const int inner = o.where(o.binary("greater_equal", x, o.fill(x, 1.0)), o.fill(x, 1.0), o.scale(x, 0.5, 0.5));
    return o.where(o.binary("less_equal", x, o.fill(x, -1.0)), o.fill(x, 0.0), inner);
  }
  if (name == "squareplus") {
    return o.scale(o.add("add_n", {x, o.unary("sqrt", o.scale(o.unary("square", x), 1.0, args.b))}, {}, "sum"), 0.5, 0.0);
  }
  if (name == "tanh_shrink") return o.add("sub", {x, o.act("tanh", x)}, {}, "tanh_shrink");
  if (name == "threshold") {
    return o.where(o.binary("greater", x, o.fill(x, args.threshold)), x, o.fill(x, args.default_value));
  }
  if (name == "sparsemax") {
    const std::int64_t axis = axis_of(g, x, args.axis, prefix);
    return emit_on_axes(g, x, {axis}, o.prefix, [&](int rows) { return sparsemax_rows(o, rows); });
  }
  throw InvalidArgument(prefix + ": '" + name + "' is not one of the composed activations");
}

}  // namespace nnfit
