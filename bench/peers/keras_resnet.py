"""Keras 3 (TensorFlow backend) peer of bench/resnet_bench.py: the model of
bench/fashion_mnist_resnet.json built from that file (a Functional ResNet: stem, four
residual blocks of two 3x3 convolutions with batch normalization, the third downsampling
with a 1x1 projection, global average pooling, Dense(10) logits), Adam 1e-3, batch 128, the
first TRAIN_SAMPLES Fashion-MNIST training images scaled to [0, 1], through tf.data
(shuffle, batch, prefetch AUTOTUNE); test accuracy on the 10,000 test images.

usage: python keras_resnet.py EPOCHS THREADS SEED TRAIN_SAMPLES
Prints one JSON line per epoch ({"epoch", "samples_per_s", "test_acc"}) and a summary line.
"""
import gzip
import json
import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")

import numpy as np  # noqa: E402


def images(name, count=None):
    d = os.environ.get("FASHION_MNIST_DIR", "/usr/share/datasets/fashion-mnist")
    x = np.frombuffer(gzip.open(f"{d}/{name}-images-idx3-ubyte.gz").read(), np.uint8, offset=16)
    y = np.frombuffer(gzip.open(f"{d}/{name}-labels-idx1-ubyte.gz").read(), np.uint8, offset=8)
    x = x.reshape(-1, 28, 28, 1).astype(np.float32) / 255
    return (x[:count], y[:count].astype(np.int64)) if count else (x, y.astype(np.int64))


def main(epochs, threads, seed, samples):
    import tensorflow as tf
    import keras
    tf.config.threading.set_intra_op_parallelism_threads(threads)
    tf.config.threading.set_inter_op_parallelism_threads(threads)
    keras.utils.set_random_seed(seed)
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "..", "fashion_mnist_resnet.json")) as f:
        model = keras.models.model_from_json(json.dumps(json.load(f)["model"]))
    model.compile(optimizer=keras.optimizers.Adam(1e-3),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    x, y = images("train", samples)
    tx, ty = images("t10k")
    train = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(len(x), seed=seed).batch(128).prefetch(tf.data.AUTOTUNE)
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
    main(int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]))
