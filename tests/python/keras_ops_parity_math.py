"""keras.ops's math, logical tests, NaN-aware reductions, integer bit operations and
constant arrays (python/nnfit/keras/ops/_math.py) against Keras 3 on TensorFlow, with
Keras.OpsParity's harness (keras_ops_parity.py's script, one Keras process and one nnfit
process for every case) and three additions: inputs holding NaN, ±inf and −0 and integer
inputs; NaN-aware comparisons (NaN where Keras has NaN, the same infinities); and the
result's dtype, eager and symbolic, which must be Keras's; and the signatures of all the
group's names (inspect.signature, Keras's text).

The six compositions of _compositions.py (cdist, corrcoef, extract_sequences, isin, polar,
jvp) are here too: a composition's gradient is the engine's autodiff of the whole composed
graph; in a model cdist and extract_sequences record nnfit's composed nodes, so for them
(COMPOSED) only the predictions are compared, not the nodes; polar is compared through its
real and imaginary parts, jvp through its outputs against tf.autodiff.ForwardAccumulator.

Cases with symbolic=True also compare the operation nodes and the model's predictions, as
keras_ops_parity.py does; eager-only names (quantiles, nextafter, i0, erfinv, the integer
operations) and constants run on arrays only.

usage: keras_ops_parity_math.py KERAS_PYTHON [NNFIT_PYTHON]
"""
import sys
import textwrap

import numpy as np

import keras_ops_parity as base
import parity_runs

# More input kinds for the shared script's arr(): NaN, ±inf and −0 among normal values;
# NaN only (gradients are finite there); a row of all NaN (nanargmax's −1); integers.
EXTRA_KINDS = '''
    if kind in ("nan", "nanonly", "nanrow"):
        v = rng.normal(size=shape).astype("float32")
        flat = v.reshape(-1)
        special = [np.nan] if kind != "nan" else [np.nan, np.inf, -np.inf, -0.0, 0.0]
        for i in range(0, flat.size, 4):
            flat[i] = special[(i // 4) % len(special)]
        if kind == "nanrow":
            v[0, 0] = np.nan
        return v
    if kind == "int":
        return rng.integers(-20, 21, size=shape).astype("int32")
    if kind == "shift":
        return rng.integers(0, 4, size=shape).astype("int32")
'''
NORMAL_LINE = '    return rng.normal(size=shape).astype("float32")'
SCRIPT = (base.SCRIPT
          .replace(NORMAL_LINE, EXTRA_KINDS.rstrip("\n") + "\n" + NORMAL_LINE)
          .replace('res["shape"] = list(np.shape(y))',
                   'res["shape"] = list(np.shape(y)); res["dtype"] = str(np.asarray(y).dtype)')
          .replace("m = keras.Model(ins, fn(*ins))",
                   "ys = fn(*ins); res[\"sym_dtype\"] = str(ys.dtype); m = keras.Model(ins, ys)")
          .replace('print("PARITY " + json.dumps(out))',  # and every name's signature
                   'import inspect\n'
                   'out["__signatures__"] = {n: str(inspect.signature(getattr(ops, n))) for n in SIGNATURE_NAMES}\n'
                   'print("PARITY " + json.dumps(out))'))
assert SCRIPT.count("EXTRA") == 0 and "sym_dtype" in SCRIPT and '"nanrow"' in SCRIPT, "keras_ops_parity.SCRIPT changed"

