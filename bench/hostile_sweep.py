#!/usr/bin/env python3
"""Hostile-input sweep of issue 39: mutated .keras and legacy .h5 files through `nnfit predict`
and `evaluate`, damaged backups through `nnfit train --backup-dir`, mutated train configs,
special files (FIFOs, /dev/zero, /dev/urandom, folders) as every path, and bad nnfit.keras
calls; each run in a child with a timeout and an address-space limit, sorted into classes
(`classify`), written as a table to bench/RESULTS_hostile.md with every run that was not a
clean error or a correct acceptance and how to remake it.

    nice -n 10 python3 bench/hostile_sweep.py --runs 10000 --seconds 20 --jobs 2

Run from the repository with the release build (build/release/nnfit and its Python
package); `--only I,J` remakes and reruns cases I and J of the same --runs/--seed and keeps
their files. Inputs come from ../shared/formats/samples/keras and tests/model/fixtures; the
mutations are in bench/hostile_cases.py, the Python calls in bench/hostile_python_calls.py.
"""
import argparse
import concurrent.futures
import json
import os
import random
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import warnings
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import hostile_cases as hc  # noqa: E402
from hostile_python_calls import CALLS, PRELUDE  # noqa: E402

warnings.filterwarnings("ignore", "Duplicate name", UserWarning)  # members named twice are cases
CLASSES = ["clean error", "accepted", "crash", "hang", "blow-up", "silent acceptance", "unclear error"]
BAD = {"crash", "hang", "blow-up", "silent acceptance", "unclear error"}
BLOWUP_RSS = 1 << 30  # a run past 1 GiB of RSS from an input under 10 MB is a blow-up
MEM_TOTAL = next((int(l.split()[1]) << 10 for l in open("/proc/meminfo") if l.startswith("MemTotal")), 1 << 40)
# Python exceptions that are a refusal (Keras raises these for bad arguments); any other
# type is an unclear error (ZeroDivisionError, IndexError, AttributeError, ...).
CLEAN_PY = {"ValueError", "TypeError", "NotImplementedError", "OSError", "FileNotFoundError", "IsADirectoryError",
            "PermissionError", "FileExistsError", "KeyError", "RuntimeError"}
_UNITS = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40, "KB": 1e3, "MB": 1e6, "GB": 1e9,
          "TB": 1e12}


def memory_limit_hit(text):
    """Whether an error says an allocation failed that the machine could have made (so the
    sweep's address-space limit stopped it), rather than a size refused before allocating."""
    if re.search(r"bad_alloc|Cannot allocate memory|RAISED MemoryError builtins|mmap failed", text):
        return True
    m = re.search(r"(?:out of memory allocating|Unable to allocate) ([\d.]+) ?(B|KiB|MiB|GiB|TiB|KB|MB|GB|TB)", text)
    return bool(m) and float(m.group(1)) * _UNITS[m.group(2)] < MEM_TOTAL


def error_line(stderr):
    """The first line nnfit's CLI or the Python child gave as the error."""
    for line in stderr.splitlines():
        if line.startswith(("nnfit: error:", "nnfit: internal error", "RAISED ")) or "error:" in line[:40]:
            return line
    lines = [l for l in stderr.splitlines() if l.strip()]
    return lines[-1] if lines else ""


def classify(kind, damaged, returncode, stderr, timed_out, peak_rss, names=(), outputs_ok=None):
    """One run's class. damaged: True (must be refused), "same" (accepted only with the clean
    file's outputs; outputs_ok says whether they were), None (may load), False (valid input).
    names: strings one of which a clean error must contain (the file or key at fault)."""
    if timed_out:
        return "hang"
    line = error_line(stderr)
    if peak_rss >= BLOWUP_RSS or memory_limit_hit(stderr):
        return "blow-up"
    if returncode < 0 or returncode in (128 + signal.SIGSEGV, 128 + signal.SIGABRT, 128 + signal.SIGFPE):
        return "crash"
    if returncode == 0:
        if damaged is True or (damaged == "same" and outputs_ok is False):
            return "silent acceptance"
        return "accepted"
    if kind == "python":
        m = re.match(r"RAISED (\w+) (\S+)", line)
        if not m:
            return "unclear error"
        if m.group(1) not in CLEAN_PY and not m.group(2).startswith("nnfit") and "Unable to allocate" not in line:
            return "unclear error"
        return "clean error" if len(line) <= 600 else "unclear error"
    if "internal error" in line or not line.startswith("nnfit: error:") or len(line) > 500:
        return "unclear error"
    if names and not any(n in stderr for n in names):
        return "unclear error"
    return "clean error"


