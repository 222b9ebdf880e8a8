"""nnfit.keras's API: Keras's names, arguments, defaults and behaviour."""
import inspect
import json
import zipfile

import numpy as np
import pytest

from nnfit import keras
from nnfit.keras import layers


def mlp(classes=3):
    return keras.Sequential([keras.Input(shape=(8,)), layers.Dense(16, activation="relu"),
                             layers.Dense(classes, activation="softmax")])


def test_layer_signatures_are_keras():
    sig = inspect.signature(layers.Dense)
    assert list(sig.parameters)[:3] == ["units", "activation", "use_bias"]
    assert sig.parameters["kernel_initializer"].default == "glorot_uniform"
    assert inspect.signature(layers.Conv2D).parameters["padding"].default == "valid"
    d = layers.Dense(4, "relu")
    assert d.get_config()["activation"] == "relu" and d.get_config()["units"] == 4


def test_bad_layer_arguments():
    with pytest.raises(TypeError, match="units"):
        layers.Dense()
    with pytest.raises(TypeError, match="unitz"):
        layers.Dense(4, unitz=3)
    with pytest.raises(NotImplementedError, match="autocast"):
        layers.Dense(4, autocast=False)


def test_automatic_names_and_clear_session():
    assert layers.Dense(1).name == "dense"
    assert layers.Dense(1).name == "dense_1"
    assert layers.Conv2D(1, 3).name == "conv2d"
    keras.backend.clear_session()
    assert layers.Dense(1).name == "dense"


