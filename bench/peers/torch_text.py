"""PyTorch 2.x peer of bench/text_bench.py, one of two models, initialized as Keras
initializes the same layers; Adam 1e-3, batch 64, cross-entropy from logits:

- bilstm: Embedding(2000, 32, padding) -> bidirectional LSTM(32) over the present tokens
  only (pack_padded_sequence, PyTorch's form of Keras's mask) -> Linear(2) logits;
- transformer: Embedding(2000, 64) -> a Transformer encoder block (MultiheadAttention with
  4 heads of 16 and the padding as key_padding_mask, residual + LayerNorm, feed-forward
  128 relu -> 64, residual + LayerNorm) -> the mean over the present tokens -> Linear(2).

usage: python torch_text.py DATA_DIR EPOCHS THREADS SEED [bilstm|transformer]
Prints one JSON line per epoch ({"epoch", "samples_per_s", "test_acc"}) and a summary
line ({"peer", "epochs"}), as ../shared/bench's peers do.
"""
import json
import sys
import time

import numpy as np
import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence


class BiLSTM(nn.Module):
    def __init__(self, vocab=2000, dim=32, units=32):
        super().__init__()
        self.embedding = nn.Embedding(vocab, dim, padding_idx=0)
        self.lstm = nn.LSTM(dim, units, batch_first=True, bidirectional=True)
        self.out = nn.Linear(2 * units, 2)
        # Keras's initializers, so the three frameworks train the same job (PyTorch's own
        # defaults, N(0, 1) embeddings and uniform LSTM weights, learn this task far slower).
        nn.init.uniform_(self.embedding.weight, -0.05, 0.05)
        for name, w in self.lstm.named_parameters():
            if name.startswith("weight_ih"):
                for gate in w.chunk(4, 0):
                    nn.init.xavier_uniform_(gate)
            elif name.startswith("weight_hh"):
                for gate in w.chunk(4, 0):
                    nn.init.orthogonal_(gate)
            else:  # bias_ih and bias_hh: zeros, with Keras's unit_forget_bias once
                nn.init.zeros_(w)
                if name.startswith("bias_ih"):
                    w.data[units:2 * units] = 1.0
        nn.init.xavier_uniform_(self.out.weight)
        nn.init.zeros_(self.out.bias)

    def forward(self, x, lengths):
        packed = pack_padded_sequence(self.embedding(x), lengths, batch_first=True, enforce_sorted=False)
        _, (h, _) = self.lstm(packed)
        return self.out(torch.cat([h[0], h[1]], dim=1))


class Transformer(nn.Module):
    def __init__(self, vocab=2000, dim=64, heads=4, ff=128):
        super().__init__()
        self.embedding = nn.Embedding(vocab, dim)
        self.attention = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.norm_1 = nn.LayerNorm(dim, eps=1e-6)
        self.ffn_1 = nn.Linear(dim, ff)
        self.ffn_2 = nn.Linear(ff, dim)
        self.norm_2 = nn.LayerNorm(dim, eps=1e-6)
        self.out = nn.Linear(dim, 2)
        # Keras's initializers: uniform(-0.05, 0.05) embeddings, Glorot-uniform kernels with
        # each projection's own fans (Keras's query, key and value are separate
        # EinsumDense layers), zero biases.
        nn.init.uniform_(self.embedding.weight, -0.05, 0.05)
        for w in self.attention.in_proj_weight.chunk(3, 0):
            nn.init.xavier_uniform_(w)
        nn.init.zeros_(self.attention.in_proj_bias)
        for layer in (self.attention.out_proj, self.ffn_1, self.ffn_2, self.out):
            nn.init.xavier_uniform_(layer.weight)
            nn.init.zeros_(layer.bias)

    def forward(self, x, lengths):
        present = x != 0
        h = self.embedding(x)
        a, _ = self.attention(h, h, h, key_padding_mask=~present, need_weights=False)
        h = self.norm_1(h + a)
        h = self.norm_2(h + self.ffn_2(torch.relu(self.ffn_1(h))))
        m = present.unsqueeze(-1).to(h.dtype)
        return self.out((h * m).sum(1) / m.sum(1))


def main(data, epochs, threads, seed, model_name="bilstm"):
    torch.set_num_threads(threads)
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    x = torch.from_numpy(np.load(f"{data}/train_x.npy").astype(np.int64))
    y = torch.from_numpy(np.load(f"{data}/train_y.npy").astype(np.int64))
    tx = torch.from_numpy(np.load(f"{data}/test_x.npy").astype(np.int64))
    ty = torch.from_numpy(np.load(f"{data}/test_y.npy").astype(np.int64))
    lengths, tlengths = (x != 0).sum(1), (tx != 0).sum(1)
    model = Transformer() if model_name == "transformer" else BiLSTM()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = nn.CrossEntropyLoss()
    records = []
    for epoch in range(1, epochs + 1):
        model.train()
        order = torch.from_numpy(rng.permutation(len(x)))
        start = time.perf_counter()
        for b in range(0, len(x), 64):
            idx = order[b:b + 64]
            opt.zero_grad()
            loss = loss_fn(model(x[idx], lengths[idx]), y[idx])
            loss.backward()
            opt.step()
        seconds = time.perf_counter() - start
        model.eval()
        correct = 0
        with torch.no_grad():
            for b in range(0, len(tx), 256):
                correct += (model(tx[b:b + 256], tlengths[b:b + 256]).argmax(1) == ty[b:b + 256]).sum().item()
        rec = {"epoch": epoch, "samples_per_s": len(x) / seconds, "test_acc": correct / len(tx)}
        records.append(rec)
        print(json.dumps(rec), flush=True)
    print(json.dumps({"peer": f"pytorch {torch.__version__}", "epochs": records}))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5] if len(sys.argv) > 5 else "bilstm")
