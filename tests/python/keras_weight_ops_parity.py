"""Operations on a subclassed layer's weights alone inside its call (Note [Weight-only
values] in src/nn/traced_layer.cpp), against real Keras: a reparametrised kernel
(ops.softplus(w)) with a learned temperature (ops.exp(t)) and an add_loss weight penalty;
a weight-normalised kernel (sum over an axis, sqrt, divide) with a bias that is a mean of
a weight; weight @ weight, transpose, reshape, add of two weights, abs, square, a constant
factor, mean over all axes, a norm of a weight; the same layers in a Sequential and in a subclassed
keras.Model. Both frameworks start from the same weights (set_weights) and train a few
steps with SGD and with Adam; History's losses, the predictions and every weight must agree
within 1e-5 relative (|a - b| / max(|b|, 1)). The Adam-trained functional and Sequential
models are saved as .keras files, and each framework loads the other's (custom_objects):
its predictions must agree with the writer's within 1e-5 relative too.

usage: keras_weight_ops_parity.py KERAS_PYTHON [NNFIT_PYTHON]
"""
import os
import sys
import tempfile

import parity_runs

SCRIPT = """
import json
import numpy as np
IMPORT_LINE
from keras import layers, ops

class Positive(layers.Layer):  # the issue's example
    def build(self, s):
        self.w = self.add_weight(shape=(s[-1], 4))
        self.t = self.add_weight(shape=(), initializer="zeros")
    def call(self, x):
        self.add_loss(1e-3 * ops.sum(ops.square(self.w)))
        return ops.matmul(x, ops.softplus(self.w)) * ops.exp(self.t)

class WeightNorm(layers.Layer):  # reductions over some axes and all, sqrt, abs, a bias from a mean
    def build(self, s):
        self.v = self.add_weight(shape=(s[-1], 3), name="v")
        self.g = self.add_weight(shape=(3,), initializer="ones", name="g")
        self.b = self.add_weight(shape=(2, 3), initializer="zeros", name="b")
    def call(self, x):
        norm = ops.sqrt(ops.sum(ops.square(self.v), axis=0) + 1e-6)
        kernel = self.v * (ops.abs(self.g) / norm)
        self.add_loss(0.01 * ops.mean(ops.abs(self.v)))
        return ops.matmul(x, kernel) + ops.mean(self.b, axis=0)

class Mixing(layers.Layer):  # weight @ weight, transpose, reshape, add of two weights, a norm
    def build(self, s):
        self.a = self.add_weight(shape=(3, s[-1]), name="a")
        self.m = self.add_weight(shape=(3, 3), name="m")
        self.c = self.add_weight(shape=(1, 3), name="c")
        self.d = self.add_weight(shape=(3,), name="d")
    def call(self, x):
        kernel = ops.matmul(ops.transpose(self.a), 0.5 * ops.exp(self.m))  # (features, 3)
        shift = ops.reshape(self.c, (3,)) + self.d - 0.1 * ops.norm(self.m)
        return ops.tanh(ops.matmul(x, kernel)) * ops.softplus(shift) + ops.add(x[:, :3], shift)

class Net(keras.Model):  # a subclassed model around a weight-op layer
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.pos = Positive(name="pos")
        self.head = layers.Dense(1, name="head")
    def call(self, x):
        return self.head(ops.relu(self.pos(x)))

import os
custom = {"Positive": Positive, "WeightNorm": WeightNorm, "Mixing": Mixing}
rng = np.random.default_rng(0)
x = rng.normal(size=(24, 5)).astype("float32")
y = (x[:, :1] * 0.7 - x[:, 1:2] * 0.3 + 0.1).astype("float32")

def functional(layer):
    inp = keras.Input(shape=(5,))
    return keras.Model(inp, layers.Dense(1, name="out")(layer(inp)))

cases = {
    "positive_functional": lambda: functional(Positive(name="positive")),
    "weight_norm_functional": lambda: functional(WeightNorm(name="weight_norm")),
    "mixing_sequential": lambda: keras.Sequential([keras.Input(shape=(5,)), Mixing(name="mixing"),
                                                   layers.Dense(1, name="out")]),
    "positive_subclassed_model": lambda: Net(),
}
out = {}
if os.environ.get("WOPS_LOAD"):  # predictions of the other framework's files
    for name in sorted(os.listdir(os.environ["WOPS_LOAD"])):
        model = keras.models.load_model(os.path.join(os.environ["WOPS_LOAD"], name), custom_objects=custom)
        out[name] = model.predict(x, verbose=0).ravel().tolist()
    print("PARITY " + json.dumps(out))
    raise SystemExit(0)
for name, make in cases.items():
    for opt in ("sgd", "adam"):
        model = make()
        model(x[:2])  # builds the weights
        start = [np.random.default_rng(7 + i).normal(scale=0.3, size=w.shape).astype("float32")
                 for i, w in enumerate(model.get_weights())]
        model.set_weights(start)
        optimizer = keras.optimizers.SGD(0.05) if opt == "sgd" else keras.optimizers.Adam(0.01)
        model.compile(optimizer=optimizer, loss="mse")
        history = model.fit(x, y, batch_size=8, epochs=3, shuffle=False, verbose=0)
        out[f"{name}/{opt}"] = {"loss": [float(v) for v in history.history["loss"]],
                                "pred": model.predict(x, verbose=0).ravel().tolist(),
                                "weights": [np.asarray(w).ravel().tolist() for w in model.get_weights()],
                                "shapes": [list(np.shape(w)) for w in model.get_weights()],
                                "moved": max(float(np.abs(np.asarray(w) - s).max())
                                             for w, s in zip(model.get_weights(), start))}
        if opt == "adam" and "subclassed" not in name:
            model.save(os.path.join(os.environ["WOPS_SAVE"], name + ".keras"))
print("PARITY " + json.dumps(out))
"""


