#!/usr/bin/python3
"""Fashion-MNIST training throughput: nnfit against PyTorch and Keras, measured in one run.

For each model (mlp, cnn) and each round, runs nnfit, PyTorch and Keras one after the
other (the starting framework rotates per round), so that the shared machine's drift hits
all three alike. Throughput per run = median samples/s over the epochs after the first
(the first includes warm-up: Keras traces its graph there); per framework = median over
rounds. Ratios are nnfit / peer. Just before and just after each nnfit run oneDNN alone
also does the model's convolutions and matrix products at its shapes and precision
(bench/step_ceiling.cpp), and the report gives nnfit's step as a fraction of that ceiling
(per round against the mean of the two, which brackets the run: the shared host's speed
swings between minutes), PyTorch's against the median ceiling, the spread of the
steady epochs (min / median / max) and the host's CPU model. Writes a Markdown report
(default bench/RESULTS.md).

Standard library only; run with Debian's /usr/bin/python3 from anywhere:
    /usr/bin/python3 bench/fmnist_bench.py [--rounds 3] [--epochs 3] [--models mlp,cnn] [--precisions float32,bf16]
Peer scripts: ../shared/bench (torch_fmnist.py, keras_fmnist.py; --peers-dir or
NNFIT_PEERS_DIR elsewhere). The peers' interpreters: --torch-python / --keras-python, else
$NNFIT_TORCH_PYTHON / $NNFIT_KERAS_PYTHON, else scripts/peer_venvs.sh makes (once, cached
outside the checkout) venvs with PyTorch 2.x and TensorFlow + Keras 3 from PyPI.
"""
import argparse
import datetime
import json
import os
import platform
import shlex
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FRAMEWORKS = ("nnfit", "nnfit_py", "pytorch", "keras")
LABELS = {"nnfit": "nnfit", "nnfit_py": "nnfit.keras (Python)", "pytorch": "PyTorch", "keras": "Keras"}
# The peers' interpreters (the reference is PyTorch 2.x from PyPI): an option, else an
# environment variable, else the venv scripts/peer_venvs.sh makes once and caches.
PEER_PYTHON_ENV = {"torch": "NNFIT_TORCH_PYTHON", "keras": "NNFIT_KERAS_PYTHON"}


def peer_python(kind, explicit=None):
    """The Python whose `kind` (torch or keras) is measured, making its venv if need be."""
    chosen = explicit or os.environ.get(PEER_PYTHON_ENV[kind])
    if chosen:
        if not Path(chosen).is_file():
            raise SystemExit(f"fmnist_bench: the {kind} Python {chosen} does not exist "
                             f"(--{kind}-python or ${PEER_PYTHON_ENV[kind]})")
        return Path(chosen)
    made = subprocess.run([str(REPO / "scripts" / "peer_venvs.sh"), kind], stdout=subprocess.PIPE, text=True)
    if made.returncode != 0 or not made.stdout.strip():
        raise SystemExit(f"fmnist_bench: scripts/peer_venvs.sh {kind} failed (its output is above); "
                         f"pass --{kind}-python or set ${PEER_PYTHON_ENV[kind]}")
    return Path(made.stdout.strip().splitlines()[-1])


# The peers' optimizer (../shared/bench/README.md), in Keras's serialized form.
PEER_OPTIMIZER = {"class_name": "Adam", "config": {"learning_rate": 0.001}}


class RunError(Exception):
    pass


def find_peers_dir(explicit):
    explicit = explicit or os.environ.get("NNFIT_PEERS_DIR")
    candidates = [Path(explicit)] if explicit else [REPO.parent / "shared" / "bench"]
    for c in candidates:
        if (c / "torch_fmnist.py").is_file():
            return c
    raise SystemExit("fmnist_bench: peer scripts (torch_fmnist.py, keras_fmnist.py) not found in "
                     + ", ".join(map(str, candidates)) + "; pass --peers-dir")


