"""A text classifier with inputs known per batch (Input(shape=(None,))), against the same
model at a fixed length, under nnfit and (the same script, import changed) Keras 3 on
TensorFlow: samples/s after warm-up, test accuracy, and the number of input shapes nnfit
planned a program for (issue 36): its section of bench/RESULTS_text.md, between the
markers it writes (bench/text_bench.py keeps them when it rewrites the rest).

    usage: varlen_text_bench.py [--keras KERAS_PYTHON] [--runs N] [--out bench/RESULTS_text.md]

The data: synthetic reviews (no network here): 6,000 training and 2,000 test sequences of
ids in [1, 20000) with IMDB-like lengths (log-normal, median 180, cut at 400); the label
says whether a sequence holds any of one to three "positive" ids (1..19) placed anywhere
in it, which the convolution and max pooling find wherever they are. The model: the keras.io text
classification example's shape, Embedding(20000, 64) -> Conv1D(64, 7, relu) ->
GlobalMaxPooling1D -> Dense(64, relu) -> Dense(1, sigmoid), Adam, batch 32, 3 epochs.

Variants: "fixed": every sequence padded to 400, Input(shape=(400,)), fit on arrays.
"per batch": Input(shape=(None,)), a keras.utils.PyDataset whose batches hold sequences of
similar length (the sequences sorted by length and cut into batches, the batches' order
shuffled from the first epoch on) padded
to their own longest rounded up to a multiple of 32 (so at most 13 shapes).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import textwrap
import time

HERE = os.path.dirname(os.path.abspath(__file__))

SCRIPT = textwrap.dedent("""
    import json, sys, time
    import numpy as np
    IMPORT_LINE
    variant = sys.argv[1]
    rng = np.random.default_rng(0)
    VOCAB, MAXLEN, BATCH = 20000, 400, 32

    def make(n):
        lengths = np.minimum(np.exp(rng.normal(np.log(180), 0.6, size=n)).astype(int) + 10, MAXLEN)
        seqs, labels = [], []
        for n_ids in lengths:
            s = rng.integers(20, VOCAB, size=n_ids)
            positive = rng.random() < 0.5
            if positive:  # one to three "positive" ids somewhere in the review
                k = int(rng.integers(1, 4))
                s[rng.integers(0, n_ids, size=k)] = rng.integers(1, 20, size=k)
            seqs.append(s)
            labels.append(float(positive))
        return seqs, np.array(labels, "float32")

    train, y_train = make(6000)
    test, y_test = make(2000)

    class Buckets(keras.utils.PyDataset):
        def __init__(self, seqs, y, shuffle):
            super().__init__()
            order = np.argsort([len(s) for s in seqs], kind="stable")
            self.batches = [order[i:i + BATCH] for i in range(0, len(order), BATCH)]
            self.seqs, self.y, self.shuffle, self.epoch = seqs, y, shuffle, 0
            # Shuffled from the first pass: Keras on TensorFlow fixes a PyDataset's shapes from
            # its first two batches (NUM_BATCHES_FOR_TENSOR_SPEC), so they must differ.
            self.order = np.random.default_rng(0).permutation(len(self.batches)) if shuffle else np.arange(len(self.batches))
        def __len__(self):
            return len(self.batches)
        def __getitem__(self, i):
            idx = self.batches[self.order[i]]
            longest = max(len(self.seqs[k]) for k in idx)
            width = min(MAXLEN, (longest + 31) // 32 * 32)
            return keras.utils.pad_sequences([self.seqs[k] for k in idx], maxlen=width, padding="post"), self.y[idx]
        def on_epoch_end(self):
            self.epoch += 1
            if self.shuffle:
                self.order = np.random.default_rng(self.epoch).permutation(len(self.batches))

    keras.utils.set_random_seed(1)
    inp = keras.Input(shape=(MAXLEN,) if variant == "fixed" else (None,), dtype="int32")
    x = keras.layers.Embedding(VOCAB, 64)(inp)
    x = keras.layers.Conv1D(64, 7, activation="relu")(x)
    x = keras.layers.GlobalMaxPooling1D()(x)
    x = keras.layers.Dense(64, activation="relu")(x)
    model = keras.Model(inp, keras.layers.Dense(1, activation="sigmoid")(x))
    model.compile(optimizer="adam", loss="binary_crossentropy", metrics=["accuracy"])

    times = []
    class Timer(keras.callbacks.Callback):
        def on_epoch_begin(self, epoch, logs=None):
            self.t = time.perf_counter()
        def on_epoch_end(self, epoch, logs=None):
            times.append(time.perf_counter() - self.t)

    if variant == "fixed":
        xs = keras.utils.pad_sequences(train, maxlen=MAXLEN, padding="post")
        model.fit(xs, y_train, batch_size=BATCH, epochs=3, verbose=0, callbacks=[Timer()])
        acc = model.evaluate(keras.utils.pad_sequences(test, maxlen=MAXLEN, padding="post"), y_test, verbose=0)[1]
        tokens = len(train) * MAXLEN
    else:
        data = Buckets(train, y_train, shuffle=True)
        model.fit(data, epochs=3, verbose=0, callbacks=[Timer()])
        acc = model.evaluate(Buckets(test, y_test, shuffle=True), verbose=0)[1]
        tokens = sum(data[i][0].size for i in range(len(data)))
    out = {"samples_per_s": [len(train) / t for t in times], "accuracy": float(acc), "tokens_per_epoch": int(tokens)}
    handle = getattr(model, "_handle", None)
    if handle is not None and hasattr(handle, "program_cache_stats"):
        out["programs"] = handle.program_cache_stats()
    print("RESULT " + json.dumps(out))
""")


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            return next(l.split(":", 1)[1].strip() for l in f if l.startswith("model name"))
    except (OSError, StopIteration):
        return "unknown CPU"


def run(python, import_line, variant, env):
    code = SCRIPT.replace("IMPORT_LINE", import_line)
    r = subprocess.run([python, "-c", code, variant], capture_output=True, text=True, env=env, timeout=3600)
    if r.returncode != 0:
        sys.exit(f"{python} {variant} failed:\n{r.stderr[-3000:]}")
    line = [l for l in r.stdout.splitlines() if l.startswith("RESULT ")][-1]
    return json.loads(line[7:])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--keras", help="a Python with Keras 3 and TensorFlow (scripts/keras_venv.sh prints one)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--out", default=os.path.join(HERE, "RESULTS_text.md"))
    args = ap.parse_args()
    nnfit_env = dict(os.environ)
    nnfit_env.setdefault("PYTHONPATH", os.path.join(HERE, "..", "build", "release", "python"))
    results = {}
    for run_index in range(args.runs):  # alternate the variants, so load drifts hit both
        for variant in ("fixed", "per batch"):
            r = run(sys.executable, "from nnfit import keras", variant, nnfit_env)
            results.setdefault(("nnfit", variant), []).append(r)
            print(f"nnfit {variant} run {run_index + 1}: {[round(s) for s in r['samples_per_s']]} samples/s, "
                  f"accuracy {r['accuracy']:.4f}, programs {r.get('programs')}", flush=True)
    if args.keras:
        keras_env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        keras_env.update(KERAS_BACKEND="tensorflow", TF_CPP_MIN_LOG_LEVEL="3")
        for variant in ("fixed", "per batch"):
            r = run(args.keras, "import keras", variant, keras_env)
            results[("keras", variant)] = [r]
            print(f"keras {variant}: {[round(s) for s in r['samples_per_s']]} samples/s, accuracy {r['accuracy']:.4f}",
                  flush=True)

    def warm(rs):  # epochs 2 and 3 of every run: after the first epoch planned the shapes
        return statistics.median(s for r in rs for s in r["samples_per_s"][1:])

    def first(rs):
        return statistics.median(r["samples_per_s"][0] for r in rs)

    lines = ["# Text classification with inputs known per batch (issue 36)", "",
             "`python3 bench/varlen_text_bench.py --keras $(scripts/keras_venv.sh) --runs " + str(args.runs) + "` on " +
             os.uname().nodename + " (" + cpu_model() + ", " + str(os.cpu_count()) + " cores), " +
             time.strftime("%Y-%m-%d") + "; the model and data are in the script's "
             "docstring (keras.io's text classification shape on synthetic IMDB-like lengths, batch 32, 3 epochs). "
             "samples/s: the median over epochs 2-3 of every run (epoch 1 plans the programs); first epoch beside it.",
             "", "| framework | variant | samples/s (warm) | first epoch | tokens/epoch | test accuracy | "
             "input shapes planned | programs hits/misses |", "|---|---|---|---|---|---|---|---|"]
    for (fw, variant), rs in results.items():
        p = rs[-1].get("programs")
        lines.append(f"| {fw} | {variant} | {warm(rs):.0f} | {first(rs):.0f} | {rs[-1]['tokens_per_epoch']} | "
                     f"{statistics.median(r['accuracy'] for r in rs):.4f} | "
                     f"{p['input_shapes'] if p else '-'} | {str(p['hits']) + '/' + str(p['misses']) if p else '-'} |")
    n_fixed, n_var = results[("nnfit", "fixed")], results[("nnfit", "per batch")]
    ratio = warm(n_var) / warm(n_fixed)
    token_ratio = ratio * n_var[-1]["tokens_per_epoch"] / n_fixed[-1]["tokens_per_epoch"]
    lines += ["", f"nnfit per-batch / fixed-length samples/s (warm): **{ratio:.2f}x** (target >= 0.90). "
              f"Per token (the per-batch epoch holds {n_var[-1]['tokens_per_epoch'] / n_fixed[-1]['tokens_per_epoch']:.0%} "
              f"of the fixed one's tokens, padding included): {token_ratio:.2f}x the fixed model's tokens/s, the "
              "programs of the other shapes included."]
    if ("keras", "per batch") in results:
        lines.append(f"nnfit / Keras samples/s, per batch: {warm(n_var) / warm(results[('keras', 'per batch')]):.2f}x; "
                     f"fixed: {warm(n_fixed) / warm(results[('keras', 'fixed')]):.2f}x.")
    write_section(args.out, "\n".join(lines))
    print("\n".join(lines))


SECTION_BEGIN = "<!-- begin: bench/varlen_text_bench.py (kept when bench/text_bench.py rewrites this file) -->"
SECTION_END = "<!-- end: bench/varlen_text_bench.py -->"


def write_section(path, text):
    """This bench's section of the text results (RESULTS_text.md), in place of the last one."""
    old = open(path).read() if os.path.exists(path) else ""
    if SECTION_BEGIN in old:
        head, rest = old.split(SECTION_BEGIN, 1)
        tail = rest.split(SECTION_END, 1)[1] if SECTION_END in rest else ""
    else:
        head, tail = old.rstrip("\n") + ("\n\n" if old else ""), ""
    with open(path, "w") as f:
        f.write(head + SECTION_BEGIN + "\n" + text.replace("# Text", "## Text", 1) + "\n" + SECTION_END + tail.rstrip("\n") + "\n")


if __name__ == "__main__":
    main()
