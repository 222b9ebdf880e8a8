// The emitters of Keras 3's element-wise math, logical tests and NaN-aware reductions
// (keras.ops.isnan, hypot, logaddexp, nanmean, ...; Note [Keras operations] in
// operation.cpp), registered by add_math_emitters. Each is the composition Keras's
// TensorFlow backend computes (keras/src/backend/tensorflow/numpy.py), written with the
// engine's unary, binary, where, reduce, arg_reduce, cumulative and nan_to_num ops, so the
// values agree to float32 rounding and the gradients are those of the same formula.
// Booleans and integer results are 0/1 and whole-number floats, as everywhere in the engine
// (nnfit.keras gives the symbolic tensor Keras's dtype); integer inputs compute in float32.
//
// Note [Constants inside an emitter]: a formula's numbers (0, 1, pi, -inf, NaN) are made as
// scale(isnan(x), factor 0, offset c): isnan gives finite 0/1 for every x (so 0·v + c is c
// even where x is NaN or inf), has no gradient, and keeps x's shape and dtype. An
// operation's declared constants (Operation::constants) are for its arguments; these need
// no weight and no change to the shared operation code.
#include <cfloat>
#include <cmath>
#include <limits>
#include <map>
#include <optional>

#include "nn/layers/operation_emit.h"

