# keras.io "Convolutional autoencoder for image denoising": Conv2D and MaxPooling2D down,
# Conv2DTranspose with strides 2 up, a sigmoid Conv2D out; trained on noisy images against
# clean ones; the summary's layer rows and output shapes.
import json
import numpy as np
import keras
from keras import layers

rng = np.random.default_rng(0)
train_data = rng.random((64, 28, 28, 1)).astype("float32")
noisy_train_data = np.clip(train_data + 0.4 * rng.normal(size=train_data.shape), 0.0, 1.0).astype("float32")
input = layers.Input(shape=(28, 28, 1))
x = layers.Conv2D(8, (3, 3), activation="relu", padding="same")(input)
x = layers.MaxPooling2D((2, 2), padding="same")(x)
x = layers.Conv2D(8, (3, 3), activation="relu", padding="same")(x)
x = layers.MaxPooling2D((2, 2), padding="same")(x)
x = layers.Conv2DTranspose(8, (3, 3), strides=2, activation="relu", padding="same")(x)
x = layers.Conv2DTranspose(8, (3, 3), strides=2, activation="relu", padding="same")(x)
x = layers.Conv2D(1, (3, 3), activation="sigmoid", padding="same")(x)
autoencoder = keras.Model(input, x)
init = np.random.default_rng(1)
autoencoder.set_weights([(init.normal(size=w.shape) * 0.3).astype("float32") for w in autoencoder.get_weights()])
autoencoder.compile(optimizer="adam", loss="binary_crossentropy")
lines = []
autoencoder.summary(print_fn=lambda line, **kwargs: lines.append(line))
history = autoencoder.fit(x=noisy_train_data, y=train_data, epochs=2, batch_size=16, shuffle=False, verbose=0,
                          validation_data=(noisy_train_data[:16], train_data[:16]))
predictions = autoencoder.predict(noisy_train_data[:2], verbose=0)
print("RESULT " + json.dumps({
    "keys": sorted(history.history), "params": autoencoder.count_params(),
    "shapes": [list(l.output.shape) for l in autoencoder.layers], "out": list(predictions.shape),
    "summary_rows": [l for l in "\n".join(lines).splitlines() if "(" in l and ")" in l and "params" not in l.lower()],
    "rtol": 1e-4, "history": {k: [float(v) for v in vals] for k, vals in sorted(history.history.items())},
    "pixels": predictions[0, 10:13, 10:13, 0].astype(float).ravel().tolist()}))
