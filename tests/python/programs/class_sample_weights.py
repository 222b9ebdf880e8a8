# The Keras guide "Training & evaluation with the built-in methods": class weights, then
# sample weights, with validation_split, on the guide's uncompiled MLP with RMSprop.
import json
import numpy as np
import keras
from keras import layers


def get_uncompiled_model():
    inputs = keras.Input(shape=(20,), name="digits")
    x = layers.Dense(32, activation="relu", name="dense_1")(inputs)
    x = layers.Dense(32, activation="relu", name="dense_2")(x)
    outputs = layers.Dense(10, activation="softmax", name="predictions")(x)
    model = keras.Model(inputs=inputs, outputs=outputs)
    init = np.random.default_rng(1)
    model.set_weights([(init.normal(size=w.shape) * 0.2).astype("float32") for w in model.get_weights()])
    return model


def get_compiled_model():
    model = get_uncompiled_model()
    model.compile(optimizer=keras.optimizers.RMSprop(learning_rate=1e-3), loss="sparse_categorical_crossentropy",
                  metrics=["sparse_categorical_accuracy"])
    return model


rng = np.random.default_rng(0)
x_train = rng.normal(size=(300, 20)).astype("float32")
y_train = (np.abs(x_train[:, :5]).argmax(axis=1) * 2 + (x_train[:, 5] > 0)).astype("int64")
class_weight = {i: 1.0 for i in range(10)}
class_weight[5] = 2.0
model = get_compiled_model()
h1 = model.fit(x_train, y_train, class_weight=class_weight, batch_size=64, epochs=2, shuffle=False, verbose=0)
sample_weight = np.ones(shape=(len(y_train),))
sample_weight[y_train == 5] = 2.0
model = get_compiled_model()
h2 = model.fit(x_train, y_train, sample_weight=sample_weight, batch_size=64, epochs=2, shuffle=False, verbose=0,
               validation_split=0.2)
weighted = model.evaluate(x_train[:64], y_train[:64], sample_weight=sample_weight[:64], verbose=0)
print("RESULT " + json.dumps({
    "keys": [sorted(h1.history), sorted(h2.history)], "rtol": 1e-4,
    "class_weighted": {k: [float(v) for v in vals] for k, vals in sorted(h1.history.items())},
    "sample_weighted": {k: [float(v) for v in vals] for k, vals in sorted(h2.history.items())},
    "evaluate": [float(v) for v in weighted]}))
