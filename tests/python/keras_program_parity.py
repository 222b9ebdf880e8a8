"""Keras programs as a new user writes them (tests/python/programs/: scripts after the
keras.io examples and the Keras developer guides, on small synthetic data), each run under
real Keras 3 (the Keras venv) and with its import lines changed to `from nnfit import keras`:
a program passes when it runs under both and prints the same RESULT.

A RESULT is one JSON line. Everything in it but floats must be equal: History keys,
parameter counts, summary lines, shapes, config keys, booleans. Floats (losses, metrics,
predictions: the programs set their weights from a seeded generator and train without
shuffling, so both frameworks compute the same numbers) must agree within the tolerance the
program states in its RESULT as "rtol" (and "atol", default 1e-6):
|keras - nnfit| <= rtol * max(|keras|, |nnfit|) + atol. A RESULT with floats and no "rtol"
is an error in the program.

Keras's side runs all programs in one interpreter (keras.backend.clear_session() before
each, a fresh namespace as `__main__`), which spends TensorFlow's import once; nnfit's side
runs each program as its own script, as a user would, while Keras's runs go on.

The scripts nnfit does not run yet are listed in GAPS with what stops them; the test fails
if a listed one now passes (take it off the list) or an unlisted one fails, so the count
printed at the end ("N of M run unchanged") is always true.

usage: keras_program_parity.py KERAS_PYTHON [NNFIT_PYTHON] [SCRIPT ...]
"""
import json
import math
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAMS = os.path.join(HERE, "programs")
TIMEOUT_S = 900

# Scripts nnfit does not run yet, and why (kept true by this test).
GAPS = {}

# Runs under the Keras interpreter: every program path in argv, one `PROGRAM <json>` line each.
KERAS_WORKER = r"""
import contextlib, io, json, sys, time, traceback
import keras
out = sys.stdout
for path in sys.argv[1:]:
    keras.backend.clear_session()
    printed = io.StringIO()
    began = time.perf_counter()
    try:
        with contextlib.redirect_stdout(printed):
            exec(compile(open(path).read(), path, "exec"), {"__name__": "__main__", "__file__": path})
        error = None
    except BaseException:
        error = traceback.format_exc().strip().splitlines()[-1]
    print("PROGRAM " + json.dumps({"path": path, "stdout": printed.getvalue(), "error": error,
                                   "seconds": time.perf_counter() - began}), file=out, flush=True)
"""


def nnfit_code(path):
    code = open(path).read()
    code = code.replace("import keras\n", "from nnfit import keras\n", 1)
    code = code.replace("from keras import layers, ops\n", "from nnfit.keras import layers, ops\n")
    code = code.replace("from keras import layers\n", "from nnfit.keras import layers\n")
    return code


def result_of(stdout):
    for line in stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    return None


def run_nnfit(python, path, env):
    """(RESULT, error, seconds) of the program as a script under nnfit."""
    began = time.perf_counter()
    r = subprocess.run([python, "-c", nnfit_code(path)], capture_output=True, text=True, env=env, timeout=TIMEOUT_S)
    seconds = time.perf_counter() - began
    if r.returncode != 0:
        lines = [l for l in r.stderr.strip().splitlines() if l.strip()]
        return None, lines[-1][:300] if lines else f"exit {r.returncode}", seconds
    got = result_of(r.stdout)
    return (got, None, seconds) if got is not None else (None, "printed no RESULT", seconds)


def has_float(value):
    if isinstance(value, float):
        return True
    if isinstance(value, dict):
        return any(has_float(v) for v in value.values())
    return isinstance(value, list) and any(has_float(v) for v in value)


def differences(want, got, rtol, atol, where="RESULT"):
    """Where `got` differs from `want`: floats within the tolerance, everything else equal."""
    if isinstance(want, float) and isinstance(got, (float, int)) and not isinstance(got, bool):
        if math.isnan(want) and math.isnan(got):
            return []
        ok = abs(want - got) <= rtol * max(abs(want), abs(got)) + atol
        return [] if ok else [f"{where}: keras {want!r}, nnfit {got!r}"]
    if isinstance(want, dict) and isinstance(got, dict):
        if sorted(want) != sorted(got):
            return [f"{where} keys: keras {sorted(want)}, nnfit {sorted(got)}"]
        return [d for k in want for d in differences(want[k], got[k], rtol, atol, f"{where}.{k}")]
    if isinstance(want, list) and isinstance(got, list):
        if len(want) != len(got):
            return [f"{where}: keras {want}, nnfit {got}"]
        return [d for i, (a, b) in enumerate(zip(want, got)) for d in differences(a, b, rtol, atol, f"{where}[{i}]")]
    return [] if type(want) is type(got) and want == got else [f"{where}: keras {want!r}, nnfit {got!r}"]


def main():
    keras_python = sys.argv[1]
    nnfit_python = sys.argv[2] if len(sys.argv) > 2 else sys.executable
    names = sys.argv[3:] or sorted(f[:-3] for f in os.listdir(PROGRAMS) if f.endswith(".py"))
    paths = [os.path.join(PROGRAMS, name + ".py") for name in names]
    keras_env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    keras_env.update(KERAS_BACKEND="tensorflow", TF_CPP_MIN_LOG_LEVEL="3")
    keras_run = subprocess.Popen([keras_python, "-c", KERAS_WORKER, *paths], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True, env=keras_env)
    nnfit_runs = {name: run_nnfit(nnfit_python, path, dict(os.environ)) for name, path in zip(names, paths)}
    stdout, stderr = keras_run.communicate(timeout=TIMEOUT_S)
    keras_runs = {}
    for line in stdout.splitlines():
        if line.startswith("PROGRAM "):
            run = json.loads(line[8:])
            keras_runs[run["path"]] = run
    passed, wrong = [], []
    for name, path in zip(names, paths):
        run = keras_runs.get(path)
        if run is None:
            sys.exit(f"{name}: the Keras interpreter stopped before it: {stderr.strip()[-2000:]}")
        want = result_of(run["stdout"])
        if run["error"] or want is None:
            sys.exit(f"{name}: real Keras fails: {run['error'] or 'printed no RESULT'}")
        if has_float(want) and "rtol" not in want:
            sys.exit(f"{name}: its RESULT has floats but states no tolerance: add \"rtol\" (and \"atol\") to it")
        got, err, seconds = nnfit_runs[name]
        if err is None:
            found = differences(want, got, want.get("rtol", 0.0), want.get("atol", 1e-6))
            err = "differs: " + "; ".join(found[:6]) if found else None
        ok = err is None
        if ok:
            passed.append(name)
        took = f" ({run['seconds']:.1f} s under Keras, {seconds:.1f} s under nnfit)"
        print(f"{'ok  ' if ok else 'FAIL'} {name}{took}{'' if ok else ': ' + err}", flush=True)
        if ok == (name in GAPS):
            wrong.append(name)
    print(f"{len(passed)} of {len(names)} run unchanged under nnfit with the same results as Keras")
    if wrong:
        sys.exit("the GAPS list is out of date for: " + ", ".join(wrong) +
                 " (a listed program passes, or an unlisted one fails)")


if __name__ == "__main__":
    main()
