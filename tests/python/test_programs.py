"""What the keras.io-style programs of Keras.ProgramParity (tests/python/programs/) found
nnfit doing otherwise than Keras 3, each checked here against NumPy or Keras's documented
values: crossentropies read a softmax's or sigmoid's logits (Note [Crossentropy from the
logits]), and the small names the programs use."""
import numpy as np
import pytest

from nnfit import keras
from nnfit.keras import layers

X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [0.5, 0.2]], "float32")
IDS = np.array([1, 2, 0, 1])
W = [np.array([[50.0, -50.0, 0.0], [0.0, 30.0, -90.0]], "float32"), np.zeros(3, "float32")]


def saturated(tail):
    """Dense logits [50, -50, 0]-like, far past what float32 probabilities can hold."""
    inputs = keras.Input((2,))
    model = keras.Model(inputs, tail(layers.Dense(3)(inputs)))
    model.set_weights(W)
    return model


def crossentropy_from_logits(logits, ids):
    shifted = logits - logits.max(axis=1, keepdims=True)
    log_softmax = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    return float(-log_softmax[np.arange(len(ids)), ids].mean())


def clipped_crossentropy(p, ids):
    return float(-np.log(np.clip(p[np.arange(len(ids)), ids], 1e-7, 1 - 1e-7)).mean())


