"""Operations on a subclassed layer's weights alone inside its call (Note [Weight-only
values] in src/nn/traced_layer.cpp): the values and the add_loss penalty against NumPy on
the layer's own weights, the gradient reaching a weight only through such a value (one SGD
step by hand), the trace's form (one weight graph, values read past the weights), a saved
model trained again from its file, and the uses that stay refused, each naming the
operation or layer and what to do. Keras.WeightOpsParity checks the numbers against Keras."""
import numpy as np
import pytest

from nnfit import keras
from nnfit.keras import layers, ops


def softplus(v):
    return np.log1p(np.exp(v))


class Positive(layers.Layer):
    def build(self, s):
        self.w = self.add_weight(shape=(s[-1], 4), name="w")
        self.t = self.add_weight(shape=(), initializer="zeros", name="t")

    def call(self, x):
        self.add_loss(1e-3 * ops.sum(ops.square(self.w)))
        return ops.matmul(x, ops.softplus(self.w)) * ops.exp(self.t)


class Shapes(layers.Layer):
    """transpose, reshape, a weight @ weight, add of two weights, sqrt, abs, means, norms."""

    def build(self, s):
        self.a = self.add_weight(shape=(2, s[-1]), name="a")
        self.m = self.add_weight(shape=(2, 3), name="m")
        self.c = self.add_weight(shape=(3, 1), name="c")
        self.d = self.add_weight(shape=(3,), name="d")

    def call(self, x):
        kernel = ops.matmul(ops.transpose(self.a), ops.sqrt(ops.abs(self.m) + 1.0))
        shift = ops.reshape(self.c, (3,)) + self.d
        return (ops.matmul(x, kernel) * ops.mean(self.d) + shift * 2.0 + ops.mean(self.m, axis=0)
                - ops.norm(self.m) + ops.norm(self.c, axis=0))


@pytest.fixture
def x():
    return np.random.default_rng(0).normal(size=(6, 5)).astype("float32")


def model_of(layer, features=5):
    inp = keras.Input((features,))
    return keras.Model(inp, layer(inp))


def test_values_and_added_loss_match_numpy(x):
    layer = Positive(name="positive")
    model = model_of(layer)
    w = np.random.default_rng(1).normal(size=(5, 4)).astype("float32")
    model.set_weights([w, np.array(0.3, "float32")])
    want = x @ softplus(w) * np.exp(0.3)
    np.testing.assert_allclose(model.predict(x, verbose=0), want, rtol=1e-5)
    model.compile(optimizer="sgd", loss="mse")
    y = np.zeros((6, 4), "float32")
    loss = model.evaluate(x, y, batch_size=6, verbose=0)
    np.testing.assert_allclose(loss, np.mean(want ** 2) + 1e-3 * np.sum(w ** 2), rtol=1e-5)
    trace = layer._trace
    assert trace["weight_values"]["losses"] == 1
    values = [e["class_name"] for e in trace["weight_values"]["graph"]["config"]["layers"]]
    assert {"Softplus", "Exp", "Square", "Sum", "Multiply"} <= set(values)
    read = [a for e in trace["graph"]["config"]["layers"] for n in e.get("inbound_nodes", [])
            for a in n["args"] if isinstance(a, dict) and a.get("class_name") == "__variable__"]
    assert sorted(a["config"]["index"] for a in read) == [2, 3]  # past the 2 weights: softplus(w), exp(t)


def test_shapes_reductions_and_matmul_of_weights(x):
    model = model_of(Shapes(name="shapes"))
    rng = np.random.default_rng(2)
    a, m, c, d = (rng.normal(size=s).astype("float32") for s in ((2, 5), (2, 3), (3, 1), (3,)))
    model.set_weights([a, m, c, d])
    kernel = a.T @ np.sqrt(np.abs(m) + 1.0)
    want = (x @ kernel * d.mean() + (c.reshape(3) + d) * 2.0 + m.mean(axis=0)
            - np.linalg.norm(m) + np.linalg.norm(c, axis=0))
    np.testing.assert_allclose(model.predict(x, verbose=0), want, rtol=1e-5, atol=1e-6)


