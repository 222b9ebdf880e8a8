# keras.io "Timeseries classification from scratch": a fully convolutional network.
import json
import numpy as np
import keras

rng = np.random.default_rng(0)
x_train = rng.normal(size=(256, 500, 1)).astype("float32")
y_train = (x_train[:, :50, 0].mean(axis=1) > 0).astype("int64")
num_classes = len(np.unique(y_train))


def make_model(input_shape):
    input_layer = keras.layers.Input(input_shape)
    conv1 = keras.layers.Conv1D(filters=64, kernel_size=3, padding="same")(input_layer)
    conv1 = keras.layers.BatchNormalization()(conv1)
    conv1 = keras.layers.ReLU()(conv1)
    conv2 = keras.layers.Conv1D(filters=64, kernel_size=3, padding="same")(conv1)
    conv2 = keras.layers.BatchNormalization()(conv2)
    conv2 = keras.layers.ReLU()(conv2)
    gap = keras.layers.GlobalAveragePooling1D()(conv2)
    output_layer = keras.layers.Dense(num_classes, activation="softmax")(gap)
    return keras.models.Model(inputs=input_layer, outputs=output_layer)


model = make_model(input_shape=x_train.shape[1:])
callbacks = [keras.callbacks.ReduceLROnPlateau(monitor="val_loss", factor=0.5, patience=20, min_lr=0.0001),
             keras.callbacks.EarlyStopping(monitor="val_loss", patience=50, verbose=0)]
model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["sparse_categorical_accuracy"])
history = model.fit(x_train, y_train, batch_size=32, epochs=2, callbacks=callbacks, validation_split=0.2, verbose=0)
print("RESULT " + json.dumps({"keys": sorted(history.history), "params": model.count_params()}))
