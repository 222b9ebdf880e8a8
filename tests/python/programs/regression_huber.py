# A tabular regression as keras.io's structured-data examples: a Normalization layer adapted
# to the training features, a Huber loss with MAE and RMSE metrics, then evaluate and
# predict with their own batch sizes, evaluate(return_dict=True) and predict's shape.
import json
import numpy as np
import keras
from keras import layers

rng = np.random.default_rng(0)
x = (rng.normal(size=(300, 5)) * [1.0, 10.0, 0.1, 5.0, 2.0] + [0.0, 50.0, 1.0, -3.0, 4.0]).astype("float32")
y = (0.5 * x[:, 0] + 0.05 * x[:, 1] - 3.0 * x[:, 2] + rng.standard_cauchy(300) * 0.1).astype("float32")[:, None]
normalizer = layers.Normalization(axis=-1)
normalizer.adapt(x[:240])
model = keras.Sequential([keras.Input(shape=(5,)), normalizer, layers.Dense(16, activation="relu"), layers.Dense(1)])
init = np.random.default_rng(1)
weights = model.get_weights()
model.set_weights(weights[:3] + [(init.normal(size=w.shape) * 0.3).astype("float32") for w in weights[3:]])
model.compile(optimizer=keras.optimizers.Adam(0.01), loss=keras.losses.Huber(delta=1.0),
              metrics=["mae", keras.metrics.RootMeanSquaredError()])
history = model.fit(x[:240], y[:240], batch_size=24, epochs=3, shuffle=False, verbose=0, validation_split=0.1)
scores = model.evaluate(x[240:], y[240:], batch_size=7, verbose=0, return_dict=True)
listed = model.evaluate(x[240:], y[240:], batch_size=60, verbose=0)
predictions = model.predict(x[240:], batch_size=11, verbose=0)
print("RESULT " + json.dumps({
    "keys": sorted(history.history), "evaluate_keys": sorted(scores), "params": model.count_params(),
    "predictions_shape": list(predictions.shape), "rtol": 1e-4,
    "mean": [float(v) for v in np.ravel(normalizer.mean)], "variance": [float(v) for v in np.ravel(normalizer.variance)],
    "history": {k: [float(v) for v in vals] for k, vals in sorted(history.history.items())},
    "evaluate": {k: float(v) for k, v in sorted(scores.items())}, "listed": [float(v) for v in listed],
    "predicted": predictions[:5, 0].astype(float).tolist()}))
