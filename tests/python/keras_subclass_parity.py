"""Keras 3's subclassing and nesting (issue 35), run under real Keras (from PyPI, in the Keras
venv) and under `from nnfit import keras` with only the import line changed:
1. a keras.layers.Layer subclass (build with add_weight, a sublayer, a regularizer, a
   non-trainable weight, call with keras.ops and training passed to Dropout, get_config and
   from_config) in a Functional model, saved and loaded with register_keras_serializable
   and with custom_objects;
2. keras.io's Transformer text classifier: TokenAndPositionEmbedding (an Embedding called
   on ops.arange's positions) and a Transformer block (MultiHeadAttention, a Sequential
   feed-forward network inside it, LayerNormalization, Dropout) as Layer subclasses;
3. a subclassed keras.Model (__init__ making layers, call(inputs, training)) compiled,
   fitted, evaluated and predicted, and built with build(input_shape);
4. models as layers: an augmentation Sequential inside a Functional model, and transfer
   learning with a pre-trained base called as base(x, training=False), frozen then
   fine-tuned;
5. files both ways: a fitted model with a subclassed layer (holding a Sequential) saved by
   one framework loads in the other with custom_objects and predicts the same (within 1e-4).
Compared, per case: History keys, the summary's rows (layer name and type, parameter count;
for a subclassed model Keras shows output shapes only from the last eager call, so shapes
are not compared) and its totals, weight and layer counts, and the final accuracy within
0.05 absolute (both frameworks reach 0.85-1.0 on these separable problems; different
initial weights and shuffles move it by a few hundredths).

usage: keras_subclass_parity.py KERAS_PYTHON [NNFIT_PYTHON]
"""
import sys
import textwrap

import parity_runs

