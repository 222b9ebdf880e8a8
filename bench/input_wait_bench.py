#!/usr/bin/python3
"""Input wait during Fashion-MNIST training, and what the pipeline costs the steps.

Runs `nnfit train` on an example config (default: examples/fashion_mnist_mlp.json, whose
pipeline is normalize, cache, shuffle, batch, prefetch AUTOTUNE) and on a reference
that differs only in its training pipeline: normalize, batch, cache, prefetch. From the
second epoch the reference replays ready-made batches (no shuffle, no gather), so its
pipeline costs next to nothing: the same model on the same batch shapes with the input
pipeline taken out. Runs alternate (example, reference) for --rounds rounds at each
--threads value, with the nnfit CLI's defaults otherwise.

Per run, over the epochs after the first (the first decodes and fills the cache):
  * input wait: the share of the training time the loop spent in the iterator's next()
    (sum of steps.jsonl input_wait_us over the sum of the step phases);
  * compute per step: mean forward + backward + update time (steps.jsonl);
  * samples/s: median over those epochs (--metrics-json).
Per configuration, medians over rounds; "step time vs reference" is the example's compute
per step over the reference's, the slowdown the pipeline's threads cause the steps.

Standard library only:
    /usr/bin/python3 bench/input_wait_bench.py [--rounds 6] [--epochs 4] [--threads 1,2]
        [--config examples/fashion_mnist_mlp.json] [--nnfit build/release/nnfit]
Prints a Markdown section for bench/RESULTS.md.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def reference_config(config):
    """The config with its training pipeline replaced by normalize, batch, cache, prefetch."""
    c = json.loads(json.dumps(config))
    stages = c["data"]["train"].get("pipeline", [])
    normalize = [s for s in stages if s.get("map") == "normalize"]
    if not normalize:
        raise SystemExit("input_wait_bench: the config's training pipeline has no normalize map to keep")
    c["data"]["train"]["pipeline"] = normalize + [{"batch": True}, {"cache": ""}, {"prefetch": "AUTOTUNE"}]
    return c


def one_run(nnfit, config_path, threads, epochs, workdir):
    metrics = Path(workdir) / "metrics.json"
    logdir = Path(workdir) / "logs"
    subprocess.run(["rm", "-rf", str(logdir)], check=True)
    cmd = [str(nnfit), "train", str(config_path), "--epochs", str(epochs), "--threads", str(threads), "-q",
           "--metrics-json", str(metrics), "--logdir", str(logdir)]
    p = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"input_wait_bench: {' '.join(cmd)} failed ({p.returncode}):\n{p.stderr[-2000:]}")
    epochs_logged = json.loads(metrics.read_text())["epochs"]
    steps = [json.loads(line) for line in (logdir / "steps.jsonl").read_text().splitlines()]
    per_epoch = len(steps) // len(epochs_logged)
    later = steps[per_epoch:]
    compute = [s["forward_us"] + s["backward_us"] + s["update_us"] for s in later]
    total = sum(s["input_wait_us"] + s["forward_us"] + s["backward_us"] + s["update_us"] + s["callbacks_us"]
                for s in later)
    wait = sum(s["input_wait_us"] for s in later)
    return {
        "wait_percent": 100.0 * wait / total,
        "compute_us": sum(compute) / len(compute),
        "samples_per_s": statistics.median(e["samples_per_s"] for e in epochs_logged[1:]),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--epochs", type=int, default=4)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--config", default="examples/fashion_mnist_mlp.json")
    ap.add_argument("--nnfit", default=str(REPO / "build" / "release" / "nnfit"))
    args = ap.parse_args()
    if args.epochs < 2:
        raise SystemExit("input_wait_bench: --epochs must be at least 2 (the first fills the cache)")
    os.environ.setdefault("FASHION_MNIST_DIR", "/usr/share/datasets/fashion-mnist")
    config_path = (REPO / args.config).resolve()
    config = json.loads(config_path.read_text())
    with tempfile.TemporaryDirectory() as tmp:
        ref_path = Path(tmp) / "reference.json"
        ref_path.write_text(json.dumps(reference_config(config)))
        rows = []
        for threads in [int(t) for t in args.threads.split(",")]:
            runs = {"example": [], "reference": []}
            for r in range(args.rounds):
                for name, path in (("example", config_path), ("reference", ref_path)):
                    runs[name].append(one_run(args.nnfit, path, threads, args.epochs, tmp))
                    print(f"threads {threads} round {r + 1} {name}: {runs[name][-1]}", file=sys.stderr)
            med = {n: {k: statistics.median(run[k] for run in v) for k in v[0]} for n, v in runs.items()}
            waits = " ".join(f"{run['wait_percent']:.1f}" for run in runs["example"])
            rows.append((threads, med, waits))
    print(f"\n`/usr/bin/python3 bench/input_wait_bench.py --rounds {args.rounds} --epochs {args.epochs} "
          f"--threads {args.threads} --config {args.config}`\n")
    print("| compute threads | input wait (median) | input wait per run | step time vs reference | "
          "samples/s | reference samples/s | throughput vs reference |")
    print("|---:|---:|---|---:|---:|---:|---:|")
    for threads, med, waits in rows:
        ex, ref = med["example"], med["reference"]
        print(f"| {threads} | {ex['wait_percent']:.2f}% | {waits} | {ex['compute_us'] / ref['compute_us']:.3f} | "
              f"{ex['samples_per_s']:.0f} | {ref['samples_per_s']:.0f} | "
              f"{ex['samples_per_s'] / ref['samples_per_s']:.2f} |")


if __name__ == "__main__":
    main()
