#!/usr/bin/python3
"""Soak: does a long training run hold its memory? (issue 20)

Trains the convnet example (examples/fashion_mnist_cnn.json) with validation, TensorBoard
logging (--logdir), a ModelCheckpoint every epoch and a BackupAndRestore every 100 steps
for --minutes (default 60), sampling the process from /proc once a second, then stops it
with SIGTERM (the clean stop of issue 20: exit 143, backup kept). Per epoch it records the
resident set (VmRSS), the allocator's in-use bytes (from --metrics-json), open file
descriptors and threads. Verdict: after the first --settle epochs (default 3) in-use bytes
stay equal, the second half's lowest fd and thread counts are no higher than at the base
(one sampled while a checkpoint is written does not count), and the highest RSS of the
second half of the remaining epochs is within 2% (or 8 MiB) of the first half's (malloc's
arenas settle; a leak keeps growing).
Writes a Markdown report (default bench/RESULTS_soak.md); exit 1 when something grew.

Standard library only:  bench/soak.sh [--minutes 60] [--threads 2] [--out FILE]
"""
import argparse
import datetime
import json
import os
import platform
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def proc_sample(pid):
    """(rss_bytes, threads, fds) of a live process, from /proc."""
    rss = threads = 0
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1]) * 1024
            elif line.startswith("Threads:"):
                threads = int(line.split()[1])
    fds = len(os.listdir(f"/proc/{pid}/fd"))
    return rss, threads, fds


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--minutes", type=float, default=60.0)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--settle", type=int, default=3, help="epochs before which growth is allowed (warm-up)")
    ap.add_argument("--nnfit", default=str(REPO / "build" / "release" / "nnfit"))
    ap.add_argument("--out", default=str(REPO / "bench" / "RESULTS_soak.md"))
    args = ap.parse_args()
    if not Path(args.nnfit).is_file():
        sys.exit(f"soak: nnfit binary not found at {args.nnfit} (build it, or pass --nnfit)")
    work = Path(tempfile.mkdtemp(prefix="nnfit_soak_"))
    cfg = json.loads((REPO / "examples" / "fashion_mnist_cnn.json").read_text())
    cfg["fit"]["epochs"] = 100000  # stopped by time, not by epochs
    cfg["fit"]["callbacks"] = [
        {"class_name": "ModelCheckpoint", "config": {"filepath": str(work / "ckpt" / "last.keras")}},
        {"class_name": "BackupAndRestore", "config": {"backup_dir": str(work / "backup"), "save_freq": 100}},
    ]
    (work / "ckpt").mkdir()
    (work / "cfg.json").write_text(json.dumps(cfg))
    metrics = work / "metrics.json"
    cmd = [args.nnfit, "train", str(work / "cfg.json"), "--threads", str(args.threads), "--quiet",
           "--logdir", str(work / "logs"), "--metrics-json", str(metrics)]
    started = datetime.datetime.now().astimezone()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    rows, seen_epochs, peak = [], 0, (0, 0, 0)
    deadline = time.time() + args.minutes * 60
    while p.poll() is None and time.time() < deadline:
        time.sleep(1.0)
        try:
            sample = proc_sample(p.pid)
        except OSError:
            break
        peak = tuple(max(a, b) for a, b in zip(peak, sample))
        try:
            doc = json.loads(metrics.read_text())
        except (OSError, ValueError):
            continue  # not written yet, or being replaced
        if len(doc.get("epochs", [])) > seen_epochs:
            seen_epochs = len(doc["epochs"])
            last = doc["epochs"][-1]
            in_use = doc["memory"]["cpu:0"]["in_use_bytes"]
            rows.append({"epoch": last["epoch"], "rss": sample[0], "threads": sample[1], "fds": sample[2],
                         "in_use": in_use, "samples_per_s": last.get("samples_per_s", 0),
                         "val_accuracy": last.get("val_accuracy", float("nan"))})
            print(f"epoch {last['epoch']}: RSS {sample[0] / 2**20:.1f} MiB, in use {in_use / 2**20:.1f} MiB, "
                  f"fds {sample[2]}, threads {sample[1]}", file=sys.stderr, flush=True)
    if p.poll() is None:
        p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=600)
    code = p.returncode
    if len(rows) <= args.settle:
        sys.exit(f"soak: only {len(rows)} epoch(s) in {args.minutes} minutes; run longer (exit {code}: {err.strip()[-300:]})")
    # Allocator bytes, fds and threads: equal after the settling epochs. RSS: malloc's arenas
    # grow in steps until they hold the checkpoint writers' peak, then stay (seen here: +12
    # MiB over the first epochs with a ModelCheckpoint, flat after); a leak keeps growing.
    # So the second half's highest RSS is held against the first half's (after settling).
    base = rows[args.settle - 1] if args.settle > 0 else rows[0]
    after = rows[args.settle:]
    half = len(after) // 2
    first_half_rss = max(r["rss"] for r in after[:max(1, half)])
    rss_growth = max(r["rss"] for r in after[half:]) - first_half_rss
    grew = []
    if len(after) >= 4 and rss_growth > max(0.02 * first_half_rss, 8 * 2**20):
        grew.append(f"RSS +{rss_growth / 2**20:.1f} MiB from the first half of the run to the second")
    if any(r["in_use"] != base["in_use"] for r in after):
        grew.append(f"in_use {base['in_use']} -> {max(r['in_use'] for r in after)}")
    # An fd or thread sampled while a checkpoint is being written is open for that moment
    # only (the 60-minute soak saw fds 7 at 5 of 151 epoch ends, 6 at the next); a leak
    # raises the count for good, so the second half's lowest count is held against the base.
    for key in ("fds", "threads"):
        low = min(r[key] for r in after[half:]) if after[half:] else base[key]
        if low > base[key]:
            grew.append(f"{key} {base[key]} -> {low} (the lowest of the second half)")
    verdict = "flat" if not grew else "GREW: " + ", ".join(grew)
    lines = ["# Soak: the convnet example for %g minutes" % args.minutes, "",
             f"{len(rows)} epochs of `examples/fashion_mnist_cnn.json` with validation, TensorBoard logs, a ModelCheckpoint "
             f"every epoch and a BackupAndRestore every 100 steps, {args.threads} threads; stopped by SIGTERM (exit {code}). "
             f"Verdict over epochs {base['epoch'] + 1}..{rows[-1]['epoch']}: **{verdict}**. Peaks: RSS {peak[0] / 2**20:.1f} MiB, "
             f"threads {peak[1]}, fds {peak[2]}.", "",
             "| epoch | RSS MiB | allocator in use MiB | fds | threads | samples/s | val acc |", "|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['epoch']} | {r['rss'] / 2**20:.1f} | {r['in_use'] / 2**20:.2f} | {r['fds']} | {r['threads']} | "
                     f"{r['samples_per_s']:,.0f} | {100 * r['val_accuracy']:.2f}% |")
    lines += ["", f"- machine: {platform.processor() or platform.machine()}, nproc {os.cpu_count()}; "
              f"started {started:%Y-%m-%d %H:%M %Z}",
              f"- command: `bench/soak.sh --minutes {args.minutes:g} --threads {args.threads}`", ""]
    Path(args.out).write_text("\n".join(lines))
    print("\n".join(lines))
    return 0 if not grew else 1


if __name__ == "__main__":
    sys.exit(main())
