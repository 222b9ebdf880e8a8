"""Custom losses and metrics on nnfit's engine (issue 35, Note [Traced losses and metrics]):
traced once, never called in a step; Keras's reductions and sample weights checked against
NumPy on known weights; metric state across batches and epochs; compute_loss and add_loss;
files; and the errors a user can meet, each naming the loss, metric or hook and what to do.
Parity with Keras 3 itself: keras_losses_parity.py."""
import json
import zipfile

import numpy as np
import pytest

from nnfit import keras
from nnfit.keras import layers, ops


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(40, 3)).astype("float32")
    y = rng.normal(size=(40, 2)).astype("float32")
    w = rng.uniform(0.1, 2.0, size=(40,)).astype("float32")
    return x, y, w


def linear():
    m = keras.Sequential([keras.Input((3,)), layers.Dense(2)])
    rng = np.random.default_rng(1)
    m.set_weights([rng.normal(size=(3, 2)).astype("float32"), rng.normal(size=(2,)).astype("float32")])
    return m


def predictions(m, x):
    return m.predict(x, verbose=0).astype("float64")


class Counted:
    """A loss function that counts its calls."""

    def __init__(self):
        self.calls = 0
        self.__name__ = "counted"

    def __call__(self, y_true, y_pred):
        self.calls += 1
        return ops.mean(ops.square(y_true - y_pred), axis=-1)


def test_a_loss_function_is_traced_once_and_never_called_in_a_step(data):
    x, y, _ = data
    loss = Counted()
    m = linear()
    m.compile(optimizer="sgd", loss=loss)
    traced = loss.calls
    assert traced == 1
    h = m.fit(x, y, batch_size=4, epochs=3, verbose=0)  # 30 steps
    assert loss.calls == traced
    assert list(h.history) == ["loss"] and h.history["loss"][2] < h.history["loss"][0]


def test_evaluate_gives_keras_reductions_with_sample_weights(data):
    x, y, w = data

    class Err(keras.losses.Loss):
        def call(self, y_true, y_pred):
            return ops.mean(ops.abs(y_true - y_pred), axis=-1)

    m = linear()
    per_sample = np.abs(y - predictions(m, x)).mean(-1)
    want = {"sum_over_batch_size": (per_sample * w).sum() / 40, "sum": (per_sample * w).sum(),
            "mean_with_sample_weight": (per_sample * w).sum() / w.sum()}
    for reduction, expected in want.items():
        m.compile(optimizer="sgd", loss=Err(reduction=reduction))
        got = m.evaluate(x, y, sample_weight=w, batch_size=40, verbose=0)
        assert got == pytest.approx(expected, rel=1e-5), reduction
    m.compile(optimizer="sgd", loss=lambda t, p: ops.mean(ops.square(t - p)))  # a scalar: scaled by mean(w)
    scalar = ((y - predictions(m, x)) ** 2).mean()
    assert m.evaluate(x, y, batch_size=40, verbose=0) == pytest.approx(scalar, rel=1e-5)
    assert m.evaluate(x, y, sample_weight=w, batch_size=40, verbose=0) == pytest.approx(scalar * w.mean(), rel=1e-5)


def test_a_loss_object_runs_eagerly_on_arrays(data):
    x, y, w = data

    class Err(keras.losses.Loss):
        def call(self, y_true, y_pred):
            return ops.mean(ops.square(y_true - y_pred), axis=-1)

    p = y + 0.5
    assert float(Err()(y, p)) == pytest.approx(0.25, rel=1e-5)
    assert float(Err(reduction="sum")(y, p, sample_weight=w)) == pytest.approx(0.25 * w.sum(), rel=1e-5)
    assert Err(name="e").get_config() == {"name": "e", "reduction": "sum_over_batch_size"}


