"""keras.utils beyond what Keras.UtilsParity compares with Keras (issue 36): the BatchDataset the
dataset utilities return (tf.data's methods, fit/evaluate/predict on it, a text model's
strings, shuffling per pass), get_file through a local HTTP server (progress, cache, hashes,
errors), load_img/save_img on Pillow, the JPEG decoder's fallback, interactive logging of
callbacks' messages, keras.saving's shared registry with .keras files, and the names that
raise NotImplementedError saying what to use."""
import functools
import http.server
import os
import threading
import wave

import numpy as np
import pytest

from nnfit import keras
from nnfit.keras import _image_io, layers

PIL = pytest.importorskip("PIL.Image", reason="Pillow is not installed (Debian: python3-pil, scripts/setup.sh)")


def write_images(root, classes=("cat", "dog"), per_class=5, size=(12, 10)):
    rng = np.random.default_rng(0)
    for cls in classes:
        os.makedirs(os.path.join(root, cls), exist_ok=True)
        for i in range(per_class):
            pixels = rng.integers(0, 256, size=size + (3,)).astype("uint8")
            PIL.fromarray(pixels).save(os.path.join(root, cls, f"{i}.png"))


def test_image_dataset_trains_and_has_tf_data_methods(tmp_path, capsys):
    write_images(tmp_path)
    train, val = keras.utils.image_dataset_from_directory(tmp_path, image_size=(8, 8), batch_size=4, seed=1,
                                                          validation_split=0.2, subset="both")
    assert capsys.readouterr().out.splitlines() == ["Found 10 files belonging to 2 classes.",
                                                    "Using 8 files for training.", "Using 2 files for validation."]
    assert train.class_names == ["cat", "dog"] and len(train) == 2 and len(val) == 1
    assert not set(train.file_paths) & set(val.file_paths)
    images, labels = next(iter(train))
    assert images.shape == (4, 8, 8, 3) and images.dtype == np.float32 and labels.dtype == np.int32
    assert type(images.numpy()) is np.ndarray  # TensorFlow's tensors' numpy()
    model = keras.Sequential([keras.Input((8, 8, 3)), layers.Rescaling(1 / 255), layers.Flatten(), layers.Dense(2)])
    model.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    history = model.fit(train.cache().prefetch(2), validation_data=val, epochs=2, verbose=0)
    assert len(history.history["val_loss"]) == 2
    assert model.predict(val, verbose=0).shape == (2, 2)
    assert len(list(train.take(1))) == 1 and len(list(train.skip(1))) == 1
    scaled = next(iter(train.map(lambda x, y: (x / 255.0, y))))[0]
    assert float(np.max(scaled)) <= 1.0
    samples = list(train.unbatch())
    assert len(samples) == 8 and samples[0][0].shape == (8, 8, 3)
    assert sorted(len(b[1]) for b in train.unbatch().batch(3)) == [2, 3, 3]
    assert train.cardinality() == 2 and len(list(train.repeat(2))) == 4
    first = [np.asarray(y).tolist() for _, y in train.as_numpy_iterator()]
    assert sorted(sum(first, [])) == sorted(np.concatenate([np.asarray(y) for _, y in train]).tolist())


def test_shuffled_passes_differ_and_keep_the_samples(tmp_path):
    write_images(tmp_path, per_class=8)
    ds = keras.utils.image_dataset_from_directory(tmp_path, image_size=(4, 4), batch_size=4, seed=3, verbose=False)
    passes = [np.concatenate([np.asarray(x).reshape(len(x), -1).sum(1) for x, _ in ds]) for _ in range(3)]
    assert all(sorted(p) == sorted(passes[0]) for p in passes)
    assert any(not np.array_equal(p, passes[0]) for p in passes[1:])
    ordered = keras.utils.image_dataset_from_directory(tmp_path, image_size=(4, 4), shuffle=False, verbose=False)
    assert [os.path.basename(os.path.dirname(p)) for p in ordered.file_paths] == ["cat"] * 8 + ["dog"] * 8


def test_image_dataset_refusals(tmp_path):
    write_images(tmp_path)
    with pytest.raises(ValueError, match="must provide a `seed`"):
        keras.utils.image_dataset_from_directory(tmp_path, validation_split=0.2, subset="training")
    with pytest.raises(NotImplementedError, match="'area'.*'bilinear'"):
        keras.utils.image_dataset_from_directory(tmp_path, interpolation="area")
    with pytest.raises(NotImplementedError, match="pad_to_aspect_ratio"):
        keras.utils.image_dataset_from_directory(tmp_path, pad_to_aspect_ratio=True)
    os.makedirs(tmp_path / "empty")
    with pytest.raises(ValueError, match="No images found"):
        keras.utils.image_dataset_from_directory(tmp_path / "empty", labels=None, verbose=False)


