"""keras.callbacks.CallbackList, ProgbarLogger and RemoteMonitor: Keras 3.15's, in Python.

CallbackList drives a list of callbacks from a user's own loop (Keras's custom training
loop guides use it); fit drives callbacks itself. A ProgbarLogger given to fit is dropped
there (_training.split_callbacks): fit prints the same bar Keras's ProgbarLogger prints,
and Keras too uses the one given instead of adding its own. RemoteMonitor posts each
epoch's logs over HTTP with the standard library (Keras needs `requests`).
"""
import json
import urllib.error
import urllib.parse
import urllib.request
import warnings

import numpy as np

from nnfit.keras._progbar import Progbar, print_msg
from nnfit.keras.callbacks import Callback, History

_HOOKS = ("on_batch_begin", "on_batch_end", "on_epoch_begin", "on_epoch_end", "on_train_batch_begin",
          "on_train_batch_end", "on_test_batch_begin", "on_test_batch_end", "on_predict_batch_begin",
          "on_predict_batch_end", "on_train_begin", "on_train_end", "on_test_begin", "on_test_end",
          "on_predict_begin", "on_predict_end")


def _pythonify(logs):
    """Keras's pythonify_logs: NumPy scalars and 0-d arrays as Python numbers."""
    out = {}
    for k, v in (logs or {}).items():
        if isinstance(v, dict):
            out.update(_pythonify(v))
            continue
        a = np.asarray(v) if isinstance(v, (np.ndarray, np.generic)) else None
        out[k] = a.item() if a is not None and a.ndim == 0 else v
    return out


class ProgbarLogger(Callback):
    """keras.callbacks.ProgbarLogger(): prints the progress bar of a loop that calls its
    hooks (in fit, fit's own bar is this one)."""

    def __init__(self):
        super().__init__()
        self.seen = 0
        self.progbar = None
        self.target = None
        self.verbose = 1
        self.epochs = 1
        self._called_in_fit = False

    def set_params(self, params):
        verbose = params.get("verbose", 1)
        self.verbose = 1 if verbose == "auto" else verbose
        self.epochs = params.get("epochs", 1)
        self.target = params.get("steps")

    def on_train_begin(self, logs=None):
        self._called_in_fit = True

    def on_test_begin(self, logs=None):
        if not self._called_in_fit:
            self._reset()

    def on_predict_begin(self, logs=None):
        self._reset()

    def on_epoch_begin(self, epoch, logs=None):
        self._reset()
        if self.verbose and self.epochs > 1:
            print_msg(f"Epoch {epoch + 1}/{self.epochs}")

    def on_train_batch_end(self, batch, logs=None):
        self._update(batch, logs)

    def on_test_batch_end(self, batch, logs=None):
        if not self._called_in_fit:
            self._update(batch, logs)

    def on_predict_batch_end(self, batch, logs=None):
        self._update(batch, None)

    def on_epoch_end(self, epoch, logs=None):
        self._finalize(logs)

    def on_test_end(self, logs=None):
        if not self._called_in_fit:
            self._finalize(logs)

    def on_predict_end(self, logs=None):
        self._finalize(logs)

    def _reset(self):
        self.seen = 0
        self.progbar = None

    def _bar(self):
        if self.progbar is None:
            self.progbar = Progbar(target=self.target, verbose=self.verbose, unit_name="step")
        return self.progbar

    def _update(self, batch, logs):
        bar = self._bar()
        self.seen = batch + 1
        if self.verbose == 1:
            bar.update(self.seen, list((logs or {}).items()), finalize=False)

    def _finalize(self, logs):
        bar = self._bar()
        if self.target is None:
            self.target = self.seen
            bar.target = self.target
        bar.update(self.target, list((logs or {}).items()), finalize=True)


class CallbackList(Callback):
    """keras.callbacks.CallbackList(callbacks=None, add_history=False, add_progbar=False,
    model=None, **params): calls each hook on every callback, in order, with the logs'
    NumPy scalars as Python numbers (Keras may run batch-end hooks on a thread; here they
    run in the caller's)."""

    def __init__(self, callbacks=None, add_history=False, add_progbar=False, model=None, **params):
        super().__init__()
        self.callbacks = list(_flatten(callbacks)) if callbacks else []
        self._history = next((c for c in self.callbacks if isinstance(c, History)), None)
        self._progbar = next((c for c in self.callbacks if isinstance(c, ProgbarLogger)), None)
        if self._history is None and add_history:
            self._history = History()
            self.callbacks.append(self._history)
        if self._progbar is None and add_progbar:
            self._progbar = ProgbarLogger()
            self.callbacks.append(self._progbar)
        self._depth = 0
        self.set_model(model)
        self.set_params(params)

    def append(self, callback):
        self.callbacks.append(callback)

    def set_params(self, params):
        self.params = params
        if params:
            for c in self.callbacks:
                c.set_params(params)

    def set_model(self, model):
        if not model:
            return
        super().set_model(model)
        if self._history is not None:
            model.history = self._history
        for c in self.callbacks:
            c.set_model(model)

    def _call(self, hook, *args, logs=None):
        if hook.endswith("_begin") and not hook.endswith("batch_begin") and hook != "on_epoch_begin":
            self._depth += 1
        if hook.endswith("_end") and not hook.endswith("batch_end") and hook != "on_epoch_end":
            self._depth -= 1
            if self._depth < 0:
                raise ValueError("`on_xxx_end` called without corresponding `on_xxx_begin`")
        logs = _pythonify(logs)
        for c in self.callbacks:
            getattr(c, hook)(*args, logs=logs)


def _make_hook(hook):
    if hook.endswith(("_begin", "_end")) and ("batch" in hook or "epoch" in hook):
        def method(self, index, logs=None):
            self._call(hook, index, logs=logs)
    else:
        def method(self, logs=None):
            self._call(hook, logs=logs)
    method.__name__ = method.__qualname__ = hook
    return method


for _hook in _HOOKS:
    setattr(CallbackList, _hook, _make_hook(_hook))
del _hook


def _flatten(items):
    for item in items:
        if isinstance(item, (list, tuple)):
            yield from _flatten(item)
        else:
            yield item


class RemoteMonitor(Callback):
    """keras.callbacks.RemoteMonitor(root="http://localhost:9000", path="/publish/epoch/end/",
    field="data", headers=None, send_as_json=False): after each epoch, POSTs the epoch number
    and logs (as JSON in the form field `field`, or as the JSON body); a server it cannot
    reach gives a warning, as in Keras."""

    def __init__(self, root="http://localhost:9000", path="/publish/epoch/end/", field="data", headers=None,
                 send_as_json=False):
        super().__init__()
        self.root = root
        self.path = path
        self.field = field
        self.headers = headers
        self.send_as_json = send_as_json

    def on_epoch_end(self, epoch, logs=None):
        send = {"epoch": epoch}
        for k, v in (logs or {}).items():
            send[k] = v.item() if isinstance(v, (np.ndarray, np.generic)) else v
        headers = dict(self.headers or {})
        if self.send_as_json:
            body = json.dumps(send).encode("utf-8")
            headers.setdefault("Content-Type", "application/json")
        else:
            body = urllib.parse.urlencode({self.field: json.dumps(send)}).encode("utf-8")
            headers.setdefault("Content-Type", "application/x-www-form-urlencoded")
        request = urllib.request.Request(self.root + self.path, data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                response.read()
        except (urllib.error.URLError, OSError, ValueError):
            warnings.warn(f"Could not reach RemoteMonitor root server at {self.root}", stacklevel=2)