def rel(a, b):
    return max((abs(p - q) / max(abs(q), 1.0) for p, q in zip(a, b)), default=0.0)


def main():
    keras_python = sys.argv[1]
    nnfit_python = sys.argv[2] if len(sys.argv) > 2 else sys.executable
    keras_env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    keras_env.update(KERAS_BACKEND="tensorflow", TF_CPP_MIN_LOG_LEVEL="3")
    sides = {"Keras": (keras_python, "import keras", keras_env),
             "nnfit": (nnfit_python, "from nnfit import keras", dict(os.environ))}
    failures = []
    with tempfile.TemporaryDirectory() as where:
        results, files = {}, {}
        for side, (python, line, env) in sides.items():
            files[side] = os.path.join(where, side)
            os.mkdir(files[side])
            results[side] = parity_runs.run(python, SCRIPT, line, dict(env, WOPS_SAVE=files[side]), 900)
        for writer, reader in (("nnfit", "Keras"), ("Keras", "nnfit")):
            python, line, env = sides[reader]
            loaded = parity_runs.run(python, SCRIPT, line, dict(env, WOPS_LOAD=files[writer]), 900)
            for name, pred in sorted(loaded.items()):
                case = name[:-len(".keras")] + "/adam"
                d = rel(pred, results[writer][case]["pred"])
                print(f"{writer} saves {name}, {reader} loads it: predictions differ by {d:.1e} relative")
                if not d <= 1e-5:
                    failures.append(f"{writer} -> {reader} {name}: predictions differ by {d:.2e} (tolerance 1e-5)")
            if len(loaded) != 3:
                failures.append(f"{reader} loaded {sorted(loaded)} of {writer}'s files, expected 3")
    want, got = results["Keras"], results["nnfit"]
    for case, k in want.items():
        n = got.get(case)
        if n is None:
            failures.append(f"{case}: nnfit ran no such case")
            continue
        if n["shapes"] != k["shapes"]:
            failures.append(f"{case}: weights shaped {n['shapes']} in nnfit, {k['shapes']} in Keras")
            continue
        loss = rel(n["loss"], k["loss"])
        pred = rel(n["pred"], k["pred"])
        weights = max(rel(a, b) for a, b in zip(n["weights"], k["weights"]))
        print(f"{case}: losses {k['loss'][0]:.5f} -> {k['loss'][-1]:.5f} (Keras), max relative difference: "
              f"losses {loss:.1e}, predictions {pred:.1e}, weights {weights:.1e}; weights moved {n['moved']:.2e}")
        for what, d in (("losses", loss), ("predictions", pred), ("weights", weights)):
            if not d <= 1e-5:
                failures.append(f"{case}: {what} differ by {d:.2e} relative (tolerance 1e-5)")
        if not n["moved"] > 1e-3 or not k["loss"][-1] < k["loss"][0]:
            failures.append(f"{case}: training did nothing (weights moved {n['moved']}, losses {k['loss']})")
    if failures:
        sys.exit("\n".join(failures))
    print("parity: ok")


if __name__ == "__main__":
    main()
