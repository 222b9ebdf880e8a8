"""keras.ops against Keras 3 (on TensorFlow, in the interop venv): each case calls one
keras.ops function on random arrays of several shapes under real Keras and under
`from nnfit import keras`, and compares
- the values: within float32 rounding, |nnfit - keras| <= atol + rtol·|keras| with
  rtol 1e-5 and atol 1e-6 times the output's largest magnitude (at least 1e-6); the
  transcendentals, long reductions and compositions get rtol 1e-4 (stated per case);
- the gradient of sum(output · cotangent) with respect to each differentiable input (Keras:
  tf.GradientTape; nnfit: the engine's autodiff on the same one-op graph) within 1e-4
  relative to the largest gradient;
- on symbolic tensors, where the operation keeps the batch axis: the operation nodes'
  modules, classes and configs in the model's Functional config (Keras's own
  serialization; as a set, since the two may list them in other topological orders), and
  the model's predictions against the eager values; and a model built with keras.ops,
  trained and saved as .keras by nnfit, loads in Keras with the same predictions. Python's operators on arrays are
  NumPy's, in Keras as here, so the operator cases (x[...], a @ b, -x) are checked on
  symbolic tensors only.

usage: keras_ops_parity.py KERAS_PYTHON [NNFIT_PYTHON]
"""
import sys
import textwrap

import numpy as np

import parity_runs

SCRIPT = textwrap.dedent("""
    import json
    import numpy as np
    IMPORT_LINE
    ops = keras.ops
    NNFIT = keras.__name__.startswith("nnfit")
    if NNFIT:
        from nnfit.keras.ops import _operation
        _operation.RECORD = True
    else:
        import tensorflow as tf

    rng = np.random.default_rng(11)

    def arr(kind, shape):
        if kind == "pos":
            return rng.uniform(0.2, 3.0, size=shape).astype("float32")
        if kind == "unit":
            return rng.uniform(-0.9, 0.9, size=shape).astype("float32")
        if kind == "ids":
            return rng.integers(0, 5, size=shape).astype("float32")
        if kind == "sep":  # no ties (max/min/argmax), no values near kinks
            v = rng.permutation(int(np.prod(shape))).reshape(shape).astype("float32")
            return (v - v.size / 2) / 4 + 0.125
        return rng.normal(size=shape).astype("float32")

    CASES = CASES_SOURCE
    out = {}
    for name, fn_src, specs, grad, symbolic in CASES:
        fn = eval(fn_src)
        xs = [arr(kind, shape) for kind, shape in specs]
        res = {}
        if NNFIT:
            _operation.LAST_CALL = None
        try:
            y = fn(*xs)
            res["value"] = np.asarray(y, dtype="float64").tolist()
            res["shape"] = list(np.shape(y))
            if grad:
                cot = np.random.default_rng(5).normal(size=np.shape(y)).astype("float32")
                if NNFIT:
                    call = _operation.LAST_CALL
                    assert call is not None, "the case made no eager keras.ops call"
                    _, grads = _operation.gradients(*call, cotangent=cot)
                    res["grads"] = [np.asarray(g, "float64").tolist() for g in grads]
                else:
                    vs = [tf.Variable(x) for x in xs]
                    with tf.GradientTape() as tape:
                        yy = fn(*vs)
                        total = tf.reduce_sum(tf.cast(yy, "float32") * cot)
                    gs = tape.gradient(total, vs)
                    res["grads"] = [np.zeros(x.shape).tolist() if g is None else np.asarray(g, "float64").tolist()
                                    for g, x in zip(gs, xs)]
            if symbolic:
                ins = [keras.Input(shape=x.shape[1:]) for x in xs]
                m = keras.Model(ins, fn(*ins))
                layers = m.get_config()["layers"]
                res["nodes"] = sorted([[l["module"], l["class_name"], {k: v for k, v in l["config"].items() if k != "name"}]
                                       for l in layers if l["class_name"] != "InputLayer"], key=json.dumps)
                res["predict"] = np.asarray(m.predict(xs if len(xs) > 1 else xs[0], verbose=0), "float64").tolist()
        except Exception as e:  # noqa: BLE001
            res["error"] = f"{type(e).__name__}: {e}"[:300]
        out[name] = res
    print("PARITY " + json.dumps(out))
""")

