"""Subclassed layers on inputs known only per batch (Note [Dimensions known per batch] in
python/nnfit/keras/ops/_dims.py): keras.io's TokenAndPositionEmbedding (ops.arange of
ops.shape(x)[-1]) and a causal self-attention layer of its own (ops.reshape to (batch,
seq_len, heads, depth), a mask from ops.triu(ops.ones((seq_len, seq_len))), matmuls) in a
model whose Input is (None,). Each framework trains it on batches of three lengths and
saves it; the other loads the .keras file with custom_objects and predicts at two lengths
the training never saw: the predictions must agree within 1e-4 (both ways). nnfit's side
also checks that the position embedding trained (its weights moved). A second model, at a
fixed length, is keras.io's miniature GPT block (its causal mask tiled over
ops.shape(x)[0], passed as attention_mask) followed by a MultiHeadAttention called with
use_causal_mask=True, checked the same way.

usage: keras_varlen_trace_parity.py KERAS_PYTHON [NNFIT_PYTHON]
"""
import os
import sys
import tempfile
import textwrap

import parity_runs

SCRIPT = textwrap.dedent("""
    import json, os
    import numpy as np
    IMPORT_LINE
    from keras import layers, ops

    class TokenAndPositionEmbedding(layers.Layer):
        def __init__(self, maxlen=64, vocab_size=50, embed_dim=16, **kwargs):
            super().__init__(**kwargs)
            self.maxlen, self.vocab_size, self.embed_dim = maxlen, vocab_size, embed_dim
            self.token_emb = layers.Embedding(input_dim=vocab_size, output_dim=embed_dim)
            self.pos_emb = layers.Embedding(input_dim=maxlen, output_dim=embed_dim)

        def call(self, x):
            maxlen = ops.shape(x)[-1]
            positions = ops.arange(start=0, stop=maxlen, step=1)
            return self.token_emb(x) + self.pos_emb(positions)

        def get_config(self):
            return {**super().get_config(), "maxlen": self.maxlen, "vocab_size": self.vocab_size,
                    "embed_dim": self.embed_dim}

    class CausalSelfAttention(layers.Layer):
        def __init__(self, heads=2, depth=8, **kwargs):
            super().__init__(**kwargs)
            self.heads, self.depth = heads, depth
            self.qkv = layers.Dense(3 * heads * depth)
            self.out = layers.Dense(heads * depth)

        def split(self, t, batch, seq_len):
            t = ops.reshape(t, (batch, seq_len, self.heads, self.depth))
            return ops.transpose(t, (0, 2, 1, 3))

        def call(self, x):
            batch, seq_len = ops.shape(x)[0], ops.shape(x)[1]
            q, k, v = ops.split(self.qkv(x), 3, axis=-1)
            q, k, v = self.split(q, batch, seq_len), self.split(k, batch, seq_len), self.split(v, batch, seq_len)
            scores = ops.matmul(q, ops.transpose(k, (0, 1, 3, 2))) / (self.depth ** 0.5)
            scores = scores + ops.triu(ops.ones((seq_len, seq_len)), k=1) * -1e9
            h = ops.matmul(ops.softmax(scores, axis=-1), v)
            h = ops.reshape(ops.transpose(h, (0, 2, 1, 3)), (batch, seq_len, self.heads * self.depth))
            return self.out(h)

        def get_config(self):
            return {**super().get_config(), "heads": self.heads, "depth": self.depth}

    def causal_attention_mask(batch_size, n_dest, n_src, dtype):  # keras.io's miniature GPT
        i = ops.arange(n_dest)[:, None]
        j = ops.arange(n_src)
        m = i >= j - n_src + n_dest
        mask = ops.cast(m, dtype)
        mask = ops.reshape(mask, [1, n_dest, n_src])
        # keras.io tiles by ops.concatenate([ops.expand_dims(batch_size, -1), ops.convert_to_tensor([1, 1])], 0),
        # which Keras 3.15 on TensorFlow refuses while building the model ("Iterating over a symbolic
        # tf.Tensor"); nnfit takes both forms (Python.subclass), Keras this one.
        return ops.tile(mask, (batch_size, 1, 1))

    class GptBlock(layers.Layer):  # keras.io's TransformerBlock of the miniature GPT (no dropout)
        def __init__(self, embed_dim=16, num_heads=2, ff_dim=32, **kwargs):
            super().__init__(**kwargs)
            self.embed_dim, self.num_heads, self.ff_dim = embed_dim, num_heads, ff_dim
            self.att = layers.MultiHeadAttention(num_heads, embed_dim)
            self.ffn = keras.Sequential([layers.Dense(ff_dim, activation="relu"), layers.Dense(embed_dim)])
            self.layernorm1 = layers.LayerNormalization(epsilon=1e-6)
            self.layernorm2 = layers.LayerNormalization(epsilon=1e-6)

        def call(self, inputs):
            input_shape = ops.shape(inputs)
            batch_size = input_shape[0]
            seq_len = input_shape[1]
            causal_mask = causal_attention_mask(batch_size, seq_len, seq_len, "bool")
            attention_output = self.att(inputs, inputs, attention_mask=causal_mask)
            out1 = self.layernorm1(inputs + attention_output)
            return self.layernorm2(out1 + self.ffn(out1))

        def get_config(self):
            return {**super().get_config(), "embed_dim": self.embed_dim, "num_heads": self.num_heads,
                    "ff_dim": self.ff_dim}

    custom = {"TokenAndPositionEmbedding": TokenAndPositionEmbedding, "CausalSelfAttention": CausalSelfAttention,
              "GptBlock": GptBlock}
    gpt_x = np.random.default_rng(5).integers(1, 50, size=(4, 10))
    where = os.environ["VARLEN_FILES"]
    rng = np.random.default_rng(0)
    probes = {n: rng.integers(1, 50, size=(3, n)) for n in (7, 19)}
    if os.environ["VARLEN_MODE"] == "save":
        keras.utils.set_random_seed(1)
        inp = keras.Input(shape=(None,))
        emb = TokenAndPositionEmbedding(name="embed")
        h = CausalSelfAttention(name="attn")(emb(inp))
        out = layers.Dense(2, activation="softmax")(layers.GlobalAveragePooling1D()(h))
        model = keras.Model(inp, out)
        model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
        model.predict(probes[7], verbose=0)  # builds the weights (nnfit makes a sublayer's at the first build)
        before = np.array(emb.get_weights()[1])

        class Batches(keras.utils.PyDataset):
            def __len__(self):
                return 6
            def __getitem__(self, i):
                n = (12, 20, 16)[i % 3]
                g = np.random.default_rng(i)
                x = g.integers(1, 50, size=(8, n))
                return x, (x[:, 0] > 25).astype("int32")

        model.fit(Batches(), epochs=2, verbose=0)
        moved = float(np.abs(np.array(emb.get_weights()[1]) - before).max())
        for n, x in probes.items():
            np.save(os.path.join(where, f"want{n}.npy"), model.predict(x, verbose=0))
        model.save(os.path.join(where, "varlen.keras"))
        # keras.io's GPT block at a fixed length (its mask tiled over ops.shape(x)[0], the batch
        # size) and a MultiHeadAttention with use_causal_mask=True.
        g_in = keras.Input(shape=(10,))
        h = GptBlock(name="gpt")(layers.Embedding(50, 16)(g_in))
        h = layers.MultiHeadAttention(2, 8)(h, h, use_causal_mask=True)
        gpt = keras.Model(g_in, layers.Dense(3)(h))
        gpt.compile(optimizer="adam", loss="mse")
        gpt.fit(gpt_x, np.ones((4, 10, 3), "float32"), epochs=2, verbose=0)
        np.save(os.path.join(where, "want_gpt.npy"), gpt.predict(gpt_x, verbose=0))
        gpt.save(os.path.join(where, "gpt.keras"))
        print("PARITY " + json.dumps({"pos_emb_moved": moved}))
    else:
        model = keras.models.load_model(os.path.join(where, "varlen.keras"), custom_objects=custom)
        got = {n: model.predict(x, verbose=0) for n, x in probes.items()}
        want = {n: np.load(os.path.join(where, f"want{n}.npy")) for n in probes}
        diff = max(float(np.abs(got[n] - want[n]).max()) for n in probes)
        gpt = keras.models.load_model(os.path.join(where, "gpt.keras"), custom_objects=custom)
        gpt_want = np.load(os.path.join(where, "want_gpt.npy"))
        diff = max(diff, float(np.abs(gpt.predict(gpt_x, verbose=0) - gpt_want).max()))
        # The causal masks matter: the first position's output differs from the last's.
        assert float(np.abs(gpt_want[:, 0] - gpt_want[:, -1]).max()) > 1e-3
        # The predictions must depend on the tokens: rows that differ, not one constant.
        spread = min(float(np.ptp(want[n][:, 0])) for n in probes)
        print("PARITY " + json.dumps({"max_diff": diff, "spread": spread, "sample": want[7][:, 0].tolist()}))
""")


