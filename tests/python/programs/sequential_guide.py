# The Keras guide "The Sequential model": add(), pop(), summary, feature extraction.
import json
import numpy as np
import keras
from keras import layers

model = keras.Sequential(name="my_sequential")
model.add(keras.Input(shape=(4,)))
model.add(layers.Dense(2, activation="relu", name="layer1"))
model.add(layers.Dense(3, activation="relu", name="layer2"))
model.add(layers.Dense(4, name="layer3"))
model.pop()
model.add(layers.Dense(4, name="layer4"))
feature_extractor = keras.Model(inputs=model.inputs, outputs=[layer.output for layer in model.layers])
features = feature_extractor(np.ones((3, 4), "float32"))
model.compile(optimizer="sgd", loss="mse")
model.fit(np.ones((16, 4), "float32"), np.zeros((16, 4), "float32"), verbose=0)
print("RESULT " + json.dumps({"layers": [l.name for l in model.layers], "params": model.count_params(),
                              "features": [list(np.shape(f)) for f in features]}))
