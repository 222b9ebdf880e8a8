"""Keras <-> nnfit, both ways, with real Keras from PyPI (scripts/keras_venv.sh):

1. Models that Keras 3 and tf-keras build, train a few steps and save (.keras, .h5,
   .weights.h5; Sequential with Conv2D/BatchNormalization/pooling/Dropout, the same with
   Conv3D and 3-D pooling, one with each generation's hard_sigmoid, a
   GRU/Bidirectional/LSTM/SimpleRNN stack, Functional with merges, a shared layer and a nested model)
   predict in `nnfit predict` what Keras predicts, within 1e-5.
2. Models nnfit trains from the CLI and saves (.keras, .h5, .weights.h5; the 2-D and the
   3-D CNN) load in Keras 3 (and their .h5 in tf-keras) and predict what `nnfit predict`
   predicts, within 1e-5.

usage: keras_interop.py NNFIT_CLI WORK_DIR     (exit 0 when every check passes)
"""
import json
import os
import subprocess
import sys

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "model", "fixtures"))
from make_functional_json import build as build_functional  # noqa: E402

TOL = 1e-5
failures = []


def check(name, got, want):
    got = got if isinstance(got, list) else [got]
    want = want if isinstance(want, list) else [want]
    worst = max(float(np.abs(np.asarray(g) - np.asarray(w)).max()) for g, w in zip(got, want))
    ok = len(got) == len(want) and worst <= TOL
    print(f"{'ok  ' if ok else 'FAIL'} {name}: max |difference| {worst:.3g}")
    if not ok:
        failures.append(name)


def nnfit_predict(cli, model, xs, work):
    args = [cli, "predict", model]
    for i, x in enumerate(xs):
        path = os.path.join(work, f"in{i}.npy")
        np.save(path, x)
        args += ["--input", path]
    out = os.path.join(work, "out.npz")
    subprocess.run(args + ["--output", out], check=True)
    with np.load(out) as z:
        return [z[k] for k in z.files]


def sequential_cnn(k):
    layers = k.layers
    return k.Sequential([
        k.Input(shape=(12, 12, 2)),
        layers.Conv2D(4, 3, padding="same", activation="relu", name="conv"),
        layers.BatchNormalization(name="bn"),
        layers.MaxPooling2D(name="pool"),
        layers.Conv2D(6, 3, name="conv_1"),
        layers.AveragePooling2D(2, name="avg"),
        layers.Flatten(name="flat"),
        layers.Dropout(0.25, name="drop"),
        layers.Dense(5, activation="softmax", name="out"),
    ], name="cnn")


def volume_cnn(k):
    layers = k.layers
    return k.Sequential([
        k.Input(shape=(6, 7, 6, 2)),
        layers.Conv3D(4, 3, padding="same", activation="relu", name="conv3d"),
        layers.MaxPooling3D(name="pool3d"),
        layers.Conv3D(3, (2, 1, 2), dilation_rate=(1, 1, 2), name="conv3d_1"),
        layers.AveragePooling3D((2, 2, 1), padding="same", name="avg3d"),
        layers.Flatten(name="flat"),
        layers.Dense(5, activation="softmax", name="out"),
    ], name="volume_cnn")


def hard_sigmoid_mlp(k):
    # Keras 2's hard_sigmoid is clip(0.2 x + 0.5, 0, 1), Keras 3's relu6(x + 3) / 6: each
    # file must predict as the Keras that wrote it.
    return k.Sequential([
        k.Input(shape=(5,)),
        k.layers.Dense(4, activation="hard_sigmoid", name="hs"),
        k.layers.Dense(3, name="lin"),
        k.layers.Activation("hard_sigmoid", name="act"),
    ], name="hard_sigmoid_mlp")


def recurrent_stack(k):
    # tf-keras writes the cells' variables as "gru/gru_cell/kernel:0", Keras 3 under
    # layers/<rnn>/cell/vars.
    return k.Sequential([
        k.Input(shape=(7, 3)),
        k.layers.GRU(5, return_sequences=True, name="gru"),
        k.layers.Bidirectional(k.layers.LSTM(4, return_sequences=True), merge_mode="sum", name="bi"),
        k.layers.LSTM(4, go_backwards=True, return_sequences=True, name="lstm"),
        k.layers.TimeDistributed(k.layers.Dense(3, activation="relu", name="per_step"), name="td"),
        k.layers.SimpleRNN(3, name="rnn"),
        k.layers.Dense(2, name="out"),
    ], name="recurrent_stack")


