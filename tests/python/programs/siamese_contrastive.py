# keras.io "Image similarity estimation using a Siamese Network with a contrastive loss":
# one embedding network called on both images (shared weights), a Lambda computing the
# euclidean distance, and the example's contrastive loss closure. (The Lambda as one of
# model.layers: lambda_layer.py.)
import json
import numpy as np
import keras
from keras import layers, ops


def euclidean_distance(vects):
    x, y = vects
    sum_square = ops.sum(ops.square(x - y), axis=1, keepdims=True)
    return ops.sqrt(ops.maximum(sum_square, keras.backend.epsilon()))


def loss(margin=1):
    def contrastive_loss(y_true, y_pred):
        square_pred = ops.square(y_pred)
        margin_square = ops.square(ops.maximum(margin - (y_pred), 0))
        return ops.mean((1 - y_true) * square_pred + (y_true) * margin_square)
    return contrastive_loss


input = keras.layers.Input((20, 20, 1))
x = keras.layers.BatchNormalization()(input)
x = keras.layers.Conv2D(4, (5, 5), activation="tanh")(x)
x = keras.layers.AveragePooling2D(pool_size=(2, 2))(x)
x = keras.layers.Conv2D(8, (3, 3), activation="tanh")(x)
x = keras.layers.AveragePooling2D(pool_size=(2, 2))(x)
x = keras.layers.Flatten()(x)
x = keras.layers.BatchNormalization()(x)
x = keras.layers.Dense(10, activation="tanh")(x)
embedding_network = keras.Model(input, x)
input_1 = keras.layers.Input((20, 20, 1))
input_2 = keras.layers.Input((20, 20, 1))
tower_1 = embedding_network(input_1)
tower_2 = embedding_network(input_2)
merge_layer = keras.layers.Lambda(euclidean_distance, output_shape=(1,))([tower_1, tower_2])
normal_layer = keras.layers.BatchNormalization()(merge_layer)
output_layer = keras.layers.Dense(1, activation="sigmoid")(normal_layer)
siamese = keras.Model(inputs=[input_1, input_2], outputs=output_layer)
init = np.random.default_rng(1)
siamese.set_weights([np.abs(init.normal(size=w.shape) * 0.3).astype("float32") + (0.5 if "variance" in w.path else 0.0)
                     for w in siamese.weights])
siamese.compile(loss=loss(margin=1), optimizer=keras.optimizers.RMSprop(1e-3), metrics=["accuracy"])
rng = np.random.default_rng(0)
pairs_1 = rng.random((64, 20, 20, 1)).astype("float32")
pairs_2 = np.where(rng.random((64, 1, 1, 1)) < 0.5, pairs_1 + rng.normal(scale=0.05, size=pairs_1.shape), rng.random((64, 20, 20, 1))).astype("float32")
labels = (np.abs(pairs_1 - pairs_2).mean(axis=(1, 2, 3)) < 0.1).astype("float32")
history = siamese.fit([pairs_1, pairs_2], labels, batch_size=16, epochs=2, shuffle=False, verbose=0, validation_split=0.25)
print("RESULT " + json.dumps({
    "keys": sorted(history.history), "params": siamese.count_params(), "shared": len(embedding_network.weights),
    "nested": type(siamese.layers[2]).__name__, "rtol": 1e-3,
    "history": {k: [float(v) for v in vals] for k, vals in sorted(history.history.items())},
    "distance": siamese.predict([pairs_1[:4], pairs_2[:4]], verbose=0).astype(float).ravel().tolist()}))
