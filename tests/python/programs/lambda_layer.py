# The Keras guides' Lambda layer (keras.io's Siamese network measures a distance with one):
# a Lambda is one of model.layers, with its summary row, named "lambda" by default.
import json
import numpy as np
import keras
from keras import layers, ops

left = keras.Input((4,))
right = keras.Input((4,))
distance = layers.Lambda(lambda v: ops.sqrt(ops.sum(ops.square(v[0] - v[1]), axis=1, keepdims=True)),
                         output_shape=(1,))([left, right])
outputs = layers.Dense(1, activation="sigmoid")(distance)
model = keras.Model([left, right], outputs)
lines = []
model.summary(print_fn=lambda line, **kwargs: lines.append(line))
rows = [l for l in "\n".join(lines).splitlines() if l.startswith("\u2502")]
print("RESULT " + json.dumps({"layers": [type(l).__name__ for l in model.layers], "names": [l.name for l in model.layers],
                              "rows": len(rows), "params": model.count_params()}))