SCRIPT = textwrap.dedent("""
    import json, os, tempfile
    import numpy as np
    IMPORT_LINE
    from keras import layers, ops

    out = {}
    rng = np.random.default_rng(0)
    tmp = tempfile.mkdtemp()
    keras.utils.set_random_seed(1)

    def rows(model):
        # (layer name without Keras's _N suffix, type) and parameter count per row, and the
        # trainable/non-trainable totals (Total params counts the optimizer's in Keras once fitted).
        import re
        lines = []
        model.summary(print_fn=lambda line, *a, **k: lines.append(line))
        got = []
        for line in "\\n".join(lines).split("\\n"):
            line = line.replace("\\x1b[1m", "").replace("\\x1b[0m", "")
            if line.startswith("│"):
                cells = [c.strip() for c in line.strip("│").split("│")]
                if cells[0].startswith("(") and not cells[2] and got:  # a long name wrapped (Keras)
                    got[-1][0] += " " + cells[0]
                elif cells[0]:
                    got.append([cells[0], cells[2]])
            elif "params:" in line and "Optimizer" not in line and "Total" not in line:
                got.append([line.split(":")[0].strip(), line.split(":")[1].split("(")[0].strip()])
        return [[re.sub(r"_\\d+ \\(", " (", name), n] for name, n in got]

    def run(model, x, y, xt, yt, epochs, batch_size=32):
        h = model.fit(x, y, epochs=epochs, batch_size=batch_size, verbose=0, validation_split=0.1)
        loss, acc = model.evaluate(xt, yt, verbose=0)
        return {"keys": sorted(h.history), "epochs": len(h.epoch), "accuracy": float(acc)}

    # 1. A Layer subclass with add_weight, in a Functional model; files both ways.
    @keras.saving.register_keras_serializable(package="parity")
    class Affine(layers.Layer):
        def __init__(self, units=16, rate=0.1, **kwargs):
            super().__init__(**kwargs)
            self.units, self.rate = units, rate
            self.dropout = layers.Dropout(rate)
            self.proj = layers.Dense(units, activation="relu")

        def build(self, input_shape):
            self.w = self.add_weight(shape=(input_shape[-1], self.units), initializer="glorot_uniform",
                                     regularizer=keras.regularizers.L2(1e-4), name="w")
            self.b = self.add_weight(shape=(self.units,), initializer="zeros", name="b")
            self.gain = self.add_weight(shape=(self.units,), initializer="ones", trainable=False, name="gain")

        def call(self, inputs, training=None):
            h = ops.tanh(ops.matmul(inputs, self.w) + self.b) * self.gain
            if self.rate > 0:  # Python control flow on a static value
                h = self.dropout(h, training=training)
            return self.proj(h)

        def get_config(self):
            return {**super().get_config(), "units": self.units, "rate": self.rate}

    x = rng.normal(size=(1200, 10)).astype("float32")
    y = (x[:, 0] + x[:, 1] * x[:, 2] > 0).astype("int64")
    inp = keras.Input((10,))
    affine = Affine(16, name="affine")
    model = keras.Model(inp, layers.Dense(2, activation="softmax")(affine(inp)))
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    case = run(model, x[:1000], y[:1000], x[1000:], y[1000:], epochs=8)
    case["summary"] = rows(model)
    case["weights"] = [[w.path.split("/")[-1], list(w.shape), bool(w.trainable)] for w in affine.weights][:3]
    case["config"] = {k: v for k, v in affine.get_config().items() if k in ("name", "units", "rate", "trainable")}
    again = Affine.from_config(affine.get_config())
    case["from_config"] = [again.units, again.rate]
    path = os.path.join(tmp, "affine.keras")
    model.save(path)
    before = model.predict(x[:50], verbose=0)
    loaded = keras.models.load_model(path)
    scoped = keras.models.load_model(path, custom_objects={"Affine": Affine})
    case["reloaded_equal"] = bool(np.abs(loaded.predict(x[:50], verbose=0) - before).max() < 1e-5 and
                                  np.abs(scoped.predict(x[:50], verbose=0) - before).max() < 1e-5)
    case["reloaded_layer"] = [type(loaded.layers[1]).__name__, loaded.layers[1].name]
    out["layer_subclass"] = case

    # 2. A Transformer block as a Layer subclass (keras.io's text classifier, fixed length).
    class TransformerBlock(layers.Layer):
        def __init__(self, embed_dim, num_heads, ff_dim, rate=0.1, **kwargs):
            super().__init__(**kwargs)
            self.att = layers.MultiHeadAttention(num_heads=num_heads, key_dim=embed_dim)
            self.ffn = keras.Sequential([layers.Dense(ff_dim, activation="relu"), layers.Dense(embed_dim)])
            self.layernorm1 = layers.LayerNormalization(epsilon=1e-6)
            self.layernorm2 = layers.LayerNormalization(epsilon=1e-6)
            self.dropout1 = layers.Dropout(rate)
            self.dropout2 = layers.Dropout(rate)

        def call(self, inputs, training=False):
            attn_output = self.att(inputs, inputs)
            attn_output = self.dropout1(attn_output, training=training)
            out1 = self.layernorm1(inputs + attn_output)
            ffn_output = self.ffn(out1)
            ffn_output = self.dropout2(ffn_output, training=training)
            return self.layernorm2(out1 + ffn_output)

    class TokenAndPositionEmbedding(layers.Layer):  # keras.io's, unchanged
        def __init__(self, maxlen, vocab_size, embed_dim):
            super().__init__()
            self.token_emb = layers.Embedding(input_dim=vocab_size, output_dim=embed_dim)
            self.pos_emb = layers.Embedding(input_dim=maxlen, output_dim=embed_dim)

        def call(self, x):
            maxlen = ops.shape(x)[-1]
            positions = ops.arange(start=0, stop=maxlen, step=1)
            positions = self.pos_emb(positions)
            x = self.token_emb(x)
            return x + positions

    vocab, maxlen = 50, 12
    ids = rng.integers(1, vocab, size=(1200, maxlen)).astype("int32")
    labels = ((ids == 7).any(axis=1)).astype("int64")
    inp = keras.Input(shape=(maxlen,), dtype="int32")
    h = TokenAndPositionEmbedding(maxlen, vocab, 16)(inp)
    h = TransformerBlock(16, 2, 32)(h)
    h = layers.GlobalAveragePooling1D()(h)
    model = keras.Model(inp, layers.Dense(2, activation="softmax")(h))
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    case = run(model, ids[:1000], labels[:1000], ids[1000:], labels[1000:], epochs=6)
    case["summary"] = rows(model)
    out["transformer_block"] = case

    # 3. A subclassed Model.
    class Classifier(keras.Model):
        def __init__(self, classes=3, **kwargs):
            super().__init__(**kwargs)
            self.hidden = layers.Dense(32, activation="relu")
            self.norm = layers.BatchNormalization()
            self.drop = layers.Dropout(0.2)
            self.head = layers.Dense(classes, activation="softmax")

        def call(self, inputs, training=False):
            h = self.norm(self.hidden(inputs), training=training)
            return self.head(self.drop(h, training=training))

    centers = rng.normal(scale=3.0, size=(3, 6))
    labels = rng.integers(0, 3, size=1200)
    x = (centers[labels] + rng.normal(size=(1200, 6))).astype("float32")
    model = Classifier()
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    unbuilt = rows(model)  # before the first fit: the layers, not built yet
    case = run(model, x[:1000], labels[:1000], x[1000:], labels[1000:], epochs=5)
    case["summary"], case["unbuilt_summary"] = rows(model), unbuilt
    case["layers"] = [type(l).__name__ for l in model.layers]
    case["weights"] = [len(model.weights), len(model.trainable_weights)]
    case["predict_shape"] = list(model.predict(x[:7], verbose=0).shape)
    built = Classifier(classes=4)
    built.build((None, 6))
    case["built"] = built.built
    out["model_subclass"] = case

    # 4a. An augmentation Sequential inside a Functional model.
    img_labels = rng.integers(0, 2, size=800)
    images = rng.normal(scale=0.5, size=(800, 8, 8, 1)).astype("float32")
    images[:, 2:6, 2:6, 0] += np.where(img_labels == 1, 1.5, -1.5)[:, None, None]  # flip-invariant
    augment = keras.Sequential([layers.RandomFlip("vertical"), layers.RandomContrast(0.1)], name="augment")
    inp = keras.Input((8, 8, 1))
    h = augment(inp)
    h = layers.Conv2D(8, 3, activation="relu")(h)
    h = layers.Flatten()(h)
    model = keras.Model(inp, layers.Dense(2, activation="softmax")(h))
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    case = run(model, images[:700], img_labels[:700], images[700:], img_labels[700:], epochs=6)
    case["summary"] = rows(model)
    case["layers"] = [type(l).__name__ for l in model.layers]
    out["augmentation_sequential"] = case

    # 4b. Transfer learning: base(x, training=False), frozen, then fine-tuned.
    x = rng.normal(size=(1200, 8)).astype("float32")
    y = (x[:, 0] - x[:, 3] > 0).astype("int64")
    b_in = keras.Input((8,))
    b = layers.Dense(16, activation="relu", name="base_dense")(b_in)
    b = layers.BatchNormalization(name="base_bn")(b)
    base = keras.Model(b_in, b, name="base")
    pre = keras.Model(b_in, layers.Dense(2, activation="softmax")(b))
    pre.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    pre.fit(x, y, epochs=8, verbose=0)  # its BatchNormalization's moving statistics settle
    base.trainable = False
    inp = keras.Input((8,))
    h = base(inp, training=False)
    model = keras.Model(inp, layers.Dense(2, activation="softmax", name="new_head")(h))
    model.compile(optimizer=keras.optimizers.Adam(0.01), loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    stages = {"frozen_counts": [len(model.trainable_weights), len(model.non_trainable_weights)]}
    stages.update(run(model, x[:1000], y[:1000], x[1000:], y[1000:], epochs=4))
    stages["summary"] = rows(model)
    base.trainable = True
    model.compile(optimizer=keras.optimizers.Adam(1e-4), loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    stages["unfrozen_counts"] = [len(model.trainable_weights), len(model.non_trainable_weights)]
    tuned = run(model, x[:1000], y[:1000], x[1000:], y[1000:], epochs=2)
    stages["tuned_accuracy"] = tuned["accuracy"]
    out["transfer_learning"] = stages
    print("PARITY " + json.dumps(out))
""")

