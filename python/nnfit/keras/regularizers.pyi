"""Type stubs written by python/tools/gen_stubs.py from Keras 3.15.1's signatures: do not edit."""
from typing import Any

from nnfit.keras._object import KerasObject


class Regularizer(KerasObject): ...


def l1(l1: float = 0.01) -> "L1": ...
def l2(l2: float = 0.01) -> "L2": ...
def l1_l2(l1: float = 0.0, l2: float = 0.0) -> "L1L2": ...


class L1(Regularizer):
    """Keras's L1 on nnfit's engine. A regularizer that applies a L1 regularization penalty."""
    def __init__(self, l1: Any = 0.01) -> None: ...


class L2(Regularizer):
    """Keras's L2 on nnfit's engine. A regularizer that applies a L2 regularization penalty."""
    def __init__(self, l2: Any = 0.01) -> None: ...


class L1L2(Regularizer):
    """Keras's L1L2 on nnfit's engine. A regularizer that applies both L1 and L2 regularization penalties."""
    def __init__(self, l1: Any = 0.0, l2: Any = 0.0) -> None: ...


class OrthogonalRegularizer(Regularizer):
    """Keras's OrthogonalRegularizer on nnfit's engine. Regularizer that encourages input vectors to be orthogonal to each other."""
    def __init__(self, factor: Any = 0.01, mode: Any = 'rows') -> None: ...


orthogonal_regularizer = OrthogonalRegularizer


def serialize(regularizer: Any) -> Any: ...
def deserialize(config: Any, custom_objects: Any = None) -> Any: ...
def get(identifier: Any) -> Any: ...
