# compile(metrics=[...]) with Keras's metric names as strings (and loss="dice" / "tversky"), as the Keras guides and API
# pages write them: the ones nnfit's engine computes (mse, AUC) and the ones nnfit.keras
# traces into the step (kl_divergence, r2_score, poisson, ...), each logged under the
# string given; an unknown name raises Keras's error.
import json
import numpy as np
import keras

names = ["mse", "kl_divergence", "r2_score", "poisson", "cosine_similarity", "log_cosh_error",
         "mean_squared_logarithmic_error", "AUC", "acc"]
model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2, activation="sigmoid")])
model.set_weights([np.linspace(-0.3, 0.3, 8).reshape(4, 2).astype("float32"), np.zeros(2, "float32")])
model.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse", metrics=names)
x = np.linspace(0, 1, 64).reshape(16, 4).astype("float32")
y = (np.linspace(0.1, 0.9, 32).reshape(16, 2) > 0.5).astype("float32")
history = model.fit(x, y, epochs=3, batch_size=4, shuffle=False, verbose=0)
evaluated = model.evaluate(x, y, verbose=0, return_dict=True)
try:
    bad = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
    bad.compile("sgd", "mse", metrics=["nope"])  # Keras raises here at fit, nnfit already at compile
    bad.fit(x, y[:, :1], verbose=0)
    error = None
except ValueError as e:
    error = str(e)
by_name = {}
for loss in ("dice", "tversky"):
    seg = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2, activation="sigmoid")])
    seg.set_weights([np.linspace(-0.3, 0.3, 8).reshape(4, 2).astype("float32"), np.zeros(2, "float32")])
    seg.compile(optimizer=keras.optimizers.SGD(0.1), loss=loss)
    by_name[loss] = [float(v) for v in seg.fit(x, y, epochs=2, batch_size=4, shuffle=False, verbose=0).history["loss"]]
print("RESULT " + json.dumps({"history": {k: [float(v) for v in vs] for k, vs in history.history.items()},
                              "losses_by_name": by_name,
                              "evaluate": {k: float(v) for k, v in evaluated.items()}, "error": error,
                              "rtol": 1e-4, "atol": 1e-6}))
