# The Keras guide "Making new layers and models via subclassing", its variational
# autoencoder: Encoder and Decoder layers, a Sampling layer (keras.random.normal with a
# SeedGenerator while training, the mean otherwise), and a KL divergence added with
# self.add_loss in the model's call. Sampling makes training random in both frameworks, so
# the numbers compared are those of inference: predictions and evaluate's loss (the
# reconstruction error plus the KL term) from the same weights, before and after training.
import json
import numpy as np
import keras
from keras import layers, ops


class Sampling(layers.Layer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.seed_generator = keras.random.SeedGenerator(1337)

    def call(self, inputs, training=None):
        z_mean, z_log_var = inputs
        if not training:
            return z_mean
        batch = ops.shape(z_mean)[0]
        dim = ops.shape(z_mean)[1]
        epsilon = keras.random.normal(shape=(batch, dim), seed=self.seed_generator)
        return z_mean + ops.exp(0.5 * z_log_var) * epsilon


class Encoder(layers.Layer):
    def __init__(self, latent_dim=4, intermediate_dim=16, name="encoder", **kwargs):
        super().__init__(name=name, **kwargs)
        self.dense_proj = layers.Dense(intermediate_dim, activation="relu")
        self.dense_mean = layers.Dense(latent_dim)
        self.dense_log_var = layers.Dense(latent_dim)
        self.sampling = Sampling()

    def call(self, inputs, training=None):
        x = self.dense_proj(inputs)
        z_mean = self.dense_mean(x)
        z_log_var = self.dense_log_var(x)
        z = self.sampling((z_mean, z_log_var), training=training)
        return z_mean, z_log_var, z


class Decoder(layers.Layer):
    def __init__(self, original_dim, intermediate_dim=16, name="decoder", **kwargs):
        super().__init__(name=name, **kwargs)
        self.dense_proj = layers.Dense(intermediate_dim, activation="relu")
        self.dense_output = layers.Dense(original_dim, activation="sigmoid")

    def call(self, inputs):
        return self.dense_output(self.dense_proj(inputs))


class VariationalAutoEncoder(keras.Model):
    def __init__(self, original_dim, intermediate_dim=16, latent_dim=4, name="autoencoder", **kwargs):
        super().__init__(name=name, **kwargs)
        self.original_dim = original_dim
        self.encoder = Encoder(latent_dim=latent_dim, intermediate_dim=intermediate_dim)
        self.decoder = Decoder(original_dim, intermediate_dim=intermediate_dim)

    def call(self, inputs, training=None):
        z_mean, z_log_var, z = self.encoder(inputs, training=training)
        reconstructed = self.decoder(z)
        kl_loss = -0.5 * ops.mean(z_log_var - ops.square(z_mean) - ops.exp(z_log_var) + 1)
        self.add_loss(kl_loss)
        return reconstructed


original_dim = 24
rng = np.random.default_rng(0)
x_train = rng.random((128, original_dim)).astype("float32")
vae = VariationalAutoEncoder(original_dim)
vae(x_train[:1])
init = np.random.default_rng(1)
vae.set_weights([(init.normal(size=w.shape) * 0.3).astype("float32") for w in vae.get_weights()])
vae.compile(optimizer=keras.optimizers.Adam(learning_rate=1e-3), loss=keras.losses.MeanSquaredError())
before = vae.evaluate(x_train, x_train, batch_size=32, verbose=0)
predicted = vae.predict(x_train[:2], verbose=0)
history = vae.fit(x_train, x_train, epochs=2, batch_size=32, verbose=0)
after = vae.evaluate(x_train, x_train, batch_size=32, verbose=0)
print("RESULT " + json.dumps({
    "keys": sorted(history.history), "params": vae.count_params(), "weights": len(vae.weights),
    "trained": bool(after < before), "rtol": 1e-4,
    "before": float(before), "predicted": predicted.astype(float).ravel()[:8].tolist()}))
