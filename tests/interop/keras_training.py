"""Loss, metric and optimizer parity with real Keras 3 (from PyPI, scripts/keras_venv.sh), one
case per loss, metric set and optimizer:

1. Value: Keras builds Input(6) -> Dense(4, activation) with random weights, compiles it
   with the loss and saves it as .keras; `nnfit evaluate --json` on the file (the loss
   read from the file's compile config) and `nnfit train`'s first step both give the loss
   Keras's evaluate gives (relative 1e-5).
2. Gradient: that step (SGD, learning rate 1, the whole batch, the loss as Keras
   serializes it) changes the weights by the gradient Keras's GradientTape computes
   (within 1e-4 of the largest), and the file nnfit writes carries the loss back to Keras
   with the same class and options.

Keras 3 does not serialize Huber's delta (its get_config leaves it out, so Keras itself
reloads Huber(delta=0.5) as delta 1): that case gives nnfit the delta as tf.keras writes it
and skips the evaluate of Keras's own file.

3. Metrics: models compiled with Keras's metric names, evaluated over several batches by
   Keras and by `nnfit evaluate --json` on Keras's file: every metric within 1e-5.

4. Optimizers: three SGD-sized steps (batches of 8 in order) by Keras's fit and by
   `nnfit train` with the optimizer as Keras serializes it end on the same weights (within
   1e-5 of the largest), and the file nnfit writes loads in Keras with the same optimizer
   class, options and iteration count, and the same slot variables.

5. Class and sample weights: see WEIGHT_CASES.

usage: keras_training.py NNFIT_CLI WORK_DIR [CASE_SUBSTRING]   (exit 0 when every case passes)
"""
import json
import os
import subprocess
import sys

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402

BATCH = 8
failures = []


def cases(losses):
    """(name, loss factory, output activation, target kind[, config keys Keras leaves out]):
    targets "real" (normal), "positive" (in (0, 2)), "prob" (in (0, 1)), "onehot", "signs"
    (-1/1), "binary" (0/1)."""
    return [
        ("MeanAbsoluteError", lambda: losses.MeanAbsoluteError(), "linear", "real"),
        ("MeanAbsolutePercentageError", lambda: losses.MeanAbsolutePercentageError(), "linear", "real"),
        ("MeanSquaredLogarithmicError", lambda: losses.MeanSquaredLogarithmicError(), "softplus", "positive"),
        ("Huber", lambda: losses.Huber(), "linear", "real"),
        ("Huber delta 0.5", lambda: losses.Huber(delta=0.5), "linear", "real", {"delta": 0.5}),
        ("LogCosh", lambda: losses.LogCosh(), "linear", "real"),
        ("Poisson", lambda: losses.Poisson(), "softplus", "positive"),
        ("KLDivergence", lambda: losses.KLDivergence(), "softmax", "prob"),
        ("Hinge -1/1", lambda: losses.Hinge(), "linear", "signs"),
        ("Hinge 0/1", lambda: losses.Hinge(), "linear", "binary"),
        ("SquaredHinge", lambda: losses.SquaredHinge(), "linear", "signs"),
        ("CategoricalHinge", lambda: losses.CategoricalHinge(), "linear", "onehot"),
        ("CosineSimilarity", lambda: losses.CosineSimilarity(), "linear", "real"),
        ("CategoricalCrossentropy label_smoothing", lambda: losses.CategoricalCrossentropy(label_smoothing=0.1),
         "softmax", "onehot"),
        ("CategoricalCrossentropy logits label_smoothing",
         lambda: losses.CategoricalCrossentropy(from_logits=True, label_smoothing=0.2), "linear", "onehot"),
        ("BinaryCrossentropy label_smoothing", lambda: losses.BinaryCrossentropy(label_smoothing=0.1), "sigmoid",
         "binary"),
        ("BinaryFocalCrossentropy", lambda: losses.BinaryFocalCrossentropy(), "sigmoid", "binary"),
        ("BinaryFocalCrossentropy logits balanced",
         lambda: losses.BinaryFocalCrossentropy(from_logits=True, apply_class_balancing=True, alpha=0.3, gamma=1.5,
                                                label_smoothing=0.1), "linear", "binary"),
        ("CategoricalFocalCrossentropy", lambda: losses.CategoricalFocalCrossentropy(), "softmax", "onehot"),
        ("CategoricalFocalCrossentropy logits",
         lambda: losses.CategoricalFocalCrossentropy(from_logits=True, gamma=1.0, label_smoothing=0.1), "linear",
         "onehot"),
    ]


