"""Keras programs as a new user writes them (tests/python/programs/: fourteen scripts after
the keras.io examples and the Keras developer guides, on small synthetic data), each run
under real Keras 3 (the Keras venv) and with its import line changed to
`from nnfit import keras`: a program passes when it runs under both and prints the same
RESULT (History keys, parameter counts, shapes and the other facts it reports).

The scripts nnfit does not run yet are listed in GAPS with what stops them; the test fails
if a listed one now passes (take it off the list) or an unlisted one fails, so the count
printed at the end ("N of 14 run unchanged") is always true.

usage: keras_program_parity.py KERAS_PYTHON [NNFIT_PYTHON] [SCRIPT ...]
"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAMS = os.path.join(HERE, "programs")

# Scripts nnfit does not run yet, and why (kept true by this test).
GAPS = {}


def run(python, path, nnfit, env):
    code = open(path).read()
    if nnfit:
        code = code.replace("import keras\n", "from nnfit import keras\n", 1)
        code = code.replace("from keras import layers, ops\n", "from nnfit.keras import layers, ops\n")
        code = code.replace("from keras import layers\n", "from nnfit.keras import layers\n")
    r = subprocess.run([python, "-c", code], capture_output=True, text=True, env=env, timeout=900)
    if r.returncode != 0:
        lines = [l for l in r.stderr.strip().splitlines() if l.strip()]
        return None, lines[-1][:300] if lines else f"exit {r.returncode}"
    for line in r.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:]), None
    return None, "printed no RESULT"


def main():
    keras_python = sys.argv[1]
    nnfit_python = sys.argv[2] if len(sys.argv) > 2 else sys.executable
    names = sys.argv[3:] or sorted(f[:-3] for f in os.listdir(PROGRAMS) if f.endswith(".py"))
    keras_env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    keras_env.update(KERAS_BACKEND="tensorflow", TF_CPP_MIN_LOG_LEVEL="3")
    passed, wrong = [], []
    for name in names:
        path = os.path.join(PROGRAMS, name + ".py")
        want, err = run(keras_python, path, False, keras_env)
        if err:
            sys.exit(f"{name}: real Keras fails: {err}")
        got, err = run(nnfit_python, path, True, dict(os.environ))
        ok = err is None and got == want
        if ok:
            passed.append(name)
        why = "" if ok else (err or f"differs: keras {want}\n       nnfit  {got}")
        print(f"{'ok  ' if ok else 'FAIL'} {name}{'' if ok else ': ' + why}", flush=True)
        if ok == (name in GAPS):
            wrong.append(name)
    print(f"{len(passed)} of {len(names)} run unchanged under nnfit with the same results as Keras")
    if wrong:
        sys.exit("the GAPS list is out of date for: " + ", ".join(wrong) +
                 " (a listed program passes, or an unlisted one fails)")


if __name__ == "__main__":
    main()
