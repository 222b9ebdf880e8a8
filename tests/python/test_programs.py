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
