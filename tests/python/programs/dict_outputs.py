# Dict inputs and outputs, as the Functional API guide's ticket classifier can be written
# (inputs and outputs keyed by name), and a subclassed model whose call returns a dict:
# model.output, predict and the logs by key; the weights are set from a seeded generator so
# both frameworks compute the same numbers.
import json
import numpy as np
import keras
from keras import layers


def fill(model):
    for layer in model.layers:
        layer.set_weights([(0.2 * np.sin(np.arange(w.size) * 0.37 + k)).reshape(w.shape).astype("float32")
                           for k, w in enumerate(layer.get_weights())])


num_tags, num_words, num_departments = 12, 200, 4
title_input = keras.Input(shape=(8,), name="title")
tags_input = keras.Input(shape=(num_tags,), name="tags")
title_features = layers.GlobalAveragePooling1D()(layers.Embedding(num_words, 16)(title_input))
x = layers.concatenate([title_features, tags_input])
model = keras.Model(inputs={"tags": tags_input, "title": title_input},
                    outputs={"priority": layers.Dense(1, name="priority_head")(x),
                             "department": layers.Dense(num_departments, name="department_head")(x)})
fill(model)
model.compile(optimizer=keras.optimizers.SGD(0.1),
              loss={"priority": keras.losses.BinaryCrossentropy(from_logits=True),
                    "department": keras.losses.CategoricalCrossentropy(from_logits=True)},
              loss_weights={"priority": 1.0, "department": 0.2}, metrics={"department": ["categorical_accuracy"]})
rng = np.random.default_rng(0)
data = {"title": rng.integers(0, num_words, size=(64, 8)), "tags": rng.integers(0, 2, size=(64, num_tags)).astype("float32")}
targets = {"priority": rng.integers(0, 2, size=(64, 1)).astype("float32"),
           "department": np.eye(num_departments, dtype="float32")[rng.integers(0, num_departments, size=64)]}
history = model.fit(data, targets, epochs=3, batch_size=16, shuffle=False, verbose=0)
pred = model.predict(data, verbose=0)


class TwoHeads(keras.Model):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.hidden = layers.Dense(8, activation="relu")
        self.score = layers.Dense(1)
        self.classes = layers.Dense(3)

    def call(self, inputs):
        z = self.hidden(inputs)
        return {"score": self.score(z), "classes": self.classes(z)}


sub = TwoHeads()
sub_x = rng.normal(size=(32, 5)).astype("float32")
sub(sub_x[:1])
fill(sub)
sub.compile(optimizer=keras.optimizers.SGD(0.05), loss={"score": "mse", "classes": "mse"})
sub_history = sub.fit(sub_x, {"score": rng.normal(size=(32, 1)), "classes": rng.normal(size=(32, 3))}, epochs=2,
                      batch_size=8, shuffle=False, verbose=0)
sub_pred = sub.predict(sub_x, verbose=0)
print("RESULT " + json.dumps({
    "output": sorted(model.output), "outputs": [list(t.shape) for t in model.outputs], "params": model.count_params(),
    "history": {k: [float(v) for v in vs] for k, vs in history.history.items()},
    "predict": {k: np.asarray(v[:3], "float64").round(6).tolist() for k, v in pred.items()},
    "sub_history": {k: [float(v) for v in vs] for k, vs in sub_history.history.items()},
    "sub_predict": {k: np.asarray(v[:3], "float64").round(6).tolist() for k, v in sub_pred.items()},
    "rtol": 1e-4, "atol": 1e-5}))
