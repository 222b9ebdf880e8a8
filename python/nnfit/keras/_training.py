"""fit / evaluate / predict for nnfit.keras models: Keras's arguments turned into the
engine's, NumPy data passed in place, and the callbacks' bridge (Python callbacks, the
progress bar and History) the engine calls under the GIL."""
import json
import math
import sys
import time

import numpy as np

from nnfit.keras import _progbar, _state
from nnfit.keras import callbacks as callbacks_module
from nnfit.keras._object import resolve

# Dtypes the engine reads in place (arrays of other dtypes are converted as Keras converts).
_IN_PLACE = {np.dtype(t) for t in ("float32", "int32", "int64", "uint8", "bool")}
# The log keys nnfit adds to Keras's; History keeps them apart (History.nnfit).
NNFIT_KEYS = ("train_seconds", "samples_per_s", "input_wait_fraction", "memory_peak_bytes", "deterministic")


def _array(value, what, target):
    """A C-contiguous array the engine reads: x as float32 (Keras casts inputs to the
    input's dtype), y as float32 or an integer type (class ids)."""
    if value is None:
        raise ValueError(f"{what} is None: pass arrays of numbers (or an nnfit.data.Dataset)")
    a = np.asarray(value)
    if a.dtype.kind in "OUS":
        raise TypeError(f"{what}: arrays of {a.dtype} cannot be trained on; pass numbers")
    if a.dtype.kind in "Mmc":  # datetime64, timedelta64, complex: Keras's "Invalid dtype"
        raise ValueError(f"{what}: Invalid dtype: {a.dtype}; pass real numbers")
    if a.dtype not in _IN_PLACE:
        if target and a.dtype.kind in "iu":
            a = a.astype(np.int64)
        else:
            a = a.astype(np.float32)
    if not a.flags.c_contiguous:
        a = np.ascontiguousarray(a)
    if a.ndim == 0:
        raise ValueError(f"{what}: expected an array with a batch axis, got a scalar")
    return a


def as_arrays(data, names, what, target=False):
    """Keras's forms of x or y: one array, a list/tuple (model order) or a dict by name."""
    if data is None:
        if what == "x":
            raise ValueError("x is None: pass the model's inputs (arrays, a list or dict of them, or an "
                             "nnfit.data.Dataset)")
        return []
    if isinstance(data, dict):
        missing = [n for n in names if n not in data]
        extra = [k for k in data if k not in names]
        if missing or extra:
            raise ValueError(f"{what}: the dict's keys {sorted(data)} do not match the model's {names}")
        data = [data[n] for n in names]
    if isinstance(data, (list, tuple)) and not (len(data) and np.isscalar(data[0])):
        return [_array(d, f"{what}[{i}]", target) for i, d in enumerate(data)]
    return [_array(data, what, target)]


def split_validation(xs, ys, sw, fraction):
    """Keras's validation_split: the last `fraction` of the samples, before shuffling."""
    if not 0.0 < fraction < 1.0:
        raise ValueError(f"validation_split must be in (0, 1), got {fraction}")
    n = xs[0].shape[0]
    at = int(math.floor(n * (1.0 - fraction)))
    if at == 0 or at == n:
        raise ValueError(f"validation_split={fraction} of {n} samples leaves no training or no validation sample")
    train = ([x[:at] for x in xs], [y[:at] for y in ys], None if sw is None else sw[:at])
    val = ([x[at:] for x in xs], [y[at:] for y in ys], None if sw is None else sw[at:])  # Keras weighs it too
    return train, val


def batch_size_of(what, value):
    """Keras's batch_size: None or 0 for the default of 32 (Keras takes 0 as unset), else a
    positive int; Keras raises TypeError for a float or a string."""
    if value is None or (isinstance(value, (int, np.integer)) and not isinstance(value, bool) and value == 0):
        return 32
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{what}: batch_size must be an int, got {value!r} of type {type(value).__name__}")
    if value < 0:
        raise ValueError(f"{what}: batch_size must be positive, got {value}")
    if value >= 2**63:  # the engine counts in int64 (Keras fails too, its shapes being int32)
        raise ValueError(f"{what}: batch_size {value} is past 2^63 - 1, which no batch reaches")
    return int(value)