def targets(kind, rng):
    shape = (BATCH, 4)
    if kind == "real":
        return rng.standard_normal(shape)
    if kind == "positive":
        return rng.uniform(0.0, 2.0, shape)
    if kind == "prob":
        t = rng.uniform(0.05, 1.0, shape)
        return t / t.sum(1, keepdims=True)
    if kind == "onehot":
        return np.eye(4)[rng.integers(0, 4, BATCH)]
    if kind == "signs":
        return np.where(rng.random(shape) < 0.5, -1.0, 1.0)
    return (rng.random(shape) < 0.5).astype(np.float64)


def run_case(keras, cli, work, case, rng):
    import tensorflow as tf
    name, factory, activation, kind = case[:4]
    missing = case[4] if len(case) > 4 else {}
    loss = factory()
    inp = keras.Input((6,), name="x")
    model = keras.Model(inp, keras.layers.Dense(4, activation=activation, name="out")(inp))
    model.set_weights([(rng.standard_normal(w.shape) * 0.5).astype(np.float32) for w in model.weights])
    model.compile(optimizer=keras.optimizers.SGD(1.0), loss=loss)
    x = rng.standard_normal((BATCH, 6)).astype(np.float32)
    y = targets(kind, rng).astype(np.float32)
    path = os.path.join(work, "loss.keras")
    model.save(path)
    np.save(os.path.join(work, "x.npy"), x)
    np.save(os.path.join(work, "y.npy"), y)
    want = float(model.evaluate(x, y, batch_size=BATCH, verbose=0))
    value_diff = 0.0
    if not missing:
        out = subprocess.run([cli, "evaluate", path, "--input", os.path.join(work, "x.npy"), "--labels",
                              os.path.join(work, "y.npy"), "--batch-size", str(BATCH), "--json"],
                             check=True, capture_output=True, text=True).stdout
        value_diff = abs(float(json.loads(out)["loss"]) - want) / max(1.0, abs(want))
    serialized = keras.saving.serialize_keras_object(loss)
    serialized["config"].update(missing)
    with tf.GradientTape() as tape:
        value = loss(y, model(x, training=True))
    grads = tape.gradient(value, model.trainable_weights)
    cfg = {
        "model": path,
        "data": {"train": {"source": {"format": "npy", "x": "x.npy", "y": "y.npy"}, "pipeline": [{"batch": BATCH}]}},
        "compile": {"optimizer": {"class_name": "SGD", "config": {"learning_rate": 1.0}},
                    "loss": serialized},
        "fit": {"epochs": 1, "seed": 1},
    }
    with open(os.path.join(work, "step.json"), "w") as f:
        json.dump(cfg, f)
    after_path = os.path.join(work, "after.keras")
    metrics = os.path.join(work, "metrics.json")
    subprocess.run([cli, "train", os.path.join(work, "step.json"), "--quiet", "--save", after_path, "--metrics-json",
                    metrics], check=True, stdout=subprocess.DEVNULL)
    with open(metrics) as f:
        got = float(json.load(f)["epochs"][0]["loss"])
    value_diff = max(value_diff, abs(got - want) / max(1.0, abs(want)))
    after = keras.models.load_model(after_path)
    worst = 0.0
    for w0, w1, g in zip(model.trainable_weights, after.trainable_weights, grads):
        g = g.numpy()
        worst = max(worst, float(np.abs((w0.numpy() - w1.numpy()) - g).max()) / max(1.0, float(np.abs(g).max())))
    back = after.loss
    want_cfg = {k: v for k, v in loss.get_config().items() if k not in ("name", "dtype")}
    want_cfg.update(missing)
    got_cfg = None
    if back is not None:
        got_cfg = {k: v for k, v in back.get_config().items() if k not in ("name", "dtype")}
        # Keras 3 keeps the delta it was given (from nnfit's file) among the function's kwargs.
        got_cfg.update({k: getattr(back, "_fn_kwargs", {}).get(k) for k in missing})
    same = type(back) is type(loss) and got_cfg == want_cfg
    ok = value_diff <= 1e-5 and worst <= 1e-4 and same
    print(f"{'ok  ' if ok else 'FAIL'} {name}: loss {got:.6g} vs Keras {want:.6g} (rel diff {value_diff:.2g}), "
          f"gradient max |diff|/scale {worst:.3g}, "
          f"{'the loss comes back to Keras as written' if same else f'the loss comes back as {type(back).__name__} {got_cfg}'}")
    if not ok:
        failures.append(name)