N, NAN, F, I = "normal", "nan", "nanonly", "int"
S3 = (3, 4, 5)
# (name, function, input specs, gradient?, symbolic?, rtol)
CASES = [
    # logical tests (bool)
    ("isnan", "lambda x: ops.isnan(x)", [(NAN, S3)], False, True, 0),
    ("isinf", "lambda x: ops.isinf(x)", [(NAN, S3)], False, True, 0),
    ("isfinite", "lambda x: ops.isfinite(x)", [(NAN, S3)], False, True, 0),
    ("isneginf", "lambda x: ops.isneginf(x)", [(NAN, S3)], False, True, 0),
    ("isposinf", "lambda x: ops.isposinf(x)", [(NAN, S3)], False, True, 0),
    ("signbit", "lambda x: ops.signbit(x)", [(NAN, S3)], False, True, 0),
    ("isreal", "lambda x: ops.isreal(x)", [(NAN, S3)], False, True, 0),
    ("isclose", "lambda a, b: ops.isclose(a, b)", [(N, S3), (N, S3)], False, True, 0),
    ("isclose_near", "lambda a: ops.isclose(a, a * 1.000001, rtol=1e-6, atol=0.0)", [(N, S3)], False, False, 0),
    ("isclose_nan", "lambda a: ops.isclose(a, a, equal_nan=True)", [(NAN, S3)], False, True, 0),
    ("allclose", "lambda a, b: ops.allclose(a, b)", [(N, S3), (N, S3)], False, False, 0),
    ("allclose_self", "lambda a: ops.allclose(a, a, equal_nan=True)", [(NAN, S3)], False, False, 0),
    # element-wise, one input
    ("trunc", "lambda x: ops.trunc(x * 3)", [(NAN, S3)], False, True, 0),
    ("cbrt", "lambda x: ops.cbrt(x)", [("sep", S3)], True, True, 1e-5),
    ("exp2", "lambda x: ops.exp2(x)", [(N, S3)], True, True, 1e-5),
    ("fabs", "lambda x: ops.fabs(x)", [("sep", S3)], True, True, 0),
    ("deg2rad", "lambda x: ops.deg2rad(x)", [(N, S3)], True, True, 1e-6),
    ("rad2deg", "lambda x: ops.rad2deg(x)", [(N, S3)], True, True, 1e-6),
    ("sinc", "lambda x: ops.sinc(x)", [("sep", S3)], True, True, 1e-5),
    ("sinc_zero", "lambda x: ops.sinc(x)", [(NAN, S3)], False, True, 1e-5),
    ("arccosh", "lambda x: ops.arccosh(x)", [("pos", S3)], True, True, 1e-5),
    ("erfc", "lambda x: ops.erfc(x)", [(N, S3)], True, True, 1e-5),
    ("erfc_tail", "lambda x: ops.erfc(x * 3)", [(N, S3)], False, True, 1e-5),
    ("stop_gradient", "lambda x: ops.stop_gradient(x)", [(N, S3)], True, True, 0),
    ("real", "lambda x: ops.real(x)", [(N, S3)], True, True, 0),
    ("imag", "lambda x: ops.imag(x)", [(N, S3)], True, True, 0),
    ("conj", "lambda x: ops.conj(x)", [(N, S3)], True, True, 0),
    ("conjugate", "lambda x: ops.conjugate(x)", [(N, S3)], True, True, 0),
    ("copy", "lambda x: ops.copy(x)", [(N, S3)], True, True, 0),
    ("angle", "lambda x: ops.angle(x)", [(NAN, S3)], False, True, 1e-6),
    ("nan_to_num", "lambda x: ops.nan_to_num(x)", [(NAN, S3)], True, True, 0),
    ("nan_to_num_values", "lambda x: ops.nan_to_num(x, nan=-1.0, posinf=9.0, neginf=-9.0)", [(NAN, S3)], True, True, 0),
    ("saturate_cast_uint8", "lambda x: ops.saturate_cast(x * 200, 'uint8')", [(N, S3)], False, True, 0),
    ("saturate_cast_int8", "lambda x: ops.saturate_cast(x * 200, 'int8')", [(N, S3)], False, False, 0),
    ("array", "lambda x: ops.array(x)", [(N, S3)], False, True, 0),
    ("empty_like", "lambda x: ops.empty_like(x)", [(N, S3)], False, True, 0),
    # element-wise, two inputs
    ("divide_no_nan", "lambda a, b: ops.divide_no_nan(a, b)", [(N, S3), ("ids", S3)], True, True, 1e-6),
    ("hypot", "lambda a, b: ops.hypot(a, b)", [(N, S3), (N, (5,))], True, False, 1e-5),
    ("hypot_symbolic", "lambda a, b: ops.hypot(a, b)", [(N, S3), (N, S3)], True, True, 1e-5),
    ("logaddexp", "lambda a, b: ops.logaddexp(a, b)", [(N, S3), (N, S3)], True, True, 1e-5),
    ("logaddexp_inf", "lambda a, b: ops.logaddexp(a, b)", [(NAN, S3), (NAN, S3)], False, True, 1e-5),
    ("logaddexp2", "lambda a, b: ops.logaddexp2(a, b)", [(N, S3), (N, S3)], True, True, 1e-5),
    ("heaviside", "lambda a, b: ops.heaviside(a, b)", [("ids", S3), (N, S3)], True, True, 0),
    ("fmod", "lambda a, b: ops.fmod(a, b)", [(N, S3), ("pos", S3)], True, True, 1e-5),
    ("fmod_scalar", "lambda a: ops.fmod(a * 5, 2.0)", [(N, S3)], False, True, 1e-5),
    ("fmax", "lambda a, b: ops.fmax(a, b)", [(NAN, S3), (F, S3)], False, True, 0),
    ("fmin", "lambda a, b: ops.fmin(a, b)", [(NAN, S3), (F, S3)], False, True, 0),
    ("fmax_grad", "lambda a, b: ops.fmax(a, b)", [("sep", S3), (N, S3)], True, True, 0),
    ("ldexp", "lambda a, b: ops.ldexp(a, b)", [(NAN, S3), ("shift", S3)], False, False, 0),
    # reductions
    ("all", "lambda x: ops.all(x, axis=1)", [("ids", S3)], False, True, 0),
    ("any_keepdims", "lambda x: ops.any(x - 4, axis=(1, 2), keepdims=True)", [("ids", S3)], False, True, 0),
    ("all_flat", "lambda x: ops.all(x)", [("ids", S3)], False, False, 0),
    ("count_nonzero", "lambda x: ops.count_nonzero(x, axis=-1)", [("ids", S3)], False, True, 0),
    ("count_nonzero_all", "lambda x: ops.count_nonzero(x)", [(NAN, S3)], False, False, 0),
    ("average", "lambda x: ops.average(x, axis=1)", [(N, S3)], True, True, 1e-5),
    ("average_weights", "lambda x, w: ops.average(x, axis=1, weights=w)", [(N, S3), ("pos", (4,))], False, False, 1e-5),
    ("ptp", "lambda x: ops.ptp(x, axis=2)", [("sep", S3)], True, True, 0),
    ("nanmax", "lambda x: ops.nanmax(x, axis=1)", [("nanrow", S3)], False, True, 0),
    ("nanmax_grad", "lambda x: ops.nanmax(x, axis=-1, keepdims=True)", [(F, S3)], True, True, 0),
    ("nanmin", "lambda x: ops.nanmin(x, axis=2)", [("nanrow", S3)], False, True, 0),
    ("nansum", "lambda x: ops.nansum(x, axis=1)", [(F, S3)], True, True, 1e-5),
    ("nansum_all", "lambda x: ops.nansum(x)", [(F, S3)], True, False, 1e-5),
    ("nanprod", "lambda x: ops.nanprod(x, axis=2)", [(F, S3)], True, True, 1e-5),
    ("nanmean", "lambda x: ops.nanmean(x, axis=(1, 2))", [(F, S3)], True, True, 1e-5),
    ("nanvar", "lambda x: ops.nanvar(x, axis=1)", [(F, S3)], True, True, 1e-5),
    ("nanstd", "lambda x: ops.nanstd(x, axis=-1, keepdims=True)", [(F, S3)], True, True, 1e-5),
    ("nanargmax", "lambda x: ops.nanargmax(x, axis=1)", [("nanrow", S3)], False, True, 0),
    ("nanargmin", "lambda x: ops.nanargmin(x, axis=2)", [("nanrow", S3)], False, True, 0),
    ("nanargmax_flat", "lambda x: ops.nanargmax(x)", [(F, S3)], False, False, 0),
    ("nancumsum", "lambda x: ops.nancumsum(x, axis=1)", [(NAN, S3)], False, True, 1e-5),
    ("nancumsum_grad", "lambda x: ops.nancumsum(x, axis=2)", [(F, S3)], True, True, 1e-5),
    ("nancumprod", "lambda x: ops.nancumprod(x, axis=2)", [(F, S3)], True, True, 1e-5),
    ("nancumsum_flat", "lambda x: ops.nancumsum(x)", [(F, S3)], False, False, 1e-5),
    # eager only
    ("median", "lambda x: ops.median(x, axis=1)", [(N, S3)], False, False, 1e-6),
    ("median_all", "lambda x: ops.median(x)", [(N, S3)], False, False, 1e-6),
    ("quantile", "lambda x: ops.quantile(x, 0.3, axis=-1, keepdims=True)", [(N, S3)], False, False, 1e-6),
    ("quantile_methods", "lambda x: ops.stack([ops.quantile(x, [0.2, 0.7], axis=1, method=m) for m in "
                         "('lower', 'higher', 'nearest', 'midpoint')])", [(N, S3)], False, False, 1e-6),
    ("percentile", "lambda x: ops.percentile(x, 65, axis=2)", [(N, S3)], False, False, 1e-6),
    ("nanmedian", "lambda x: ops.nanmedian(x, axis=1)", [("nanrow", S3)], False, False, 1e-6),
    ("nanquantile", "lambda x: ops.nanquantile(x, 0.25, axis=2)", [(F, S3)], False, False, 1e-6),
    ("nanpercentile", "lambda x: ops.nanpercentile(x, 80, axis=1)", [(F, S3)], False, False, 1e-6),
    ("erfinv", "lambda x: ops.erfinv(x)", [("unit", S3)], False, False, 1e-5),
    ("i0", "lambda x: ops.i0(x * 3)", [(N, S3)], False, False, 1e-5),
    # integer inputs: dtypes and values
    ("trunc_int", "lambda x: ops.trunc(x)", [(I, S3)], False, False, 0),
    ("nansum_int", "lambda x: ops.nansum(x, axis=1)", [(I, S3)], False, False, 0),
    ("ptp_int", "lambda x: ops.ptp(x, axis=1)", [(I, S3)], False, False, 0),
    ("fmax_int", "lambda a, b: ops.fmax(a, b)", [(I, S3), (I, S3)], False, False, 0),
    ("fmod_int", "lambda a, b: ops.fmod(a, b + 30)", [(I, S3), (I, S3)], False, False, 0),
    ("hypot_int", "lambda a, b: ops.hypot(a, b)", [(I, S3), (I, S3)], False, False, 1e-6),
    ("cbrt_int", "lambda x: ops.cbrt(x)", [(I, S3)], False, False, 1e-6),
    ("nanmean_int", "lambda x: ops.nanmean(x, axis=1)", [(I, S3)], False, False, 1e-6),
    ("count_nonzero_int", "lambda x: ops.count_nonzero(x, axis=1)", [(I, S3)], False, False, 0),
    ("isnan_int", "lambda x: ops.isnan(x)", [(I, S3)], False, False, 0),
    ("bitwise_and", "lambda a, b: ops.bitwise_and(a, b)", [(I, S3), (I, S3)], False, False, 0),
    ("bitwise_or", "lambda a, b: ops.bitwise_or(a, b)", [(I, S3), (I, (5,))], False, False, 0),
    ("bitwise_xor", "lambda a, b: ops.bitwise_xor(a, b)", [(I, S3), (I, S3)], False, False, 0),
    ("bitwise_not", "lambda a: ops.bitwise_not(a)", [(I, S3)], False, False, 0),
    ("bitwise_invert", "lambda a: ops.bitwise_invert(a)", [(I, S3)], False, False, 0),
    ("left_shift", "lambda a, b: ops.left_shift(a, b)", [(I, S3), ("shift", S3)], False, False, 0),
    ("bitwise_left_shift", "lambda a: ops.bitwise_left_shift(a, 2)", [(I, S3)], False, False, 0),
    ("right_shift", "lambda a, b: ops.right_shift(a, b)", [(I, S3), ("shift", S3)], False, False, 0),
    ("bitwise_right_shift", "lambda a, b: ops.bitwise_right_shift(a, b)", [(I, S3), ("shift", S3)], False, False, 0),
    ("gcd", "lambda a, b: ops.gcd(a, b)", [(I, S3), (I, S3)], False, False, 0),
    ("lcm", "lambda a, b: ops.lcm(a, b)", [(I, S3), (I, S3)], False, False, 0),
    # constants
    ("linspace", "lambda: ops.linspace(-1.5, 2.0, 7)", [], False, False, 1e-6),
    ("linspace_open", "lambda: ops.linspace(0, 10, 6, endpoint=False)", [], False, False, 1e-6),
    ("linspace_int", "lambda: ops.linspace(0, 10, 4, dtype='int32')", [], False, False, 0),
    ("linspace_step", "lambda: ops.linspace(0.0, 1.0, 5, retstep=True)[1]", [], False, False, 1e-6),
    ("logspace", "lambda: ops.logspace(0.0, 2.0, 5)", [], False, False, 1e-5),
    ("logspace_base", "lambda: ops.logspace(1.0, 3.0, 4, base=2.0, endpoint=False)", [], False, False, 1e-5),
    ("geomspace", "lambda: ops.geomspace(1.0, 1000.0, 4)", [], False, False, 1e-5),
    ("identity", "lambda: ops.identity(4)", [], False, False, 0),
    ("tri", "lambda: ops.tri(3, 5, k=1)", [], False, False, 0),
    ("tri_negative_k", "lambda: ops.tri(4, k=-1, dtype='int32')", [], False, False, 0),
    ("empty", "lambda: ops.empty((2, 3))", [], False, False, 0),
    ("bartlett", "lambda: ops.bartlett(7)", [], False, False, 1e-6),
    ("blackman", "lambda: ops.blackman(8)", [], False, False, 1e-5),
    ("hamming", "lambda: ops.hamming(9)", [], False, False, 1e-6),
    ("hanning", "lambda: ops.hanning(6)", [], False, False, 1e-6),
    ("kaiser", "lambda: ops.kaiser(7, 5.0)", [], False, False, 1e-5),
    # compositions of nnfit's ops (_compositions.py): in a model their nodes are the composed ones
    ("cdist", "lambda a, b: ops.cdist(a, b)", [(N, S3), (N, (3, 6, 5))], True, True, 1e-5),
    ("cdist_2d", "lambda a, b: ops.cdist(a, b)", [(N, (7, 3)), (N, (4, 3))], True, False, 1e-5),
    ("cdist_broadcast", "lambda a, b: ops.cdist(a, b)", [(N, (2, 3, 4, 5)), (N, (6, 5))], True, False, 1e-5),
    ("cdist_constant", "lambda a: ops.cdist(a, np.linspace(-1, 1, 18).astype('float32').reshape(6, 3))",
     [(N, (4, 3))], True, True, 1e-5),
    ("corrcoef", "lambda x: ops.corrcoef(x)", [(N, (4, 7))], True, False, 1e-5),
    ("corrcoef_wide", "lambda x: ops.corrcoef(x)", [("pos", (6, 40))], True, False, 1e-5),
    ("extract_sequences", "lambda x: ops.extract_sequences(x, 4, 3)", [(N, (3, 4, 11))], True, True, 0),
    ("extract_sequences_overlap", "lambda x: ops.extract_sequences(x, 5, 2)", [(N, (3, 16))], True, True, 0),
    ("extract_sequences_1d", "lambda x: ops.extract_sequences(x, 3, 2)", [(N, (9,))], True, False, 0),
    ("extract_sequences_int", "lambda x: ops.extract_sequences(x, 2, 2)", [(I, (3, 8))], False, False, 0),
    # Keras's IsIn fails in a TensorFlow graph (a tensor used as a Python bool), so isin is compared on arrays;
    # nnfit's isin in a model: tests/python/test_ops_math.py
    ("isin", "lambda x: ops.isin(x, np.array([0.0, 2.0, 4.0], 'float32'))", [("ids", S3)], False, False, 0),
    ("isin_invert", "lambda x: ops.isin(x, [[1.0], [3.0]], invert=True)", [("ids", S3)], False, False, 0),
    ("isin_arrays", "lambda a, b: ops.isin(a, b)", [("ids", S3), ("ids", (2,))], False, False, 0),
    ("isin_nan", "lambda a: ops.isin(a, ops.where(ops.isnan(a), 0.0, a)[:1])", [(NAN, S3)], False, False, 0),
    ("isin_int", "lambda a, b: ops.isin(a, b, assume_unique=True)", [(I, S3), (I, (7,))], False, False, 0),
    ("polar", "lambda a, b: ops.stack([ops.real(ops.polar(a, b)), ops.imag(ops.polar(a, b))])",
     [("pos", S3), (N, S3)], False, False, 1e-5),
    ("jvp", "lambda x, t: ops.jvp(lambda u: ops.sin(u) * u, (ops.convert_to_tensor(x),), (ops.convert_to_tensor(t),))[1]",
     [(N, (3, 4)), (N, (3, 4))], False, False, 1e-5),
    ("jvp_primal", "lambda x, t: ops.jvp(lambda u: ops.sin(u) * u, (ops.convert_to_tensor(x),), (ops.convert_to_tensor(t),))[0]",
     [(N, (3, 4)), (N, (3, 4))], False, False, 1e-5),
    ("jvp_two", "lambda a, b, ta, tb: ops.jvp(lambda u, v: ops.tanh(ops.matmul(u, v)), (ops.convert_to_tensor(a), "
                "ops.convert_to_tensor(b)), (ops.convert_to_tensor(ta), ops.convert_to_tensor(tb)))[1]",
     [(N, (3, 4)), (N, (4, 2)), (N, (3, 4)), (N, (4, 2))], False, False, 1e-5),
    ("jvp_softmax", "lambda x, t: ops.jvp(lambda u: ops.softmax(u, axis=-1), (ops.convert_to_tensor(x),), "
                    "(ops.convert_to_tensor(t),))[1]", [(N, (2, 5)), (N, (2, 5))], False, False, 1e-5),
    ("jvp_aux", "lambda x, t: ops.stack(list(ops.jvp(lambda u: (ops.sum(u * u, axis=-1), ops.max(u, axis=-1)), "
                "(ops.convert_to_tensor(x),), (ops.convert_to_tensor(t),), has_aux=True)))",
     [("sep", (3, 4)), (N, (3, 4))], False, False, 1e-5),
]
# Cases whose model holds nnfit's composition of Keras's nodes rather than Keras's one node
# (CDist, ExtractSequences): the nodes are not compared, the predictions are.
COMPOSED = {"cdist", "cdist_constant", "extract_sequences", "extract_sequences_overlap"}


