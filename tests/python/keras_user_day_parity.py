"""The rest of a Keras user's day (issue 36), run under real Keras (from PyPI, in the Keras
venv) and under `from nnfit import keras`: what each observable gives must be equal.
Embedding built from Python (its config and parameter count); summary() before compile
(the keras.io MNIST convnet's 34,826 parameters, and a model of every normalization);
on_train_end's logs (their keys); set_random_seed making two builds of a model equal;
Sequential.add after summary(); MultiHeadAttention called as mha(query, value) and
mha(query, value, key); fine-tuning (trainable on layers and models at any time, taking
effect at compile: the counts of trainable and non-trainable weights at each stage, and
which weights fit changed); weights before compile and layer.build; the layer aliases, the
separable, depthwise and transposed convolutions' parameter counts, the merge layers'
functional forms; keras.utils.pad_sequences, normalize, split_dataset, img_to_array;
clone_model, model_from_json and Sequential.from_config; inputs known per batch
(Input(shape=(None,)) text models, masked, with attention, images of any size, steps through
TimeDistributed, a Reshape's -1): shapes, summaries,
predictions at two lengths, and Keras's file of such a model loaded; keras.layers.RNN with
Keras's cells (one, a stack, masked, backwards, with states): summary, configs, predictions
and the .keras file each framework writes.

usage: keras_user_day_parity.py KERAS_PYTHON [NNFIT_PYTHON]
"""
import sys
import textwrap

import parity_runs