METRIC_CASES = [
    # (name, output units, activation, loss, metrics, target kind)
    ("regression metrics", 3, "linear", "mse", ["mae", "mse", "root_mean_squared_error"], "real"),
    ("binary metrics", 1, "sigmoid", "binary_crossentropy", ["precision", "recall", "auc", "binary_accuracy"], "binary"),
    ("multi-label metrics", 4, "sigmoid", "binary_crossentropy", ["Precision", "Recall", "AUC"], "binary"),
    ("categorical metrics", 8, "softmax", "categorical_crossentropy",
     ["top_k_categorical_accuracy", "categorical_accuracy"], "onehot"),
    ("sparse metrics", 8, "softmax", "sparse_categorical_crossentropy",
     ["sparse_top_k_categorical_accuracy", "accuracy"], "ids"),
    # Metric objects with arguments (written to compile_config as Keras's objects).
    ("binary metric arguments", 1, "sigmoid", "binary_crossentropy",
     [lambda m: m.Precision(thresholds=0.3), lambda m: m.Recall(thresholds=0.7),
      lambda m: m.AUC(num_thresholds=50, curve="PR"), lambda m: m.AUC(curve="PR", summation_method="majoring", name="auc_maj"),
      lambda m: m.AUC(curve="PRGAIN", name="auc_gain"), lambda m: m.AUC(summation_method="minoring", name="auc_min"),
      lambda m: m.BinaryAccuracy(threshold=0.3)], "binary"),
    ("multi-label metric arguments", 4, "sigmoid", "binary_crossentropy",
     [lambda m: m.Precision(top_k=2), lambda m: m.Recall(class_id=1), lambda m: m.F1Score(threshold=0.5),
      lambda m: m.FBetaScore(beta=2.0, average="macro", threshold=0.4),
      lambda m: m.F1Score(average="micro", threshold=0.5, name="f1_micro"),
      lambda m: m.AUC(from_logits=True, name="auc_logits"), lambda m: m.AUC(thresholds=[0.2, 0.5, 0.7], name="auc_list")],
     "binary"),
    ("categorical metric arguments", 8, "softmax", "categorical_crossentropy",
     [lambda m: m.F1Score(), lambda m: m.F1Score(average="weighted", name="f1_weighted"),
      lambda m: m.TopKCategoricalAccuracy(k=2)], "onehot"),
    ("sparse metric arguments", 8, "softmax", "sparse_categorical_crossentropy",
     [lambda m: m.SparseTopKCategoricalAccuracy(k=3, name="top3")], "ids"),
]


