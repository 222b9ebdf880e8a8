"""PyTorch 2.x peer of bench/resnet_bench.py: the ResNet of bench/fashion_mnist_resnet.json
written in PyTorch (stem 3x3 conv 16 + BN + ReLU; residual blocks 16, 16, 32 (stride 2,
1x1 projection), 32 of two 3x3 convolutions without bias, each followed by BN; global
average pooling; Linear(10) logits), channels-last memory format, initialized as Keras
initializes the same layers (Glorot-uniform kernels, zero biases, BN gamma 1 beta 0,
momentum 0.01 = Keras's 0.99, epsilon 1e-3); Adam 1e-3, batch 128, the first TRAIN_SAMPLES
Fashion-MNIST training images scaled to [0, 1]; test accuracy on the 10,000 test images.

usage: python torch_resnet.py EPOCHS THREADS SEED TRAIN_SAMPLES
Prints one JSON line per epoch ({"epoch", "samples_per_s", "test_acc"}) and a summary line.
"""
import gzip
import json
import os
import sys
import time

import numpy as np
import torch
from torch import nn


def conv_bn(cin, cout, k, stride):
    conv = nn.Conv2d(cin, cout, k, stride=stride, padding=k // 2, bias=False)
    nn.init.xavier_uniform_(conv.weight)
    return nn.Sequential(conv, nn.BatchNorm2d(cout, eps=1e-3, momentum=0.01))


class Block(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.a = conv_bn(cin, cout, 3, stride)
        self.b = conv_bn(cout, cout, 3, 1)
        self.proj = conv_bn(cin, cout, 1, stride) if stride != 1 or cin != cout else None

    def forward(self, x):
        h = self.b(torch.relu(self.a(x)))
        return torch.relu((self.proj(x) if self.proj is not None else x) + h)


class ResNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = conv_bn(1, 16, 3, 1)
        self.blocks = nn.Sequential(Block(16, 16, 1), Block(16, 16, 1), Block(16, 32, 2), Block(32, 32, 1))
        self.out = nn.Linear(32, 10)
        nn.init.xavier_uniform_(self.out.weight)
        nn.init.zeros_(self.out.bias)

    def forward(self, x):
        h = self.blocks(torch.relu(self.stem(x)))
        return self.out(h.mean((2, 3)))


def images(name, count=None):
    d = os.environ.get("FASHION_MNIST_DIR", "/usr/share/datasets/fashion-mnist")
    x = np.frombuffer(gzip.open(f"{d}/{name}-images-idx3-ubyte.gz").read(), np.uint8, offset=16)
    y = np.frombuffer(gzip.open(f"{d}/{name}-labels-idx1-ubyte.gz").read(), np.uint8, offset=8)
    x = torch.from_numpy(x.reshape(-1, 1, 28, 28).astype(np.float32) / 255)
    y = torch.from_numpy(y.astype(np.int64))
    return (x[:count], y[:count]) if count else (x, y)


def main(epochs, threads, seed, samples):
    torch.set_num_threads(threads)
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    x, y = images("train", samples)
    tx, ty = images("t10k")
    x, tx = x.contiguous(memory_format=torch.channels_last), tx.contiguous(memory_format=torch.channels_last)
    model = ResNet().to(memory_format=torch.channels_last)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = nn.CrossEntropyLoss()
    records = []
    for epoch in range(1, epochs + 1):
        model.train()
        order = torch.from_numpy(rng.permutation(len(x)))
        start = time.perf_counter()
        for b in range(0, len(x), 128):
            idx = order[b:b + 128]
            opt.zero_grad()
            loss_fn(model(x[idx]), y[idx]).backward()
            opt.step()
        seconds = time.perf_counter() - start
        model.eval()
        correct = 0
        with torch.no_grad():
            for b in range(0, len(tx), 256):
                correct += (model(tx[b:b + 256]).argmax(1) == ty[b:b + 256]).sum().item()
        rec = {"epoch": epoch, "samples_per_s": len(x) / seconds, "test_acc": correct / len(tx)}
        records.append(rec)
        print(json.dumps(rec), flush=True)
    print(json.dumps({"peer": f"pytorch {torch.__version__}", "epochs": records}))


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]))