SCRIPT = textwrap.dedent("""
    import json
    import numpy as np
    IMPORT_LINE
    from keras import layers

    out = {}
    rng = np.random.default_rng(0)

    def total_params(model):
        lines = []
        model.summary(print_fn=lambda line, *a, **k: lines.append(line))
        text = "\\n".join(lines)
        return [l.strip() for l in text.splitlines() if "params" in l]

    # 1. Embedding from Python.
    emb = layers.Embedding(50, 8)
    m = keras.Sequential([keras.Input((6,), dtype="int32"), emb, layers.GlobalAveragePooling1D(), layers.Dense(2)])
    cfg = emb.get_config()
    w = emb.get_weights()[0]
    out["embedding"] = {"input_dim": cfg["input_dim"], "params": m.count_params(),
                        "within_0.05": bool(np.abs(w).max() <= 0.05), "spread": bool(np.abs(w).max() > 0.04)}
    m.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    ids = rng.integers(0, 50, size=(64, 6)).astype("int32")
    m.fit(ids, (ids[:, 0] > 25).astype("int64"), epochs=1, verbose=0)

    # 2. summary() before compile.
    convnet = keras.Sequential([keras.Input(shape=(28, 28, 1)), layers.Conv2D(32, kernel_size=(3, 3), activation="relu"),
                                layers.MaxPooling2D(pool_size=(2, 2)), layers.Conv2D(64, kernel_size=(3, 3), activation="relu"),
                                layers.MaxPooling2D(pool_size=(2, 2)), layers.Flatten(), layers.Dropout(0.5),
                                layers.Dense(10, activation="softmax")])
    out["convnet_summary"] = total_params(convnet)
    norms = keras.Sequential([keras.Input((4,)), layers.Dense(8), layers.BatchNormalization(),
                              layers.LayerNormalization(), layers.RMSNormalization()])
    out["norms_summary"] = total_params(norms)
    inp = keras.Input((5,))
    fn = keras.Model(inp, layers.Dense(3)(layers.BatchNormalization()(inp)))
    out["functional_summary"] = total_params(fn)

    # 4. on_train_end's logs; set_random_seed; Sequential.add after summary(); MultiHeadAttention.
    class Ends(keras.callbacks.Callback):
        def on_train_end(self, logs=None):
            self.logs = dict(logs or {})
    x = rng.normal(size=(40, 4)).astype("float32")
    y = (x.sum(1) > 0).astype("int64")
    clf = keras.Sequential([keras.Input((4,)), layers.Dense(2, activation="softmax")])
    clf.compile(optimizer="sgd", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    ends = Ends()
    hist = clf.fit(x, y, epochs=2, batch_size=8, validation_split=0.25, verbose=0, callbacks=[ends])
    out["on_train_end_keys"] = sorted(ends.logs)
    out["on_train_end_is_last_epoch"] = all(abs(ends.logs[k] - hist.history[k][-1]) < 1e-6 for k in ends.logs)

    def seeded(seed):
        keras.utils.set_random_seed(seed)
        return keras.Sequential([keras.Input((4,)), layers.Dense(5), layers.Dense(2)]).get_weights()
    a, b, c = seeded(3), seeded(3), seeded(4)
    out["seed_equal"] = all(np.array_equal(p, q) for p, q in zip(a, b))
    out["seed_differs"] = not np.array_equal(a[0], c[0])

    grow = keras.Sequential([keras.Input((4,)), layers.Dense(3)])
    grow.summary(print_fn=lambda *a, **k: None)
    first = grow.layers[0].get_weights()[0].copy()
    grow.add(layers.Dense(2))
    out["add_after_summary"] = {"layers": len(grow.layers), "params": grow.count_params(),
                                "kept": bool(np.array_equal(grow.layers[0].get_weights()[0], first)),
                                "output_shape": list(grow.output_shape)}

    q, v, k = keras.Input((5, 8)), keras.Input((6, 8)), keras.Input((6, 8))
    o1 = layers.MultiHeadAttention(num_heads=2, key_dim=4)(q, v)
    o2 = layers.MultiHeadAttention(num_heads=2, key_dim=4)(q, v, k)
    att = keras.Model([q, v, k], [o1, o2])
    qs, vs, ks = (rng.normal(size=(3,) + s).astype("float32") for s in ((5, 8), (6, 8), (6, 8)))
    p1, p2 = att.predict([qs, vs, ks], verbose=0)
    out["mha"] = {"shapes": [list(o1.shape), list(o2.shape)], "params": att.count_params(),
                  "key_matters": bool(np.abs(p1 - p2).max() > 1e-4)}

    # 5. Fine-tuning.
    keras.utils.set_random_seed(1)
    fx = rng.normal(size=(64, 6)).astype("float32")
    fy = (fx[:, 0] + fx[:, 1] > 0).astype("int64")
    base_in = keras.Input((6,))
    h = layers.Dense(8, activation="relu", name="base_dense")(base_in)
    h = layers.BatchNormalization(name="base_bn")(h)
    base = keras.Model(base_in, h, name="base")
    head = layers.Dense(2, activation="softmax", name="head")
    model = keras.Model(base.input, head(base.output))
    stages = {}

    def snapshot():
        return {l.name: [np.array(w) for w in l.get_weights()] for l in model.layers if l.get_weights()}

    def changed(before, after):
        return sorted(n for n in before if any(not np.array_equal(p, q) for p, q in zip(before[n], after[n])))

    def counts():
        return [len(model.trainable_weights), len(model.non_trainable_weights), len(model.weights)]

    base.trainable = False
    model.compile(optimizer=keras.optimizers.Adam(0.01), loss="sparse_categorical_crossentropy")
    stages["frozen_counts"] = counts()
    before = snapshot()
    model.fit(fx, fy, epochs=2, batch_size=16, verbose=0)
    stages["frozen_changed"] = changed(before, snapshot())
    base.trainable = True
    model.compile(optimizer=keras.optimizers.Adam(1e-3), loss="sparse_categorical_crossentropy")
    stages["unfrozen_counts"] = counts()
    before = snapshot()
    model.fit(fx, fy, epochs=1, batch_size=16, verbose=0)
    stages["unfrozen_changed"] = changed(before, snapshot())
    model.trainable = False
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    stages["model_frozen_counts"] = counts()
    before = snapshot()
    model.fit(fx, fy, epochs=1, batch_size=16, verbose=0)
    stages["model_frozen_changed"] = changed(before, snapshot())
    model.trainable = True
    model.get_layer("base_dense").trainable = False
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    stages["layer_frozen_counts"] = counts()
    stages["layer_weights"] = [[len(l.weights), len(l.trainable_weights), len(l.non_trainable_weights)]
                               for l in model.layers]
    late = keras.Sequential([keras.Input((6,)), layers.Dense(4, name="a"), layers.Dense(2, name="b")])
    late.compile(optimizer="sgd", loss="sparse_categorical_crossentropy")
    late.get_layer("b").trainable = False  # after compile, before the first fit: Keras's step is made at fit
    before = late.get_layer("b").get_weights()[0].copy()
    late.fit(fx, fy, epochs=1, verbose=0)
    stages["freeze_before_first_fit"] = np.array_equal(before, late.get_layer("b").get_weights()[0])
    late.get_layer("b").trainable = True
    late.compile(optimizer="sgd", loss="sparse_categorical_crossentropy")
    late.fit(fx, fy, epochs=1, verbose=0)
    late.get_layer("a").trainable = False
    before = late.get_layer("a").get_weights()[0].copy()
    late.fit(fx, fy, epochs=1, verbose=0)
    stages["late_freeze_trains_until_compile"] = not np.array_equal(before, late.get_layer("a").get_weights()[0])
    late.compile(optimizer="sgd", loss="sparse_categorical_crossentropy")
    before = late.get_layer("a").get_weights()[0].copy()
    late.fit(fx, fy, epochs=1, verbose=0)
    stages["late_freeze_after_compile"] = np.array_equal(before, late.get_layer("a").get_weights()[0])
    out["finetune"] = stages

    d = layers.Dense(3)
    d.build((None, 4))
    built = [list(w.shape) for w in d.get_weights()]
    d.set_weights([np.ones((4, 3), "float32"), np.zeros(3, "float32")])
    uses = keras.Sequential([keras.Input((4,)), d])
    out["build"] = {"shapes": built, "built": d.built, "count": d.count_params(),
                    "carried": float(uses.predict(np.ones((1, 4), "float32"), verbose=0).sum())}
    pre = keras.Sequential([keras.Input((3,)), layers.Dense(2)])
    pre.layers[0].set_weights([np.full((3, 2), 0.5, "float32"), np.ones(2, "float32")])
    out["weights_before_compile"] = [w.tolist() for w in pre.get_weights()]

    # 6. Names.
    out["aliases"] = [getattr(layers, a) is getattr(layers, b) for a, b in
                      (("MaxPool2D", "MaxPooling2D"), ("AvgPool1D", "AveragePooling1D"),
                       ("GlobalAvgPool2D", "GlobalAveragePooling2D"), ("Convolution2D", "Conv2D"))]
    conv = keras.Sequential([keras.Input((12, 12, 3)), layers.SeparableConv2D(8, 3), layers.DepthwiseConv2D(3),
                             layers.Conv2DTranspose(4, 3, strides=2), layers.Reshape((17 * 17, 4)),
                             layers.SeparableConv1D(5, 3), layers.DepthwiseConv1D(3), layers.Conv1DTranspose(2, 3)])
    out["convs"] = {"params": [l.count_params() for l in conv.layers], "output": list(conv.output_shape)}
    a_in, b_in = keras.Input((4,)), keras.Input((4,))
    merged = [layers.add([a_in, b_in]), layers.subtract([a_in, b_in]), layers.multiply([a_in, b_in]),
              layers.average([a_in, b_in]), layers.maximum([a_in, b_in]), layers.minimum([a_in, b_in]),
              layers.concatenate([a_in, b_in]), layers.dot([a_in, b_in], axes=1)]
    forms = keras.Model([a_in, b_in], merged)
    av, bv = np.arange(8, dtype="float32").reshape(2, 4), np.full((2, 4), 2.0, "float32")
    out["merge_forms"] = [np.asarray(p).tolist() for p in forms.predict([av, bv], verbose=0)]
    seqs = [[1, 2, 3], [4, 5], [6, 7, 8, 9, 10], []]
    u = keras.utils
    out["pad_sequences"] = [u.pad_sequences(seqs).tolist(), u.pad_sequences(seqs, maxlen=3, padding="post",
                            truncating="post", value=-1).tolist(), str(u.pad_sequences(seqs).dtype)]
    out["normalize"] = np.round(u.normalize(np.array([[3.0, 4.0], [0.0, 0.0]]), order=2), 6).tolist()
    out["to_categorical"] = u.to_categorical([0, 2, 1], 3).tolist()
    left, right = u.split_dataset((np.arange(20).reshape(10, 2), np.arange(10)), left_size=0.7)
    out["split_dataset"] = [sum(len(b[0]) for b in part.batch(100).as_numpy_iterator()) for part in (left, right)]
    out["img_to_array"] = list(u.img_to_array(np.zeros((5, 7))).shape)
    clone = keras.models.clone_model(clf)
    out["clone"] = {"names": [l.name for l in clone.layers] == [l.name for l in clf.layers],
                    "params": clone.count_params(), "fresh": not np.array_equal(clone.get_weights()[0], clf.get_weights()[0])}
    again = keras.models.model_from_json(clf.to_json())
    seq = keras.Sequential.from_config(clf.get_config())
    out["from_json"] = [again.count_params(), seq.count_params(), [l.name for l in seq.layers] == [l.name for l in clf.layers]]

    # 6b. keras.constraints: applied after each update, as Keras applies them.
    cm = keras.Sequential([keras.Input((6,)), layers.Dense(4, kernel_constraint=keras.constraints.MaxNorm(0.3),
                                                          bias_constraint=keras.constraints.NonNeg()),
                           layers.Dense(1, kernel_constraint=keras.constraints.unit_norm())])
    cm.set_weights([np.full(v.shape, 0.5, "float32") for v in cm.get_weights()])
    cm.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse")
    cx = np.linspace(-1, 1, 48).reshape(8, 6).astype("float32")
    cm.fit(cx, np.arange(8, dtype="float32").reshape(8, 1), batch_size=8, epochs=2, verbose=0, shuffle=False)
    out["constraints"] = {"weights": [np.round(v, 4).tolist() for v in cm.get_weights()],
                          "config": cm.layers[0].get_config()["kernel_constraint"]}

    # 7. Inputs known per batch (Input(shape=(None,))): the symbolic shapes, the summary, and
    # predictions at two lengths on the same weights, within 1e-5 of Keras's (the Keras run,
    # first, leaves its predictions and its .keras file in a shared folder; the nnfit run
    # compares its own predictions and those of Keras's file, loaded, against them).
    import os, tempfile
    shared = os.path.join(tempfile.gettempdir(), f"nnfit_user_day_varlen_{os.getuid()}")
    os.makedirs(shared, exist_ok=True)
    is_keras = not keras.__name__.startswith("nnfit")

    def fill(model):  # the same weights under both
        for layer in model.layers:
            ws = layer.get_weights()
            layer.set_weights([(0.3 * np.sin(np.arange(w.size) * 0.7 + k)).reshape(w.shape).astype("float32")
                               for k, w in enumerate(ws)])

    ids_in = keras.Input(shape=(None,), dtype="int32")
    h = layers.Embedding(40, 8)(ids_in)
    conv = layers.Conv1D(6, 3, padding="same", activation="relu")(h)
    seq = layers.Bidirectional(layers.LSTM(5, return_sequences=True))(conv)
    pooled = layers.GlobalMaxPooling1D()(seq)
    text = keras.Model(ids_in, layers.Dense(3, activation="softmax")(pooled))
    m_in = keras.Input(shape=(None,), dtype="int32")
    masked = keras.Model(m_in, layers.Dense(1)(layers.GRU(4)(layers.Embedding(40, 6, mask_zero=True)(m_in))))
    img_in = keras.Input(shape=(None, None, 3))
    img = layers.Conv2D(4, 3, activation="relu")(img_in)
    img = layers.MaxPooling2D()(img)
    img = layers.Cropping2D(1)(layers.ZeroPadding2D(1)(layers.UpSampling2D()(img)))
    image = keras.Model(img_in, layers.Dense(2)(layers.GlobalAveragePooling2D()(img)))
    a_in = keras.Input(shape=(None,), dtype="int32")
    a_h = layers.Embedding(40, 8)(a_in)
    a_att = layers.MultiHeadAttention(num_heads=2, key_dim=4)(a_h, a_h)
    a_x = layers.LayerNormalization()(layers.Add()([a_h, a_att]))
    attention = keras.Model(a_in, layers.Dense(2)(layers.GlobalAveragePooling1D()(a_x)))
    out["varlen_shapes"] = [list(t.shape) for t in (h, conv, seq, pooled, img, a_att)] + [list(text.input_shape)]
    out["varlen_summary"] = total_params(text) + total_params(image)
    preds = {}
    for name, model in (("text", text), ("masked", masked), ("image", image), ("attention", attention)):
        fill(model)
        for length in (7, 19):
            if name == "image":
                x = np.cos(np.arange(2 * length * (length + 3) * 3)).reshape(2, length, length + 3, 3).astype("float32")
            else:
                x = rng.integers(1, 40, size=(3, length)).astype("int32")
                x[1, length - 3:] = 0  # padded at the end
            preds[f"{name}_{length}"] = (model.predict(x, verbose=0), x)
    # Steps known per batch through TimeDistributed (a Conv2D and a Flatten per step), and a
    # Reshape whose -1 entry is known per batch.
    # Keras 3.15 on TensorFlow gives this TimeDistributed model another result at 5 steps
    # after a call at 3 than on its own (its own matching its fixed-length model's, and
    # nnfit's): each length gets a fresh model of the same weights here.
    def td_model():
        td_in = keras.Input(shape=(None, 6, 6, 1))
        td = layers.TimeDistributed(layers.Conv2D(3, 3, activation="relu"))(td_in)
        td = layers.TimeDistributed(layers.Flatten())(td)
        return keras.Model(td_in, layers.Dense(2)(layers.LSTM(4)(td))), td
    rs_in = keras.Input(shape=(None,), dtype="int32")
    rs = layers.Reshape((-1, 16))(layers.Embedding(40, 8)(rs_in))
    rs_model = keras.Model(rs_in, layers.Dense(2)(layers.GlobalAveragePooling1D()(rs)))
    out["varlen_shapes_wrapped"] = [list(t.shape) for t in (td_model()[1], rs)]
    for i, n in enumerate((3, 5)):
        model = td_model()[0]
        fill(model)
        x = np.cos(np.arange(2 * n * 36)).reshape(2, n, 6, 6, 1).astype("float32")
        preds[f"td_{i}"] = (model.predict(x, verbose=0), x)
    fill(rs_model)
    for i, n in enumerate((8, 20)):
        x = rng.integers(1, 40, size=(3, n)).astype("int32")
        preds[f"reshape_{i}"] = (rs_model.predict(x, verbose=0), x)
    if is_keras:
        np.savez(os.path.join(shared, "preds.npz"), **{k: p for k, (p, x) in preds.items()},
                 **{k + "_x": x for k, (p, x) in preds.items()})
        text.save(os.path.join(shared, "text.keras"))
        out["varlen_predictions"] = "within 1e-5"
        out["varlen_file"] = "within 1e-5"
    else:
        ref = np.load(os.path.join(shared, "preds.npz"))
        worst = {k: float(np.abs(p - ref[k]).max()) for k, (p, x) in preds.items()}
        out["varlen_predictions"] = "within 1e-5" if max(worst.values()) <= 1e-5 else worst
        loaded = keras.models.load_model(os.path.join(shared, "text.keras"))
        diff = max(float(np.abs(loaded.predict(ref[f"text_{n}_x"], verbose=0) - ref[f"text_{n}"]).max()) for n in (7, 19))
        out["varlen_file"] = "within 1e-5" if diff <= 1e-5 else diff

    # 8. keras.layers.RNN with Keras's cells: one cell, a stack (a list and StackedRNNCells),
    # masked and backwards, with states; summary, configs, predictions on the same weights
    # within 1e-5 of Keras's, and each framework's .keras file of them written alike.
    import zipfile
    r_in = keras.Input(shape=(6,), dtype="int32")
    r_h = layers.Embedding(30, 5, mask_zero=True)(r_in)
    r_seq = layers.RNN(layers.LSTMCell(4), return_sequences=True)(r_h)
    r_stack = layers.RNN([layers.GRUCell(3, reset_after=False), layers.SimpleRNNCell(2)], go_backwards=True)(r_seq)
    r_out, r_state = layers.RNN(layers.GRUCell(3), return_state=True)(r_seq)
    r_wide = layers.RNN(layers.StackedRNNCells([layers.LSTMCell(3, name="first"), layers.LSTMCell(2)]),
                        return_sequences=True)(r_h)
    cells = keras.Model(r_in, [r_stack, r_out, r_state, layers.GlobalAveragePooling1D()(r_wide)])
    out["rnn_cells_summary"] = total_params(cells)
    out["rnn_cells_config"] = [[type(l.cell).__name__, sorted(l.get_config())] for l in cells.layers
                               if type(l).__name__ == "RNN"]
    out["rnn_cells_weights"] = [list(w.shape) for w in cells.get_weights()]
    fill(cells)
    r_x = rng.integers(1, 30, size=(4, 6)).astype("int32")
    r_x[0, 4:] = 0
    r_x[2, 2:] = 0
    r_preds = cells.predict(r_x, verbose=0)
    def written(path):
        # The RNN layers' configs in a .keras file, without object ids, and initializers
        # by class alone: nnfit writes their configs as every Keras 3 reads them (Keras
        # 3.15's input_axes and gain are its newer defaults, which older versions refuse).
        cfg = json.loads(zipfile.ZipFile(path).read("config.json"))
        def strip(v):
            if isinstance(v, dict):
                if v.get("module") == "keras.initializers":
                    return v["class_name"]
                return {k: strip(x) for k, x in v.items() if k != "shared_object_id"}
            return [strip(x) for x in v] if isinstance(v, list) else v
        return [strip(l["config"]) for l in cfg["config"]["layers"] if l["class_name"] == "RNN"]
    if is_keras:
        np.savez(os.path.join(shared, "rnn.npz"), x=r_x, *r_preds)
        cells.save(os.path.join(shared, "rnn.keras"))
        out["rnn_cells_predictions"] = "within 1e-5"
        out["rnn_cells_file"] = "within 1e-5"
        out["rnn_cells_written"] = written(os.path.join(shared, "rnn.keras"))
    else:
        ref = np.load(os.path.join(shared, "rnn.npz"))
        diff = max(float(np.abs(p - ref[f"arr_{i}"]).max()) for i, p in enumerate(r_preds))
        out["rnn_cells_predictions"] = "within 1e-5" if diff <= 1e-5 else diff
        loaded = keras.models.load_model(os.path.join(shared, "rnn.keras"))
        l_preds = loaded.predict(ref["x"], verbose=0)
        diff = max(float(np.abs(p - ref[f"arr_{i}"]).max()) for i, p in enumerate(l_preds))
        out["rnn_cells_file"] = "within 1e-5" if diff <= 1e-5 else diff
        loaded.save(os.path.join(shared, "rnn_nnfit.keras"))
        out["rnn_cells_written"] = written(os.path.join(shared, "rnn_nnfit.keras"))

    # 9. Dict inputs and outputs (Keras's structures): the outputs in sorted-key order,
    # model.output and predict and model(x) as dicts, losses, metrics and logs by key, the
    # config's dict references, a nested dict-output model, Keras's file of such a model.
    d_p = keras.Input((4,), name="p")
    d_q = keras.Input((3,), name="q")
    d_h = layers.Concatenate()([d_p, d_q])
    dm = keras.Model({"q": d_q, "p": d_p}, {"b": layers.Dense(1, name="d1")(d_h), "a": layers.Dense(2, name="d2")(d_h)})
    fill(dm)
    d_cfg = dm.get_config()
    out["dict_structure"] = {"output": sorted(dm.output), "outputs": [list(t.shape) for t in dm.outputs],
                             "inputs": [t.name for t in dm.inputs], "input": sorted(dm.input),
                             "output_layers": sorted(d_cfg["output_layers"].items()),
                             "input_layers": sorted(d_cfg["input_layers"].items())}
    d_x = {"p": rng.normal(size=(16, 4)).astype("float32"), "q": rng.normal(size=(16, 3)).astype("float32")}
    d_y = {"a": rng.normal(size=(16, 2)).astype("float32"), "b": rng.normal(size=(16, 1)).astype("float32")}
    d_pred = dm.predict(d_x, verbose=0)
    d_call = dm({k: v[:2] for k, v in d_x.items()})
    out["dict_predict"] = [type(d_pred).__name__, sorted((k, list(v.shape)) for k, v in d_pred.items()),
                           type(d_call).__name__, sorted(d_call)]
    dm.compile(optimizer=keras.optimizers.SGD(0.05), loss={"a": "mse", "b": "mae"}, metrics={"a": ["mae"]},
               loss_weights={"a": 1.0, "b": 0.5})
    d_hist = dm.fit(d_x, d_y, epochs=2, batch_size=8, shuffle=False, verbose=0).history
    d_eval = dm.evaluate(d_x, d_y, verbose=0, return_dict=True)
    out["dict_logs"] = sorted(d_hist)
    nest_in = keras.Input((4,), name="p2")
    nest_q = keras.Input((3,), name="q2")
    nested = dm({"p": nest_in, "q": nest_q})
    out["dict_nested"] = [type(nested).__name__, sorted(nested), list(nested["a"].shape)]
    if is_keras:
        np.savez(os.path.join(shared, "dict.npz"), **{f"pred_{k}": v for k, v in d_pred.items()},
                 hist=np.array([d_hist[k] for k in sorted(d_hist)]), eval=np.array([d_eval[k] for k in sorted(d_eval)]))
        dm.save(os.path.join(shared, "dict.keras"))
        out["dict_numbers"] = "within 1e-5"
        out["dict_file"] = "within 1e-5"
    else:
        ref = np.load(os.path.join(shared, "dict.npz"))
        diffs = [float(np.abs(d_pred[k] - ref[f"pred_{k}"]).max()) for k in d_pred]
        diffs.append(float(np.abs(np.array([d_hist[k] for k in sorted(d_hist)]) - ref["hist"]).max()))
        diffs.append(float(np.abs(np.array([d_eval[k] for k in sorted(d_eval)]) - ref["eval"]).max()))
        out["dict_numbers"] = "within 1e-5" if max(diffs) <= 1e-5 else diffs
        loaded = keras.models.load_model(os.path.join(shared, "dict.keras"))
        l_pred = loaded.predict(d_x, verbose=0)
        l_hist = loaded.evaluate(d_x, d_y, verbose=0, return_dict=True)
        diff = max(float(np.abs(l_pred[k] - dm.predict(d_x, verbose=0)[k]).max()) for k in l_pred)
        out["dict_file"] = "within 1e-5" if diff <= 1e-5 and sorted(l_hist) == sorted(d_eval) else [diff, sorted(l_hist)]

    # 10. A layer's Keras attributes: constructor arguments in Keras's form, weights by name
    # (Variables that assign through to the model), trainable/non-trainable variables.
    a_d = layers.Dense(3, activation="tanh", name="a_dense")
    a_c = layers.Conv2D(4, 3, strides=(2, 2), padding="same", name="a_conv")
    a_bn = layers.BatchNormalization(name="a_bn")
    a_e = layers.Embedding(10, 4, name="a_emb")
    a_m = keras.Sequential([keras.Input((8, 8, 1)), a_c, a_bn, layers.Flatten(), a_d])
    keras.Sequential([keras.Input((5,), dtype="int32"), a_e])
    fill(a_m)
    out["layer_attrs"] = [a_d.units, a_d.use_bias, a_d.activation.__name__, a_c.filters, list(a_c.kernel_size),
                          list(a_c.strides), a_c.padding, a_bn.momentum, a_bn.epsilon, a_e.input_dim, a_e.output_dim,
                          a_d.variable_dtype, a_d.compute_dtype]
    out["layer_weights_by_name"] = [[a_d.kernel.path.split("/")[-1], list(a_d.kernel.shape)], list(a_d.bias.shape),
                                    list(a_c.kernel.shape), list(a_bn.moving_mean.shape), list(a_bn.gamma.shape),
                                    list(a_e.embeddings.shape)]
    a_bn.moving_variance.assign(np.ones((4,), "float32"))  # fill's sines would make it negative
    a_x = np.linspace(-1, 1, 2 * 64).reshape(2, 8, 8, 1).astype("float32")
    a_before = a_m.predict(a_x, verbose=0)
    a_d.kernel.assign(np.full((64, 3), 0.01, "float32"))
    a_d.bias.assign_add(np.full((3,), 0.5, "float32"))
    a_after = a_m.predict(a_x, verbose=0)
    out["layer_assign"] = [round(float(np.asarray(a_d.get_weights()[1]).sum()), 5),
                           np.round(a_after, 4).tolist(), bool(np.abs(a_after - a_before).max() > 1e-3)]
    out["layer_output_shapes"] = [list(layers.Conv2D(4, 3, strides=2).compute_output_shape((None, 28, 28, 1))),
                                  list(layers.Dense(5).compute_output_shape((None, 7, 3))),
                                  list(layers.Concatenate().compute_output_shape([(None, 3), (None, 4)])),
                                  list(layers.LSTM(4, return_sequences=True).compute_output_shape((None, None, 3)))]
    out["model_attrs"] = [[list(t.shape) for t in a_m.outputs], a_m.compiled, a_m.dtype, a_m.compute_dtype]
    out["layer_variables"] = [len(a_m.trainable_variables), len(a_m.non_trainable_variables),
                              len(a_bn.trainable_variables), len(a_bn.non_trainable_variables)]

    # 11. summary()'s arguments: show_trainable, expand_nested (two levels), line_length past
    # the terminal (cut there, as rich's console does), positions (a header wrapped to two
    # lines), layer_range; the table lines as each framework prints them (80 columns).
    def table(model, **kwargs):
        lines = []
        model.summary(print_fn=lambda line, *a, **k: lines.extend(line.split("\\n")), **kwargs)
        return [l for l in lines if l.strip() and not l.startswith("Model:")]
    s_inner2 = keras.Sequential([keras.Input((3,)), layers.Dense(2, name="s_deep")], name="s_inner2")
    s_inner = keras.Sequential([keras.Input((4,)), layers.Dense(3, name="s_in"), s_inner2, layers.Dense(5, name="s_out")],
                               name="s_inner")
    s_x = keras.Input((4,), name="s_x")
    s_model = keras.Model(s_x, layers.Add(name="s_add")([s_inner(s_x), layers.Dense(5, name="s_side")(s_x)]))
    s_inner.trainable = False
    s_seq = keras.Sequential([keras.Input((4,)), layers.Dense(3, name="s_a"), layers.Dense(2, name="s_b")])
    s_seq.layers[0].trainable = False
    out["summary_options"] = [table(s_model, show_trainable=True), table(s_model, expand_nested=True),
                              table(s_model, expand_nested=True, show_trainable=True), table(s_model, line_length=100),
                              table(s_model, layer_range=["s_inner", "s_side"]), table(s_seq, show_trainable=True),
                              table(s_seq, positions=[0.5, 0.7, 1.0])]

    # 12. A layer's get_config() before it is built, in Keras's standard form (initializers,
    # regularizers and constraints as objects, per-axis sizes, padding pairs, defaults filled
    # in), for 66 layers as commonly made; from_config of it gives the same config back.
    specs = [("Conv2D", (4, 3), {}), ("Conv1D", (4, 3), {"strides": 2}), ("Conv2DTranspose", (4, 3), {}), ("SeparableConv2D", (4, 3), {}),
             ("SeparableConv1D", (4, 3), {}), ("DepthwiseConv2D", (3,), {}), ("DepthwiseConv1D", (3,), {}), ("Conv1DTranspose", (2, 3), {}),
             ("Conv3DTranspose", (2, 3), {}), ("MaxPooling2D", (), {}), ("AveragePooling1D", (2,), {}), ("MaxPooling2D", (3,), {"strides": 2}),
             ("MaxPooling1D", (), {}), ("AveragePooling3D", (), {}), ("MaxPooling3D", (2,), {}),
             ("UpSampling2D", (), {}), ("UpSampling1D", (), {}), ("UpSampling3D", (), {}), ("ZeroPadding2D", (1,), {}), ("ZeroPadding2D", ((1, 2),), {}),
             ("ZeroPadding1D", (2,), {}), ("ZeroPadding3D", (1,), {}), ("Cropping2D", (1,), {}), ("Cropping1D", (1,), {}), ("Cropping3D", (1,), {}),
             ("Dense", (3,), {}), ("Dense", (3,), {"kernel_regularizer": "l2", "kernel_constraint": "max_norm", "activation": "relu"}),
             ("Dropout", (0.5,), {}), ("LSTM", (4,), {}), ("GRU", (4,), {}), ("SimpleRNN", (4,), {}), ("Embedding", (10, 4), {}),
             ("BatchNormalization", (), {}), ("LayerNormalization", (), {}), ("GroupNormalization", (2,), {}), ("Conv3D", (2, 3), {}),
             ("GlobalAveragePooling2D", (), {}), ("GlobalMaxPooling1D", (), {}), ("MultiHeadAttention", (2, 4), {}), ("Reshape", ((2, 3),), {}),
             ("Flatten", (), {}), ("Rescaling", (0.5,), {}), ("Resizing", (4, 4), {}), ("Activation", ("relu",), {}), ("PReLU", (), {}),
             ("EinsumDense", ("ab,bc->ac", 4), {}), ("Attention", (), {}), ("Concatenate", (), {}), ("Add", (), {}), ("Permute", ((2, 1),), {}),
             ("RepeatVector", (3,), {}), ("Masking", (), {}), ("SpatialDropout2D", (0.2,), {}), ("GaussianNoise", (0.1,), {}),
             ("LeakyReLU", (), {}), ("ReLU", (), {}), ("ELU", (), {}), ("Softmax", (), {}), ("UnitNormalization", (), {}), ("RMSNormalization", (), {}),
             ("CenterCrop", (4, 4), {}), ("RandomFlip", (), {}), ("RandomRotation", (0.1,), {}), ("RandomZoom", (0.1,), {}),
             ("TimeDistributed", (layers.Dense(2),), {}), ("Bidirectional", (layers.LSTM(2),), {})]
    configs, round_trips = {}, []
    for i, (cls, args, kw) in enumerate(specs):
        key = f"{i}: {cls}"
        try:
            layer = getattr(layers, cls)(*args, **kw)
            c = layer.get_config()
        except Exception as e:
            configs[key] = type(e).__name__ + ": " + str(e)[:80]
            continue
        again = type(layer).from_config(json.loads(json.dumps(c, default=str))).get_config()
        if cls not in ("Bidirectional", "TimeDistributed"):  # Keras renames a wrapper's inner layers
            round_trips.append(json.dumps(again, sort_keys=True, default=str) == json.dumps(c, sort_keys=True, default=str))
        c.pop("name", None)
        if isinstance(c.get("layer"), dict):
            c["layer"]["config"].pop("name", None)
        for k in ("forward_layer", "backward_layer"):
            if isinstance(c.get(k), dict):
                c[k]["config"].pop("name", None)
        configs[key] = json.loads(json.dumps(c, default=str))
    out["layer_configs"] = configs
    out["layer_configs_round_trip"] = round_trips

    # 13. keras.tree (optree's semantics: dicts by sorted key, None a leaf, namedtuples and
    # OrderedDicts as nodes): flatten, paths, map_structure, pack_sequence_as, traverse, errors.
    import collections
    tree = keras.tree
    P = collections.namedtuple("P", ["b", "a"])
    S = {"z": [1, (2, None)], "a": {"y": 3, "x": P(4, [5])}, "m": collections.OrderedDict([("q", 6), ("p", 7)])}
    def r(v): return repr(v)
    out["tree_flatten"] = r(tree.flatten(S))
    out["tree_paths"] = r(tree.flatten_with_path(S))
    out["tree_is_nested"] = [tree.is_nested(x) for x in (1, None, [1], (), {}, P(1, 2), "s")]
    out["tree_map"] = r(tree.map_structure(lambda x: None if x is None else x * 10, S))
    out["tree_map2"] = r(tree.map_structure(lambda a, b: (a, b), [1, {"b": 2, "a": 3}], [4, {"a": 5, "b": 6}]))
    out["tree_pack"] = r(tree.pack_sequence_as(S, list(range(100, 108))))
    out["tree_l2t"] = r(tree.lists_to_tuples({"a": [1, [2, 3]], "b": (4, [5])}))
    out["tree_shape"] = r(tree.map_shape_structure(lambda s: len(s), {"a": (None, 3), "b": [(1, 2), [4]]}))
    out["tree_upto"] = r(tree.map_structure_up_to([1, 2], lambda a, b: (a, b), [[1, 2], 3], [4, 5]))
    out["tree_traverse"] = r(tree.traverse(lambda x: tree.MAP_TO_NONE if x == 2 else None, [1, [2, 3]]))
    errs = []
    for f in (lambda: tree.map_structure(lambda a, b: a, [1, 2], [1, [2]]), lambda: tree.assert_same_structure([1], (1,)),
              lambda: tree.assert_same_structure({"a": 1}, {"b": 1}), lambda: tree.pack_sequence_as([1, 2], [1]),
              lambda: tree.assert_same_paths([1, 2], [1, 2, 3]), lambda: tree.assert_same_structure([1, 2], [3, 4])):
        try: f(); errs.append("ok")
        except Exception as e: errs.append(type(e).__name__)
    out["tree_errors"] = errs
    print("PARITY " + json.dumps(out))
""")


def main():
    keras_out, nnfit_out = parity_runs.run_both(SCRIPT, sys.argv, timeout=900)
    failed = [k for k in keras_out if keras_out[k] != nnfit_out.get(k)]
    for k in sorted(keras_out):
        print(f"{'ok  ' if k not in failed else 'DIFF'} {k}: keras {keras_out[k]}" +
              ("" if k not in failed else f"\n     nnfit {nnfit_out.get(k)}"))
    if failed:
        sys.exit(f"{len(failed)} of {len(keras_out)} differ from Keras: {failed}")
    print(f"all {len(keras_out)} agree with Keras")


if __name__ == "__main__":
    main()