def test_the_gradient_reaches_a_weight_through_its_value(x):
    model = model_of(Positive(name="positive"))
    w = np.random.default_rng(3).normal(size=(5, 4)).astype("float32")
    model.set_weights([w, np.array(0.0, "float32")])
    model.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse")
    y = np.ones((6, 4), "float32")
    model.fit(x, y, batch_size=6, epochs=1, shuffle=False, verbose=0)
    # loss = mean((x @ softplus(w) e^t - y)^2) + 1e-3 sum(w^2), at t = 0.
    p = x @ softplus(w)
    dp = 2.0 * (p - y) / p.size
    sig = 1.0 / (1.0 + np.exp(-w))
    grad_w = (x.T @ dp) * sig + 2e-3 * w
    grad_t = np.sum(dp * p)
    new_w, new_t = model.get_weights()
    np.testing.assert_allclose(new_w, w - 0.1 * grad_w, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(new_t, -0.1 * grad_t, rtol=1e-4, atol=1e-6)


def test_a_saved_model_trains_again_from_its_file(x, tmp_path):
    model = model_of(Positive(name="positive"))
    model.compile(optimizer="adam", loss="mse")
    y = np.ones((6, 4), "float32")
    model.fit(x, y, epochs=1, verbose=0)
    path = str(tmp_path / "positive.keras")
    model.save(path)
    loaded = keras.models.load_model(path, custom_objects={"Positive": Positive})
    np.testing.assert_allclose(loaded.predict(x, verbose=0), model.predict(x, verbose=0), rtol=1e-6)
    before = loaded.evaluate(x, y, verbose=0)
    loaded.fit(x, y, epochs=3, verbose=0)
    assert loaded.evaluate(x, y, verbose=0) < before


def test_what_stays_refused_names_the_op_and_what_to_do():
    class Returns(layers.Layer):
        def build(self, s):
            self.w = self.add_weight(shape=(s[-1],), name="w")

        def call(self, x):
            return ops.exp(self.w)

    with pytest.raises(NotImplementedError, match=r"Returns 'returns': call\(\) returns 'exp.*weights alone.*combine"):
        Returns(name="returns")(keras.Input((3,)))

    class Feeds(layers.Layer):
        def build(self, s):
            self.w = self.add_weight(shape=(s[-1], 2), name="w")
            self.dense = layers.Dense(2)

        def call(self, x):
            return x[:, :2] + self.dense(ops.exp(self.w))

    with pytest.raises(NotImplementedError, match=r"layer 'dense.*' is called on 'exp.*weights alone"):
        Feeds(name="feeds")(keras.Input((3,)))

    class Mixed(layers.Layer):
        def build(self, s):
            self.w = self.add_weight(shape=(s[-1],), name="w")

        def call(self, x):
            self.add_loss(ops.sum(x) * ops.sum(self.w))
            return x

    with pytest.raises(NotImplementedError, match=r"add_loss of a value computed from both the call's inputs and the "
                                                   r"layer's weights .*two add_loss calls"):
        Mixed(name="mixed")(keras.Input((3,)))

    class Listed(layers.Layer):
        def build(self, s):
            self.w = self.add_weight(shape=(1, s[-1]), name="w")

        def call(self, x):
            return ops.concatenate([x, ops.exp(self.w)], axis=0)

    with pytest.raises(NotImplementedError, match=r"keras.ops.concatenate: a list mixing weights \(or values computed "
                                                   r"from weights alone\) with tensors computed from the inputs"):
        Listed(name="listed")(keras.Input((3,)))

    class ListedWeight(Listed):
        def call(self, x):
            return ops.concatenate([x, self.w], axis=0)

    with pytest.raises(NotImplementedError, match=r"keras.ops.concatenate: a list mixing weights"):
        ListedWeight(name="listed_weight")(keras.Input((3,)))

    class Early(layers.Layer):
        def build(self, s):
            self.w = self.add_weight(shape=(s[-1],), name="w")
            self.scale = ops.exp(self.w)  # in build(): not inside the traced call

        def call(self, x):
            return x * self.scale

    with pytest.raises(NotImplementedError, match=r"keras.ops.exp: early/w is a weight of layer 'early'; nnfit reads a "
                                                   r"weight only in its own layer's call"):
        Early(name="early")(keras.Input((3,)))


def _rewrite(path, out, edit):
    """A copy of the .keras file `path` at `out` with its config.json changed by `edit`."""
    import json
    import zipfile
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(out, "w") as dst:
        for item in src.infolist():
            data = src.read(item.filename)
            if item.filename == "config.json":
                config = json.loads(data)
                edit(config)
                data = json.dumps(config).encode()
            dst.writestr(item, data)


def test_a_file_loads_without_the_class_and_a_bad_weight_graph_is_refused(x, tmp_path):
    model = model_of(Positive(name="positive"))
    path = str(tmp_path / "positive.keras")
    model.save(path)

    def trace(config):
        return next(e for e in config["config"]["layers"] if e["name"] == "positive")["nnfit_trace"]

    loaded = keras.models.load_model(path)  # no class: the engine runs the file's trace
    np.testing.assert_allclose(loaded.predict(x, verbose=0), model.predict(x, verbose=0), rtol=1e-6)
    bad = str(tmp_path / "bad.keras")
    _rewrite(path, bad, lambda c: trace(c)["weight_values"].update(losses=5))
    with pytest.raises(Exception, match=r"positive.*weight-only values' graph takes 2 inputs and gives 3 values, for 2 "
                                        r"weights and 5 added losses"):
        keras.models.load_model(bad)
    _rewrite(path, bad, lambda c: trace(c)["weight_values"].update(scale=2))
    with pytest.raises(Exception, match=r"nnfit_trace.weight_values.*scale"):
        keras.models.load_model(bad)
