"""Keras 3 (TensorFlow backend) peer of bench/text_bench.py: the model of
bench/text_MODEL.json built from that file (bilstm: Embedding(2000, 32, mask_zero=True) ->
Bidirectional(LSTM(32)) -> Dense(2) logits; transformer: Embedding(2000, 64,
mask_zero=True) -> a Transformer encoder block -> GlobalAveragePooling1D -> Dense(2)),
Adam 1e-3, batch 64, fed through tf.data (shuffle, batch, prefetch AUTOTUNE).

usage: python keras_text.py DATA_DIR EPOCHS THREADS SEED [bilstm|transformer]
Prints one JSON line per epoch ({"epoch", "samples_per_s", "test_acc"}) and a summary
line ({"peer", "epochs"}).
"""
import json
import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")

import numpy as np  # noqa: E402


def main(data, epochs, threads, seed, model_name="bilstm"):
    import tensorflow as tf
    import keras
    tf.config.threading.set_intra_op_parallelism_threads(threads)
    tf.config.threading.set_inter_op_parallelism_threads(threads)
    keras.utils.set_random_seed(seed)
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "..", f"text_{model_name}.json")) as f:
        model = keras.models.model_from_json(json.dumps(json.load(f)["model"]))
    model.compile(optimizer=keras.optimizers.Adam(1e-3),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    x, y = np.load(f"{data}/train_x.npy"), np.load(f"{data}/train_y.npy")
    tx, ty = np.load(f"{data}/test_x.npy"), np.load(f"{data}/test_y.npy")
    train = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(len(x), seed=seed).batch(64).prefetch(tf.data.AUTOTUNE)
    records = []
    for epoch in range(1, epochs + 1):
        start = time.perf_counter()
        model.fit(train, epochs=1, verbose=0)
        seconds = time.perf_counter() - start
        _, acc = model.evaluate(tx, ty, batch_size=256, verbose=0)
        rec = {"epoch": epoch, "samples_per_s": len(x) / seconds, "test_acc": float(acc)}
        records.append(rec)
        print(json.dumps(rec), flush=True)
    print(json.dumps({"peer": f"tensorflow {tf.__version__} keras {keras.__version__}", "epochs": records}))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5] if len(sys.argv) > 5 else "bilstm")
