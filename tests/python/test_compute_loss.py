"""A keras.Model's compute_loss override reading x, trained without targets, and with several
outputs (issue 35, Note [compute_loss in the step] in src/nn/loss.cpp): the step's loss
checked against NumPy on the model's own predictions, what Keras passes (structures of x, y,
y_pred and sample_weight), Python never called in a step, files, and the errors a user can
meet, each naming compute_loss and what to do. Parity with Keras 3: keras_compute_loss_parity.py."""
import numpy as np
import pytest

from nnfit import keras
from nnfit.keras import layers, ops


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(40, 4)).astype("float32")
    y = rng.normal(size=(40, 2)).astype("float32")
    w = rng.uniform(0.1, 2.0, size=(40,)).astype("float32")
    return x, y, w


class AE(keras.Model):
    calls = 0

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.enc = layers.Dense(3, activation="tanh")
        self.dec = layers.Dense(4)

    def call(self, inputs):
        return self.dec(self.enc(inputs))

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        type(self).calls += 1
        return ops.mean(ops.square(x - y_pred))


class WeightedAE(AE):
    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        err = ops.mean(ops.square(x - y_pred), axis=-1)
        return ops.mean(err if sample_weight is None else err * sample_weight)


def built(model, x):
    model.predict(x[:1], verbose=0)
    rng = np.random.default_rng(1)
    model.set_weights([(rng.normal(size=w.shape) * 0.5).astype("float32") for w in model.get_weights()])
    return model


def test_an_autoencoder_trains_with_fit_x_and_no_targets(data):
    x, _, _ = data
    m = built(AE(), x)
    m.compile(optimizer=keras.optimizers.SGD(0.1))
    p = m.predict(x, verbose=0).astype("float64")
    assert m.evaluate(x, batch_size=40, verbose=0) == pytest.approx(((x - p) ** 2).mean(), rel=1e-5)
    h = m.fit(x, epochs=3, batch_size=8, shuffle=False, verbose=0, validation_data=(x[:8],))
    assert sorted(h.history) == ["loss", "val_loss"]
    assert h.history["loss"][2] < h.history["loss"][0]
    # Targets given anyway are not read: the same loss as without them.
    assert m.evaluate(x, x * 3.0, verbose=0) == pytest.approx(m.evaluate(x, verbose=0), rel=1e-6)


def test_compute_loss_is_traced_at_compile_and_never_called_in_a_step(data):
    x, _, _ = data
    m = built(AE(), x)
    AE.calls = 0
    m.compile(optimizer="adam")
    traced = AE.calls
    assert traced == 2  # without and with sample weights
    m.fit(x, epochs=2, batch_size=8, verbose=0)
    m.evaluate(x, verbose=0)
    assert AE.calls == traced


def test_a_dataset_of_inputs_alone_trains_an_autoencoder(data):
    from nnfit.data import Dataset
    x, _, _ = data
    m = built(AE(), x)
    m.compile(optimizer=keras.optimizers.SGD(0.1))
    start = m.get_weights()
    h = m.fit(Dataset.from_tensor_slices(x).batch(10), epochs=2, verbose=0)
    assert len(h.history["loss"]) == 2 and h.history["loss"][1] < h.history["loss"][0]
    # (x, y) batches as Keras reads them: y goes to compute_loss, which does not read it.
    m.set_weights(start)
    again = m.fit(Dataset.from_tensor_slices((x, x * 5.0)).batch(10), epochs=2, verbose=0)
    np.testing.assert_allclose(again.history["loss"], h.history["loss"], rtol=1e-6)
    # (x, y, sample_weight): the weights after the unread y.
    m = built(WeightedAE(), x)
    m.compile(optimizer=keras.optimizers.SGD(0.1))
    weights = np.linspace(0.0, 2.0, len(x)).astype("float32")
    weighted = m.evaluate(Dataset.from_tensor_slices((x, x, weights)).batch(40), verbose=0)
    assert weighted == pytest.approx(m.evaluate(x, sample_weight=weights, batch_size=40, verbose=0), rel=1e-6)
    assert weighted != pytest.approx(m.evaluate(x, batch_size=40, verbose=0), rel=1e-3)


def test_validation_weights_without_targets_are_refused_by_name(data):
    x, _, w = data
    m = built(AE(), x)
    m.compile(optimizer="sgd")
    with pytest.raises(NotImplementedError, match=r"validation sample weights .* for AE, whose compute_loss reads no"):
        m.fit(x, sample_weight=w, validation_split=0.25, verbose=0)


class Mixed(keras.Model):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.dense = layers.Dense(2)

    def call(self, inputs):
        return self.dense(inputs)

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        err = ops.mean(ops.square(y - y_pred), axis=-1)
        if sample_weight is not None:
            err = err * sample_weight
        return ops.mean(err) + 0.1 * ops.mean(ops.abs(x[:, :2] - y_pred))


def test_compute_loss_on_x_and_y_with_sample_weights(data):
    x, y, w = data
    m = built(Mixed(), x)
    m.compile(optimizer="sgd")
    p = m.predict(x, verbose=0).astype("float64")
    penalty = 0.1 * np.abs(x[:, :2] - p).mean()
    plain = ((y - p) ** 2).mean(axis=-1).mean() + penalty
    weighted = (((y - p) ** 2).mean(axis=-1) * w).mean() + penalty
    assert m.evaluate(x, y, batch_size=40, verbose=0) == pytest.approx(plain, rel=1e-5)
    assert m.evaluate(x, y, sample_weight=w, batch_size=40, verbose=0) == pytest.approx(weighted, rel=1e-5)


