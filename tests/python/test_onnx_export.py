"""model.export and `nnfit export` (issue 36): nnfit's ONNX files load in onnxruntime,
pass ONNX's checker, and compute what nnfit's predict computes, within 1e-5 of the
outputs' scale, for an MLP, the Fashion-MNIST convnet of examples/, BatchNormalization with
Concatenate over two inputs, Embedding with LSTM / GRU / SimpleRNN / Bidirectional on
sequences of any length, a None-length Conv1D model run at two lengths, and a wide set of
the other layers. Layers without an ONNX form are refused by name and write nothing.

onnxruntime runs in its own venv (scripts/onnx_venv.sh; ctest passes its Python in
NNFIT_ONNX_PYTHON, and the nnfit CLI in NNFIT_CLI): tests/python/onnx_check/ort_check.py.
"""
import json
import os
import subprocess
import warnings

import numpy as np
import pytest

from nnfit import keras
from nnfit.keras import layers

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
ORT_PYTHON = os.environ.get("NNFIT_ONNX_PYTHON")
CLI = os.environ.get("NNFIT_CLI")
TOLERANCE = 1e-5  # of the largest output magnitude

needs_ort = pytest.mark.skipif(not ORT_PYTHON, reason="NNFIT_ONNX_PYTHON (scripts/onnx_venv.sh's Python) is not set")


def randomize(model, seed):
    """Weights far from their initial values (moving variances positive), so every term of
    every layer shows in the outputs."""
    rng = np.random.default_rng(seed)
    values = []
    for w in model.weights:
        shape = tuple(w.shape)
        if "variance" in w.path:
            values.append(rng.uniform(0.5, 1.5, shape))
        elif w.path.endswith("count"):
            values.append(np.asarray(w.numpy()))
        else:
            values.append(rng.normal(0.0, 0.4, shape))
    model.set_weights([np.asarray(v, dtype=np.asarray(w.numpy()).dtype) for v, w in zip(values, model.weights)])


def mlp():
    return keras.Sequential([keras.Input(shape=(20,)), layers.Dense(32, activation="relu"), layers.Dropout(0.5),
                             layers.Dense(10, activation="softmax")])


def fashion_convnet():
    with open(os.path.join(ROOT, "examples", "fashion_mnist_cnn.json")) as f:
        return keras.models.model_from_json(json.dumps(json.load(f)["model"]))


def batchnorm_concat():
    image = keras.Input(shape=(12, 12, 3), name="image")
    meta = keras.Input(shape=(5,), name="meta")
    x = layers.Conv2D(6, 3, padding="same", use_bias=False)(image)
    x = layers.BatchNormalization()(x)
    x = layers.Activation("relu")(x)
    x = layers.MaxPooling2D()(x)
    x = layers.Conv2D(8, 3)(x)
    x = layers.BatchNormalization(center=False)(x)
    x = layers.GlobalAveragePooling2D()(x)
    m = layers.Dense(8, activation="tanh")(meta)
    m = layers.BatchNormalization(scale=False)(m)
    h = layers.Concatenate()([x, m])
    return keras.Model([image, meta], [layers.Dense(3, activation="softmax", name="label")(h),
                                       layers.Dense(1, name="score")(h)])


def text_rnn():
    tokens = keras.Input(shape=(None,), dtype="int32", name="tokens")
    e = layers.Embedding(50, 8)(tokens)
    a = layers.LSTM(6, return_sequences=True)(e)
    a = layers.GRU(5)(a)
    b = layers.Bidirectional(layers.LSTM(4))(e)
    c = layers.Bidirectional(layers.GRU(3, return_sequences=True), merge_mode="sum")(e)
    c = layers.SimpleRNN(4, activation="relu")(c)
    d = layers.GRU(4, reset_after=False, go_backwards=True)(e)
    h = layers.Concatenate()([a, b, c, d])
    return keras.Model(tokens, layers.Dense(2, activation="sigmoid")(h))


def any_length_conv1d():
    x = keras.Input(shape=(None, 4))
    y = layers.Conv1D(6, 3, padding="causal", dilation_rate=2, activation="gelu")(x)
    y = layers.Conv1D(5, 3, strides=2, padding="same", activation="silu")(y)
    y = layers.Dense(4, activation="tanh")(y)  # on every step
    y = layers.LayerNormalization()(y)
    y = layers.GlobalMaxPooling1D()(y)
    return keras.Model(x, layers.Dense(3)(y))


