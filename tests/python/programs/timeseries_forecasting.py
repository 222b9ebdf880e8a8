# keras.io "Timeseries forecasting for weather prediction": normalized features, windows of
# past steps predicting a value ahead, an LSTM(32) regressor trained with EarlyStopping and
# ModelCheckpoint(save_best_only, save_weights_only), the best weights loaded back.
import json
import os
import tempfile
import numpy as np
import keras
from keras import layers

rng = np.random.default_rng(0)
steps = np.arange(900)
features = np.stack([np.sin(steps / 20.0), np.cos(steps / 33.0), rng.normal(scale=0.1, size=steps.size)], 1)
features = ((features - features.mean(axis=0)) / features.std(axis=0)).astype("float32")
past, future = 24, 6
windows = np.lib.stride_tricks.sliding_window_view(features, past, axis=0).transpose(0, 2, 1)[: -future]
targets = features[past + future - 1:, 0:1]
x_train, y_train = windows[:600:4], targets[:600:4]
x_val, y_val = windows[600::4], targets[600::4]

inputs = keras.layers.Input(shape=(past, 3))
lstm_out = keras.layers.LSTM(32)(inputs)
outputs = keras.layers.Dense(1)(lstm_out)
model = keras.Model(inputs=inputs, outputs=outputs)
init = np.random.default_rng(1)
model.set_weights([(init.normal(size=w.shape) * 0.2).astype("float32") for w in model.get_weights()])
model.compile(optimizer=keras.optimizers.Adam(learning_rate=0.001), loss="mse")
with tempfile.TemporaryDirectory() as d:
    path_checkpoint = os.path.join(d, "model_checkpoint.weights.h5")
    es_callback = keras.callbacks.EarlyStopping(monitor="val_loss", min_delta=0, patience=5)
    modelckpt_callback = keras.callbacks.ModelCheckpoint(monitor="val_loss", filepath=path_checkpoint, verbose=0,
                                                         save_weights_only=True, save_best_only=True)
    history = model.fit(x_train, y_train, epochs=4, batch_size=30, shuffle=False, verbose=0,
                        validation_data=(x_val, y_val), callbacks=[es_callback, modelckpt_callback])
    best = min(history.history["val_loss"])
    model.load_weights(path_checkpoint)
    reloaded = model.evaluate(x_val, y_val, verbose=0)
print("RESULT " + json.dumps({
    "shapes": [list(x_train.shape), list(y_train.shape)], "keys": sorted(history.history), "params": model.count_params(),
    "rtol": 1e-4, "history": {k: [float(v) for v in vals] for k, vals in sorted(history.history.items())},
    "best": float(best), "reloaded": float(reloaded),
    "forecast": model.predict(x_val[:3], verbose=0).astype(float).ravel().tolist()}))