def epochs_of(value):
    """Keras's epochs: an int >= 0 (a float or a string is a TypeError, as in Keras)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"fit: epochs must be an int, got {value!r} of type {type(value).__name__}")
    if value < 0:
        raise ValueError(f"fit: epochs must be >= 0, got {value}")
    return int(value)


def count_or_none(what, value):
    """A positive integer argument (steps, batch sizes) or None, as the engine takes it (0: none)."""
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{what} must be a positive integer, got {value!r}")
    return int(value)


def validation_freq(value):
    """Keras's validation_freq: validate every `value` epochs, or after the listed epochs (from 1)."""
    if isinstance(value, (list, tuple)):
        if not value:
            raise ValueError("fit: validation_freq is an empty list, which never validates")
        return [count_or_none("fit: validation_freq's epochs", e) for e in value]
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"Expected `validation_freq` to be a list or int. Received: validation_freq={value!r} of "
                         f"the type {type(value)}.")
    return count_or_none("fit: validation_freq", value)


class Progress:
    """Keras's progress output: verbose=1 a bar per epoch (redrawn in place on a terminal
    or in Jupyter, else printed at the epoch's end), verbose=2 one line per epoch."""

    def __init__(self, verbose, epochs, steps):
        self.verbose, self.epochs, self.steps = verbose, epochs, steps
        out = sys.stdout
        self.dynamic = (hasattr(out, "isatty") and out.isatty()) or "ipykernel" in sys.modules
        self.start = self.last = 0.0
        self.width = 0

    def epoch_begin(self, epoch):
        if self.epochs > 1:
            _progbar.print_msg(f"Epoch {epoch + 1}/{self.epochs}")
        self.start = time.time()
        self.last = 0.0
        self.width = 0

    @staticmethod
    def _metrics(logs):
        text = ""
        for k, v in logs.items():
            text += f" - {k}: {v:.4f}" if abs(v) > 1e-3 else f" - {k}: {v:.4e}"
        return text

    @staticmethod
    def _per_step(seconds):
        from nnfit.keras._progbar import Progbar
        return Progbar._format_time(seconds, "step").lstrip()

    def batch_end(self, batch, logs):
        if self.verbose != 1 or not self.dynamic:
            return
        now = time.time()
        if now - self.last < 0.05:
            return
        self.last = now
        done = batch + 1
        elapsed = now - self.start
        eta = elapsed / done * (self.steps - done)
        self._draw(done, f" {eta:.0f}s {self._per_step(elapsed / done)}{self._metrics(logs)}", final=False)

    def _draw(self, done, info, final):
        digits = len(str(self.steps))
        bar_width = int(20 * done / max(self.steps, 1))
        bar = f"\x1b[1m{done:{digits}d}/{self.steps}\x1b[0m \x1b[32m{'━' * bar_width}\x1b[0m\x1b[37m{'━' * (20 - bar_width)}\x1b[0m"
        text = bar + info
        pad = max(0, self.width - len(text))
        _progbar.print_msg(("\r" if self.dynamic else "") + text + " " * pad + ("\n" if final else ""),
                           line_break=False)
        self.width = len(text)

    def epoch_end(self, logs):
        elapsed = time.time() - self.start
        per = self._per_step(elapsed / max(self.steps, 1))
        if self.verbose == 1:
            self._draw(self.steps, f" \x1b[1m{elapsed:.0f}s\x1b[0m {per}{self._metrics(logs)}", final=True)
        elif self.verbose == 2:
            digits = len(str(self.steps))
            _progbar.print_msg(f"{self.steps:{digits}d}/{self.steps} - {elapsed:.0f}s - {per}{self._metrics(logs)}")


