# keras.utils.PyDataset and a Lambda layer, as the Keras guides use them.
import json
import numpy as np
import keras
from keras import layers, ops


class Batches(keras.utils.PyDataset):
    def __init__(self, x, y, batch_size, **kwargs):
        super().__init__(**kwargs)
        self.x, self.y, self.batch_size = x, y, batch_size

    def __len__(self):
        return int(np.ceil(len(self.x) / self.batch_size))

    def __getitem__(self, idx):
        low = idx * self.batch_size
        high = min(low + self.batch_size, len(self.x))
        return self.x[low:high], self.y[low:high]


rng = np.random.default_rng(0)
x = rng.normal(size=(200, 8)).astype("float32")
y = (x[:, 0] > 0).astype("int64")
model = keras.Sequential([keras.Input((8,)), layers.Lambda(lambda t: ops.abs(t) * 2.0), layers.Dense(8, activation="relu"),
                          layers.Dense(2, activation="softmax")])
model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
history = model.fit(Batches(x, y, 32), epochs=2, validation_data=Batches(x[:40], y[:40], 20), verbose=0)
predictions = model.predict(Batches(x[:50], y[:50], 16), verbose=0)
print("RESULT " + json.dumps({"keys": sorted(history.history), "params": model.count_params(),
                              "predictions": list(predictions.shape)}))
