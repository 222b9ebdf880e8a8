"""Rounds of one job on nnfit and its peers, alternating, and the report that compares them:
what bench/text_bench.py and bench/resnet_bench.py share.

Each round runs every framework once with that round's seed (1, 2, 3, ...), the starting
framework rotating so the shared machine's drift hits all alike. Throughput per run = median
samples/s over the epochs after the first; per framework = median over rounds; accuracy =
median over rounds of the last epoch's test accuracy. Standard library only.
"""
import datetime
import os
import shlex
import statistics
import sys

import fmnist_bench as fb

FRAMEWORKS = ("nnfit", "pytorch", "keras")
LABELS = {"nnfit": "nnfit", "pytorch": "PyTorch", "keras": "Keras"}


def check_frameworks(spec, tool):
    frameworks = [f for f in spec.split(",") if f]
    for f in frameworks:
        if f not in FRAMEWORKS:
            raise SystemExit(f"{tool}: unknown framework '{f}'; expected some of {', '.join(FRAMEWORKS)}")
    return frameworks


def run_rounds(frameworks, rounds, run_one, tool):
    """run_one(framework, seed) -> (epochs, version); returns (runs, versions, started, load)."""
    started = datetime.datetime.now(datetime.timezone.utc)
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    runs, versions = {f: [] for f in frameworks}, {}
    for r in range(rounds):
        seed = r + 1
        order = frameworks[r % len(frameworks):] + frameworks[:r % len(frameworks)]
        for f in order:
            print(f"round {r + 1}/{rounds}: {f} (seed {seed})", file=sys.stderr)
            try:
                epochs, version = run_one(f, seed)
            except fb.RunError as e:
                raise SystemExit(f"{tool}: {f} failed: {e}")
            versions[f] = version
            runs[f].append({"seed": seed, "rate": fb.steady_throughput(epochs), "acc": epochs[-1]["test_acc"]})
    return runs, versions, started, load


def write_report(path, title, intro, runs, versions, started, load, script):
    """The comparison table (samples/s, ratios, accuracy), how it was measured, per-run figures."""
    measured = [f for f in FRAMEWORKS if runs.get(f)]
    rate = {f: statistics.median(r["rate"] for r in runs[f]) for f in measured}
    acc = {f: statistics.median(r["acc"] for r in runs[f]) for f in measured}
    lines = [f"# {title}: nnfit vs PyTorch vs Keras", "", intro, "",
             "| framework | samples/s | nnfit / it | test accuracy | nnfit − it (points) |",
             "|---|---:|---:|---:|---:|"]
    for f in measured:
        ratio = fb.fmt_ratio(rate.get("nnfit"), rate[f]) if f != "nnfit" else "—"
        delta = f"{100 * (acc['nnfit'] - acc[f]):+.2f}" if f != "nnfit" and "nnfit" in acc else "—"
        lines.append(f"| {LABELS[f]} | {fb.fmt_rate(rate[f])} | {ratio} | {fb.fmt_acc(acc[f])} | {delta} |")
    command = shlex.join(["/usr/bin/python3", script] + sys.argv[1:])
    lines += ["", "## How it was measured", "",
              f"- machine: {fb.machine_description()}; load average before the run: {load}",
              f"- date: {started:%Y-%m-%d %H:%M} UTC", f"- command: `{command}`"]
    lines += [f"- {LABELS[f]}: {versions.get(f, '?')}" for f in measured]
    lines += ["", "## Per run (seed: steady samples/s, last test accuracy)", "", "| framework | runs |", "|---|---|"]
    for f in measured:
        lines.append(f"| {LABELS[f]} | " + "; ".join(f"seed {r['seed']}: {fb.fmt_rate(r['rate'])}, {fb.fmt_acc(r['acc'])}"
                                                   for r in runs[f]) + " |")
    path.write_text("\n".join(lines) + "\n")