# (name, function, input specs (kind, shape), gradient?, symbolic?, rtol)
N = "normal"
CASES = [
    # element-wise, one input
    ("abs", "lambda x: ops.abs(x)", [("sep", (3, 4, 5))], True, True, 1e-5),
    ("negative", "lambda x: ops.negative(x)", [(N, (3, 4, 5))], True, True, 1e-5),
    ("neg_operator", "lambda x: -x", [(N, (3, 4))], False, True, 1e-5),
    ("sign", "lambda x: ops.sign(x)", [(N, (3, 4, 5))], False, True, 1e-5),
    ("square", "lambda x: ops.square(x)", [(N, (3, 4, 5))], True, True, 1e-5),
    ("sqrt", "lambda x: ops.sqrt(x)", [("pos", (3, 4, 5))], True, True, 1e-5),
    ("rsqrt", "lambda x: ops.rsqrt(x)", [("pos", (3, 4, 5))], True, True, 1e-4),
    ("reciprocal", "lambda x: ops.reciprocal(x)", [("pos", (3, 4, 5))], True, True, 1e-5),
    ("exp", "lambda x: ops.exp(x)", [(N, (3, 4, 5))], True, True, 1e-4),
    ("expm1", "lambda x: ops.expm1(x)", [(N, (3, 4, 5))], True, True, 1e-4),
    ("log", "lambda x: ops.log(x)", [("pos", (3, 4, 5))], True, True, 1e-4),
    ("log1p", "lambda x: ops.log1p(x)", [("pos", (3, 4, 5))], True, True, 1e-4),
    ("log2", "lambda x: ops.log2(x)", [("pos", (3, 4, 5))], True, True, 1e-4),
    ("log10", "lambda x: ops.log10(x)", [("pos", (3, 4, 5))], True, True, 1e-4),
    ("sin", "lambda x: ops.sin(x)", [(N, (3, 4, 5))], True, True, 1e-4),
    ("cos", "lambda x: ops.cos(x)", [(N, (3, 4, 5))], True, True, 1e-4),
    ("tan", "lambda x: ops.tan(x)", [("unit", (3, 4, 5))], True, True, 1e-4),
    ("arcsin", "lambda x: ops.arcsin(x)", [("unit", (3, 4, 5))], True, True, 1e-4),
    ("arccos", "lambda x: ops.arccos(x)", [("unit", (3, 4, 5))], True, True, 1e-4),
    ("arctan", "lambda x: ops.arctan(x)", [(N, (3, 4, 5))], True, True, 1e-4),
    ("sinh", "lambda x: ops.sinh(x)", [(N, (3, 4, 5))], True, True, 1e-4),
    ("cosh", "lambda x: ops.cosh(x)", [(N, (3, 4, 5))], True, True, 1e-4),
    ("arcsinh", "lambda x: ops.arcsinh(x)", [(N, (3, 4, 5))], True, True, 1e-4),
    ("arctanh", "lambda x: ops.arctanh(x)", [("unit", (3, 4, 5))], True, True, 1e-4),
    ("tanh", "lambda x: ops.tanh(x)", [(N, (3, 4, 5))], True, True, 1e-4),
    ("erf", "lambda x: ops.erf(x)", [(N, (3, 4, 5))], True, True, 1e-4),
    ("floor", "lambda x: ops.floor(x * 3)", [(N, (3, 4, 5))], False, True, 1e-5),
    ("ceil", "lambda x: ops.ceil(x * 3)", [(N, (3, 4, 5))], False, True, 1e-5),
    ("round", "lambda x: ops.round(x * 3)", [(N, (3, 4, 5))], False, True, 1e-5),
    # activations
    ("relu", "lambda x: ops.relu(x)", [("sep", (3, 4, 5))], True, True, 1e-5),
    ("relu6", "lambda x: ops.relu6(x * 4)", [("sep", (3, 4, 5))], False, True, 1e-5),
    ("sigmoid", "lambda x: ops.sigmoid(x)", [(N, (3, 4, 5))], True, True, 1e-4),
    ("silu", "lambda x: ops.silu(x)", [(N, (3, 4, 5))], True, True, 1e-4),
    ("selu", "lambda x: ops.selu(x)", [("sep", (3, 4, 5))], True, True, 1e-4),
    ("elu", "lambda x: ops.elu(x, alpha=0.5)", [("sep", (3, 4, 5))], True, True, 1e-4),
    ("softplus", "lambda x: ops.softplus(x)", [(N, (3, 4, 5))], True, True, 1e-4),
    ("softsign", "lambda x: ops.softsign(x)", [(N, (3, 4, 5))], True, True, 1e-4),
    ("leaky_relu", "lambda x: ops.leaky_relu(x, negative_slope=0.1)", [("sep", (3, 4, 5))], True, True, 1e-5),
    ("hard_sigmoid", "lambda x: ops.hard_sigmoid(x)", [("sep", (3, 4, 5))], True, True, 1e-5),
    ("hard_silu", "lambda x: ops.hard_silu(x)", [("sep", (3, 4, 5))], True, True, 1e-5),
    ("gelu_tanh", "lambda x: ops.gelu(x)", [(N, (3, 4, 5))], True, True, 1e-4),
    ("gelu_erf", "lambda x: ops.gelu(x, approximate=False)", [(N, (3, 4, 5))], True, True, 1e-4),
    ("softmax", "lambda x: ops.softmax(x)", [(N, (3, 4, 5))], True, True, 1e-4),
    ("softmax_axis1", "lambda x: ops.softmax(x, axis=1)", [(N, (3, 4, 5))], True, True, 1e-4),
    ("log_softmax", "lambda x: ops.log_softmax(x)", [(N, (3, 4, 5))], True, True, 1e-4),
    # two inputs, broadcasting; numbers on either side
    ("add_bcast", "lambda a, b: ops.add(a, b)", [(N, (3, 4, 5)), (N, (5,))], True, False, 1e-5),
    ("add_same", "lambda a, b: a + b", [(N, (3, 4)), (N, (3, 4))], False, True, 1e-5),
    ("subtract_bcast", "lambda a, b: ops.subtract(a, b)", [(N, (3, 1, 5)), (N, (4, 5))], True, False, 1e-5),
    ("multiply_bcast", "lambda a, b: ops.multiply(a, b)", [(N, (3, 4, 5)), (N, (3, 4, 1))], True, True, 1e-5),
    ("divide_bcast", "lambda a, b: ops.divide(a, b)", [(N, (3, 4, 5)), ("pos", (3, 1, 5))], True, True, 1e-5),
    ("true_divide_op", "lambda a, b: a / b", [(N, (3, 4)), ("pos", (3, 4))], False, True, 1e-5),
    ("power", "lambda a, b: ops.power(a, b)", [("pos", (3, 4, 5)), (N, (3, 4, 5))], True, True, 1e-4),
    ("power_scalar", "lambda x: ops.power(x, 2)", [(N, (3, 4, 5))], True, True, 1e-5),
    ("power_operator", "lambda x: x ** 2", [(N, (3, 4, 5))], False, True, 1e-5),
    ("maximum_bcast", "lambda a, b: ops.maximum(a, b)", [("sep", (3, 4, 5)), (N, (5,))], True, False, 1e-5),
    ("minimum_scalar", "lambda x: ops.minimum(x, 0.5)", [("sep", (3, 4, 5))], True, True, 1e-5),
    ("arctan2", "lambda a, b: ops.arctan2(a, b)", [(N, (3, 4, 5)), (N, (3, 4, 5))], True, True, 1e-4),
    ("add_scalar", "lambda x: ops.add(x, 2.5)", [(N, (3, 4, 5))], True, True, 1e-5),
    ("rsub_scalar", "lambda x: ops.subtract(1.0, x)", [(N, (3, 4, 5))], True, True, 1e-5),
    ("rsub_operator", "lambda x: 1.0 - x", [(N, (3, 4, 5))], False, True, 1e-5),
    ("mul_scalar", "lambda x: ops.multiply(3, x)", [(N, (3, 4, 5))], True, True, 1e-5),
    ("mul_operator", "lambda x: 3 * x", [(N, (3, 4, 5))], False, True, 1e-5),
    ("div_scalar", "lambda x: ops.divide(x, 4.0)", [(N, (3, 4, 5))], True, True, 1e-5),
    ("div_operator", "lambda x: x / 4.0", [(N, (3, 4, 5))], False, True, 1e-5),
    ("rdiv_scalar", "lambda x: ops.true_divide(2.0, x)", [("pos", (3, 4, 5))], True, True, 1e-5),
    ("floor_divide", "lambda a, b: ops.floor_divide(a, b)", [(N, (3, 4, 5)), ("pos", (3, 4, 5))], False, True, 1e-5),
    ("mod", "lambda a, b: ops.mod(a, b)", [(N, (3, 4, 5)), ("pos", (3, 4, 5))], False, True, 1e-4),
    ("less", "lambda a, b: ops.less(a, b)", [(N, (3, 4, 5)), (N, (5,))], False, False, 1e-5),
    ("greater_equal", "lambda a: ops.greater_equal(a, 0.0)", [(N, (3, 4, 5))], False, True, 1e-5),
    ("equal_ids", "lambda a, b: ops.equal(a, b)", [("ids", (3, 4)), ("ids", (3, 4))], False, True, 1e-5),
    ("where", "lambda c, a, b: ops.where(c > 0, a, b)", [(N, (3, 4, 5)), (N, (3, 4, 5)), (N, (3, 4, 5))], False, True, 1e-5),
    ("where_scalar", "lambda a: ops.where(a > 0, a, 0.0)", [(N, (3, 4, 5))], False, True, 1e-5),
    ("clip", "lambda x: ops.clip(x, -0.5, 0.5)", [("sep", (3, 4, 5))], True, True, 1e-5),
    # reductions
    ("sum_axis1", "lambda x: ops.sum(x, axis=1)", [(N, (3, 4, 5))], True, True, 1e-5),
    ("sum_keepdims", "lambda x: ops.sum(x, axis=(1, 2), keepdims=True)", [(N, (3, 4, 5))], True, True, 1e-5),
    ("sum_all", "lambda x: ops.sum(x)", [(N, (3, 4, 5))], True, False, 1e-5),
    ("mean_axis", "lambda x: ops.mean(x, axis=-1)", [(N, (3, 4, 5))], True, True, 1e-5),
    ("mean_all", "lambda x: ops.mean(x)", [(N, (3, 4, 5))], True, False, 1e-5),
    ("max_axis", "lambda x: ops.max(x, axis=2)", [("sep", (3, 4, 5))], True, True, 1e-5),
    ("min_axis", "lambda x: ops.min(x, axis=1, keepdims=True)", [("sep", (3, 4, 5))], True, True, 1e-5),
    ("prod", "lambda x: ops.prod(x, axis=1)", [("pos", (3, 4, 5))], True, True, 1e-4),
    ("var", "lambda x: ops.var(x, axis=-1)", [(N, (3, 4, 5))], True, True, 1e-4),
    ("std", "lambda x: ops.std(x, axis=1)", [(N, (3, 4, 5))], True, True, 1e-4),
    ("logsumexp", "lambda x: ops.logsumexp(x, axis=-1)", [(N, (3, 4, 5))], True, True, 1e-4),
    ("argmax", "lambda x: ops.argmax(x, axis=-1)", [("sep", (3, 4, 5))], False, True, 1e-5),
    ("argmin", "lambda x: ops.argmin(x, axis=1)", [("sep", (3, 4, 5))], False, True, 1e-5),
    ("cumsum", "lambda x: ops.cumsum(x, axis=1)", [(N, (3, 4, 5))], True, True, 1e-5),
    ("cumprod", "lambda x: ops.cumprod(x, axis=2)", [("pos", (3, 4, 5))], True, True, 1e-4),
    # shapes
    ("reshape", "lambda x: ops.reshape(x, (-1, 20))", [(N, (3, 4, 5))], True, True, 1e-5),
    ("transpose", "lambda x: ops.transpose(x, (0, 2, 1))", [(N, (3, 4, 5))], True, True, 1e-5),
    ("expand_dims", "lambda x: ops.expand_dims(x, 1)", [(N, (3, 4))], True, True, 1e-5),
    ("squeeze", "lambda x: ops.squeeze(x, axis=1)", [(N, (3, 1, 5))], True, True, 1e-5),
    ("concatenate", "lambda a, b: ops.concatenate([a, b], axis=-1)", [(N, (3, 4, 5)), (N, (3, 4, 2))], True, True, 1e-5),
    ("stack", "lambda a, b: ops.stack([a, b], axis=1)", [(N, (3, 4)), (N, (3, 4))], True, True, 1e-5),
    ("tile", "lambda x: ops.tile(x, (1, 2, 3))", [(N, (3, 4, 5))], True, True, 1e-5),
    ("repeat", "lambda x: ops.repeat(x, 3, axis=1)", [(N, (3, 4, 5))], True, True, 1e-5),
    ("pad", "lambda x: ops.pad(x, [[0, 0], [1, 2], [3, 0]])", [(N, (3, 4, 5))], True, True, 1e-5),
    ("pad_value", "lambda x: ops.pad(x, [[0, 0], [1, 1]], constant_values=2.0)", [(N, (3, 4))], True, True, 1e-5),
    ("get_item_slices", "lambda x: ops.get_item(x, (slice(None), slice(1, 3), slice(None)))", [(N, (3, 4, 5))], True, False, 1e-5),
    ("get_item_slices_operator", "lambda x: x[:, 1:3, :]", [(N, (3, 4, 5))], False, True, 1e-5),
    ("get_item_int", "lambda x: x[:, -1]", [(N, (3, 4, 5))], False, True, 1e-5),
    ("get_item_ellipsis", "lambda x: x[..., 0]", [(N, (3, 4, 5))], False, True, 1e-5),
    ("get_item_newaxis", "lambda x: x[:, None, 2]", [(N, (3, 4, 5))], False, True, 1e-5),
    ("matmul_2d", "lambda a, b: ops.matmul(a, b)", [(N, (6, 5)), (N, (5, 4))], True, False, 1e-5),
    ("matmul_batched", "lambda a, b: ops.matmul(a, b)", [(N, (3, 4, 5)), (N, (3, 5, 2))], True, True, 1e-5),
    ("matmul_operator", "lambda a, b: a @ b", [(N, (3, 4, 5)), (N, (3, 5, 4))], False, True, 1e-5),
    ("one_hot", "lambda x: ops.one_hot(x, 5)", [("ids", (3, 4))], False, True, 1e-5),
    ("normalize", "lambda x: ops.normalize(x, axis=-1)", [(N, (3, 4, 5))], True, True, 1e-4),
    ("resize", "lambda x: ops.image.resize(x, (6, 10))", [(N, (2, 4, 5, 3))], True, True, 1e-4),
    ("swapaxes", "lambda x: ops.swapaxes(x, 1, 2)", [(N, (3, 4, 5))], False, False, 1e-5),
    # compositions, as in keras.io's examples
    ("composition", "lambda x, y: ops.mean(ops.square(x - ops.expand_dims(y, 1)), axis=-1) + ops.exp(-x[:, :, 0])",
     [(N, (3, 4, 5)), (N, (3, 5))], False, True, 1e-4),
    ("positions", "lambda x: x + ops.arange(5, dtype='float32')", [(N, (3, 4, 5))], False, True, 1e-5),
]


