#!/usr/bin/env python3
"""XProf (the current TensorBoard profile plugin) reads nnfit's .xplane.pb.

Runs nnfit_write_xplane (a small trace on two threads) into a temporary LOG_DIR, then
converts the XSpace with XProf's own converter (`xprof.convert.raw_to_tool_data`, the C++
code the plugin serves its tools from) to the trace viewer's JSON, and checks the threads,
the ranges, their nesting, durations and stats. The venv is ~/.venvs/xprof
(NNFIT_XPROF_VENV overrides), made with /usr/bin/python3 and reused; exits 77 (CTest's
SKIP_RETURN_CODE) only when xprof is missing and PyPI cannot be reached.

usage: xplane_xprof_test.py PATH/TO/nnfit_write_xplane
"""
import json
import os
import subprocess
import sys
import tempfile
import urllib.request

SKIP = 77
VENV = os.environ.get("NNFIT_XPROF_VENV", os.path.expanduser("~/.venvs/xprof"))
VENV_PY = os.path.join(VENV, "bin", "python")

CONVERT = r"""
import json, sys
from xprof.convert import raw_to_tool_data as r
data, _ = r.xspace_to_tool_data([sys.argv[1]], "trace_viewer", {})
sys.stdout.write(data.decode() if isinstance(data, bytes) else data)
"""


def log(msg):
    print(f"xplane_xprof_test: {msg}", flush=True)


def has_xprof():
    return os.path.exists(VENV_PY) and subprocess.run(
        [VENV_PY, "-c", "import xprof.convert.raw_to_tool_data"], capture_output=True).returncode == 0


def ensure_venv():
    if has_xprof():
        return
    if not os.path.exists(VENV_PY):
        log(f"creating {VENV} with /usr/bin/python3")
        os.makedirs(os.path.dirname(VENV), exist_ok=True)
        if subprocess.run(["/usr/bin/python3", "-m", "venv", VENV]).returncode != 0:
            log("cannot create the venv: install python3-venv (scripts/setup.sh does)")
            sys.exit(1)
    index = os.environ.get("PIP_INDEX_URL", "https://pypi.org/simple").rstrip("/")
    try:
        urllib.request.urlopen(f"{index}/xprof/", timeout=15)
    except Exception as e:  # noqa: BLE001 - any failure means unreachable
        log(f"SKIPPED: xprof is not installed and {index} cannot be reached ({e})")
        sys.exit(SKIP)
    log(f"{VENV}: pip install xprof")
    r = subprocess.run([VENV_PY, "-m", "pip", "install", "-q", "--disable-pip-version-check", "xprof"])
    if r.returncode != 0 or not has_xprof():
        log("pip install xprof failed although PyPI answered")
        sys.exit(1)


def check(cond, msg):
    if not cond:
        raise AssertionError(msg)


def main():
    writer = sys.argv[1]
    ensure_venv()
    with tempfile.TemporaryDirectory() as logdir:
        path = subprocess.run([writer, logdir], check=True, capture_output=True, text=True).stdout.strip()
        check(path.endswith(".xplane.pb") and "/train/plugins/profile/" in path, f"unexpected path {path}")
        out = subprocess.run([VENV_PY, "-c", CONVERT, path], capture_output=True, text=True)
        check(out.returncode == 0, f"XProf could not convert {path}:\n{out.stderr[-2000:]}")
        events = json.loads(out.stdout)["traceEvents"]
    threads = {e["tid"]: e["args"]["name"] for e in events if e.get("name") == "thread_name"}
    check(sorted(threads.values()) == ["main", "prefetch"], f"threads: {threads}")
    ranges = {e["name"]: e for e in events if e.get("ph") == "X"}
    check(set(ranges) == {"train_step", "dense/matmul", "loss", "prefetch/produce"}, f"ranges: {sorted(ranges)}")
    step, mm, loss = ranges["train_step"], ranges["dense/matmul"], ranges["loss"]
    check(threads[step["tid"]] == "main" and threads[ranges["prefetch/produce"]["tid"]] == "prefetch",
          "ranges on the wrong threads")
    # Nesting: both kernels inside the step, one after the other.
    check(step["ts"] <= mm["ts"] and mm["ts"] + mm["dur"] <= loss["ts"] + 1e-3 and
          loss["ts"] + loss["dur"] <= step["ts"] + step["dur"] + 1e-3, f"not nested: {step} {mm} {loss}")
    check(mm["dur"] >= 2000 and loss["dur"] >= 1000, f"durations (us): {mm['dur']}, {loss['dur']}")
    check(step["args"].get("arg") == "7" and step["args"].get("category") == "step", f"stats: {step['args']}")
    check(mm["args"].get("category") == "kernel", f"stats: {mm['args']}")
    log(f"XProf read {len(ranges)} ranges on {len(threads)} threads from the XSpace")
    return 0


if __name__ == "__main__":
    sys.exit(main())