def image_layers():
    x = keras.Input(shape=(9, 9, 4))
    a = layers.DepthwiseConv2D(3, depth_multiplier=2, padding="same", activation="elu")(x)
    a = layers.SeparableConv2D(6, 3, strides=2)(a)
    a = layers.Conv2DTranspose(5, 3, strides=2, padding="same", activation="leaky_relu")(a)
    a = layers.Conv2DTranspose(4, 2, strides=3, padding="valid")(a)
    a = layers.AveragePooling2D(3, strides=2, padding="same")(a)
    a = layers.ZeroPadding2D(((1, 0), (2, 1)))(a)
    a = layers.Cropping2D(((0, 1), (1, 1)))(a)
    a = layers.UpSampling2D(2, interpolation="bilinear")(a)
    a = layers.Conv2D(4, 3, groups=2, activation="selu")(a)
    b = layers.Conv2D(4, 1, activation="softplus")(x)
    b = layers.UpSampling2D(1)(layers.MaxPooling2D(3, strides=1, padding="same")(b))
    b = layers.Cropping2D(((3, 2), (3, 2)))(b)
    m = layers.Add()([layers.Cropping2D(((0, a.shape[1] - 4), (0, a.shape[2] - 4)))(a), b])
    m = layers.Multiply()([m, layers.Activation("hard_sigmoid")(m)])
    m = layers.Subtract()([m, layers.ReLU(max_value=2.0, negative_slope=0.1)(m)])
    m = layers.Average()([m, layers.LeakyReLU(0.3)(m), layers.ELU(0.7)(m)])
    m = layers.Maximum()([m, layers.Activation("mish")(m)])
    m = layers.Minimum()([m, layers.Activation("relu6")(m)])
    m = layers.PReLU()(m)
    m = layers.Permute((2, 1, 3))(m)
    m = layers.Reshape((8, 8))(m)
    m = layers.Softmax()(m)
    m = layers.Flatten()(m)
    m = layers.RepeatVector(2)(layers.Dense(6, activation="softsign")(m))
    m = layers.UpSampling1D(2)(m)
    m = layers.Conv1DTranspose(3, 3, strides=2, padding="same")(m)
    m = layers.ZeroPadding1D(1)(m)
    m = layers.Cropping1D((1, 2))(m)
    m = layers.AveragePooling1D(2)(m)
    m = layers.GlobalAveragePooling1D()(m)
    return keras.Model(x, layers.Dense(4, activation="log_softmax")(m))


def volumes_and_preprocessing():
    x = keras.Input(shape=(6, 6, 6, 2))
    y = layers.Rescaling([0.5, 2.0], offset=[0.1, -0.2])(x)
    y = layers.Normalization(axis=-1, mean=[0.2, -0.1], variance=[2.0, 0.5])(y)
    y = layers.Conv3D(3, 3, padding="same", activation="exponential")(y)
    y = layers.MaxPooling3D(2)(y)
    y = layers.ZeroPadding3D(1)(y)
    y = layers.UpSampling3D(2)(y)
    y = layers.GlobalAveragePooling3D(keepdims=True)(y)
    y = layers.Flatten()(y)
    inner = keras.Sequential([keras.Input(shape=(3,)), layers.Dense(4, activation="swish"),
                              layers.GaussianNoise(0.3), layers.Dense(2)], name="head")
    return keras.Model(x, inner(y))


def channels_first():
    x = keras.Input(shape=(3, 10, 10))  # channels, height, width
    y = layers.ZeroPadding2D(1, data_format="channels_first")(x)
    y = layers.UpSampling2D(2, data_format="channels_first")(y)
    y = layers.BatchNormalization(axis=1)(y)
    y = layers.GlobalAveragePooling2D(data_format="channels_first")(y)
    return keras.Model(x, layers.Dense(2)(y))


def edge_cases():
    a = keras.Input(shape=(7, 7, 2), name="a")
    ids = keras.Input(shape=(4,), dtype="int32", name="ids")
    shared = layers.Conv2D(3, 3, dilation_rate=2, padding="same")  # called twice: one set of weights
    x = layers.GlobalMaxPooling2D(keepdims=True)(layers.Add()([shared(a), shared(layers.Activation("relu")(a))]))
    t = layers.Conv2DTranspose(2, 3, strides=2, padding="same", output_padding=1)(a)
    seq = layers.Reshape((7, 14))(a)
    out, h, c = layers.LSTM(3, return_state=True)(seq)
    return keras.Model([a, ids], [layers.Flatten()(x), t, out, c, layers.Dense(2)(ids), ids])