def close(a, b, rtol, what):
    a, b = np.asarray(a, "float64"), np.asarray(b, "float64")
    if a.shape != b.shape:
        return f"{what}: shape {a.shape} vs Keras's {b.shape}"
    atol = max(1e-6, 1e-6 * float(np.max(np.abs(b))) if b.size else 0.0)
    bad = np.abs(a - b) > atol + rtol * np.abs(b)
    if bad.any():
        i = np.unravel_index(np.argmax(np.abs(a - b)), a.shape)
        return f"{what}: {int(bad.sum())} of {a.size} differ, worst at {i}: {a[i]} vs Keras's {b[i]}"
    return None


# Files both ways: a model built with keras.ops and trained a little by nnfit, saved as
# .keras, loads in Keras with the same predictions.
SAVE_SCRIPT = textwrap.dedent("""
    import json, sys
    import numpy as np
    from nnfit import keras
    ops = keras.ops
    rng = np.random.default_rng(2)
    x = rng.normal(size=(64, 6, 4)).astype("float32")
    y = rng.integers(0, 3, size=64)
    i = keras.Input(shape=(6, 4))
    h = keras.layers.Dense(8)(i)
    h = ops.gelu(h) + ops.expand_dims(ops.mean(h, axis=1), 1) * 0.5
    h = ops.reshape(ops.transpose(h, (0, 2, 1))[:, 1:, :], (-1, 42))
    h = ops.where(h > 0, h, ops.exp(ops.minimum(h, 0.0)) - 1.0) / ops.sqrt(1.0 + ops.square(h))
    m = keras.Model(i, keras.layers.Dense(3, activation="softmax")(h))
    m.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    m.fit(x, y, epochs=2, batch_size=16, verbose=0)
    m.save(sys.argv[1] + "/ops.keras")
    np.save(sys.argv[1] + "/x.npy", x)
    np.save(sys.argv[1] + "/nnfit.npy", m.predict(x, verbose=0))
""")
LOAD_SCRIPT = textwrap.dedent("""
    import sys
    import numpy as np
    import keras
    m = keras.models.load_model(sys.argv[1] + "/ops.keras")
    np.save(sys.argv[1] + "/keras.npy", m.predict(np.load(sys.argv[1] + "/x.npy"), verbose=0))
""")


