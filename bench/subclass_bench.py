"""A traced subclassed layer's step against the same layers in Functional form (issue 35):
keras.io's Transformer text classifier, its TransformerBlock written as a Layer subclass
(as keras.io writes it) and as Functional calls of the same layers, trained by nnfit; the
subclassed form also under Keras 3 (TensorFlow) and the same model in PyTorch 2.x
(bench/peers/torch_subclass.py) for reference. Writes bench/RESULTS_subclass.md.

    PYTHONPATH=build/release/python /usr/bin/python3 bench/subclass_bench.py [--rounds 3] [--epochs 3]
        [--keras-python /root/.cache/nnfit/venvs/keras/bin/python] [--torch-python PY] [--no-torch]

Samples/s: per run, the median over epochs 2.. (the first builds and plans); per form, the
median over rounds; forms alternate within a round. Same data, batch 64, Adam, 2 threads.
"""
import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import textwrap
from pathlib import Path

SCRIPT = textwrap.dedent("""
    import json, sys, time
    import numpy as np
    IMPORT_LINE
    from keras import layers

    form, epochs, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    vocab, maxlen, dim = 2000, 64, 64

    class TransformerBlock(layers.Layer):  # keras.io's text classification with Transformer
        def __init__(self, embed_dim, num_heads, ff_dim, rate=0.1):
            super().__init__()
            self.att = layers.MultiHeadAttention(num_heads=num_heads, key_dim=embed_dim)
            self.ffn = keras.Sequential([layers.Dense(ff_dim, activation="relu"), layers.Dense(embed_dim)])
            self.layernorm1 = layers.LayerNormalization(epsilon=1e-6)
            self.layernorm2 = layers.LayerNormalization(epsilon=1e-6)
            self.dropout1 = layers.Dropout(rate)
            self.dropout2 = layers.Dropout(rate)

        def call(self, inputs, training=False):
            attn_output = self.dropout1(self.att(inputs, inputs), training=training)
            out1 = self.layernorm1(inputs + attn_output)
            ffn_output = self.dropout2(self.ffn(out1), training=training)
            return self.layernorm2(out1 + ffn_output)

    def functional_block(x, embed_dim, num_heads, ff_dim, rate=0.1):
        a = layers.Dropout(rate)(layers.MultiHeadAttention(num_heads=num_heads, key_dim=embed_dim)(x, x))
        out1 = layers.LayerNormalization(epsilon=1e-6)(layers.Add()([x, a]))
        f = layers.Dense(embed_dim)(layers.Dense(ff_dim, activation="relu")(out1))
        return layers.LayerNormalization(epsilon=1e-6)(layers.Add()([out1, layers.Dropout(rate)(f)]))

    rng = np.random.default_rng(seed)
    x = rng.integers(1, vocab, size=(12800, maxlen)).astype("int32")
    y = ((x < 60).sum(1) > 1).astype("int64")
    keras.utils.set_random_seed(seed)
    inputs = keras.Input(shape=(maxlen,), dtype="int32")
    h = layers.Embedding(vocab, dim)(inputs)
    h = TransformerBlock(dim, 2, 64)(h) if form == "subclassed" else functional_block(h, dim, 2, 64)
    h = layers.GlobalAveragePooling1D()(h)
    h = layers.Dense(20, activation="relu")(h)
    model = keras.Model(inputs, layers.Dense(2, activation="softmax")(h))
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    times = []

    class Timer(keras.callbacks.Callback):
        def on_epoch_begin(self, epoch, logs=None):
            self.t = time.perf_counter()

        def on_epoch_end(self, epoch, logs=None):
            times.append(len(x) / (time.perf_counter() - self.t))

    history = model.fit(x, y, batch_size=64, epochs=epochs, verbose=0, callbacks=[Timer()])
    print("RESULT " + json.dumps({"samples_per_s": float(np.median(times[1:])), "params": model.count_params(),
                                  "accuracy": float(history.history["accuracy"][-1])}))
""")


