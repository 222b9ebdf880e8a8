"""bench/RESULTS_hostile.md from bench/hostile_sweep.py's runs: counts per class and per input
kind and family, the slowest and largest runs, and every run that was not a clean error or a
correct acceptance with the command that remakes it."""
import collections
import datetime
import os
import platform

KIND_NAMES = {"keras": "mutated .keras (predict / evaluate)", "h5": "mutated legacy .h5 (predict / evaluate)",
              "h5struct": "HDF5 structure in .keras / .h5 (h5py)", "config": "mutated train configs (train)",
              "backup": "damaged backups (train --backup-dir)", "special": "special files and sizes as arguments",
              "python": "bad nnfit.keras calls"}


def table(rows, header):
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return out


def write_report(args, sweep, results, seconds):
    from hostile_sweep import BAD, CLASSES
    classes = CLASSES + sorted({r["class"] for r in results} - set(CLASSES))
    by_kind = collections.defaultdict(collections.Counter)
    by_family = collections.defaultdict(collections.Counter)
    for r in results:
        by_kind[r["kind"]][r["class"]] += 1
        by_family[(r["kind"], r["family"])][r["class"]] += 1
    total = collections.Counter(r["class"] for r in results)
    bad = [r for r in results if r["class"] in BAD or r["class"] == "sweep error"]
    load = os.getloadavg()
    lines = [
        "# Hostile-input sweep (issue 39)",
        "",
        f"`bench/hostile_sweep.py --runs {args.runs} --seconds {args.seconds:g} --mem-gib {args.mem_gib} "
        f"--jobs {args.jobs} --seed {args.seed}`, {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, "
        f"{len(results)} runs in {seconds / 60:.1f} min on {platform.node()} ({os.cpu_count()} cores, load "
        f"{load[0]:.1f} at the end), each run under RLIMIT_AS {args.mem_gib} GiB and a {args.seconds:g} s timeout, "
        "nnfit on one thread (OMP_NUM_THREADS=1, --threads 1).",
        "",
        "Classes: **clean error** (exit != 0 with one nnfit error line under 400 characters naming the file or key; "
        "in Python a ValueError/TypeError/OSError/nnfit error), **accepted** (exit 0 where that is right: a valid "
        "file, or a change that still makes a valid model), **crash** (a signal), **hang** (the timeout; the CPU "
        "seconds below say whether it was blocked or busy), **blow-up** (over 1 GiB RSS, or an allocation the "
        "address-space limit stopped), **silent acceptance** (exit 0 on an input that must be refused, or on "
        "damage with predictions other than the clean file's), **unclear error** (an internal error, a Python "
        "exception of another type, a line past 400 characters or one naming neither the file nor the key).",
        "",
        "## Totals",
        "",
    ]
    lines += table([[c, total[c]] for c in classes] + [["**runs**", len(results)]], ["class", "runs"])
    lines += ["", "## Per input kind", ""]
    lines += table([[KIND_NAMES.get(k, k)] + [by_kind[k][c] for c in classes] + [sum(by_kind[k].values())]
                    for k in KIND_NAMES if k in by_kind], ["input kind"] + classes + ["runs"])
    lines += ["", "## Per family", ""]
    lines += table([[KIND_NAMES.get(k, k).split(" (")[0], f] + [by_family[(k, f)][c] for c in classes]
                    for (k, f) in sorted(by_family)], ["kind", "family"] + classes)
    rss = sorted(results, key=lambda r: -r["peak_rss_mb"])[:5]
    slow = sorted(results, key=lambda r: -r["seconds"])[:5]
    lines += ["", "## Largest and slowest runs", ""]
    lines += table([[r["index"], r["kind"], r["family"], r["what"][:60], r["peak_rss_mb"], r["seconds"], r["class"]]
                    for r in rss + slow], ["case", "kind", "family", "what", "peak RSS MiB", "seconds", "class"])
    lines += ["", f"## Runs that were not clean ({len(bad)})", "",
              f"Remake one with `python3 bench/hostile_sweep.py --runs {args.runs} --seed {args.seed} --only INDEX` "
              "(its files are kept in the work folder and the JSON of the run is printed); `CASE` in a command is "
              "that case's folder.", ""]
    for r in bad[:400]:
        lines.append(f"- **{r['index']}** {r['class']}: {r['kind']} / {r['family']}: {r['what'][:120]} "
                     f"(seed {r['seed'] or '-'}; exit {r['returncode']}, {r['seconds']} s, {r['cpu']} s CPU, "
                     f"{r['peak_rss_mb']} MiB)")
        lines.append(f"  - `{r['argv'][:300]}`")
        if r["line"]:
            lines.append(f"  - {r['line'][:300]!r}")
    if len(bad) > 400:
        lines.append(f"- ... and {len(bad) - 400} more")
    with open(args.out, "w") as f:
        f.write("\n".join(lines) + "\n")
