"""keras.applications in nnfit.keras (issue 36): Keras 3.15.1's signatures and defaults,
parameter counts, weights= (None, a file, "imagenet" from Keras's cache or a clear error),
input_tensor, pooling, preprocess_input and decode_predictions; and the layer fixes the
architectures needed (Merge broadcasting for squeeze-and-excite, VarianceScaling with
arguments, Keras's layer order in branching models, the summary of a chain-shaped
Functional model). The expected figures are real Keras 3.15.1's; the same architectures run
side by side under Keras and nnfit on one weights file in keras_applications_parity.py."""
import inspect
import json
import os

import numpy as np
import pytest

from nnfit import keras
from nnfit.keras import applications, layers
from nnfit.keras.applications import imagenet_utils

# Keras 3.15.1's signatures (inspect.signature in the Keras venv).
KERAS_SIGNATURES = {
    "MobileNetV2": "(input_shape=None, alpha=1.0, include_top=True, weights='imagenet', input_tensor=None, "
                   "pooling=None, classes=1000, classifier_activation='softmax', name=None)",
    "MobileNet": "(input_shape=None, alpha=1.0, depth_multiplier=1, dropout=0.001, include_top=True, "
                 "weights='imagenet', input_tensor=None, pooling=None, classes=1000, classifier_activation='softmax', "
                 "name=None)",
}
for _name, _model_name in (("ResNet50", "resnet50"), ("ResNet101", "resnet101"), ("EfficientNetB0", "efficientnetb0"),
                           ("VGG16", "vgg16"), ("DenseNet121", "densenet121"), ("Xception", "xception"),
                           ("ResNet50V2", "resnet50v2"), ("VGG19", "vgg19"), ("InceptionV3", "inception_v3")):
    KERAS_SIGNATURES[_name] = ("(include_top=True, weights='imagenet', input_tensor=None, input_shape=None, "
                               f"pooling=None, classes=1000, classifier_activation='softmax', name='{_model_name}')")

# Keras 3.15.1's count_params() with weights=None and every other argument at its default.
KERAS_PARAMS = {"MobileNetV2": 3538984, "ResNet50": 25636712, "ResNet101": 44707176, "EfficientNetB0": 5330571,
                "VGG16": 138357544, "DenseNet121": 8062504, "Xception": 22910480, "MobileNet": 4253864,
                "ResNet50V2": 25613800, "InceptionV3": 23851784}

FAMILIES = ("mobilenet", "mobilenet_v2", "resnet", "resnet50", "resnet_v2", "efficientnet", "vgg16", "vgg19",
            "densenet", "inception_v3", "xception")


@pytest.fixture
def keras_home(tmp_path, monkeypatch):
    """An empty Keras cache (KERAS_HOME), as on a machine that never downloaded anything."""
    monkeypatch.setenv("KERAS_HOME", str(tmp_path))
    monkeypatch.setattr(imagenet_utils, "CLASS_INDEX", None)
    (tmp_path / "models").mkdir()
    return tmp_path


@pytest.mark.parametrize("name", sorted(KERAS_SIGNATURES))
def test_signature_is_keras(name):
    assert str(inspect.signature(getattr(applications, name))) == KERAS_SIGNATURES[name]


@pytest.mark.parametrize("family", FAMILIES)
def test_family_module_has_keras_functions(family):
    module = getattr(applications, family)
    assert str(inspect.signature(module.preprocess_input)) == "(x, data_format=None)"
    assert str(inspect.signature(module.decode_predictions)) == "(preds, top=5)"


@pytest.mark.parametrize("name", sorted(KERAS_PARAMS))
def test_parameter_count_at_defaults_is_keras(name):
    model = getattr(applications, name)(weights=None)
    assert model.count_params() == KERAS_PARAMS[name]
    assert model.layers[-1].name == "predictions"
    assert model.output.shape == (None, 1000)