def keras_to_nnfit(cli, work):
    import keras
    import tf_keras
    rng = np.random.default_rng(3)
    for tag, k in (("keras3", keras), ("tf_keras", tf_keras)):
        k.utils.set_random_seed(2)
        models = [sequential_cnn(k), volume_cnn(k), hard_sigmoid_mlp(k), recurrent_stack(k)] + list(build_functional(k))
        for m in models:
            xs = [rng.standard_normal((6,) + tuple(t.shape[1:])).astype(np.float32) for t in m.inputs]
            # A few training steps, so batch statistics and the optimizer state are not the defaults.
            ys = [np.zeros((6,) + tuple(o.shape[1:]), np.float32) for o in m.outputs]
            m.compile(optimizer="adam", loss="mse")
            m.fit(xs, ys, epochs=2, batch_size=3, verbose=0)
            want = m.predict(xs, verbose=0)
            exts = [".keras", ".h5"] if tag == "keras3" else [".h5"]
            for ext in exts:
                path = os.path.join(work, f"{tag}_{m.name}{ext}")
                m.save(path)
                check(f"{tag} {m.name}{ext} -> nnfit predict", nnfit_predict(cli, path, xs, work), want)


def nnfit_to_keras(cli, work):
    rng = np.random.default_rng(5)
    nnfit_trains_keras_loads(cli, work, sequential_cnn, rng.random((64, 8, 8, 1), dtype=np.float32), rng)
    nnfit_trains_keras_loads(cli, work, volume_cnn, rng.random((32, 5, 6, 6, 1), dtype=np.float32), rng)


def nnfit_trains_keras_loads(cli, work, builder, x, rng):
    """nnfit trains `builder`'s Keras 3 architecture (its input shape set to x's, 3 classes)
    and saves it; Keras 3 and tf-keras load the files and predict what nnfit predicts."""
    import keras
    import tf_keras
    y = rng.integers(0, 3, x.shape[0]).astype(np.int64)
    np.save(os.path.join(work, "x.npy"), x)
    np.save(os.path.join(work, "y.npy"), y)
    arch = builder(keras)
    model = json.loads(arch.to_json())
    model["config"]["layers"][0]["config"]["batch_shape"] = [None] + list(x.shape[1:])
    model["config"]["layers"][-1]["config"]["units"] = 3
    for layer in model["config"]["layers"]:
        layer.pop("build_config", None)
    model.pop("build_config", None)
    cfg = {
        "model": model,
        "data": {"train": {"source": {"format": "npy", "x": "x.npy", "y": "y.npy"}, "pipeline": [{"batch": 16}]}},
        "compile": {"optimizer": "adam", "loss": "sparse_categorical_crossentropy", "metrics": ["accuracy"]},
        "fit": {"epochs": 2, "seed": 1},
    }
    with open(os.path.join(work, "train.json"), "w") as f:
        json.dump(cfg, f)
    saved = [os.path.join(work, f"nnfit_{arch.name}" + ext) for ext in (".keras", ".h5")]
    for path in saved:
        subprocess.run([cli, "train", os.path.join(work, "train.json"), "--quiet", "--save", path], check=True)
        got = nnfit_predict(cli, path, [x], work)
        check(f"nnfit {os.path.basename(path)} -> keras 3", keras.models.load_model(path).predict(x, verbose=0), got)
        if path.endswith(".h5"):
            check(f"nnfit {os.path.basename(path)} -> tf-keras", tf_keras.models.load_model(path).predict(x, verbose=0), got)
    # Weights only, into the architecture Keras rebuilds from nnfit's .keras file.
    weights = os.path.join(work, f"nnfit_{arch.name}.weights.h5")
    subprocess.run([cli, "train", os.path.join(work, "train.json"), "--quiet", "--save", weights], check=True)
    m = keras.models.load_model(saved[0])
    m.load_weights(weights)
    # The same weights saved as a full model: what nnfit predicts with them.
    subprocess.run([cli, "train", os.path.join(work, "train.json"), "--quiet", "--save", saved[0]], check=True)
    check(f"nnfit {arch.name}.weights.h5 -> keras 3 load_weights", m.predict(x, verbose=0),
          nnfit_predict(cli, saved[0], [x], work))


