"""Keras behaviours of traced Python that Keras.ProgramParity's programs found missing
(issue 35): the mask reaching a subclassed layer's call and its compute_mask, a registered
Python function as a layer's activation, a Lambda as a layer of the model, keras.random
inside a traced call, and random augmentation layers called on arrays. Each is checked
against NumPy here; the programs check them against Keras."""
import numpy as np
import pytest

from nnfit import keras
from nnfit.keras import layers, ops


class MaskedSoftmax(layers.Layer):
    """The masking guide's TemporalSoftmax; records the mask it was traced with."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True
        self.seen = "unset"

    def call(self, inputs, mask=None):
        self.seen = mask
        if mask is None:
            return ops.softmax(inputs, axis=1)
        m = ops.expand_dims(ops.cast(mask, "float32"), -1)
        e = ops.exp(inputs) * m
        return e / ops.sum(e, axis=1, keepdims=True)


class FirstStepsOnly(layers.Layer):
    """A compute_mask of its own (so it supports masking): only the first two steps count."""

    def call(self, inputs):
        return inputs * 2.0

    def compute_mask(self, inputs, previous_mask):
        steps = ops.cast(ops.cumsum(inputs[..., 0] * 0.0 + 1.0, axis=1) <= 2.0, "float32")
        return ops.cast(previous_mask, "float32") * steps


class Plain(layers.Layer):
    """No mask argument and no supports_masking: the mask stops here, as in Keras."""

    def call(self, inputs):
        return inputs + 0.0


def _embedded(ids, model):
    table = model.get_layer("emb").get_weights()[0]
    kernel, bias = model.get_layer("proj").get_weights()
    return table[ids] @ kernel + bias


def _masked_softmax(z, mask):
    e = np.exp(z) * mask[..., None]
    return e / e.sum(axis=1, keepdims=True)


def _model(*middle):
    inputs = keras.Input(shape=(None,), dtype="int32")
    x = layers.Dense(1, name="proj")(layers.Embedding(50, 3, mask_zero=True, name="emb")(inputs))
    for layer in middle:
        x = layer(x)
    return keras.Model(inputs, x)


IDS = np.array([[5, 7, 9, 0, 0], [3, 4, 0, 0, 0]], "int32")


def test_call_gets_the_incoming_mask():
    soft = MaskedSoftmax()
    model = _model(soft)
    assert soft.seen is not None and tuple(soft.seen.shape) == (None, None)
    got = model.predict(IDS, verbose=0)
    np.testing.assert_allclose(got, _masked_softmax(_embedded(IDS, model), (IDS != 0).astype("float32")), rtol=1e-5)


def test_supports_masking_passes_the_mask_on_and_compute_mask_replaces_it():
    first, soft = FirstStepsOnly(), MaskedSoftmax()
    model = _model(first, soft)
    got = model.predict(IDS, verbose=0)
    mask = ((IDS != 0) & (np.arange(5) < 2)).astype("float32")
    np.testing.assert_allclose(got, _masked_softmax(2.0 * _embedded(IDS, model), mask), rtol=1e-5)
    stopped = MaskedSoftmax()
    model = _model(Plain(), stopped)
    assert stopped.seen is None  # Keras: the layer "will therefore destroy the mask information"
    z = _embedded(IDS, model)
    np.testing.assert_allclose(model.predict(IDS, verbose=0), np.exp(z) / np.exp(z).sum(1, keepdims=True), rtol=1e-5)


def test_masked_layer_saves_and_loads(tmp_path):
    model = _model(MaskedSoftmax())
    want = model.predict(IDS, verbose=0)
    model.save(tmp_path / "masked.keras")
    loaded = keras.models.load_model(tmp_path / "masked.keras", custom_objects={"MaskedSoftmax": MaskedSoftmax})
    np.testing.assert_allclose(loaded.predict(IDS, verbose=0), want, rtol=1e-6)


@keras.saving.register_keras_serializable(package="traced_calls", name="squared")
def squared(x):
    return x**2


def shifted_tanh(x):  # not registered: Keras writes its __name__
    return ops.tanh(x) + 0.5


def _dense_model(activation, units=2):
    inputs = keras.Input(shape=(3,))
    model = keras.Model(inputs, layers.Dense(units, activation=activation, name="d")(inputs))
    rng = np.random.default_rng(3)
    model.set_weights([rng.normal(size=w.shape).astype("float32") for w in model.get_weights()])
    return model


X = np.random.default_rng(4).normal(size=(6, 3)).astype("float32")


def test_python_function_as_activation(tmp_path):
    model = _dense_model(squared)
    kernel, bias = model.get_weights()
    np.testing.assert_allclose(model.predict(X, verbose=0), (X @ kernel + bias) ** 2, rtol=1e-5)
    layer = model.get_layer("d")
    assert layer.activation is squared
    assert keras.saving.get_registered_name(layer.activation) == "traced_calls>squared"
    assert layer.get_config()["activation"] == {"module": "builtins", "class_name": "function",
                                                "config": "traced_calls>squared", "registered_name": "function"}
    model.compile(optimizer="sgd", loss="mse")
    before = model.evaluate(X, np.zeros((6, 2), "float32"), verbose=0)
    model.fit(X, np.zeros((6, 2), "float32"), epochs=3, verbose=0)
    assert model.evaluate(X, np.zeros((6, 2), "float32"), verbose=0) < before
    model.save(tmp_path / "act.keras")
    loaded = keras.models.load_model(tmp_path / "act.keras")
    np.testing.assert_allclose(loaded.predict(X, verbose=0), model.predict(X, verbose=0), rtol=1e-6)
    assert loaded.get_layer("d").activation is squared


def test_unregistered_function_and_activation_layer(tmp_path):
    model = _dense_model(shifted_tanh)
    kernel, bias = model.get_weights()
    np.testing.assert_allclose(model.predict(X, verbose=0), np.tanh(X @ kernel + bias) + 0.5, rtol=1e-5)
    assert model.get_layer("d").get_config()["activation"]["config"] == "shifted_tanh"
    model.save(tmp_path / "act.keras")  # the trace is in the file: it loads without the function
    np.testing.assert_allclose(keras.models.load_model(tmp_path / "act.keras").predict(X, verbose=0),
                               model.predict(X, verbose=0), rtol=1e-6)
    inputs = keras.Input(shape=(3,))
    only = keras.Model(inputs, layers.Activation(squared)(inputs))
    np.testing.assert_allclose(only.predict(X, verbose=0), X**2, rtol=1e-6)


def test_function_activation_refused_where_applied_inside():
    inputs = keras.Input(shape=(4, 3))
    with pytest.raises(NotImplementedError, match="activation of a LSTM layer is not supported by nnfit"):
        layers.LSTM(2, activation=squared)(inputs)


def _without_traces(path, out):
    """The file as Keras writes it: the same, without nnfit's traces."""
    import json
    import zipfile
    with zipfile.ZipFile(path) as z, zipfile.ZipFile(out, "w") as w:
        for item in z.namelist():
            data = z.read(item)
            if item == "config.json":
                config = json.loads(data)
                for entry in config["config"]["layers"]:
                    activation = entry["config"].get("activation")
                    if isinstance(activation, dict):
                        activation.pop("nnfit_trace")
                data = json.dumps(config)
            w.writestr(item, data)