def run_metric_case(keras, cli, work, case, rng):
    name, units, activation, loss, metrics, kind = case
    rows = 40  # five batches of 8
    inp = keras.Input((6,), name="x")
    model = keras.Model(inp, keras.layers.Dense(units, activation=activation, name="out")(inp))
    model.set_weights([(rng.standard_normal(w.shape) * 0.7).astype(np.float32) for w in model.weights])
    model.compile(optimizer="sgd", loss=loss, metrics=[m if isinstance(m, str) else m(keras.metrics) for m in metrics])
    x = rng.standard_normal((rows, 6)).astype(np.float32)
    if kind == "ids":
        y = rng.integers(0, units, rows).astype(np.int32)
    elif kind == "onehot":
        y = np.eye(units, dtype=np.float32)[rng.integers(0, units, rows)]
    elif kind == "binary":
        y = (rng.random((rows, units)) < 0.5).astype(np.float32)
    else:
        y = rng.standard_normal((rows, units)).astype(np.float32)
    path = os.path.join(work, "metrics.keras")
    model.save(path)
    np.save(os.path.join(work, "mx.npy"), x)
    np.save(os.path.join(work, "my.npy"), y)
    want = model.evaluate(x, y, batch_size=BATCH, verbose=0, return_dict=True)
    out = subprocess.run([cli, "evaluate", path, "--input", os.path.join(work, "mx.npy"), "--labels",
                          os.path.join(work, "my.npy"), "--batch-size", str(BATCH), "--json"],
                         check=True, capture_output=True, text=True).stdout
    got = json.loads(out)
    worst, missing = 0.0, []
    # A per-class value (F1Score with average None) is logged by nnfit as "<name>_<class>".
    flat = {}
    for k, v in want.items():
        v = np.asarray(v, dtype=np.float64)
        flat.update({k: float(v)} if v.ndim == 0 else {f"{k}_{i}": float(x) for i, x in enumerate(v)})
    for k in ["loss"] + list(flat):
        if k not in got:
            missing.append(k)
            continue
        worst = max(worst, abs(float(got[k]) - flat[k]))
    ok = worst <= 1e-5 and not missing
    if not ok:
        print("   keys off by more than 1e-5:", {k: (float(got[k]), flat[k]) for k in flat
                                                if k in got and abs(float(got[k]) - flat[k]) > 1e-5})
    detail = ", ".join(f"{k} {float(got[k]):.6g}" for k in flat if k in got)
    print(f"{'ok  ' if ok else 'FAIL'} {name}: {detail}; max |diff| from Keras {worst:.2g}"
          + (f"; missing {missing} (nnfit {sorted(got)}, Keras {sorted(want)})" if missing else ""))
    if not ok:
        failures.append(name)


