"""PyTorch 2.x peer of bench/subclass_bench.py: keras.io's Transformer text classifier as a
torch.nn.Module, layer for layer: Embedding(2000, 64) -> a Transformer block as Keras's
MultiHeadAttention(num_heads=2, key_dim=64) builds it (query, key and value projected to 2
heads of 64, softmax(q k^T / 8) v, projected back to 64), dropout 0.1, residual +
LayerNorm(eps 1e-6), feed-forward 64 relu -> 64, dropout 0.1, residual + LayerNorm ->
the mean over time -> Linear(20) relu -> Linear(2) logits; Adam (Keras's eps 1e-7), batch
64, shuffled each epoch, Keras's initializers (Glorot uniform, zero biases, Embedding
uniform +-0.05), the same data as the bench's (NumPy's generator and seed).

usage: python torch_subclass.py EPOCHS SEED THREADS
Prints one RESULT line: {"samples_per_s" (median over epochs 2..), "params", "accuracy"}.
"""
import json
import sys
import time

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F


class Attention(nn.Module):
    def __init__(self, dim, heads, key_dim):
        super().__init__()
        self.heads, self.key_dim = heads, key_dim
        self.q, self.k, self.v = (nn.Linear(dim, heads * key_dim) for _ in range(3))
        self.out = nn.Linear(heads * key_dim, dim)

    def forward(self, x):
        b, t, _ = x.shape

        def split(h):
            return h.view(b, t, self.heads, self.key_dim).transpose(1, 2)

        a = F.scaled_dot_product_attention(split(self.q(x)), split(self.k(x)), split(self.v(x)))
        return self.out(a.transpose(1, 2).reshape(b, t, self.heads * self.key_dim))


class Classifier(nn.Module):
    def __init__(self, vocab=2000, dim=64, heads=2, ff=64, rate=0.1):
        super().__init__()
        self.embedding = nn.Embedding(vocab, dim)
        self.att = Attention(dim, heads, dim)
        self.ffn = nn.Sequential(nn.Linear(dim, ff), nn.ReLU(), nn.Linear(ff, dim))
        self.norm1, self.norm2 = nn.LayerNorm(dim, eps=1e-6), nn.LayerNorm(dim, eps=1e-6)
        self.drop1, self.drop2 = nn.Dropout(rate), nn.Dropout(rate)
        self.dense = nn.Linear(dim, 20)
        self.out = nn.Linear(20, 2)
        for m in self.modules():
            if isinstance(m, nn.Linear):
                nn.init.xavier_uniform_(m.weight)
                nn.init.zeros_(m.bias)
        nn.init.uniform_(self.embedding.weight, -0.05, 0.05)

    def forward(self, ids):
        x = self.embedding(ids)
        out1 = self.norm1(x + self.drop1(self.att(x)))
        h = self.norm2(out1 + self.drop2(self.ffn(out1)))
        return self.out(F.relu(self.dense(h.mean(dim=1))))


def main():
    epochs, seed, threads = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    torch.set_num_threads(threads)
    torch.manual_seed(seed)
    vocab, maxlen = 2000, 64
    rng = np.random.default_rng(seed)
    x = rng.integers(1, vocab, size=(12800, maxlen)).astype("int64")
    y = ((x < 60).sum(1) > 1).astype("int64")
    xs, ys = torch.from_numpy(x), torch.from_numpy(y)
    model = Classifier()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, eps=1e-7)
    times, accuracy = [], 0.0
    for _ in range(epochs):
        began = time.perf_counter()
        order = torch.randperm(len(xs))
        correct = 0
        model.train()
        for i in range(0, len(xs), 64):
            idx = order[i:i + 64]
            logits = model(xs[idx])
            loss = F.cross_entropy(logits, ys[idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            correct += int((logits.argmax(1) == ys[idx]).sum())
        times.append(len(xs) / (time.perf_counter() - began))
        accuracy = correct / len(xs)
    params = sum(p.numel() for p in model.parameters())
    print("RESULT " + json.dumps({"samples_per_s": float(np.median(times[1:])), "params": params,
                                  "accuracy": accuracy}))


if __name__ == "__main__":
    main()
