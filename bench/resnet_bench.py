#!/usr/bin/python3
"""Small ResNet throughput and accuracy on Fashion-MNIST: nnfit against PyTorch and Keras in one run.

The Functional model of bench/fashion_mnist_resnet.json (Keras's own JSON, nnfit trains
the file as is): a stem 3x3 convolution, four residual blocks of two 3x3 convolutions with
batch normalization (16, 16, 32 with a strided 1x1 projection, 32 channels), global
average pooling and Dense(10) logits; Adam 1e-3, batch 128, the Fashion-MNIST training
images scaled to [0, 1]. The peers are bench/peers/torch_resnet.py (the same network in
PyTorch 2.x, channels last, Keras's initializers) and bench/peers/keras_resnet.py (Keras 3
on TensorFlow, the same JSON). Each round runs the three alternately (the first rotates)
with that round's seed; throughput per run = median samples/s over the epochs after the
first, per framework = median over rounds; accuracy = median over rounds of the last
epoch's test accuracy. Writes bench/RESULTS_resnet.md.

    /usr/bin/python3 bench/resnet_bench.py [--rounds 3] [--epochs 3] [--threads 2] [--train-samples 60000]
"""
import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import compare_rounds as cr  # noqa: E402  (the rounds and the report)
import fmnist_bench as fb  # noqa: E402  (its process runner and report helpers)

REPO = fb.REPO


def run_nnfit(args, tmp, seed):
    cfg = json.loads((REPO / "bench" / "fashion_mnist_resnet.json").read_text())
    cfg["fit"]["seed"] = seed
    if args.train_samples < 60000:
        cfg["data"]["train"]["pipeline"].insert(0, {"take": args.train_samples})
    config = Path(tmp) / f"resnet_seed{seed}.json"
    config.write_text(json.dumps(cfg))
    metrics = Path(tmp) / "metrics.json"
    fb.run([str(args.nnfit), "train", str(config), "--quiet", "--epochs", str(args.epochs), "--threads",
            str(args.threads), "--metrics-json", str(metrics)], args.timeout)
    m = json.loads(metrics.read_text())
    return [{"samples_per_s": float(e["samples_per_s"]), "test_acc": e.get("val_accuracy")} for e in m["epochs"]], \
        m.get("version", "nnfit")


def run_peer(args, framework, seed):
    python, script = (args.torch_python, "torch_resnet.py") if framework == "pytorch" else (args.keras_python,
                                                                                          "keras_resnet.py")
    out = fb.run([str(python), str(REPO / "bench" / "peers" / script), str(args.epochs), str(args.threads), str(seed),
                  str(args.train_samples)], args.timeout)
    return fb.parse_peer_output(out)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--train-samples", type=int, default=60000)
    p.add_argument("--frameworks", default="nnfit,pytorch,keras")
    p.add_argument("--nnfit", type=Path, default=REPO / "build" / "release" / "nnfit")
    p.add_argument("--torch-python", type=Path, default=None)
    p.add_argument("--keras-python", type=Path, default=None)
    p.add_argument("--timeout", type=int, default=3600)
    p.add_argument("--output", type=Path, default=REPO / "bench" / "RESULTS_resnet.md")
    args = p.parse_args()
    args.torch_python = fb.peer_python("torch", args.torch_python) if "pytorch" in args.frameworks else None
    args.keras_python = fb.peer_python("keras", args.keras_python) if "keras" in args.frameworks else None
    os.environ.setdefault("FASHION_MNIST_DIR", "/usr/share/datasets/fashion-mnist")
    frameworks = cr.check_frameworks(args.frameworks, "resnet_bench")
    with tempfile.TemporaryDirectory() as tmp:
        runs, versions, started, load = cr.run_rounds(
            frameworks, args.rounds,
            lambda f, seed: run_nnfit(args, tmp, seed) if f == "nnfit" else run_peer(args, f, seed), "resnet_bench")
    intro = (f"The model of `bench/fashion_mnist_resnet.json` (43k parameters), {args.train_samples:,} training images, "
             f"batch 128, Adam 1e-3, {args.epochs} epochs, {args.threads} threads each. Samples/s: median over "
             f"{args.rounds} round(s) of each run's median over epochs 2..{args.epochs}; frameworks alternate within a "
             f"round. Test accuracy (10,000 test images): median over the rounds' seeds (1..{args.rounds}) of the last "
             "epoch's.")
    cr.write_report(args.output, "Small ResNet (Functional, batch normalization, residual Add) on Fashion-MNIST", intro,
                    runs, versions, started, load, "bench/resnet_bench.py")
    print(args.output.read_text())


if __name__ == "__main__":
    main()