def run_scripts(argv, d, steps, what):
    """Runs each (side, code) of `steps` in order with the directory `d` as its argument,
    side "nnfit" under the nnfit interpreter (argv[2]) and "keras" under Keras's (argv[1],
    without PYTHONPATH); returns the first failure as a message, else None."""
    import os
    import subprocess
    keras_env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    keras_env.update(KERAS_BACKEND="tensorflow", TF_CPP_MIN_LOG_LEVEL="3")
    for side, code in steps:
        python, env = (argv[1], keras_env) if side == "keras" else (argv[2] if len(argv) > 2 else sys.executable,
                                                                     dict(os.environ))
        r = subprocess.run([python, "-c", code, d], capture_output=True, text=True, env=env, timeout=600)
        if r.returncode != 0:
            return f"{what}: {python} failed:\n{r.stderr[-2000:]}"
    return None


def files_both_ways(argv, save_script=None):
    """A model nnfit trained and saved (`save_script`, this module's SAVE_SCRIPT by default)
    loads in Keras with nnfit's predictions."""
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        failed = run_scripts(argv, d, [("nnfit", save_script or SAVE_SCRIPT), ("keras", LOAD_SCRIPT)], "files both ways")
        return failed or close(np.load(d + "/nnfit.npy"), np.load(d + "/keras.npy"), 1e-5,
                               "files both ways: Keras's predictions")


