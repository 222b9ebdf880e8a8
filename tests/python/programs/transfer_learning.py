# The Keras guide "Transfer learning & fine-tuning": a frozen base called with
# training=False, a new head, then unfreezing and recompiling with a low learning rate.
import json
import numpy as np
import keras
from keras import layers

rng = np.random.default_rng(0)
x = rng.random((64, 96, 96, 3), dtype="float32")
y = (x[:, :48].mean(axis=(1, 2, 3)) > 0.5).astype("float32")
base_model = keras.applications.MobileNetV2(weights=None, input_shape=(96, 96, 3), include_top=False)
base_model.trainable = False
inputs = keras.Input(shape=(96, 96, 3))
x_ = layers.Rescaling(scale=1 / 127.5, offset=-1)(inputs)
x_ = base_model(x_, training=False)
x_ = layers.GlobalAveragePooling2D()(x_)
x_ = layers.Dropout(0.2)(x_)
outputs = layers.Dense(1)(x_)
model = keras.Model(inputs, outputs)
model.compile(optimizer=keras.optimizers.Adam(), loss=keras.losses.BinaryCrossentropy(from_logits=True),
              metrics=[keras.metrics.BinaryAccuracy()])
before = [w.copy() for w in base_model.get_weights()]
model.fit(x, y, epochs=1, batch_size=16, verbose=0)
frozen_same = all(np.array_equal(a, b) for a, b in zip(before, base_model.get_weights()))
base_model.trainable = True
model.compile(optimizer=keras.optimizers.Adam(1e-5), loss=keras.losses.BinaryCrossentropy(from_logits=True),
              metrics=[keras.metrics.BinaryAccuracy()])
history = model.fit(x, y, epochs=1, batch_size=16, verbose=0)
changed = any(not np.array_equal(a, b) for a, b in zip(before, base_model.get_weights()))
print("RESULT " + json.dumps({"keys": sorted(history.history), "params": model.count_params(),
                              "frozen_same": frozen_same, "unfrozen_changed": changed}))