def test_keras_file_with_function_activation_loads_with_custom_objects(tmp_path):
    model = _dense_model(shifted_tanh)
    model.save(tmp_path / "nnfit.keras")
    _without_traces(tmp_path / "nnfit.keras", tmp_path / "keras.keras")
    with pytest.raises(NotImplementedError, match="Python function .shifted_tanh.*custom_objects"):
        keras.models.load_model(tmp_path / "keras.keras")
    loaded = keras.models.load_model(tmp_path / "keras.keras", custom_objects={"shifted_tanh": shifted_tanh})
    assert loaded.get_layer("d").activation is shifted_tanh
    np.testing.assert_allclose(loaded.predict(X, verbose=0), model.predict(X, verbose=0), rtol=1e-6)


def test_lambda_is_a_layer_of_the_model(tmp_path):
    left, right = keras.Input((4,)), keras.Input((4,))
    diff = layers.Lambda(lambda v: v[0] - v[1])([left, right])
    dist = layers.Lambda(lambda t: ops.sqrt(ops.sum(ops.square(t), axis=1, keepdims=True)), output_shape=(1,))(diff)
    model = keras.Model([left, right], layers.Dense(1, name="head")(dist))
    assert [(type(l).__name__, l.name) for l in model.layers[2:]] == [("Lambda", "lambda"), ("Lambda", "lambda_1"),
                                                                      ("Dense", "head")]
    lines = []
    model.summary(print_fn=lines.append)
    assert any(l.startswith("\u2502 lambda_1 (Lambda)") and "(None, 1)" in l for l in lines)
    entry = model.get_config()["layers"][3]
    assert entry["module"] == "keras.layers" and entry["config"]["function"]["class_name"] == "__lambda__"
    assert sorted(entry["config"]["function"]["config"]) == ["closure", "code", "defaults"]  # Keras's form
    assert entry["config"]["output_shape"] == [1]
    a, b = np.ones((2, 4), "float32"), np.zeros((2, 4), "float32")
    kernel, bias = model.get_layer("head").get_weights()
    want = np.full((2, 1), 2.0) @ kernel + bias
    np.testing.assert_allclose(model.predict([a, b], verbose=0), want, rtol=1e-6)
    model.save(tmp_path / "lambda.keras")
    loaded = keras.models.load_model(tmp_path / "lambda.keras")
    assert [type(l).__name__ for l in loaded.layers[2:]] == ["Lambda", "Lambda", "Dense"]
    np.testing.assert_allclose(loaded.predict([a, b], verbose=0), want, rtol=1e-6)


