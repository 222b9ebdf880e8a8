// The emitters of Keras 3's operations (Note [Keras operations] in operation.cpp): one
// function per operation class, listed in emitters() by Keras's class name. Each turns the
// operation's config and arguments into engine ops on graph values whose shapes carry the
// batch axis: element-wise math through `unary` and the broadcasting `binary`, reductions
// through reduce_mean/reduce_max/`reduce`, activations through `activation` (Keras's own
// formulas); the shape-changing ones are in operation_shape_emitters.cpp. Same-shape
// arithmetic keeps the older same-shape ops (sub, mul, add_n), whose kernels are faster.
#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include "nn/layers/operation_emit.h"

namespace nnfit {
namespace {

using namespace operation_emit;  // NOLINT: the emitters' shared vocabulary

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
  // x + bias with a vector along the last axis (a subclassed layer's `ops.conv(x, k) + b`)
  // is the layers' bias_add: one pass, and the fusion rewrite folds it into a convolution
  // or matmul before it, as it does for Conv2D and Dense.
  const auto is_bias = [&](int v, int of) {
    return e.rank(v) == 1 && e.rank(of) >= 2 && e.shape(v)[0] == e.shape(of).dim(-1) &&
           is_floating(e.g.desc(v).dtype) && is_floating(e.g.desc(of).dtype);
  };
  if (kind == "add" && is_bias(b, a)) return {e.add("bias_add", {a, b}, {}, kind)};
  if (kind == "add" && is_bias(a, b)) return {e.add("bias_add", {b, a}, {}, kind)};
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

std::vector<int> cast(const Emit& e) {
  const int x = e.value(0);
  const std::string to = e.config().s_or("dtype", "float32");
  if (to == "bool") {  // 0/1 floats, as nnfit's comparisons give: x != 0 (NaN is true, as in Keras)
    const int f = is_floating(e.g.desc(x).dtype) ? x : e.add("cast", {x}, Attrs{{"dtype", std::string("float32")}}, "cast");
    return {e.unary("logical_not", e.unary("logical_not", f))};
  }
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
               kGreater[] = "greater", kGreaterEqual[] = "greater_equal", kLogicalXor[] = "logical_xor",
               kNotEqual[] = "not_equal", kLogicalAnd[] = "logical_and", kLogicalOr[] = "logical_or";
constexpr char kSum[] = "sum", kMean[] = "mean", kMax[] = "max", kMin[] = "min", kProd[] = "prod", kArgmax[] = "argmax",
               kArgmin[] = "argmin", kCumsum[] = "cumsum", kCumprod[] = "cumprod";
constexpr char kRelu[] = "relu", kRelu6[] = "relu6", kSigmoid[] = "sigmoid", kTanh[] = "tanh", kSilu[] = "silu",
               kElu[] = "elu", kSelu[] = "selu", kSoftplus[] = "softplus", kSoftsign[] = "softsign",
               kLeakyRelu[] = "leaky_relu", kHardSigmoid[] = "hard_sigmoid", kHardSilu[] = "hard_silu",
               kMish[] = "mish";

// Keras's operation classes (keras.src.ops.numpy, .nn, .math, .core) nnfit emits.
const std::map<std::string, Emitter>& emitters() {
  static const std::map<std::string, Emitter> table = [] {
    std::map<std::string, Emitter> t{
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
      {"GreaterEqual", binary_op<kGreaterEqual>}, {"LogicalXor", binary_op<kLogicalXor>},
      // Also mask layers (LogicalOp) where a Functional graph carries masks; as operations
      // (keras.ops on arrays, a traced loss or metric) they are these element-wise kinds.
      {"NotEqual", binary_op<kNotEqual>}, {"LogicalAnd", binary_op<kLogicalAnd>}, {"LogicalOr", binary_op<kLogicalOr>},
      {"Where", where},
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
      // keras.random in a traced call (nnfit's own nodes: random_operations.cpp)
      {"RandomNormal", random_draw}, {"RandomUniform", random_draw}, {"RandomTruncatedNormal", random_draw},
    };
    add_nn_emitters(t);  // keras.src.ops.nn: convolutions, poolings, attention, normalizations, losses
    add_array_emitters(t);  // keras.src.ops.numpy/core/math: the array operations
    add_math_emitters(t);  // operation_math_emitters.cpp
    add_image_emitters(t);  // operation_image_emitters.cpp
    return t;
  }();
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

int operation_outputs(const Operation& op) {
  const int array = operation_emit::array_operation_outputs(op);
  return array > 0 ? array : nn_operation_outputs(op.class_name());
}

bool has_operation(const std::string& class_name) { return emitters().count(class_name) != 0; }

std::vector<std::string> operation_classes() {
  std::vector<std::string> out;
  for (const auto& [name, f] : emitters()) out.push_back(name);
  return out;
}

}  // namespace nnfit