# A file written by one framework with a subclassed layer (a Transformer block holding a
# Sequential), loaded by the other with custom_objects: the same predictions.
FILE_SCRIPT = textwrap.dedent("""
    import json, os
    import numpy as np
    IMPORT_LINE
    from keras import layers, ops

    class TransformerBlock(layers.Layer):
        def __init__(self, embed_dim=16, num_heads=2, ff_dim=32, rate=0.1, **kwargs):
            super().__init__(**kwargs)
            self.embed_dim, self.num_heads, self.ff_dim, self.rate = embed_dim, num_heads, ff_dim, rate
            self.att = layers.MultiHeadAttention(num_heads=num_heads, key_dim=embed_dim)
            self.ffn = keras.Sequential([layers.Dense(ff_dim, activation="relu"), layers.Dense(embed_dim)])
            self.norm1 = layers.LayerNormalization(epsilon=1e-6)
            self.norm2 = layers.LayerNormalization(epsilon=1e-6)
            self.drop = layers.Dropout(rate)

        def call(self, inputs, training=False):
            h = self.norm1(inputs + self.drop(self.att(inputs, inputs), training=training))
            return self.norm2(h + self.ffn(h))

        def get_config(self):
            return {**super().get_config(), "embed_dim": self.embed_dim, "num_heads": self.num_heads,
                    "ff_dim": self.ff_dim, "rate": self.rate}

    where = os.environ["SUBCLASS_FILES"]
    x = np.random.default_rng(0).normal(size=(4, 6, 16)).astype("float32")
    if os.environ["SUBCLASS_MODE"] == "save":
        inp = keras.Input((6, 16))
        model = keras.Model(inp, layers.Dense(3)(TransformerBlock(name="block")(inp)))
        model.compile(optimizer="adam", loss="mse")
        model.fit(x, np.ones((4, 6, 3), "float32"), epochs=2, verbose=0)
        np.save(os.path.join(where, "want.npy"), model.predict(x, verbose=0))
        model.save(os.path.join(where, "block.keras"))
        print("PARITY {}")
    else:
        model = keras.models.load_model(os.path.join(where, "block.keras"),
                                        custom_objects={"TransformerBlock": TransformerBlock})
        diff = np.abs(model.predict(x, verbose=0) - np.load(os.path.join(where, "want.npy"))).max()
        print("PARITY " + json.dumps({"max_diff": float(diff)}))
""")