def run(python, import_line, form, epochs, seed):
    code = SCRIPT.replace("IMPORT_LINE", import_line)
    env = dict(os.environ, OMP_NUM_THREADS="2", TF_NUM_INTRAOP_THREADS="2", TF_NUM_INTEROP_THREADS="1",
               KERAS_BACKEND="tensorflow", TF_CPP_MIN_LOG_LEVEL="3")
    if import_line.startswith("from nnfit"):
        code = code.replace("from keras import layers", "from nnfit.keras import layers")
    else:
        env.pop("PYTHONPATH", None)
    r = subprocess.run([python, "-c", code, form, str(epochs), str(seed)], capture_output=True, text=True, env=env)
    for line in r.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    sys.exit(f"{form} ({import_line}) failed:\n{r.stderr[-3000:]}")


def run_torch(python, epochs, seed):
    script = Path(__file__).with_name("peers") / "torch_subclass.py"
    env = dict(os.environ, OMP_NUM_THREADS="2")
    env.pop("PYTHONPATH", None)
    r = subprocess.run([str(python), str(script), str(epochs), str(seed), "2"], capture_output=True, text=True,
                       env=env)
    for line in r.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    sys.exit(f"PyTorch peer failed:\n{r.stderr[-3000:]}")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--keras-python", default="/root/.cache/nnfit/venvs/keras/bin/python")
    p.add_argument("--torch-python", default=None, help="PyTorch 2.x's Python (default: scripts/peer_venvs.sh torch)")
    p.add_argument("--no-torch", action="store_true")
    p.add_argument("--output", type=Path, default=Path(__file__).with_name("RESULTS_subclass.md"))
    args = p.parse_args()
    torch_python = None
    if not args.no_torch:
        sys.path.insert(0, str(Path(__file__).parent))
        import fmnist_bench
        torch_python = fmnist_bench.peer_python("torch", args.torch_python)
    runs = {"nnfit, Functional": [], "nnfit, subclassed": [], "Keras, subclassed": [], "PyTorch 2.x": []}
    for seed in range(1, args.rounds + 1):
        runs["nnfit, Functional"].append(run(sys.executable, "from nnfit import keras", "functional", args.epochs, seed))
        runs["nnfit, subclassed"].append(run(sys.executable, "from nnfit import keras", "subclassed", args.epochs, seed))
        if Path(args.keras_python).exists():
            runs["Keras, subclassed"].append(run(args.keras_python, "import keras", "subclassed", args.epochs, seed))
        if torch_python is not None:
            runs["PyTorch 2.x"].append(run_torch(torch_python, args.epochs, seed))
    median = {k: statistics.median(r["samples_per_s"] for r in v) for k, v in runs.items() if v}
    base = median["nnfit, Functional"]
    lines = ["# A traced subclassed layer against the same layers in Functional form (issue 35)", "",
             "keras.io's Transformer text classifier (Embedding 2000x64, one TransformerBlock of 2 heads and a "
             "64-unit feed-forward Sequential, pooling, Dense 20, Dense 2), 12,800 sequences of 64 ids, batch 64, "
             f"Adam, {args.epochs} epochs, 2 threads. Samples/s: median over {args.rounds} rounds of each run's "
             "median over epochs 2.. (forms alternate within a round). PyTorch 2.x: the same model as a "
             "torch.nn.Module (bench/peers/torch_subclass.py, its attention projected as Keras's "
             "MultiHeadAttention(2 heads, key_dim 64) is, scaled_dot_product_attention).", "",
             "| form | samples/s | / nnfit Functional | parameters | last training accuracy |", "|---|---:|---:|---:|---:|"]
    for k, v in runs.items():
        if v:
            lines.append(f"| {k} | {median[k]:,.0f} | {median[k] / base:.3f} | {v[0]['params']:,} | "
                         f"{statistics.median(r['accuracy'] for r in v):.3f} |")
    lines += ["", "## How it was measured", "",
              f"- date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC; machine: nproc "
              f"{os.cpu_count()}; load average before the run: {', '.join(f'{a:.2f}' for a in os.getloadavg())}",
              f"- command: `{' '.join([Path(sys.executable).name] + sys.argv)}`",
              "- per run samples/s: " + "; ".join(f"{k}: " + ", ".join(f"{r['samples_per_s']:,.0f}" for r in v)
                                                   for k, v in runs.items() if v), ""]
    args.output.write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