def test_jpeg_without_turbojpeg_falls_back_to_pillow(tmp_path, monkeypatch):
    ramp = np.linspace(0, 255, 16)
    pixels = np.stack([ramp[:, None] + 0 * ramp, ramp[None, :] + 0 * ramp[:, None], 255 - ramp[:, None] + 0 * ramp],
                      axis=2).astype("uint8")  # smooth, so JPEG keeps it close
    PIL.fromarray(pixels).save(tmp_path / "a.jpg", quality=95)
    fast = _image_io.decode_image(str(tmp_path / "a.jpg"), 3)
    monkeypatch.setitem(_image_io._TJ, "lib", None)
    accurate = _image_io.decode_image(str(tmp_path / "a.jpg"), 3)
    assert accurate.shape == fast.shape == (16, 16, 3)
    assert np.abs(accurate.astype(int) - fast.astype(int)).max() <= 8  # IDCTs a few levels apart
    assert np.abs(accurate.astype(int) - pixels.astype(int)).mean() < 4


def test_text_dataset_feeds_a_text_vectorization_model(tmp_path):
    for cls, words in (("neg", "bad awful"), ("pos", "good great")):
        os.makedirs(tmp_path / cls)
        for i in range(6):
            (tmp_path / cls / f"{i}.txt").write_text(f"{words} film {i}")
    ds = keras.utils.text_dataset_from_directory(tmp_path, batch_size=4, seed=2, verbose=False)
    texts, labels = next(iter(ds))
    assert texts.dtype == object and isinstance(texts[0], bytes) and labels.shape == (4,)
    vectorize = layers.TextVectorization(max_tokens=20, output_sequence_length=4)
    vectorize.adapt(ds.map(lambda x, y: x))
    inputs = keras.Input(shape=(1,), dtype="string")
    x = layers.Embedding(20, 4)(vectorize(inputs))
    model = keras.Model(inputs, layers.Dense(1, activation="sigmoid")(layers.GlobalAveragePooling1D()(x)))
    model.compile(optimizer="adam", loss="binary_crossentropy")
    history = model.fit(ds.map(lambda x, y: (x[:, None], y)), epochs=2, verbose=0)
    assert len(history.history["loss"]) == 2


def test_audio_dataset_pads_per_batch(tmp_path):
    os.makedirs(tmp_path / "a")
    for i, n in enumerate((3, 7, 5)):
        with wave.open(str(tmp_path / "a" / f"{i}.wav"), "wb") as w:
            w.setnchannels(2)
            w.setsampwidth(2)
            w.setframerate(8000)
            w.writeframes(np.full((n, 2), 16384, "<i2").tobytes())
    ds = keras.utils.audio_dataset_from_directory(tmp_path, batch_size=2, shuffle=False, verbose=False)
    (x1, y1), (x2, _) = list(ds)
    assert x1.shape == (2, 7, 2) and x2.shape == (1, 5, 2) and y1.tolist() == [0, 0]
    assert x1[0, :3].tolist() == [[0.5, 0.5]] * 3 and x1[0, 3:].tolist() == [[0.0, 0.0]] * 4
    with pytest.raises(NotImplementedError, match="sampling_rate"):
        keras.utils.audio_dataset_from_directory(tmp_path, sampling_rate=16000)