def run(cmd, timeout_s, env=None, usage=None):
    """Runs cmd from the repository root; returns stdout; raises RunError with stderr's tail.
    With a dict `usage`, stores the child's peak resident set in usage["peak_rss_bytes"]
    (ru_maxrss from wait4, the kernel's own figure for that process)."""
    t0 = time.perf_counter()
    try:
        p = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    except OSError as e:
        raise RunError(f"cannot run {cmd[0]}: {e}")
    out, err = [], []
    readers = [threading.Thread(target=lambda f, acc: acc.append(f.read()), args=(p.stdout, out)),
               threading.Thread(target=lambda f, acc: acc.append(f.read()), args=(p.stderr, err))]
    for t in readers:
        t.start()
    timer = threading.Timer(timeout_s, p.kill)
    timer.start()
    _, status, rusage = os.wait4(p.pid, 0)
    timer.cancel()
    for t in readers:
        t.join()
    p.returncode = os.waitstatus_to_exitcode(status)
    stdout, stderr = "".join(out), "".join(err)
    if time.perf_counter() - t0 >= timeout_s:
        raise RunError(f"timed out after {timeout_s} s: {shlex.join(map(str, cmd))}")
    if p.returncode != 0:
        tail = "\n".join((stderr or stdout).strip().splitlines()[-15:])
        raise RunError(f"exit code {p.returncode}: {shlex.join(map(str, cmd))}\n{tail}")
    if usage is not None:
        usage["peak_rss_bytes"] = rusage.ru_maxrss * 1024
    print(f"    ({time.perf_counter() - t0:.0f} s)", file=sys.stderr)
    return stdout


def parse_peer_output(stdout):
    """The peer scripts print one JSON line per epoch, then a summary with 'epochs' and 'peer'."""
    epochs, version = [], None
    for line in stdout.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            continue
        if "epochs" in rec:
            epochs, version = rec["epochs"], rec.get("peer")
        elif "samples_per_s" in rec and version is None:
            epochs.append(rec)
    if not epochs:
        raise RunError("no per-epoch JSON lines in the output:\n" + stdout[-2000:])
    return [{"samples_per_s": float(e["samples_per_s"]), "test_acc": e.get("test_acc")} for e in epochs], version


# --precisions: nnfit's dtype policy, PyTorch's autocast type, Keras's policy for each.
PRECISIONS = {"float32": ("float32", "float32", "float32"),
              "bf16": ("mixed_bfloat16", "bfloat16", "mixed_bfloat16")}


def job_label(model, precision):
    return model if precision == "float32" else f"{model} {precision}"


def run_nnfit(args, model, precision="float32"):
    binary = Path(args.nnfit)
    if not binary.is_file():
        raise RunError(f"nnfit binary not found at {binary}; build it first: cmake --preset release && "
                       "cmake --build --preset release (or pass --nnfit PATH, or --no-nnfit to measure the peers only)")
    example = REPO / "examples" / f"fashion_mnist_{model}.json"
    with tempfile.TemporaryDirectory() as tmp:
        # The example's model and pipeline with the peers' recipe (constant Adam 1e-3), so the
        # three frameworks run the same job whatever schedule the example itself ships with.
        cfg = json.loads(example.read_text())
        cfg["compile"]["optimizer"] = PEER_OPTIMIZER
        config = Path(tmp) / example.name
        config.write_text(json.dumps(cfg))
        metrics = Path(tmp) / "metrics.json"
        usage = {}
        run([str(binary), "train", str(config), "--epochs", str(args.epochs), "--threads", str(args.threads),
             "--batch-size", "128", "--metrics-json", str(metrics), "--dtype-policy", PRECISIONS[precision][0]],
            args.timeout, usage=usage)
        try:
            data = json.loads(metrics.read_text())
        except (OSError, json.JSONDecodeError) as e:
            raise RunError(f"nnfit wrote no readable --metrics-json file ({e})")
    try:
        epochs = [{"samples_per_s": float(e["samples_per_s"]), "test_acc": e.get("val_accuracy"),
                   "input_wait": e.get("input_wait_fraction")}
                  for e in data["epochs"]]
    except (KeyError, TypeError, ValueError) as e:
        raise RunError(f"nnfit metrics JSON lacks epochs[].samples_per_s ({e!r})")
    if not epochs:
        raise RunError("nnfit metrics JSON has no epochs")
    epochs[-1]["memory"] = {"peak_rss_bytes": usage.get("peak_rss_bytes"),
                            "planned_peak_bytes": data.get("planned_peak_bytes"),
                            "peak_memory_bytes": data.get("peak_memory_bytes")}
    return epochs, data.get("version", "nnfit")


