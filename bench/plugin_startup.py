#!/usr/bin/env python3
"""What loading the CUDA backend and the MPI communicator as plugins saves a CPU run.

Usage: bench/plugin_startup.py BEFORE_NNFIT AFTER_NNFIT [--rounds 3] [--version-runs 30]

For each binary, alternating within each round: the peak resident set (`/usr/bin/time -v`,
"Maximum resident set size") of `nnfit train examples/fashion_mnist_mlp.json --epochs 1 -q`
and of the CNN example, and the wall time of `nnfit --version` (median of
--version-runs runs per round). Prints medians over the rounds and the after/before ratios
as a Markdown table. NNFIT_OPENMP_SPIN=default for every run, so neither binary re-executes
itself for the OpenMP spin setting (docs/cli.md, Environment) and the startup figures are
the loader's and the binary's own.
"""
import argparse
import os
import pathlib
import re
import statistics
import subprocess
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent


def peak_rss_mib(nnfit, example):
    cmd = ["/usr/bin/time", "-v", nnfit, "train", str(ROOT / "examples" / example), "--epochs", "1", "-q"]
    r = subprocess.run(cmd, capture_output=True, text=True, env=ENV)
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{r.stderr[-2000:]}")
    kib = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", r.stderr).group(1))
    return kib / 1024


def version_ms(nnfit, runs):
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run([nnfit, "--version"], check=True, stdout=subprocess.DEVNULL, env=ENV)
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("before")
    p.add_argument("after")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--version-runs", type=int, default=30)
    a = p.parse_args()
    names = {"before": a.before, "after": a.after}
    figures = {k: {"mlp": [], "cnn": [], "version": []} for k in names}
    for _ in range(a.rounds):
        for key, nnfit in names.items():
            figures[key]["mlp"].append(peak_rss_mib(nnfit, "fashion_mnist_mlp.json"))
            figures[key]["cnn"].append(peak_rss_mib(nnfit, "fashion_mnist_cnn.json"))
            figures[key]["version"].append(version_ms(nnfit, a.version_runs))
    med = {k: {m: statistics.median(v) for m, v in f.items()} for k, f in figures.items()}
    print(f"load average at the end: {os.getloadavg()}")
    print("| measure | before | after | after/before |")
    print("|---|---:|---:|---:|")
    for m, label, unit in [("mlp", "peak RSS, MLP 1 epoch", "MiB"), ("cnn", "peak RSS, CNN 1 epoch", "MiB"),
                           ("version", "`nnfit --version` wall time", "ms")]:
        b, f = med["before"][m], med["after"][m]
        print(f"| {label} | {b:.1f} {unit} | {f:.1f} {unit} | {f / b:.2f}x |")
    for k in names:
        print(k, {m: [round(x, 1) for x in v] for m, v in figures[k].items()})


ENV = dict(os.environ, NNFIT_OPENMP_SPIN="default")

if __name__ == "__main__":
    main()