def test_timeseries_shuffle_is_seeded_per_pass():
    data = np.arange(100, dtype="float32")[:, None]
    ds = keras.utils.timeseries_dataset_from_array(data, None, 5, batch_size=8, shuffle=True, seed=4)
    again = keras.utils.timeseries_dataset_from_array(data, None, 5, batch_size=8, shuffle=True, seed=4)
    first = np.concatenate(list(ds))
    assert np.array_equal(first, np.concatenate(list(again)))
    assert sorted(first[:, 0, 0].tolist()) == list(range(96))
    model = keras.Sequential([keras.Input((5, 1)), layers.Flatten(), layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    pairs = keras.utils.timeseries_dataset_from_array(data / 100, data[5:] / 100, 5, batch_size=16)
    assert model.evaluate(pairs, verbose=0) >= 0


@pytest.fixture
def http_root(tmp_path):
    """A local HTTP server over a folder (loopback only), shut down after the test."""
    root = tmp_path / "served"
    root.mkdir()
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
    handler.log_message = lambda *a: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield root, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_get_file_over_http(http_root, tmp_path, capsys):
    root, url = http_root
    (root / "weights.bin").write_bytes(b"w" * 5000)
    cache = tmp_path / "cache"
    cache.mkdir()  # as Keras, a cache_dir that is not there counts as not writable (then /tmp/.keras)
    path = keras.utils.get_file("weights.bin", f"{url}/weights.bin", cache_dir=cache)
    assert path == str(cache / "datasets" / "weights.bin") and open(path, "rb").read() == b"w" * 5000
    assert "Downloading data from" in capsys.readouterr().out
    (root / "weights.bin").write_bytes(b"changed")
    assert open(keras.utils.get_file("weights.bin", f"{url}/weights.bin", cache_dir=cache), "rb").read()[:1] == b"w"
    forced = keras.utils.get_file("weights.bin", f"{url}/weights.bin", cache_dir=cache, force_download=True)
    assert open(forced, "rb").read() == b"changed"
    with pytest.raises(Exception, match="URL fetch failure.*404"):
        keras.utils.get_file("missing.bin", f"{url}/missing.bin", cache_dir=cache)
    assert not os.path.exists(cache / "datasets" / "missing.bin")
    with pytest.raises(ValueError, match="origin"):
        keras.utils.get_file("x")


def test_load_img_and_save_img(tmp_path):
    pixels = np.random.default_rng(0).integers(0, 256, size=(10, 16, 3)).astype("float32")
    keras.utils.save_img(tmp_path / "a.png", pixels, scale=False)
    img = keras.utils.load_img(tmp_path / "a.png")
    assert img.size == (16, 10) and img.mode == "RGB"
    assert np.array_equal(keras.utils.img_to_array(img), pixels)
    assert keras.utils.load_img(tmp_path / "a.png", color_mode="grayscale").mode == "L"
    small = keras.utils.load_img(str(tmp_path / "a.png"), target_size=(5, 5), keep_aspect_ratio=True)
    assert small.size == (5, 5)
    with pytest.warns(UserWarning, match="RGBA"):
        keras.utils.save_img(tmp_path / "b.jpg", np.concatenate([pixels, pixels[:, :, :1]], 2))
    with pytest.raises(ValueError, match="Invalid interpolation"):
        keras.utils.load_img(tmp_path / "a.png", target_size=(4, 4), interpolation="cubic")
    assert keras.utils.img_to_array(img, data_format="channels_first").shape == (3, 10, 16)


def test_interactive_logging_routes_callback_messages(caplog, capsys):
    x = np.zeros((8, 2), "float32")
    model = keras.Sequential([keras.Input((2,)), layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    schedule = keras.callbacks.LearningRateScheduler(lambda epoch, lr: lr, verbose=1)
    keras.utils.disable_interactive_logging()
    try:
        with caplog.at_level("INFO", logger="nnfit.keras"):
            model.fit(x, x[:, :1], epochs=1, verbose=1, callbacks=[schedule])
        assert capsys.readouterr().out == ""
        assert any("LearningRateScheduler" in r.getMessage() for r in caplog.records)
    finally:
        keras.utils.enable_interactive_logging()
    model.fit(x, x[:, :1], epochs=1, verbose=0, callbacks=[schedule])
    assert "LearningRateScheduler setting learning rate" in capsys.readouterr().out


def test_registry_is_shared_with_saving_and_files(tmp_path):
    @keras.utils.register_keras_serializable(package="UtilsTest")
    class Doubling(layers.Layer):
        def call(self, x):
            return x * 2.0

    inputs = keras.Input((3,))
    model = keras.Model(inputs, layers.Dense(1)(Doubling()(inputs)))
    model.compile(optimizer="sgd", loss="mse")  # nnfit writes a compiled model's file
    path = tmp_path / "m.keras"
    keras.models.save_model(model, path)
    assert keras.saving.get_registered_object("UtilsTest>Doubling") is Doubling
    loaded = keras.saving.load_model(path)
    assert isinstance(loaded.layers[1], Doubling)
    x = np.ones((2, 3), "float32")
    assert np.allclose(loaded.predict(x, verbose=0), model.predict(x, verbose=0))
    with pytest.raises(NotImplementedError, match="max_shard_size"):
        keras.saving.save_weights(model, tmp_path / "w.weights.json", max_shard_size=1)


def test_unsupported_names_say_what_to_use():
    with pytest.raises(NotImplementedError, match="Normalization.*StringLookup"):
        keras.utils.FeatureSpace({"a": "float"})
    with pytest.raises(NotImplementedError, match="bounding-box"):
        keras.utils.bounding_boxes.convert_format(np.zeros((1, 4)), "xyxy", "yxyx")
    with pytest.raises(NotImplementedError, match="serialize_keras_object"):
        keras.utils.legacy.serialize_keras_object(layers.Dense(1))
    with pytest.raises(NotImplementedError, match="float32"):
        keras.backend.set_floatx("float16")
    with pytest.raises(NotImplementedError, match="channels last"):
        keras.backend.set_image_data_format("channels_first")
