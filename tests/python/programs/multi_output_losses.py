# The Keras guide "Training & evaluation with the built-in methods", multi-input and
# multi-output models: an image and a timeseries input, a score and a class output, a loss,
# a list of metrics and a loss weight per output (dicts keyed by the outputs' names).
# Batches of one size: Keras 3 logs each output's loss as the mean of the batches' means,
# nnfit as the mean over samples (docs/python.md), which differ when the last batch is partial.
import json
import numpy as np
import keras
from keras import layers

image_input = keras.Input(shape=(16, 16, 3), name="img_input")
timeseries_input = keras.Input(shape=(None, 10), name="ts_input")
x1 = layers.Conv2D(3, 3)(image_input)
x1 = layers.GlobalMaxPooling2D()(x1)
x2 = layers.Conv1D(3, 3)(timeseries_input)
x2 = layers.GlobalMaxPooling1D()(x2)
x = layers.concatenate([x1, x2])
score_output = layers.Dense(1, name="score_output")(x)
class_output = layers.Dense(5, name="class_output")(x)
model = keras.Model(inputs=[image_input, timeseries_input], outputs=[score_output, class_output])
init = np.random.default_rng(1)
model.set_weights([(init.normal(size=w.shape) * 0.3).astype("float32") for w in model.get_weights()])
model.compile(
    optimizer=keras.optimizers.RMSprop(1e-3),
    loss={"score_output": keras.losses.MeanSquaredError(),
          "class_output": keras.losses.CategoricalCrossentropy(from_logits=True)},
    metrics={"score_output": [keras.metrics.MeanAbsolutePercentageError(), keras.metrics.MeanAbsoluteError()],
             "class_output": [keras.metrics.CategoricalAccuracy()]},
    loss_weights={"score_output": 2.0, "class_output": 1.0})
rng = np.random.default_rng(0)
img_data = rng.random(size=(100, 16, 16, 3)).astype("float32")
ts_data = rng.random(size=(100, 20, 10)).astype("float32")
score_targets = rng.random(size=(100, 1)).astype("float32") + 0.5
class_targets = keras.utils.to_categorical(rng.integers(0, 5, size=100), 5)
history = model.fit({"img_input": img_data, "ts_input": ts_data},
                    {"score_output": score_targets, "class_output": class_targets},
                    batch_size=20, epochs=2, shuffle=False, verbose=0)
scores = model.evaluate([img_data, ts_data], [score_targets, class_targets], batch_size=25, verbose=0, return_dict=True)
print("RESULT " + json.dumps({
    "keys": sorted(history.history), "evaluate_keys": sorted(scores), "params": model.count_params(), "rtol": 1e-4,
    "history": {k: [float(v) for v in vals] for k, vals in sorted(history.history.items())},
    "evaluate": {k: float(v) for k, v in sorted(scores.items())}}))