def _keras_logs(pairs):
    """The engine's logs as Keras's dict: its keys sorted as Keras 3 logs them, nnfit's
    timing keys apart."""
    keras_logs = {k: float(v) for k, v in sorted(pairs) if k not in NNFIT_KEYS}
    return keras_logs, {k: float(v) for k, v in pairs if k in NNFIT_KEYS}


class _Hooks:
    """Calls a hook on the Python callbacks that define it."""

    callbacks = ()

    def _each(self, hook, *args):
        for c in self.callbacks:
            if _active(c, hook):
                getattr(c, hook)(*args)


class Bridge(_Hooks):
    """The engine's one callback: dispatches to the Python callbacks with Keras's
    signatures, keeps History and draws the progress bar."""

    def __init__(self, model, callbacks, history, verbose, epochs, steps):
        self.model, self.callbacks, self.history = model, callbacks, history
        self.progress = Progress(verbose, epochs, steps) if verbose else None
        self.params = {"verbose": verbose, "epochs": epochs, "steps": steps}
        self.nnfit_logs = []
        self.last_logs = {}  # the last epoch's, for on_train_end
        # The per-batch hooks the engine calls (each a call into Python per batch).
        self.batch_hooks = _wanted(callbacks, {"on_train_batch_begin": ("on_train_batch_begin", "on_batch_begin"),
                                               "on_train_batch_end": ("on_train_batch_end", "on_batch_end"),
                                               "on_test_batch_begin": ("on_test_batch_begin",),
                                               "on_test_batch_end": ("on_test_batch_end",)})
        if verbose == 1 and self.progress.dynamic:
            self.batch_hooks.add("on_train_batch_end")

    def on_train_begin(self, epochs, steps):
        self.params["steps"] = steps
        if self.progress:
            self.progress.steps = steps
        for c in self.callbacks:
            c.set_model(self.model)
            c.set_params(dict(self.params))
        self.history.set_model(self.model)
        self.history.set_params(dict(self.params))
        self.history.on_train_begin()
        self._each("on_train_begin", {})

    def on_epoch_begin(self, epoch):
        if self.progress:
            self.progress.epoch_begin(epoch)
        self._each("on_epoch_begin", epoch, {})

    def on_train_batch_begin(self, batch):
        self._each("on_train_batch_begin", batch, {})
        self._each("on_batch_begin", batch, {})

    def on_train_batch_end(self, batch, pairs):
        logs, _ = _keras_logs(pairs)
        if self.progress:
            self.progress.batch_end(batch, logs)
        self._each("on_train_batch_end", batch, logs)
        self._each("on_batch_end", batch, logs)

    # fit's validation: Keras calls the fit's callbacks' test hooks (no progress bar of its own).
    def on_test_begin(self):
        self._each("on_test_begin", {})

    def on_test_batch_begin(self, batch):
        self._each("on_test_batch_begin", batch, {})

    def on_test_batch_end(self, batch, pairs):
        self._each("on_test_batch_end", batch, _keras_logs(pairs)[0])

    def on_test_end(self, pairs):
        self._each("on_test_end", _keras_logs(pairs)[0])

    def on_epoch_end(self, epoch, pairs):
        logs, extra = _keras_logs(pairs)
        self.nnfit_logs.append(extra)
        self._each("on_epoch_end", epoch, logs)
        if self.progress:
            self.progress.epoch_end(logs)
        self.history.on_epoch_end(epoch, logs)
        self.last_logs = logs

    def on_train_end(self):
        # Keras passes the last epoch's logs (validation's included), {} when none ran.
        self._each("on_train_end", dict(self.last_logs))