def run_peer(args, framework, model, precision="float32"):
    env = None
    if framework == "nnfit_py":
        # The Keras peer's script with `from nnfit import keras` (bench/peers/nnfit_keras_fmnist.py).
        cmd = [args.nnfit_python, str(REPO / "bench" / "peers" / "nnfit_keras_fmnist.py"), model, str(args.epochs),
               str(args.threads), PRECISIONS[precision][0], "cli", args.python_callback]
        env = dict(os.environ, PYTHONPATH=str(args.python_package))
    elif framework == "pytorch":
        cmd = [str(args.torch_python), str(args.peers_dir / "torch_fmnist.py"), model, str(args.epochs), str(args.threads),
               PRECISIONS[precision][1]]
    else:
        cmd = [str(args.keras_python), str(args.peers_dir / "keras_fmnist.py"), model, str(args.epochs), str(args.threads),
               PRECISIONS[precision][2]]
    usage = {}
    epochs, version = parse_peer_output(run(cmd, args.timeout, env=env, usage=usage))
    if epochs:
        epochs[-1]["memory"] = {"peak_rss_bytes": usage.get("peak_rss_bytes")}
    return epochs, version


def steady_throughput(epochs):
    """Median samples/s over the epochs after the first (all of them if there is only one)."""
    steady = epochs[1:] or epochs
    return statistics.median(e["samples_per_s"] for e in steady)