def compare_case(name, grad, symbolic, rtol, k, n):
    """One case's problems: its value, its gradients (against the largest of Keras's), and
    for a symbolic case the recorded nodes and the Functional model's predictions."""
    problems = [close(n["value"], k["value"], rtol, "value")]
    if grad:
        scale = max(float(np.max(np.abs(np.asarray(g)))) for g in k["grads"]) or 1.0
        for i, (gn, gk) in enumerate(zip(n["grads"], k["grads"])):
            gn, gk = np.asarray(gn), np.asarray(gk)
            if gn.shape != gk.shape or np.max(np.abs(gn - gk)) > 1e-4 * max(scale, 1.0):
                problems.append(f"gradient {i}: max difference {np.max(np.abs(gn - gk)) if gn.shape == gk.shape else gn.shape} "
                                f"(scale {scale:.3g})")
    if symbolic:
        if n["nodes"] != k["nodes"]:
            problems.append(f"nodes {n['nodes']} vs Keras's {k['nodes']}")
        problems.append(close(n["predict"], k["value"], rtol, "predict"))
    return [p for p in problems if p]


def case_failures(cases, keras_res, nnfit_res, compare=compare_case):
    """A line per case that failed on either side or whose results differ (`compare`)."""
    failures = []
    for name, _, _, grad, symbolic, rtol in cases:
        k, n = keras_res[name], nnfit_res[name]
        if "error" in k:
            failures.append(f"{name}: Keras failed ({k['error']}): fix the case")
        elif "error" in n:
            failures.append(f"{name}: nnfit failed: {n['error']}")
        elif problems := compare(name, grad, symbolic, rtol, k, n):
            failures.append(f"{name}: " + "; ".join(problems))
    return failures


def main(argv):
    script = SCRIPT.replace("CASES_SOURCE", repr([c[:5] for c in CASES]))
    keras_res, nnfit_res = parity_runs.run_both(script, argv, timeout=900)
    both_ways = files_both_ways(argv)
    failures = ([both_ways] if both_ways else []) + case_failures(CASES, keras_res, nnfit_res)
    for f in failures:
        print("FAIL", f)
    failed_cases = len([f for f in failures if f.split(":")[0] in {c[0] for c in CASES}])
    print(f"keras.ops parity: {len(CASES) - failed_cases} of {len(CASES)} cases agree")
    print(f"{len(CASES) + 1 - len(failures)} passed, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