namespace nnfit::operation_emit {
namespace math_emitters {  // named: the unity build joins this file with operation_emitters.cpp's names
namespace {

constexpr double kPi = 3.14159265358979323846;

int floating(const Emit& e, int v) {
  return is_floating(e.g.desc(v).dtype) ? v : e.add("cast", {v}, Attrs{{"dtype", std::string("float32")}}, "cast");
}
int input(const Emit& e, std::size_t k) { return floating(e, e.value(k)); }

// Note [Constants inside an emitter].
int constant_like(const Emit& e, int v, double c) {
  return e.add("scale", {e.unary("isnan", v)}, Attrs{{"factor", 0.0}, {"offset", c}}, "constant");
}
int scale(const Emit& e, int v, double factor, double offset = 0.0) {
  return e.add("scale", {v}, Attrs{{"factor", factor}, {"offset", offset}}, "scale");
}
int where(const Emit& e, int cond, int a, int b) {
  auto [x, y] = e.same_dtype(a, b);
  return e.add("where", {e.same_dtype(x, cond).second, x, y});
}
int logical_not(const Emit& e, int v) { return e.unary("logical_not", v); }
int nonzero(const Emit& e, int v) { return logical_not(e, logical_not(e, v)); }  // NaN counts as true, as tf.cast(bool)

// `reduce` over the config's axes (absent: every axis; an empty list: none, as NumPy).
int reduce(const Emit& e, int x, const std::string& kind, bool keepdims) {
  const Dims axes = e.axes("axis", e.rank(x));
  if (axes.empty()) return x;
  return e.add("reduce", {x}, Attrs{{"axes", axes}, {"keepdims", std::int64_t{keepdims ? 1 : 0}}, {"kind", kind}}, kind);
}
int reduce(const Emit& e, int x, const std::string& kind) { return reduce(e, x, kind, e.flag("keepdims", false)); }

// --- one input ------------------------------------------------------------------------

template <const char* kKind>
std::vector<int> unary_of_float(const Emit& e) {
  return {e.unary(kKind, input(e, 0))};
}

std::vector<int> identity(const Emit& e) { return {e.value(0)}; }
std::vector<int> zeros_like(const Emit& e) { return {constant_like(e, input(e, 0), 0.0)}; }
std::vector<int> ones_like(const Emit& e) { return {constant_like(e, input(e, 0), 1.0)}; }

// cbrt: sign(x)·|x|^(1/3) (TensorFlow's; its gradient is NaN at 0, as there).
std::vector<int> cbrt(const Emit& e) {
  const int x = input(e, 0);
  return {e.binary("multiply", e.unary("sign", x), e.binary("power", e.unary("abs", x), constant_like(e, x, 1.0 / 3.0)))};
}

std::vector<int> exp2(const Emit& e) {
  const int x = input(e, 0);
  return {e.binary("power", constant_like(e, x, 2.0), x)};
}

// deg2rad and rad2deg multiply by π/180 and 180/π rounded to float32 as TensorFlow's are.
std::vector<int> deg2rad(const Emit& e) {
  return {scale(e, input(e, 0), static_cast<float>(static_cast<float>(kPi) / 180.0f))};
}
std::vector<int> rad2deg(const Emit& e) {
  return {scale(e, input(e, 0), static_cast<float>(180.0f / static_cast<float>(kPi)))};
}

// sinc: 1 at 0, else sin(πx)/(πx).
std::vector<int> sinc(const Emit& e) {
  const int x = input(e, 0);
  const int pix = scale(e, x, static_cast<float>(kPi));
  const int zero = constant_like(e, x, 0.0);
  return {where(e, e.binary("equal", x, zero), constant_like(e, x, 1.0), e.binary("divide", e.unary("sin", pix), pix))};
}

// signbit: x < 0, or 1/x < 0 (−0 gives −inf); false for NaN, as TensorFlow's bit test of a
// positive NaN.
std::vector<int> signbit(const Emit& e) {
  const int x = input(e, 0);
  const int zero = constant_like(e, x, 0.0);
  return {e.binary("logical_or", e.binary("less", x, zero), e.binary("less", e.unary("reciprocal", x), zero))};
}

// isneginf / isposinf: isinf(x) and the sign (not a comparison with float32's largest value,
// which float16 cannot hold).
std::vector<int> isneginf(const Emit& e) {
  const int x = input(e, 0);
  return {e.binary("logical_and", e.unary("isinf", x), e.binary("less", x, constant_like(e, x, 0.0)))};
}
std::vector<int> isposinf(const Emit& e) {
  const int x = input(e, 0);
  return {e.binary("logical_and", e.unary("isinf", x), e.binary("greater", x, constant_like(e, x, 0.0)))};
}

// angle of a real number: π where x < 0, else 0 (tf.math.angle).
std::vector<int> angle(const Emit& e) {
  const int x = input(e, 0);
  const int zero = constant_like(e, x, 0.0);
  return {where(e, e.binary("less", x, zero), constant_like(e, x, static_cast<float>(kPi)), zero)};
}

// nan_to_num with NumPy's defaults: ±inf to float32's largest finite values.
std::vector<int> nan_to_num_with(const Emit& e, int x, double nan) {
  const double posinf = e.config().f_or("posinf", FLT_MAX), neginf = e.config().f_or("neginf", -FLT_MAX);
  return {e.add("nan_to_num", {x}, Attrs{{"nan", nan}, {"posinf", posinf}, {"neginf", neginf}})};
}
std::vector<int> nan_to_num(const Emit& e) {
  const int x = e.value(0);
  if (!is_floating(e.g.desc(x).dtype)) return {x};  // integers have no NaN
  return nan_to_num_with(e, x, e.config().f_or("nan", 0.0));
}

// array(x, dtype) and saturate_cast(x, dtype): the value, clipped to the dtype's range for
// saturate_cast (Keras's limits, nudged inside where float32 cannot hold them) and truncated
// toward zero for an integer dtype, as the cast does.
struct Range {
  double lo, hi;
  bool integer;
};
std::optional<Range> dtype_range(const std::string& d) {
  const auto f32 = [](double v) { return static_cast<double>(static_cast<float>(v)); };
  const auto nudged = [&](double v) {  // Keras's np.nextafter(limit, 0) where float32 rounds past it
    const float f = static_cast<float>(v);
    return static_cast<double>(f) > v || static_cast<double>(f) < v ? static_cast<double>(std::nextafter(f, 0.0f)) : f32(v);
  };
  if (d == "bool") return Range{0, 1, true};
  if (d == "uint8") return Range{0, 255, true};
  if (d == "int8") return Range{-128, 127, true};
  if (d == "uint16") return Range{0, 65535, true};
  if (d == "int16") return Range{-32768, 32767, true};
  if (d == "int32") return Range{-2147483648.0, nudged(2147483647.0), true};
  if (d == "uint32") return Range{0, nudged(4294967295.0), true};
  if (d == "int64") return Range{-9223372036854775808.0, nudged(9223372036854775807.0), true};
  if (d == "uint64") return Range{0, nudged(18446744073709551615.0), true};
  if (d == "float16") return Range{-65504.0, 65504.0, false};
  if (d == "bfloat16") return Range{-3.3895313892515355e38, 3.3895313892515355e38, false};
  if (d == "float32" || d == "float64") return Range{-static_cast<double>(FLT_MAX), static_cast<double>(FLT_MAX), false};
  return std::nullopt;
}

std::vector<int> saturate_cast(const Emit& e) {
  const int x = input(e, 0);
  const std::string to = e.config().s_or("dtype", "float32");
  const auto r = dtype_range(to);
  if (!r) e.unsupported("saturate_cast to " + to + " is not supported");
  const int clipped = e.binary("minimum", e.binary("maximum", x, constant_like(e, x, r->lo)), constant_like(e, x, r->hi));
  return {r->integer ? e.unary("trunc", clipped) : clipped};
}

std::vector<int> array(const Emit& e) {
  const int x = e.value(0);
  const std::string to = e.config().s_or("dtype", "");
  if (to.empty() || to.rfind("float", 0) == 0 || to == "bfloat16") return {to.empty() || to == "float32" ? x : floating(e, x)};
  const auto r = dtype_range(to);
  if (!r) e.unsupported("array with dtype " + to + " is not supported");
  return {to == "bool" ? nonzero(e, floating(e, x)) : e.unary("trunc", floating(e, x))};
}

// --- two inputs, broadcasting ---------------------------------------------------------

// a / b, 0 where b == 0; the division sees 1 there, so no 0/0 reaches the gradient.
int divide_no_nan_of(const Emit& e, int a, int b) {
  const int is_zero = e.binary("equal", b, constant_like(e, b, 0.0));
  const int safe = where(e, is_zero, constant_like(e, b, 1.0), b);
  const int q = e.binary("divide", a, safe);
  return where(e, is_zero, constant_like(e, q, 0.0), q);
}
std::vector<int> divide_no_nan(const Emit& e) { return {divide_no_nan_of(e, input(e, 0), input(e, 1))}; }

// hypot: max·sqrt(1 + (min/max)²) of the magnitudes, with min/max 0 where max is 0.
std::vector<int> hypot(const Emit& e) {
  const int a = e.unary("abs", input(e, 0)), b = e.unary("abs", input(e, 1));
  const int hi = e.binary("maximum", a, b), lo = e.binary("minimum", a, b);
  const int ratio = divide_no_nan_of(e, lo, hi);
  return {e.binary("multiply", hi, e.unary("sqrt", scale(e, e.unary("square", ratio), 1.0, 1.0)))};
}

// logaddexp: max(a, b) + log1p(exp(−|a − b|)), a + b where a − b is NaN (both infinite of
// one sign, or a NaN); logaddexp2 the same in base 2.
std::vector<int> logaddexp_base(const Emit& e, double ln_base) {
  const int a = input(e, 0), b = input(e, 1);
  const int delta = e.binary("subtract", a, b);
  const float l = static_cast<float>(ln_base);
  int tail = e.unary("log1p", e.unary("exp", scale(e, e.unary("abs", delta), -static_cast<double>(l))));
  if (ln_base != 1.0) tail = e.binary("divide", tail, constant_like(e, tail, l));
  return {where(e, e.unary("isnan", delta), e.binary("add", a, b), e.binary("add", e.binary("maximum", a, b), tail))};
}
std::vector<int> logaddexp(const Emit& e) { return logaddexp_base(e, 1.0); }
std::vector<int> logaddexp2(const Emit& e) { return logaddexp_base(e, std::log(2.0)); }

// fmod: sign(a)·floormod(|a|, |b|), C's fmod (the result takes a's sign).
std::vector<int> fmod(const Emit& e) {
  const int a = input(e, 0), b = input(e, 1);
  return {e.binary("multiply", e.unary("sign", a), e.binary("mod", e.unary("abs", a), e.unary("abs", b)))};
}

// fmax / fmin: maximum / minimum, but a NaN on one side gives the other side.
std::vector<int> fmax_fmin(const Emit& e, const std::string& kind) {
  const int a = input(e, 0), b = input(e, 1);
  const int na = e.unary("isnan", a), nb = e.unary("isnan", b);
  int r = e.binary(kind, a, b);
  r = where(e, e.binary("logical_and", na, logical_not(e, nb)), b, r);
  return {where(e, e.binary("logical_and", nb, logical_not(e, na)), a, r)};
}
std::vector<int> fmax(const Emit& e) { return fmax_fmin(e, "maximum"); }
std::vector<int> fmin(const Emit& e) { return fmax_fmin(e, "minimum"); }

// heaviside: 0 where x1 < 0, 1 where x1 > 0, x2 where x1 == 0 (and where x1 is NaN).
std::vector<int> heaviside(const Emit& e) {
  const int a = input(e, 0), b = input(e, 1);
  const int zero = constant_like(e, a, 0.0);
  const int inner = where(e, e.binary("greater", a, zero), constant_like(e, a, 1.0), b);
  return {where(e, e.binary("less", a, zero), zero, inner)};
}

// ldexp: x1·2^x2, x1 itself where it is 0 or infinite.
std::vector<int> ldexp(const Emit& e) {
  const int a = input(e, 0), b = input(e, 1);
  const int y = e.binary("multiply", a, e.binary("power", constant_like(e, b, 2.0), b));
  const int keep = e.binary("logical_or", e.unary("isinf", a), e.binary("equal", a, constant_like(e, a, 0.0)));
  return {where(e, keep, a, y)};
}

// isclose: |a − b| <= atol + rtol·|b| (arguments 2 and 3), or both NaN with equal_nan.
int close_of(const Emit& e, int a, int b, int rtol, int atol) {
  const int tol = e.binary("add", atol, e.binary("multiply", rtol, e.unary("abs", b)));
  return e.binary("less_equal", e.unary("abs", e.binary("subtract", a, b)), tol);
}
int both_nan(const Emit& e, int a, int b) { return e.binary("logical_and", e.unary("isnan", a), e.unary("isnan", b)); }

std::vector<int> isclose(const Emit& e) {
  const int a = input(e, 0), b = input(e, 1);
  const int rtol = e.args.size() > 2 ? e.value(2) : constant_like(e, b, 1e-5);
  const int atol = e.args.size() > 3 ? e.value(3) : constant_like(e, b, 1e-8);
  int r = close_of(e, a, b, rtol, atol);
  if (e.flag("equal_nan", false)) r = e.binary("logical_or", r, both_nan(e, a, b));
  return {r};
}

// allclose: every element finite and close, or equal (inf == inf).
std::vector<int> allclose(const Emit& e) {
  const int a = input(e, 0), b = input(e, 1);
  const int rtol = constant_like(e, b, e.config().f_or("rtol", 1e-5));
  const int atol = constant_like(e, b, e.config().f_or("atol", 1e-8));
  const int finite = e.binary("logical_and", e.unary("isfinite", a), e.unary("isfinite", b));
  int r = e.binary("logical_or", e.binary("logical_and", finite, close_of(e, a, b, rtol, atol)), e.binary("equal", a, b));
  if (e.flag("equal_nan", false)) r = e.binary("logical_or", r, both_nan(e, a, b));
  return {e.add("reduce", {r}, Attrs{{"keepdims", std::int64_t{0}}, {"kind", std::string("min")}}, "all")};
}

// --- reductions -----------------------------------------------------------------------

std::vector<int> all(const Emit& e) { return {reduce(e, nonzero(e, input(e, 0)), "min")}; }
std::vector<int> any(const Emit& e) { return {reduce(e, nonzero(e, input(e, 0)), "max")}; }
std::vector<int> count_nonzero(const Emit& e) { return {reduce(e, nonzero(e, input(e, 0)), "sum", false)}; }

std::vector<int> average(const Emit& e) {
  if (e.op.kwarg("weights")) e.unsupported("weights are not supported on symbolic tensors (on arrays they are)");
  return {reduce(e, input(e, 0), "mean", false)};
}

std::vector<int> ptp(const Emit& e) {
  const int x = input(e, 0);
  return {e.binary("subtract", reduce(e, x, "max"), reduce(e, x, "min"))};
}

// The NaN-skipping reductions: x with its NaNs replaced by the reduction's identity, and
// NaN where a whole group is NaN (nanmax, nanmin), as Keras's TensorFlow backend.
int without_nan(const Emit& e, int x, double fill) {
  return where(e, e.unary("isnan", x), constant_like(e, x, fill), x);
}
int all_nan(const Emit& e, int x, bool keepdims) { return reduce(e, e.unary("isnan", x), "min", keepdims); }

std::vector<int> nan_extreme(const Emit& e, const std::string& kind, double fill) {
  const int x = input(e, 0);
  const int r = reduce(e, without_nan(e, x, fill), kind);
  return {where(e, all_nan(e, x, e.flag("keepdims", false)), constant_like(e, r, std::nan("")), r)};
}
std::vector<int> nanmax(const Emit& e) { return nan_extreme(e, "max", -INFINITY); }
std::vector<int> nanmin(const Emit& e) { return nan_extreme(e, "min", INFINITY); }
std::vector<int> nansum(const Emit& e) { return {reduce(e, without_nan(e, input(e, 0), 0.0), "sum")}; }
std::vector<int> nanprod(const Emit& e) { return {reduce(e, without_nan(e, input(e, 0), 1.0), "prod")}; }

int nanmean_of(const Emit& e, int x, bool keepdims) {
  const int sum = reduce(e, without_nan(e, x, 0.0), "sum", keepdims);
  const int count = reduce(e, logical_not(e, e.unary("isnan", x)), "sum", keepdims);
  return e.binary("divide", sum, count);
}
std::vector<int> nanmean(const Emit& e) { return {nanmean_of(e, input(e, 0), e.flag("keepdims", false))}; }

int nanvar_of(const Emit& e) {
  const int x = input(e, 0);
  const int valid = logical_not(e, e.unary("isnan", x));
  const int centered = where(e, valid, e.binary("subtract", x, nanmean_of(e, x, true)), constant_like(e, x, 0.0));
  return e.binary("divide", reduce(e, e.unary("square", centered), "sum"), reduce(e, valid, "sum"));
}
std::vector<int> nanvar(const Emit& e) { return {nanvar_of(e)}; }
std::vector<int> nanstd(const Emit& e) { return {e.unary("sqrt", nanvar_of(e))}; }

// nanargmax / nanargmin: the index with NaNs skipped, −1 where a group is all NaN; with no
// axis, over the flattened tensor.
std::vector<int> nan_arg(const Emit& e, const std::string& kind) {
  int x = input(e, 0);
  const bool keepdims = e.flag("keepdims", false);
  const Dims in_dims = e.shape(x).dims();
  std::int64_t axis = 0;
  if (e.config().has("axis")) {
    axis = e.axis(e.config().i("axis"), e.rank(x));
  } else {
    x = e.reshape(x, {e.shape(x).numel()});
  }
  const int nan = e.unary("isnan", x);
  const int clean = where(e, nan, constant_like(e, x, kind == "argmax" ? -INFINITY : INFINITY), x);
  const Attrs a{{"axis", axis}, {"keepdims", std::int64_t{keepdims ? 1 : 0}}};
  Attrs arg = a;
  arg.set("kind", kind);
  const int idx = floating(e, e.add("arg_reduce", {clean}, arg, kind));
  Attrs none = a;
  none.set("kind", std::string("min"));
  none.set("axes", Dims{axis});
  const int empty = e.add("reduce", {nan}, none, "all_nan");
  int r = where(e, empty, constant_like(e, idx, -1.0), idx);
  if (!e.config().has("axis") && keepdims) r = e.reshape(r, Dims(in_dims.size(), 1));
  return {r};
}
std::vector<int> nanargmax(const Emit& e) { return nan_arg(e, "argmax"); }
std::vector<int> nanargmin(const Emit& e) { return nan_arg(e, "argmin"); }

// nancumsum / nancumprod: Keras's nan_to_num (NaN to 0 or 1, ±inf to float32's extremes)
// then the running sum / product; with no axis, over the flattened tensor.
std::vector<int> nan_cumulative(const Emit& e, const std::string& kind) {
  if (e.config().has("dtype")) e.unsupported("\"dtype\" is not supported");
  int x = input(e, 0);
  std::int64_t axis = 0;
  if (e.config().has("axis")) {
    axis = e.axis(e.config().i("axis"), e.rank(x));
  } else {
    x = e.reshape(x, {e.shape(x).numel()});
  }
  const int clean = e.add("nan_to_num", {x}, Attrs{{"nan", kind == "cumsum" ? 0.0 : 1.0},
                                                   {"posinf", static_cast<double>(FLT_MAX)},
                                                   {"neginf", -static_cast<double>(FLT_MAX)}});
  return {e.add("cumulative", {clean}, Attrs{{"axis", axis}, {"kind", kind}}, kind)};
}
std::vector<int> nancumsum(const Emit& e) { return nan_cumulative(e, "cumsum"); }
std::vector<int> nancumprod(const Emit& e) { return nan_cumulative(e, "cumprod"); }

constexpr char kIsnan[] = "isnan", kIsinf[] = "isinf", kIsfinite[] = "isfinite", kTrunc[] = "trunc", kAbs[] = "abs",
               kArccosh[] = "arccosh", kErfc[] = "erfc", kStopGradient[] = "stop_gradient";

}  // namespace
}  // namespace math_emitters

void add_math_emitters(std::map<std::string, Emitter>& table) {
  using namespace math_emitters;  // NOLINT: the emitters above
  const std::map<std::string, Emitter> mine{
      // keras.src.ops.numpy: one input
      {"Isnan", unary_of_float<kIsnan>}, {"Isinf", unary_of_float<kIsinf>}, {"Isfinite", unary_of_float<kIsfinite>},
      {"Isneginf", isneginf}, {"Isposinf", isposinf}, {"Isreal", ones_like}, {"Signbit", signbit},
      {"Trunc", unary_of_float<kTrunc>}, {"Fabs", unary_of_float<kAbs>}, {"Arccosh", unary_of_float<kArccosh>},
      {"Cbrt", cbrt}, {"Exp2", exp2}, {"Deg2rad", deg2rad}, {"Rad2deg", rad2deg}, {"Sinc", sinc}, {"Angle", angle},
      {"Real", identity}, {"Conjugate", identity}, {"Copy", identity}, {"Imag", zeros_like}, {"EmptyLike", zeros_like},
      {"Array", array}, {"NanToNum", nan_to_num},
      // two inputs, broadcasting
      {"DivideNoNan", divide_no_nan}, {"Hypot", hypot}, {"Logaddexp", logaddexp}, {"Logaddexp2", logaddexp2},
      {"Fmod", fmod}, {"Fmax", fmax}, {"Fmin", fmin}, {"Heaviside", heaviside}, {"Ldexp", ldexp},
      {"Isclose", isclose}, {"AllClose", allclose},
      // reductions
      {"All", all}, {"Any", any}, {"CountNonzero", count_nonzero}, {"Average", average}, {"Ptp", ptp},
      {"Nanmax", nanmax}, {"Nanmin", nanmin}, {"Nansum", nansum}, {"Nanprod", nanprod}, {"Nanmean", nanmean},
      {"Nanvar", nanvar}, {"Nanstd", nanstd}, {"Nanargmax", nanargmax}, {"Nanargmin", nanargmin},
      {"Nancumsum", nancumsum}, {"Nancumprod", nancumprod},
      // keras.src.ops.core and .math
      {"StopGradient", unary_of_float<kStopGradient>}, {"SaturateCast", saturate_cast}, {"Erfc", unary_of_float<kErfc>},
  };
  table.insert(mine.begin(), mine.end());
}

}  // namespace nnfit::operation_emit