OPTIMIZER_CASES = [
    ("Adam", lambda o: o.Adam(0.01)),
    ("Adagrad", lambda o: o.Adagrad(0.05)),
    ("Adagrad initial_accumulator_value", lambda o: o.Adagrad(0.05, initial_accumulator_value=0.5, epsilon=1e-5)),
    ("Adamax", lambda o: o.Adamax(0.02)),
    ("Lion", lambda o: o.Lion(0.003)),
    ("Lion betas", lambda o: o.Lion(0.003, beta_1=0.8, beta_2=0.95)),
    ("Adadelta", lambda o: o.Adadelta(1.0)),
    ("Adadelta rho", lambda o: o.Adadelta(0.5, rho=0.8, epsilon=1e-6)),
    # Keras's gradient clipping, small enough limits that it acts.
    ("Adam clipnorm", lambda o: o.Adam(0.05, clipnorm=0.3)),
    ("SGD clipvalue", lambda o: o.SGD(0.1, clipvalue=0.05)),
    ("RMSprop global_clipnorm", lambda o: o.RMSprop(0.01, global_clipnorm=0.4)),
    ("Nadam", lambda o: o.Nadam(0.01)),
    ("Nadam betas", lambda o: o.Nadam(0.02, beta_1=0.8, beta_2=0.95, epsilon=1e-5)),
    ("Ftrl", lambda o: o.Ftrl(0.1)),
    ("Ftrl regularized", lambda o: o.Ftrl(0.2, learning_rate_power=-0.7, initial_accumulator_value=0.3,
                                          l1_regularization_strength=0.01, l2_regularization_strength=0.02,
                                          l2_shrinkage_regularization_strength=0.05, beta=0.1)),
    # Keras's weight_decay on every optimizer: p -= p·wd·lr before the update.
    ("SGD weight_decay", lambda o: o.SGD(0.1, momentum=0.5, weight_decay=0.05)),
    ("RMSprop weight_decay", lambda o: o.RMSprop(0.01, weight_decay=0.1)),
    ("Adagrad weight_decay", lambda o: o.Adagrad(0.05, weight_decay=0.2)),
    ("Nadam weight_decay", lambda o: o.Nadam(0.01, weight_decay=0.1)),
    ("Adam weight_decay", lambda o: o.Adam(0.01, weight_decay=0.1)),
    # Keras's use_ema: the averages are the optimizer's first variables, and fit ends with
    # the weights on them.
    ("Adam use_ema", lambda o: o.Adam(0.05, use_ema=True, ema_momentum=0.9)),
    ("SGD use_ema overwrite every 2", lambda o: o.SGD(0.1, momentum=0.5, use_ema=True, ema_momentum=0.5,
                                                      ema_overwrite_frequency=2)),
    ("RMSprop use_ema", lambda o: o.RMSprop(0.01, use_ema=True)),
    # AMSGrad's velocity_hat and centered RMSprop's average_gradient, in Keras's variable order.
    ("Adam amsgrad", lambda o: o.Adam(0.02, amsgrad=True)),
    ("AdamW amsgrad", lambda o: o.AdamW(0.02, weight_decay=0.1, amsgrad=True)),
    ("Adam amsgrad use_ema", lambda o: o.Adam(0.02, amsgrad=True, use_ema=True, ema_momentum=0.8)),
    ("RMSprop centered", lambda o: o.RMSprop(0.01, centered=True)),
    ("RMSprop centered momentum", lambda o: o.RMSprop(0.01, momentum=0.6, centered=True)),
]


def run_optimizer_case(keras, cli, work, case, rng):
    name, factory = case
    rows = 24  # three steps of 8
    inp = keras.Input((6,), name="x")
    model = keras.Model(inp, keras.layers.Dense(4, name="out")(inp))
    model.set_weights([(rng.standard_normal(w.shape) * 0.5).astype(np.float32) for w in model.weights])
    optimizer = factory(keras.optimizers)
    model.compile(optimizer=optimizer, loss="mse")
    x = rng.standard_normal((rows, 6)).astype(np.float32)
    y = rng.standard_normal((rows, 4)).astype(np.float32)
    path = os.path.join(work, "opt.keras")
    model.save(path)
    np.save(os.path.join(work, "ox.npy"), x)
    np.save(os.path.join(work, "oy.npy"), y)
    model.fit(x, y, batch_size=BATCH, epochs=1, shuffle=False, verbose=0)
    cfg = {
        "model": path,
        "data": {"train": {"source": {"format": "npy", "x": "ox.npy", "y": "oy.npy"}, "pipeline": [{"batch": BATCH}]}},
        "compile": {"optimizer": keras.saving.serialize_keras_object(optimizer), "loss": "mse"},
        "fit": {"epochs": 1, "shuffle": False, "seed": 1},
    }
    with open(os.path.join(work, "opt.json"), "w") as f:
        json.dump(cfg, f)
    after_path = os.path.join(work, "opt_after.keras")
    subprocess.run([cli, "train", os.path.join(work, "opt.json"), "--quiet", "--save", after_path], check=True,
                   stdout=subprocess.DEVNULL)
    after = keras.models.load_model(after_path)
    worst = 0.0
    for w0, w1 in zip(model.weights, after.weights):
        a, b = w0.numpy(), w1.numpy()
        worst = max(worst, float(np.abs(a - b).max()) / max(1.0, float(np.abs(a).max())))
    got_opt = after.optimizer
    want_cfg = {k: v for k, v in optimizer.get_config().items() if k != "name"}
    got_cfg = {k: v for k, v in got_opt.get_config().items() if k != "name"}
    same_cfg = type(got_opt) is type(optimizer) and all(
        (abs(got_cfg.get(k, 0) - v) <= 1e-7 * max(1.0, abs(v))) if isinstance(v, float) else got_cfg.get(k) == v
        for k, v in want_cfg.items())
    slots = max((float(np.abs(a.numpy() - b.numpy()).max()) for a, b in zip(optimizer.variables, got_opt.variables)
                 if a.shape == b.shape), default=0.0)
    same_slots = len(optimizer.variables) == len(got_opt.variables) and slots <= 1e-5
    ok = worst <= 1e-5 and same_cfg and same_slots
    print(f"{'ok  ' if ok else 'FAIL'} {name}: weights after 3 steps max |diff|/scale {worst:.3g}, "
          f"optimizer variables max |diff| {slots:.3g} ({len(got_opt.variables)} vs Keras's {len(optimizer.variables)})"
          f"{'' if same_cfg else f'; config differs: {got_cfg} vs {want_cfg}'}")
    if not ok:
        failures.append(name)