def test_compute_loss_reading_y_without_targets_names_compute_loss(data):
    x, _, _ = data
    m = built(Mixed(), x)
    m.compile(optimizer="sgd")
    with pytest.raises(ValueError, match=r"fit: Mixed\.compute_loss reads y, and no targets were given; pass y"):
        m.fit(x, verbose=0)
    with pytest.raises(ValueError, match=r"evaluate: Mixed\.compute_loss reads y"):
        m.evaluate(x, verbose=0)


def test_metrics_need_targets_even_when_compute_loss_reads_none(data):
    x, _, _ = data
    m = built(AE(), x)
    m.compile(optimizer="sgd", metrics=["mae"])
    with pytest.raises(ValueError, match=r"compiled metrics read them \(AE\.compute_loss reads none\)"):
        m.fit(x, verbose=0)
    h = m.fit(x, x, epochs=1, verbose=0)  # with targets, the metric compares them with y_pred
    assert sorted(h.history) == ["loss", "mae"]


def test_two_outputs_as_a_dict_give_compute_loss_dicts(data):
    x, y, w = data

    class Heads(keras.Model):
        def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
            assert sorted(y_pred) == ["a", "b"] and sorted(y) == ["a", "b"]
            first = ops.mean(ops.square(y["a"] - y_pred["a"]), axis=-1)
            if sample_weight is not None:  # one array per output, as Keras repeats it
                first = first * sample_weight["a"]
            return ops.mean(first) + ops.mean(ops.abs(y["b"] - y_pred["b"])) + 0.01 * ops.mean(x)

    inp = keras.Input((4,))
    m = Heads(inp, {"a": layers.Dense(2, name="a")(inp), "b": layers.Dense(1, name="b")(inp)})
    m.compile(optimizer="sgd")
    pred = m.predict(x, verbose=0)  # a dict by output key, as Keras's
    pa, pb = pred["a"].astype("float64"), pred["b"].astype("float64")
    want = (((y - pa) ** 2).mean(axis=-1) * w).mean() + np.abs(y[:, :1] - pb).mean() + 0.01 * x.mean()
    targets = {"a": y, "b": y[:, :1]}
    assert m.evaluate(x, targets, sample_weight=w, batch_size=40, verbose=0) == pytest.approx(want, rel=1e-5)
    h = m.fit(x, targets, epochs=2, batch_size=8, verbose=0)
    assert sorted(h.history) == ["loss"]  # one loss for the model: no per-output losses


def test_two_inputs_and_two_outputs_as_lists(data):
    x, y, _ = data

    class Pair(keras.Model):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.a, self.b = layers.Dense(2), layers.Dense(1)

        def call(self, inputs):
            first, second = inputs
            return [self.a(first), self.b(second)]

        def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
            return ops.mean(ops.square(y[0] - y_pred[0])) + ops.mean(ops.square(x[1] - y_pred[1]))

    m = Pair()
    xs = [x, y[:, :1]]
    m.predict(xs, verbose=0)
    m.compile(optimizer="sgd")
    pa, pb = (p.astype("float64") for p in m.predict(xs, verbose=0))
    want = ((y - pa) ** 2).mean() + ((y[:, :1] - pb) ** 2).mean()
    assert m.evaluate(xs, [y, y[:, :1]], batch_size=40, verbose=0) == pytest.approx(want, rel=1e-5)


def test_super_compute_loss_with_several_outputs_is_refused_by_name(data):
    class Both(keras.Model):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.a, self.b = layers.Dense(2), layers.Dense(1)

        def call(self, inputs):
            return [self.a(inputs), self.b(inputs)]

        def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
            return super().compute_loss(x, y, y_pred, sample_weight)

    m = Both()
    m.predict(data[0][:1], verbose=0)
    with pytest.raises(NotImplementedError, match=r"Both\.compute_loss calls super\(\)\.compute_loss on a model "
                                                  "with several outputs.*Compute each output's loss"):
        m.compile(optimizer="sgd", loss="mse")


def test_compute_loss_returning_a_list_is_refused(data):
    class Listed(AE):
        def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
            return [ops.mean(x), ops.mean(y_pred)]

    m = built(Listed(), data[0])
    with pytest.raises(ValueError, match=r"Listed\.compute_loss returned list; it returns the loss, one scalar"):
        m.compile(optimizer="sgd")


def test_an_autoencoder_saved_loads_with_its_weights(tmp_path, data):
    # As for any compute_loss model: the file holds the traced Functional graph and Keras's
    # compile_config (loss None), so it loads uncompiled with the trained weights.
    x, _, _ = data
    m = built(AE(), x)
    m.compile(optimizer=keras.optimizers.SGD(0.1))
    m.fit(x, epochs=1, batch_size=8, verbose=0)
    path = str(tmp_path / "ae.keras")
    m.save(path)
    loaded = keras.models.load_model(path, compile=False)
    np.testing.assert_allclose(loaded.predict(x, verbose=0), m.predict(x, verbose=0), rtol=1e-6, atol=1e-6)
