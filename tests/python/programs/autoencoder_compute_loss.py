# The keras.io autoencoder ("Building Autoencoders in Keras": a Dense encoder to a small code,
# a sigmoid decoder, binary crossentropy on the pixels), written as Keras 3's guide
# "Customizing what happens in fit()" has it: a subclassed Model whose compute_loss compares
# the reconstruction with its input x, trained with fit(x) and no targets, validated on
# (x_val,), then evaluated and used to reconstruct.
import json
import numpy as np
import keras
from keras import layers, ops


class Autoencoder(keras.Model):
    def __init__(self, code_size=8, pixels=144, **kwargs):
        super().__init__(**kwargs)
        self.encoder = layers.Dense(code_size, activation="relu")
        self.decoder = layers.Dense(pixels, activation="sigmoid")

    def call(self, inputs):
        return self.decoder(self.encoder(inputs))

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        p = ops.clip(y_pred, 1e-7, 1.0 - 1e-7)
        return -ops.mean(x * ops.log(p) + (1.0 - x) * ops.log(1.0 - p))


# Synthetic 12x12 "digits": a bright bar at a random row and column, on faint noise.
rng = np.random.default_rng(0)
images = rng.uniform(0.0, 0.1, size=(300, 12, 12)).astype("float32")
for i, (r, c) in enumerate(rng.integers(1, 11, size=(300, 2))):
    images[i, r, :] = 0.9
    images[i, :, c] = 0.8
flat = images.reshape(300, 144)
x_train, x_val = flat[:240], flat[240:]

model = Autoencoder()
model(x_train[:1])
init = np.random.default_rng(1)
model.set_weights([(init.normal(size=w.shape) * 0.2).astype("float32") for w in model.get_weights()])
model.compile(optimizer=keras.optimizers.Adam(0.005))
history = model.fit(x_train, epochs=4, batch_size=32, shuffle=False, verbose=0, validation_data=(x_val,))
score = model.evaluate(x_val, batch_size=30, verbose=0)
decoded = model.predict(x_val[:4], verbose=0)
print("RESULT " + json.dumps({
    "keys": sorted(history.history), "params": model.count_params(), "rtol": 1e-4,
    "history": {k: [float(v) for v in vals] for k, vals in sorted(history.history.items())},
    "evaluate": float(score), "decoded_shape": list(decoded.shape),
    "decoded": [float(v) for v in decoded[:, :6].reshape(-1)]}))