@pytest.mark.parametrize("tail", [layers.Activation("softmax"), layers.Softmax()], ids=["activation", "softmax_layer"])
def test_crossentropy_of_a_softmax_output_reads_its_logits(tail):
    model = saturated(tail)
    model.compile(loss="sparse_categorical_crossentropy")
    expected = crossentropy_from_logits(X @ W[0], IDS)  # 66.0, Keras's value; clipping gives 12.09
    assert model.evaluate(X, IDS, verbose=0) == pytest.approx(expected, rel=1e-5)
    model.compile(loss="categorical_crossentropy")
    assert model.evaluate(X, keras.utils.to_categorical(IDS, 3), verbose=0) == pytest.approx(expected, rel=1e-5)
    # from_logits=True on a softmax output does not apply the softmax twice (Keras warns, and
    # uses the logits).
    model.compile(loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    assert model.evaluate(X, IDS, verbose=0) == pytest.approx(expected, rel=1e-5)


def test_crossentropy_after_another_layer_takes_the_clipped_probabilities():
    model = saturated(lambda h: layers.Reshape((3,))(layers.Activation("softmax")(h)))
    model.compile(loss="sparse_categorical_crossentropy")
    expected = clipped_crossentropy(model.predict(X, verbose=0).astype("float64"), IDS)  # Keras: 12.0886
    assert model.evaluate(X, IDS, verbose=0) == pytest.approx(expected, rel=1e-5)


def test_binary_crossentropy_of_a_sigmoid_output_reads_its_logits():
    model = keras.Sequential([keras.Input((2,)), layers.Dense(1, activation="sigmoid")])
    model.set_weights([np.array([[50.0], [-60.0]], "float32"), np.zeros(1, "float32")])
    model.compile(loss="binary_crossentropy")
    y = np.array([0.0, 1.0, 0.0, 1.0])
    z = (X @ model.get_weights()[0])[:, 0].astype("float64")
    expected = float(np.mean(np.maximum(z, 0) - z * y + np.log1p(np.exp(-np.abs(z)))))  # 27.5, Keras's value
    assert model.evaluate(X, y, verbose=0) == pytest.approx(expected, rel=1e-5)


def test_training_from_the_logits_moves_a_saturated_softmax():
    # The clipped probabilities' gradient is zero where the softmax saturates; the logits' is not.
    model = saturated(layers.Activation("softmax"))
    model.compile(optimizer=keras.optimizers.SGD(0.1), loss="sparse_categorical_crossentropy")
    history = model.fit(X, IDS, epochs=2, verbose=0, shuffle=False)
    assert history.history["loss"][0] == pytest.approx(66.0, rel=1e-6)
    assert history.history["loss"][1] < 66.0


def test_summary_wraps_a_long_cell_as_keras_rich_table():
    # Keras 3.15's summary of this model printed without a terminal (80 columns): a name
    # wider than its column moves "(Dense)" to a line of its own, and a word wider than the
    # column is cut with an ellipsis.
    model = keras.Sequential([keras.Input((4,)), layers.Dense(2, name="a_very_long_layer_name_that_goes_well_past_it"),
                              layers.Dense(3, name="conv2d_transpose_12"), layers.Dense(1, name="conv2d_transpose_1")])
    lines = []
    model.summary(print_fn=lambda line, **kwargs: lines.append(line))
    rows = [line for line in "\n".join(lines).splitlines() if line.startswith("\u2502")]
    assert rows == [
        "\u2502 a_very_long_layer_name_that_go\u2026 \u2502 (None, 2)              \u2502            10 \u2502",
        "\u2502 (Dense)                         \u2502                        \u2502               \u2502",
        "\u2502 conv2d_transpose_12 (Dense)     \u2502 (None, 3)              \u2502             9 \u2502",
        "\u2502 conv2d_transpose_1 (Dense)      \u2502 (None, 1)              \u2502             4 \u2502",
    ]


def test_summary_shows_a_dimension_known_per_batch_as_none():
    model = keras.Sequential([keras.Input((None,), dtype="int32"), layers.Embedding(10, 4), layers.GRU(3)])
    lines = []
    model.summary(print_fn=lambda line, **kwargs: lines.append(line))
    rows = [line for line in "\n".join(lines).splitlines() if line.startswith("\u2502")]
    assert "(None, None, 4)" in rows[0] and "-1" not in "".join(rows)


def test_mean_absolute_percentage_error_metric_is_kerass():
    model = keras.Sequential([keras.Input((2,)), layers.Dense(2)])
    model.set_weights([np.array([[1.0, 0.5], [-0.5, 2.0]], "float32"), np.array([0.1, -0.2], "float32")])
    x = np.array([[1.0, 2.0], [0.5, -1.0], [3.0, 0.0]], "float32")
    y = np.array([[0.5, 4.0], [0.0, -2.0], [2.0, 1.0]], "float32")
    p = model.predict(x, verbose=0).astype("float64")
    expected = float(np.mean(100 * np.mean(np.abs(y - p) / np.maximum(np.abs(y), 1e-7), axis=-1)))
    model.compile(loss="mse", metrics=[keras.metrics.MeanAbsolutePercentageError(), "mape"])
    scores = model.evaluate(x, y, verbose=0, return_dict=True)
    assert scores["mean_absolute_percentage_error"] == pytest.approx(expected, rel=1e-5)
    assert scores["mape"] == pytest.approx(expected, rel=1e-5)


def test_keras_model_of_inputs_and_outputs_is_a_functional():
    inputs = keras.Input((3,))
    model = keras.Model(inputs, layers.Dense(2)(inputs))
    assert type(model).__name__ == "Functional" and isinstance(model, keras.Model)
    assert type(keras.Model.from_config(model.get_config())).__name__ == "Functional"
    assert type(keras.Sequential([keras.Input((3,)), layers.Dense(1)])).__name__ == "Sequential"


def test_small_names_the_programs_use():
    assert keras.backend.epsilon() == 1e-7
    with pytest.raises(NotImplementedError, match="set_epsilon"):
        keras.backend.set_epsilon(1e-5)
    ids = np.array([[3, 4, 0], [5, 0, 0]])
    assert layers.Embedding(10, 2, mask_zero=True).compute_mask(ids).tolist() == (ids != 0).tolist()
    assert layers.Embedding(10, 2).compute_mask(ids) is None
    series = np.array([[[1.0, 0.0], [0.0, 0.0]]], "float32")
    assert layers.Masking(mask_value=0.0).compute_mask(series).tolist() == [[True, False]]
    normalizer = layers.Normalization()
    data = np.arange(12.0, dtype="float32").reshape(4, 3)
    normalizer.adapt(data)
    assert normalizer.mean.shape == (1, 3) and normalizer.mean.tolist() == [[4.5, 5.5, 6.5]]
    assert normalizer.variance.tolist() == [[11.25, 11.25, 11.25]]  # Keras's values for this data
    assert layers.Normalization().mean is None  # unbuilt, as Keras's
    model = keras.Sequential([keras.Input((3,)), layers.Dense(1)])
    model.compile(loss="mse")
    model.reset_metrics()


class PlusNothing(keras.Model):
    """A subclassed model whose compute_loss is the compiled loss through super()."""

    def __init__(self, units, activation, **kwargs):
        super().__init__(**kwargs)
        self.dense = layers.Dense(units, activation=activation)

    def call(self, inputs):
        return self.dense(inputs)

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        return super().compute_loss(x=x, y=y, y_pred=y_pred, sample_weight=sample_weight, training=training)


@pytest.mark.parametrize("loss,activation,target", [
    ("mse", None, "real"), ("mae", None, "real"), ("mape", None, "real"), ("msle", "softplus", "positive"),
    (keras.losses.Huber(), None, "real"), ("log_cosh", None, "real"),
    ("binary_crossentropy", "sigmoid", "binary"), (keras.losses.BinaryCrossentropy(from_logits=True), None, "binary"),
    (keras.losses.BinaryCrossentropy(label_smoothing=0.2), "sigmoid", "binary"),
    ("categorical_crossentropy", "softmax", "one_hot"),
    (keras.losses.CategoricalCrossentropy(from_logits=True, label_smoothing=0.1), None, "one_hot"),
    ("sparse_categorical_crossentropy", "softmax", "ids"),
    (keras.losses.SparseCategoricalCrossentropy(from_logits=True), None, "ids"),
], ids=lambda v: v if isinstance(v, str) else getattr(v, "_class_name", None) or "none")
def test_super_compute_loss_of_a_built_in_loss_equals_the_engines(loss, activation, target):
    # The keras.ops formulas (nnfit.keras._loss_ops) against the engine's loss op, which the
    # losses parity test checks against Keras: the same value from the same weights.
    rng = np.random.default_rng(0)
    x = rng.normal(size=(24, 5)).astype("float32")
    y = {"real": rng.normal(size=(24, 3)), "positive": rng.uniform(0.1, 2.0, size=(24, 3)),
         "binary": rng.integers(0, 2, size=(24, 3)), "one_hot": np.eye(3)[rng.integers(0, 3, size=24)],
         "ids": rng.integers(0, 3, size=(24,))}[target]
    y = y.astype("float32") if target != "ids" else y
    sample_weight = rng.uniform(0.5, 2.0, size=(24,)).astype("float32")
    weights = [(rng.normal(size=(5, 3)) * 0.5).astype("float32"), (rng.normal(size=(3,)) * 0.1).astype("float32")]
    plain = keras.Sequential([keras.Input((5,)), layers.Dense(3, activation=activation)])
    plain.set_weights(weights)
    plain.compile(loss=loss)
    traced = PlusNothing(3, activation)
    traced(x[:1])
    traced.set_weights(weights)
    traced.compile(loss=loss)
    for kwargs in ({}, {"sample_weight": sample_weight}):
        want = plain.evaluate(x, y, batch_size=24, verbose=0, **kwargs)
        assert traced.evaluate(x, y, batch_size=24, verbose=0, **kwargs) == pytest.approx(want, rel=1e-5, abs=1e-6)


def test_an_eager_call_augments_as_keras_does():
    # Keras's random image layers default to training=True in call, so model(x) augments
    # (predict does not); nnfit runs such a call in training mode when those layers are the
    # only ones that differ between the modes (test_traced_calls.py has the other cases).
    augmentation = keras.Sequential([layers.RandomFlip("horizontal"), layers.RandomRotation(0.1)])
    images = np.random.default_rng(0).random((2, 8, 8, 3)).astype("float32")
    assert np.array_equal(np.asarray(augmentation(images, training=False)), images)
    assert not np.allclose(np.asarray(augmentation(images)), images)
    inputs = keras.Input((8, 8, 3))
    model = keras.Model(inputs, layers.Conv2D(2, 3)(augmentation(inputs)))
    assert model(images).shape == (2, 6, 6, 2)
    assert not np.allclose(np.asarray(model(images)), np.asarray(model(images, training=False)))
    assert model(images, training=False).shape == (2, 6, 6, 2)
