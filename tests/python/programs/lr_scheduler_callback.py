# The Keras guide "Writing your own callbacks": a learning-rate scheduler callback that sets
# the optimizer's rate at each epoch's start, then keras.callbacks.LearningRateScheduler,
# and a callback reading the logs of batches, epochs and evaluation.
import json
import numpy as np
import keras
from keras import layers

LR_SCHEDULE = [(2, 0.05), (4, 0.01)]


def lr_schedule(epoch, lr):
    if epoch < LR_SCHEDULE[0][0] or epoch > LR_SCHEDULE[-1][0]:
        return lr
    for i in range(len(LR_SCHEDULE)):
        if epoch == LR_SCHEDULE[i][0]:
            return LR_SCHEDULE[i][1]
    return lr


class CustomLearningRateScheduler(keras.callbacks.Callback):
    def __init__(self, schedule):
        super().__init__()
        self.schedule = schedule
        self.rates = []

    def on_epoch_begin(self, epoch, logs=None):
        if not hasattr(self.model.optimizer, "learning_rate"):
            raise ValueError('Optimizer must have a "learning_rate" attribute.')
        lr = float(np.array(self.model.optimizer.learning_rate))
        scheduled_lr = self.schedule(epoch, lr)
        self.model.optimizer.learning_rate = scheduled_lr
        self.rates.append(scheduled_lr)


class LossAndErrorLogging(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.seen = {"batch": [], "epoch": [], "test_end": []}

    def on_train_batch_end(self, batch, logs=None):
        self.seen["batch"] = sorted(logs)

    def on_epoch_end(self, epoch, logs=None):
        self.seen["epoch"] = sorted(logs)

    def on_test_end(self, logs=None):
        self.seen["test_end"] = sorted(logs)


def get_model():
    model = keras.Sequential([keras.Input((6,)), layers.Dense(8, activation="relu"), layers.Dense(1)])
    init = np.random.default_rng(1)
    model.set_weights([(init.normal(size=w.shape) * 0.4).astype("float32") for w in model.get_weights()])
    model.compile(optimizer=keras.optimizers.SGD(learning_rate=0.1), loss="mean_squared_error", metrics=["mean_absolute_error"])
    return model


rng = np.random.default_rng(0)
x = rng.normal(size=(160, 6)).astype("float32")
y = (x[:, :3].sum(axis=1, keepdims=True) * 0.5).astype("float32")
model = get_model()
scheduler, logging = CustomLearningRateScheduler(lr_schedule), LossAndErrorLogging()
h1 = model.fit(x, y, batch_size=32, epochs=6, shuffle=False, verbose=0, validation_split=0.2, callbacks=[scheduler, logging])
model = get_model()
h2 = model.fit(x, y, batch_size=32, epochs=4, shuffle=False, verbose=0,
               callbacks=[keras.callbacks.LearningRateScheduler(lambda epoch, lr: lr if epoch < 2 else lr * 0.5)])
print("RESULT " + json.dumps({
    "rates": scheduler.rates, "seen": logging.seen, "keys": [sorted(h1.history), sorted(h2.history)], "rtol": 1e-4,
    "loss": [float(v) for v in h1.history["loss"]], "val_loss": [float(v) for v in h1.history["val_loss"]],
    "scheduled": [float(v) for v in h2.history["learning_rate"]], "loss2": [float(v) for v in h2.history["loss"]]}))