class Total(keras.metrics.Metric):
    def __init__(self, name="total_abs", **kwargs):
        super().__init__(name=name, **kwargs)
        self.total = self.add_variable(shape=(), initializer="zeros", name="total")
        self.count = self.add_weight(shape=(), initializer="zeros", name="count")
        self.updates = 0

    def update_state(self, y_true, y_pred, sample_weight=None):
        self.updates += 1
        err = ops.abs(y_true - y_pred)
        if sample_weight is not None:
            err = err * ops.expand_dims(sample_weight, -1)
        self.total.assign_add(ops.sum(err))
        self.count.assign_add(ops.sum(y_true * 0.0 + 1.0))

    def result(self):
        return self.total / self.count


def test_metric_state_accumulates_over_an_epoch_and_resets(data):
    x, y, w = data
    m = linear()
    metric = Total()

    def mean_error(y_true, y_pred):
        return ops.mean(y_pred - y_true, axis=-1)

    m.compile(optimizer=keras.optimizers.SGD(0.0), loss="mse", metrics=[metric, mean_error],
              weighted_metrics=[Total(name="weighted_total")])
    traced = metric.updates
    assert traced == 1  # update_state traced once (without sample weights: metrics= gets none)
    p = predictions(m, x)
    logs = m.evaluate(x, y, sample_weight=w, batch_size=7, verbose=0, return_dict=True)  # 6 batches
    assert metric.updates == traced
    assert logs["total_abs"] == pytest.approx(np.abs(y - p).mean(), rel=1e-5)
    assert logs["mean_error"] == pytest.approx((p - y).mean(), rel=1e-4, abs=1e-6)
    assert logs["weighted_total"] == pytest.approx((np.abs(y - p) * w[:, None]).sum() / y.size, rel=1e-5)
    h = m.fit(x, y, batch_size=8, epochs=2, verbose=0)  # lr 0: both epochs see the same predictions
    assert h.history["total_abs"][0] == pytest.approx(h.history["total_abs"][1], rel=1e-6)
    assert h.history["total_abs"][0] == pytest.approx(np.abs(y - p).mean(), rel=1e-5)


def test_a_metric_runs_eagerly_on_arrays(data):
    _, y, _ = data
    metric = Total()
    metric.update_state(y, y + 1.0)
    metric.update_state(y, y + 3.0)
    assert float(metric.result()) == pytest.approx(2.0)
    metric.reset_state()
    assert float(metric.total.numpy()) == 0.0
    wrapped = keras.metrics.MeanMetricWrapper(lambda t, p: ops.mean(ops.abs(t - p), axis=-1), name="mae_fn")
    wrapped.update_state(y, y - 2.0)
    assert float(wrapped.result()) == pytest.approx(2.0)


class Net(keras.Model):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.dense = layers.Dense(2)

    def call(self, inputs):
        return self.dense(inputs)

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        return ops.mean(ops.square(y_pred - y)) + 0.5 * ops.mean(ops.abs(y_pred))


def test_compute_loss_is_the_step_loss(data):
    x, y, _ = data
    m = Net()
    m.compile(optimizer="sgd", loss=None)
    p = predictions(m, x)
    want = ((p - y) ** 2).mean() + 0.5 * np.abs(p).mean()
    assert m.evaluate(x, y, batch_size=40, verbose=0) == pytest.approx(want, rel=1e-5)
    h = m.fit(x, y, batch_size=8, epochs=2, verbose=0)
    assert h.history["loss"][1] < h.history["loss"][0]


class Penalty(layers.Layer):
    def __init__(self, rate=0.1, **kwargs):
        super().__init__(**kwargs)
        self.rate = rate

    def call(self, inputs):
        self.add_loss(self.rate * ops.sum(ops.abs(inputs)))
        return inputs

    def get_config(self):
        return {**super().get_config(), "rate": self.rate}


def test_add_loss_in_a_layer_is_added_to_the_loss(data):
    x, y, _ = data
    inp = keras.Input((3,))
    dense = layers.Dense(2)
    m = keras.Model(inp, Penalty(0.1)(dense(inp)))
    rng = np.random.default_rng(1)
    m.set_weights([rng.normal(size=(3, 2)).astype("float32"), rng.normal(size=(2,)).astype("float32")])
    m.compile(optimizer="sgd", loss="mse")
    p = predictions(m, x)
    want = ((p - y) ** 2).mean() + 0.1 * np.abs(p).sum()  # one batch: the penalty sums over it
    assert m.evaluate(x, y, batch_size=40, verbose=0) == pytest.approx(want, rel=1e-5)


