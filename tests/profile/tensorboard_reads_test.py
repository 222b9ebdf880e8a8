#!/usr/bin/env python3
"""TensorBoard itself reads nnfit's logs.

Runs nnfit_write_tensorboard_logs (a tiny fit() with the TensorBoard callback and a Chrome
trace export) into a temporary LOG_DIR, then loads the event files with TensorBoard's own
loaders from PyPI's `tensorboard`:
  * event_accumulator.EventAccumulator (legacy scalars: simple_value), and
  * plugin_event_accumulator.EventAccumulator (what `tensorboard --logdir` serves: values
    migrated to tensors with the "scalars" plugin's metadata),
and checks runs, tags, steps and values against the History the program printed. The trace
must gunzip to Trace Event JSON with ranges nested per thread.

The venv lives in ~/.venvs/tb (NNFIT_TB_VENV overrides), is made with /usr/bin/python3
(Debian's; the first python3 on PATH may be another) and reused. Exits 77 (CTest's
SKIP_RETURN_CODE) only when tensorboard is missing and PyPI cannot be reached.

usage: tensorboard_reads_test.py PATH/TO/nnfit_write_tensorboard_logs
"""
import gzip
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import urllib.request

SKIP = 77
VENV = os.environ.get("NNFIT_TB_VENV", os.path.expanduser("~/.venvs/tb"))
VENV_PY = os.path.join(VENV, "bin", "python")


def log(msg):
    print(f"tensorboard_reads_test: {msg}", flush=True)


def pypi_reachable():
    index = os.environ.get("PIP_INDEX_URL", "https://pypi.org/simple").rstrip("/")
    try:
        with urllib.request.urlopen(f"{index}/tensorboard/", timeout=15) as r:
            return r.status == 200
    except Exception as e:  # noqa: BLE001 - any failure means unreachable
        log(f"{index} unreachable: {e}")
        return False


def ensure_venv():
    def has_tensorboard():
        return os.path.exists(VENV_PY) and subprocess.run(
            [VENV_PY, "-c", "import tensorboard"], capture_output=True).returncode == 0

    if has_tensorboard():
        return
    if not os.path.exists(VENV_PY):
        log(f"creating {VENV} with /usr/bin/python3")
        os.makedirs(os.path.dirname(VENV), exist_ok=True)
        r = subprocess.run(["/usr/bin/python3", "-m", "venv", VENV])
        if r.returncode != 0:
            log("cannot create the venv: install python3-venv (scripts/setup.sh does)")
            sys.exit(1)
    if not pypi_reachable():
        log("SKIPPED: tensorboard is not installed in the venv and PyPI cannot be reached")
        sys.exit(SKIP)
    log(f"{VENV}: pip install tensorboard")
    r = subprocess.run([VENV_PY, "-m", "pip", "install", "-q", "--disable-pip-version-check", "tensorboard"])
    if r.returncode != 0 or not has_tensorboard():
        log("pip install tensorboard failed although PyPI answered")
        sys.exit(1)


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def check(cond, msg):
    if not cond:
        raise AssertionError(msg)


def expected_runs(out):
    """run -> tag -> [(step, value)], as Keras 3's TensorBoard callback writes them: epoch
    scalars at the epoch, and each validation's logs as evaluation_<name>_vs_iterations at
    the optimizer's iterations."""
    runs = {"train": {}, "validation": {}}
    for epoch, logs in enumerate(out["epochs"]):
        for key, value in logs.items():
            if key.startswith("val_"):
                runs["validation"].setdefault("epoch_" + key[4:], []).append((epoch, value))
                runs["validation"].setdefault(f"evaluation_{key[4:]}_vs_iterations", []).append(
                    (out["iterations"][epoch], value))
            else:
                runs["train"].setdefault("epoch_" + key, []).append((epoch, value))
        runs["train"].setdefault("epoch_learning_rate", []).append((epoch, out["learning_rate"][epoch]))
    return runs


def check_histograms(pacc, tags, out):
    """Keras 3's histogram_freq=1: each weight's "<path>/histogram" at every epoch, read by
    TensorBoard's histograms plugin as a [30, 3] float64 tensor; the last epoch's equals what
    TensorBoard's own histogram summary (summary_v2.histogram_pb) makes of the final weights."""
    import numpy as np
    from tensorboard.plugins.histogram import summary_v2
    from tensorboard.util import tensor_util
    want = sorted(f"{path}/histogram" for path in out["weights"])
    check(sorted(tags) == want, f"train: histogram tags {sorted(tags)}, want {want}")
    for path, values in out["weights"].items():
        tag = f"{path}/histogram"
        meta = pacc.SummaryMetadata(tag)
        check(meta.plugin_data.plugin_name == "histograms", f"{tag}: plugin {meta.plugin_data.plugin_name!r}")
        events = pacc.Tensors(tag)
        check([e.step for e in events] == list(range(len(out["epochs"]))), f"{tag}: steps {[e.step for e in events]}")
        got = tensor_util.make_ndarray(events[-1].tensor_proto)
        ref = tensor_util.make_ndarray(summary_v2.histogram_pb(tag, np.asarray(values, np.float32)).value[0].tensor)
        check(got.shape == (30, 3) and got.dtype == np.float64, f"{tag}: tensor {got.shape} {got.dtype}")
        check(np.array_equal(got[:, 2], ref[:, 2]), f"{tag}: counts {got[:, 2]} != TensorBoard's {ref[:, 2]}")
        check(np.allclose(got[:, :2], ref[:, :2], rtol=1e-12, atol=0), f"{tag}: edges differ from TensorBoard's")
        check(got[:, 2].sum() == len(values), f"{tag}: {got[:, 2].sum()} values counted of {len(values)}")
    log(f"train: {len(tags)} weight histograms x {len(out['epochs'])} epochs read back by TensorBoard")


