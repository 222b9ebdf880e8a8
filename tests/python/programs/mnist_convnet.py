# keras.io "Simple MNIST convnet", on synthetic 28x28 digits (no download).
import json
import numpy as np
import keras
from keras import layers

rng = np.random.default_rng(0)
x_train = rng.random((512, 28, 28, 1), dtype="float32")
y_train = (x_train[:, :14].mean(axis=(1, 2, 3)) * 20).astype("int64") % 10
num_classes, input_shape = 10, (28, 28, 1)
y_train = keras.utils.to_categorical(y_train, num_classes)
model = keras.Sequential([
    keras.Input(shape=input_shape),
    layers.Conv2D(32, kernel_size=(3, 3), activation="relu"),
    layers.MaxPooling2D(pool_size=(2, 2)),
    layers.Conv2D(64, kernel_size=(3, 3), activation="relu"),
    layers.MaxPooling2D(pool_size=(2, 2)),
    layers.Flatten(),
    layers.Dropout(0.5),
    layers.Dense(num_classes, activation="softmax"),
])
model.compile(loss="categorical_crossentropy", optimizer="adam", metrics=["accuracy"])
history = model.fit(x_train, y_train, batch_size=128, epochs=1, validation_split=0.1, verbose=0)
score = model.evaluate(x_train[:64], y_train[:64], verbose=0)
print("RESULT " + json.dumps({"keys": sorted(history.history), "params": model.count_params(), "evaluate": len(score)}))