def close(a, b, rtol, what):
    """keras_ops_parity's comparison, with NaN only where Keras has NaN and equal infinities."""
    a, b = np.asarray(a, "float64"), np.asarray(b, "float64")
    if a.shape != b.shape:
        return f"{what}: shape {a.shape} vs Keras's {b.shape}"
    nan_a, nan_b = np.isnan(a), np.isnan(b)
    if (nan_a != nan_b).any():
        i = np.unravel_index(np.argmax(nan_a != nan_b), a.shape)
        return f"{what}: NaN at {i} on one side only: {a[i]} vs Keras's {b[i]}"
    inf = np.isinf(a) | np.isinf(b)
    if (a[inf] != b[inf]).any():
        return f"{what}: infinities differ: {a[inf]} vs Keras's {b[inf]}"
    finite = ~(nan_a | inf)
    return base.close(np.where(finite, a, 0.0), np.where(finite, b, 0.0), rtol, what)


def compare(name, grad, symbolic, rtol, k, n):
    rtol = max(rtol, 1e-7)
    problems = [close(n["value"], k["value"], rtol, "value")]
    if n["dtype"] != k["dtype"]:
        problems.append(f"dtype {n['dtype']} vs Keras's {k['dtype']}")
    if grad:
        scale = max([float(np.max(np.abs(np.nan_to_num(np.asarray(g))), initial=0.0)) for g in k["grads"]] + [1.0])
        for i, (gn, gk) in enumerate(zip(n["grads"], k["grads"])):
            problems.append(close(np.asarray(gn) / scale, np.asarray(gk) / scale, 1e-4, f"gradient {i}"))
    if symbolic:
        if n["nodes"] != k["nodes"] and name not in COMPOSED:
            problems.append(f"nodes {n['nodes']} vs Keras's {k['nodes']}")
        if n["sym_dtype"] != k["sym_dtype"]:
            problems.append(f"symbolic dtype {n['sym_dtype']} vs Keras's {k['sym_dtype']}")
        problems.append(close(n["predict"], np.asarray(k["value"], "float64"), rtol, "predict"))
    return [p for p in problems if p]