# 5. Weights: Keras's fit with class_weight or sample_weight (three batches of 8 in order,
#    SGD 0.1) and `nnfit train` with fit.class_weight or the npy source's sample_weight end on
#    the same weights (within 1e-5 of the largest) with the same epoch loss (relative 1e-5).
#    (name, loss factory, output activation, output units, target kind, input shape, weighting)
WEIGHT_CASES = [
    ("class_weight sparse crossentropy", lambda l: l.SparseCategoricalCrossentropy(from_logits=True), None, 4, "ids",
     (6,), {"class_weight": {0: 1.0, 1: 3.0, 2: 0.5}}),
    ("class_weight categorical crossentropy one-hot", lambda l: l.CategoricalCrossentropy(), "softmax", 4, "onehot",
     (6,), {"class_weight": {0: 2.0, 3: 0.25}}),
    ("class_weight binary crossentropy", lambda l: l.BinaryCrossentropy(), "sigmoid", 1, "binary", (6,),
     {"class_weight": {0: 0.3, 1: 2.0}}),
    ("sample_weight mean squared error", lambda l: l.MeanSquaredError(), None, 4, "real", (6,), {"sample_weight": True}),
    ("sample_weight huber", lambda l: l.Huber(), None, 4, "real", (6,), {"sample_weight": True}),
    ("sample_weight mse on (steps, features)", lambda l: l.MeanSquaredError(), None, 4, "real", (3, 6),
     {"sample_weight": True}),
]