def files_both_ways(argv):
    """{"nnfit -> Keras": max prediction difference, "Keras -> nnfit": ...} for the file one
    writes and the other loads."""
    import os
    import tempfile
    keras_python, nnfit_python = argv[1], argv[2] if len(argv) > 2 else sys.executable
    keras_env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    keras_env.update(KERAS_BACKEND="tensorflow", TF_CPP_MIN_LOG_LEVEL="3")
    sides = {"nnfit": (nnfit_python, "from nnfit import keras", dict(os.environ)),
             "Keras": (keras_python, "import keras", keras_env)}
    out = {}
    for writer, reader in (("nnfit", "Keras"), ("Keras", "nnfit")):
        with tempfile.TemporaryDirectory() as where:
            for side, mode in ((writer, "save"), (reader, "load")):
                python, line, env = sides[side]
                result = parity_runs.run(python, FILE_SCRIPT, line, dict(env, SUBCLASS_FILES=where, SUBCLASS_MODE=mode),
                                         600)
            out[f"{writer} -> {reader}"] = result["max_diff"]
    return out


TOLERANCE = 0.05  # accuracy, absolute


def compare(ref, got):
    """Differences between Keras's result (ref) and nnfit's (got), as messages."""
    failures = []
    for case, want in ref.items():
        have = got.get(case, {})
        for key, value in want.items():
            if key.endswith("accuracy"):
                if abs(have.get(key, -1.0) - value) > TOLERANCE:
                    failures.append(f"{case}.{key}: nnfit {have.get(key)}, Keras {value} (tolerance {TOLERANCE})")
            elif have.get(key) != value:
                failures.append(f"{case}.{key}:\n  nnfit {have.get(key)}\n  Keras {value}")
    return failures


def main():
    ref, got = parity_runs.run_both(SCRIPT, sys.argv, timeout=1200)
    for case in ref:
        accs = {k: (round(got[case].get(k, -1), 4), round(v, 4)) for k, v in ref[case].items() if k.endswith("accuracy")}
        print(f"{case}: accuracy (nnfit, Keras) {accs}")
    failures = compare(ref, got)
    for way, diff in files_both_ways(sys.argv).items():
        print(f"a file with a subclassed Transformer block, {way}: max prediction difference {diff:.2e}")
        if not diff < 1e-4:
            failures.append(f"{way}: the loaded model's predictions differ by {diff} (tolerance 1e-4)")
    if failures:
        sys.exit(f"{len(failures)} differences from Keras:\n" + "\n".join(failures))
    print("parity: ok")


if __name__ == "__main__":
    main()
