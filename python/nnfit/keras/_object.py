"""Keras objects as configs: every layer, optimizer, schedule, loss, metric, callback,
regularizer and initializer of nnfit.keras is a class made from Keras's own signature
(_api_table.py, generated from Keras), whose instance holds its arguments and serializes
to the JSON object Keras writes ({"module", "class_name", "config", "registered_name"}).
nnfit's engine reads that JSON with the same readers that read Keras's files, so an
argument means in Python what it means in a .keras file, and a value nnfit cannot honour
is refused there with the reader's message.
"""
import inspect
import json
import re

import numpy as np

from nnfit.keras._api_table import TABLE

_REQUIRED = inspect.Parameter.empty

# Keras's module field per group, as Keras 3 writes it.
MODULES = {"layers": "keras.layers", "optimizers": "keras.optimizers", "schedules": "keras.optimizers.schedules",
           "losses": "keras.losses", "metrics": "keras.metrics", "callbacks": "keras.callbacks",
           "regularizers": "keras.regularizers", "initializers": "keras.initializers",
           "constraints": "keras.constraints"}


def signature_of(group, class_name, extra=()):
    """inspect.Signature of Keras's constructor for group/class_name; `extra`: keyword
    arguments the class takes beyond its table entry (a layer's name, dtype, ...)."""
    entry = TABLE[group][class_name]
    params = []
    for name, default, kw_only in entry["params"]:
        if isinstance(default, dict) and default.get("__required__"):
            default = _REQUIRED
        elif isinstance(default, list):
            default = tuple(default)
        kind = inspect.Parameter.KEYWORD_ONLY if kw_only else inspect.Parameter.POSITIONAL_OR_KEYWORD
        params.append(inspect.Parameter(name, kind, default=default))
    names = {p.name for p in params}
    for name, default in extra:
        if name not in names:
            params.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default))
    return inspect.Signature(params)


def to_json_value(value, where):
    """A Python argument as the JSON Keras writes for it."""
    if isinstance(value, KerasObject):
        return value.serialize()
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        if not np.isfinite(value):
            raise ValueError(f"{where}: {value} is not a finite number (nnfit's configs hold finite numbers; "
                             "a NaN or infinite argument would train nothing)")
        return float(value)
    if isinstance(value, (list, tuple)):
        return [to_json_value(v, where) for v in value]
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, dict):
        return {str(k): to_json_value(v, where) for k, v in value.items()}
    if callable(value) and getattr(value, "__name__", None):
        return value.__name__  # keras.activations.relu and the like: Keras serializes the name
    raise TypeError(f"{where}: cannot pass a {type(value).__name__} to nnfit ({value!r})")


class KerasObject:
    """Base of the generated classes: holds the bound arguments of Keras's signature."""

    _group = None
    _class_name = None
    _extra = ()  # keyword arguments beyond the table's signature: ((name, default), ...)
    # Arguments Keras takes but leaves out of its get_config (RandomGrayscale's seed): nnfit
    # passes them to its engine all the same.
    _engine_args = ()

    def __init__(self, *args, **kwargs):
        sig = type(self).__signature__
        # Keys of Keras's get_config() that the class takes through **kwargs, its base class's
        # (LSTM's zero_output_for_mask is RNN's): kept as given, so its config reads back.
        entry = TABLE.get(self._group, {}).get(self._class_name, {})
        based = {}
        if entry.get("var_kw"):
            for key in entry.get("config_keys") or ():
                if key in kwargs and key not in sig.parameters:
                    based[key] = kwargs.pop(key)
        try:
            bound = sig.bind(*args, **kwargs)
        except TypeError as e:
            missing = re.fullmatch(r"missing a required argument: ('\w+')", str(e))
            if missing:  # Python's own words for a class's __init__, as Keras's classes give them
                raise TypeError(f"{self._class_name}.__init__() missing 1 required positional argument: "
                                f"{missing.group(1)}") from None
            raise TypeError(f"{self._class_name}: {e}") from None
        bound.apply_defaults()
        self._args = dict(bound.arguments)
        self._args.update(based)

    def get_config(self):
        """The arguments as Keras's get_config() holds them."""
        entry = TABLE[self._group][self._class_name]
        keys = entry.get("config_keys")
        where = f"{MODULES[self._group]}.{self._class_name}"
        config = {}
        extra = dict(self._extra)
        for name, value in self._args.items():
            if keys is not None and name not in keys and name in extra and value == extra[name]:
                continue  # a base-class argument this class's config does not hold, at its default
            if name in self._engine_args:
                continue  # not in Keras's config; _entry passes it to the engine
            if keys is not None and name not in keys and name not in extra:
                if value != _signature_default(entry, name):
                    raise NotImplementedError(f"{where}: the argument {name!r} is not supported by nnfit")
                continue
            config[name] = to_json_value(value, f"{where}({name}=...)")
        return config

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def serialize(self):
        return {"module": MODULES[self._group], "class_name": self._class_name, "config": self.get_config(),
                "registered_name": None}

    def to_json(self):
        return json.dumps(self.serialize())

    def __repr__(self):
        return f"<{MODULES[self._group]}.{self._class_name}>"


def _signature_default(entry, name):
    for n, default, _ in entry["params"]:
        if n == name:
            return tuple(default) if isinstance(default, list) else default
    return None


def make_classes(group, base, namespace, names=None, extra=()):
    """Defines a class per entry of TABLE[group] (or `names`) in `namespace` (a module's
    globals), subclassing `base`, with Keras's signature and a docstring."""
    made = []
    for class_name in names or TABLE[group]:
        entry = TABLE[group][class_name]
        doc = (f"Keras's `{MODULES[group]}.{class_name}` on nnfit's engine: Keras {TABLE['keras_version']}'s "
               f"arguments and defaults.\n\n{entry.get('summary', '')}")
        cls = type(class_name, (base,), {"__doc__": doc, "_group": group, "_class_name": class_name,
                                        "__module__": namespace["__name__"]})
        cls._extra = tuple(extra) + tuple(getattr(base, "_extra", ()))
        cls.__signature__ = signature_of(group, class_name, cls._extra)
        namespace[class_name] = cls
        made.append(class_name)
    return made


def resolve(value, group, where):
    """A string, KerasObject or Keras config dict as the JSON text nnfit's readers take."""
    if isinstance(value, KerasObject):
        if value._group != group:
            raise TypeError(f"{where}: expected one of keras.{group}, got {value!r}")
        return value.to_json()
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, dict) and "class_name" in value:
        return json.dumps(to_json_value(value, where))
    keras_function = getattr(value, "_nnfit_builtin" if group == "losses" else "_nnfit_metric", None)
    if keras_function:  # one of Keras's functions (keras.losses.mean_squared_error): Keras's form of it
        return json.dumps({"module": "builtins", "class_name": "function", "config": keras_function,
                           "registered_name": "function"})
    if callable(value) and getattr(value, "__name__", None):
        return json.dumps(value.__name__)
    raise TypeError(f"{where}: expected a name, a keras.{group} object or its config, got {value!r}")