def check_logs(log_dir, out):
    from tensorboard.backend.event_processing import event_accumulator as ea
    from tensorboard.backend.event_processing import plugin_event_accumulator as pea
    from tensorboard.util import tensor_util

    for run, tags in expected_runs(out).items():
        run_dir = os.path.join(log_dir, run)
        # Legacy loader: simple_value scalars.
        acc = ea.EventAccumulator(run_dir, size_guidance={ea.SCALARS: 0})
        acc.Reload()
        check(acc.file_version == 2.0, f"{run}: file_version {acc.file_version!r}, want 2.0 (brain.Event:2)")
        got = sorted(acc.Tags()["scalars"])
        check(got == sorted(tags), f"{run}: scalar tags {got}, want {sorted(tags)}")
        for tag, values in tags.items():
            events = acc.Scalars(tag)
            check([e.step for e in events] == [step for step, _ in values], f"{run}/{tag}: steps {[e.step for e in events]}")
            for e, (_, v) in zip(events, values):
                check(e.value == f32(v), f"{run}/{tag} step {e.step}: {e.value} != float32({v})")
                check(e.wall_time > 1.6e9, f"{run}/{tag}: wall_time {e.wall_time}")
        # The data path `tensorboard --logdir` uses: values migrated to scalar tensors.
        pacc = pea.EventAccumulator(run_dir, size_guidance={pea.TENSORS: 0})
        pacc.Reload()
        histograms = [t for t in pacc.Tags()["tensors"] if t.endswith("/histogram")]
        got = sorted(t for t in pacc.Tags()["tensors"] if t not in histograms)
        check(got == sorted(tags), f"{run}: tensor tags {got}, want {sorted(tags)}")
        if run == "train":
            check_histograms(pacc, histograms, out)
        else:
            check(not histograms, f"{run}: histograms {histograms}; Keras writes them to train only")
        for tag, values in tags.items():
            meta = pacc.SummaryMetadata(tag)
            check(meta.plugin_data.plugin_name == "scalars", f"{run}/{tag}: plugin {meta.plugin_data.plugin_name!r}")
            events = pacc.Tensors(tag)
            got_values = [float(tensor_util.make_ndarray(e.tensor_proto)) for e in events]
            check([e.step for e in events] == [step for step, _ in values], f"{run}/{tag}: tensor steps")
            check(got_values == [f32(v) for _, v in values], f"{run}/{tag}: {got_values} != {values}")
        log(f"{run}: {len(tags)} tags x {len(out['epochs'])} epochs read back by TensorBoard: {sorted(tags)}")


def check_trace(path, log_dir):
    rel = os.path.relpath(path, log_dir).split(os.sep)
    check(rel[:3] == ["train", "plugins", "profile"] and len(rel) == 5 and rel[4].endswith(".trace.json.gz"),
          f"trace layout: {rel}")
    with gzip.open(path, "rt") as f:
        doc = json.load(f)
    events = doc["traceEvents"]
    spans = {}
    names = {e["tid"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    for e in events:
        if e["ph"] == "X":
            check(isinstance(e["ts"], (int, float)) and e["dur"] >= 0, f"bad X event {e}")
            spans.setdefault(e["tid"], []).append((e["ts"], e["ts"] + e["dur"], e["name"]))
    check(set(spans) <= names, "an X event's thread has no thread_name")
    for tid, s in spans.items():
        s.sort(key=lambda x: (x[0], -x[1]))
        stack = []
        for b, end, name in s:
            while stack and stack[-1] <= b:
                stack.pop()
            check(not stack or end <= stack[-1] + 1e-6, f"tid {tid}: {name} at {b} overlaps its parent")
            stack.append(end)
    epochs = [e for e in events if e["ph"] == "X" and e["name"] == "epoch"]
    check(len(epochs) == 3, f"{len(epochs)} epoch ranges, want 3")
    log(f"trace: {sum(len(s) for s in spans.values())} nested ranges in {path}")


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    if os.environ.get("NNFIT_TB_IN_VENV") != "1":
        ensure_venv()
        os.environ["NNFIT_TB_IN_VENV"] = "1"
        os.execv(VENV_PY, [VENV_PY, os.path.abspath(__file__), sys.argv[1]])
    log_dir = tempfile.mkdtemp(prefix="nnfit_tb_")
    try:
        r = subprocess.run([sys.argv[1], log_dir], capture_output=True, text=True)
        if r.returncode != 0:
            log(f"{sys.argv[1]} failed ({r.returncode}):\n{r.stderr}")
            return 1
        out = json.loads(r.stdout)
        check_logs(log_dir, out)
        check_trace(out["trace_file"], log_dir)
    except AssertionError as e:
        log(f"FAILED: {e}")
        return 1
    finally:
        shutil.rmtree(log_dir, ignore_errors=True)
    log("passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