def test_a_saved_custom_loss_keeps_keras_form_and_trains_again(tmp_path, data):
    x, y, _ = data

    def my_loss(y_true, y_pred):
        return ops.mean(ops.square(y_true - y_pred), axis=-1)

    m = linear()
    m.compile(optimizer="sgd", loss=my_loss, metrics=[Total()])
    m.fit(x, y, epochs=1, verbose=0)
    path = str(tmp_path / "m.keras")
    m.save(path)
    with zipfile.ZipFile(path) as z:
        compile_config = json.loads(z.read("config.json"))["compile_config"]
    loss = dict(compile_config["loss"])
    assert loss.pop("nnfit_trace")["name"] == "my_loss"
    assert loss == {"module": "builtins", "class_name": "function", "config": "my_loss", "registered_name": "function"}
    metric = dict(compile_config["metrics"][0])
    metric.pop("nnfit_trace")
    assert metric == {"module": "test_losses", "class_name": "Total", "config": {"name": "total_abs", "dtype": "float32"},
                      "registered_name": "Total"}
    before = m.evaluate(x, y, verbose=0, return_dict=True)
    for custom in ({"my_loss": my_loss, "Total": Total}, None):  # the file's trace serves without them too
        loaded = keras.models.load_model(path, custom_objects=custom)
        after = loaded.evaluate(x, y, verbose=0, return_dict=True)
        assert after == pytest.approx(before, rel=1e-6)


def test_a_keras_file_without_traces_needs_its_custom_objects(tmp_path, data):
    x, y, _ = data

    def my_loss(y_true, y_pred):
        return ops.mean(ops.square(y_true - y_pred), axis=-1)

    m = linear()
    m.compile(optimizer="sgd", loss=my_loss)
    path = str(tmp_path / "m.keras")
    m.save(path)
    # As Keras writes it: the same file without nnfit's trace.
    stripped = str(tmp_path / "keras.keras")
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(stripped, "w") as dst:
        for item in src.infolist():
            data_bytes = src.read(item.filename)
            if item.filename == "config.json":
                config = json.loads(data_bytes)
                config["compile_config"]["loss"].pop("nnfit_trace")
                data_bytes = json.dumps(config).encode()
            dst.writestr(item, data_bytes)
    with pytest.raises(TypeError, match="Could not locate function 'my_loss'.*custom_objects"):
        keras.models.load_model(stripped)
    loaded = keras.models.load_model(stripped, custom_objects={"my_loss": my_loss})
    assert loaded.evaluate(x, y, verbose=0) == pytest.approx(m.evaluate(x, y, verbose=0), rel=1e-6)


