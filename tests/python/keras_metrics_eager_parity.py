"""Keras.MetricsEagerParity: the metrics nnfit's engine computes (Accuracy ... AUC,
F1Score), updated on arrays outside fit as a custom training loop does: several
update_state calls with and without sample weights, result(), reset_state() and one more
update, metric(y, p), and each metric's name and variables, under real Keras 3 and under
nnfit (python/nnfit/keras/_metric_eager.py), to 1e-5.

    usage: keras_metrics_eager_parity.py KERAS_PYTHON [NNFIT_PYTHON]
"""
import re
import sys

import numpy as np

import parity_runs

SCRIPT = """
import json
import numpy as np
IMPORT_LINE

rng = np.random.default_rng(7)
binary_y = rng.integers(0, 2, size=(40, 1)).astype("float32")
binary_p = rng.random((40, 1)).astype("float32")
binary_p[:4] = [[0.0], [1.0], [0.5], [0.25]]  # on thresholds: Keras's bucketing decides them
multi_y = rng.integers(0, 2, size=(40, 3)).astype("float32")
multi_p = rng.random((40, 3)).astype("float32")
ids = rng.integers(0, 5, size=(40,))
onehot = np.eye(5, dtype="float32")[ids]
scores = rng.random((40, 5)).astype("float32")
logits = rng.normal(size=(40, 1)).astype("float32") * 3
values = rng.normal(size=(40, 2)).astype("float32")
targets = (values + rng.normal(size=(40, 2)) * 0.3).astype("float32")
weights = rng.random(40).astype("float32")
data = {"binary": (binary_y, binary_p), "multi": (multi_y, multi_p), "sparse": (ids, scores),
        "onehot": (onehot, scores), "logits": (binary_y, logits), "regression": (targets, values),
        "equal": (ids, np.where(rng.random(40) < 0.6, ids, 0))}

CASES = [
    ("Accuracy()", "equal"), ("BinaryAccuracy()", "binary"), ("BinaryAccuracy(threshold=0.3)", "binary"),
    ("CategoricalAccuracy()", "onehot"), ("SparseCategoricalAccuracy()", "sparse"),
    ("TopKCategoricalAccuracy(k=2)", "onehot"), ("SparseTopKCategoricalAccuracy(k=3)", "sparse"),
    ("MeanAbsoluteError()", "regression"), ("MeanSquaredError()", "regression"),
    ("RootMeanSquaredError()", "regression"), ("MeanAbsolutePercentageError()", "regression"),
    ("Precision()", "binary"), ("Recall()", "binary"), ("Precision(thresholds=[0.2, 0.5, 0.8])", "binary"),
    ("Recall(thresholds=[0.0, 0.5, 1.0])", "binary"), ("Precision(top_k=2)", "multi"),
    ("Recall(top_k=1, class_id=2)", "multi"), ("Precision(class_id=1)", "multi"),
    ("AUC()", "binary"), ("AUC(num_thresholds=11)", "binary"), ("AUC(curve='PR')", "binary"),
    ("AUC(curve='PR', summation_method='majoring')", "binary"), ("AUC(summation_method='minoring')", "binary"),
    ("AUC(curve='PRGAIN')", "binary"), ("AUC(thresholds=[0.1, 0.4, 0.45, 0.9])", "binary"),
    ("AUC(from_logits=True)", "logits"), ("AUC(multi_label=True)", "multi"),
    ("AUC(multi_label=True, label_weights=[1.0, 2.0, 0.5])", "multi"), ("AUC(label_weights=[1.0, 2.0, 0.5])", "multi"),
    ("F1Score()", "multi"), ("F1Score(average='macro', threshold=0.5)", "multi"),
    ("F1Score(average='micro', threshold=0.4)", "multi"), ("FBetaScore(beta=2.0, average='weighted')", "onehot"),
]

out = {}
for source, kind in CASES:
    y, p = data[kind]
    try:
        m = eval("keras.metrics." + source)
        m.update_state(y[:16], p[:16])
        first = np.asarray(m.result()).tolist()
        m.update_state(y[16:], p[16:], sample_weight=weights[16:])
        second = np.asarray(m.result()).tolist()
        variables = sorted([v.name, list(v.shape)] for v in m.variables)
        m.reset_state()
        m.update_state(y[:24], p[:24], sample_weight=weights[:24])
        after_reset = np.asarray(m.result()).tolist()
        called = np.asarray(eval("keras.metrics." + source)(y, p)).tolist()
        out[source] = {"name": m.name, "first": first, "second": second, "reset": after_reset, "called": called,
                       "variables": variables}
    except Exception as e:
        out[source] = {"error": f"{type(e).__name__}: {e}"}
print("PARITY " + json.dumps(out))
"""


def main(argv):
    keras_res, nnfit_res = parity_runs.run_both(SCRIPT, argv, timeout=600)
    failures = []
    for source, k in keras_res.items():
        n = nnfit_res[source]
        if "error" in k:
            failures.append(f"{source}: Keras failed ({k['error']}): fix the case")
            continue
        if "error" in n:
            failures.append(f"{source}: nnfit failed: {n['error']}")
            continue
        problems = [f"{key} {n[key]} vs Keras's {k[key]}" for key in ("first", "second", "reset", "called")
                    if np.shape(n[key]) != np.shape(k[key])
                    or not np.allclose(n[key], k[key], rtol=1e-5, atol=1e-6)]
        # Keras numbers a second object of a class (auc_1); nnfit numbers them in compile.
        if n["name"] != re.sub(r"_\d+$", "", k["name"]) and n["name"] != k["name"]:
            problems.append(f"name {n['name']!r} vs Keras's {k['name']!r}")
        if n["variables"] != k["variables"]:
            problems.append(f"variables {n['variables']} vs Keras's {k['variables']}")
        if problems:
            failures.append(f"{source}: " + "; ".join(problems))
    for f in failures:
        print("FAIL", f)
    print(f"engine metrics on arrays: {len(keras_res) - len(failures)} of {len(keras_res)} agree with Keras "
          "(results after updates with and without sample weights, after reset_state, metric(y, p), names, "
          "variables)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