def main():
    keras_python, nnfit_python = sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else sys.executable
    keras_env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    keras_env.update(KERAS_BACKEND="tensorflow", TF_CPP_MIN_LOG_LEVEL="3")
    sides = {"nnfit": (nnfit_python, "from nnfit import keras", dict(os.environ)),
             "Keras": (keras_python, "import keras", keras_env)}
    failures = []
    for writer, reader in (("nnfit", "Keras"), ("Keras", "nnfit")):
        with tempfile.TemporaryDirectory() as where:
            results = {}
            for side, mode in ((writer, "save"), (reader, "load")):
                python, line, env = sides[side]
                results[mode] = parity_runs.run(python, SCRIPT, line, dict(env, VARLEN_FILES=where, VARLEN_MODE=mode),
                                                900)
        diff, moved = results["load"]["max_diff"], results["save"]["pos_emb_moved"]
        spread = results["load"]["spread"]
        print(f"{writer} trains and saves (position embedding moved by {moved:.2e}), {reader} loads: "
              f"max prediction difference at lengths 7 and 19 and of the GPT model: {diff:.2e} (predictions {results['load']['sample']}, "
              f"spread over the rows {spread:.2e})")
        if not spread > 1e-3:
            failures.append(f"{writer} -> {reader}: the predictions do not depend on the input (spread {spread})")
        if not diff < 1e-4:
            failures.append(f"{writer} -> {reader}: predictions differ by {diff} (tolerance 1e-4)")
        if not moved > 1e-4:
            failures.append(f"{writer}: the position embedding did not train (moved {moved})")
    if failures:
        sys.exit("\n".join(failures))
    print("parity: ok")


if __name__ == "__main__":
    main()
