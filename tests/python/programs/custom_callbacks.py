# The Keras guide "Writing your own callbacks".
import json
import numpy as np
import keras
from keras import layers

seen = {"batches": 0, "epochs": 0, "test": 0, "keys": []}


class CustomCallback(keras.callbacks.Callback):
    def on_train_batch_end(self, batch, logs=None):
        seen["batches"] += 1

    def on_epoch_end(self, epoch, logs=None):
        seen["epochs"] += 1
        seen["keys"] = sorted(logs)

    def on_test_batch_end(self, batch, logs=None):
        seen["test"] += 1


class EarlyStoppingAtMinLoss(keras.callbacks.Callback):
    def __init__(self, patience=0):
        super().__init__()
        self.patience = patience
        self.best_weights = None

    def on_train_begin(self, logs=None):
        self.wait, self.stopped_epoch, self.best = 0, 0, np.inf

    def on_epoch_end(self, epoch, logs=None):
        current = logs.get("loss")
        if np.less(current, self.best):
            self.best, self.wait = current, 0
            self.best_weights = self.model.get_weights()
        else:
            self.wait += 1
            if self.wait >= self.patience:
                self.stopped_epoch = epoch
                self.model.stop_training = True
                self.model.set_weights(self.best_weights)


rng = np.random.default_rng(0)
x = rng.normal(size=(128, 4)).astype("float32")
y = x.sum(axis=1, keepdims=True)
model = keras.Sequential([keras.Input((4,)), layers.Dense(1)])
model.compile(optimizer=keras.optimizers.RMSprop(learning_rate=0.1), loss="mean_squared_error", metrics=["mean_absolute_error"])
model.fit(x, y, batch_size=32, epochs=3, verbose=0, validation_split=0.25,
          callbacks=[CustomCallback(), EarlyStoppingAtMinLoss(patience=1)])
print("RESULT " + json.dumps(seen))
