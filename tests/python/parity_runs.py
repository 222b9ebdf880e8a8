"""What the Keras parity scripts share: one script, its first line `IMPORT_LINE`, run under
real Keras (KERAS_PYTHON, the interop venv; scripts/keras_venv.sh prints one) and under
`from nnfit import keras` (NNFIT_PYTHON, default this interpreter, importing nnfit from
its PYTHONPATH), each printing one `PARITY <json>` line."""
import json
import os
import sys
import subprocess


def run(python, script, import_line, env, timeout, with_lines=None):
    """The script's PARITY result under `python`; exits naming the run if it fails. With
    `with_lines` (prefixes such as "FILE "), also {prefix: the JSON of the line it starts}."""
    code = script.replace("IMPORT_LINE", import_line)
    if import_line.startswith("from nnfit"):
        code = code.replace("from keras import layers", "from nnfit.keras import layers")
    r = subprocess.run([python, "-c", code], capture_output=True, text=True, env=env, timeout=timeout)
    if r.returncode != 0:
        sys.exit(f"{python} ({import_line}) failed:\n{r.stderr[-3000:]}")
    extra = {p: json.loads(line[len(p):]) for p in (with_lines or ()) for line in r.stdout.splitlines()
             if line.startswith(p)}
    for line in r.stdout.splitlines():
        if line.startswith("PARITY "):
            return (json.loads(line[7:]), extra) if with_lines is not None else json.loads(line[7:])
    sys.exit(f"{python} ({import_line}) printed no result:\n{r.stdout[-2000:]}")


def run_both(script, argv, timeout):
    """(Keras's result, nnfit's) for `usage: SCRIPT KERAS_PYTHON [NNFIT_PYTHON]`."""
    keras_python = argv[1]
    nnfit_python = argv[2] if len(argv) > 2 else sys.executable
    keras_env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    keras_env.update(KERAS_BACKEND="tensorflow", TF_CPP_MIN_LOG_LEVEL="3")
    return (run(keras_python, script, "import keras", keras_env, timeout),
            run(nnfit_python, script, "from nnfit import keras", dict(os.environ), timeout))
