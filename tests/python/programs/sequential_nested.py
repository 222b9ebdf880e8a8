# Models as layers of a Sequential, as tutorials write transfer learning:
# Sequential([Input, preprocessing Sequential (no Input of its own), frozen base model,
# pooling, head]); fit frozen, unfreeze, recompile with a low rate, fit again. The weights are
# set from a seeded generator so both frameworks compute the same numbers.
import json
import numpy as np
import keras
from keras import layers


def fill(model):
    for layer in model.layers:
        ws = layer.get_weights()
        if ws and not hasattr(layer, "layers") and not isinstance(layer, layers.BatchNormalization):
            layer.set_weights([(0.2 * np.sin(np.arange(w.size) * 0.37 + k)).reshape(w.shape).astype("float32")
                               for k, w in enumerate(ws)])


prep = keras.Sequential([layers.Rescaling(1 / 255.0), layers.ZeroPadding2D(1)], name="prep")
base = keras.Sequential([keras.Input((10, 10, 3)), layers.Conv2D(4, 3, activation="relu", name="base_conv"),
                         layers.BatchNormalization(name="base_bn")], name="base")
fill(base)
base.trainable = False
model = keras.Sequential([keras.Input((8, 8, 3)), prep, base, layers.GlobalAveragePooling2D(), layers.Dense(1, name="head")])
fill(model)
lines = []
model.summary(print_fn=lambda line, *a, **k: lines.append(line))
counts = [len(model.trainable_weights), len(model.non_trainable_weights), model.count_params()]
x = (np.arange(16 * 8 * 8 * 3).reshape(16, 8, 8, 3) % 251).astype("float32")
y = (np.arange(16) % 2).reshape(16, 1).astype("float32")
model.compile(optimizer=keras.optimizers.SGD(0.05), loss="mse")
frozen = base.get_weights()[0].copy()
first = model.fit(x, y, epochs=2, batch_size=4, shuffle=False, verbose=0)
unchanged = bool(np.array_equal(frozen, base.get_weights()[0]))
base.trainable = True
model.compile(optimizer=keras.optimizers.SGD(1e-3), loss="mse")
second = model.fit(x, y, epochs=2, batch_size=4, shuffle=False, verbose=0)
print("RESULT " + json.dumps({
    "layers": [l.name for l in model.layers], "counts": counts, "unfrozen_counts": len(model.trainable_weights),
    "summary_totals": [l.strip() for l in "\n".join(lines).splitlines() if "params" in l],
    "frozen_unchanged": unchanged, "changed_after_unfreezing": bool(not np.array_equal(frozen, base.get_weights()[0])),
    "first": [float(v) for v in first.history["loss"]], "second": [float(v) for v in second.history["loss"]],
    "predict": np.asarray(model.predict(x[:4], verbose=0), "float64").ravel().round(6).tolist(),
    "rtol": 1e-4, "atol": 1e-6}))