def attention_models(cli, work):
    """Keras 3 Functional models whose calls take keyword arguments, as Keras users write
    them: MultiHeadAttention with an explicit boolean attention_mask input, key=,
    use_causal_mask= and return_attention_scores=True; a Transformer encoder block (attention, residual Add,
    LayerNormalization, feed-forward); recurrent layers started from initial_state=[h, c]
    and initial_state=h. Trained a few steps by Keras, saved as .keras and .h5, predicted
    by nnfit (the mask fed as 0/1 floats)."""
    import keras
    layers = keras.layers
    keras.utils.set_random_seed(4)
    rng = np.random.default_rng(4)
    q = keras.Input((6, 8), name="q")
    v = keras.Input((7, 8), name="v")
    m = keras.Input((6, 7), dtype="bool", name="m")
    a = layers.MultiHeadAttention(2, 4, name="cross")(q, v, key=v, attention_mask=m)
    h = layers.MultiHeadAttention(2, 4, name="causal")(a, a, use_causal_mask=True)
    masked = keras.Model([q, v, m], h, name="masked_attention")
    t = keras.Input((6, 8), name="tokens")
    att = layers.MultiHeadAttention(2, 4, dropout=0.1, name="mha")(t, t)
    x = layers.LayerNormalization(name="ln1")(layers.Add(name="res1")([t, att]))
    ff = layers.Dense(8, name="ff2")(layers.Dense(16, activation="relu", name="ff1")(x))
    x = layers.LayerNormalization(name="ln2")(layers.Add(name="res2")([x, ff]))
    out = layers.Dense(3, name="out")(layers.GlobalAveragePooling1D(name="pool")(x))
    encoder = keras.Model(t, out, name="encoder_block")
    # A sequence-to-sequence pair: the encoder's final states start the decoder
    # (initial_state=[h, c]); a GRU started from a state input (initial_state=h).
    src = keras.Input((6, 3), name="src")
    tgt = keras.Input((5, 2), name="tgt")
    s0 = keras.Input((4,), name="s0")
    _, h, c = layers.LSTM(4, return_state=True, name="enc")(src)
    dec = layers.LSTM(4, return_sequences=True, name="dec")(tgt, initial_state=[h, c])
    gru = layers.GRU(4, name="gru")(tgt, initial_state=s0)
    seq2seq = keras.Model([src, tgt, s0], [layers.Dense(2, name="proj")(dec), gru], name="seq2seq")
    # return_attention_scores=True: the attention weights as a second output.
    s_in = keras.Input((6, 8), name="s_in")
    s_mask = keras.Input((6, 6), dtype="bool", name="s_mask")
    s_out, s_scores = layers.MultiHeadAttention(2, 4, name="scored")(s_in, s_in, attention_mask=s_mask,
                                                                      return_attention_scores=True)
    scored = keras.Model([s_in, s_mask], [s_out, s_scores], name="attention_scores")
    for model in (masked, encoder, seq2seq, scored):
        xs = []
        for inp in model.inputs:
            if inp.dtype == "bool":
                mask = rng.random((6,) + tuple(inp.shape[1:])) < 0.7
                mask[..., 0] = True  # every query keeps a key
                xs.append(mask)
            else:
                xs.append(rng.standard_normal((6,) + tuple(inp.shape[1:])).astype(np.float32))
        ys = [np.zeros((6,) + tuple(o.shape[1:]), np.float32) for o in model.outputs]
        if model is not scored:  # Keras's own fit refuses a loss on the masked scores output
            model.compile(optimizer="adam", loss="mse")
            model.fit(xs, ys, epochs=2, batch_size=3, verbose=0)
        want = model.predict(xs, verbose=0)
        fed = [x.astype(np.float32) for x in xs]
        for ext in (".keras", ".h5"):
            path = os.path.join(work, f"{model.name}{ext}")
            model.save(path)
            check(f"keras3 {model.name}{ext} -> nnfit predict", nnfit_predict(cli, path, fed, work), want)


def main(cli, work):
    os.makedirs(work, exist_ok=True)
    keras_to_nnfit(cli, work)
    nnfit_to_keras(cli, work)
    attention_models(cli, work)
    if failures:
        print(f"{len(failures)} interop check(s) failed: {', '.join(failures)}")
        return 1
    print("every interop check passed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
