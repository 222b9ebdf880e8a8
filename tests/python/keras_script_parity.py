"""One Keras script, run under real Keras (from PyPI, in the Keras venv) and under
`from nnfit import keras` (the package under test): the History's keys, the summary's
layer table and the test accuracy after training must agree.

usage: keras_script_parity.py KERAS_PYTHON [NNFIT_PYTHON]
KERAS_PYTHON runs the script with `import keras` (scripts/keras_venv.sh prints one);
NNFIT_PYTHON (default: this interpreter) with `from nnfit import keras`, importing nnfit
from its PYTHONPATH. The data: Fashion-MNIST from Debian's dataset-fashion-mnist (a
12,000-image training subset, 2,000 test images). Accuracy tolerance: 0.03 absolute, which
covers the two frameworks' different initial weights and shuffles at this size (the
accuracy itself is near 0.83).
"""
import sys
import textwrap

import parity_runs

SCRIPT = textwrap.dedent("""
    import gzip, json, sys
    import numpy as np
    IMPORT_LINE
    from keras import layers  # noqa: the same import under both

    def idx(path):
        with gzip.open(path) as f:
            data = f.read()
        dims = data[3]
        shape = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(dims)]
        return np.frombuffer(data, np.uint8, offset=4 + 4 * dims).reshape(shape)

    root = "/usr/share/datasets/fashion-mnist"
    x = idx(f"{root}/train-images-idx3-ubyte.gz")[:12000].reshape(-1, 784).astype("float32") / 255.0
    y = idx(f"{root}/train-labels-idx1-ubyte.gz")[:12000].astype("int64")
    xt = idx(f"{root}/t10k-images-idx3-ubyte.gz")[:2000].reshape(-1, 784).astype("float32") / 255.0
    yt = idx(f"{root}/t10k-labels-idx1-ubyte.gz")[:2000].astype("int64")

    keras.utils.set_random_seed(1)
    model = keras.Sequential([keras.Input(shape=(784,)), layers.Dense(128, activation="relu"),
                              layers.Dropout(0.2), layers.Dense(10, activation="softmax")])
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    lines = []
    model.summary(print_fn=lambda line, *a, **k: lines.append(line))
    history = model.fit(x, y, batch_size=128, epochs=4, validation_split=0.1, verbose=0)
    loss, acc = model.evaluate(xt, yt, verbose=0)
    print("PARITY " + json.dumps({"keys": list(history.history), "epochs": len(history.epoch),
                                  "summary": lines, "accuracy": acc}))
""")


def table_rows(lines):
    """The summary's layer rows (name (type), output shape, params) and totals."""
    rows = []
    for line in "\n".join(lines).split("\n"):  # Keras passes the whole table as one string
        line = line.replace("\x1b[1m", "").replace("\x1b[0m", "")
        if line.startswith("│"):
            rows.append(tuple(cell.strip() for cell in line.strip("│").split("│")))
        elif "params:" in line:
            key = line.split(":")[0].strip()
            if key != "Optimizer params":  # Keras prints it once compiled; nnfit's engine builds it at fit
                rows.append((key, line.split(":")[1].split("(")[0].strip()))
    return rows


def main():
    ref, got = parity_runs.run_both(SCRIPT, sys.argv, timeout=1200)
    failures = []
    if got["keys"] != ref["keys"]:
        failures.append(f"History keys: nnfit {got['keys']}, Keras {ref['keys']}")
    if got["epochs"] != ref["epochs"]:
        failures.append(f"epochs: nnfit {got['epochs']}, Keras {ref['epochs']}")
    if table_rows(got["summary"]) != table_rows(ref["summary"]):
        failures.append("summary tables differ:\n  nnfit: " + "\n         ".join(map(str, table_rows(got["summary"]))) +
                        "\n  Keras: " + "\n         ".join(map(str, table_rows(ref["summary"]))))
    if abs(got["accuracy"] - ref["accuracy"]) > 0.03:
        failures.append(f"test accuracy: nnfit {got['accuracy']:.4f}, Keras {ref['accuracy']:.4f} (tolerance 0.03)")
    print(f"History keys {got['keys']}; summary rows {len(table_rows(got['summary']))}; "
          f"test accuracy nnfit {got['accuracy']:.4f}, Keras {ref['accuracy']:.4f}")
    if failures:
        sys.exit("\n".join(failures))
    print("parity: ok")


if __name__ == "__main__":
    main()