# Files both ways (keras_ops_parity's check, with this group's operations): a model of them
# trained by nnfit and saved as .keras loads in Keras with the same predictions.
SAVE_SCRIPT = textwrap.dedent("""
    import sys
    import numpy as np
    from nnfit import keras
    ops = keras.ops
    rng = np.random.default_rng(3)
    x = rng.normal(size=(64, 6)).astype("float32")
    y = rng.integers(0, 3, size=64)
    i = keras.Input(shape=(6,))
    h = keras.layers.Dense(8)(i)
    h = ops.logaddexp(h, ops.hypot(h, h * 0.5)) - ops.nanmean(h, axis=-1, keepdims=True) + ops.erfc(h)
    h = ops.where(ops.isfinite(h), ops.cbrt(h) + ops.sinc(h) * ops.stop_gradient(h), 0.0)
    h = ops.concatenate([h, ops.nanstd(h, axis=-1, keepdims=True), ops.fmax(h, -h), ops.divide_no_nan(h, ops.trunc(h))], -1)
    m = keras.Model(i, keras.layers.Dense(3, activation="softmax")(h))
    m.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    m.fit(x, y, epochs=2, batch_size=16, verbose=0)
    m.save(sys.argv[1] + "/ops.keras")
    np.save(sys.argv[1] + "/x.npy", x)
    np.save(sys.argv[1] + "/nnfit.npy", m.predict(x, verbose=0))
""")


def main(argv):
    from nnfit.keras.ops import _compositions, _math  # the group's names
    names = _math.__all__ + _compositions.__all__
    script = SCRIPT.replace("CASES_SOURCE", repr([c[:5] for c in CASES])).replace("SIGNATURE_NAMES", repr(names))
    keras_res, nnfit_res = parity_runs.run_both(script, argv, timeout=600)
    failures = [f"signature of {n}: {nnfit_res['__signatures__'][n]} vs Keras's {k}"
                for n, k in keras_res["__signatures__"].items() if nnfit_res["__signatures__"][n] != k]
    both_ways = base.files_both_ways(argv, SAVE_SCRIPT)
    if both_ways:
        failures.append(both_ways)
    failures += base.case_failures(CASES, keras_res, nnfit_res, compare)
    for f in failures:
        print("FAIL", f)
    failed_cases = len([f for f in failures if f.split(":")[0] in {c[0] for c in CASES}])
    print(f"keras.ops math parity: {len(CASES) - failed_cases} of {len(CASES)} cases agree; signatures of "
          f"{len(names)} names: {'differ' if any('signature' in f for f in failures) else 'equal'}; "
          f"files both ways: {'no' if both_ways else 'yes'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