def test_include_top_classes_pooling_and_activation():
    top = applications.MobileNetV2(weights=None, input_shape=(32, 32, 3), classes=7, classifier_activation=None)
    assert top.output.shape == (None, 7)
    logits = top.predict(np.random.default_rng(0).uniform(-1, 1, (4, 32, 32, 3)).astype("float32"), verbose=0)
    assert logits.min() < 0 and not np.allclose(logits.sum(axis=1), 1.0)  # no softmax
    probabilities = applications.MobileNetV2(weights=None, input_shape=(32, 32, 3), classes=7).predict(
        np.zeros((1, 32, 32, 3), "float32"), verbose=0)
    np.testing.assert_allclose(probabilities.sum(axis=1), 1.0, rtol=1e-5)
    assert top.name == "mobilenetv2_1.00_32"  # Keras 3.15.1 names it by the rows given
    bare = applications.ResNet50(weights=None, include_top=False, input_shape=(32, 32, 3))
    assert bare.output.shape == (None, 1, 1, 2048)
    avg = applications.ResNet50(weights=None, include_top=False, input_shape=(64, 64, 3), pooling="avg")
    assert avg.output.shape == (None, 2048) and avg.layers[-1].name == "avg_pool"
    mx = applications.Xception(weights=None, include_top=False, input_shape=(71, 71, 3), pooling="max")
    assert mx.output.shape == (None, 2048) and type(mx.layers[-1]).__name__ == "GlobalMaxPooling2D"
    # Keras's own argument checks.
    with pytest.raises(ValueError, match="Input size must be at least 32x32"):
        applications.MobileNetV2(weights=None, include_top=False, input_shape=(16, 16, 3))
    with pytest.raises(ValueError, match="should specify a static `input_shape`"):
        applications.VGG16(weights=None, input_shape=(None, None, 3))


def test_input_tensor_after_preprocessing_layers_keeps_the_source_input():
    inputs = keras.Input((32, 32, 3))
    scaled = layers.Rescaling(1 / 127.5, offset=-1)(inputs)
    model = applications.MobileNetV2(weights=None, include_top=False, input_tensor=scaled, pooling="avg")
    assert model.inputs[0] is inputs  # Keras's get_source_inputs
    assert model.layers[0].name == inputs._history[0].name and type(model.layers[1]).__name__ == "Rescaling"
    x = np.random.default_rng(0).uniform(0, 255, (2, 32, 32, 3)).astype("float32")
    assert model.predict(x, verbose=0).shape == (2, 1280)


def test_weights_file_loads_by_keras_names(tmp_path):
    keras.utils.set_random_seed(1)
    source = applications.EfficientNetB0(weights=None, include_top=False, input_shape=(32, 32, 3), pooling="avg")
    path = str(tmp_path / "efficientnetb0_notop.weights.h5")
    source.save_weights(path)
    keras.utils.set_random_seed(2)
    loaded = applications.EfficientNetB0(weights=path, include_top=False, input_shape=(32, 32, 3), pooling="avg")
    fresh = applications.EfficientNetB0(weights=None, include_top=False, input_shape=(32, 32, 3), pooling="avg")
    for a, b in zip(source.get_weights(), loaded.get_weights()):
        np.testing.assert_array_equal(a, b)
    assert any(not np.array_equal(a, b) for a, b in zip(source.get_weights(), fresh.get_weights()))
    x = np.random.default_rng(0).uniform(-1, 1, (2, 32, 32, 3)).astype("float32")
    np.testing.assert_array_equal(source.predict(x, verbose=0), loaded.predict(x, verbose=0))


def test_weights_argument_errors(keras_home):
    with pytest.raises(ValueError, match="should be either `None`.*imagenet.*path to the weights file"):
        applications.ResNet50(weights=str(keras_home / "missing.weights.h5"))
    with pytest.raises(ValueError, match="`classes` should be 1000"):
        applications.VGG16(weights="imagenet", classes=10)
    with pytest.raises(ValueError, match="Only `None` and `softmax` activations"):
        applications.DenseNet121(weights="imagenet", classifier_activation="relu")


@pytest.mark.parametrize("name,kwargs,file_name", [
    ("MobileNetV2", {"include_top": False, "input_shape": (96, 96, 3)},
     "mobilenet_v2_weights_tf_dim_ordering_tf_kernels_1.0_96_no_top.h5"),
    ("ResNet50", {}, "resnet50_weights_tf_dim_ordering_tf_kernels.h5"),
    ("VGG16", {"include_top": False, "input_shape": (64, 64, 3)}, "vgg16_weights_tf_dim_ordering_tf_kernels_notop.h5"),
    ("EfficientNetB0", {}, "efficientnetb0.h5"),
    ("DenseNet121", {"include_top": False, "input_shape": (64, 64, 3)},
     "densenet121_weights_tf_dim_ordering_tf_kernels_notop.h5"),
    ("Xception", {}, "xception_weights_tf_dim_ordering_tf_kernels.h5"),
])
def test_imagenet_without_the_file_says_no_network_and_names_it(keras_home, name, kwargs, file_name):
    with pytest.raises(FileNotFoundError) as e:
        getattr(applications, name)(weights="imagenet", **kwargs)
    message = str(e.value)
    assert file_name in message and "no network access" in message
    assert "https://storage.googleapis.com/" in message  # where Keras downloads it from
    assert str(keras_home / "models") in message  # Keras's cache, where nnfit looks


