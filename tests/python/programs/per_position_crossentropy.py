# Crossentropy at every position, as sequence labeling (keras.io's NER: Embedding, a
# bidirectional LSTM, a Dense softmax on each step) and segmentation (keras.io's U-Net:
# a softmax on each pixel) train: sparse and one-hot targets, accuracy and top-k accuracy.
# Weights set from a seeded generator so both frameworks compute the same numbers.
import json
import numpy as np
import keras
from keras import layers


def fill(model):
    for layer in model.layers:
        ws = layer.get_weights()
        if ws and not isinstance(layer, layers.BatchNormalization):
            layer.set_weights([(0.3 * np.sin(np.arange(w.size) * 0.61 + k)).reshape(w.shape).astype("float32")
                               for k, w in enumerate(ws)])


rng = np.random.default_rng(0)
ids = rng.integers(1, 50, size=(32, 7))
tags = rng.integers(0, 4, size=(32, 7))
tagger = keras.Sequential([keras.Input((7,), dtype="int32"), layers.Embedding(50, 8),
                           layers.Bidirectional(layers.LSTM(6, return_sequences=True)),
                           layers.Dense(4, activation="softmax")])
fill(tagger)
tagger.compile(optimizer=keras.optimizers.SGD(0.1), loss="sparse_categorical_crossentropy", metrics=["accuracy"])
sparse = tagger.fit(ids, tags, epochs=2, batch_size=8, shuffle=False, verbose=0)
tagger2 = keras.Sequential([keras.Input((7,), dtype="int32"), layers.Embedding(50, 8), layers.LSTM(6, return_sequences=True),
                            layers.Dense(4, activation="softmax")])
fill(tagger2)
tagger2.compile(optimizer=keras.optimizers.SGD(0.1), loss="categorical_crossentropy",
                metrics=["categorical_accuracy", keras.metrics.TopKCategoricalAccuracy(k=2)])
onehot = tagger2.fit(ids, np.eye(4, dtype="float32")[tags], epochs=2, batch_size=8, shuffle=False, verbose=0)

images = rng.random((8, 8, 8, 3)).astype("float32")
masks = rng.integers(0, 3, size=(8, 8, 8, 1))
seg_in = keras.Input((8, 8, 3))
x = layers.Conv2D(4, 3, padding="same", activation="relu")(seg_in)
x = layers.Conv2D(4, 3, strides=2, padding="same", activation="relu")(x)
x = layers.Conv2DTranspose(4, 3, strides=2, padding="same")(x)
segmenter = keras.Model(seg_in, layers.Conv2D(3, 1, activation="softmax")(x))
fill(segmenter)
segmenter.compile(optimizer=keras.optimizers.Adam(1e-3), loss="sparse_categorical_crossentropy", metrics=["accuracy"])
seg = segmenter.fit(images, masks, epochs=2, batch_size=4, shuffle=False, verbose=0)
print("RESULT " + json.dumps({
    "sparse": {k: [float(v) for v in vs] for k, vs in sparse.history.items()},
    "onehot": {k: [float(v) for v in vs] for k, vs in onehot.history.items()},
    "segmentation": {k: [float(v) for v in vs] for k, vs in seg.history.items()},
    "evaluate": [float(v) for v in segmenter.evaluate(images, masks, verbose=0)],
    "rtol": 1e-4, "atol": 1e-5}))