class InferenceBridge(_Hooks):
    """evaluate's or predict's callbacks (Keras's on_test_* / on_predict_* hooks, with
    self.model and params set) and progress output: verbose=1 a bar (redrawn per batch on a
    terminal or in Jupyter, else printed at the end), verbose=2 one line, as Keras prints
    them. ``steps`` may be 0 when the number of batches is unknown."""

    def __init__(self, model, callbacks, verbose, steps, kind):
        self.model, self.callbacks, self.kind = model, callbacks, kind
        self.progress = Progress(verbose, 1, steps) if verbose else None
        self.batches = 0
        begin, end = f"on_{kind}_batch_begin", f"on_{kind}_batch_end"
        self.batch_hooks = _wanted(callbacks, {begin: (begin,), end: (end,)})
        if self.progress is not None and verbose == 1 and self.progress.dynamic and steps > 0:
            self.batch_hooks.add(end)
        for c in callbacks:
            c.set_model(model)
            c.set_params({"verbose": verbose, "epochs": 1, "steps": steps or None})

    def _begin(self):
        if self.progress:
            self.progress.epoch_begin(0)
        self._each(f"on_{self.kind}_begin", {})

    def _batch_end(self, batch, logs, hook_logs):
        self.batches = batch + 1
        if self.progress and self.progress.steps:
            self.progress.batch_end(batch, logs)
        self._each(f"on_{self.kind}_batch_end", batch, hook_logs)

    def _end(self, logs, hook_logs):
        if self.progress:
            self.progress.steps = self.progress.steps or self.batches
            self.progress.epoch_end(logs)
        self._each(f"on_{self.kind}_end", hook_logs)

    def on_test_begin(self):
        self._begin()

    def on_test_batch_begin(self, batch):
        self._each("on_test_batch_begin", batch, {})

    def on_test_batch_end(self, batch, pairs):
        logs = _keras_logs(pairs)[0]
        self._batch_end(batch, logs, logs)

    def on_test_end(self, pairs):
        logs = _keras_logs(pairs)[0]
        self._end(logs, logs)

    def on_predict_begin(self):
        self._begin()

    def on_predict_batch_begin(self, batch):
        self._each("on_predict_batch_begin", batch, {})

    def on_predict_batch_end(self, batch, outputs):
        self._batch_end(batch, {}, {"outputs": outputs[0] if len(outputs) == 1 else outputs})

    def on_predict_end(self):
        self._end({}, {})


def inference_callbacks(callbacks):
    """evaluate's or predict's callbacks: (the Python ones, TensorBoard's settings or None).
    The engine's other built-ins have no test or predict hooks (in Keras neither), so they
    are accepted and do nothing there; TensorBoard writes an evaluation's scalars."""
    python, tensorboard = [], None
    for c in callbacks or []:
        if isinstance(c, callbacks_module.TensorBoard):
            tensorboard = c._engine_settings()
        elif isinstance(c, callbacks_module._Builtin) or isinstance(c, callbacks_module.History):
            continue
        elif not isinstance(c, callbacks_module.Callback):
            raise TypeError(f"callbacks: expected keras.callbacks.Callback objects, got {c!r}")
        else:
            python.append(c)
    return python, tensorboard


def _wanted(callbacks, hooks):
    """The engine hooks (keys) whose Python hooks (values) some callback overrides."""
    return {engine for engine, python in hooks.items() if any(_active(c, h) for c in callbacks for h in python)}


def _active(callback, hook):
    if hook in vars(callback):
        return True
    return callbacks_module._overrides(callback, hook)


