"""PyTorch eager peer of nnfit's Fashion-MNIST examples on a CUDA GPU, for the GPU bundle's
timing stage (docs/gpu_bundle.md): the models of examples/fashion_mnist_{mlp,cnn}.json
("mlp" = Flatten-Dense128(relu)-Dense10; "cnn" = Conv32-Pool-Conv64-Pool-Flatten-
Dropout(0.5)-Dense10), Adam 1e-3, batch 128, float32, the whole training set resident on
the device (the fastest eager input path, so the peer is not input-bound). Each epoch is
timed between two torch.cuda.synchronize() calls.

usage: python gpu_bundle_torch_peer.py mlp|cnn EPOCHS [float32|bfloat16]
Prints one JSON line per epoch and a summary line; the last line starts with "detail: ".
"""
import gzip
import json
import os
import sys
import time

import numpy as np
import torch
from torch import nn

kind, epochs = sys.argv[1], int(sys.argv[2])
precision = sys.argv[3] if len(sys.argv) > 3 else "float32"
data = os.environ.get("FASHION_MNIST_DIR", "/usr/share/datasets/fashion-mnist")


def idx(name, offset):
    with gzip.open(os.path.join(data, name)) as f:
        return np.frombuffer(f.read(), np.uint8, offset=offset)


dev = torch.device("cuda:0")
xtr = torch.from_numpy(idx("train-images-idx3-ubyte.gz", 16).reshape(-1, 1, 28, 28).copy()).to(dev).float() / 255
ytr = torch.from_numpy(idx("train-labels-idx1-ubyte.gz", 8).astype(np.int64)).to(dev)
xte = torch.from_numpy(idx("t10k-images-idx3-ubyte.gz", 16).reshape(-1, 1, 28, 28).copy()).to(dev).float() / 255
yte = torch.from_numpy(idx("t10k-labels-idx1-ubyte.gz", 8).astype(np.int64)).to(dev)
torch.manual_seed(1)
if kind == "mlp":
    model = nn.Sequential(nn.Flatten(), nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 10))
else:
    model = nn.Sequential(nn.Conv2d(1, 32, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(32, 64, 3), nn.ReLU(),
                          nn.MaxPool2d(2), nn.Flatten(), nn.Dropout(0.5), nn.Linear(1600, 10))
model = model.to(dev)
opt = torch.optim.Adam(model.parameters(), 1e-3)
loss_fn = nn.CrossEntropyLoss()
bs = 128
result = {"peer": "pytorch " + torch.__version__, "gpu": torch.cuda.get_device_name(0), "model": kind,
          "precision": precision, "cudnn": torch.backends.cudnn.version(), "epochs": []}
torch.cuda.reset_peak_memory_stats()
for epoch in range(epochs):
    model.train()
    perm = torch.randperm(len(xtr), device=dev)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for i in range(0, len(xtr), bs):
        b = perm[i:i + bs]
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=precision == "bfloat16"):
            loss = loss_fn(model(xtr[b]), ytr[b])
        loss.backward()
        opt.step()
    torch.cuda.synchronize()
    seconds = time.perf_counter() - t0
    model.eval()
    with torch.no_grad():
        acc = (model(xte).argmax(1) == yte).float().mean().item()
    steps = (len(xtr) + bs - 1) // bs
    result["epochs"].append({"epoch": epoch + 1, "seconds": round(seconds, 4), "samples_per_s": round(len(xtr) / seconds),
                             "ms_per_step": round(1000 * seconds / steps, 4), "test_acc": round(acc, 4)})
    print(json.dumps(result["epochs"][-1]), flush=True)
result["memory_peak_bytes"] = torch.cuda.max_memory_allocated()
print(json.dumps(result))
last = result["epochs"][-1]
print("detail: %s %s on %s: %d samples/s, %.3f ms/step (epoch %d), test_acc %.4f, memory peak %d bytes" % (
    result["peer"], kind, result["gpu"], last["samples_per_s"], last["ms_per_step"], epochs, last["test_acc"],
    result["memory_peak_bytes"]))
