#!/usr/bin/python3
"""Data-parallel training throughput (issue 18): the Fashion-MNIST MLP and CNN of
examples/ on 2 MPI ranks x 1 thread against 1 process x 1 thread and 1 process x 2
threads, in one run; and 2 ranks with the gradient buckets summed after the backward
pass (--no-overlap) against during it, for the overlap's effect.

Each round runs every setup once, the starting one rotating per round, so the shared
machine's drift hits all alike. Throughput per run = median samples/s over the epochs
after the first (the job's global rate: all ranks' samples per second of wall time, as
`samples_per_s` in --metrics-json); per setup = median over rounds. The global batch is
128 in every setup (64 per rank on 2 ranks). Training only (no validation), and each
epoch is the first --take batches of the shuffled set, so a round stays short.

Standard library only; run with Debian's /usr/bin/python3 from the repository:
    /usr/bin/python3 bench/dist_bench.py [--rounds 3] [--epochs 3] [--take 150] [--models mlp,cnn]
Prints a Markdown report (paste it into bench/RESULTS.md) or writes it with --out.
"""
import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
OPTIMIZER = {"class_name": "Adam", "config": {"learning_rate": 0.001}}
# (name, ranks, threads per rank, extra flags)
SETUPS = [
    ("1 process x 1 thread", 1, 1, []),
    ("1 process x 2 threads", 1, 2, []),
    ("2 ranks x 1 thread", 2, 1, []),
    ("2 ranks x 1 thread, no overlap", 2, 1, ["--no-overlap"]),
]


def config_for(model, take, tmp):
    cfg = json.loads((REPO / "examples" / f"fashion_mnist_{model}.json").read_text())
    cfg["compile"]["optimizer"] = OPTIMIZER
    cfg["data"].pop("validation", None)
    pipeline = cfg["data"]["train"]["pipeline"]
    at = next(i for i, step in enumerate(pipeline) if "batch" in step) + 1
    pipeline.insert(at, {"take": take})
    path = Path(tmp) / f"{model}.json"
    path.write_text(json.dumps(cfg))
    return path


def run_setup(args, config, ranks, threads, extra, tmp):
    metrics = Path(tmp) / "metrics.json"
    if metrics.exists():
        metrics.unlink()
    cmd = [str(args.nnfit), "train", str(config), "-q", "--epochs", str(args.epochs), "--threads", str(threads),
           "--batch-size", "128", "--metrics-json", str(metrics)] + extra
    env = dict(os.environ)
    if ranks > 1:
        env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
        # One core per rank (Open MPI binds to cores by default for 2 ranks).
        cmd = ["mpirun", "-np", str(ranks), "--bind-to", "core"] + cmd
    subprocess.run(cmd, check=True, env=env, timeout=args.timeout, stdout=subprocess.DEVNULL)
    data = json.loads(metrics.read_text())
    rates = [float(e["samples_per_s"]) for e in data["epochs"]]
    return statistics.median(rates[1:] if len(rates) > 1 else rates), data


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--take", type=int, default=150, help="batches of 128 per epoch")
    ap.add_argument("--models", default="mlp,cnn")
    ap.add_argument("--nnfit", default=str(REPO / "build" / "release" / "nnfit"))
    ap.add_argument("--bucket-size", default=None, help="--bucket-size for the 2-rank setups")
    ap.add_argument("--timeout", type=float, default=1800)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    if "FASHION_MNIST_DIR" not in os.environ:
        os.environ["FASHION_MNIST_DIR"] = "/usr/share/datasets/fashion-mnist"
    models = args.models.split(",")
    load = os.getloadavg()
    started = datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M UTC")
    results = {m: {s[0]: [] for s in SETUPS} for m in models}
    with tempfile.TemporaryDirectory() as tmp:
        configs = {m: config_for(m, args.take, tmp) for m in models}
        for r in range(args.rounds):
            for m in models:
                order = SETUPS[r % len(SETUPS):] + SETUPS[:r % len(SETUPS)]
                for name, ranks, threads, extra in order:
                    flags = list(extra)
                    if ranks > 1 and args.bucket_size:
                        flags += ["--bucket-size", args.bucket_size]
                    rate, _ = run_setup(args, configs[m], ranks, threads, flags, tmp)
                    results[m][name].append(rate)
                    print(f"round {r + 1} {m} {name}: {rate:,.0f} samples/s", flush=True)
    base = SETUPS[0][0]
    lines = [f"| model | {' | '.join(s[0] for s in SETUPS)} | 2 ranks / 1x1 | 2 ranks / 1x2 | overlap / no overlap |",
             "|---|" + "---:|" * (len(SETUPS) + 3)]
    for m in models:
        med = {name: statistics.median(v) for name, v in results[m].items()}
        lines.append(f"| {m} | " + " | ".join(f"{med[s[0]]:,.0f}" for s in SETUPS) +
                     f" | {med['2 ranks x 1 thread'] / med[base]:.2f}x"
                     f" | {med['2 ranks x 1 thread'] / med['1 process x 2 threads']:.2f}x"
                     f" | {med['2 ranks x 1 thread'] / med['2 ranks x 1 thread, no overlap']:.2f}x |")
    lines += ["", "Per-run samples/s (median over epochs 2..E of each run), by round:", "",
              "| model | setup | rounds |", "|---|---|---|"]
    for m in models:
        for name, v in results[m].items():
            lines.append(f"| {m} | {name} | {', '.join(f'{x:,.0f}' for x in v)} |")
    lines += ["", f"- machine: {platform.processor() or platform.machine()}, nproc {os.cpu_count()}; "
              f"load average before the run: {load[0]:.2f}, {load[1]:.2f}, {load[2]:.2f}",
              f"- date: {started}",
              f"- command: `/usr/bin/python3 bench/dist_bench.py --rounds {args.rounds} --epochs {args.epochs} "
              f"--take {args.take} --models {args.models}" +
              (f" --bucket-size {args.bucket_size}" if args.bucket_size else "") + "`"]
    report = "\n".join(lines) + "\n"
    if args.out:
        Path(args.out).write_text(report)
    print(report)


if __name__ == "__main__":
    main()
