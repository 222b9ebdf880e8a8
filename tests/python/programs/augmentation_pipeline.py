# keras.io "Image classification from scratch" / the "Data augmentation" guide: an
# augmentation Sequential used as the first layer of a small convnet. Augmentation runs in
# training only: evaluation, prediction and a call with training=False leave images as
# they are, so those numbers must match Keras's from the same weights. (The guide's preview
# of augmented images, an eager call in training mode: augmentation_preview.py.)
import json
import numpy as np
import keras
from keras import layers

data_augmentation = keras.Sequential(
    [layers.RandomFlip("horizontal"), layers.RandomRotation(0.1), layers.RandomZoom(0.1)], name="augmentation")
inputs = keras.Input(shape=(32, 32, 3))
x = data_augmentation(inputs)
x = layers.Rescaling(1.0 / 255)(x)
x = layers.Conv2D(8, 3, activation="relu")(x)
x = layers.MaxPooling2D()(x)
x = layers.Conv2D(16, 3, activation="relu")(x)
x = layers.GlobalAveragePooling2D()(x)
outputs = layers.Dense(3, activation="softmax")(x)
model = keras.Model(inputs, outputs)
init = np.random.default_rng(1)
model.set_weights([(init.normal(size=w.shape) * 0.3).astype("float32") for w in model.get_weights()])
model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
rng = np.random.default_rng(0)
images = (rng.random((48, 32, 32, 3)) * 255).astype("float32")
labels = (images[:, :16].mean(axis=(1, 2, 3)) // 86).astype("int64")
before = model.evaluate(images, labels, batch_size=16, verbose=0)
predictions = model.predict(images[:4], verbose=0)
unchanged = np.array_equal(np.asarray(data_augmentation(images[:2], training=False)), images[:2])
history = model.fit(images, labels, batch_size=16, epochs=2, verbose=0)
print("RESULT " + json.dumps({
    "keys": sorted(history.history), "params": model.count_params(), "layers": [type(l).__name__ for l in model.layers],
    "augmentation": [type(l).__name__ for l in data_augmentation.layers], "unchanged": bool(unchanged),
    "rtol": 1e-4,
    "before": [float(v) for v in before], "predictions": predictions.astype(float).ravel().tolist()}))
