"""Writes the type stubs (.pyi) of nnfit.keras's generated modules from _api_table.py, so
editors complete Keras's classes and arguments (the classes are made at import time).

    python3 python/tools/gen_stubs.py

Each stub holds the module's hand-written names (HEADERS below) and one class per table
entry with Keras's signature; a test (tests/python/test_stubs.py) checks they agree.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE = os.path.join(HERE, "..", "nnfit", "keras")
sys.path.insert(0, os.path.join(HERE, ".."))
from nnfit.keras._api_table import TABLE  # noqa: E402

HEADERS = {
    "layers": ("layers.pyi", "Layer", '''from typing import Any, Optional, Sequence

from nnfit.keras._graph import KerasTensor
from nnfit.keras._object import KerasObject


class Layer(KerasObject):
    name: str
    trainable: bool
    @property
    def dtype(self) -> str: ...
    @property
    def compute_dtype(self) -> str: ...
    @property
    def built(self) -> bool: ...
    @property
    def weights(self) -> list: ...
    @property
    def trainable_weights(self) -> list: ...
    @property
    def non_trainable_weights(self) -> list: ...
    def get_weights(self) -> list: ...
    def set_weights(self, weights: Sequence[Any]) -> None: ...
    def count_params(self) -> int: ...
    def build(self, input_shape: Any = None) -> None: ...
    def __call__(self, inputs: Any) -> Any: ...


class InputLayer(Layer):
    def __init__(self, shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None,
                 dtype: Optional[str] = None, sparse: Optional[bool] = None,
                 batch_shape: Optional[Sequence[Optional[int]]] = None, input_tensor: Any = None,
                 optional: bool = False, name: Optional[str] = None) -> None: ...


class Wrapper(Layer):
    layer: Layer
    def __init__(self, layer: Layer, **kwargs: Any) -> None: ...


def Input(shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None,
          dtype: Optional[str] = None, sparse: Optional[bool] = None,
          batch_shape: Optional[Sequence[Optional[int]]] = None, name: Optional[str] = None, tensor: Any = None,
          optional: bool = False) -> KerasTensor: ...
def serialize(layer: Layer) -> dict: ...
def deserialize(config: dict) -> Layer: ...
def add(inputs: Sequence[KerasTensor], **kwargs: Any) -> KerasTensor: ...
def concatenate(inputs: Sequence[KerasTensor], axis: int = -1, **kwargs: Any) -> KerasTensor: ...
def multiply(inputs: Sequence[KerasTensor], **kwargs: Any) -> KerasTensor: ...
def average(inputs: Sequence[KerasTensor], **kwargs: Any) -> KerasTensor: ...
def maximum(inputs: Sequence[KerasTensor], **kwargs: Any) -> KerasTensor: ...
def minimum(inputs: Sequence[KerasTensor], **kwargs: Any) -> KerasTensor: ...
def subtract(inputs: Sequence[KerasTensor], **kwargs: Any) -> KerasTensor: ...
def dot(inputs: Sequence[KerasTensor], axes: Any = -1, **kwargs: Any) -> KerasTensor: ...
'''),
    "optimizers": (os.path.join("optimizers", "__init__.pyi"), "Optimizer", '''from typing import Any

from nnfit.keras._object import KerasObject
from nnfit.keras.optimizers import schedules as schedules


class Optimizer(KerasObject):
    learning_rate: Any
    @property
    def iterations(self) -> int: ...


def get(identifier: Any) -> Optimizer: ...
def serialize(optimizer: Optimizer) -> dict: ...
def deserialize(config: dict) -> Optimizer: ...
'''),
    "schedules": (os.path.join("optimizers", "schedules.pyi"), "LearningRateSchedule", '''from typing import Any

from nnfit.keras._object import KerasObject


class LearningRateSchedule(KerasObject): ...
'''),
    "losses": ("losses.pyi", "Loss", "from typing import Any\n\nfrom nnfit.keras._object import KerasObject\n\n\n"
               "class Loss(KerasObject): ...\n"),
    "metrics": ("metrics.pyi", "Metric", "from typing import Any\n\nfrom nnfit.keras._object import KerasObject\n\n\n"
                "class Metric(KerasObject): ...\n"),
    "regularizers": ("regularizers.pyi", "Regularizer", '''from typing import Any

from nnfit.keras._object import KerasObject


class Regularizer(KerasObject): ...


def l1(l1: float = 0.01) -> "L1": ...
def l2(l2: float = 0.01) -> "L2": ...
def l1_l2(l1: float = 0.0, l2: float = 0.0) -> "L1L2": ...
'''),
    "initializers": ("initializers.pyi", "Initializer", "from typing import Any\n\nfrom nnfit.keras._object import "
                     "KerasObject\n\n\nclass Initializer(KerasObject): ...\n"),
    "callbacks": ("callbacks.pyi", "_Builtin", '''from typing import Any, Callable, Optional

from nnfit.keras._object import KerasObject


class Callback:
    model: Any
    params: dict
    def set_model(self, model: Any) -> None: ...
    def set_params(self, params: dict) -> None: ...
    def on_train_begin(self, logs: Optional[dict] = None) -> None: ...
    def on_train_end(self, logs: Optional[dict] = None) -> None: ...
    def on_epoch_begin(self, epoch: int, logs: Optional[dict] = None) -> None: ...
    def on_epoch_end(self, epoch: int, logs: Optional[dict] = None) -> None: ...
    def on_train_batch_begin(self, batch: int, logs: Optional[dict] = None) -> None: ...
    def on_train_batch_end(self, batch: int, logs: Optional[dict] = None) -> None: ...
    def on_batch_begin(self, batch: int, logs: Optional[dict] = None) -> None: ...
    def on_batch_end(self, batch: int, logs: Optional[dict] = None) -> None: ...
    def on_test_begin(self, logs: Optional[dict] = None) -> None: ...
    def on_test_end(self, logs: Optional[dict] = None) -> None: ...
    def on_test_batch_begin(self, batch: int, logs: Optional[dict] = None) -> None: ...
    def on_test_batch_end(self, batch: int, logs: Optional[dict] = None) -> None: ...
    def on_predict_begin(self, logs: Optional[dict] = None) -> None: ...
    def on_predict_end(self, logs: Optional[dict] = None) -> None: ...
    def on_predict_batch_begin(self, batch: int, logs: Optional[dict] = None) -> None: ...
    def on_predict_batch_end(self, batch: int, logs: Optional[dict] = None) -> None: ...


class History(Callback):
    history: dict
    epoch: list
    nnfit: list
    notes: list


class LambdaCallback(Callback):
    def __init__(self, on_epoch_begin: Optional[Callable] = None, on_epoch_end: Optional[Callable] = None,
                 on_train_begin: Optional[Callable] = None, on_train_end: Optional[Callable] = None,
                 on_train_batch_begin: Optional[Callable] = None,
                 on_train_batch_end: Optional[Callable] = None, **kwargs: Callable) -> None: ...


class LearningRateScheduler(Callback):
    def __init__(self, schedule: Callable[[int, float], float], verbose: int = 0) -> None: ...


class SwapEMAWeights(Callback):
    swap_on_epoch: bool
    def __init__(self, swap_on_epoch: bool = False) -> None: ...


class TensorBoard(Callback):
    def __init__(self, log_dir: str = "logs", histogram_freq: int = 0, write_graph: bool = True,
                 write_images: bool = False, write_steps_per_second: bool = False, update_freq: Any = "epoch",
                 profile_batch: Any = 0, embeddings_freq: int = 0, embeddings_metadata: Any = None) -> None: ...


class _Builtin(KerasObject): ...
'''),
}

EXTRA_LAYER_KWARGS = ("name: Optional[str] = None", "dtype: Any = None", "trainable: bool = True",
                      "input_shape: Optional[Sequence[Optional[int]]] = None", "input_dim: Optional[int] = None",
                      "batch_input_shape: Optional[Sequence[Optional[int]]] = None",
                      "batch_size: Optional[int] = None", "autocast: bool = True", "activity_regularizer: Any = None")


# Keras's other names of the same classes and the modules' functions, after the classes.
TRAILERS = {
    "initializers": "".join(f"{a} = {t}\n" for a, t in (
        ("constant", "Constant"), ("glorot_normal", "GlorotNormal"), ("glorot_uniform", "GlorotUniform"),
        ("he_normal", "HeNormal"), ("he_uniform", "HeUniform"), ("identity", "Identity"),
        ("IdentityInitializer", "Identity"), ("lecun_normal", "LecunNormal"), ("lecun_uniform", "LecunUniform"),
        ("ones", "Ones"), ("orthogonal", "Orthogonal"), ("OrthogonalInitializer", "Orthogonal"),
        ("random_normal", "RandomNormal"), ("random_uniform", "RandomUniform"), ("truncated_normal", "TruncatedNormal"),
        ("variance_scaling", "VarianceScaling"), ("zeros", "Zeros"))) +
    "\n\ndef serialize(initializer: Any) -> Any: ...\ndef deserialize(config: Any, custom_objects: Any = None) -> Any: ..."
    "\ndef get(identifier: Any) -> Any: ...\n",
    "regularizers": "orthogonal_regularizer = OrthogonalRegularizer\n\n\ndef serialize(regularizer: Any) -> Any: ...\n"
                    "def deserialize(config: Any, custom_objects: Any = None) -> Any: ...\n"
                    "def get(identifier: Any) -> Any: ...\n",
}

# Methods a class has beyond the Layer base's, as Keras names them.
EXTRA_METHODS = {"Normalization": ("def adapt(self, data: Any) -> None: ...",)}


def literal(value):
    if isinstance(value, dict):
        return None  # required
    if value is None or isinstance(value, (bool, int, float, str)):
        return repr(value)
    if isinstance(value, list) and all(v is None or isinstance(v, (bool, int, float, str)) for v in value):
        return repr(tuple(value))
    return "..."


def class_stub(group, name, base):
    entry = TABLE[group][name]
    args = ["self"]
    star = False
    for pname, default, kw_only in entry["params"]:
        if kw_only and not star:
            args.append("*")
            star = True
        lit = literal(default)
        args.append(f"{pname}: Any" if lit is None else f"{pname}: Any = {lit}")
    if group == "layers":
        if not star:
            args.append("*")
        args += [a for a in EXTRA_LAYER_KWARGS if a.split(":")[0].strip("*") not in
                 {p[0] for p in entry["params"]}]
    elif entry["var_kw"]:
        args.append("**kwargs: Any")
    summary = entry.get("summary", "").replace('"""', "'''").replace("\\", "\\\\")
    return (f"class {name}({base}):\n"
            f'    """Keras\'s {name} on nnfit\'s engine. {summary}"""\n'
            f"    def __init__({', '.join(args)}) -> None: ...\n" +
            "".join(f"    {m}\n" for m in EXTRA_METHODS.get(name, ())))


def main():
    for group, (path, base, header) in HEADERS.items():
        names = [n for n in TABLE[group] if n != "InputLayer"]
        text = ('"""Type stubs written by python/tools/gen_stubs.py from Keras '
                f'{TABLE["keras_version"]}\'s signatures: do not edit."""\n' + header + "\n\n" +
                "\n\n".join(class_stub(group, n, base) for n in names))
        if group == "layers":  # Keras's other names of the same classes
            text += "\n\n" + "".join(f"{a} = {t}\n" for a, t in TABLE["layer_aliases"].items())
        if group in TRAILERS:
            text += "\n\n" + TRAILERS[group]
        with open(os.path.join(PACKAGE, path), "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