def test_imagenet_reads_keras_cache(keras_home):
    keras.utils.set_random_seed(3)
    source = applications.MobileNetV2(weights=None, include_top=False, input_shape=(96, 96, 3))
    cached = keras_home / "models" / "mobilenet_v2_weights_tf_dim_ordering_tf_kernels_1.0_96_no_top.h5"
    source.save_weights(str(cached))
    model = applications.MobileNetV2(weights="imagenet", include_top=False, input_shape=(96, 96, 3))
    for a, b in zip(source.get_weights(), model.get_weights()):
        np.testing.assert_array_equal(a, b)


def test_efficientnet_imagenet_variant_rescales_per_channel(keras_home):
    keras.utils.set_random_seed(4)
    source = applications.EfficientNetB0(weights=None, include_top=False, input_shape=(32, 32, 3), pooling="avg")
    source.save_weights(str(keras_home / "models" / "efficientnetb0_notop.h5"))
    model = applications.EfficientNetB0(weights="imagenet", include_top=False, input_shape=(32, 32, 3),
                                        pooling="avg")
    # Keras's ImageNet variant: Normalization, then a Rescaling by 1/sqrt(stddev) per channel.
    kinds = [type(l).__name__ for l in model.layers[:4]]
    assert kinds == ["InputLayer", "Rescaling", "Normalization", "Rescaling"]
    np.testing.assert_allclose(model.layers[3].get_config()["scale"], 1 / np.sqrt([0.229, 0.224, 0.225]))
    assert [type(l).__name__ for l in source.layers[:4]] == ["InputLayer", "Rescaling", "Normalization",
                                                             "ZeroPadding2D"]
    assert model.count_params() == source.count_params()
    assert model.layers[3].get_weights() == []  # constants, not Keras variables
    for layer in source.layers:  # by layer: the two models' unnamed layers are numbered apart
        if layer.name.startswith(("input_layer", "rescaling", "normalization")):
            continue
        for a, b in zip(layer.get_weights(), model.get_layer(layer.name).get_weights()):
            np.testing.assert_array_equal(a, b)
    for a, b in zip(source.layers[2].get_weights(), model.layers[2].get_weights()):  # Normalization
        np.testing.assert_array_equal(a, b)
    # model.get_weights is Keras's too: no entries for the Rescaling's constants.
    assert len(model.get_weights()) == len(source.get_weights()) == len(model.weights)
    for a, b in zip(source.get_weights(), model.get_weights()):
        np.testing.assert_array_equal(a, b)


def test_legacy_h5_matches_layers_by_order_and_name_but_for_keras_numbering(tmp_path):
    def model(first, second):
        inputs = keras.Input((4,))
        return keras.Model(inputs, layers.Dense(2, name=second)(layers.Dense(3, name=first)(inputs)))

    source = model("normalization", "dense_7")
    path = str(tmp_path / "legacy.h5")
    source.save_weights(path)
    renumbered = model("normalization_3", "dense_2")  # Keras's automatic numbering of unnamed layers
    renumbered.load_weights(path)
    for a, b in zip(source.get_weights(), renumbered.get_weights()):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(OSError, match="the file's layer 'normalization' is in the place of the model's 'other'"):
        model("other", "dense_7").load_weights(path)


def test_rescaling_per_channel(tmp_path):
    inputs = keras.Input((2, 2, 3))
    model = keras.Model(inputs, layers.Rescaling([1.0, 2.0, 3.0], offset=[0.0, 1.0, -1.0], name="rs")(inputs))
    x = np.random.default_rng(0).normal(size=(2, 2, 2, 3)).astype("float32")
    np.testing.assert_allclose(model.predict(x, verbose=0), x * [1.0, 2.0, 3.0] + [0.0, 1.0, -1.0], rtol=1e-6)
    assert model.count_params() == 0 and model.get_layer("rs").get_weights() == []
    path = str(tmp_path / "rs.keras")
    model.save(path)
    loaded = keras.models.load_model(path)
    assert loaded.get_layer("rs").get_config()["scale"] == [1.0, 2.0, 3.0]
    np.testing.assert_allclose(loaded.predict(x, verbose=0), model.predict(x, verbose=0))
    with pytest.raises(ValueError, match=r"rs2\): Rescaling's scale holds 2 values.*one per channel"):
        keras.Model(inputs, layers.Rescaling([1.0, 2.0], name="rs2")(inputs))