def test_sequential_trains_and_evaluates(blobs):
    x, y = blobs
    model = mlp()
    model.compile(optimizer=keras.optimizers.Adam(0.01), loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    history = model.fit(x, y, batch_size=32, epochs=5, validation_split=0.2, verbose=0)
    assert list(history.history) == ["accuracy", "loss", "val_accuracy", "val_loss"]
    assert history.epoch == [0, 1, 2, 3, 4]
    assert history.history["loss"][-1] < history.history["loss"][0]
    assert history.history["val_accuracy"][-1] > 0.9
    loss, acc = model.evaluate(x, y, verbose=0)
    assert acc > 0.9
    logs = model.evaluate(x, y, verbose=0, return_dict=True)
    assert sorted(logs) == ["accuracy", "loss"] and logs["loss"] == pytest.approx(loss)
    p = model.predict(x[:10], verbose=0)
    assert p.shape == (10, 3) and p.dtype == np.float32
    np.testing.assert_allclose(p.sum(axis=1), 1.0, rtol=1e-5)


def test_sequential_input_shape_from_data(blobs):
    x, y = blobs
    model = keras.Sequential([layers.Dense(3, activation="softmax")])
    model.compile("sgd", "sparse_categorical_crossentropy")
    model.fit(x, y, epochs=1, verbose=0)
    assert model.input_shape == (None, 8)
    first = keras.Sequential([layers.Dense(3, input_shape=(8,))])
    assert first.output_shape == (None, 3)


def test_functional_model(blobs):
    x, y = blobs
    a = keras.Input(shape=(8,), name="features")
    h = layers.Dense(16, activation="relu")(a)
    assert h.shape == (None, 16) and h.dtype == "float32"
    b = layers.Dense(16, activation="relu")(a)
    merged = layers.Concatenate()([h, b])
    assert merged.shape == (None, 32)
    out = layers.Dense(3, activation="softmax", name="probs")(merged)
    model = keras.Model(inputs=a, outputs=out, name="towers")
    assert [l.name for l in model.layers] == ["features", "dense", "dense_1", "concatenate", "probs"]
    model.compile(optimizer=keras.optimizers.Adam(learning_rate=0.01), loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    history = model.fit({"features": x}, y, epochs=3, verbose=0)
    assert history.history["accuracy"][-1] > 0.9
    assert model.get_layer("probs").get_weights()[0].shape == (32, 3)
    config = json.loads(model.to_json())
    assert config["class_name"] == "Functional" and config["config"]["name"] == "towers"


def test_two_outputs(blobs):
    x, y = blobs
    a = keras.Input(shape=(8,))
    h = layers.Dense(8, activation="relu")(a)
    c = layers.Dense(3, activation="softmax", name="cls")(h)
    r = layers.Dense(1, name="reg")(h)
    model = keras.Model(a, [c, r])
    model.compile("adam", loss={"cls": "sparse_categorical_crossentropy", "reg": "mse"}, loss_weights=[1.0, 0.5])
    target = x[:, :1].copy()
    history = model.fit(x, [y, target], epochs=2, verbose=0)
    assert {"loss", "cls_loss", "reg_loss"} <= set(history.history)
    p_cls, p_reg = model.predict(x[:5], verbose=0)
    assert p_cls.shape == (5, 3) and p_reg.shape == (5, 1)
    # Per-output metrics, in Keras's dict and one-entry-per-output forms.
    model.compile("adam", loss=["sparse_categorical_crossentropy", "mse"],
                  metrics={"cls": ["accuracy"], "reg": "mae"}, weighted_metrics={"reg": ["mse"]})
    logs = model.evaluate(x, [y, target], verbose=0, return_dict=True)
    assert set(logs) == {"loss", "cls_loss", "reg_loss", "cls_accuracy", "reg_mae", "reg_mse"}
    model.compile("adam", loss=["sparse_categorical_crossentropy", "mse"], metrics=[None, ["mae", "mse"]])
    assert set(model.evaluate(x, [y, target], verbose=0, return_dict=True)) == {
        "loss", "cls_loss", "reg_loss", "reg_mae", "reg_mse"}
    with pytest.raises(ValueError, match="not outputs of the model"):
        model.compile("adam", loss=["sparse_categorical_crossentropy", "mse"], metrics={"clz": ["accuracy"]})


def test_shape_errors_name_the_layer():
    a = keras.Input(shape=(4, 4))
    with pytest.raises(ValueError, match="conv2d"):
        layers.Conv2D(2, 3)(a)


@pytest.mark.parametrize("name,args", [("JaxLayer", (lambda params, x: x,)), ("FlaxLayer", (None,)),
                                       ("TorchModuleWrapper", (None,)), ("TFSMLayer", ("saved_model_dir",))])
def test_layers_wrapping_other_frameworks_are_named_and_refused(name, args):
    # Keras 3's JaxLayer, FlaxLayer, TorchModuleWrapper and TFSMLayer run another framework's
    # code under that backend; nnfit names them and says what to do instead.
    with pytest.raises(NotImplementedError, match=f"keras.layers.{name} wraps .* nnfit's engine cannot call it"):
        getattr(layers, name)(*args)


def test_unsupported_arguments_are_errors(blobs):
    x, y = blobs
    model = mlp()
    with pytest.raises(NotImplementedError, match="steps_per_execution"):
        model.compile("adam", "sparse_categorical_crossentropy", steps_per_execution=4)
    model.compile("adam", "sparse_categorical_crossentropy")
    with pytest.raises(NotImplementedError, match="run_eagerly"):
        model.compile("adam", "sparse_categorical_crossentropy", run_eagerly=True)

    with pytest.raises(ValueError, match="subclass keras.Model with a call"):
        keras.Model()  # neither Functional (inputs, outputs) nor a subclass with call()


def test_optimizer_loss_metric_objects(blobs):
    x, y = blobs
    model = mlp()
    schedule = keras.optimizers.schedules.ExponentialDecay(0.01, decay_steps=10, decay_rate=0.9)
    model.compile(optimizer=keras.optimizers.SGD(learning_rate=schedule, momentum=0.9),
                  loss=keras.losses.SparseCategoricalCrossentropy(),
                  metrics=[keras.metrics.SparseCategoricalAccuracy(name="acc")])
    history = model.fit(x, y, epochs=2, verbose=0)
    assert "acc" in history.history
    with pytest.raises(ValueError, match="optimizer"):
        mlp().compile(optimizer=keras.optimizers.Adam(learning_rate=-1.0), loss="mse")


def test_class_and_sample_weights_and_initial_epoch(blobs):
    x, y = blobs
    model = mlp()
    model.compile("adam", "sparse_categorical_crossentropy")
    h = model.fit(x, y, epochs=3, initial_epoch=1, class_weight={0: 2.0, 1: 1.0, 2: 1.0}, verbose=0)
    assert h.epoch == [1, 2]
    h = model.fit(x, y, epochs=1, sample_weight=np.ones(len(x)), verbose=0)
    assert len(h.history["loss"]) == 1


def test_validation_arguments_as_keras(blobs):
    """validation_freq, validation_batch_size, validation_steps and weighted validation:
    the last epoch's val_ logs are the final model's evaluate() of the same rows."""
    x, y = blobs
    vx, vy, vw = x[:50], y[:50], (np.arange(50) % 4).astype("float32")
    model = mlp()
    model.compile("adam", "sparse_categorical_crossentropy", metrics=["accuracy"])
    h = model.fit(x, y, epochs=4, validation_data=(vx, vy, vw), validation_freq=2, validation_batch_size=7,
                  validation_steps=3, verbose=0)
    assert len(h.history["loss"]) == 4 and len(h.history["val_loss"]) == 2  # after epochs 2 and 4, as Keras
    final = model.evaluate(vx[:21], vy[:21], sample_weight=vw[:21], batch_size=21, return_dict=True, verbose=0)
    assert h.history["val_loss"][-1] == pytest.approx(final["loss"], rel=1e-5)
    assert h.history["val_accuracy"][-1] == pytest.approx(final["accuracy"])
    plain = model.evaluate(vx[:21], vy[:21], return_dict=True, verbose=0)
    assert abs(plain["loss"] - final["loss"]) > 1e-3 and plain["accuracy"] == final["accuracy"]
    # Keras's list form, and a dataset with its weights as a third component.
    from nnfit.data import Dataset
    ds = Dataset.from_tensor_slices((vx, vy, vw)).batch(10)
    h = model.fit(x, y, epochs=3, validation_data=ds, validation_freq=[1, 3], verbose=0)
    assert len(h.history["val_loss"]) == 2
    assert h.history["val_loss"][-1] == pytest.approx(
        model.evaluate(vx, vy, sample_weight=vw, return_dict=True, verbose=0)["loss"], rel=1e-5)
    assert model.evaluate(ds, verbose=0)[0] == pytest.approx(h.history["val_loss"][-1], rel=1e-5)
    with pytest.raises(ValueError, match="validation_freq"):
        model.fit(x, y, validation_data=(vx, vy), validation_freq=0, verbose=0)
    with pytest.raises(ValueError, match="validation_freq"):
        model.fit(x, y, validation_data=(vx, vy), validation_freq="2", verbose=0)
    with pytest.raises(ValueError, match="validation_steps"):
        model.fit(x, y, validation_data=(vx, vy), validation_steps=0, verbose=0)
    with pytest.raises(ValueError, match="one weight per sample"):
        model.fit(x, y, validation_data=(vx, vy, vw[:10]), verbose=0)
    with pytest.raises(ValueError, match="repeats forever"):
        model.fit(x, y, validation_data=ds.repeat(), verbose=0)
    # validation_split keeps the weights of the rows it sets aside, as Keras does.
    w = np.where(y == 0, 3.0, 1.0).astype("float32")
    h = model.fit(x, y, epochs=1, sample_weight=w, validation_split=0.25, verbose=0)
    assert h.history["val_loss"][-1] == pytest.approx(
        model.evaluate(x[450:], y[450:], sample_weight=w[450:], return_dict=True, verbose=0)["loss"], rel=1e-5)


class Recorder(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.events = []

    def on_train_batch_begin(self, batch, logs=None):
        self.events.append(("train_batch_begin", batch))

    def on_test_begin(self, logs=None):
        self.events.append(("test_begin", self.model is not None))

    def on_test_batch_begin(self, batch, logs=None):
        self.events.append(("test_batch_begin", batch))

    def on_test_batch_end(self, batch, logs=None):
        self.events.append(("test_batch_end", batch, sorted(logs)))

    def on_test_end(self, logs=None):
        self.events.append(("test_end", round(logs["loss"], 6)))

    def on_predict_begin(self, logs=None):
        self.events.append(("predict_begin",))

    def on_predict_batch_end(self, batch, logs=None):
        self.events.append(("predict_batch_end", batch, logs["outputs"].shape))

    def on_predict_end(self, logs=None):
        self.events.append(("predict_end",))


def test_callbacks_of_fit_evaluate_and_predict(blobs, capsys):
    """Keras's hooks in Keras's order: on_train_batch_begin, on_test_* in fit's validation
    and evaluate, on_predict_* with each batch's outputs; a hook's exception ends the call."""
    x, y = blobs
    model = mlp()
    model.compile("adam", "sparse_categorical_crossentropy", metrics=["accuracy"])
    r = Recorder()
    h = model.fit(x[:64], y[:64], batch_size=32, epochs=1, validation_data=(x[:40], y[:40]), callbacks=[r],
                  verbose=0)
    assert r.events == [("train_batch_begin", 0), ("train_batch_begin", 1), ("test_begin", True),
                        ("test_batch_begin", 0), ("test_batch_end", 0, ["accuracy", "loss"]),
                        ("test_batch_begin", 1), ("test_batch_end", 1, ["accuracy", "loss"]),
                        ("test_end", round(h.history["val_loss"][0], 6))]
    r.events.clear()
    loss = model.evaluate(x[:40], y[:40], batch_size=16, callbacks=[r], verbose=0)[0]
    assert [e[0] for e in r.events] == ["test_begin"] + ["test_batch_begin", "test_batch_end"] * 3 + ["test_end"]
    assert r.events[-1] == ("test_end", round(loss, 6))
    r.events.clear()
    model.predict(x[:40], batch_size=16, callbacks=[r], verbose=0)
    assert r.events == [("predict_begin",), ("predict_batch_end", 0, (16, 3)), ("predict_batch_end", 1, (16, 3)),
                        ("predict_batch_end", 2, (8, 3)), ("predict_end",)]
    from nnfit.data import Dataset
    r.events.clear()
    model.predict(Dataset.from_tensor_slices(x[:40]).batch(16), callbacks=[r], verbose=0)
    assert [e[0] for e in r.events] == ["predict_begin"] + ["predict_batch_end"] * 3 + ["predict_end"]
    # Keras's progress lines: evaluate with its metrics, predict with its steps.
    capsys.readouterr()
    model.evaluate(x[:40], y[:40], batch_size=16, verbose=2)
    model.predict(x[:40], batch_size=16, verbose=2)
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("3/3 - ") and " - accuracy: " in out[0] and " - loss: " in out[0], out
    assert out[1].startswith("3/3 - ") and "loss" not in out[1], out

    class Fails(keras.callbacks.Callback):
        def on_test_batch_end(self, batch, logs=None):
            raise RuntimeError("stop here")

    with pytest.raises(RuntimeError, match="stop here"):
        model.evaluate(x[:40], y[:40], callbacks=[Fails()], verbose=0)
    assert model.evaluate(x[:40], y[:40], verbose=0)[0] == pytest.approx(loss)  # usable afterwards


def test_evaluate_and_predict_steps(blobs):
    x, y = blobs
    model = mlp()
    model.compile("adam", "sparse_categorical_crossentropy")
    model.fit(x, y, epochs=1, verbose=0)
    assert model.predict(x, batch_size=10, steps=3, verbose=0).shape == (30, 3)
    np.testing.assert_array_equal(model.predict(x, batch_size=10, steps=3, verbose=0), model.predict(x[:30], verbose=0))
    assert model.evaluate(x, y, batch_size=10, steps=3, verbose=0) == pytest.approx(
        model.evaluate(x[:30], y[:30], verbose=0), rel=1e-6)
    from nnfit.data import Dataset
    forever = Dataset.from_tensor_slices((x, y)).batch(10).repeat()
    assert model.evaluate(forever, steps=3, verbose=0) == pytest.approx(model.evaluate(x[:30], y[:30], verbose=0),
                                                                        rel=1e-6)
    np.testing.assert_array_equal(model.predict(forever, steps=2, verbose=0), model.predict(x[:20], verbose=0))
    with pytest.raises(ValueError, match="repeats forever"):
        model.evaluate(forever, verbose=0)
    with pytest.raises(ValueError, match="steps"):
        model.predict(x, steps=-1, verbose=0)
    with pytest.raises(ValueError, match="sample_weight"):
        model.evaluate(forever, sample_weight=np.ones(10), steps=1, verbose=0)


def test_weights_round_trip(blobs):
    model = mlp()
    weights = model.get_weights()
    assert [w.shape for w in weights] == [(8, 16), (16,), (16, 3), (3,)]
    new = [np.full_like(w, 0.5) for w in weights]
    model.set_weights(new)
    np.testing.assert_array_equal(model.get_weights()[2], new[2])
    assert model.count_params() == 8 * 16 + 16 + 16 * 3 + 3
    with pytest.raises(ValueError):
        model.set_weights(new[:2])


@pytest.mark.parametrize("suffix", [".keras", ".h5"])
def test_save_and_load(tmp_path, blobs, suffix):
    x, y = blobs
    model = mlp()
    model.compile("adam", "sparse_categorical_crossentropy", metrics=["accuracy"])
    model.fit(x, y, epochs=1, verbose=0)
    path = tmp_path / f"m{suffix}"
    model.save(path)
    loaded = keras.models.load_model(path)
    np.testing.assert_allclose(loaded.predict(x[:20], verbose=0), model.predict(x[:20], verbose=0), rtol=1e-6)
    assert [l.name for l in loaded.layers] == [l.name for l in model.layers]
    history = loaded.fit(x, y, epochs=1, verbose=0)  # compiled from the file, optimizer state included
    assert "accuracy" in history.history


def test_to_categorical():
    out = keras.utils.to_categorical([0, 2, 1], num_classes=3)
    np.testing.assert_array_equal(out, [[1, 0, 0], [0, 0, 1], [0, 1, 0]])
    assert out.dtype == np.float32
    with pytest.raises(ValueError):
        keras.utils.to_categorical([3], num_classes=3)


def test_mixed_bfloat16(blobs):
    x, y = blobs
    keras.mixed_precision.set_global_policy("mixed_bfloat16")
    model = mlp()
    assert model.layers[0].compute_dtype == "bfloat16" and model.layers[0].dtype == "float32"
    model.compile(keras.optimizers.Adam(0.01), "sparse_categorical_crossentropy", metrics=["accuracy"])
    history = model.fit(x, y, epochs=4, verbose=0)
    assert history.history["accuracy"][-1] > 0.9
    with pytest.raises(ValueError, match="mixed_bfloat17"):
        keras.mixed_precision.set_global_policy("mixed_bfloat17")


def test_same_seed_same_result(blobs):
    x, y = blobs

    def run():
        keras.backend.clear_session()
        keras.utils.set_random_seed(7)
        model = mlp()
        model.compile("adam", "sparse_categorical_crossentropy")
        return model.fit(x, y, epochs=2, verbose=0).history["loss"]

    assert run() == run()


def test_progress_output_is_kerass(blobs, capsys):
    import re
    x, y = blobs
    model = mlp()
    model.compile("adam", "sparse_categorical_crossentropy", metrics=["accuracy"])
    model.fit(x, y, epochs=2, batch_size=100, validation_split=0.2, verbose=2)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "Epoch 1/2" and lines[2] == "Epoch 2/2"
    pattern = (r"^5/5 - \d+s - \d+(us|ms|s)/step - accuracy: \d\.\d{4} - loss: \d\.\d{4} - val_accuracy: \d\.\d{4} "
               r"- val_loss: \d\.\d{4}$")
    assert re.match(pattern, lines[1]), lines[1]
    model.fit(x, y, epochs=1, batch_size=100, verbose=0)
    assert capsys.readouterr().out == ""
    model.fit(x, y, epochs=1, batch_size=100, verbose=1)  # not a terminal: the bar once, at the epoch's end
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 1 and re.match(r"^\x1b\[1m6/6\x1b\[0m .*━.* - accuracy: \d\.\d{4} - loss: \d\.\d{4}$", out[0]), out


def test_layer_set_weights_and_multi_output_validation(blobs):
    x, y = blobs
    a = keras.Input(shape=(8,))
    h = layers.Dense(4, activation="relu", name="h")(a)
    c = layers.Dense(3, activation="softmax", name="cls")(h)
    r = layers.Dense(1, name="reg")(h)
    model = keras.Model(a, [c, r])
    kernel, bias = model.get_layer("h").get_weights()
    model.get_layer("h").set_weights([np.ones_like(kernel), np.full_like(bias, 0.5)])
    np.testing.assert_array_equal(model.get_layer("h").get_weights()[1], np.full(4, 0.5, np.float32))
    with pytest.raises(ValueError, match="shape"):
        model.get_layer("h").set_weights([np.ones((2, 2)), bias])
    model.compile("adam", loss=["sparse_categorical_crossentropy", "mse"])
    target = x[:, :1].copy()
    h = model.fit(x, [y, target], epochs=2, validation_data=(x[:100], [y[:100], target[:100]]), verbose=0)
    assert {"val_loss", "val_cls_loss", "val_reg_loss"} <= set(h.history)


def test_loss_scale_optimizer_is_keras_and_takes_its_settings(tmp_path):
    """keras.optimizers.LossScaleOptimizer: Keras's config (as Keras 3.15 serializes it), its
    settings reach the engine (the logged loss scale is the initial one, not the default),
    the learning rate is the inner optimizer's, and the saved file keeps it."""
    inner = keras.optimizers.Adam(0.01)
    opt = keras.optimizers.LossScaleOptimizer(inner, initial_scale=1024.0, dynamic_growth_steps=100)
    config = opt.serialize()
    assert config["class_name"] == "LossScaleOptimizer" and config["module"] == "keras.optimizers"
    assert set(config["config"]) == {"name", "inner_optimizer", "initial_scale", "dynamic_growth_steps"}
    assert config["config"]["inner_optimizer"]["class_name"] == "Adam"
    again = keras.optimizers.deserialize(config)
    assert again.get_config() == opt.get_config() and isinstance(again.inner_optimizer, keras.optimizers.Adam)
    with pytest.raises(ValueError, match="inner_optimizer"):
        keras.optimizers.LossScaleOptimizer("adam")
    with pytest.raises(NotImplementedError, match="inner optimizer's"):
        keras.optimizers.LossScaleOptimizer(inner, learning_rate=0.1)
    keras.mixed_precision.set_global_policy("mixed_float16")
    try:
        model = keras.Sequential([keras.Input((4,)), layers.Dense(8, activation="relu"),
                                  layers.Dense(1, dtype="float32")])
        model.compile(optimizer=opt, loss="mse")
        assert opt.learning_rate == pytest.approx(0.01)
        rng = np.random.default_rng(0)
        history = model.fit(rng.random((64, 4), dtype="float32"), rng.random((64, 1), dtype="float32"), epochs=1,
                            verbose=0)
        assert history.history["loss_scale"] == [1024.0]
        path = str(tmp_path / "m.keras")
        model.save(path)
        with zipfile.ZipFile(path) as z:
            saved = json.loads(z.read("config.json"))["compile_config"]["optimizer"]
        assert saved["class_name"] == "LossScaleOptimizer" and saved["config"]["initial_scale"] == 1024.0
    finally:
        keras.mixed_precision.set_global_policy("float32")