# name: (model maker, input arrays per set; each set one batch shape)
def _cases():
    rng = np.random.default_rng(7)
    f32 = lambda *s: rng.normal(size=s).astype("float32")  # noqa: E731
    return {
        "mlp": (mlp, [[f32(5, 20)], [f32(1, 20)]]),
        "fashion_convnet": (fashion_convnet, [[rng.uniform(size=(4, 28, 28, 1)).astype("float32")]]),
        "batchnorm_concat": (batchnorm_concat, [[f32(3, 12, 12, 3), f32(3, 5)]]),
        "text_rnn": (text_rnn, [[rng.integers(0, 50, size=(4, 7)).astype("int32")],
                                [rng.integers(0, 50, size=(2, 13)).astype("int32")]]),
        "any_length_conv1d": (any_length_conv1d, [[f32(3, 11, 4)], [f32(2, 30, 4)]]),
        "image_layers": (image_layers, [[f32(2, 9, 9, 4)]]),
        "volumes_and_preprocessing": (volumes_and_preprocessing, [[f32(2, 6, 6, 6, 2)]]),
        "channels_first": (channels_first, [[f32(3, 3, 10, 10)]]),
        "edge_cases": (edge_cases, [[f32(2, 7, 7, 2), rng.integers(-5, 5, size=(2, 4)).astype("int32")]]),
    }


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """Every case exported and predicted by nnfit, then checked by onnxruntime in one run."""
    if not ORT_PYTHON:
        pytest.skip("NNFIT_ONNX_PYTHON (scripts/onnx_venv.sh's Python) is not set")
    folder = tmp_path_factory.mktemp("onnx")
    for seed, (name, (make, sets)) in enumerate(_cases().items()):
        keras.backend.clear_session()
        keras.utils.set_random_seed(seed)
        model = make()
        randomize(model, seed)
        arrays = {}
        for k, xs in enumerate(sets):
            ys = model.predict(xs if len(xs) > 1 else xs[0], verbose=0)
            ys = ys if isinstance(ys, list) else [ys]
            arrays.update({f"s{k}_x{i}": x for i, x in enumerate(xs)})
            arrays.update({f"s{k}_y{j}": y for j, y in enumerate(ys)})
        np.savez(folder / f"{name}.npz", **arrays)
        model.export(str(folder / f"{name}.onnx"), format="onnx", verbose=False)
    out = subprocess.run([ORT_PYTHON, os.path.join(HERE, "onnx_check", "ort_check.py"), str(folder)], capture_output=True,
                         text=True, env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"}, timeout=300)
    assert out.returncode == 0, out.stderr
    results = {r["case"]: r for r in map(json.loads, out.stdout.splitlines())}
    for name, r in results.items():  # the measured agreement, shown with pytest -s
        worst = max((o["max_abs_diff"] / max(o["max_abs"], 1e-3) for s in r.get("sets", []) for o in s
                     if o["max_abs_diff"] is not None), default=None)
        print(f"onnx {name}: {len(r.get('ops', []))} nodes, largest difference {worst:.2e} of the output scale"
              if worst is not None else f"onnx {name}: {r.get('error')}")
    return results


@needs_ort
@pytest.mark.parametrize("name", list(_cases()))
def test_onnxruntime_computes_what_nnfit_predicts(exported, name):
    r = exported[name]
    assert "error" not in r, r.get("error")
    assert r["checker"] == "ok"
    assert r["ir_version"] == 8 and r["opset"] == [["", 17]]
    for outputs in r["sets"]:
        for o in outputs:
            assert o["shape"] == o["want_shape"]
            assert o["max_abs_diff"] <= TOLERANCE * max(o["max_abs"], 1e-3), (name, o)


@needs_ort
def test_names_and_symbolic_dimensions(exported):
    # Inputs keep the Keras Inputs' names and dtypes; the batch is "batch", other None
    # dimensions "dim_<input>_<axis>"; outputs are named as Keras's TensorFlow export names them.
    assert exported["batchnorm_concat"]["inputs"] == [["image", ["batch", 12, 12, 3], "float32"],
                                                      ["meta", ["batch", 5], "float32"]]
    assert exported["batchnorm_concat"]["outputs"] == [["Identity:0", ["batch", 3]], ["Identity_1:0", ["batch", 1]]]
    assert exported["text_rnn"]["inputs"] == [["tokens", ["batch", "dim_0_1"], "int32"]]
    assert exported["any_length_conv1d"]["inputs"][0][1] == ["batch", "dim_0_1", 4]


@needs_ort
def test_convolutions_stay_channels_first_between_layers(exported):
    # Note [Layouts in the exported graph]: one transpose into the convolutions, one out.
    shared = [n for n in exported["edge_cases"]["initializers"] if n.startswith("conv2d/")]
    assert shared == ["conv2d/kernel", "conv2d/bias"]  # a layer called twice: its weights once
    ops = exported["fashion_convnet"]["ops"]
    assert ops.count("Transpose") == 2 and ops[0] == "Transpose", ops
    assert ops[ops.index("Flatten") - 1] == "Transpose", ops


def test_tf_saved_model_writes_onnx_and_says_where(tmp_path):
    model = mlp()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model.export(str(tmp_path / "served"), verbose=False)  # Keras's default format
    assert (tmp_path / "served.onnx").read_bytes()[:2] == b"\x08\x08"  # ModelProto.ir_version = 8
    assert not (tmp_path / "served").exists()
    message = " ".join(str(w.message) for w in caught)
    assert "does not write TensorFlow SavedModels" in message and str(tmp_path / "served.onnx") in message


def test_export_prints_as_keras_and_refuses_other_formats(tmp_path, capsys):
    model = mlp()
    model.export(tmp_path / "m.onnx", format="onnx")
    assert capsys.readouterr().out == f"Saved artifact at '{tmp_path / 'm.onnx'}'.\n"
    with pytest.raises(ValueError, match="Unrecognized format=keras"):
        model.export(tmp_path / "m", format="keras")
    with pytest.raises(NotImplementedError, match="openvino"):
        model.export(tmp_path / "m", format="openvino")
    with pytest.raises(NotImplementedError, match="jax2tf_kwargs"):
        model.export(tmp_path / "m.onnx", format="onnx", jax2tf_kwargs={})


def test_unsupported_layers_are_refused_by_name(tmp_path):
    x = keras.Input(shape=(6, 8))
    y = layers.MultiHeadAttention(2, 4)(x, x)
    model = keras.Model(x, layers.Dense(1)(y))
    with pytest.raises(NotImplementedError, match=r"layer 'multi_head_attention' \(MultiHeadAttention\)"):
        model.export(tmp_path / "m.onnx", format="onnx", verbose=False)
    assert not (tmp_path / "m.onnx").exists()
    tokens = keras.Input(shape=(None,), dtype="int32")
    masked = keras.Model(tokens, layers.LSTM(3)(layers.Embedding(10, 4, mask_zero=True)(tokens)))
    with pytest.raises(NotImplementedError, match=r"layer 'lstm' \(LSTM\).*mask"):
        masked.export(tmp_path / "masked.onnx", format="onnx", verbose=False)
    assert not (tmp_path / "masked.onnx").exists()


@needs_ort
def test_input_signature_and_opset(tmp_path):
    model = batchnorm_concat()
    randomize(model, 3)
    spec = [[keras.InputSpec(shape=(2, 12, 12, 3), name="pixels"), keras.InputSpec(shape=(None, 5))]]
    model.export(tmp_path / "sig.onnx", format="onnx", input_signature=spec, opset_version=18, verbose=False)
    rng = np.random.default_rng(0)
    xs = [rng.normal(size=(2, 12, 12, 3)).astype("float32"), rng.normal(size=(2, 5)).astype("float32")]
    np.savez(tmp_path / "sig.npz", **{"s0_x0": xs[0], "s0_x1": xs[1]},
             **{f"s0_y{j}": y for j, y in enumerate(model.predict(xs, verbose=0))})
    out = subprocess.run([ORT_PYTHON, os.path.join(HERE, "onnx_check", "ort_check.py"), str(tmp_path)], capture_output=True,
                         text=True, env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"}, timeout=300)
    r = json.loads(out.stdout)
    assert r["checker"] == "ok" and r["opset"] == [["", 18]]
    assert r["inputs"] == [["pixels", [2, 12, 12, 3], "float32"], ["meta", ["batch", 5], "float32"]]
    for o in r["sets"][0]:
        assert o["max_abs_diff"] <= TOLERANCE * max(o["max_abs"], 1e-3)
    with pytest.raises(ValueError, match="dimension 1 is 13 but input 'image' has 12"):
        model.export(tmp_path / "bad.onnx", format="onnx", input_signature=[[keras.InputSpec(shape=(None, 13, 12, 3)),
                                                                              keras.InputSpec(shape=(None, 5))]])


@pytest.mark.skipif(not CLI, reason="NNFIT_CLI (the nnfit binary) is not set")
def test_cli_export_writes_the_same_graph(tmp_path):
    model = text_rnn()
    randomize(model, 5)
    model.save(tmp_path / "m.keras")
    model.export(tmp_path / "py.onnx", format="onnx", verbose=False)
    out = subprocess.run([CLI, "export", str(tmp_path / "m.keras"), str(tmp_path / "cli.onnx"), "--json"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    summary = json.loads(out.stdout)
    assert summary["inputs"] == ["tokens"] and summary["outputs"] == ["Identity:0"] and not summary["initial_weights"]
    assert (tmp_path / "cli.onnx").read_bytes() == (tmp_path / "py.onnx").read_bytes()
    bad = subprocess.run([CLI, "export", str(tmp_path / "m.keras"), str(tmp_path / "x.onnx"), "--opset", "12"],
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode != 0 and "opset" in bad.stderr