def test_decode_predictions(keras_home):
    preds = np.zeros((2, 1000), dtype="float32")
    preds[0, [3, 7]] = [0.9, 0.1]
    preds[1, 999] = 1.0
    with pytest.raises(FileNotFoundError, match="imagenet_class_index.json.*no network access"):
        applications.resnet.decode_predictions(preds)
    index = {str(i): [f"n{i:08d}", f"class_{i}"] for i in range(1000)}
    (keras_home / "models" / "imagenet_class_index.json").write_text(json.dumps(index))
    top = applications.mobilenet_v2.decode_predictions(preds, top=2)
    assert [t[:2] for t in top[0]] == [("n00000003", "class_3"), ("n00000007", "class_7")]
    assert top[0][0][2] == pytest.approx(0.9) and top[1][0][:2] == ("n00000999", "class_999")
    with pytest.raises(ValueError, match=r"\(samples, 1000\)"):
        applications.vgg16.decode_predictions(preds[:, :10])


def test_preprocess_input_modes():
    x = np.array([[[[0.0, 127.5, 255.0]]]], dtype="float32")
    np.testing.assert_allclose(applications.mobilenet_v2.preprocess_input(x.copy()), [[[[-1.0, 0.0, 1.0]]]])
    np.testing.assert_allclose(applications.xception.preprocess_input(x.copy()), [[[[-1.0, 0.0, 1.0]]]])
    caffe = applications.resnet.preprocess_input(x.copy())  # RGB to BGR, minus ImageNet's BGR means
    np.testing.assert_allclose(caffe, [[[[255.0 - 103.939, 127.5 - 116.779, 0.0 - 123.68]]]], rtol=1e-6)
    np.testing.assert_allclose(applications.vgg16.preprocess_input(x.copy()), caffe, rtol=1e-6)
    torch = applications.densenet.preprocess_input(x.copy())
    np.testing.assert_allclose(torch, [[[[(0 - 0.485) / 0.229, (0.5 - 0.456) / 0.224, (1 - 0.406) / 0.225]]]],
                               rtol=1e-6)
    np.testing.assert_array_equal(applications.efficientnet.preprocess_input(x.copy()), x)  # in the model
    # On symbolic tensors: keras.ops nodes in the model, the same values.
    inputs = keras.Input((1, 1, 3))
    model = keras.Model(inputs, applications.resnet.preprocess_input(inputs))
    np.testing.assert_allclose(model.predict(x, verbose=0), caffe, rtol=1e-6)


@pytest.mark.parametrize("name", ["ConvNeXtTiny", "MobileNetV3Small", "NASNetMobile", "InceptionResNetV2",
                                  "EfficientNetV2B0"])
def test_architectures_not_ported_say_so(name):
    with pytest.raises(NotImplementedError, match=f"keras.applications.{name} is not ported to nnfit"):
        getattr(applications, name)(weights=None)