def run_weight_case(keras, cli, work, case, rng):
    name, factory, activation, units, kind, shape, weighting = case
    n = 3 * BATCH
    inp = keras.Input(shape, name="x")
    model = keras.Model(inp, keras.layers.Dense(units, activation=activation, name="out")(inp))
    model.set_weights([(rng.standard_normal(w.shape) * 0.5).astype(np.float32) for w in model.weights])
    model.compile(optimizer=keras.optimizers.SGD(0.1), loss=factory(keras.losses))
    path = os.path.join(work, "weighted.keras")
    model.save(path)
    x = rng.standard_normal((n,) + shape).astype(np.float32)
    out_shape = (n,) + shape[:-1] + (units,)
    if kind == "ids":
        y = rng.integers(0, units, n).astype(np.int32)
    elif kind == "onehot":
        y = np.eye(units)[rng.integers(0, units, n)].astype(np.float32)
    elif kind == "binary":
        y = (rng.random(out_shape) < 0.5).astype(np.float32)
    else:
        y = rng.standard_normal(out_shape).astype(np.float32)
    np.save(os.path.join(work, "x.npy"), x)
    np.save(os.path.join(work, "y.npy"), y)
    source = {"format": "npy", "x": "x.npy", "y": "y.npy"}
    fit = {"epochs": 1, "shuffle": False, "seed": 1}
    kwargs = {}
    if "class_weight" in weighting:
        kwargs["class_weight"] = weighting["class_weight"]
        fit["class_weight"] = {str(k): v for k, v in weighting["class_weight"].items()}
    else:
        w = rng.uniform(0.0, 2.0, n).astype(np.float32)
        # Keras broadcasts a weight per sample over the steps only when given as (n, 1).
        kwargs["sample_weight"] = w if len(shape) == 1 else w[:, None]
        np.save(os.path.join(work, "w.npy"), w)
        source["sample_weight"] = "w.npy"
    want_loss = model.fit(x, y, batch_size=BATCH, epochs=1, shuffle=False, verbose=0, **kwargs).history["loss"][0]
    cfg = {"model": path, "data": {"train": {"source": source, "pipeline": [{"batch": BATCH}]}},
           "compile": {"optimizer": {"class_name": "SGD", "config": {"learning_rate": 0.1}},
                       "loss": keras.saving.serialize_keras_object(model.loss)},
           "fit": fit}
    with open(os.path.join(work, "weighted.json"), "w") as f:
        json.dump(cfg, f)
    after_path, metrics = os.path.join(work, "weighted_after.keras"), os.path.join(work, "weighted_metrics.json")
    subprocess.run([cli, "train", os.path.join(work, "weighted.json"), "--quiet", "--save", after_path,
                    "--metrics-json", metrics], check=True, stdout=subprocess.DEVNULL)
    with open(metrics) as f:
        got_loss = float(json.load(f)["epochs"][0]["loss"])
    after = keras.models.load_model(after_path)
    scale = max(1.0, max(float(np.abs(w.numpy()).max()) for w in model.trainable_weights))
    worst = max(float(np.abs(a.numpy() - b.numpy()).max()) for a, b in zip(model.trainable_weights,
                                                                           after.trainable_weights)) / scale
    loss_diff = abs(got_loss - want_loss) / max(1.0, abs(want_loss))
    ok = worst <= 1e-5 and loss_diff <= 1e-5
    print(f"{'ok  ' if ok else 'FAIL'} {name}: weights max |diff| {worst:.3g} (tol 1e-5), "
          f"loss {got_loss:.6g} vs Keras {want_loss:.6g} (rel diff {loss_diff:.2g})")
    if not ok:
        failures.append(name)


def main(cli, work, only=None):
    import keras
    os.makedirs(work, exist_ok=True)
    rng = np.random.default_rng(11)
    for case in cases(keras.losses):
        if only and only not in case[0]:
            continue
        try:
            run_case(keras, cli, work, case, rng)
        except subprocess.CalledProcessError as e:
            print(f"FAIL {case[0]}: nnfit exited with {e.returncode}: {e.stderr or ''}")
            failures.append(case[0])
    for case in OPTIMIZER_CASES:
        if only and only not in case[0]:
            continue
        try:
            run_optimizer_case(keras, cli, work, case, rng)
        except subprocess.CalledProcessError as e:
            print(f"FAIL {case[0]}: nnfit exited with {e.returncode}: {e.stderr or ''}")
            failures.append(case[0])
    for case in WEIGHT_CASES:
        if only and only not in case[0]:
            continue
        try:
            run_weight_case(keras, cli, work, case, rng)
        except subprocess.CalledProcessError as e:
            print(f"FAIL {case[0]}: nnfit exited with {e.returncode}: {e.stderr or ''}")
            failures.append(case[0])
    for case in METRIC_CASES:
        if only and only not in case[0]:
            continue
        try:
            run_metric_case(keras, cli, work, case, rng)
        except subprocess.CalledProcessError as e:
            print(f"FAIL {case[0]}: nnfit exited with {e.returncode}: {e.stderr or ''}")
            failures.append(case[0])
    if failures:
        print(f"{len(failures)} case(s) failed: {', '.join(failures)}")
        return 1
    print("every loss, optimizer and metric case passed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else None))