class Run:
    """One child under the limits: its exit, peak RSS, CPU seconds and output."""

    def __init__(self, argv, cwd, seconds, mem_bytes, env=None):
        def limits():
            os.setsid()
            resource.setrlimit(resource.RLIMIT_AS, (mem_bytes, mem_bytes))
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        out_path = os.path.join(cwd, ".stderr")
        start = time.time()
        with open(out_path, "wb") as err, open(os.devnull, "rb") as null_in:
            p = subprocess.Popen(argv, cwd=cwd, stdin=null_in, stdout=subprocess.DEVNULL, stderr=err,
                                 preexec_fn=limits, env=env)
            self.timed_out = False
            while True:
                pid, status, usage = os.wait4(p.pid, os.WNOHANG)
                if pid:
                    break
                if time.time() - start > seconds:
                    self.timed_out = True
                    try:
                        os.killpg(p.pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                    pid, status, usage = os.wait4(p.pid, 0)
                    break
                time.sleep(0.005 if time.time() - start < 1 else 0.05)
            p.returncode = os.waitstatus_to_exitcode(status)
        self.returncode = p.returncode
        self.seconds = time.time() - start
        self.peak_rss = usage.ru_maxrss * 1024
        self.cpu = usage.ru_utime + usage.ru_stime
        with open(out_path, "rb") as f:
            self.stderr = f.read(1 << 20).decode("utf-8", "replace")


class Sweep:
    def __init__(self, args):
        self.args = args
        self.nnfit = os.path.abspath(args.nnfit)
        self.work = args.work or tempfile.mkdtemp(prefix="nnfit-hostile-")
        os.makedirs(self.work, exist_ok=True)
        self.env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=os.path.abspath(args.pythonpath))
        self.seeds = []
        self.lock = threading.Lock()

    # --- setup: clean inputs, their inputs arrays, reference predictions -----------------
    def setup(self):
        specials = hc.special_paths(os.path.join(self.work, "specials"))
        self.fifo = specials["FIFO"]
        files = sorted(os.path.join(d, f) for d in (os.path.join(ROOT, "..", "shared", "formats", "samples", "keras"),
                                                    os.path.join(ROOT, "tests", "model", "fixtures"))
                       if os.path.isdir(d) for f in os.listdir(d)
                       if f.endswith((".keras", ".h5")) and not f.endswith(".weights.h5"))
        for i, path in enumerate(files):
            d = os.path.join(self.work, f"seed{i}")
            os.makedirs(d, exist_ok=True)
            code = SEED_INFO.format(path=path, out=d)
            r = subprocess.run([self.args.python, "-c", code], env=self.env, capture_output=True, text=True,
                               timeout=300)
            if r.returncode != 0:
                print(f"seed {path} skipped: {r.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
                continue
            info = json.loads(r.stdout.strip().splitlines()[-1])
            seed = dict(info, path=path, dir=d, name=os.path.basename(path), bytes=open(path, "rb").read())
            ref = os.path.join(d, "ref.npz")
            run = Run(self.predict_argv(path, seed, ref), d, 120, 4 << 30, self.env)
            if run.returncode != 0:
                print(f"seed {path} skipped: nnfit predict: {error_line(run.stderr)}", file=sys.stderr)
                continue
            seed["labels"] = self.write_labels(ref, d)
            seed["evaluate"] = Run(self.evaluate_argv(path, seed), d, 120, 4 << 30, self.env).returncode == 0
            if path.endswith(".keras"):
                with zipfile.ZipFile(path) as z:
                    seed["members"] = [(n, z.read(n)) for n in z.namelist()]
            self.seeds.append(seed)
        self.keras_seeds = [s for s in self.seeds if s["path"].endswith(".keras")]
        self.h5_seeds = [s for s in self.seeds if s["path"].endswith(".h5")]
        self.setup_train()
        self.setup_h5_structures()
        bomb = os.path.join(self.work, "bomb.keras")
        if self.keras_seeds and not os.path.exists(bomb):
            s = self.keras_seeds[0]
            hc.bomb_member(bomb, s["members"], "config.json", dict(s["members"])["config.json"], 1 << 30)
        self.bomb = bomb

    def write_labels(self, ref, d):
        import numpy as np
        with np.load(ref) as z:
            names = list(z.keys())
            paths = []
            for i, k in enumerate(names):
                p = os.path.join(d, f"label{i}.npy")
                np.save(p, z[k])
                paths.append(p)
        return paths

    def predict_argv(self, model, seed, out):
        return [self.nnfit, "predict", model, "--input", *seed["inputs"], "--output", out, "--threads", "1"]

    def evaluate_argv(self, model, seed):
        return [self.nnfit, "evaluate", model, "--input", *seed["inputs"], "--labels", *seed["labels"],
                "--threads", "1"]

    def setup_train(self):
        import numpy as np
        d = os.path.join(self.work, "train")
        os.makedirs(d, exist_ok=True)
        rng = np.random.default_rng(0)
        np.save(os.path.join(d, "x.npy"), rng.random((64, 8), dtype=np.float32))
        np.save(os.path.join(d, "y.npy"), rng.integers(0, 3, 64))
        np.save(os.path.join(d, "w.npy"), np.ones(64, np.float32))
        config = train_config(d)
        self.train_dir = d
        self.train_json = json.dumps(config, indent=1)
        open(os.path.join(d, "t.json"), "w").write(self.train_json)
        config["fit"]["epochs"] = 1
        config["fit"]["callbacks"] = [{"class_name": "BackupAndRestore",
                                       "config": {"backup_dir": os.path.join(d, "backup"), "delete_checkpoint": False}}]
        open(os.path.join(d, "make_backup.json"), "w").write(json.dumps(config))
        r = Run([self.nnfit, "train", "make_backup.json"], d, 120, 4 << 30, self.env)
        if r.returncode != 0:
            raise SystemExit(f"the clean train config fails: {error_line(r.stderr)}")
        self.backup = os.path.join(d, "backup")

    def setup_h5_structures(self):
        """HDF5 files with links, external storage and odd types, by h5py where a venv has it."""
        self.h5_structures = []
        if not self.args.h5py_python or not os.path.exists(self.args.h5py_python):
            print("no h5py: the HDF5 structure cases are skipped (give --h5py-python)", file=sys.stderr)
            return
        for seed in self.seeds:
            d = os.path.join(seed["dir"], "h5")
            clean = os.path.join(seed["dir"], "clean.h5")
            open(clean, "wb").write(dict(seed["members"])["model.weights.h5"] if "members" in seed else seed["bytes"])
            r = subprocess.run([self.args.h5py_python, os.path.join(HERE, "hostile_h5_transforms.py"), clean, d,
                                self.fifo, clean], capture_output=True, text=True, timeout=600)
            for line in r.stdout.splitlines():
                entry = json.loads(line)
                if "path" in entry:
                    self.h5_structures.append((seed, entry))

    # --- the plan: which case each index is ----------------------------------------------
    def plan(self):
        fixed = [("python", i) for i in range(len(CALLS))] + [("special", i) for i in range(len(special_cases(self)))] \
            + [("h5struct", i) for i in range(len(self.h5_structures))]
        rest = max(0, self.args.runs - len(fixed))
        shares = [("keras", 0.70), ("h5", 0.14), ("config", 0.10), ("backup", 0.06)]
        if not self.h5_seeds:
            shares = [("keras", 0.84), ("config", 0.10), ("backup", 0.06)]
        mutated = [(k, i) for k, share in shares for i in range(int(rest * share))]
        return fixed + mutated

    # --- one case ----------------------------------------------------------------------
    def case(self, index, kind, k):
        rng = random.Random(f"{self.args.seed}:{index}")
        d = os.path.join(self.work, "cases", str(index))
        os.makedirs(d, exist_ok=True)
        c = {"index": index, "kind": kind, "family": "", "what": "", "damaged": None, "names": (), "compare": None}
        if kind in ("keras", "h5"):
            seed = rng.choice(self.keras_seeds if kind == "keras" else self.h5_seeds)
            path = os.path.join(d, "m" + (".keras" if kind == "keras" else ".h5"))
            if kind == "keras":
                c["damaged"], c["family"], c["what"] = hc.keras_mutation(rng, seed["bytes"], seed["members"],
                                                                         seed["data_ranges"], path)
            else:
                data, c["damaged"], c["what"] = hc.h5_mutation(rng, seed["bytes"], seed["data_ranges"])
                c["family"] = "legacy .h5 damaged"
                open(path, "wb").write(data)
            self.model_run(c, rng, seed, path, d)
        elif kind == "h5struct":
            seed, entry = self.h5_structures[k]
            path = os.path.join(d, "m" + (".keras" if "members" in seed else ".h5"))
            data = open(entry["path"], "rb").read()
            if "members" in seed:
                hc.rezip([(n, data if n == "model.weights.h5" else b) for n, b in seed["members"]], path)
            else:
                open(path, "wb").write(data)
            c.update(family=f"HDF5 {entry['name']}", what=entry["dataset"], damaged=entry["damaged"])
            self.model_run(c, rng, seed, path, d)
        elif kind == "config":
            text, c["what"] = hc.mutate_json(rng, self.train_json, [self.fifo, "/dev/zero", self.train_dir])
            c["family"] = "train config value"
            open(os.path.join(d, "c.json"), "w", encoding="utf-8", errors="surrogateescape").write(text)
            c["argv"] = [self.nnfit, "train", "c.json"]  # its error may name the file, key, path or layer
        elif kind == "backup":
            self.backup_case(c, rng, d)
        elif kind == "special":
            spec = special_cases(self)[k]
            c.update({key: v for key, v in spec.items() if key != "config"})
            if "config" in spec:
                open(os.path.join(d, "c.json"), "w").write(json.dumps(spec["config"]))
                c["argv"] = [self.nnfit, "train", "c.json"]
        else:
            name, code, expect = CALLS[k]
            c.update(family="nnfit.keras call", what=name, damaged=True if expect == "raise" else None)
            prelude = PRELUDE.format(pkg="nnfit", fifo=self.fifo, bomb=self.bomb,
                                     clean=self.keras_seeds[0]["path"], work=d)
            open(os.path.join(d, "call.py"), "w").write(prelude + PY_TAIL.format(code=code))
            c["argv"] = [self.args.python, "call.py"]
        c["dir"] = d
        return c

    def model_run(self, c, rng, seed, path, d):
        if seed["evaluate"] and rng.random() < 0.15:
            c["argv"] = self.evaluate_argv(path, seed)
            c["family"] += " (evaluate)"
        else:
            c["argv"] = self.predict_argv(path, seed, os.path.join(d, "p.npz"))
            c["compare"] = (os.path.join(d, "p.npz"), os.path.join(seed["dir"], "ref.npz"))
        c["names"] = (os.path.basename(path),)
        c["seed"] = seed["name"]

    def backup_case(self, c, rng, d):
        bk = os.path.join(d, "bk")
        shutil.copytree(self.backup, bk)
        files = sorted(os.listdir(bk))
        target = os.path.join(bk, rng.choice(files))
        r = rng.random()
        c["family"] = "damaged backup"
        # Note [One-file backups]: nnfit resumes from latest.weights.h5 alone; the JSON beside it
        # is for people and Keras, so damage to it is no reason to refuse (damaged None).
        if r < 0.35 and target.endswith(".json"):
            text, what = hc.mutate_json(rng, open(target).read())
            open(target, "w", encoding="utf-8", errors="surrogateescape").write(text)
            c.update(what=f"{os.path.basename(target)}: {what}", damaged=None)
        elif r < 0.7:
            data = open(target, "rb").read()
            if target.endswith(".json"):
                out, damaged, what = hc.flip(rng, data, rng.randint(1, 3)), None, "bytes flipped"
            else:
                out, damaged, what = hc.h5_mutation(rng, data, [])
                damaged = None if damaged == "same" else damaged  # no clean predictions to compare
            open(target, "wb").write(out)
            c.update(what=f"{os.path.basename(target)}: {what}", damaged=damaged)
        else:
            os.remove(target)
            how = rng.choice(["removed", "FIFO", "/dev/zero", "folder", "empty", "junk"])
            if how == "FIFO":
                os.mkfifo(target)
            elif how == "/dev/zero":
                os.symlink("/dev/zero", target)
            elif how == "folder":
                os.mkdir(target)
            elif how in ("empty", "junk"):
                open(target, "wb").write(b"" if how == "empty" else bytes(rng.randrange(256) for _ in range(300)))
            c.update(what=f"{os.path.basename(target)}: {how}",
                     damaged=None if how == "removed" or target.endswith(".json") else True)
        c["argv"] = [self.nnfit, "train", os.path.join(self.train_dir, "t.json"), "--backup-dir", bk]
        c["names"] = (os.path.basename(target),)

    def execute(self, index, kind, k):
        c = self.case(index, kind, k)
        run = Run(c["argv"], c["dir"], self.args.seconds, self.args.mem_gib << 30, self.env)
        outputs_ok = None
        if c["compare"] and run.returncode == 0 and not run.timed_out:
            outputs_ok = same_outputs(*c["compare"])
        cls = classify(kind, c["damaged"], run.returncode, run.stderr, run.timed_out, run.peak_rss, c["names"],
                       outputs_ok)
        result = {"index": index, "kind": kind, "family": c["family"], "what": c["what"], "seed": c.get("seed", ""),
                  "class": cls, "returncode": run.returncode, "seconds": round(run.seconds, 2),
                  "cpu": round(run.cpu, 2), "peak_rss_mb": run.peak_rss >> 20, "line": error_line(run.stderr)[:300],
                  "argv": " ".join(a.replace(c["dir"], "CASE") for a in c["argv"])}
        if cls in BAD or self.args.only:
            result["kept"] = c["dir"]
            with open(os.path.join(c["dir"], "case.json"), "w") as f:
                json.dump(dict(result, damaged=c["damaged"], names=list(c["names"])), f, indent=1)
        else:
            shutil.rmtree(c["dir"], ignore_errors=True)
        return result


SEED_INFO = """
import json, os, zipfile, numpy as np
from nnfit import keras
path, out = {path!r}, {out!r}
m = keras.models.load_model(path, compile=False)
rng = np.random.default_rng(0)
inputs = []
for i, t in enumerate(m.inputs):
    shape = [4] + [d or 3 for d in t.shape[1:]]
    a = rng.random(shape).astype("float32") if "int" not in str(t.dtype) else rng.integers(0, 2, shape)
    p = os.path.join(out, f"input{{i}}.npy"); np.save(p, a); inputs.append(p)
h5 = zipfile.ZipFile(path).read("model.weights.h5") if path.endswith(".keras") else open(path, "rb").read()
ranges = []
for w in m.get_weights():
    b = np.ascontiguousarray(w).astype(w.dtype.newbyteorder("<")).tobytes()
    at = h5.find(b) if len(b) >= 8 else -1
    if at >= 0:
        ranges.append((at, at + len(b)))
print(json.dumps({{"inputs": inputs, "data_ranges": ranges}}))
"""

PY_TAIL = """
import json, sys
try:
    {code}
except Exception as e:
    print("RAISED " + type(e).__name__ + " " + type(e).__module__ + " " + str(e).replace("\\n", " | ")[:2000],
          file=sys.stderr)
    sys.exit(3)
"""


def train_config(d):
    dense = lambda name, units: {"module": "keras.layers", "class_name": "Dense",  # noqa: E731
                                 "config": {"name": name, "units": units, "activation": "relu"}}
    return {
        "model": {"module": "keras", "class_name": "Sequential", "config": {"name": "s", "layers": [
            {"module": "keras.layers", "class_name": "InputLayer",
             "config": {"batch_shape": [None, 8], "dtype": "float32", "name": "in"}},
            dense("d", 16), dense("o", 3)]}},
        "data": {"train": {"source": {"format": "npy", "x": os.path.join(d, "x.npy"), "y": os.path.join(d, "y.npy"),
                                      "sample_weight": os.path.join(d, "w.npy")},
                           "pipeline": [{"cache": ""}, {"shuffle": 64}, {"batch": True}, {"prefetch": "AUTOTUNE"}]},
                 "validation": {"source": {"format": "npy", "x": os.path.join(d, "x.npy"),
                                           "y": os.path.join(d, "y.npy")}, "pipeline": [{"batch": True}]}},
        "compile": {"optimizer": {"class_name": "Adam", "config": {"learning_rate": 0.01}},
                    "loss": {"class_name": "SparseCategoricalCrossentropy", "config": {"from_logits": True}},
                    "metrics": ["accuracy"]},
        "fit": {"epochs": 2, "batch_size": 16, "seed": 1},
    }


def special_cases(sweep):
    """Every path argument given a FIFO, a device, a folder, ...; and the sizes past 32 bits."""
    if hasattr(sweep, "_specials"):
        return sweep._specials
    specials = hc.special_paths(os.path.join(sweep.work, "specials"))
    seed = sweep.keras_seeds[0]
    t = os.path.join(sweep.train_dir, "t.json")
    cases = []
    for what, p in specials.items():
        if what == "/dev/null":
            continue
        inputs = [("predict model", sweep.predict_argv(p, seed, "out.npz")),
                  ("predict --input", sweep.predict_argv(seed["path"], dict(seed, inputs=[p]), "out.npz")),
                  ("evaluate --labels", sweep.evaluate_argv(seed["path"], dict(seed, labels=[p]))),
                  ("train config", [sweep.nnfit, "train", p]),
                  ("export model", [sweep.nnfit, "export", p, "m.onnx"]),
                  ("data inspect", [sweep.nnfit, "data", "inspect", p])]
        # An output may be a device (/dev/null's use) but not a folder; a FIFO as an output
        # waits for its reader, as a shell redirection does, so it is not tried.
        outputs = [("predict --output", sweep.predict_argv(seed["path"], seed, p)),
                   ("train --metrics-json", [sweep.nnfit, "train", t, "--metrics-json", p]),
                   ("train --save", [sweep.nnfit, "train", t, "--save", p]),
                   ("export output", [sweep.nnfit, "export", seed["path"], p])]
        for role, argv in inputs + (outputs if what in ("a folder", "/dev/zero") else []):
            cases.append({"family": f"special file as {role}", "what": what, "argv": argv,
                          "damaged": True if (role, argv) in inputs or what == "a folder" else None,
                          "names": (p, os.path.basename(p))})
        for key in ("x", "y", "sample_weight"):
            config = train_config(sweep.train_dir)
            config["data"]["train"]["source"][key] = p
            cases.append(config_case(f"special file as the train {key}", what, config, True, (p,)))
        config = train_config(sweep.train_dir)
        config["data"]["train"]["pipeline"][0] = {"cache": p}  # a missing cache file is made
        made = what == "a missing file"
        cases.append(config_case("special file as the cache", what, config, None if made else True, (p,)))
        config = train_config(sweep.train_dir)
        config["data"]["validation"]["source"]["x"] = p
        cases.append(config_case("special file as validation x", what, config, True, (p,)))
    for value in (2**31, 2**32, 3 * 2**32, 2**32 + 1, 2**33, 2**63 - 1, 2**63, 2**64):
        config = train_config(sweep.train_dir)
        config["fit"]["batch_size"] = value
        cases.append(config_case("fit.batch_size past 32 bits", str(value), config, None, ("batch_size", "c.json")))
        cases.append({"family": "nnfit plan --batch-sizes past 32 bits", "what": str(value), "damaged": None,
                      "argv": [sweep.nnfit, "plan", t, "--batch-sizes", str(value)], "names": ("batch",)})
        cases.append({"family": "predict --batch-size past 32 bits", "what": str(value), "damaged": None,
                      "argv": sweep.predict_argv(seed["path"], seed, "out.npz") + ["--batch-size", str(value)],
                      "names": ("batch",)})
    for key, value in (("device", ""), ("device", "cuda:99"), ("device", "x" * 10**6), ("batch_size", "32")):
        config = train_config(sweep.train_dir)
        config["fit"][key] = value
        cases.append(config_case(f"fit.{key}", repr(value)[:40], config, True, (key,)))
    for flag in ("--dtype-policy", "--device"):
        cases.append({"family": f"train {flag}", "what": "''", "damaged": True,
                      "argv": [sweep.nnfit, "train", t, flag, ""],
                      "names": (flag,)})
    sweep._specials = cases
    return cases


def config_case(family, what, config, damaged, names):
    return {"family": family, "what": what, "damaged": damaged, "names": names, "config": config}


def same_outputs(out, ref):
    import numpy as np
    try:
        with np.load(out) as a, np.load(ref) as b:
            if sorted(a.keys()) != sorted(b.keys()):
                return False
            return all(a[k].shape == b[k].shape and np.allclose(a[k], b[k], rtol=1e-5, atol=1e-6) for k in a.keys())
    except Exception:
        return False


from hostile_report import write_report  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=10000, help="runs in all (the fixed lists first)")
    ap.add_argument("--seconds", type=float, default=20, help="timeout of one run")
    ap.add_argument("--mem-gib", type=int, default=2, help="RLIMIT_AS of one run, GiB")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--only", help="comma-separated case indexes to remake and run (files kept)")
    ap.add_argument("--nnfit", default=os.path.join(ROOT, "build", "release", "nnfit"))
    ap.add_argument("--pythonpath", default=os.path.join(ROOT, "build", "release", "python"))
    ap.add_argument("--python", default="/usr/bin/python3", help="the Python nnfit's package was built for")
    ap.add_argument("--h5py-python", default=os.path.expanduser("~/.cache/nnfit/venvs/keras/bin/python"))
    ap.add_argument("--work", help="folder for the cases (default: a new temp folder)")
    ap.add_argument("--out", default=os.path.join(HERE, "RESULTS_hostile.md"))
    args = ap.parse_args()
    sweep = Sweep(args)
    t0 = time.time()
    sweep.setup()
    plan = sweep.plan()
    chosen = [int(i) for i in args.only.split(",")] if args.only else range(len(plan))
    results = []
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        futures = [pool.submit(run_one, sweep, i, *plan[i]) for i in chosen]
        for n, f in enumerate(concurrent.futures.as_completed(futures)):
            results.append(f.result())
            if (n + 1) % 500 == 0:
                print(f"{n + 1}/{len(futures)} runs, {time.time() - t0:.0f} s", file=sys.stderr, flush=True)
    results.sort(key=lambda r: r["index"])
    if args.only:
        for r in results:
            print(json.dumps(r, indent=1))
        return
    write_report(args, sweep, results, time.time() - t0)
    print(f"{len(results)} runs in {time.time() - t0:.0f} s; {args.out}; cases kept in {sweep.work}/cases")


def run_one(sweep, index, kind, k):
    try:
        return sweep.execute(index, kind, k)
    except Exception as e:  # the sweep's own failure on one case: reported, never hidden
        return {"index": index, "kind": kind, "family": "sweep error", "what": f"{type(e).__name__}: {e}", "seed": "",
                "class": "sweep error", "returncode": 0, "seconds": 0, "cpu": 0, "peak_rss_mb": 0, "line": "",
                "argv": ""}


if __name__ == "__main__":
    main()
