"""nnfit.data: tf.data-style pipelines built by the engine, passed to fit."""
import json

import numpy as np
import pytest

import nnfit
from nnfit import keras
from nnfit.keras import layers

FASHION = "/usr/share/datasets/fashion-mnist"


def mlp(shape=(8,)):
    return keras.Sequential([keras.Input(shape=shape), layers.Dense(16, activation="relu"),
                             layers.Dense(3, activation="softmax")])


def test_from_tensor_slices_batches(blobs):
    x, y = blobs
    ds = nnfit.data.Dataset.from_tensor_slices((x, y)).batch(256)
    batches = list(ds.as_numpy_iterator())
    assert [b[0].shape for b in batches] == [(256, 8), (256, 8), (88, 8)]
    np.testing.assert_array_equal(np.concatenate([b[1] for b in batches]), y)
    assert json.loads(ds.to_json()) == {"source": {"format": "tensors"}, "pipeline": [{"batch": 256,
                                                                                      "drop_remainder": False}]}


def test_shuffle_is_a_permutation_and_seeded(blobs):
    x, y = blobs
    ds = nnfit.data.Dataset.from_tensor_slices((x, y)).shuffle(600, seed=3).batch(600)
    (bx, by), = list(ds.as_numpy_iterator())
    assert not np.array_equal(bx, x)
    order = np.lexsort(bx.T)
    np.testing.assert_array_equal(bx[order], x[np.lexsort(x.T)])
    (bx2, _), = list(ds.as_numpy_iterator())
    np.testing.assert_array_equal(bx, bx2)


def test_named_maps():
    x = np.arange(24, dtype=np.uint8).reshape(2, 12)
    y = np.array([0, 2], dtype=np.int64)
    ds = (nnfit.data.Dataset.from_tensor_slices((x, y))
          .map(nnfit.data.normalize(scale=0.5), num_parallel_calls=nnfit.data.AUTOTUNE)
          .map(nnfit.data.reshape([3, 4]))
          .map(nnfit.data.one_hot(3))
          .batch(2))
    (bx, by), = list(ds.as_numpy_iterator())
    assert bx.dtype == np.float32 and bx.shape == (2, 3, 4)
    np.testing.assert_allclose(bx.reshape(2, 12), x * 0.5)
    np.testing.assert_array_equal(by, [[1, 0, 0], [0, 0, 1]])
    with pytest.raises(NotImplementedError, match="named functions"):
        nnfit.data.Dataset.from_tensor_slices(x).map(lambda v: v)


def test_fit_on_a_dataset(blobs):
    x, y = blobs
    train = (nnfit.data.Dataset.from_tensor_slices((x[:500], y[:500])).cache().shuffle(500)
             .batch(32).prefetch(nnfit.data.AUTOTUNE))
    val = nnfit.data.Dataset.from_tensor_slices((x[500:], y[500:])).batch(50)
    model = mlp()
    model.compile(keras.optimizers.Adam(0.01), "sparse_categorical_crossentropy", metrics=["accuracy"])
    history = model.fit(train, epochs=4, validation_data=val, verbose=0)
    assert list(history.history) == ["accuracy", "loss", "val_accuracy", "val_loss"]
    assert history.history["val_accuracy"][-1] > 0.9
    assert "prefetch" in history.autotune
    logs = model.evaluate(val, return_dict=True, verbose=0)
    assert logs["accuracy"] == pytest.approx(history.history["val_accuracy"][-1])


def weights_after(fit):
    """The weights of a fresh seeded MLP after fit(model)."""
    keras.backend.clear_session()  # the same layer names, so the same initial weights
    keras.utils.set_random_seed(7)
    model = mlp()
    model.compile(keras.optimizers.Adam(0.01), "sparse_categorical_crossentropy")
    history = fit(model)
    return model.get_weights(), history


def test_steps_per_epoch(blobs):
    """Keras's steps_per_epoch: epochs read consecutive batches of the pass (the same
    weights as the batches in one plain epoch); an infinite dataset needs it."""
    x, y = blobs[0][:40], blobs[1][:40]
    ds = nnfit.data.Dataset.from_tensor_slices((x, y)).batch(8)  # 5 batches a pass
    a, ha = weights_after(lambda m: m.fit(ds.repeat(), epochs=3, steps_per_epoch=4, verbose=0))
    b, _ = weights_after(lambda m: m.fit(ds.repeat(3).take(12), epochs=1, verbose=0))
    assert len(ha.history["loss"]) == 3
    for wa, wb in zip(a, b):
        np.testing.assert_array_equal(wa, wb)
    # Arrays: a pass of 5 batches in epochs of 2: 1-2 | 3-4 | 5, then the data ran out.
    c, hc = weights_after(lambda m: m.fit(x, y, batch_size=8, shuffle=False, epochs=3, steps_per_epoch=2, verbose=0))
    d, _ = weights_after(lambda m: m.fit(x, y, batch_size=8, shuffle=False, epochs=1, verbose=0))
    for wc, wd in zip(c, d):
        np.testing.assert_array_equal(wc, wd)
    assert any("ran out" in note for note in hc.notes)
    model = mlp()
    model.compile("adam", "sparse_categorical_crossentropy")
    with pytest.raises(ValueError, match="steps_per_epoch"):
        model.fit(ds.repeat(), epochs=1, verbose=0)
    with pytest.raises(ValueError, match="steps_per_epoch"):
        model.fit(x, y, steps_per_epoch=0, verbose=0)


def test_dataset_errors(blobs, tmp_path):
    x, y = blobs
    model = mlp()
    model.compile("adam", "sparse_categorical_crossentropy")
    unbatched = nnfit.data.Dataset.from_tensor_slices((x, y))
    with pytest.raises(ValueError, match=r"\.batch\("):
        model.fit(unbatched, epochs=1, verbose=0)
    with pytest.raises(ValueError, match="must not be given"):
        model.fit(unbatched.batch(8), y, epochs=1, verbose=0)
    with pytest.raises(ValueError, match="first dimensions differ"):
        nnfit.data.Dataset.from_tensor_slices((x, y[:10]))
    missing = nnfit.data.npy(tmp_path / "nope_x.npy", tmp_path / "nope_y.npy").batch(4)
    with pytest.raises(OSError, match="nope_x.npy"):
        model.fit(missing, epochs=1, verbose=0)
    with pytest.raises(ValueError, match="shuffle"):
        unbatched.shuffle(0).batch(4).as_numpy_iterator()


@pytest.mark.skipif(not __import__("os").path.isdir(FASHION), reason="needs Debian's dataset-fashion-mnist")
def test_idx_source_trains():
    ds = (nnfit.data.idx(f"{FASHION}/t10k-images-idx3-ubyte.gz", f"{FASHION}/t10k-labels-idx1-ubyte.gz")
          .map(nnfit.data.normalize(scale=1 / 255)).cache().shuffle(10000).batch(128)
          .prefetch(nnfit.data.AUTOTUNE))
    model = keras.Sequential([keras.Input(shape=(28, 28)), layers.Flatten(), layers.Dense(64, activation="relu"),
                              layers.Dense(10, activation="softmax")])
    model.compile("adam", "sparse_categorical_crossentropy", metrics=["accuracy"])
    history = model.fit(ds, epochs=2, verbose=0)
    assert history.history["accuracy"][-1] > 0.7


def test_predict_on_a_dataset(blobs):
    x, y = blobs
    model = mlp()
    ds = nnfit.data.Dataset.from_tensor_slices((x, y)).batch(64)
    np.testing.assert_allclose(model.predict(ds, verbose=0), model.predict(x, verbose=0), rtol=1e-6, atol=1e-7)
