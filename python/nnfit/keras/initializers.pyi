"""Type stubs written by python/tools/gen_stubs.py from Keras 3.15.1's signatures: do not edit."""
from typing import Any

from nnfit.keras._object import KerasObject


class Initializer(KerasObject): ...


class Zeros(Initializer):
    """Keras's Zeros on nnfit's engine. Initializer that generates tensors initialized to 0."""
    def __init__(self, **kwargs: Any) -> None: ...


class Ones(Initializer):
    """Keras's Ones on nnfit's engine. Initializer that generates tensors initialized to 1."""
    def __init__(self, **kwargs: Any) -> None: ...


class Constant(Initializer):
    """Keras's Constant on nnfit's engine. Initializer that generates tensors with constant values."""
    def __init__(self, value: Any = 0.0) -> None: ...


class RandomNormal(Initializer):
    """Keras's RandomNormal on nnfit's engine. Random normal initializer."""
    def __init__(self, mean: Any = 0.0, stddev: Any = 0.05, seed: Any = None) -> None: ...


class RandomUniform(Initializer):
    """Keras's RandomUniform on nnfit's engine. Random uniform initializer."""
    def __init__(self, minval: Any = -0.05, maxval: Any = 0.05, seed: Any = None) -> None: ...


class TruncatedNormal(Initializer):
    """Keras's TruncatedNormal on nnfit's engine. Initializer that generates a truncated normal distribution."""
    def __init__(self, mean: Any = 0.0, stddev: Any = 0.05, seed: Any = None) -> None: ...


class GlorotNormal(Initializer):
    """Keras's GlorotNormal on nnfit's engine. The Glorot normal initializer, also called Xavier normal initializer."""
    def __init__(self, seed: Any = None, input_axes: Any = None, output_axes: Any = None) -> None: ...


class GlorotUniform(Initializer):
    """Keras's GlorotUniform on nnfit's engine. The Glorot uniform initializer, also called Xavier uniform initializer."""
    def __init__(self, seed: Any = None, input_axes: Any = None, output_axes: Any = None) -> None: ...


class HeNormal(Initializer):
    """Keras's HeNormal on nnfit's engine. He normal initializer."""
    def __init__(self, seed: Any = None, input_axes: Any = None, output_axes: Any = None) -> None: ...


class HeUniform(Initializer):
    """Keras's HeUniform on nnfit's engine. He uniform variance scaling initializer."""
    def __init__(self, seed: Any = None, input_axes: Any = None, output_axes: Any = None) -> None: ...


class LecunNormal(Initializer):
    """Keras's LecunNormal on nnfit's engine. Lecun normal initializer."""
    def __init__(self, seed: Any = None, input_axes: Any = None, output_axes: Any = None) -> None: ...


class LecunUniform(Initializer):
    """Keras's LecunUniform on nnfit's engine. Lecun uniform initializer."""
    def __init__(self, seed: Any = None, input_axes: Any = None, output_axes: Any = None) -> None: ...


class Orthogonal(Initializer):
    """Keras's Orthogonal on nnfit's engine. Initializer that generates an orthogonal matrix."""
    def __init__(self, gain: Any = 1.0, seed: Any = None) -> None: ...


class Identity(Initializer):
    """Keras's Identity on nnfit's engine. Initializer that generates the identity matrix."""
    def __init__(self, gain: Any = 1.0) -> None: ...


class VarianceScaling(Initializer):
    """Keras's VarianceScaling on nnfit's engine. Initializer that adapts its scale to the shape of its input tensors."""
    def __init__(self, scale: Any = 1.0, mode: Any = 'fan_in', distribution: Any = 'truncated_normal', seed: Any = None, input_axes: Any = None, output_axes: Any = None) -> None: ...


constant = Constant
glorot_normal = GlorotNormal
glorot_uniform = GlorotUniform
he_normal = HeNormal
he_uniform = HeUniform
identity = Identity
IdentityInitializer = Identity
lecun_normal = LecunNormal
lecun_uniform = LecunUniform
ones = Ones
orthogonal = Orthogonal
OrthogonalInitializer = Orthogonal
random_normal = RandomNormal
random_uniform = RandomUniform
truncated_normal = TruncatedNormal
variance_scaling = VarianceScaling
zeros = Zeros


def serialize(initializer: Any) -> Any: ...
def deserialize(config: Any, custom_objects: Any = None) -> Any: ...
def get(identifier: Any) -> Any: ...