def split_callbacks(callbacks):
    """Keras's callbacks list -> (Python callbacks, the built-ins' JSON for the engine, the
    TensorBoard callback's settings or None)."""
    import json
    python, builtin, tensorboard = [], [], None
    for c in callbacks or []:
        if isinstance(c, callbacks_module.TensorBoard):
            if tensorboard is not None:
                raise ValueError("callbacks: one TensorBoard callback per fit")
            tensorboard = c._engine_settings()
        elif isinstance(c, callbacks_module._Builtin):
            builtin.append(c.serialize())
        elif isinstance(c, callbacks_module.Callback):
            if isinstance(c, (callbacks_module.History, callbacks_module.ProgbarLogger)):
                continue  # fit keeps its own History, and prints the bar a ProgbarLogger would
            python.append(c)
        else:
            raise TypeError(f"callbacks: expected keras.callbacks.Callback objects, got {c!r}")
    return python, json.dumps(builtin) if builtin else "", tensorboard


def fit_seed():
    return _state.next_seed()


def array_steps(xs, batch, steps):
    """The batches evaluate or predict runs over arrays (Keras's steps: at most that many)."""
    n = -(-xs[0].shape[0] // batch) if xs else 0
    return min(n, steps) if steps else n


def dataset_steps(built, steps):
    """The batches of a built dataset's pass, or steps; 0 when not known."""
    n = built.cardinality
    return min(n, steps) if steps and n >= 0 else (steps or max(n, 0))


def _metric_json(metric, where, shapes, weighted):
    """One metric as the engine's reader takes it: nnfit's by name or config; a Metric
    subclass or a metric function (wrapped in MeanMetricWrapper, as Keras does) traced for
    (targets, predictions) shapes per sample (Note [Traced losses and metrics])."""
    from nnfit.keras import _custom_objects
    from nnfit.keras.metrics import MeanMetricWrapper, Metric
    if isinstance(metric, str) and metric not in ("accuracy", "acc"):  # compile's own two; the rest as Keras's get
        from nnfit.keras import metrics as metrics_module
        named = metrics_module.get(metric)  # Keras's ValueError: "Could not interpret metric identifier: nope"
        if _custom_objects.is_custom_metric(named):  # a metric nnfit.keras traces (KLDivergence, R2Score, ...)
            named.name = metric  # logged under the string given, as Keras's compile names it
            metric = named
    if not _custom_objects.is_custom_metric(metric):
        return resolve(metric, "metrics", where)
    y_shape, pred_shape = shapes
    if isinstance(metric, Metric):
        return json.dumps(_custom_objects.trace_metric(metric, y_shape, pred_shape, weighted=weighted))
    wrapper = MeanMetricWrapper(metric, name=_custom_objects.loss_name(metric))
    return json.dumps(_custom_objects.trace_metric(wrapper, y_shape, pred_shape, _custom_objects._serialized(metric),
                                                   weighted))


def metrics_json(metrics, outputs, what, shapes=None):
    """Keras's metrics (or weighted_metrics) as the engine's (one list for every output, one
    list per output): per output when the model has several and they come as a dict by
    output name or a list with one entry (a metric, a list of them, or None) per output, as
    Keras reads them; otherwise one list, which nnfit applies to every output."""
    if metrics is None:
        return [], []

    def as_list(entry, where, output=0):
        if entry is None:
            return []
        entries = entry if isinstance(entry, (list, tuple)) else [entry]
        for m in entries:
            if isinstance(m, (list, tuple)) or (isinstance(m, dict) and "class_name" not in m):
                raise ValueError(f"compile: {where} nests deeper than one list per output: {m!r}")
        return [_metric_json(m, where, shapes[output] if shapes else ((), ()), what == "weighted_metrics")
                for m in entries]

    if isinstance(metrics, dict):
        if len(outputs) < 2:
            raise ValueError(f"compile: {what} given by output name, but the model has one output")
        unknown = [k for k in metrics if k not in outputs]
        if unknown:
            raise ValueError(f"compile: {what} names {unknown}, which are not outputs of the model ({outputs})")
        return [], [as_list(metrics.get(name), f"{what}[{name!r}]", i) for i, name in enumerate(outputs)]
    if not isinstance(metrics, (list, tuple)):
        raise TypeError(f"compile: {what} must be a list or a dict by output name, got {metrics!r}")
    if len(outputs) > 1 and len(metrics) == len(outputs):
        return [], [as_list(entry, f"{what}[{i}]", i) for i, entry in enumerate(metrics)]
    return as_list(list(metrics), what), []


def loss_json(loss, pred_shape):
    """A loss as the engine's reader takes it: nnfit's by name or config, a custom one traced
    for this output (Note [Traced losses and metrics])."""
    from nnfit.keras import _custom_objects
    if isinstance(loss, str):  # a Keras name the engine lacks (dice, tversky, circle): Keras's function, traced
        from nnfit.keras import losses as losses_module
        try:
            named = losses_module.get(loss)
        except ValueError:
            named = None  # the engine's reader names what it knows
        if named is not None and _custom_objects.is_custom_loss(named):
            loss = named
    if _custom_objects.is_custom_loss(loss):
        return json.dumps(_custom_objects.trace_loss(loss, pred_shape, pred_shape))
    return resolve(loss, "losses", "loss")


def target_shape(loss_json, pred_shape):
    """The targets' shape per sample for a loss: class ids for the sparse crossentropy, else
    the predictions' (a traced loss records its own)."""
    loss = json.loads(loss_json)
    if isinstance(loss, dict) and "nnfit_trace" in loss:
        return tuple(loss["nnfit_trace"]["y_true_shape"])
    name = loss if isinstance(loss, str) else str(loss.get("class_name", ""))
    if name == "function":  # Keras's own function (keras.losses.sparse_categorical_crossentropy)
        name = str(loss.get("config", ""))
    if name.replace("_", "").lower() == "sparsecategoricalcrossentropy":
        return tuple(pred_shape)[:-1]  # a class id per position
    return tuple(pred_shape)


def per_output(value, outputs, what):
    """Keras's per-output forms (a dict by output name, a list in output order, or one
    value for all) as a list in output order."""
    if isinstance(value, dict):
        extra = [k for k in value if k not in outputs]
        if extra:
            raise ValueError(f"compile: {what} names {extra}, which are not outputs of the model ({outputs})")
        missing = [o for o in outputs if o not in value]
        if missing:
            raise ValueError(f"compile: {what} has no entry for outputs {missing}")
        return [value[o] for o in outputs]
    if isinstance(value, (list, tuple)):
        if len(value) != len(outputs):
            raise ValueError(f"compile: {what} has {len(value)} entries for {len(outputs)} outputs")
        return list(value)
    return [value]


class CompileConfig:
    """Keras's Model.get_compile_config / compile_from_config: what compile was given, in
    Keras's serialized form (as a .keras file's compile_config holds it)."""

    def get_compile_config(self):
        if getattr(self, "_compile_args", None) is None:
            return None
        if self._compile_args[0] == "engine":  # loaded and compiled from its file: the file's, as Keras keeps it
            return _without_traces(getattr(self, "_file_compile_config", None))
        from nnfit.keras._serialization import serialize_keras_object
        optimizer, loss, loss_weights, metrics, _, weighted_metrics = self._compile_args
        return _without_traces({
            "optimizer": serialize_keras_object(optimizer), "loss": serialize_keras_object(loss),
            "loss_weights": serialize_keras_object(loss_weights), "metrics": serialize_keras_object(metrics),
            "weighted_metrics": serialize_keras_object(weighted_metrics), "run_eagerly": False,
            "steps_per_execution": 1, "jit_compile": False})

    def compile_from_config(self, config):
        from nnfit.keras import _custom_objects
        _custom_objects.compile_from_config(self, config, {})


def _without_traces(value):
    """A compile_config as Keras wrote it: nnfit's traces of its losses and metrics dropped."""
    if isinstance(value, list):
        return [_without_traces(v) for v in value]
    if isinstance(value, dict):
        return {k: _without_traces(v) for k, v in value.items() if k != "nnfit_trace"}
    return value