# The layer fixes the architectures needed.
def test_multiply_broadcasts_size_one_axes_as_keras():
    inputs = keras.Input((4, 4, 3))
    scale = layers.Reshape((1, 1, 3))(layers.GlobalAveragePooling2D()(inputs))
    model = keras.Model(inputs, [layers.Multiply()([inputs, scale]), layers.Add()([scale, inputs]),
                                 layers.Subtract()([inputs, scale]), layers.Average()([inputs, scale])])
    x = np.random.default_rng(0).normal(size=(2, 4, 4, 3)).astype("float32")
    s = x.mean(axis=(1, 2), keepdims=True)
    mul, add, sub, avg = model.predict(x, verbose=0)
    np.testing.assert_allclose(mul, x * s, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(add, x + s, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(sub, x - s, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(avg, (x + s) / 2, rtol=1e-5, atol=1e-6)
    # It trains: the gradient reaches both operands (summed over the broadcast axes).
    model = keras.Model(inputs, layers.Dense(1)(layers.Flatten()(layers.Multiply()([inputs, scale]))))
    model.compile(optimizer="sgd", loss="mse")
    assert np.isfinite(model.fit(x, np.ones((2, 1)), epochs=1, verbose=0).history["loss"][0])
    with pytest.raises(ValueError, match=r"multiply.*\(4, 4, 3\) and \(1, 1, 2\).*equal or 1"):
        keras.Model(inputs, layers.Multiply()([inputs, layers.Reshape((1, 1, 2))(layers.Dense(2)(
            layers.GlobalAveragePooling2D()(inputs)))]))


def test_variance_scaling_with_arguments(tmp_path):
    init = {"class_name": "VarianceScaling", "config": {"scale": 2.0, "mode": "fan_out", "distribution": "uniform"}}
    inputs = keras.Input((4, 4, 8))
    model = keras.Model(inputs, layers.Conv2D(64, 3, kernel_initializer=init, name="conv")(inputs))
    w = model.get_layer("conv").get_weights()[0]
    limit = np.sqrt(3 * 2.0 / (3 * 3 * 64))  # fan_out: kernel area times filters
    assert np.abs(w).max() <= limit and np.abs(w).max() > 0.9 * limit
    normal = dict(init, config={"scale": 2.0, "mode": "fan_out", "distribution": "truncated_normal"})
    model = keras.Model(inputs, layers.Conv2D(256, 3, kernel_initializer=normal, name="conv")(inputs))
    w = model.get_layer("conv").get_weights()[0]
    assert w.std() == pytest.approx(np.sqrt(2.0 / (3 * 3 * 256)), rel=0.05)
    path = str(tmp_path / "vs.keras")
    model.save(path)
    config = keras.models.load_model(path).get_layer("conv").get_config()["kernel_initializer"]
    assert config["class_name"] == "VarianceScaling"
    assert {k: config["config"][k] for k in ("scale", "mode", "distribution")} == normal["config"]
    with pytest.raises(NotImplementedError, match="VarianceScaling argument \"mode\""):
        keras.Model(inputs, layers.Dense(2, kernel_initializer={"class_name": "VarianceScaling",
                                                                 "config": {"mode": "fan_sideways"}})(inputs))


def test_branching_model_lists_layers_in_keras_order():
    inputs = keras.Input((8,))
    short = layers.Dense(4, name="short")(inputs)
    long = layers.Dense(4, name="long2")(layers.Dense(4, name="long1")(inputs))
    model = keras.Model(inputs, layers.Dense(2, name="out")(layers.Add(name="add")([short, long])))
    # Keras 3.15.1: by depth from the output, ties in first-traversal order.
    assert [l.name for l in model.layers] == [inputs._history[0].name, "long1", "short", "long2", "add", "out"]
    assert [e["name"] for e in model.get_config()["layers"]][1:] == ["long1", "short", "long2", "add", "out"]


def test_chain_shaped_functional_summary_has_no_connected_to():
    lines = []
    applications.VGG16(weights=None, include_top=False, input_shape=(32, 32, 3)).summary(print_fn=lines.append)
    text = "\n".join(lines)
    assert "Connected to" not in text and "(InputLayer)" in text
    lines = []
    applications.ResNet50(weights=None, include_top=False, input_shape=(32, 32, 3)).summary(print_fn=lines.append)
    assert "Connected to" in "\n".join(lines)


def test_normalization_count_is_set_with_the_other_weights():
    model = applications.EfficientNetB0(weights=None, include_top=False, input_shape=(32, 32, 3))
    norm = model.get_layer("normalization")
    mean, var, count = norm.get_weights()
    assert mean.shape == (3,) and var.shape == (3,) and count.shape == ()
    norm.set_weights([np.full(3, 0.5, "float32"), np.full(3, 0.25, "float32"), np.array(12)])
    sub = keras.Model(model.inputs, model.get_layer("normalization").output)  # adopts the layers
    x = np.full((1, 32, 32, 3), 255.0, dtype="float32")
    np.testing.assert_allclose(sub.predict(x, verbose=0), np.full((1, 32, 32, 3), (1.0 - 0.5) / 0.5), rtol=1e-6)
    assert int(norm.get_weights()[2]) == 12
    # The whole model's weights round-trip, the integer count among them (Keras's int64).
    weights = model.get_weights()
    weights[1] = np.full_like(weights[1], 0.75)  # the normalization's variance
    model.set_weights(weights)
    again = model.get_weights()
    assert again[2].dtype == np.int64 and int(again[2]) == 12
    np.testing.assert_array_equal(again[1], np.full(3, 0.75, "float32"))
    with pytest.raises(ValueError, match=f"model '{model.name}' has {len(weights)} weights, got 1 values"):
        model.set_weights(weights[:1])