def model_shapes(model, batch=128):
    """The convolutions and Dense layers of examples/fashion_mnist_{model}.json at `batch`,
    as nnfit_step_ceiling's --conv and --gemm arguments (bench/step_ceiling.cpp)."""
    layers = json.loads((REPO / "examples" / f"fashion_mnist_{model}.json").read_text())["model"]["config"]["layers"]
    shape, args, first = None, [], True
    for layer in layers:
        cls, cfg = layer["class_name"], layer["config"]
        if cls == "InputLayer":
            shape = list(cfg["batch_shape"][1:])
        elif cls == "Conv2D":
            (kh, kw), (sh, sw), same = cfg["kernel_size"], cfg["strides"], cfg["padding"] == "same"
            h, w, c = shape
            args += ["--conv", ",".join(map(str, (batch, h, w, c, cfg["filters"], kh, kw, sh, sw, int(same), int(first))))]
            first = False
            shape = [-(-h // sh) if same else (h - kh) // sh + 1, -(-w // sw) if same else (w - kw) // sw + 1,
                     cfg["filters"]]
        elif cls == "MaxPooling2D":
            (ph, pw), strides = cfg["pool_size"], cfg.get("strides") or cfg["pool_size"]
            shape = [(shape[0] - ph) // strides[0] + 1, (shape[1] - pw) // strides[1] + 1, shape[2]]
        elif cls == "Flatten":
            n = 1
            for d in shape:
                n *= d
            shape = [n]
        elif cls == "Dense":
            args += ["--gemm", ",".join(map(str, (batch, shape[-1], cfg["units"], int(first))))]
            first = False
            shape = shape[:-1] + [cfg["units"]]
        elif cls not in ("Dropout", "Activation"):
            raise RunError(f"model_shapes: {model}'s {cls} layer is not one the ceiling knows")
    return args


def measure_ceiling(args, model, precision):
    """oneDNN alone doing the model's convolutions and matmuls for one step of batch 128 at
    `precision` (nnfit_step_ceiling's JSON), or None with a note when it cannot run."""
    binary = Path(args.ceiling)
    if not binary.is_file():
        built = subprocess.run(["cmake", "--build", str(binary.parent), "--target", binary.name], cwd=REPO,
                               capture_output=True, text=True)
        if built.returncode != 0 or not binary.is_file():
            raise RunError(f"{binary} is missing and could not be built (cmake --build {binary.parent} --target "
                           f"{binary.name}): {built.stderr.strip()[-300:]}")
    dtype = "bf16" if precision == "bf16" else "f32"
    out = run([str(binary), "--dtype", dtype] + model_shapes(model), args.timeout,
              env=dict(os.environ, OMP_NUM_THREADS=str(args.threads)))
    return json.loads(out.strip().splitlines()[-1])


def machine_description():
    model = platform.processor() or platform.machine()
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            if line.startswith("Model name:"):
                model = line.split(":", 1)[1].strip()
    except (OSError, subprocess.CalledProcessError):
        pass
    return f"{model}, nproc {os.cpu_count()}"


def onednn_isas(nnfit, precisions):
    """The implementations oneDNN picks here for the convnet's convolutions and matmuls, per
    precision (from `nnfit plan` with ONEDNN_VERBOSE=2, which makes every primitive):
    e.g. "float32: brgconv:avx512_core, ...; bf16: brgconv:avx512_core_bf16, ...". """
    parts = []
    for precision in precisions:
        cmd = [nnfit, "plan", str(REPO / "examples" / "fashion_mnist_cnn.json"), "--batch-sizes", "128"]
        if precision == "bf16":
            cmd += ["--dtype-policy", "mixed_bfloat16"]
        try:
            out = subprocess.run(cmd, capture_output=True, text=True, timeout=120,
                                 env=dict(os.environ, ONEDNN_VERBOSE="2")).stdout
        except (OSError, subprocess.TimeoutExpired):
            continue
        impls = sorted({f.split(",")[4] for f in out.splitlines()
                        if f.startswith("onednn_verbose,create") and f.split(",")[3] in ("convolution", "matmul")
                        and len(f.split(",")) > 4})
        if impls:
            parts.append(f"{precision}: {', '.join(impls)}")
    return "; ".join(parts) or "unknown"


def fmt_rate(x):
    return "—" if x is None else f"{x:,.0f}"


def fmt_ratio(a, b):
    return "—" if a is None or b is None else f"{a / b:.2f}×"


def fmt_acc(x):
    return "—" if x is None else f"{100 * x:.1f}%"


def write_report(args, results, versions, notes, started, load_before, command, ceilings=None, brackets=None):
    lines = ["# Fashion-MNIST training throughput: nnfit vs PyTorch vs Keras", ""]
    measured = [f for f in FRAMEWORKS if f in args.frameworks]
    if "nnfit" not in measured:
        lines += ["**Peers only: nnfit was not measured in this run, so there are no ratios.**", ""]
    lines += [
        f"Training samples/s per framework: median over rounds of the per-run median over epochs 2..{args.epochs} "
        f"(epoch 1 is warm-up{'; with one epoch it is all there is' if args.epochs == 1 else ''}). "
        f"{args.rounds} round(s), frameworks run alternately within each round, {args.threads} threads each, "
        "batch 128, Adam 1e-3. Test accuracy: median over rounds of the last epoch's. nnfit trains the model "
        "and input pipeline of `examples/fashion_mnist_{mlp,cnn}.json` with the peers' optimizer (constant Adam 1e-3, "
        "whatever schedule the example ships with) (input pipeline: cache, shuffle, batch, normalize, "
        "prefetch AUTOTUNE) with `--batch-size 128`; its input wait is the median over the steady epochs of "
        "`input_wait_fraction` (the share of training time spent waiting for the next batch).",
        "",
        "| model | nnfit samples/s | PyTorch | Keras | nnfit/PyTorch | nnfit/Keras | nnfit input wait | test acc nnfit | PyTorch | Keras |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for model in args.jobs:
        rate, acc = {}, {}
        for f in FRAMEWORKS:
            runs = results.get((model, f), [])
            rate[f] = statistics.median(steady_throughput(r) for r in runs) if runs else None
            accs = [r[-1]["test_acc"] for r in runs if r[-1]["test_acc"] is not None]
            acc[f] = statistics.median(accs) if accs else None
        waits = [e["input_wait"] for r in results.get((model, "nnfit"), []) for e in (r[1:] or r)
                 if e.get("input_wait") is not None]
        wait = f"{100 * statistics.median(waits):.2f}%" if waits else "—"
        lines.append(f"| {model} | {fmt_rate(rate['nnfit'])} | {fmt_rate(rate['pytorch'])} | {fmt_rate(rate['keras'])} | "
                     f"{fmt_ratio(rate['nnfit'], rate['pytorch'])} | {fmt_ratio(rate['nnfit'], rate['keras'])} | {wait} | "
                     f"{fmt_acc(acc['nnfit'])} | {fmt_acc(acc['pytorch'])} | {fmt_acc(acc['keras'])} |")
    if "nnfit_py" in measured:
        lines += ["", "nnfit from Python (`bench/peers/nnfit_keras_fmnist.py`: the Keras peer's models with "
                  "`from nnfit import keras`, fed by nnfit.data with the CLI example's pipeline, samples/s from the "
                  "engine's own per-epoch figure as the CLI reports it"
                  + ("; with the Keras peer's per-batch Python timer callback" if args.python_callback == "batch"
                     else "") + ") against the CLI, same run:", "",
                  "| model | nnfit CLI samples/s | nnfit.keras samples/s | Python/CLI | test acc nnfit.keras |",
                  "|---|---:|---:|---:|---:|"]
        for model in args.jobs:
            rates = {}
            for f in ("nnfit", "nnfit_py"):
                runs = results.get((model, f), [])
                rates[f] = statistics.median(steady_throughput(r) for r in runs) if runs else None
            accs = [r[-1]["test_acc"] for r in results.get((model, "nnfit_py"), []) if r[-1]["test_acc"] is not None]
            lines.append(f"| {model} | {fmt_rate(rates['nnfit'])} | {fmt_rate(rates['nnfit_py'])} | "
                         f"{fmt_ratio(rates['nnfit_py'], rates['nnfit'])} | "
                         f"{fmt_acc(statistics.median(accs) if accs else None)} |")
    lines += ["", "Memory of the same runs (median over rounds): nnfit's planned peak and its allocator's measured "
              "peak (everything nnfit allocates for training), and each process's peak resident set (`ru_maxrss` "
              "from `wait4`: data set, libraries and interpreter included).", "",
              "| model | nnfit planned peak | nnfit measured peak | nnfit peak RSS | PyTorch peak RSS | Keras peak RSS |",
              "|---|---:|---:|---:|---:|---:|"]
    def mem(model, f, key):
        vals = [r[-1].get("memory", {}).get(key) for r in results.get((model, f), [])]
        vals = [v for v in vals if v]
        return f"{statistics.median(vals) / 2**20:.1f} MiB" if vals else "—"
    for model in args.jobs:
        lines.append(f"| {model} | {mem(model, 'nnfit', 'planned_peak_bytes')} | {mem(model, 'nnfit', 'peak_memory_bytes')} | "
                     f"{mem(model, 'nnfit', 'peak_rss_bytes')} | {mem(model, 'pytorch', 'peak_rss_bytes')} | "
                     f"{mem(model, 'keras', 'peak_rss_bytes')} |")
    if len(args.precisions) > 1:
        # Each framework's bf16 against its own float32 (nnfit: mixed_bfloat16; PyTorch: autocast; Keras:
        # mixed_bfloat16), from the same run.
        lines += ["", "bfloat16 against each framework's own float32 (median samples/s ratio, same run):", "",
                  "| model | " + " | ".join(LABELS[f] for f in FRAMEWORKS) + " |",
                  "|---|" + "---:|" * len(FRAMEWORKS)]
        for model in args.models:
            cells = []
            for f in FRAMEWORKS:
                rates = []
                for p in ("bf16", "float32"):
                    runs = results.get((job_label(model, p), f), [])
                    rates.append(statistics.median(steady_throughput(r) for r in runs) if runs else None)
                cells.append(fmt_ratio(rates[0], rates[1]))
            lines.append(f"| {model} | " + " | ".join(cells) + " |")
    if ceilings:
        lines += ["", "nnfit's step against oneDNN alone doing the same step's convolutions and matrix products at the "
                  "model's shapes (bench/step_ceiling.cpp, run just before and just after each nnfit run: forward, "
                  "backward data except for the first layer, backward weights, each in the faster of channels-last "
                  "and oneDNN's own layout; pooling, activations, loss and optimizer left out). Ceiling samples/s = "
                  "128 / its milliseconds. nnfit / ceiling: per round, nnfit's samples/s over the ceiling at the mean "
                  "of the two measurements that bracket its run, median over rounds; the swing is the largest "
                  "after/before ratio of those pairs (far from 1: the host changed speed during the run, and the "
                  "round's fraction is uncertain by as much). PyTorch / ceiling uses the median of all of them. "
                  "nnfit's own kernels may beat oneDNN's at a layer (its first layer's joined ops do), so the "
                  "fraction can pass 1.", "",
                  "| model | oneDNN alone ms/step (median) | ceiling samples/s | nnfit samples/s | nnfit / ceiling "
                  "(per round) | ceiling swing across an nnfit run | PyTorch / ceiling |",
                  "|---|---:|---:|---:|---:|---:|---:|"]
        for job in args.jobs:
            if job not in ceilings:
                continue
            ms = statistics.median(c["total_ms"] for c in ceilings[job])
            top = 128 / (ms / 1e3)
            rate = {f: (statistics.median(steady_throughput(r) for r in results[(job, f)])
                        if results.get((job, f)) else None) for f in ("nnfit", "pytorch")}
            pairs = (brackets or {}).get(job, [])
            fractions = [b["samples_per_s"] / (128 / ((b["before_ms"] + b["after_ms"]) / 2 / 1e3)) for b in pairs]
            per_round = ", ".join(f"{x:.2f}" for x in fractions)
            fraction = f"{statistics.median(fractions):.2f}× ({per_round})" if fractions else "—"
            swing = (f"{max(max(b['before_ms'], b['after_ms']) / min(b['before_ms'], b['after_ms']) for b in pairs):.2f}"
                     if pairs else "—")
            lines.append(f"| {job} | {ms:.2f} | {top:,.0f} | {fmt_rate(rate['nnfit'])} | {fraction} | {swing} | "
                         f"{fmt_ratio(rate['pytorch'], top) if rate['pytorch'] else '—'} |")
        lines += ["", "The ceiling's parts (its first measurement), with oneDNN's implementation:", "",
                  "| model | primitive | ms | implementation |", "|---|---|---:|---|"]
        for job in args.jobs:
            for op in (ceilings.get(job) or [{"ops": []}])[0]["ops"]:
                lines.append(f"| {job} | {op['what']} | {op['ms']:.3f} | {op['impl']} |")
    # Per-epoch spread: every steady epoch of every round, so a run-to-run swing shows.
    lines += ["", "Spread of the steady epochs (all rounds): samples/s min / median / max, and max/min.", "",
              "| model | framework | epochs | min | median | max | max/min |", "|---|---|---:|---:|---:|---:|---:|"]
    for model in args.jobs:
        for f in FRAMEWORKS:
            rates = [e["samples_per_s"] for r in results.get((model, f), []) for e in (r[1:] or r)]
            if rates:
                lines.append(f"| {model} | {LABELS[f]} | {len(rates)} | {fmt_rate(min(rates))} | "
                             f"{fmt_rate(statistics.median(rates))} | {fmt_rate(max(rates))} | "
                             f"{max(rates) / min(rates):.2f} |")
    lines += ["", "## How it was measured", "",
              f"- machine: {machine_description()}; load average before the run: "
              + ", ".join(f"{x:.2f}" for x in load_before),
              f"- oneDNN's implementations here (convolutions and matmuls): "
              f"{onednn_isas(args.nnfit, args.precisions) if not args.no_nnfit else 'not measured'}",
              f"- date: {started.strftime('%Y-%m-%d %H:%M %Z').strip()}",
              f"- command: `{command}`"]
    for f in measured:
        if f in versions:
            lines.append(f"- {LABELS[f]}: {versions[f]}")
    for n in notes:
        lines.append(f"- note: {n}")
    lines += ["", "## Per-run samples/s (steady epochs)", "", "| model | framework | rounds |", "|---|---|---|"]
    for model in args.jobs:
        for f in FRAMEWORKS:
            runs = results.get((model, f), [])
            if runs:
                per_round = "; ".join(", ".join(fmt_rate(e["samples_per_s"]) for e in (r[1:] or r)) for r in runs)
                lines.append(f"| {model} | {LABELS[f]} | {per_round} |")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines) + "\n")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--models", default="mlp,cnn", help="comma-separated subset of mlp,cnn")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--precisions", default="float32",
                    help="comma-separated subset of float32,bf16 (bf16: nnfit and Keras mixed_bfloat16, PyTorch autocast)")
    ap.add_argument("--out", default=str(REPO / "bench" / "RESULTS.md"))
    ap.add_argument("--nnfit", default=str(REPO / "build" / "release" / "nnfit"), help="nnfit binary")
    ap.add_argument("--no-nnfit", action="store_true", help="measure the peers only (the report says so)")
    ap.add_argument("--ceiling", default=str(REPO / "build" / "release" / "nnfit_step_ceiling"),
                    help="oneDNN alone at the model's shapes (bench/step_ceiling.cpp; built on demand)")
    ap.add_argument("--no-ceiling", action="store_true", help="leave the oneDNN ceiling out")
    ap.add_argument("--peers-dir", default=None, help="folder with torch_fmnist.py and keras_fmnist.py")
    ap.add_argument("--timeout", type=int, default=1800, help="seconds per training run")
    ap.add_argument("--torch-python", default=None,
                    help="the Python whose torch is measured (default: $NNFIT_TORCH_PYTHON, else the venv "
                         "scripts/peer_venvs.sh torch makes)")
    ap.add_argument("--keras-python", default=None,
                    help="the Python whose TensorFlow + Keras is measured (default: $NNFIT_KERAS_PYTHON, else "
                         "the venv scripts/peer_venvs.sh keras makes)")
    ap.add_argument("--no-keras", action="store_true", help="leave Keras out (the report says so)")
    ap.add_argument("--no-pytorch", action="store_true", help="leave PyTorch out (the report says so; no ratios to it)")
    ap.add_argument("--python-package", default=str(REPO / "build" / "release" / "python"),
                    help="folder holding the built nnfit Python package (for nnfit.keras)")
    ap.add_argument("--nnfit-python", default="/usr/bin/python3",
                    help="the interpreter the package was built for (Debian's python3 with python3-numpy)")
    ap.add_argument("--no-python", action="store_true", help="leave nnfit.keras (Python) out")
    ap.add_argument("--python-callback", choices=("none", "batch"), default="none",
                    help="nnfit.keras: 'batch' adds the Keras peer's per-batch Python timer callback")
    args = ap.parse_args()
    script = os.path.relpath(__file__, os.getcwd())
    if script.startswith(".."):
        script = str(Path(__file__).resolve())
    command = shlex.join([sys.executable, script] + sys.argv[1:])

    args.models = [m.strip() for m in args.models.split(",") if m.strip()]
    bad = [m for m in args.models if m not in ("mlp", "cnn")]
    if bad or not args.models:
        ap.error(f"--models takes mlp and/or cnn, got {args.models}")
    if args.rounds < 1 or args.epochs < 1:
        ap.error("--rounds and --epochs must be >= 1")
    args.precisions = [p.strip() for p in args.precisions.split(",") if p.strip()]
    if not args.precisions or any(p not in PRECISIONS for p in args.precisions):
        ap.error(f"--precisions takes float32 and/or bf16, got {args.precisions}")
    args.jobs = [job_label(m, p) for m in args.models for p in args.precisions]
    args.peers_dir = find_peers_dir(args.peers_dir)

    notes = []
    args.frameworks = []
    if args.no_pytorch:
        notes.append("PyTorch left out (--no-pytorch)")
    else:
        args.torch_python = peer_python("torch", args.torch_python)
        args.frameworks = ["pytorch"]
    if not args.no_nnfit:
        if not Path(args.nnfit).is_file():
            sys.exit(f"fmnist_bench: nnfit binary not found at {args.nnfit}\n"
                     "  build it: cmake --preset release && cmake --build --preset release\n"
                     "  or pass --nnfit PATH, or --no-nnfit to measure the peers only")
        args.frameworks.insert(0, "nnfit")
        if not args.no_python:
            if not (Path(args.python_package) / "nnfit").is_dir():
                sys.exit(f"fmnist_bench: no nnfit Python package at {args.python_package} (build it, pass "
                         "--python-package, or --no-python)")
            args.frameworks.insert(1, "nnfit_py")
    if args.no_keras:
        notes.append("Keras left out (--no-keras)")
    else:
        args.keras_python = peer_python("keras", args.keras_python)
        args.frameworks.append("keras")

    started = datetime.datetime.now().astimezone()
    load_before = os.getloadavg()
    results, versions, ceilings, brackets, failed = {}, {}, {}, {}, False

    def ceiling_now(rnd, job, model, precision, when):
        """oneDNN alone at the job's shapes now (kept in `ceilings`), or None with a note."""
        print(f"round {rnd + 1}/{args.rounds} {job} oneDNN alone ({when}) ...", file=sys.stderr, flush=True)
        try:
            c = measure_ceiling(args, model, precision)
        except (RunError, json.JSONDecodeError, IndexError) as e:
            print(f"  ✗ oneDNN ceiling {job}: {e}", file=sys.stderr)
            notes.append(f"oneDNN ceiling {job} round {rnd + 1} ({when}) failed: {str(e).splitlines()[0]}")
            return None
        ceilings.setdefault(job, []).append(c)
        return c

    for rnd in range(args.rounds):
        order = args.frameworks[rnd % len(args.frameworks):] + args.frameworks[:rnd % len(args.frameworks)]
        for model, precision in [(m, p) for m in args.models for p in args.precisions]:
            job = job_label(model, precision)
            for f in order:
                bracket = f == "nnfit" and not args.no_ceiling
                before = ceiling_now(rnd, job, model, precision, "before nnfit") if bracket else None
                print(f"round {rnd + 1}/{args.rounds} {job} {LABELS[f]} ...", file=sys.stderr, flush=True)
                try:
                    epochs, version = (run_nnfit(args, model, precision) if f == "nnfit"
                                       else run_peer(args, f, model, precision))
                except RunError as e:
                    print(f"  ✗ {LABELS[f]} {job}: {e}", file=sys.stderr)
                    notes.append(f"{LABELS[f]} {job} round {rnd + 1} failed: {str(e).splitlines()[0]}")
                    failed = True
                    continue
                after = ceiling_now(rnd, job, model, precision, "after nnfit") if bracket else None
                if before and after:
                    brackets.setdefault(job, []).append(
                        {"before_ms": before["total_ms"], "after_ms": after["total_ms"],
                         "samples_per_s": steady_throughput(epochs)})
                results.setdefault((job, f), []).append(epochs)
                if version:
                    versions[f] = version
                print(f"  ✓ {LABELS[f]} {job}: {fmt_rate(steady_throughput(epochs))} samples/s, "
                      f"test acc {fmt_acc(epochs[-1]['test_acc'])}", file=sys.stderr)
    out = write_report(args, results, versions, notes, started, load_before, command, ceilings, brackets)
    print(out.read_text())
    print(f"fmnist_bench: wrote {out}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
