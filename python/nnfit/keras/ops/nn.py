"""keras.ops.nn on nnfit's engine: Keras's names of the submodule, each the same function
as keras.ops's (a name nnfit does not implement raises NotImplementedError naming it)."""
from nnfit.keras import ops as _ops
from nnfit.keras.ops import _keras_names

for _name in _keras_names.NN:
    globals()[_name] = getattr(_ops, _name, None) or _ops._not_implemented("nn." + _name)

__all__ = list(_keras_names.NN)
