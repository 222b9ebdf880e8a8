# keras.io "Simple MNIST MLP" style: a Sequential MLP with Dropout, SGD with Nesterov
# momentum on an ExponentialDecay schedule; the learning rate the schedule has reached and
# the optimizer's iteration count after training.
import json
import numpy as np
import keras
from keras import layers

rng = np.random.default_rng(0)
x_train = rng.random((256, 64)).astype("float32")
y_train = keras.utils.to_categorical((x_train[:, :8].sum(axis=1) * 2).astype("int64") % 10, 10)
model = keras.Sequential([
    keras.Input(shape=(64,)),
    layers.Dense(32, activation="relu"),
    layers.Dense(32, activation="relu"),
    layers.Dense(10, activation="softmax"),
])
init = np.random.default_rng(1)
model.set_weights([(init.normal(size=w.shape) * 0.2).astype("float32") for w in model.get_weights()])
lr_schedule = keras.optimizers.schedules.ExponentialDecay(initial_learning_rate=0.1, decay_steps=4, decay_rate=0.8,
                                                          staircase=True)
optimizer = keras.optimizers.SGD(learning_rate=lr_schedule, momentum=0.9, nesterov=True)
model.compile(loss="categorical_crossentropy", optimizer=optimizer, metrics=["accuracy", "top_k_categorical_accuracy"])
history = model.fit(x_train, y_train, batch_size=32, epochs=3, shuffle=False, verbose=0, validation_split=0.25)
score = model.evaluate(x_train, y_train, verbose=0)
print("RESULT " + json.dumps({
    "keys": sorted(history.history), "params": model.count_params(), "iterations": int(model.optimizer.iterations),
    "schedule": sorted(lr_schedule.get_config()), "rtol": 1e-4,
    "learning_rate": float(np.array(model.optimizer.learning_rate)),
    "history": {k: [float(v) for v in vals] for k, vals in sorted(history.history.items())},
    "evaluate": [float(v) for v in score]}))