def test_errors_name_the_loss_or_metric_and_what_to_do(data):
    x, y, _ = data

    class PerSample(keras.losses.Loss):
        def call(self, y_true, y_pred):
            return ops.abs(y_true - y_pred)

    with pytest.raises(ValueError, match="Invalid value for argument `reduction`"):
        PerSample(reduction="average")
    m = linear()
    with pytest.raises(NotImplementedError, match="reduction='none'.*one number"):
        m.compile(optimizer="sgd", loss=PerSample(reduction="none"))

    dense = layers.Dense(2)
    with pytest.raises(NotImplementedError, match="Dense 'dense.*' is called inside a custom loss or metric.*keras.ops"):
        linear().compile(optimizer="sgd", loss=lambda t, p: ops.mean(dense(p) - t))

    class Constant(keras.metrics.Metric):
        def __init__(self):
            super().__init__(name="constant")
            self.v = self.add_variable(shape=(), initializer="zeros")

        def update_state(self, y_true, y_pred, sample_weight=None):
            self.v.assign(1.0)

        def result(self):
            return self.v

    with pytest.raises(NotImplementedError, match="Constant 'constant': update_state assigns constant/variable a "
                                                  "constant"):
        linear().compile(optimizer="sgd", loss="mse", metrics=[Constant()])

    class Odd(keras.metrics.Metric):
        def __init__(self):
            super().__init__(name="odd")
            self.v = self.add_variable(shape=(), initializer="glorot_uniform")

    with pytest.raises(NotImplementedError, match="initializer 'glorot_uniform' is not supported.*zeros, ones"):
        Odd()

    class NoUpdate(keras.metrics.Metric):
        def __init__(self):
            super().__init__(name="no_update")
            self.v = self.add_variable(shape=(), initializer="zeros")

        def update_state(self, y_true, y_pred):
            pass

        def result(self):
            return self.v

    with pytest.raises(NotImplementedError, match="update_state assigns no variable"):
        linear().compile(optimizer="sgd", loss="mse", metrics=[NoUpdate()])

    class Unweighted(NoUpdate):
        def update_state(self, y_true, y_pred):
            self.v.assign_add(ops.sum(y_pred))

    linear().compile(optimizer="sgd", loss="mse", metrics=[Unweighted()])  # fine unweighted
    m = linear()
    m.compile(optimizer="sgd", loss="mse", weighted_metrics=[Unweighted()])  # fine until weights come
    m.evaluate(x, y, verbose=0)
    with pytest.raises(ValueError, match="'no_update': its update_state takes no sample_weight.*weighted_metrics"):
        m.evaluate(x, y, sample_weight=np.ones(len(x), "float32"), verbose=0)

    with pytest.raises(NotImplementedError, match="Penalty 'p': add_loss is traced inside the layer's call"):
        Penalty(name="p").add_loss(np.ones(3))

    class Leaky(layers.Layer):
        def call(self, inputs):
            return ops.sum(inputs)

    inp = keras.Input((3,))
    with pytest.raises(Exception, match="batch"):
        keras.Model(inp, Leaky()(inp))

    class WithSuper(keras.Model):
        def __init__(self):
            super().__init__()
            self.dense = layers.Dense(2)

        def call(self, inputs):
            return self.dense(inputs)

        def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
            return super().compute_loss(x, y, y_pred, sample_weight)

    model = WithSuper()
    # Keras's losses have keras.ops forms (_loss_functions.py), so super().compute_loss traces
    # any of them: Poisson there gives the engine's fused Poisson loss.
    positive = np.abs(y) + 0.5
    model.compile(optimizer="sgd", loss="poisson")  # traced when its input shape is known: here, at the call
    model(x[:1])
    plain = keras.Sequential([keras.Input((3,)), layers.Dense(2)])
    model.set_weights([np.full((3, 2), 0.1, "float32"), np.full(2, 2.0, "float32")])
    plain.set_weights(model.get_weights())
    plain.compile(optimizer="sgd", loss="poisson")
    assert model.evaluate(x, positive, verbose=0) == pytest.approx(plain.evaluate(x, positive, verbose=0), rel=1e-5)
    with pytest.raises(NotImplementedError, match="cannot be called on arrays"):
        keras.Model.compute_loss(model, x, y, y, None)


def test_the_reader_refuses_a_bad_trace_naming_the_key(data):
    m = linear()
    bad = {"module": "builtins", "class_name": "function", "config": "f", "registered_name": "function",
           "nnfit_trace": {"name": "f", "reduction": "median", "y_true_shape": [2], "graph": {}}}
    with pytest.raises(Exception, match="nnfit_trace.*\"reduction\" = \"median\" is not supported"):
        m.compile(optimizer="sgd", loss=[bad])
    bad["nnfit_trace"].update(reduction="sum", graph={"config": {"layers": [
        {"name": "d", "class_name": "Dense", "module": "keras.layers", "config": {}, "inbound_nodes": []}]}})
    with pytest.raises(Exception, match="a Dense layer cannot run here.*keras.ops"):
        m.compile(optimizer="sgd", loss=[bad])