def test_lambda_mask_and_training_arguments():
    seen = {}

    def body(t, mask=None, training=None):
        seen["mask"], seen["training"] = mask, training
        return t * 3.0

    inputs = keras.Input(shape=(None,), dtype="int32")
    x = layers.Embedding(20, 2, mask_zero=True)(inputs)
    x = layers.Lambda(body, mask=lambda t, m: m)(x)
    model = keras.Model(inputs, MaskedSoftmax()(layers.Dense(1)(x)))
    assert seen["mask"] is not None and seen["training"] in (True, False)
    out = model.predict(np.array([[3, 4, 0]], "int32"), verbose=0)
    assert out[0, 2, 0] == 0.0 and abs(out[0, :2, 0].sum() - 1.0) < 1e-6  # the mask went through the Lambda


class Noisy(layers.Layer):
    """keras.io's VAE sampling, simplified: the identity in inference, a draw added in training."""

    def __init__(self, kind="normal", **kwargs):
        super().__init__(**kwargs)
        self.kind = kind
        self.seed_generator = keras.random.SeedGenerator(7)

    def call(self, x, training=None):
        if not training:
            return x
        shape = (ops.shape(x)[0], ops.shape(x)[1])
        if self.kind == "normal":
            return x + keras.random.normal(shape=shape, mean=1.0, stddev=2.0, seed=self.seed_generator)
        if self.kind == "uniform":
            return x + keras.random.uniform(shape=shape, minval=-1.0, maxval=3.0, seed=self.seed_generator)
        return x + keras.random.truncated_normal(shape=shape, seed=self.seed_generator)


@pytest.mark.parametrize("kind,mean,var,low,high", [("normal", 1.0, 4.0, -np.inf, np.inf),
                                                     ("uniform", 1.0, 16.0 / 12.0, -1.0, 3.0),
                                                     ("truncated", 0.0, 0.77374, -2.0, 2.0)])
def test_random_draws_in_a_traced_call_are_new_every_step(kind, mean, var, low, high):
    inputs = keras.Input((64,))
    model = keras.Model(inputs, Noisy(kind)(inputs))
    model.compile(optimizer=keras.optimizers.SGD(0.0), loss="mse")
    x = np.zeros((512, 64), "float32")
    first, second = model.train_on_batch(x, x), model.train_on_batch(x, x)  # mean(draw²) = var + mean²
    assert first != second
    for loss in (first, second):
        assert abs(loss - (var + mean**2)) < 0.03 * (var + mean**2)
    np.testing.assert_array_equal(model.predict(x[:4], verbose=0), x[:4])  # inference: the other branch
    assert model.evaluate(x, x, verbose=0) == 0.0


def test_random_draw_needs_a_batch_shape():
    class Fixed(layers.Layer):
        def call(self, x):
            return x + keras.random.normal(shape=(4,))
    with pytest.raises(NotImplementedError, match=r"shape must be \(batch, ...\)"):
        Fixed()(keras.Input((4,)))


class WithKl(keras.Model):
    """A subclassed model adding a loss in its call, as keras.io's VAE adds its KL term."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.dense = layers.Dense(3)

    def call(self, inputs):
        h = self.dense(inputs)
        self.add_loss(0.5 * ops.mean(ops.square(h)))
        return h


def test_add_loss_in_a_model_call():
    model = WithKl()
    x = np.random.default_rng(5).normal(size=(8, 4)).astype("float32")
    model(x[:1])
    model.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse")
    kernel, bias = model.dense.get_weights()
    h = x @ kernel + bias
    want = np.mean((h - 1.0) ** 2) + 0.5 * np.mean(h**2)
    assert abs(model.evaluate(x, np.ones((8, 3), "float32"), verbose=0) - want) < 1e-5 * want
    np.testing.assert_allclose(model.predict(x, verbose=0), h, rtol=1e-5)


def test_eager_call_in_training_mode():
    images = np.random.default_rng(0).random((4, 8, 8, 3)).astype("float32")
    augment = keras.Sequential([keras.Input((8, 8, 3)), layers.RandomFlip("horizontal"), layers.RandomRotation(0.2)])
    first, again = np.asarray(augment(images)), np.asarray(augment(images, training=True))
    assert first.shape == images.shape and not np.allclose(first, images)  # Keras's default for these layers
    assert not np.allclose(first, again)  # new draws at each call, as Keras's
    np.testing.assert_array_equal(np.asarray(augment(images, training=False)), images)
    drop = keras.Sequential([keras.Input((1000,)), layers.Dropout(0.5)])
    ones = np.ones((2, 1000), "float32")
    dropped = np.asarray(drop(ones, training=True))
    assert set(np.unique(dropped)) == {0.0, 2.0} and 0.4 < (dropped == 0).mean() < 0.6
    np.testing.assert_array_equal(np.asarray(drop(ones)), ones)  # Dropout's default is inference
    mixed = keras.Sequential([keras.Input((8, 8, 3)), layers.RandomFlip("horizontal"), layers.Dropout(0.5)])
    with pytest.raises(NotImplementedError, match=r"RandomFlip .*Dropout"):
        mixed(images)
