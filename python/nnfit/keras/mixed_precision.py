"""keras.mixed_precision: dtype policies. nnfit computes mixed_bfloat16 and mixed_float16
natively (oneDNN's bf16/f16 kernels) with float32 variables, and scales the loss under
mixed_float16 as Keras's LossScaleOptimizer does."""
from nnfit.keras import _state

_POLICIES = {"float32": ("float32", "float32"), "mixed_bfloat16": ("bfloat16", "float32"),
             "mixed_float16": ("float16", "float32"), "bfloat16": ("bfloat16", "bfloat16"),
             "float16": ("float16", "float16")}


class DTypePolicy:
    """A dtype policy by name: "float32", "mixed_bfloat16", "mixed_float16", "bfloat16", "float16"."""

    def __init__(self, name="float32"):
        if name not in _POLICIES:
            raise ValueError(f"Cannot convert {name!r} to a mixed precision DTypePolicy. Valid policies: "
                             f"{', '.join(_POLICIES)}")
        self.name = name

    @property
    def compute_dtype(self):
        return _POLICIES[self.name][0]

    @property
    def variable_dtype(self):
        return _POLICIES[self.name][1]

    def __repr__(self):
        return f'<DTypePolicy "{self.name}">'

    def __eq__(self, other):
        return isinstance(other, DTypePolicy) and other.name == self.name

    def get_config(self):
        return {"name": self.name}


Policy = DTypePolicy


def set_global_policy(policy):
    """The policy of layers made from now on that are given no dtype of their own."""
    name = policy.name if isinstance(policy, DTypePolicy) else str(policy)
    DTypePolicy(name)  # validates
    _state.set_policy(name)


def global_policy():
    return DTypePolicy(_state.policy())


def set_dtype_policy(policy):
    set_global_policy(policy)


def dtype_policy():
    return global_policy()


def __getattr__(name):
    """keras.mixed_precision.LossScaleOptimizer: keras.optimizers' (imported on use: the
    optimizers import this module)."""
    if name == "LossScaleOptimizer":
        from nnfit.keras.optimizers import LossScaleOptimizer
        return LossScaleOptimizer
    raise AttributeError(f"module 'nnfit.keras.mixed_precision' has no attribute {name!r}")
