"""Model.export (Keras 3's model.export(filepath, format=..., verbose=..., input_signature=...))
and keras.InputSpec, on nnfit's own ONNX writer (include/nnfit/model/onnx_export.h).

nnfit writes ONNX for format="onnx" and, with a warning saying where, for Keras's default
format="tf_saved_model": a TensorFlow SavedModel needs TensorFlow to write, and ONNX is the
artifact nnfit can serve the same purpose with (onnxruntime runs it). docs/python.md,
"Exporting for inference".
"""
import os
import warnings

import numpy as np

from nnfit.keras._progbar import print_msg

_FORMATS = ("tf_saved_model", "onnx", "openvino", "litert", "torch")


class InputSpec:
    """keras.InputSpec: the shape (with the batch axis, None where any size goes), dtype and
    name of a model input, as export's input_signature takes it."""

    def __init__(self, dtype=None, shape=None, ndim=None, max_ndim=None, min_ndim=None, axes=None,
                 allow_last_axis_squeeze=False, name=None, optional=False):
        self.dtype = None if dtype is None else str(np.dtype(dtype))
        self.shape = None if shape is None else tuple(None if d is None else int(d) for d in shape)
        self.ndim = len(self.shape) if self.shape is not None else ndim
        self.max_ndim, self.min_ndim = max_ndim, min_ndim
        self.axes = {int(k): v for k, v in (axes or {}).items()}
        self.allow_last_axis_squeeze = allow_last_axis_squeeze
        self.name = name
        self.optional = optional

    def __repr__(self):
        parts = [f"dtype={self.dtype}" if self.dtype else "", f"shape={self.shape}" if self.shape else "",
                 f"name={self.name}" if self.name else ""]
        return f"InputSpec({', '.join(p for p in parts if p)})"


def _flat_specs(signature):
    """Keras's input_signature as a flat list of specs: a Functional model takes [structure],
    a Sequential one [spec]; lists, tuples and dicts nest."""
    out = []

    def walk(x):
        if isinstance(x, dict):
            for v in x.values():
                walk(v)
        elif isinstance(x, (list, tuple)) and not all(isinstance(d, (int, type(None))) for d in x):
            for v in x:
                walk(v)
        else:
            out.append(x)

    walk(signature)
    return out


def _spec_entry(spec, index):
    """(name or "", shape with the batch axis and -1 for None) of one spec: an InputSpec or
    anything with a shape (a KerasTensor, an array: its batch size left free, as Keras's
    make_input_spec does for tensors)."""
    if isinstance(spec, InputSpec):
        if spec.shape is None:
            raise ValueError(f"The `shape` and `dtype` must be provided. Received: x={spec}")
        shape = list(spec.shape)
    elif hasattr(spec, "shape"):
        shape = [None] + [None if d is None else int(d) for d in tuple(spec.shape)[1:]]
    else:
        raise TypeError(f"Unsupported x={spec} of the type ({type(spec)}). Supported types are: `keras.InputSpec`, "
                        "`keras.KerasTensor` and backend tensor.")
    name = getattr(spec, "name", None) if isinstance(spec, InputSpec) else None
    return (name or "", [-1 if d is None else d for d in shape])


def export(model, filepath, format="tf_saved_model", verbose=None, input_signature=None, **kwargs):
    """Model.export: writes the model's inference graph as ONNX (opset 17 unless
    opset_version says otherwise) and returns nothing, as Keras."""
    if format not in _FORMATS:
        raise ValueError(f"Unrecognized format={format}. Supported formats are: {list(_FORMATS)}.")
    if format not in ("onnx", "tf_saved_model"):
        raise NotImplementedError(f"model.export(format={format!r}) is not supported by nnfit: it writes ONNX "
                                  "(format=\"onnx\"; \"tf_saved_model\" writes ONNX too, with a warning)")
    opset = kwargs.pop("opset_version", None) if format == "onnx" else None
    if kwargs:
        raise NotImplementedError(f"model.export: {sorted(kwargs)} not supported by nnfit")
    if getattr(model, "_prefix", None) is not None:
        # Note [Preprocessing prefix]: those layers run in Python, outside the engine's graph.
        raise NotImplementedError(
            f"model.export: model {model.name!r} starts with Keras preprocessing layers (TextVectorization, the "
            "lookups, Hashing, ...), which nnfit runs in Python on NumPy, not in its graph, so the ONNX file would "
            "take their outputs instead of the model's inputs; export the model that takes their outputs")
    path = os.fspath(filepath)
    if format == "tf_saved_model":
        target = path if path.endswith(".onnx") else path.rstrip("/" + os.sep) + ".onnx"
        warnings.warn(f"nnfit does not write TensorFlow SavedModels: model.export wrote '{target}', an ONNX file of "
                      f"the model (load it with onnxruntime.InferenceSession), and no SavedModel at '{path}'. "
                      "Pass format=\"onnx\" to ask for ONNX directly.", UserWarning, stacklevel=3)
        path = target
    signature = []
    if input_signature is not None:
        specs = _flat_specs(input_signature)
        signature = [_spec_entry(s, i) for i, s in enumerate(specs)]
    handle = model._with_weights()
    handle.export_onnx(path, int(opset) if opset is not None else 17, signature)
    if verbose is None or verbose:  # Keras's default for every backend is True
        print_msg(f"Saved artifact at '{path}'.")
